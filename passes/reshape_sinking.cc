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

// A reshape between static, row-major arrays of one element type (elements
// keep their linear offsets).
bool IsPlainReshape(const HloInstruction& hlo) {
  if (hlo.opcode() != HloOpcode::kReshape || hlo.operand_count() != 1) return false;
  const Shape& out = hlo.shape();
  const Shape& in = hlo.operand(0)->shape();
  return out.IsArray() && in.IsArray() && out.is_static() && in.is_static() &&
         out.element_type() == in.element_type() && RowMajorOrNone(out) && RowMajorOrNone(in) &&
         !out.SameDimensions(in);
}

// How many trailing dimensions `from` and `to` share, size for size. A
// reshape between them only regroups the dimensions before those.
int64_t SharedSuffix(const Shape& from, const Shape& to) {
  int64_t k = 0;
  while (k < from.rank() && k < to.rank() &&
         from.dimensions(from.rank() - 1 - k) == to.dimensions(to.rank() - 1 - k)) {
    ++k;
  }
  return k;
}

bool IsScalarBroadcast(const HloInstruction& hlo) {
  return hlo.opcode() == HloOpcode::kBroadcast && hlo.operand_count() == 1 &&
         hlo.operand(0)->shape().IsScalar();
}

// A broadcast into the last `suffix` dimensions of its result only (a bias
// along the features), which the same broadcast builds on any shape ending
// in those dimensions.
bool IsSuffixBroadcast(const HloInstruction& hlo, int64_t suffix) {
  if (hlo.opcode() != HloOpcode::kBroadcast || hlo.operand_count() != 1) return false;
  for (int64_t d : hlo.dimensions()) {
    if (d < hlo.shape().rank() - suffix) return false;
  }
  return true;
}

bool IsElementwise(const HloInstruction& hlo) {
  return hlo.IsElementwise() && hlo.shape().IsArray() && !hlo.HasSideEffect();
}

// The common shape S of `hlo`'s reshaped operands when the rewrite applies:
// every other operand a scalar broadcast, or (when the reshapes keep some
// trailing dimensions) a broadcast into those.
std::optional<Shape> SourceShape(const HloInstruction& hlo) {
  std::optional<Shape> source;
  for (const HloInstruction* operand : hlo.operands()) {
    if (!IsPlainReshape(*operand)) continue;
    const Shape& from = operand->operand(0)->shape();
    if (source.has_value() && !source->SameDimensions(from)) return std::nullopt;
    if (!source.has_value()) source = from;
  }
  if (!source.has_value()) return std::nullopt;
  const int64_t suffix = SharedSuffix(*source, hlo.shape());
  for (const HloInstruction* operand : hlo.operands()) {
    if (IsPlainReshape(*operand) || IsScalarBroadcast(*operand)) continue;
    if (suffix == 0 || !IsSuffixBroadcast(*operand, suffix)) return std::nullopt;
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
        if (IsPlainReshape(*operand)) {
          operands.push_back(operand->operand(0));
          continue;
        }
        // A broadcast into the shared trailing dimensions lands on the
        // same ones of S.
        const int64_t shift = source->rank() - i->shape().rank();
        std::vector<int64_t> dims;
        for (int64_t d : operand->dimensions()) dims.push_back(d + shift);
        Shape shape = *source;
        shape.set_element_type(operand->shape().element_type());
        auto broadcast = HloInstruction::CreateBroadcast(shape, operand->operand(0), dims);
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
