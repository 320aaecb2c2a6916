// RngBitGeneratorExpander: rng-bit-generator as elementwise integer HLO
// (iota counters, 32-bit adds, multiplies, shifts, rotates and xors), bit for
// bit what the interpreter (hlo/evaluator/rng.cc) draws, so the host and GPU
// backends compile it instead of calling the interpreter.
//
// Both generators are counter based: word i of the output depends only on
// the key and counter + f(i), so the whole output is one elementwise
// computation over an iota of counters, the rounds unrolled:
//
//   philox (also rng_default)  blocks j = 0..ceil(words/4)-1, counter
//       (lo + j, hi + carry) split into four u32 words; 10 rounds of
//       (x0, x1, x2, x3) <- (hi32(M1 x2) ^ x1 ^ k0, lo32(M1 x2),
//                            hi32(M0 x0) ^ x3 ^ k1, lo32(M0 x0)),
//       k0 += 0x9E3779B9, k1 += 0xBB67AE85 (the products in u64);
//       output words are x0..x3 of block 0, then block 1, ...; a 64-bit
//       element takes two words (low first), narrower ones one word's low
//       bits. New state: key, lo + blocks (and the carried high word for a
//       u64[3] state).
//   three-fry                  Threefry-2x32 with 20 rounds on counter
//       words (lo32(c), hi32(c)). 64-bit elements: c = counter + i, element
//       x0 | x1 << 32. Narrower: one dimension (the first even one, else the
//       first largest) is halved, counters run row-major over the halved
//       shape, and x0, x1 fill positions 2h, 2h+1 of that dimension (the last
//       dropped when it is odd). New state: key, counter + counters used.
//
// Narrowing takes the low bits (integer convert wraps). Sub-byte element
// types and a bits-only result shape are left to the interpreter.
#ifndef HLOC_PASSES_EXPANDERS_RNG_BIT_GENERATOR_EXPANDER_H_
#define HLOC_PASSES_EXPANDERS_RNG_BIT_GENERATOR_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class RngBitGeneratorExpander : public HloPass {
 public:
  absl::string_view name() const override { return "rng-bit-generator-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_RNG_BIT_GENERATOR_EXPANDER_H_
