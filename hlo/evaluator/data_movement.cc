// Ops that move elements without computing on them: broadcast, reshape,
// transpose, reverse, slice, dynamic-slice, dynamic-update-slice,
// concatenate, pad and iota. All but iota reduce to StridedCopy with
// precomputed strides.
#include <algorithm>
#include <cstring>

#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/ops.h"
#include "hlo/evaluator/strided_copy.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {

std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

absl::StatusOr<Literal> NewLiteral(const HloInstruction& hlo, const Shape& shape) {
  absl::StatusOr<Literal> literal = Literal::Create(shape);
  if (!literal.ok()) {  // keeps the code: too big is ResourceExhausted, not a bad module
    return absl::Status(literal.status().code(),
                        absl::StrCat("instruction %", hlo.name(), " (", HloOpcodeName(hlo.opcode()),
                                     "): cannot make its result: ", literal.status().message()));
  }
  return literal;
}

Literal TransposeLiteral(const Literal& input, absl::Span<const int64_t> perm) {
  const Shape& in_shape = input.shape();
  std::vector<int64_t> out_dims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out_dims[i] = in_shape.dimensions(perm[i]);
  Literal out(Shape(in_shape.element_type(), out_dims));
  const std::vector<int64_t> in_strides = RowMajorStrides(in_shape.dimensions());
  std::vector<int64_t> src_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) src_strides[i] = in_strides[perm[i]];
  StridedCopy(ByteWidth(in_shape.element_type()), input.raw(), 0, src_strides, out.mutable_raw(),
              0, RowMajorStrides(out_dims), out_dims);
  return out;
}

Literal ReshapeLiteral(const Literal& input, const Shape& shape) {
  Literal out(shape);
  if (input.size_bytes() > 0) std::memcpy(out.mutable_raw(), input.raw(), input.size_bytes());
  return out;
}

namespace {

int Width(const Literal& l) { return ByteWidth(l.shape().element_type()); }

absl::Status ExpectArray(const HloInstruction& hlo, const Literal& l) {
  if (!l.shape().IsArray()) {
    return InstructionError(hlo, "operand of shape ", l.shape().ToString(), " is not an array");
  }
  if (!hlo.shape().IsArray()) return InstructionError(hlo, "result is not an array");
  return absl::OkStatus();
}

// Start indices of dynamic-slice / dynamic-update-slice: either one scalar
// operand per dimension (from `first`) or one rank-1 operand. Each start is
// clamped so the window [start, start + size) lies inside [0, dim).
absl::StatusOr<std::vector<int64_t>> ClampedStarts(const HloInstruction& hlo, Operands ops,
                                                   int64_t first, const Shape& operand,
                                                   absl::Span<const int64_t> sizes) {
  const int64_t rank = operand.rank();
  std::vector<int64_t> starts(rank, 0);
  const int64_t count = static_cast<int64_t>(ops.size()) - first;
  if (count == 1 && ops[first]->shape().rank() == 1) {
    if (ops[first]->element_count() != rank) {
      return InstructionError(hlo, "start index vector has ", ops[first]->element_count(),
                              " elements for rank ", rank);
    }
    for (int64_t d = 0; d < rank; ++d) starts[d] = ops[first]->GetAsInt64(d);
  } else {
    if (count != rank) {
      return InstructionError(hlo, "expected ", rank, " start indices, got ", count);
    }
    for (int64_t d = 0; d < rank; ++d) {
      const Literal& idx = *ops[first + d];
      if (!idx.shape().IsArray() || idx.element_count() != 1 ||
          !IsInteger(idx.shape().element_type())) {
        return InstructionError(hlo, "start index ", d, " is not an integer scalar");
      }
      starts[d] = IsUnsignedInteger(idx.shape().element_type())
                      ? static_cast<int64_t>(std::min<uint64_t>(idx.GetAsUint64(0), INT64_MAX))
                      : idx.GetAsInt64(0);
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] > operand.dimensions(d) || sizes[d] < 0) {
      return InstructionError(hlo, "slice size ", sizes[d], " exceeds dimension ", d, " of size ",
                              operand.dimensions(d));
    }
    starts[d] = std::clamp<int64_t>(starts[d], 0, operand.dimensions(d) - sizes[d]);
  }
  return starts;
}

}  // namespace

