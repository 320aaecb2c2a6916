#include "passes/common_subexpression_elimination.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace {

bool MayMerge(const HloInstruction* i) {
  switch (i->opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kCustomCall:  // Targets may be stateful even without the flag.
      return false;
    default:
      return !i->HasSideEffect() && i->control_predecessors().empty() &&
             i->control_successors().empty();
  }
}

// Everything that makes two instructions compute the same value: the printed
// form without the name (opcode, shape, attributes, called computations, which
// the printer writes completely) and the identity of the operands. Metadata is
// left out; it does not change the value.
std::string Signature(const HloInstruction* i, const PrintOptions& options) {
  std::string text = PrintInstruction(*i, options);
  size_t eq = text.find(" = ");
  std::string key = eq == std::string::npos ? text : text.substr(eq + 3);
  for (const HloInstruction* operand : i->operands()) absl::StrAppend(&key, "|", operand->unique_id());
  return key;
}

}  // namespace

absl::StatusOr<bool> CommonSubexpressionElimination::Run(HloModule& module) {
  PrintOptions options;
  options.print_metadata = false;
  options.print_operand_shapes = false;
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    absl::flat_hash_map<std::string, HloInstruction*> seen;
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (!MayMerge(i)) continue;
      auto [it, inserted] = seen.emplace(Signature(i, options), i);
      if (inserted || it->second == i) continue;
      HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(it->second));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
