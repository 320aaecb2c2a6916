#include "passes/dead_code_elimination.h"

#include "absl/container/flat_hash_set.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

bool IsDead(const HloInstruction* i) {
  return i->users().empty() && i != i->parent()->root() &&
         i->opcode() != HloOpcode::kParameter && !i->HasSideEffect() &&
         i->control_successors().empty();
}

}  // namespace

absl::StatusOr<bool> DeadCodeElimination::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    // Reverse post order visits users before operands, so whole dead chains
    // go in one sweep.
    for (HloInstruction* i : computation->MakeInstructionReversePostOrder()) {
      if (!IsDead(i)) continue;
      HLOC_RETURN_IF_ERROR(computation->RemoveInstruction(i));
      changed = true;
    }
  }
  if (!remove_dead_computations_ || module.entry() == nullptr) return changed;
  // Computations reachable from the entry through called computations.
  absl::flat_hash_set<const HloComputation*> live = {module.entry()};
  std::vector<const HloComputation*> worklist = {module.entry()};
  while (!worklist.empty()) {
    const HloComputation* c = worklist.back();
    worklist.pop_back();
    c->ForEachInstruction([&](HloInstruction* i) {
      for (HloComputation* callee : i->called_computations()) {
        if (live.insert(callee).second) worklist.push_back(callee);
      }
    });
  }
  // Callers before callees, so each removal leaves its callees uncalled.
  std::vector<HloComputation*> order = module.MakeComputationPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (live.contains(*it)) continue;
    HLOC_RETURN_IF_ERROR(module.RemoveComputation(*it));
    changed = true;
  }
  return changed;
}

}  // namespace hloc