absl::StatusOr<Literal> EvalBroadcast(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  HLOC_RETURN_IF_ERROR(ExpectArray(hlo, in));
  const std::vector<int64_t>& map = hlo.dimensions();
  const Shape& out_shape = hlo.shape();
  if (static_cast<int64_t>(map.size()) != in.shape().rank()) {
    return InstructionError(hlo, "dimensions={} has ", map.size(), " entries for operand rank ",
                            in.shape().rank());
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dimensions());
  std::vector<int64_t> src_strides(out_shape.rank(), 0);
  for (size_t i = 0; i < map.size(); ++i) {
    if (map[i] < 0 || map[i] >= out_shape.rank() ||
        out_shape.dimensions(map[i]) != in.shape().dimensions(i)) {
      return InstructionError(hlo, "operand dimension ", i, " does not map onto the result");
    }
    src_strides[map[i]] = in_strides[i];
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, out_shape));
  if (in.element_count() == 1) {
    FillElements(Width(in), in.raw(), out.mutable_raw(), out.element_count());
  } else {
    StridedCopy(Width(in), in.raw(), 0, src_strides, out.mutable_raw(), 0,
                RowMajorStrides(out_shape.dimensions()), out_shape.dimensions());
  }
  return std::move(out);
}

absl::StatusOr<Literal> EvalReshape(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  HLOC_RETURN_IF_ERROR(ExpectArray(hlo, in));
  if (in.element_count() != hlo.shape().element_count() ||
      in.shape().element_type() != hlo.shape().element_type()) {
    return InstructionError(hlo, "cannot reshape ", in.shape().ToString(), " to ",
                            hlo.shape().ToString());
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  if (in.size_bytes() > 0) std::memcpy(out.mutable_raw(), in.raw(), in.size_bytes());
  return std::move(out);
}


absl::StatusOr<Literal> EvalBitcast(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  HLOC_RETURN_IF_ERROR(ExpectArray(hlo, in));
  const Shape& out_shape = hlo.shape();
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, out_shape));
  if (out.size_bytes() != in.size_bytes() ||
      ByteWidth(in.shape().element_type()) != ByteWidth(out_shape.element_type())) {
    return InstructionError(hlo, "bitcast from ", in.shape().ToString(), " to ",
                            out_shape.ToString(), " changes the byte size");
  }
  // A bitcast reinterprets physical memory: put the operand in its physical
  // (layout) order, read that buffer as the result's physical order, and
  // bring it back to the result's logical order.
  // The layout is the operand instruction's (argument literals carry none).
  const std::vector<int64_t> in_order = MajorToMinorOrder(hlo.operand(0)->shape());
  if (!hlo.operand(0)->shape().SameDimensions(in.shape())) {
    return InstructionError(hlo, "operand value does not match its shape");
  }
  const std::vector<int64_t> out_order = MajorToMinorOrder(out_shape);
  Literal physical = TransposeLiteral(in, in_order);
  std::vector<int64_t> physical_out_dims;
  for (int64_t d : out_order) physical_out_dims.push_back(out_shape.dimensions(d));
  Literal reread(Shape(out_shape.element_type(), physical_out_dims));
  if (physical.size_bytes() > 0) {
    std::memcpy(reread.mutable_raw(), physical.raw(), physical.size_bytes());
  }
  std::vector<int64_t> back(out_shape.rank());
  for (int64_t i = 0; i < out_shape.rank(); ++i) back[out_order[i]] = i;
  Literal logical = TransposeLiteral(reread, back);
  std::memcpy(out.mutable_raw(), logical.raw(), logical.size_bytes());
  return std::move(out);
}

absl::StatusOr<Literal> EvalTranspose(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  HLOC_RETURN_IF_ERROR(ExpectArray(hlo, in));
  const std::vector<int64_t>& perm = hlo.dimensions();
  const int64_t rank = in.shape().rank();
  std::vector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank) {
    return InstructionError(hlo, "dimensions={} is not a permutation of the operand's");
  }
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) {
      return InstructionError(hlo, "dimensions={} is not a permutation of the operand's");
    }
    seen[p] = true;
  }
  Literal out = TransposeLiteral(in, perm);
  if (!out.shape().Compatible(hlo.shape())) {
    return InstructionError(hlo, "transposed shape ", out.shape().ToString(),
                            " differs from the result shape");
  }
  if (hlo.shape().has_layout()) out.set_layout(hlo.shape().layout());
  return std::move(out);
}

