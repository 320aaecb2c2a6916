#include "hlo/evaluator/runtime_shapes.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "hlo/evaluator/strided_copy.h"
#include "hlo/shape_inference.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

using Dims = std::vector<int64_t>;

// `declared` with the dimensions `dims`, every dimension static.
Shape RuntimeArrayShape(const Shape& declared, const Dims& dims) {
  Shape shape = declared;
  shape.set_dimensions(dims);
  for (int64_t d = 0; d < shape.rank(); ++d) shape.set_dynamic_dimension(d, false);
  return shape;
}

// The leading `dims` box of `in` (each dims[d] <= in's dimension d).
Literal LeadingBox(const Literal& in, const Dims& dims) {
  Literal out(RuntimeArrayShape(in.shape(), dims));
  StridedCopy(ByteWidth(in.shape().element_type()), in.raw(), 0,
              RowMajorStrides(in.shape().dimensions()), out.mutable_raw(), 0,
              RowMajorStrides(dims), dims);
  return out;
}

bool IsElementwiseOp(HloOpcode op) {
  return IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == HloOpcode::kSelect ||
         op == HloOpcode::kClamp || op == HloOpcode::kMap || op == HloOpcode::kStochasticConvert;
}

// Result sizes of an elementwise op, and which operands to cut to them.
absl::StatusOr<Dims> ElementwiseSizes(const HloInstruction& hlo, Operands ops,
                                      std::vector<bool>* trim) {
  const Shape& result = hlo.shape();
  Dims sizes = result.dimensions();
  for (int64_t d = 0; d < result.rank(); ++d) {
    int64_t dynamic_size = -1, smallest = sizes[d];
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i]->shape().rank() != result.rank()) continue;  // A scalar operand.
      const int64_t n = ops[i]->shape().dimensions(d);
      smallest = std::min(smallest, n);
      if (!hlo.operand(i)->shape().is_dynamic_dimension(d)) continue;
      if (dynamic_size >= 0 && dynamic_size != n) {
        return InstructionError(hlo, "operands have different runtime sizes (", dynamic_size,
                                " and ", n, ") in dimension ", d);
      }
      dynamic_size = n;
    }
    sizes[d] = dynamic_size >= 0 ? dynamic_size : smallest;
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i]->shape().rank() != result.rank()) continue;
    for (int64_t d = 0; d < result.rank(); ++d) {
      if (ops[i]->shape().dimensions(d) == sizes[d]) continue;
      if (hlo.operand(i)->shape().is_dynamic_dimension(d) || ops[i]->shape().dimensions(d) < sizes[d]) {
        return InstructionError(hlo, "operand ", i, " has runtime size ",
                                ops[i]->shape().dimensions(d), " in dimension ", d,
                                " where the result has ", sizes[d]);
      }
      (*trim)[i] = true;
    }
  }
  return sizes;
}

absl::StatusOr<Dims> ReshapeSizes(const HloInstruction& hlo, const Literal& in) {
  const Shape& result = hlo.shape();
  Dims sizes = result.dimensions();
  const int64_t count = in.element_count();
  if (count == result.element_count()) return sizes;
  int64_t dynamic_dim = -1, others = 1;
  for (int64_t d = 0; d < result.rank(); ++d) {
    if (!result.is_dynamic_dimension(d)) {
      others *= sizes[d];
    } else if (dynamic_dim >= 0) {
      return InstructionUnimplemented(
          hlo, "a reshape of a runtime-sized operand needs exactly one dynamic result dimension");
    } else {
      dynamic_dim = d;
    }
  }
  if (dynamic_dim < 0 || (others == 0 ? count != 0 : count % others != 0) ||
      (others != 0 && count / others > sizes[dynamic_dim])) {
    return InstructionError(hlo, "the operand's ", count,
                            " runtime elements do not fit the result shape ", result.ToString());
  }
  sizes[dynamic_dim] = others == 0 ? 0 : count / others;
  return sizes;
}

