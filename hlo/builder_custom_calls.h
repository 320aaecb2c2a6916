// Custom calls that XLA's client builder (XlaBuilder's math, matrix, prng
// and tridiagonal libraries) emits with their own decomposition attached:
// target "xla_builder.<library>.<Name>" and exactly one called computation
// taking the call's operands and returning its result. The computation is
// the call's meaning, so hloc treats the call as a `call` of it: shape
// inference checks the call against the computation's signature, the
// interpreter runs the computation and the expanders inline it. Without a
// computation such a target is unknown (an error naming it).
#ifndef HLOC_HLO_BUILDER_CUSTOM_CALLS_H_
#define HLOC_HLO_BUILDER_CUSTOM_CALLS_H_

#include "absl/strings/match.h"
#include "hlo/instruction.h"

namespace hloc {

inline constexpr char kBuilderCustomCallPrefix[] = "xla_builder.";

// The decomposition of a builder custom call `instruction`, or null.
inline const HloComputation* BuilderDecomposition(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kCustomCall ||
      !absl::StartsWith(instruction.attrs().custom_call_target, kBuilderCustomCallPrefix) ||
      instruction.called_computations().size() != 1) {
    return nullptr;
  }
  return instruction.called_computations()[0];
}

}  // namespace hloc

#endif  // HLOC_HLO_BUILDER_CUSTOM_CALLS_H_
