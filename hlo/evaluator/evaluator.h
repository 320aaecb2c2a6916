// hloc's reference interpreter: evaluates an HloModule on host literals with
// XLA's semantics. It defines the right answer every backend and pass is
// checked against, so it favours exactness (per-op rounding of f16/bf16,
// XLA's integer-overflow and conversion rules) while staying fast enough for
// real models (typed loops, blocked matrix and convolution kernels, two
// threads).
//
// Documented departures from XLA:
//  - rng (uniform/normal) draws from a deterministic generator seeded by
//    EvaluatorOptions::rng_seed; values are not bit-identical to XLA's.
//  - bitcast reinterprets the row-major element order (literals are stored
//    row-major whatever their layout), which equals XLA's bitcast whenever
//    operand and result layouts are both the default descending one.
//  - Collectives, async ops, send/recv, infeed/outfeed and unknown custom-call
//    targets are errors naming the instruction.
#ifndef HLOC_HLO_EVALUATOR_EVALUATOR_H_
#define HLOC_HLO_EVALUATOR_EVALUATOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloc {

struct EvaluatorOptions {
  // Worker threads for large convolutions, dots and elementwise ops; 0 means
  // std::thread::hardware_concurrency().
  int num_threads = 0;
  // A while loop running more iterations than this is an error (guards
  // against non-terminating programs); <= 0 means no limit.
  int64_t max_while_iterations = 0;
  // Seed of the generator behind `rng`.
  uint64_t rng_seed = 42;
};

// Evaluates the entry computation of `module` on `arguments` (one per entry
// parameter, shapes compatible with the parameters'). The result is a tuple
// literal when the entry returns a tuple.
absl::StatusOr<Literal> Evaluate(const HloModule& module, absl::Span<const Literal> arguments,
                                 const EvaluatorOptions& options = {});

// Evaluates one computation (of any module) on `args`.
absl::StatusOr<Literal> EvaluateComputation(const HloComputation& computation,
                                            absl::Span<const Literal* const> args,
                                            const EvaluatorOptions& options = {});

}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_EVALUATOR_H_
