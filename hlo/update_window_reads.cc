// Reads of a dynamic-update-slice's array inside its own window (see
// update_window_reads.h).
#include "hlo/update_window_reads.h"

#include <algorithm>
#include <vector>

namespace hloc {
namespace {

// `slice` reads the window `dus` writes: same array, same start operands,
// the update's sizes.
bool ReadsTheWindow(const HloInstruction& slice, const HloInstruction& dus) {
  if (slice.opcode() != HloOpcode::kDynamicSlice || slice.operand_count() + 1 != dus.operand_count() ||
      slice.operand(0) != dus.operand(0) || !slice.shape().IsArray() ||
      slice.shape().dimensions() != dus.operand(1)->shape().dimensions()) {
    return false;
  }
  for (int64_t i = 1; i < slice.operand_count(); ++i) {
    if (slice.operand(i) != dus.operand(i + 1)) return false;
  }
  return true;
}

// `slice`'s value reaches nothing but `dus`'s update, through elementwise
// ops of the update's dimensions.
bool ReachesOnlyTheUpdate(const HloInstruction& slice, const HloInstruction& dus) {
  const HloInstruction* update = dus.operand(1);
  std::vector<const HloInstruction*> pending = {&slice}, seen;
  while (!pending.empty()) {
    const HloInstruction* current = pending.back();
    pending.pop_back();
    for (const HloInstruction* user : current->users()) {
      if (user == &dus) {
        // Only as the update: a start index would be read by every element.
        for (int64_t k = 0; k < dus.operand_count(); ++k) {
          if (dus.operand(k) == current && k != 1) return false;
        }
        if (current != update) return false;
        continue;
      }
      if (std::find(seen.begin(), seen.end(), user) != seen.end()) continue;
      seen.push_back(user);
      if (!user->IsElementwise() || !user->shape().IsArray() ||
          user->shape().dimensions() != update->shape().dimensions()) {
        return false;
      }
      pending.push_back(user);
    }
  }
  return true;
}

}  // namespace

bool ReadsUpdatedArrayOnlyInItsWindow(const HloInstruction& dus) {
  if (dus.opcode() != HloOpcode::kDynamicUpdateSlice || dus.operand_count() < 2) return false;
  const HloInstruction* target = dus.operand(0);
  for (int64_t k = 1; k < dus.operand_count(); ++k) {
    if (dus.operand(k) == target) return false;
  }
  for (const HloInstruction* user : target->users()) {
    if (user == &dus) continue;
    if (!ReadsTheWindow(*user, dus) || !ReachesOnlyTheUpdate(*user, dus)) return false;
  }
  return true;
}

}  // namespace hloc
