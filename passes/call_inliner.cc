#include "passes/call_inliner.h"

#include <string>
#include <utility>
#include <vector>

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

namespace {

// Replaces `call` (a call or a fusion) by a copy of `callee`'s instructions;
// see CallInliner::InlineCall.
absl::StatusOr<HloInstruction*> InlineComputation(HloInstruction* call, HloComputation* callee) {
  HloComputation* caller = call->parent();
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
  // A call returning a tuple was read through get-tuple-elements: they now
  // read the inlined tuple, which would hold every element in one value
  // until the last reader (and look like one to fusion). Each reads the
  // element itself instead.
  if (result->opcode() == HloOpcode::kTuple) {
    const std::vector<HloInstruction*> users = result->users();
    for (HloInstruction* user : users) {
      if (user->opcode() != HloOpcode::kGetTupleElement || user->operand(0) != result ||
          user->tuple_index() < 0 || user->tuple_index() >= result->operand_count() ||
          !user->control_predecessors().empty() || !user->control_successors().empty()) {
        continue;
      }
      HLOC_RETURN_IF_ERROR(user->ReplaceAllUsesWith(result->operand(user->tuple_index())));
      HLOC_RETURN_IF_ERROR(caller->RemoveInstruction(user));
    }
    if (result->users().empty() && result != caller->root() &&
        result->control_predecessors().empty() && result->control_successors().empty()) {
      HLOC_RETURN_IF_ERROR(caller->RemoveInstruction(result));
      return static_cast<HloInstruction*>(nullptr);
    }
  }
  return result;
}

}  // namespace

absl::StatusOr<HloInstruction*> CallInliner::InlineCall(HloInstruction* call) {
  return InlineComputation(call, call->to_apply());
}

absl::StatusOr<bool> CallInliner::Run(HloModule& module) {
  bool changed = false;
  // Callers after callees: a callee is fully inlined before it is copied.
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    // The calls are chosen before any is inlined: inlining removes the
    // get-tuple-elements that read a call, which a walk over the old
    // instruction list would then visit after they were freed.
    std::vector<HloInstruction*> calls;
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (ShouldInline(i)) calls.push_back(i);
    }
    for (HloInstruction* call : calls) {
      HLOC_RETURN_IF_ERROR(InlineCall(call).status());
      changed = true;
    }
  }
  return changed;
}

absl::StatusOr<bool> FusionInliner::Run(HloModule& module) {
  bool changed = false;
  // Fused computations after the fusions inside them (nested fusions).
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    std::vector<HloInstruction*> fusions;
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kFusion && i->fused_computation() != nullptr &&
          i->control_predecessors().empty() && i->control_successors().empty()) {
        fusions.push_back(i);
      }
    }
    for (HloInstruction* fusion : fusions) {
      const std::string fusion_name = fusion->name();
      const std::string kind(FusionKindName(fusion->fusion_kind()));
      HloComputation* fused = fusion->fused_computation();
      HLOC_RETURN_IF_ERROR(InlineComputation(fusion, fused).status());
      if (module.CallersOf(fused).empty()) HLOC_RETURN_IF_ERROR(module.RemoveComputation(fused));
      changed = true;
      if (ledger_ != nullptr) {
        LedgerEntry entry;
        entry.pass = std::string(name());
        entry.computation = computation->name();
        entry.event = "inlined";
        entry.subjects = {fusion_name};
        entry.accepted = true;
        entry.rule = kind;
        entry.reason = "the module arrived fused: hloc's outlining and fusion decide again";
        ledger_->Add(std::move(entry));
      }
    }
  }
  return changed;
}

}  // namespace hloc
