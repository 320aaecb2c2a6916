#include "hlo/live_instructions.h"

#include <vector>

namespace hloc {

absl::flat_hash_set<const HloInstruction*> LiveFromRoot(const HloComputation& computation) {
  absl::flat_hash_set<const HloInstruction*> live;
  if (computation.root() == nullptr) return live;
  std::vector<const HloInstruction*> stack = {computation.root()};
  live.insert(computation.root());
  while (!stack.empty()) {
    const HloInstruction* hlo = stack.back();
    stack.pop_back();
    for (const HloInstruction* operand : hlo->operands()) {
      if (live.insert(operand).second) stack.push_back(operand);
    }
    for (const HloInstruction* predecessor : hlo->control_predecessors()) {
      if (live.insert(predecessor).second) stack.push_back(predecessor);
    }
  }
  return live;
}

}  // namespace hloc
