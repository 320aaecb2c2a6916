#include "hlo/live_instructions.h"

#include <vector>

namespace hloc {

absl::flat_hash_set<const HloInstruction*> LiveFromRoot(const HloComputation& computation) {
  absl::flat_hash_set<const HloInstruction*> live;
  if (computation.root() == nullptr) return live;
  std::vector<const HloInstruction*> stack;
  auto reach = [&](const HloInstruction* hlo) {
    if (live.insert(hlo).second) stack.push_back(hlo);
  };
  reach(computation.root());
  for (const HloInstruction* hlo : computation.instructions()) {
    if (hlo->HasSideEffect()) reach(hlo);
  }
  while (!stack.empty()) {
    const HloInstruction* hlo = stack.back();
    stack.pop_back();
    for (const HloInstruction* operand : hlo->operands()) reach(operand);
    for (const HloInstruction* predecessor : hlo->control_predecessors()) reach(predecessor);
  }
  return live;
}

}  // namespace hloc