absl::StatusOr<Literal> EvalReverse(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  HLOC_RETURN_IF_ERROR(ExpectArray(hlo, in));
  const std::vector<int64_t>& dims = in.shape().dimensions();
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t base = 0;
  for (int64_t d : hlo.dimensions()) {
    if (d < 0 || d >= in.shape().rank()) return InstructionError(hlo, "bad dimension ", d);
    if (dims[d] > 0) base += (dims[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  StridedCopy(Width(in), in.raw(), base, strides, out.mutable_raw(), 0, RowMajorStrides(dims),
              dims);
  return std::move(out);
}

absl::StatusOr<Literal> EvalSlice(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  HLOC_RETURN_IF_ERROR(ExpectArray(hlo, in));
  const HloAttributes& a = hlo.attrs();
  const int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(a.slice_starts.size()) != rank ||
      static_cast<int64_t>(a.slice_limits.size()) != rank) {
    return InstructionError(hlo, "slice has the wrong number of bounds");
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dimensions());
  std::vector<int64_t> src_strides(rank), dims(rank);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t start = a.slice_starts[d], limit = a.slice_limits[d];
    const int64_t stride = a.slice_strides.empty() ? 1 : a.slice_strides[d];
    if (start < 0 || limit > in.shape().dimensions(d) || start > limit || stride <= 0) {
      return InstructionError(hlo, "slice bounds out of range in dimension ", d);
    }
    dims[d] = (limit - start + stride - 1) / stride;
    base += start * in_strides[d];
    src_strides[d] = in_strides[d] * stride;
  }
  if (dims != hlo.shape().dimensions()) {
    return InstructionError(hlo, "slice bounds do not give the result shape");
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  StridedCopy(Width(in), in.raw(), base, src_strides, out.mutable_raw(), 0, RowMajorStrides(dims),
              dims);
  return std::move(out);
}

absl::StatusOr<Literal> EvalDynamicSlice(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  HLOC_RETURN_IF_ERROR(ExpectArray(hlo, in));
  const std::vector<int64_t>& sizes = hlo.attrs().dynamic_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != in.shape().rank() ||
      sizes != hlo.shape().dimensions()) {
    return InstructionError(hlo, "dynamic_slice_sizes do not match operand rank / result shape");
  }
  HLOC_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                        ClampedStarts(hlo, ops, 1, in.shape(), sizes));
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dimensions());
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d) base += starts[d] * in_strides[d];
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  StridedCopy(Width(in), in.raw(), base, in_strides, out.mutable_raw(), 0,
              RowMajorStrides(sizes), sizes);
  return std::move(out);
}

absl::StatusOr<Literal> EvalDynamicUpdateSlice(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  const Literal& update = *ops[1];
  HLOC_RETURN_IF_ERROR(ExpectArray(hlo, in));
  HLOC_RETURN_IF_ERROR(ExpectArray(hlo, update));
  if (update.shape().rank() != in.shape().rank() ||
      update.shape().element_type() != in.shape().element_type()) {
    return InstructionError(hlo, "update rank or type differs from the operand's");
  }
  const std::vector<int64_t>& sizes = update.shape().dimensions();
  HLOC_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                        ClampedStarts(hlo, ops, 2, in.shape(), sizes));
  Literal out = in;
  const std::vector<int64_t> out_strides = RowMajorStrides(in.shape().dimensions());
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d) base += starts[d] * out_strides[d];
  StridedCopy(Width(in), update.raw(), 0, RowMajorStrides(sizes), out.mutable_raw(), base,
              out_strides, sizes);
  return std::move(out);
}

absl::StatusOr<Literal> EvalConcatenate(const HloInstruction& hlo, Operands ops) {
  if (hlo.dimensions().size() != 1) return InstructionError(hlo, "needs one dimension");
  const int64_t dim = hlo.dimensions(0);
  const Shape& out_shape = hlo.shape();
  if (dim < 0 || dim >= out_shape.rank()) return InstructionError(hlo, "bad dimension ", dim);
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, out_shape));
  const std::vector<int64_t> out_strides = RowMajorStrides(out_shape.dimensions());
  int64_t offset = 0;
  for (const Literal* op : ops) {
    HLOC_RETURN_IF_ERROR(ExpectArray(hlo, *op));
    const Shape& s = op->shape();
    bool ok = s.rank() == out_shape.rank() && s.element_type() == out_shape.element_type();
    for (int64_t d = 0; ok && d < s.rank(); ++d) {
      if (d != dim && s.dimensions(d) != out_shape.dimensions(d)) ok = false;
    }
    if (!ok || offset + s.dimensions(dim) > out_shape.dimensions(dim)) {
      return InstructionError(hlo, "operand shape ", s.ToString(), " does not fit the result");
    }
    StridedCopy(Width(out), op->raw(), 0, RowMajorStrides(s.dimensions()), out.mutable_raw(),
                offset * out_strides[dim], out_strides, s.dimensions());
    offset += s.dimensions(dim);
  }
  if (offset != out_shape.dimensions(dim)) {
    return InstructionError(hlo, "operands do not fill the result");
  }
  return std::move(out);
}

