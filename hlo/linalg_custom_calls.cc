#include "hlo/linalg_custom_calls.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

template <typename... Args>
absl::Status Invalid(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}

std::string Str(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

bool IsLinalgType(PrimitiveType type) {
  return type == xla::F16 || type == xla::BF16 || type == xla::F32 || type == xla::F64 ||
         type == xla::C64 || type == xla::C128;
}

// A static array [..., rows, columns] of a supported type.
absl::Status CheckMatrixBatch(absl::string_view target, absl::string_view what,
                              const Shape& shape) {
  if (!shape.IsArray() || shape.rank() < 2) {
    return Invalid(target, ": ", what, " must be an array of rank >= 2, got ", Str(shape));
  }
  if (!IsLinalgType(shape.element_type())) {
    return Invalid(target, ": ", what, " must be f16, bf16, f32, f64, c64 or c128, got ",
                   Str(shape));
  }
  if (!shape.is_static()) {
    return Invalid(target, ": ", what, " must have static dimensions, got ", Str(shape));
  }
  return absl::OkStatus();
}

absl::Status CheckOperandCount(absl::string_view target, absl::Span<const Shape* const> operands,
                               size_t expected) {
  if (operands.size() != expected) {
    return Invalid(target, " takes ", expected, " operand", expected == 1 ? "" : "s", ", got ",
                   operands.size());
  }
  return absl::OkStatus();
}

std::vector<int64_t> BatchPlus(const Shape& matrix, std::vector<int64_t> extra) {
  std::vector<int64_t> out(matrix.dimensions().begin(), matrix.dimensions().end() - 2);
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

absl::StatusOr<Shape> InferQr(absl::Span<const Shape* const> operands) {
  HLOC_RETURN_IF_ERROR(CheckOperandCount(kQrTarget, operands, 1));
  const Shape& a = *operands[0];
  HLOC_RETURN_IF_ERROR(CheckMatrixBatch(kQrTarget, "operand", a));
  const int64_t m = a.dimensions(a.rank() - 2);
  const int64_t n = a.dimensions(a.rank() - 1);
  return Shape::Tuple({Shape(a.element_type(), a.dimensions()),
                       Shape(a.element_type(), BatchPlus(a, {std::min(m, n)}))});
}

absl::StatusOr<Shape> InferHouseholderProduct(absl::Span<const Shape* const> operands) {
  constexpr const char* target = kHouseholderProductTarget;
  HLOC_RETURN_IF_ERROR(CheckOperandCount(target, operands, 2));
  const Shape& a = *operands[0];
  const Shape& taus = *operands[1];
  HLOC_RETURN_IF_ERROR(CheckMatrixBatch(target, "operand 0 (a)", a));
  const int64_t m = a.dimensions(a.rank() - 2);
  const int64_t n = a.dimensions(a.rank() - 1);
  if (m < n) return Invalid(target, ": a must have m >= n, got ", Str(a));
  if (!taus.IsArray() || taus.rank() != a.rank() - 1 || taus.element_type() != a.element_type() ||
      !std::equal(a.dimensions().begin(), a.dimensions().end() - 2, taus.dimensions().begin()) ||
      taus.dimensions(taus.rank() - 1) > n) {
    return Invalid(target, ": taus must be ", PrimitiveTypeName(a.element_type()),
                   "[batch..., k] with a's batch dimensions and k <= ", n, ", got ", Str(taus),
                   " for a ", Str(a));
  }
  return Shape(a.element_type(), a.dimensions());
}

absl::StatusOr<Shape> InferEigh(const HloInstruction& instruction,
                                absl::Span<const Shape* const> operands) {
  HLOC_RETURN_IF_ERROR(CheckOperandCount(kEighTarget, operands, 1));
  const Shape& a = *operands[0];
  HLOC_RETURN_IF_ERROR(CheckMatrixBatch(kEighTarget, "operand", a));
  const int64_t n = a.dimensions(a.rank() - 1);
  if (a.dimensions(a.rank() - 2) != n) {
    return Invalid(kEighTarget, ": operand must be square matrices, got ", Str(a));
  }
  HLOC_RETURN_IF_ERROR(ParseEighConfig(instruction).status());
  const PrimitiveType w_type =
      IsComplex(a.element_type()) ? ComplexComponentType(a.element_type()) : a.element_type();
  return Shape::Tuple({Shape(a.element_type(), a.dimensions()), Shape(w_type, BatchPlus(a, {n}))});
}

}  // namespace

std::optional<LinalgCustomCall> LinalgCustomCallFromTarget(absl::string_view target) {
  if (target == kQrTarget) return LinalgCustomCall::kQr;
  if (target == kHouseholderProductTarget) return LinalgCustomCall::kHouseholderProduct;
  if (target == kEighTarget) return LinalgCustomCall::kEigh;
  return std::nullopt;
}

std::optional<LinalgCustomCall> LinalgCustomCallOf(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kCustomCall) return std::nullopt;
  return LinalgCustomCallFromTarget(instruction.attrs().custom_call_target);
}

absl::StatusOr<EighConfig> ParseEighConfig(const HloInstruction& eigh) {
  const std::string& text =
      eigh.backend_config().empty() ? eigh.attrs().opaque : eigh.backend_config();
  std::vector<absl::string_view> fields = absl::StrSplit(text, ',');
  EighConfig config;
  int lower = 0;
  int sort = 0;
  if (fields.size() != 4 || !absl::SimpleAtoi(absl::StripAsciiWhitespace(fields[0]), &lower) ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(fields[1]), &sort) ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(fields[2]), &config.max_iter) ||
      !absl::SimpleAtod(absl::StripAsciiWhitespace(fields[3]), &config.tol)) {
    return Invalid(kEighTarget,
                   ": backend_config must be \"lower,sort,max_iter,tol\" "
                   "(e.g. \"1,1,100,1e-06\"), got \"",
                   text, "\"");
  }
  if (config.max_iter < 0 || !(config.tol >= 0)) {
    return Invalid(kEighTarget, ": max_iter and tol must not be negative, got \"", text, "\"");
  }
  config.lower = lower != 0;
  config.sort = sort != 0;
  return config;
}

absl::StatusOr<Shape> InferLinalgCustomCallShape(LinalgCustomCall kind,
                                                 const HloInstruction& instruction,
                                                 absl::Span<const Shape* const> operands) {
  switch (kind) {
    case LinalgCustomCall::kQr:
      return InferQr(operands);
    case LinalgCustomCall::kHouseholderProduct:
      return InferHouseholderProduct(operands);
    case LinalgCustomCall::kEigh:
      return InferEigh(instruction, operands);
  }
  return Invalid("unknown linear-algebra custom call");
}

}  // namespace hloc
