#include "passes/call_inliner.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"

namespace hloc {

bool CallInliner::ShouldInline(const HloInstruction* call) const {
  if (call->opcode() != HloOpcode::kCall || call->to_apply() == nullptr) return false;
  if (!call->control_predecessors().empty() || !call->control_successors().empty()) return false;
  if (!call->is_composite()) return true;
  if (inline_composites_.contains("*")) return true;
  const std::string* name = call->FindFrontendAttribute("composite.name");
  return name != nullptr && inline_composites_.contains(*name);
}

absl::StatusOr<HloInstruction*> CallInliner::InlineCall(HloInstruction* call) {
  HloComputation* caller = call->parent();
  HloComputation* callee = call->to_apply();
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> mapping;
  for (HloInstruction* i : callee->MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kParameter) {
      mapping[i] = call->operand(i->parameter_number());
      continue;
    }
    std::vector<HloInstruction*> operands;
    operands.reserve(i->operand_count());
    for (HloInstruction* operand : i->operands()) operands.push_back(mapping.at(operand));
    mapping[i] = caller->AddInstruction(i->CloneWithNewOperands(i->shape(), operands));
  }
  callee->ForEachInstruction([&](HloInstruction* i) {
    for (HloInstruction* successor : i->control_successors()) {
      mapping[i]->AddControlDependencyTo(mapping[successor]);
    }
  });
  HloInstruction* result = mapping.at(callee->root());
  HLOC_RETURN_IF_ERROR(call->ReplaceAllUsesWith(result));
  HLOC_RETURN_IF_ERROR(caller->RemoveInstruction(call));
  return result;
}

absl::StatusOr<bool> CallInliner::Run(HloModule& module) {
  bool changed = false;
  // Callers after callees: a callee is fully inlined before it is copied.
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (!ShouldInline(i)) continue;
      HLOC_RETURN_IF_ERROR(InlineCall(i).status());
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
