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
//  - Literals are stored in logical row-major order whatever their layout;
//    only bitcast looks at layouts (it reinterprets the operand's physical
//    order as the result's), so post-layout-assignment HLO evaluates too.
//  - Collectives and their async forms run on the devices of a multi-device
//    run (multi_device.h); Evaluate is device 0 of a one-device run, where
//    a group of one is the identity. send/recv, infeed/outfeed, custom-call
//    targets neither built in ("TopK", and the linear-algebra calls of
//    hlo/linalg_custom_calls.h: "Qr", "ProductOfElementaryHouseholder-
//    Reflectors", "Eigh") nor registered (EvaluatorOptions::
//    custom_calls; the error names the target) are errors naming the
//    instruction.
//  - Bounded dynamic shapes (f32[<=8]) have XLA's meaning: a value carries
//    its runtime size as the literal's dimensions (runtime_shapes.h), so an
//    entry result of dynamic shape comes back at its runtime size, and an
//    entry argument may be any size up to a dynamic dimension's bound.
//    set-dimension-size with a size outside [0, bound] is an error (XLA
//    leaves it undefined), as is an op the evaluator cannot size.
//    rng-bit-generator, unlike rng, reproduces XLA's bits exactly.
//  - Float sums in reduce (f16/bf16/f32, add reducer) accumulate in double;
//    dot and convolution accumulate f16/bf16/f32 in float.
//  - scatter skips an update window that does not fit the operand (XLA's
//    CPU/GPU behaviour); gather and dynamic-slice clamp their starts.
//  - batch_group_count: output feature o reads input batches of group
//    o / (output_features / batch_group_count).
#ifndef HLOC_HLO_EVALUATOR_EVALUATOR_H_
#define HLOC_HLO_EVALUATOR_EVALUATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/custom_call_targets.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloc {
namespace eval {
struct DeviceSlot;
}  // namespace eval

// Per-instruction wall times, filled when EvaluatorOptions::profile is set
// (control-flow instructions are not recorded, their bodies are).
struct EvaluatorProfile {
  struct Entry {
    const HloInstruction* instruction;
    double seconds;
  };
  std::vector<Entry> entries;
};

struct EvaluatorOptions {
  // Worker threads for large convolutions, dots and elementwise ops; 0 means
  // every CPU this process may use (UsableCpuCount, hlo/usable_cpus.h).
  int num_threads = 0;
  // A while loop running more iterations than this is an error (guards
  // against non-terminating programs); <= 0 means no limit.
  int64_t max_while_iterations = 0;
  // Seed of the generator behind `rng`.
  uint64_t rng_seed = 42;
  // Not owned; when set, receives one entry per evaluated instruction.
  EvaluatorProfile* profile = nullptr;
  // Evaluate refuses a module the verifier rejects (the interpreter relies on
  // verified shapes). Off only for callers that have just verified it.
  bool verify = true;
  // Set by EvaluateOnDevices (multi_device.h): which device this evaluation
  // is and where it meets the others. Null: a one-device run.
  eval::DeviceSlot* device = nullptr;
  // Custom-call targets registered by an embedder (hlo/custom_call_
  // targets.h), called on the operands' arrays; not owned. Null: none.
  const CustomCallTargets* custom_calls = nullptr;
};

// OK when every live custom call in `module` (one its computation's root
// needs) is one the evaluator runs: built in ("TopK", the linear-algebra
// calls of hlo/linalg_custom_calls.h) or in `custom_calls`
// (which may be null); else Unimplemented naming the instruction and target.
absl::Status CheckCustomCallTargets(const HloModule& module, const CustomCallTargets* custom_calls);

// Evaluates the entry computation of `module` on `arguments` (one per entry
// parameter, shapes compatible with the parameters'). The result is a tuple
// literal when the entry returns a tuple. A module that fails the verifier is
// an InvalidArgument error carrying the verifier's message.
absl::StatusOr<Literal> Evaluate(const HloModule& module, absl::Span<const Literal> arguments,
                                 const EvaluatorOptions& options = {});

// Evaluates one computation (of any module) on `args`.
absl::StatusOr<Literal> EvaluateComputation(const HloComputation& computation,
                                            absl::Span<const Literal* const> args,
                                            const EvaluatorOptions& options = {});

}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_EVALUATOR_H_
