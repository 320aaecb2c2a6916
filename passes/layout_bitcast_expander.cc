#include "passes/layout_bitcast_expander.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "hlo/shape.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

bool IsIdentity(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// `shape` with row-major layout (when it has a layout at all).
Shape RowMajor(Shape shape) {
  if (shape.has_layout()) shape.set_layout(Layout::RowMajor(shape.rank()));
  return shape;
}

// The rewrite of one bitcast (see the header).
absl::Status Expand(HloComputation* computation, HloInstruction* bitcast) {
  HloInstruction* from = bitcast->operand(0);
  const Shape& in = from->shape();
  const Shape& out = bitcast->shape();
  const std::vector<int64_t> in_order = MajorToMinorOrder(in);
  const std::vector<int64_t> out_order = MajorToMinorOrder(out);
  auto add = [&](std::unique_ptr<HloInstruction> instruction) {
    *instruction->mutable_metadata() = bitcast->metadata();
    return computation->AddInstruction(std::move(instruction));
  };
  HloInstruction* value = from;
  if (!IsIdentity(in_order)) {
    std::vector<int64_t> dims;
    for (int64_t d : in_order) dims.push_back(in.dimensions(d));
    Shape memory = RowMajor(in);
    memory.set_dimensions(dims);
    auto transpose = HloInstruction::Create(HloOpcode::kTranspose, memory, {value});
    transpose->mutable_attrs()->dimensions = in_order;
    value = add(std::move(transpose));
  }
  std::vector<int64_t> out_memory_dims;
  for (int64_t d : out_order) out_memory_dims.push_back(out.dimensions(d));
  Shape reinterpreted = RowMajor(out);
  reinterpreted.set_dimensions(out_memory_dims);
  if (IsIdentity(out_order)) reinterpreted = out;
  value = add(HloInstruction::Create(HloOpcode::kBitcast, reinterpreted, {value}));
  if (!IsIdentity(out_order)) {
    // Result dimension out_order[k] is memory dimension k.
    std::vector<int64_t> back(out_order.size());
    for (size_t k = 0; k < out_order.size(); ++k) back[out_order[k]] = static_cast<int64_t>(k);
    auto transpose = HloInstruction::Create(HloOpcode::kTranspose, out, {value});
    transpose->mutable_attrs()->dimensions = back;
    value = add(std::move(transpose));
  }
  HLOC_RETURN_IF_ERROR(bitcast->ReplaceAllUsesWith(value));
  return computation->RemoveInstruction(bitcast);
}

}  // namespace

absl::StatusOr<bool> LayoutBitcastExpander::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (i->opcode() != HloOpcode::kBitcast || i->operand_count() != 1 ||
          !i->shape().IsArray() || !i->operand(0)->shape().IsArray() ||
          !i->shape().is_static() || !i->operand(0)->shape().is_static() ||
          BitcastIsRowMajorReshape(i->operand(0)->shape(), i->shape())) {
        continue;
      }
      HLOC_RETURN_IF_ERROR(Expand(computation, i));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
