// Operands read only at the output's index (see elementwise_operands.h).
#include "backend/common/elementwise_operands.h"

#include <algorithm>
#include <vector>

#include "hlo/primitive_type.h"

namespace hloc {
namespace backend {
namespace {

bool IsElementwise(const HloInstruction& hlo) {
  const HloOpcode op = hlo.opcode();
  return IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == HloOpcode::kSelect ||
         op == HloOpcode::kClamp;
}

Layout LayoutOf(const Shape& shape) {
  return shape.has_layout() ? shape.layout() : Layout::RowMajor(shape.rank());
}

// Element i of `shape` sits where element i of `root` does.
bool SamePlacement(const Shape& shape, const Shape& root) {
  if (!shape.IsArray() || shape.dimensions() != root.dimensions() ||
      BitWidth(shape.element_type()) != BitWidth(root.element_type()) ||
      BitWidth(root.element_type()) % 8 != 0) {
    return false;
  }
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.is_dynamic_dimension(i) || root.is_dynamic_dimension(i)) return false;
  }
  const Layout a = LayoutOf(shape), b = LayoutOf(root);
  return a.minor_to_major == b.minor_to_major && a.tiles.empty() && b.tiles.empty();
}

}  // namespace

bool ReadOnlyAtOutputIndex(const HloComputation& computation, int64_t number) {
  const HloInstruction* root = computation.root();
  if (root == nullptr || number < 0 || number >= computation.num_parameters() ||
      !root->shape().IsArray() || !SamePlacement(root->shape(), root->shape())) {
    return false;
  }
  // Walk every use of the parameter forward: each must be an elementwise op
  // of the root's dimensions (the root being the last of them).
  const HloInstruction* parameter = computation.parameter(number);
  if (!SamePlacement(parameter->shape(), root->shape())) return false;
  std::vector<const HloInstruction*> pending = {parameter};
  std::vector<const HloInstruction*> seen;
  while (!pending.empty()) {
    const HloInstruction* value = pending.back();
    pending.pop_back();
    for (const HloInstruction* user : value->users()) {
      if (std::find(seen.begin(), seen.end(), user) != seen.end()) continue;
      seen.push_back(user);
      // Values between the parameter and the root live in registers: only
      // their dimensions matter.
      if (!IsElementwise(*user) || !user->shape().IsArray() ||
          user->shape().dimensions() != root->shape().dimensions()) {
        return false;
      }
      pending.push_back(user);
    }
  }
  // Only a parameter the root reads counts (one that reaches nothing live
  // is no reason to share bytes).
  return parameter == root || std::find(seen.begin(), seen.end(), root) != seen.end();
}

}  // namespace backend
}  // namespace hloc