absl::StatusOr<Dims> SliceSizes(const HloInstruction& hlo, const Literal& in,
                                HloAttributes* attrs) {
  Dims sizes = hlo.shape().dimensions();
  for (int64_t d = 0; d < in.shape().rank(); ++d) {
    const int64_t n = in.shape().dimensions(d);
    const int64_t start = attrs->slice_starts[d];
    const int64_t stride = attrs->slice_strides.empty() ? 1 : attrs->slice_strides[d];
    if (attrs->slice_limits[d] <= n) continue;
    if (!hlo.shape().is_dynamic_dimension(d)) {
      return InstructionError(hlo, "the static slice [", start, ":", attrs->slice_limits[d],
                              "] of dimension ", d, " reads past its runtime size ", n);
    }
    // Past the runtime size the slice is empty, not out of range.
    const int64_t first = std::min(start, n);
    const int64_t limit = std::max(first, std::min(attrs->slice_limits[d], n));
    attrs->slice_starts[d] = first;
    attrs->slice_limits[d] = limit;
    sizes[d] = stride > 0 ? (limit - first + stride - 1) / stride : 0;
  }
  return sizes;
}

absl::StatusOr<Dims> DotSizes(const HloInstruction& hlo, const Literal& lhs, const Literal& rhs) {
  const xla::DotDimensionNumbers& dn = hlo.attrs().dot_dimension_numbers;
  const Dims& l = lhs.shape().dimensions();
  const Dims& r = rhs.shape().dimensions();
  auto contains = [](const auto& list, int64_t d) {
    return std::find(list.begin(), list.end(), d) != list.end();
  };
  Dims sizes;
  for (int i = 0; i < dn.lhs_batch_dimensions_size(); ++i) {
    const int64_t a = l[dn.lhs_batch_dimensions(i)], b = r[dn.rhs_batch_dimensions(i)];
    if (a != b) return InstructionError(hlo, "batch dimension ", i, " has runtime sizes ", a, " and ", b);
    sizes.push_back(a);
  }
  for (int i = 0; i < dn.lhs_contracting_dimensions_size(); ++i) {
    const int64_t a = l[dn.lhs_contracting_dimensions(i)], b = r[dn.rhs_contracting_dimensions(i)];
    if (a != b) {
      return InstructionError(hlo, "contracting dimension ", i, " has runtime sizes ", a, " and ", b);
    }
  }
  for (int64_t d = 0; d < static_cast<int64_t>(l.size()); ++d) {
    if (!contains(dn.lhs_batch_dimensions(), d) && !contains(dn.lhs_contracting_dimensions(), d)) {
      sizes.push_back(l[d]);
    }
  }
  for (int64_t d = 0; d < static_cast<int64_t>(r.size()); ++d) {
    if (!contains(dn.rhs_batch_dimensions(), d) && !contains(dn.rhs_contracting_dimensions(), d)) {
      sizes.push_back(r[d]);
    }
  }
  if (static_cast<int64_t>(sizes.size()) != hlo.shape().rank()) {
    return InstructionError(hlo, "dimension numbers do not give the result rank");
  }
  return sizes;
}

// The size of a windowed dimension's result for an input of runtime size
// `n`: dilated, padded, then slid over by the window (0 where it does not fit).
int64_t WindowedSize(int64_t n, const xla::WindowDimension& w, int64_t window_size) {
  const int64_t base = std::max<int64_t>(w.base_dilation(), 1);
  const int64_t dilation = std::max<int64_t>(w.window_dilation(), 1);
  const int64_t stride = std::max<int64_t>(w.stride(), 1);
  const int64_t dilated = n > 0 ? (n - 1) * base + 1 : 0;
  const int64_t span = dilated + w.padding_low() + w.padding_high() -
                       ((window_size - 1) * dilation + 1);
  return span < 0 ? 0 : span / stride + 1;
}

absl::StatusOr<Dims> ReduceWindowSizes(const HloInstruction& hlo, Operands ops) {
  const size_t inputs = ops.size() / 2;
  const Dims& n = ops[0]->shape().dimensions();
  for (size_t k = 1; k < inputs; ++k) {
    if (ops[k]->shape().dimensions() != n) {
      return InstructionError(hlo, "inputs have different runtime sizes");
    }
  }
  const xla::Window& window = hlo.attrs().window;
  if (window.dimensions_size() != static_cast<int>(n.size())) {
    return InstructionError(hlo, "the window's rank is not the input's");
  }
  Dims sizes;
  for (size_t d = 0; d < n.size(); ++d) {
    sizes.push_back(WindowedSize(n[d], window.dimensions(d), window.dimensions(d).size()));
  }
  return sizes;
}

