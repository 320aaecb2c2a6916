// One-device sharding annotations -> their operands (see the header).
#include "passes/sharding/remove_sharding_annotations.h"

#include <algorithm>
#include <iterator>

#include "hlo/status_macros.h"

namespace hloc {

bool IsOneDeviceShardingAnnotation(const HloInstruction& hlo) {
  static constexpr absl::string_view kIdentities[] = {
      "Sharding", "xla.sdy.FuncResultSharding", "SPMDFullToShardShape", "SPMDShardToFullShape"};
  if (hlo.opcode() != HloOpcode::kCustomCall) return false;
  const std::string& target = hlo.attrs().custom_call_target;
  if (!hlo.control_predecessors().empty() || !hlo.control_successors().empty()) return false;
  if (target == "xla.sdy.ShardingGroup") return hlo.users().empty() && hlo.parent() != nullptr && hlo.parent()->root() != &hlo;
  return hlo.operand_count() == 1 && hlo.shape().Compatible(hlo.operand(0)->shape()) &&
         std::find(std::begin(kIdentities), std::end(kIdentities), target) !=
             std::end(kIdentities);
}

absl::StatusOr<bool> RemoveShardingAnnotations::Run(HloModule& module) {
  if (module.config().replica_count * module.config().num_partitions != 1) return false;
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* hlo : computation->MakeInstructionPostOrder()) {
      if (!IsOneDeviceShardingAnnotation(*hlo)) continue;
      if (hlo->operand_count() == 1) {
        HloInstruction* value = hlo->operand(0);
        // Another layout than its operand's (JAX's transposes): a copy.
        if (!(hlo->shape() == value->shape())) {
          value = computation->AddInstruction(
              HloInstruction::Create(HloOpcode::kCopy, hlo->shape(), {value}));
        }
        HLOC_RETURN_IF_ERROR(hlo->ReplaceAllUsesWith(value));
      }
      HLOC_RETURN_IF_ERROR(computation->RemoveInstruction(hlo));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
