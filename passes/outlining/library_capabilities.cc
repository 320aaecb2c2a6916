// InlineUnsupportedLibraryCalls: inlines, with CallInliner, every composite
// call whose name the backend does not declare (see library_capabilities.h).
#include "passes/outlining/library_capabilities.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "passes/call_inliner.h"
#include "passes/outlining/library_epilogues.h"
#include "passes/outlining/library_patterns.h"
#include "passes/outlining/outline_library_calls.h"

namespace hloc {

LibraryCapabilities LibraryCapabilities::AllDefaultPatterns() {
  LibraryCapabilities capabilities;
  for (const LibraryPattern& p : DefaultLibraryPatterns()) capabilities.names.insert(p.name);
  for (const std::string& name : LibraryEpilogueNames()) capabilities.names.insert(name);
  return capabilities;
}

absl::StatusOr<bool> InlineUnsupportedLibraryCalls::Run(HloModule& module) {
  bool changed = false;
  // Callees first, so a body is final before it is copied into its caller.
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    // The calls first: inlining one removes the get-tuple-elements that read
    // it, which the instruction list would still hold (CallInliner::Run).
    std::vector<HloInstruction*> calls;
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kCall) calls.push_back(i);
    }
    for (HloInstruction* call : calls) {
      const std::string* name = LibraryCallName(*call);
      if (name == nullptr || capabilities_.Implements(*name)) continue;
      if (!call->control_predecessors().empty() || !call->control_successors().empty()) {
        return absl::FailedPreconditionError(
            absl::StrCat("cannot inline library call ", call->name(), " (", *name,
                         "): it has control dependencies and the backend does not implement it"));
      }
      std::string call_name = call->name();
      std::string library = *name;
      HloComputation* callee = call->to_apply();
      HLOC_RETURN_IF_ERROR(CallInliner::InlineCall(call).status());
      if (callee != nullptr && module.CallersOf(callee).empty()) {
        HLOC_RETURN_IF_ERROR(module.RemoveComputation(callee));
      }
      if (ledger_ != nullptr) {
        LedgerEntry entry;
        entry.pass = std::string(kPassName);
        entry.computation = computation->name();
        entry.event = "inlined";
        entry.subjects = {call_name};
        entry.accepted = true;
        entry.rule = library;
        entry.reason = "the backend does not implement it";
        ledger_->Add(std::move(entry));
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