absl::StatusOr<Dims> ConvolutionSizes(const HloInstruction& hlo, const Literal& lhs,
                                      const Literal& rhs) {
  const xla::ConvolutionDimensionNumbers& dn = hlo.attrs().convolution_dimension_numbers;
  const xla::Window& window = hlo.attrs().window;
  const Dims& l = lhs.shape().dimensions();
  const Dims& r = rhs.shape().dimensions();
  const int64_t features = hlo.attrs().feature_group_count;
  const int64_t batches = hlo.attrs().batch_group_count;
  if (l[dn.input_feature_dimension()] != r[dn.kernel_input_feature_dimension()] * features) {
    return InstructionError(hlo, "input features have runtime size ",
                            l[dn.input_feature_dimension()], ", the kernel's ",
                            r[dn.kernel_input_feature_dimension()], " (feature groups: ",
                            features, ")");
  }
  if (batches > 1 && l[dn.input_batch_dimension()] % batches != 0) {
    return InstructionError(hlo, "the batch's runtime size ", l[dn.input_batch_dimension()],
                            " does not split into ", batches, " batch groups");
  }
  Dims sizes = hlo.shape().dimensions();
  sizes[dn.output_batch_dimension()] = l[dn.input_batch_dimension()] / batches;
  sizes[dn.output_feature_dimension()] = r[dn.kernel_output_feature_dimension()];
  for (int k = 0; k < dn.input_spatial_dimensions_size(); ++k) {
    sizes[dn.output_spatial_dimensions(k)] =
        WindowedSize(l[dn.input_spatial_dimensions(k)], window.dimensions(k),
                     r[dn.kernel_spatial_dimensions(k)]);
  }
  return sizes;
}

