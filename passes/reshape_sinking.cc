// Reshape sinking (see reshape_sinking.h).
#include "passes/reshape_sinking.h"

#include <optional>
#include <vector>

#include "hlo/status_macros.h"

namespace hloc {
namespace {

bool RowMajorOrNone(const Shape& shape) {
  return !shape.has_layout() || shape.layout() == Layout::RowMajor(shape.rank());
}

std::vector<int64_t> NonUnitDims(const Shape& shape) {
  std::vector<int64_t> dims;
  for (int64_t d : shape.dimensions()) {
    if (d != 1) dims.push_back(d);
  }
  return dims;
}

// A reshape that only inserts or removes size-1 dimensions between static,
// row-major arrays (elements keep their linear offsets).
bool IsDegenerateReshape(const HloInstruction& hlo) {
  if (hlo.opcode() != HloOpcode::kReshape || hlo.operand_count() != 1) return false;
  const Shape& out = hlo.shape();
  const Shape& in = hlo.operand(0)->shape();
  return out.IsArray() && in.IsArray() && out.is_static() && in.is_static() &&
         out.element_type() == in.element_type() && RowMajorOrNone(out) && RowMajorOrNone(in) &&
         !out.SameDimensions(in) && NonUnitDims(out) == NonUnitDims(in);
}

bool IsScalarBroadcast(const HloInstruction& hlo) {
  return hlo.opcode() == HloOpcode::kBroadcast && hlo.operand_count() == 1 &&
         hlo.operand(0)->shape().IsScalar();
}

bool IsElementwise(const HloInstruction& hlo) {
  return hlo.IsElementwise() && hlo.shape().IsArray() && !hlo.HasSideEffect();
}

// The common shape S of `hlo`'s reshaped operands when the rewrite applies.
std::optional<Shape> SourceShape(const HloInstruction& hlo) {
  std::optional<Shape> source;
  for (const HloInstruction* operand : hlo.operands()) {
    if (IsScalarBroadcast(*operand)) continue;
    if (!IsDegenerateReshape(*operand)) return std::nullopt;
    const Shape& from = operand->operand(0)->shape();
    if (source.has_value() && !source->SameDimensions(from)) return std::nullopt;
    if (!source.has_value()) source = from;
  }
  return source;
}

}  // namespace

absl::StatusOr<bool> ReshapeSinking::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (!IsElementwise(*i) || !RowMajorOrNone(i->shape()) || !i->shape().is_static()) continue;
      std::optional<Shape> source = SourceShape(*i);
      if (!source.has_value()) continue;
      std::vector<HloInstruction*> operands;
      for (HloInstruction* operand : i->operands()) {
        if (IsDegenerateReshape(*operand)) {
          operands.push_back(operand->operand(0));
          continue;
        }
        Shape shape = *source;
        shape.set_element_type(operand->shape().element_type());
        auto broadcast = HloInstruction::CreateBroadcast(shape, operand->operand(0), {});
        *broadcast->mutable_metadata() = operand->metadata();
        operands.push_back(computation->AddInstruction(std::move(broadcast)));
      }
      Shape shape = *source;
      shape.set_element_type(i->shape().element_type());
      HloInstruction* sunk = computation->AddInstruction(i->CloneWithNewOperands(shape, operands));
      auto reshape = HloInstruction::Create(HloOpcode::kReshape, i->shape(), {sunk});
      *reshape->mutable_metadata() = i->metadata();
      HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(computation->AddInstruction(std::move(reshape))));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
