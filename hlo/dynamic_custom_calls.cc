#include "hlo/dynamic_custom_calls.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/primitive_type.h"
#include "hlo/shape_inference_internal.h"

namespace hloc {
namespace {

using shape_inference_internal::Invalid;
using shape_inference_internal::Str;

// `shape` with every dimension static (its bounds).
Shape Static(const Shape& shape) {
  Shape out = shape;
  for (int64_t d = 0; d < out.rank(); ++d) out.set_dynamic_dimension(d, false);
  return out;
}

absl::StatusOr<Shape> PadToStaticShape(absl::Span<const Shape* const> operands) {
  if (operands.size() != 1) {
    return Invalid("PadToStatic takes 1 operand, got ", operands.size());
  }
  const Shape& x = *operands[0];
  if (!x.IsArray()) return Invalid("PadToStatic: the operand must be an array, got ", Str(x));
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (x.dimensions(d) == Shape::kUnboundedSize) {
      return Invalid("PadToStatic: dimension ", d, " of ", Str(x), " has no bound");
    }
  }
  std::vector<Shape> elements = {Static(x)};
  elements.resize(1 + x.rank(), Shape::Scalar(xla::S32));
  return Shape::Tuple(std::move(elements));
}

absl::StatusOr<Shape> SliceToDynamicShape(const HloInstruction& instruction,
                                          absl::Span<const Shape* const> operands) {
  if (operands.empty() || !operands[0]->IsArray()) {
    return Invalid("SliceToDynamic: operand 0 must be an array");
  }
  const Shape& x = *operands[0];
  if (!x.is_static()) return Invalid("SliceToDynamic: operand 0 must be static, got ", Str(x));
  if (static_cast<int64_t>(operands.size()) != 1 + x.rank()) {
    return Invalid("SliceToDynamic takes the array and one size per dimension (", 1 + x.rank(),
                   " operands), got ", operands.size());
  }
  for (size_t k = 1; k < operands.size(); ++k) {
    if (!operands[k]->IsScalar() || !IsInteger(operands[k]->element_type())) {
      return Invalid("SliceToDynamic: operand ", k, " (the size of dimension ", k - 1,
                     ") must be an integer scalar, got ", Str(*operands[k]));
    }
  }
  // The result's dynamic dimensions are the declared ones; everything else
  // is the operand's.
  const Shape& declared = instruction.shape();
  if (!declared.IsArray() || declared.element_type() != x.element_type() ||
      declared.dimensions() != x.dimensions()) {
    return Invalid("SliceToDynamic: the result must be ", Str(x),
                   " with any of its dimensions dynamic, got ", Str(declared));
  }
  Shape out = x;
  for (int64_t d = 0; d < x.rank(); ++d) {
    out.set_dynamic_dimension(d, declared.is_dynamic_dimension(d));
  }
  return out;
}

}  // namespace

std::optional<DynamicCustomCall> DynamicCustomCallFromTarget(absl::string_view target) {
  if (target == kPadToStaticTarget) return DynamicCustomCall::kPadToStatic;
  if (target == kSliceToDynamicTarget) return DynamicCustomCall::kSliceToDynamic;
  return std::nullopt;
}

std::optional<DynamicCustomCall> DynamicCustomCallOf(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kCustomCall) return std::nullopt;
  return DynamicCustomCallFromTarget(instruction.attrs().custom_call_target);
}

absl::StatusOr<Shape> InferDynamicCustomCallShape(DynamicCustomCall kind,
                                                  const HloInstruction& instruction,
                                                  absl::Span<const Shape* const> operands) {
  switch (kind) {
    case DynamicCustomCall::kPadToStatic: return PadToStaticShape(operands);
    case DynamicCustomCall::kSliceToDynamic: return SliceToDynamicShape(instruction, operands);
  }
  return Invalid("unknown dynamic custom call");
}

}  // namespace hloc