// The runtime shape of `hlo`'s result (array or tuple of arrays of the same
// sizes), filling `attrs` changes (slice limits) and operands to cut.
absl::StatusOr<Shape> RuntimeResultShape(const HloInstruction& hlo, Operands ops,
                                         HloAttributes* attrs, std::vector<bool>* trim) {
  const HloOpcode op = hlo.opcode();
  const Shape& result = hlo.shape();
  auto same_for_all = [&](const Dims& sizes) -> Shape {
    if (!result.IsTuple()) return RuntimeArrayShape(result, sizes);
    std::vector<Shape> elements;
    for (const Shape& e : result.tuple_shapes()) elements.push_back(RuntimeArrayShape(e, sizes));
    return Shape::Tuple(std::move(elements));
  };
  if (op == HloOpcode::kBitcastConvert && result.IsArray() && ops[0]->shape().IsArray() &&
      ops[0]->shape().rank() != result.rank()) {
    // Between widths: the narrow side's extra minor dimension is the width
    // ratio, never runtime-sized; the other dimensions are the operand's.
    Dims sizes = ops[0]->shape().dimensions();
    if (result.rank() > ops[0]->shape().rank()) {
      sizes.push_back(result.dimensions().back());
    } else {
      sizes.pop_back();  // The operand has the extra dimension.
    }
    return RuntimeArrayShape(result, sizes);
  }
  if (IsElementwiseOp(op)) {
    if (!result.IsArray()) return InstructionError(hlo, "result is not an array");
    for (const Literal* o : ops) {
      if (o->shape().rank() != result.rank() && o->shape().rank() != 0) {
        return InstructionUnimplemented(hlo, "runtime sizes need operands of the result's rank");
      }
    }
    HLOC_ASSIGN_OR_RETURN(Dims sizes, ElementwiseSizes(hlo, ops, trim));
    return RuntimeArrayShape(result, sizes);
  }
  switch (op) {
    case HloOpcode::kBroadcast: {
      Dims sizes = result.dimensions();
      for (int64_t i = 0; i < ops[0]->shape().rank(); ++i) {
        sizes[hlo.dimensions(i)] = ops[0]->shape().dimensions(i);
      }
      return RuntimeArrayShape(result, sizes);
    }
    case HloOpcode::kReshape: {
      HLOC_ASSIGN_OR_RETURN(Dims sizes, ReshapeSizes(hlo, *ops[0]));
      return RuntimeArrayShape(result, sizes);
    }
    case HloOpcode::kTranspose: {
      Dims sizes;
      for (int64_t p : hlo.dimensions()) sizes.push_back(ops[0]->shape().dimensions(p));
      return RuntimeArrayShape(result, sizes);
    }
    case HloOpcode::kReverse:
      return RuntimeArrayShape(result, ops[0]->shape().dimensions());
    case HloOpcode::kSort: {
      for (const Literal* o : ops) {
        if (o->shape().dimensions() != ops[0]->shape().dimensions()) {
          return InstructionError(hlo, "operands have different runtime sizes");
        }
      }
      return same_for_all(ops[0]->shape().dimensions());
    }
    case HloOpcode::kSlice: {
      HLOC_ASSIGN_OR_RETURN(Dims sizes, SliceSizes(hlo, *ops[0], attrs));
      return RuntimeArrayShape(result, sizes);
    }
    case HloOpcode::kConcatenate: {
      const int64_t axis = hlo.dimensions(0);
      Dims sizes = ops[0]->shape().dimensions();
      sizes[axis] = 0;
      for (const Literal* o : ops) {
        for (int64_t d = 0; d < result.rank(); ++d) {
          if (d != axis && o->shape().dimensions(d) != sizes[d]) {
            return InstructionError(hlo, "operands have different runtime sizes in dimension ", d);
          }
        }
        sizes[axis] += o->shape().dimensions(axis);
      }
      return RuntimeArrayShape(result, sizes);
    }
    case HloOpcode::kPad: {
      const xla::PaddingConfig& config = hlo.attrs().padding_config;
      Dims sizes = result.dimensions();
      for (int64_t d = 0; d < result.rank() && d < config.dimensions_size(); ++d) {
        const auto& pd = config.dimensions(d);
        const int64_t n = ops[0]->shape().dimensions(d);
        sizes[d] = pd.edge_padding_low() + pd.edge_padding_high() + n +
                   (n > 0 ? (n - 1) * pd.interior_padding() : 0);
        if (sizes[d] < 0) return InstructionError(hlo, "negative runtime size in dimension ", d);
      }
      return RuntimeArrayShape(result, sizes);
    }
    case HloOpcode::kReduce: {
      const size_t inputs = ops.size() / 2;
      for (size_t i = 1; i < inputs; ++i) {
        if (ops[i]->shape().dimensions() != ops[0]->shape().dimensions()) {
          return InstructionError(hlo, "inputs have different runtime sizes");
        }
      }
      Dims kept;
      for (int64_t d = 0; d < ops[0]->shape().rank(); ++d) {
        const auto& reduced = hlo.dimensions();
        if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) {
          kept.push_back(ops[0]->shape().dimensions(d));
        }
      }
      return same_for_all(kept);
    }
    case HloOpcode::kDot: {
      HLOC_ASSIGN_OR_RETURN(Dims sizes, DotSizes(hlo, *ops[0], *ops[1]));
      return RuntimeArrayShape(result, sizes);
    }
    case HloOpcode::kReduceWindow: {
      HLOC_ASSIGN_OR_RETURN(Dims sizes, ReduceWindowSizes(hlo, ops));
      return same_for_all(sizes);
    }
    case HloOpcode::kConvolution: {
      HLOC_ASSIGN_OR_RETURN(Dims sizes, ConvolutionSizes(hlo, *ops[0], *ops[1]));
      return RuntimeArrayShape(result, sizes);
    }
    case HloOpcode::kIota:
      return RuntimeArrayShape(result, result.dimensions());
    case HloOpcode::kGather:
      return result;  // Inferred from the runtime operands in MakeRuntimeOp.
    case HloOpcode::kScatter:
      // Into the operand at its runtime size; windows that do not fit it
      // are skipped (scatter's out-of-bounds rule).
      if (!result.IsArray()) {
        return InstructionUnimplemented(hlo, "runtime sizes in a scatter of several operands");
      }
      return RuntimeArrayShape(result, ops[0]->shape().dimensions());
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice: {
      // Starts clamp into the operand at its runtime size; the window must
      // fit in it.
      const bool update = op == HloOpcode::kDynamicUpdateSlice;
      const Shape& x = ops[0]->shape();
      for (int64_t d = 0; d < x.rank(); ++d) {
        const int64_t window = update ? ops[1]->shape().dimensions(d)
                                      : hlo.attrs().dynamic_slice_sizes[d];
        if (window > x.dimensions(d)) {
          return InstructionError(hlo, "its window of ", window, " along dimension ", d,
                                  " is larger than the operand's runtime size ",
                                  x.dimensions(d));
        }
      }
      return update ? RuntimeArrayShape(result, x.dimensions()) : result;
    }
    default:
      return InstructionUnimplemented(hlo, "the evaluator does not support runtime (dynamic) "
                                           "sizes for this opcode");
  }
}

}  // namespace

