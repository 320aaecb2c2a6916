#include "passes/expanders/builder_call_expander.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/builder_custom_calls.h"
#include "hlo/status_macros.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {

absl::StatusOr<bool> BuilderCallExpander::Run(HloModule& module) {
  bool changed = false;
  absl::flat_hash_set<HloComputation*> inlined;
  // Callers before callees: a decomposition that itself holds builder
  // calls has them inlined along with it, then expanded in its caller.
  bool again = true;
  while (again) {
    again = false;
    for (HloComputation* computation : module.MakeComputationPostOrder()) {
      if (computation->IsFusionComputation() || inlined.contains(computation)) continue;
      for (HloInstruction* call : computation->MakeInstructionPostOrder()) {
        const HloComputation* decomposition = BuilderDecomposition(*call);
        if (decomposition == nullptr) continue;
        if (!call->control_predecessors().empty() || !call->control_successors().empty()) continue;
        expanders::ExpansionBuilder b(computation, call);
        const std::vector<HloInstruction*> operands(call->operands().begin(),
                                                    call->operands().end());
        HloInstruction* result = b.Inline(*decomposition, operands);
        HLOC_RETURN_IF_ERROR(b.status());
        inlined.insert(const_cast<HloComputation*>(decomposition));
        HLOC_RETURN_IF_ERROR(expanders::ReplaceInstruction(call, result));
        changed = again = true;
      }
    }
  }
  if (!changed) return false;
  // Drop the decompositions no instruction calls any more.
  absl::flat_hash_set<const HloComputation*> called;
  for (HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      for (const HloComputation* callee : instruction->called_computations()) called.insert(callee);
    }
  }
  std::vector<HloComputation*> unused;
  for (HloComputation* computation : inlined) {
    if (!called.contains(computation) && computation != module.entry()) unused.push_back(computation);
  }
  HLOC_RETURN_IF_ERROR(module.RemoveComputations(unused));
  return true;
}

}  // namespace hloc
