// RngExpander: the legacy `rng` op (uniform or normal draws between two
// scalar operands) as an rng-bit-generator (Philox, expanded after it by
// RngBitGeneratorExpander) and elementwise math, so the host and GPU
// backends compile it instead of calling the interpreter.
//
// XLA leaves rng's bits undefined; hloc's interpreter draws from a stream of
// its own, so values differ between the interpreter and the backends (as
// between any two XLA backends), while the distribution is the same:
//   uniform float   a + (b - a) u, u in [0, 1) from the top 24 (f16, bf16,
//                   f32; computed in f32) or 53 (f64) bits of a draw; a
//                   value rounding up to b becomes a, keeping [a, b).
//   uniform integer a + (draw mod (b - a)), 64-bit draws; a when b == a.
//   normal          mean + stddev sqrt(-2 log(1 - u1)) cos(2 pi u2)
//                   (Box-Muller on two uniforms).
// Each rng gets its own Philox key (a fixed seed mixed with its position in
// the module), so two rngs of one module draw different values, and a
// module draws the same values on every run, as the interpreter does.
#ifndef HLOC_PASSES_EXPANDERS_RNG_EXPANDER_H_
#define HLOC_PASSES_EXPANDERS_RNG_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class RngExpander : public HloPass {
 public:
  absl::string_view name() const override { return "rng-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_RNG_EXPANDER_H_