bool NeedsRuntimeShapes(const HloInstruction& hlo, Operands ops) {
  if (!hlo.shape().is_static()) return true;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Shape& declared = hlo.operand(i)->shape();
    // A folded scalar broadcast reaches its users as the scalar: rank differs.
    if (declared.IsArray() && ops[i]->shape().rank() == declared.rank() &&
        ops[i]->shape().dimensions() != declared.dimensions()) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::unique_ptr<RuntimeOp>> MakeRuntimeOp(const HloInstruction& hlo, Operands ops) {
  auto op = std::make_unique<RuntimeOp>();
  HloAttributes attrs = hlo.attrs();
  std::vector<bool> trim(ops.size(), false);
  HLOC_ASSIGN_OR_RETURN(Shape shape, RuntimeResultShape(hlo, ops, &attrs, &trim));
  const Dims* trimmed_sizes = shape.IsArray() ? &shape.dimensions() : nullptr;
  op->trimmed.reserve(ops.size());
  std::vector<HloInstruction*> operands;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Literal* value = ops[i];
    if (trim[i] && trimmed_sizes != nullptr) {
      op->trimmed.push_back(LeadingBox(*value, *trimmed_sizes));
      value = &op->trimmed.back();
    }
    op->operands.push_back(value);
    Shape placeholder_shape = value->shape();
    if (hlo.operand(i)->shape().has_layout() && !placeholder_shape.has_layout()) {
      placeholder_shape.set_layout(hlo.operand(i)->shape().layout());
    }
    op->placeholders.push_back(HloInstruction::CreateParameter(
        static_cast<int64_t>(i), std::move(placeholder_shape), hlo.operand(i)->name()));
    operands.push_back(op->placeholders.back().get());
  }
  op->instruction = hlo.CloneWithNewOperands(shape, operands);
  *op->instruction->mutable_attrs() = std::move(attrs);
  if (hlo.opcode() == HloOpcode::kGather) {
    // Batch sizes follow the indices' runtime sizes; slice sizes are static.
    absl::StatusOr<Shape> inferred = InferShape(*op->instruction);
    if (!inferred.ok()) return InstructionError(hlo, inferred.status().message());
    op->instruction->set_shape(RuntimeArrayShape(*inferred, inferred->dimensions()));
  }
  return op;
}

absl::StatusOr<Literal> EvalSetDimensionSize(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  const int64_t d = hlo.dimensions().empty() ? 0 : hlo.dimensions(0);
  if (!in.shape().IsArray() || d < 0 || d >= in.shape().rank() || ops[1]->element_count() != 1) {
    return InstructionError(hlo, "needs an array operand, a dimension of it and a scalar size");
  }
  // A static result dimension: the shape says the size is the bound.
  if (!hlo.shape().is_dynamic_dimension(d)) return in;
  const int64_t size = ops[1]->GetAsInt64(0);
  const int64_t bound = hlo.shape().dimensions(d);
  if (size < 0 || size > bound) {
    return InstructionError(hlo, "size ", size, " is outside the bound [0, ", bound,
                            "] of dimension ", d);
  }
  if (size > in.shape().dimensions(d)) {
    return InstructionError(hlo, "size ", size, " is past the operand's runtime size ",
                            in.shape().dimensions(d), " in dimension ", d,
                            " (the elements there are padding, not values)");
  }
  Dims sizes = in.shape().dimensions();
  sizes[d] = size;
  return LeadingBox(in, sizes);
}