absl::StatusOr<Literal> EvalPad(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  const Literal& value = *ops[1];
  HLOC_RETURN_IF_ERROR(ExpectArray(hlo, in));
  const int64_t rank = in.shape().rank();
  const xla::PaddingConfig& config = hlo.attrs().padding_config;
  if (config.dimensions_size() != rank || value.element_count() != 1) {
    return InstructionError(hlo, "padding config or padding value does not fit the operand");
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  const int w = Width(in);
  FillElements(w, value.raw(), out.mutable_raw(), out.element_count());
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dimensions());
  const std::vector<int64_t> out_strides = RowMajorStrides(hlo.shape().dimensions());
  std::vector<int64_t> dims(rank), src_strides(rank), dst_strides(rank);
  int64_t src_base = 0, dst_base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const auto& pd = config.dimensions(d);
    const int64_t lo = pd.edge_padding_low(), interior = pd.interior_padding();
    const int64_t n = in.shape().dimensions(d), out_n = hlo.shape().dimensions(d);
    if (interior < 0) return InstructionError(hlo, "negative interior padding");
    const int64_t expected =
        lo + pd.edge_padding_high() + n + (n > 0 ? (n - 1) * interior : 0);
    if (expected != out_n) return InstructionError(hlo, "padding does not give the result shape");
    const int64_t step = interior + 1;
    // Operand elements i land at lo + i * step; keep those inside [0, out_n).
    int64_t first = lo >= 0 ? 0 : (-lo + step - 1) / step;
    int64_t last = out_n - 1 - lo < 0 ? -1 : std::min(n - 1, (out_n - 1 - lo) / step);
    dims[d] = std::max<int64_t>(0, last - first + 1);
    src_base += first * in_strides[d];
    src_strides[d] = in_strides[d];
    dst_base += (lo + first * step) * out_strides[d];
    dst_strides[d] = out_strides[d] * step;
  }
  StridedCopy(w, in.raw(), src_base, src_strides, out.mutable_raw(), dst_base, dst_strides, dims);
  return std::move(out);
}

absl::StatusOr<Literal> EvalIota(const HloInstruction& hlo) {
  const Shape& shape = hlo.shape();
  const int64_t dim = hlo.attrs().iota_dimension;
  if (!shape.IsArray() || dim < 0 || dim >= shape.rank()) {
    return InstructionError(hlo, "iota_dimension out of range");
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, shape));
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  const int64_t stride = strides[dim], size = shape.dimensions(dim);
  HLOC_RETURN_IF_ERROR(DispatchType(shape.element_type(), [&](auto tag) -> absl::Status {
    using Tag = decltype(tag);
    using C = typename Tag::Compute;
    auto* dst = reinterpret_cast<typename Tag::Storage*>(out.mutable_raw());
    for (int64_t i = 0; i < out.element_count(); ++i) {
      const int64_t v = (i / stride) % size;
      if constexpr (kIsComplex<Tag>) {
        dst[i] = Tag::Store(C(static_cast<typename C::value_type>(v), 0));
      } else {
        dst[i] = Tag::Store(static_cast<C>(v));
      }
    }
    return absl::OkStatus();
  }));
  return std::move(out);
}

}  // namespace eval
}  // namespace hloc

namespace hloc {
namespace eval {

Literal ElementAsScalar(const Literal& array, int64_t index) {
  Literal scalar(Shape::Scalar(array.shape().element_type()));
  const int w = ByteWidth(array.shape().element_type());
  std::memcpy(scalar.mutable_raw(), array.raw() + index * w, w);
  return scalar;
}

void StoreElement(const Literal& scalar, Literal* array, int64_t index) {
  const int w = ByteWidth(array->shape().element_type());
  std::memcpy(array->mutable_raw() + index * w, scalar.raw(), w);
}

}  // namespace eval
}  // namespace hloc
