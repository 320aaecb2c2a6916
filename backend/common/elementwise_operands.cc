// Operands read only at the output's index (see elementwise_operands.h).
#include "backend/common/elementwise_operands.h"

#include <algorithm>
#include <vector>

#include "hlo/primitive_type.h"

namespace hloc {
namespace backend {
namespace {

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

// The value output `output` stores: the root, or its tuple operand.
const HloInstruction* OutputValue(const HloInstruction& root, int64_t output) {
  if (root.shape().IsArray()) return output == 0 ? &root : nullptr;
  if (root.opcode() != HloOpcode::kTuple || output < 0 || output >= root.operand_count()) {
    return nullptr;
  }
  for (const HloInstruction* operand : root.operands()) {
    if (!operand->shape().IsArray()) return nullptr;
  }
  return root.operand(output);
}

}  // namespace

bool ReadOnlyAtOutputIndex(const HloComputation& computation, int64_t number, int64_t output) {
  const HloInstruction* root = computation.root();
  if (root == nullptr || number < 0 || number >= computation.num_parameters()) return false;
  const HloInstruction* value = OutputValue(*root, output);
  if (value == nullptr || !SamePlacement(value->shape(), value->shape())) return false;
  // Walk every use of the parameter forward: each must be an elementwise op
  // of the output's dimensions, or the root tuple storing `value` as output
  // `output` and as no other.
  const HloInstruction* parameter = computation.parameter(number);
  if (!SamePlacement(parameter->shape(), value->shape())) return false;
  std::vector<const HloInstruction*> pending = {parameter};
  std::vector<const HloInstruction*> seen;
  bool reaches_output = parameter == value;
  while (!pending.empty()) {
    const HloInstruction* current = pending.back();
    pending.pop_back();
    for (const HloInstruction* user : current->users()) {
      if (user == root && root != value) {
        // The tuple root: `current` may be stored at `output` only.
        for (int64_t k = 0; k < root->operand_count(); ++k) {
          if (root->operand(k) == current && k != output) return false;
        }
        reaches_output = true;
        continue;
      }
      if (std::find(seen.begin(), seen.end(), user) != seen.end()) continue;
      seen.push_back(user);
      // Values between the parameter and the output live in registers:
      // only their dimensions matter.
      if (!user->IsElementwise() || !user->shape().IsArray() ||
          user->shape().dimensions() != value->shape().dimensions()) {
        return false;
      }
      if (user == value) reaches_output = true;
      pending.push_back(user);
    }
  }
  // Only a parameter the output reads counts (one that reaches nothing live
  // is no reason to share bytes).
  return reaches_output;
}

}  // namespace backend
}  // namespace hloc