absl::StatusOr<Literal> EvalPadToStatic(const HloInstruction& hlo, Operands ops) {
  if (ops.size() != 1 || !hlo.shape().IsTuple() || hlo.shape().tuple_shapes_size() < 1) {
    return InstructionError(hlo, "PadToStatic takes one array and returns a tuple");
  }
  const Literal& in = *ops[0];
  const Shape& bound = hlo.shape().tuple_shapes(0);
  if (!in.shape().IsArray() || in.shape().rank() != bound.rank() ||
      hlo.shape().tuple_shapes_size() != 1 + bound.rank()) {
    return InstructionError(hlo, "PadToStatic's operand ", in.shape().ToString(false),
                            " does not fit its result ", hlo.shape().ToString(false));
  }
  for (int64_t d = 0; d < bound.rank(); ++d) {
    if (in.shape().dimensions(d) > bound.dimensions(d)) {
      return InstructionError(hlo, "dimension ", d, " has runtime size ",
                              in.shape().dimensions(d), ", above its bound ", bound.dimensions(d));
    }
  }
  // The padding is zero (a new literal's bytes are).
  Literal padded(RuntimeArrayShape(bound, bound.dimensions()));
  StridedCopy(ByteWidth(in.shape().element_type()), in.raw(), 0,
              RowMajorStrides(in.shape().dimensions()), padded.mutable_raw(), 0,
              RowMajorStrides(bound.dimensions()), in.shape().dimensions());
  std::vector<Literal> elements;
  elements.push_back(std::move(padded));
  for (int64_t d = 0; d < bound.rank(); ++d) {
    Literal size(Shape::Scalar(xla::S32));
    size.SetFromInt64(0, in.shape().dimensions(d));
    elements.push_back(std::move(size));
  }
  return Literal::Tuple(std::move(elements));
}

absl::StatusOr<Literal> EvalSliceToDynamic(const HloInstruction& hlo, Operands ops) {
  const Shape& declared = hlo.shape();
  if (ops.empty() || !declared.IsArray() ||
      static_cast<int64_t>(ops.size()) != 1 + declared.rank() ||
      ops[0]->shape().dimensions() != declared.dimensions()) {
    return InstructionError(hlo, "SliceToDynamic takes an array of its result's bounds and one "
                                 "size per dimension");
  }
  Dims sizes = declared.dimensions();
  for (int64_t d = 0; d < declared.rank(); ++d) {
    if (!declared.is_dynamic_dimension(d)) continue;
    const int64_t size = ops[1 + d]->GetAsInt64(0);
    if (size < 0 || size > declared.dimensions(d)) {
      return InstructionError(hlo, "SliceToDynamic: the size of dimension ", d, ", ", size,
                              ", is outside [0, ", declared.dimensions(d), "]");
    }
    sizes[d] = size;
  }
  return LeadingBox(*ops[0], sizes);
}

absl::StatusOr<Literal> EvalGetDimensionSize(const HloInstruction& hlo, Operands ops) {
  const int64_t d = hlo.dimensions().empty() ? 0 : hlo.dimensions(0);
  if (!ops[0]->shape().IsArray() || d < 0 || d >= ops[0]->shape().rank()) {
    return InstructionError(hlo, "dimension out of range");
  }
  HLOC_ASSIGN_OR_RETURN(Literal size, NewLiteral(hlo, hlo.shape()));
  size.SetFromInt64(0, ops[0]->shape().dimensions(d));
  return size;
}

std::string DeclaredShapeMismatch(const Shape& value, const Shape& declared) {
  if (value.Compatible(declared)) return "";
  if (declared.IsTuple()) {
    if (!value.IsTuple() || value.tuple_shapes_size() != declared.tuple_shapes_size()) {
      return "not a tuple of as many elements";
    }
    for (int64_t i = 0; i < declared.tuple_shapes_size(); ++i) {
      std::string why = DeclaredShapeMismatch(value.tuple_shapes(i), declared.tuple_shapes(i));
      if (!why.empty()) return absl::StrCat("tuple element ", i, " ", why);
    }
    return "";
  }
  if (!declared.IsArray() || !value.IsArray() || value.element_type() != declared.element_type() ||
      value.rank() != declared.rank()) {
    return "of another element type or rank";
  }
  for (int64_t d = 0; d < declared.rank(); ++d) {
    const int64_t n = value.dimensions(d), bound = declared.dimensions(d);
    if (n < 0) return absl::StrCat("dimension ", d, " has negative size ", n);
    if (!declared.is_dynamic_dimension(d)) {
      if (n != bound) return absl::StrCat("dimension ", d, " has size ", n, ", not ", bound);
    } else if (bound != Shape::kUnboundedSize && n > bound) {
      return absl::StrCat("dimension ", d, " has size ", n, ", above its bound ", bound);
    }
  }
  return "";
}

bool FitsDeclaredShape(const Shape& value, const Shape& declared) {
  return DeclaredShapeMismatch(value, declared).empty();
}

}  // namespace eval
}  // namespace hloc
