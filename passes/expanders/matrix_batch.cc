#include "passes/expanders/matrix_batch.h"

#include <numeric>

#include "absl/strings/str_cat.h"

namespace hloc {
namespace expanders {

absl::Status CheckLinalgCustomCall(const HloInstruction& call, LinalgCustomCall kind) {
  std::vector<const Shape*> operands;
  for (const HloInstruction* operand : call.operands()) operands.push_back(&operand->shape());
  absl::StatusOr<Shape> shape = InferLinalgCustomCallShape(kind, call, operands);
  if (!shape.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot expand %", call.name(), ": ", shape.status().message()));
  }
  if (!shape->Compatible(call.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot expand %", call.name(), ": declared shape ", call.shape().ToString(false), " but ",
        call.attrs().custom_call_target, " of its operands gives ", shape->ToString(false)));
  }
  return absl::OkStatus();
}

PrimitiveType LinalgComputeType(PrimitiveType type) {
  return (type == xla::F16 || type == xla::BF16) ? xla::F32 : type;
}

bool IsRealMatrixBatch(const Shape& shape) {
  return shape.IsArray() && shape.is_static() && shape.rank() >= 2 &&
         IsFloatingPoint(shape.element_type()) && !IsComplex(shape.element_type()) &&
         !IsNarrowFloat(shape.element_type());
}

HloInstruction* Conjugate(ExpansionBuilder& b, HloInstruction* x) {
  if (x == nullptr) return b.MissingOperand();
  if (!IsComplex(x->shape().element_type())) return x;
  return b.Binary(HloOpcode::kComplex, b.Unary(HloOpcode::kReal, x),
                  b.Unary(HloOpcode::kNegate, b.Unary(HloOpcode::kImag, x)));
}

HloInstruction* RealPart(ExpansionBuilder& b, HloInstruction* x) {
  if (x == nullptr) return b.MissingOperand();
  if (!IsComplex(x->shape().element_type())) return x;
  return b.Unary(HloOpcode::kReal, x);
}

HloInstruction* ImagPart(ExpansionBuilder& b, HloInstruction* x) {
  if (x == nullptr) return b.MissingOperand();
  if (!IsComplex(x->shape().element_type())) {
    return b.Splat(b.Scalar(x->shape().element_type(), 0), x->shape().dimensions());
  }
  return b.Unary(HloOpcode::kImag, x);
}

HloInstruction* AbsSquared(ExpansionBuilder& b, HloInstruction* x) {
  if (x == nullptr) return b.MissingOperand();
  if (!IsComplex(x->shape().element_type())) return b.Binary(HloOpcode::kMultiply, x, x);
  HloInstruction* re = b.Unary(HloOpcode::kReal, x);
  HloInstruction* im = b.Unary(HloOpcode::kImag, x);
  return b.Binary(HloOpcode::kAdd, b.Binary(HloOpcode::kMultiply, re, re),
                  b.Binary(HloOpcode::kMultiply, im, im));
}

HloInstruction* MatrixBatch::Spread(ExpansionBuilder& b, HloInstruction* x,
                                    std::vector<int64_t> dims, int64_t at) const {
  std::vector<int64_t> mapping = BatchDimensions();
  mapping.push_back(batch_rank() + at);
  return b.Broadcast(x, BatchPlus(std::move(dims)), mapping);
}

HloInstruction* MatrixBatch::SpreadScalar(ExpansionBuilder& b, HloInstruction* x,
                                          std::vector<int64_t> dims) const {
  return b.Broadcast(x, BatchPlus(std::move(dims)), BatchDimensions());
}

std::vector<int64_t> MatrixBatch::BatchPlus(std::vector<int64_t> extra) const {
  std::vector<int64_t> out(dims_.begin(), dims_.end() - 2);
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

std::vector<int64_t> MatrixBatch::BatchDimensions() const {
  std::vector<int64_t> out(batch_rank());
  std::iota(out.begin(), out.end(), 0);
  return out;
}

std::vector<int64_t> MatrixBatch::SwapMinor() const {
  std::vector<int64_t> out(dims_.size());
  std::iota(out.begin(), out.end(), 0);
  std::swap(out[out.size() - 1], out[out.size() - 2]);
  return out;
}

namespace {

// Start indices (0, ..., 0, row, column) for an array of rank `rank`.
std::vector<HloInstruction*> Starts(ExpansionBuilder& b, int64_t rank, HloInstruction* row,
                                    HloInstruction* column) {
  std::vector<HloInstruction*> starts;
  HloInstruction* zero = b.IndexScalar(xla::S32, 0);
  for (int64_t d = 0; d + 2 < rank; ++d) starts.push_back(zero);
  starts.push_back(row != nullptr ? row : zero);
  starts.push_back(column != nullptr ? column : zero);
  return starts;
}

std::vector<int64_t> Sizes(const HloInstruction* x, int64_t rows, int64_t columns) {
  std::vector<int64_t> sizes = x->shape().dimensions();
  sizes[sizes.size() - 2] = rows;
  sizes[sizes.size() - 1] = columns;
  return sizes;
}

}  // namespace

HloInstruction* MatrixBatch::Row(ExpansionBuilder& b, HloInstruction* x, HloInstruction* row) {
  if (x == nullptr) return b.MissingOperand();
  return b.DynamicSlice(x, Starts(b, x->shape().rank(), row, nullptr),
                        Sizes(x, 1, x->shape().dimensions().back()));
}

HloInstruction* MatrixBatch::Column(ExpansionBuilder& b, HloInstruction* x,
                                    HloInstruction* column) {
  if (x == nullptr) return b.MissingOperand();
  const int64_t rank = x->shape().rank();
  return b.DynamicSlice(x, Starts(b, rank, nullptr, column),
                        Sizes(x, x->shape().dimensions(rank - 2), 1));
}

HloInstruction* MatrixBatch::Element(ExpansionBuilder& b, HloInstruction* x, HloInstruction* row,
                                     HloInstruction* column) {
  if (x == nullptr) return b.MissingOperand();
  return b.DynamicSlice(x, Starts(b, x->shape().rank(), row, column), Sizes(x, 1, 1));
}

HloInstruction* MatrixBatch::Update(ExpansionBuilder& b, HloInstruction* x,
                                    HloInstruction* update, HloInstruction* row,
                                    HloInstruction* column) {
  if (x == nullptr) return b.MissingOperand();
  return b.DynamicUpdateSlice(x, update, Starts(b, x->shape().rank(), row, column));
}

HloInstruction* MatrixBatch::MatMul(ExpansionBuilder& b, HloInstruction* lhs,
                                    HloInstruction* rhs) {
  if (lhs == nullptr || rhs == nullptr) return b.MissingOperand();
  const int64_t rank = lhs->shape().rank();
  xla::DotDimensionNumbers dn;
  for (int64_t d = 0; d + 2 < rank; ++d) {
    dn.add_lhs_batch_dimensions(d);
    dn.add_rhs_batch_dimensions(d);
  }
  dn.add_lhs_contracting_dimensions(rank - 1);
  dn.add_rhs_contracting_dimensions(rank - 2);
  return b.Dot(lhs, rhs, dn);
}

}  // namespace expanders
}  // namespace hloc
