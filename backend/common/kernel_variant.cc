// Which parameter an update-in-place kernel may leave unread (see
// kernel_variant.h).
#include "backend/common/kernel_variant.h"

#include "hlo/update_window_reads.h"

namespace hloc {
namespace backend {

int64_t UpdateInPlaceParameter(const HloComputation& computation) {
  const HloInstruction* root = computation.root();
  if (root == nullptr || root->opcode() != HloOpcode::kDynamicUpdateSlice ||
      root->operand_count() < 2 || !root->shape().IsArray()) {
    return -1;
  }
  const HloInstruction* target = root->operand(0);
  if (target->opcode() != HloOpcode::kParameter || !target->shape().IsArray() ||
      target->shape().element_type() != root->shape().element_type() ||
      target->shape().dimensions() != root->shape().dimensions() ||
      root->operand(1)->shape().rank() != root->shape().rank()) {
    return -1;
  }
  // The kernel reads the parameter at most where it writes it, element by
  // element before the write (a dynamic-slice of the update's window).
  if (!ReadsUpdatedArrayOnlyInItsWindow(*root)) return -1;
  return target->parameter_number();
}

}  // namespace backend
}  // namespace hloc
