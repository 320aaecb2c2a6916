// Shape rules of the ops that apply a called computation or compute over
// windows and whole arrays: reduce, reduce-window, select-and-scatter, sort,
// topk, map, scan, while, conditional, call/fusion; plus the small numeric ops
// (cholesky, triangular-solve, fft, rng, batch norm). See shape_inference.h.
#include <algorithm>

#include "hlo/shape_inference.h"
#include "hlo/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hloc {

using namespace shape_inference_internal;  // NOLINT: helpers of this library.

namespace {

bool IsFloatOrComplex(PrimitiveType t) {
  return IsFloatingPoint(t) || IsComplex(t) || t == xla::F6E3M2FN || t == xla::F6E2M3FN;
}

absl::Status ExpectScalarOf(const Shape& shape, PrimitiveType type, absl::string_view what) {
  if (!shape.IsScalar() || shape.element_type() != type) {
    return Invalid(what, " must be ", TypeName(type), "[], got ", Str(shape));
  }
  return absl::OkStatus();
}

// Result of a reducer that returns N scalars: a tuple of N, or for N == 1 a
// bare scalar (XLA accepts both for one operand).
absl::Status CheckScalarResults(const Shape& result, absl::Span<const PrimitiveType> types,
                                absl::string_view what) {
  if (types.size() == 1 && !result.IsTuple()) {
    return ExpectScalarOf(result, types[0], absl::StrCat(what, " result"));
  }
  if (!result.IsTuple() || result.tuple_shapes_size() != static_cast<int64_t>(types.size())) {
    return Invalid(what, " must return a tuple of ", types.size(), " scalars, got ", Str(result));
  }
  for (size_t i = 0; i < types.size(); ++i) {
    HLOC_RETURN_IF_ERROR(ExpectScalarOf(result.tuple_shapes(i), types[i],
                                        absl::StrCat(what, " result element ", i)));
  }
  return absl::OkStatus();
}

std::vector<int64_t> RemoveDims(const Shape& shape, absl::Span<const int64_t> removed) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (!Contains(removed, d)) dims.push_back(shape.dimensions(d));
  }
  return dims;
}

// Checks a rank-1 per-feature operand of batch norm.
absl::Status CheckFeatureVector(const Shape& vector, const Shape& operand, int64_t feature_index,
                                absl::string_view what) {
  HLOC_RETURN_IF_ERROR(ExpectArray(vector, what));
  if (vector.element_type() != operand.element_type()) {
    return Invalid(what, " ", Str(vector), " must have the element type of operand ", Str(operand));
  }
  if (vector.rank() != 1 || !SizesMatch(vector.dimensions(0), operand.dimensions(feature_index))) {
    return Invalid(what, " ", Str(vector), " must be a vector of the ",
                   operand.dimensions(feature_index), " features of operand dimension ",
                   feature_index);
  }
  return absl::OkStatus();
}

absl::Status CheckBatchNormOperand(const Shape& operand, int64_t feature_index) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  if (!IsFloatingPoint(operand.element_type())) {
    return Invalid("batch norm needs a floating-point operand, got ", Str(operand));
  }
  return CheckDimensionIndex(feature_index, operand.rank(), "feature_index");
}

}  // namespace

absl::Status CheckReducerSignature(const ProgramShape& computation,
                                   absl::Span<const PrimitiveType> accumulator_types,
                                   absl::Span<const PrimitiveType> input_types) {
  const size_t n = accumulator_types.size();
  if (computation.parameters.size() != 2 * n) {
    return Invalid("reducer takes ", computation.parameters.size(), " parameters, expected ", 2 * n,
                   " (an accumulator and an element per operand)");
  }
  for (size_t i = 0; i < n; ++i) {
    HLOC_RETURN_IF_ERROR(ExpectScalarOf(computation.parameters[i], accumulator_types[i],
                                        absl::StrCat("reducer parameter ", i)));
    HLOC_RETURN_IF_ERROR(ExpectScalarOf(computation.parameters[n + i], input_types[i],
                                        absl::StrCat("reducer parameter ", n + i)));
    // Elements are combined with accumulators, so they have one type.
    if (input_types[i] != accumulator_types[i]) {
      return Invalid("operand ", i, " has element type ", TypeName(input_types[i]),
                     " but its init value and accumulator are ", TypeName(accumulator_types[i]));
    }
  }
  return CheckScalarResults(computation.result, accumulator_types, "reducer");
}

absl::StatusOr<Shape> InferReduceShape(absl::Span<const Shape* const> operands,
                                       absl::Span<const int64_t> dimensions,
                                       const ProgramShape& to_apply) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return Invalid("reduce needs N inputs and N init values, got ", operands.size(), " operands");
  }
  const size_t n = operands.size() / 2;
  const Shape& input = *operands[0];
  std::vector<PrimitiveType> input_types, init_types;
  for (size_t i = 0; i < n; ++i) {
    HLOC_RETURN_IF_ERROR(ExpectArray(*operands[i], absl::StrCat("input ", i)));
    if (!SameDimensions(*operands[i], input)) {
      return Invalid("input ", i, " ", Str(*operands[i]), " must have the dimensions of input 0 ",
                     Str(input));
    }
    HLOC_RETURN_IF_ERROR(ExpectScalar(*operands[n + i], absl::StrCat("init value ", i)));
    input_types.push_back(operands[i]->element_type());
    init_types.push_back(operands[n + i]->element_type());
  }
  HLOC_RETURN_IF_ERROR(CheckDimensionList(dimensions, input.rank(), "dimensions"));
  HLOC_RETURN_IF_ERROR(CheckReducerSignature(to_apply, init_types, input_types));
  const std::vector<int64_t> dims = RemoveDims(input, dimensions);
  if (n == 1) return MakeArray(init_types[0], dims);
  std::vector<Shape> results;
  for (PrimitiveType t : init_types) results.push_back(MakeArray(t, dims));
  return Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base, const xla::Window& window,
                                             PrimitiveType element_type) {
  HLOC_RETURN_IF_ERROR(ExpectArray(base, "windowed operand"));
  if (window.dimensions_size() != base.rank()) {
    return Invalid("window has ", window.dimensions_size(), " dimensions but operand ", Str(base),
                   " has rank ", base.rank());
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < base.rank(); ++i) {
    const xla::WindowDimension& w = window.dimensions(i);
    if (w.size() <= 0) return Invalid("window dimension ", i, " has size ", w.size());
    if (w.stride() <= 0) return Invalid("window dimension ", i, " has stride ", w.stride());
    if (w.base_dilation() <= 0 || w.window_dilation() <= 0) {
      return Invalid("window dimension ", i, " has non-positive dilation (lhs ", w.base_dilation(),
                     ", rhs ", w.window_dilation(), ")");
    }
    const int64_t size = base.dimensions(i);
    if (IsUnbounded(size)) {
      dims.push_back(size);
      continue;
    }
    int64_t dilated_base = 0, padded = 0, dilated_window = 0;
    bool overflow = false;
    if (size > 0) {
      overflow |= __builtin_mul_overflow(size - 1, w.base_dilation(), &dilated_base);
      overflow |= __builtin_add_overflow(dilated_base, 1, &dilated_base);
    }
    overflow |= __builtin_add_overflow(dilated_base, w.padding_low(), &padded);
    overflow |= __builtin_add_overflow(padded, w.padding_high(), &padded);
    overflow |= __builtin_mul_overflow(w.size() - 1, w.window_dilation(), &dilated_window);
    overflow |= __builtin_add_overflow(dilated_window, 1, &dilated_window);
    if (overflow) return Invalid("window dimension ", i, " overflows");
    dims.push_back(padded < dilated_window ? 0 : (padded - dilated_window) / w.stride() + 1);
  }
  return MakeArray(element_type, dims);
}

absl::StatusOr<Shape> InferReduceWindowShape(absl::Span<const Shape* const> operands,
                                             const xla::Window& window,
                                             const ProgramShape& to_apply) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return Invalid("reduce-window needs N inputs and N init values, got ", operands.size(),
                   " operands");
  }
  const size_t n = operands.size() / 2;
  std::vector<PrimitiveType> input_types, init_types;
  for (size_t i = 0; i < n; ++i) {
    HLOC_RETURN_IF_ERROR(ExpectArray(*operands[i], absl::StrCat("input ", i)));
    if (!SameDimensions(*operands[i], *operands[0])) {
      return Invalid("input ", i, " ", Str(*operands[i]), " must have the dimensions of input 0 ",
                     Str(*operands[0]));
    }
    HLOC_RETURN_IF_ERROR(ExpectScalar(*operands[n + i], absl::StrCat("init value ", i)));
    input_types.push_back(operands[i]->element_type());
    init_types.push_back(operands[n + i]->element_type());
  }
  HLOC_RETURN_IF_ERROR(CheckReducerSignature(to_apply, init_types, input_types));
  std::vector<Shape> results;
  for (size_t i = 0; i < n; ++i) {
    HLOC_ASSIGN_OR_RETURN(Shape result,
                          InferWindowOutputShape(*operands[i], window, init_types[i]));
    if (n == 1) return result;
    results.push_back(std::move(result));
  }
  return Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferSelectAndScatterShape(const Shape& operand, const ProgramShape& select,
                                                 const xla::Window& window, const Shape& source,
                                                 const Shape& init_value,
                                                 const ProgramShape& scatter) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  HLOC_RETURN_IF_ERROR(ExpectArray(source, "source"));
  HLOC_RETURN_IF_ERROR(ExpectScalar(init_value, "init value"));
  const PrimitiveType t = operand.element_type();
  if (source.element_type() != t || init_value.element_type() != t) {
    return Invalid("source ", Str(source), " and init value ", Str(init_value),
                   " must have the element type of operand ", Str(operand));
  }
  if (select.parameters.size() != 2) {
    return Invalid("select computation takes ", select.parameters.size(),
                   " parameters, expected 2");
  }
  for (int i = 0; i < 2; ++i) {
    HLOC_RETURN_IF_ERROR(
        ExpectScalarOf(select.parameters[i], t, absl::StrCat("select parameter ", i)));
  }
  HLOC_RETURN_IF_ERROR(ExpectScalarOf(select.result, xla::PRED, "select result"));
  const PrimitiveType types[] = {t};
  HLOC_RETURN_IF_ERROR(CheckReducerSignature(scatter, types, types));
  HLOC_ASSIGN_OR_RETURN(Shape windowed, InferWindowOutputShape(operand, window, t));
  if (!SameDimensions(windowed, source)) {
    return Invalid("source ", Str(source), " must have the shape of the windowed operand ",
                   Str(windowed));
  }
  return WithoutLayout(operand);
}

absl::StatusOr<Shape> InferSortShape(absl::Span<const Shape* const> operands, int64_t dimension,
                                     const ProgramShape& comparator) {
  if (operands.empty()) return Invalid("sort needs at least one operand");
  const Shape& first = *operands[0];
  for (size_t i = 0; i < operands.size(); ++i) {
    HLOC_RETURN_IF_ERROR(ExpectArray(*operands[i], absl::StrCat("operand ", i)));
    if (!SameDimensions(*operands[i], first)) {
      return Invalid("operand ", i, " ", Str(*operands[i]),
                     " must have the dimensions of operand 0 ", Str(first));
    }
  }
  HLOC_RETURN_IF_ERROR(CheckDimensionIndex(dimension, first.rank(), "sort dimension"));
  if (comparator.parameters.size() != 2 * operands.size()) {
    return Invalid("comparator takes ", comparator.parameters.size(), " parameters, expected ",
                   2 * operands.size(), " (two per operand)");
  }
  for (size_t i = 0; i < comparator.parameters.size(); ++i) {
    HLOC_RETURN_IF_ERROR(ExpectScalarOf(comparator.parameters[i], operands[i / 2]->element_type(),
                                        absl::StrCat("comparator parameter ", i)));
  }
  HLOC_RETURN_IF_ERROR(ExpectScalarOf(comparator.result, xla::PRED, "comparator result"));
  if (operands.size() == 1) return WithoutLayout(first);
  std::vector<Shape> results;
  for (const Shape* s : operands) results.push_back(WithoutLayout(*s));
  return Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferTopKShape(const Shape& operand, int64_t k) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  if (operand.rank() < 1) return Invalid("topk needs an operand of rank >= 1");
  const int64_t last = operand.dimensions(operand.rank() - 1);
  if (k < 0 || (!IsUnbounded(last) && k > last)) {
    return Invalid("k=", k, " is outside [0, ", last, "], the size of the last dimension");
  }
  std::vector<int64_t> dims = operand.dimensions();
  dims.back() = k;
  return Shape::Tuple({MakeArray(operand.element_type(), dims), MakeArray(xla::S32, dims)});
}

absl::StatusOr<Shape> InferMapShape(absl::Span<const Shape* const> operands,
                                    const ProgramShape& to_apply,
                                    absl::Span<const int64_t> dimensions) {
  if (operands.empty()) return Invalid("map needs at least one operand");
  const Shape& first = *operands[0];
  for (size_t i = 0; i < operands.size(); ++i) {
    HLOC_RETURN_IF_ERROR(ExpectArray(*operands[i], absl::StrCat("operand ", i)));
    if (!SameDimensions(*operands[i], first)) {
      return Invalid("operand ", i, " ", Str(*operands[i]),
                     " must have the dimensions of operand 0 ", Str(first));
    }
  }
  if (!dimensions.empty()) {
    bool identity = static_cast<int64_t>(dimensions.size()) == first.rank();
    for (size_t i = 0; identity && i < dimensions.size(); ++i) {
      identity = dimensions[i] == static_cast<int64_t>(i);
    }
    if (!identity) {
      return Invalid("dimensions=", Str(dimensions), " must list all ", first.rank(),
                     " operand dimensions in order");
    }
  }
  if (to_apply.parameters.size() != operands.size()) {
    return Invalid("to_apply takes ", to_apply.parameters.size(), " parameters, map has ",
                   operands.size(), " operands");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    HLOC_RETURN_IF_ERROR(ExpectScalarOf(to_apply.parameters[i], operands[i]->element_type(),
                                        absl::StrCat("to_apply parameter ", i)));
  }
  if (!to_apply.result.IsScalar()) {
    return Invalid("to_apply must return a scalar, got ", Str(to_apply.result));
  }
  return WithElementType(first, to_apply.result.element_type());
}

Shape ScanStepShape(const Shape& input, int64_t dimension) {
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (d == dimension) continue;
    dims.push_back(input.dimensions(d));
    dynamic.push_back(input.is_dynamic_dimension(d));
  }
  return MakeArray(input.element_type(), dims, dynamic);
}

absl::StatusOr<Shape> InferScanShape(absl::Span<const Shape* const> operands, int64_t dimension,
                                     int64_t num_carries, const ProgramShape& to_apply) {
  const int64_t count = static_cast<int64_t>(operands.size());
  if (num_carries < 0 || num_carries >= count) {
    return Invalid("num_carries=", num_carries, " must leave at least one of the ", count,
                   " operands as an input");
  }
  const int64_t inputs = count - num_carries;
  const Shape& first = *operands[0];
  HLOC_RETURN_IF_ERROR(ExpectArray(first, "input 0"));
  HLOC_RETURN_IF_ERROR(CheckDimensionIndex(dimension, first.rank(), "scan dimension"));
  const int64_t length = first.dimensions(dimension);
  for (int64_t i = 0; i < count; ++i) {
    const Shape& operand = *operands[i];
    const std::string what =
        i < inputs ? absl::StrCat("input ", i) : absl::StrCat("init ", i - inputs);
    HLOC_RETURN_IF_ERROR(ExpectArray(operand, what));
    if (i >= inputs) continue;
    if (dimension >= operand.rank()) {
      return Invalid(what, " ", Str(operand), " has no scan dimension ", dimension);
    }
    if (!SizesMatch(operand.dimensions(dimension), length)) {
      return Invalid(what, " ", Str(operand), " has size ", operand.dimensions(dimension),
                     " in scan dimension ", dimension, ", input 0 has ", length);
    }
  }
  if (static_cast<int64_t>(to_apply.parameters.size()) != count) {
    return Invalid("to_apply takes ", to_apply.parameters.size(), " parameters, scan has ", count,
                   " operands (", inputs, " inputs, ", num_carries, " carries)");
  }
  auto same = [](const Shape& a, const Shape& b) {
    return a.IsArray() && b.IsArray() && a.element_type() == b.element_type() &&
           SameDimensions(a, b);
  };
  for (int64_t i = 0; i < count; ++i) {
    const Shape expected = i < inputs ? ScanStepShape(*operands[i], dimension)
                                      : WithoutLayout(*operands[i]);
    if (!same(to_apply.parameters[i], expected)) {
      return Invalid("to_apply parameter ", i, " is ", Str(to_apply.parameters[i]), ", expected ",
                     Str(expected),
                     i < inputs ? absl::StrCat(" (input ", i, " without dimension ", dimension, ")")
                                : absl::StrCat(" (init ", i - inputs, ")"));
    }
  }
  // to_apply returns (outputs..., new carries...), or one bare value.
  std::vector<Shape> returned;
  if (to_apply.result.IsTuple()) {
    returned = to_apply.result.tuple_shapes();
  } else {
    returned.push_back(to_apply.result);
  }
  const int64_t outputs = static_cast<int64_t>(returned.size()) - num_carries;
  if (outputs < 0) {
    return Invalid("to_apply returns ", returned.size(), " values, fewer than the ", num_carries,
                   " carries");
  }
  std::vector<Shape> results;
  for (int64_t j = 0; j < outputs; ++j) {
    const Shape& step = returned[j];
    HLOC_RETURN_IF_ERROR(ExpectArray(step, absl::StrCat("to_apply output ", j)));
    if (dimension > step.rank()) {
      return Invalid("to_apply output ", j, " ", Str(step), " has no room for scan dimension ",
                     dimension);
    }
    std::vector<int64_t> dims = step.dimensions();
    std::vector<bool> dynamic = step.dynamic_dimensions();
    dims.insert(dims.begin() + dimension, length);
    if (!dynamic.empty()) dynamic.insert(dynamic.begin() + dimension, false);
    results.push_back(MakeArray(step.element_type(), dims, dynamic));
  }
  for (int64_t j = 0; j < num_carries; ++j) {
    const Shape& carry = returned[outputs + j];
    const Shape& init = *operands[inputs + j];
    if (!same(carry, init)) {
      return Invalid("to_apply's new carry ", j, " is ", Str(carry), ", init ", j, " is ",
                     Str(init));
    }
    results.push_back(WithoutLayout(init));
  }
  if (!to_apply.result.IsTuple()) return std::move(results[0]);
  return Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferWhileShape(const ProgramShape& condition, const ProgramShape& body,
                                      const Shape& init) {
  if (condition.parameters.size() != 1) {
    return Invalid("condition takes ", condition.parameters.size(), " parameters, expected 1");
  }
  if (body.parameters.size() != 1) {
    return Invalid("body takes ", body.parameters.size(), " parameters, expected 1");
  }
  if (!ShapesCompatible(condition.parameters[0], init)) {
    return Invalid("condition parameter ", Str(condition.parameters[0]),
                   " differs from the while operand ", Str(init));
  }
  if (!ShapesCompatible(body.parameters[0], init)) {
    return Invalid("body parameter ", Str(body.parameters[0]), " differs from the while operand ",
                   Str(init));
  }
  if (!ShapesCompatible(body.result, init)) {
    return Invalid("body result ", Str(body.result), " differs from its parameter ", Str(init));
  }
  HLOC_RETURN_IF_ERROR(ExpectScalarOf(condition.result, xla::PRED, "condition result"));
  return WithoutLayout(init);
}

absl::StatusOr<Shape> InferConditionalShape(const Shape& branch_index,
                                            absl::Span<const ProgramShape> branches,
                                            absl::Span<const Shape* const> branch_operands) {
  if (!branch_index.IsScalar() ||
      (branch_index.element_type() != xla::PRED && branch_index.element_type() != xla::S32)) {
    return Invalid("branch index must be pred[] or s32[], got ", Str(branch_index));
  }
  if (branches.empty()) return Invalid("conditional needs at least one branch");
  if (branch_index.element_type() == xla::PRED && branches.size() != 2) {
    return Invalid("a pred branch index selects between 2 branches, got ", branches.size());
  }
  if (branch_operands.size() != branches.size()) {
    return Invalid("conditional has ", branches.size(), " branches but ", branch_operands.size(),
                   " branch operands");
  }
  for (size_t i = 0; i < branches.size(); ++i) {
    if (branches[i].parameters.size() != 1) {
      return Invalid("branch ", i, " takes ", branches[i].parameters.size(),
                     " parameters, expected 1");
    }
    if (!ShapesCompatible(branches[i].parameters[0], *branch_operands[i])) {
      return Invalid("branch ", i, " parameter ", Str(branches[i].parameters[0]),
                     " differs from its operand ", Str(*branch_operands[i]));
    }
    if (!ShapesCompatible(branches[i].result, branches[0].result)) {
      return Invalid("branch ", i, " returns ", Str(branches[i].result), " but branch 0 returns ",
                     Str(branches[0].result));
    }
  }
  return WithoutLayout(branches[0].result);
}

absl::StatusOr<Shape> InferCallShape(absl::Span<const Shape* const> operands,
                                     const ProgramShape& callee) {
  if (callee.parameters.size() != operands.size()) {
    return Invalid("called computation takes ", callee.parameters.size(), " parameters but ",
                   operands.size(), " operands are passed");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!ShapesCompatible(callee.parameters[i], *operands[i])) {
      return Invalid("parameter ", i, " of the called computation is ", Str(callee.parameters[i]),
                     " but operand ", i, " is ", Str(*operands[i]));
    }
  }
  return WithoutLayout(callee.result);
}

absl::StatusOr<Shape> InferCholeskyShape(const Shape& a) {
  HLOC_RETURN_IF_ERROR(ExpectArray(a, "operand"));
  if (!IsFloatOrComplex(a.element_type())) {
    return Invalid("cholesky needs a floating-point or complex operand, got ", Str(a));
  }
  if (a.rank() < 2 || !SizesMatch(a.dimensions(a.rank() - 1), a.dimensions(a.rank() - 2))) {
    return Invalid("cholesky needs square matrices in the two minor dimensions, got ", Str(a));
  }
  return WithoutLayout(a);
}

absl::StatusOr<Shape> InferTriangularSolveShape(const Shape& a, const Shape& b,
                                                const xla::TriangularSolveOptions& options) {
  HLOC_RETURN_IF_ERROR(ExpectArray(a, "a"));
  HLOC_RETURN_IF_ERROR(ExpectArray(b, "b"));
  if (!IsFloatOrComplex(a.element_type()) || a.element_type() != b.element_type()) {
    return Invalid("a ", Str(a), " and b ", Str(b),
                   " must have one floating-point or complex element type");
  }
  if (a.rank() < 2 || a.rank() != b.rank()) {
    return Invalid("a ", Str(a), " and b ", Str(b), " must have one rank, at least 2");
  }
  const int64_t r = a.rank();
  if (!SizesMatch(a.dimensions(r - 1), a.dimensions(r - 2))) {
    return Invalid("a ", Str(a), " must be square in its two minor dimensions");
  }
  for (int64_t d = 0; d < r - 2; ++d) {
    if (!SizesMatch(a.dimensions(d), b.dimensions(d))) {
      return Invalid("batch dimension ", d, " differs: a ", Str(a), ", b ", Str(b));
    }
  }
  const int64_t b_dim = options.left_side() ? r - 2 : r - 1;
  if (!SizesMatch(a.dimensions(r - 1), b.dimensions(b_dim))) {
    return Invalid("a ", Str(a), " has size ", a.dimensions(r - 1), " but b ", Str(b),
                   " dimension ", b_dim, " has size ", b.dimensions(b_dim),
                   " (left_side=", options.left_side() ? "true" : "false", ")");
  }
  return WithoutLayout(b);
}

absl::StatusOr<Shape> InferFftShape(const Shape& operand, xla::FftType fft_type,
                                    absl::Span<const int64_t> fft_length) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  const int64_t fft_rank = static_cast<int64_t>(fft_length.size());
  if (fft_rank < 1 || fft_rank > 3) {
    return Invalid("fft_length=", Str(fft_length), " must have 1 to 3 entries");
  }
  if (operand.rank() < fft_rank) {
    return Invalid("operand ", Str(operand),
                   " has fewer dimensions than fft_length=", Str(fft_length));
  }
  for (int64_t l : fft_length) {
    if (l < 0) return Invalid("fft_length=", Str(fft_length), " has a negative entry");
  }
  const int64_t first = operand.rank() - fft_rank;
  const PrimitiveType t = operand.element_type();
  switch (fft_type) {
    case xla::FFT:
    case xla::IFFT:
      if (!IsComplex(t)) return Invalid("FFT/IFFT need a complex operand, got ", Str(operand));
      return WithoutLayout(operand);
    case xla::RFFT: {
      if (t != xla::F32 && t != xla::F64) {
        return Invalid("RFFT needs an f32 or f64 operand, got ", Str(operand));
      }
      for (int64_t i = 0; i < fft_rank; ++i) {
        if (!SizesMatch(operand.dimensions(first + i), fft_length[i])) {
          return Invalid("RFFT operand dimension ", first + i, " has size ",
                         operand.dimensions(first + i), " but fft_length is ", fft_length[i]);
        }
      }
      std::vector<int64_t> dims = operand.dimensions();
      dims.back() = fft_length.back() == 0 ? 0 : fft_length.back() / 2 + 1;
      return MakeArray(t == xla::F64 ? xla::C128 : xla::C64, dims);
    }
    case xla::IRFFT: {
      if (!IsComplex(t)) return Invalid("IRFFT needs a complex operand, got ", Str(operand));
      for (int64_t i = 0; i < fft_rank; ++i) {
        int64_t expected = fft_length[i];
        if (i == fft_rank - 1) expected = expected == 0 ? 0 : expected / 2 + 1;
        if (!SizesMatch(operand.dimensions(first + i), expected)) {
          return Invalid("IRFFT operand dimension ", first + i, " has size ",
                         operand.dimensions(first + i), ", expected ", expected);
        }
      }
      std::vector<int64_t> dims = operand.dimensions();
      dims.back() = fft_length.back();
      return MakeArray(ComplexComponentType(t), dims);
    }
    default:
      return Invalid("unknown fft_type ", static_cast<int>(fft_type));
  }
}

absl::StatusOr<Shape> InferRngShape(const Shape& a, const Shape& b,
                                    xla::RandomDistribution distribution, const Shape& shape) {
  HLOC_RETURN_IF_ERROR(ExpectScalar(a, "rng parameter 0"));
  HLOC_RETURN_IF_ERROR(ExpectScalar(b, "rng parameter 1"));
  HLOC_RETURN_IF_ERROR(ExpectArray(shape, "rng result"));
  const PrimitiveType t = a.element_type();
  if (b.element_type() != t) {
    return Invalid("rng parameters ", Str(a), " and ", Str(b), " must have one type");
  }
  if (distribution == xla::RNG_UNIFORM) {
    if (!IsFloatingPoint(t) && !IsInteger(t)) {
      return Invalid("uniform rng needs integer or floating-point parameters, got ", Str(a));
    }
  } else if (distribution == xla::RNG_NORMAL) {
    if (!IsFloatingPoint(t)) {
      return Invalid("normal rng needs floating-point parameters, got ", Str(a));
    }
  } else {
    return Invalid("rng distribution must be uniform or normal");
  }
  return WithElementType(shape, t);
}

absl::StatusOr<Shape> InferRngBitGeneratorShape(const Shape& state, const Shape& output) {
  HLOC_RETURN_IF_ERROR(ExpectArray(state, "state"));
  HLOC_RETURN_IF_ERROR(ExpectArray(output, "output"));
  if (state.rank() != 1) return Invalid("rng state ", Str(state), " must be a vector");
  if (!IsInteger(output.element_type())) {
    return Invalid("rng-bit-generator output ", Str(output), " must be integers");
  }
  return Shape::Tuple({WithoutLayout(state), WithoutLayout(output)});
}

absl::StatusOr<Shape> InferBatchNormTrainingShape(const Shape& operand, const Shape& scale,
                                                  const Shape& offset, int64_t feature_index) {
  HLOC_RETURN_IF_ERROR(CheckBatchNormOperand(operand, feature_index));
  HLOC_RETURN_IF_ERROR(CheckFeatureVector(scale, operand, feature_index, "scale"));
  HLOC_RETURN_IF_ERROR(CheckFeatureVector(offset, operand, feature_index, "offset"));
  Shape features = MakeArray(operand.element_type(), {operand.dimensions(feature_index)});
  return Shape::Tuple({WithoutLayout(operand), features, features});
}

absl::StatusOr<Shape> InferBatchNormInferenceShape(const Shape& operand, const Shape& scale,
                                                   const Shape& offset, const Shape& mean,
                                                   const Shape& variance, int64_t feature_index) {
  HLOC_RETURN_IF_ERROR(CheckBatchNormOperand(operand, feature_index));
  HLOC_RETURN_IF_ERROR(CheckFeatureVector(scale, operand, feature_index, "scale"));
  HLOC_RETURN_IF_ERROR(CheckFeatureVector(offset, operand, feature_index, "offset"));
  HLOC_RETURN_IF_ERROR(CheckFeatureVector(mean, operand, feature_index, "mean"));
  HLOC_RETURN_IF_ERROR(CheckFeatureVector(variance, operand, feature_index, "variance"));
  return WithoutLayout(operand);
}

absl::StatusOr<Shape> InferBatchNormGradShape(const Shape& operand, const Shape& scale,
                                              const Shape& mean, const Shape& variance,
                                              const Shape& output_grad, int64_t feature_index) {
  HLOC_RETURN_IF_ERROR(CheckBatchNormOperand(operand, feature_index));
  HLOC_RETURN_IF_ERROR(CheckFeatureVector(scale, operand, feature_index, "scale"));
  HLOC_RETURN_IF_ERROR(CheckFeatureVector(mean, operand, feature_index, "mean"));
  HLOC_RETURN_IF_ERROR(CheckFeatureVector(variance, operand, feature_index, "variance"));
  HLOC_RETURN_IF_ERROR(ExpectArray(output_grad, "output gradient"));
  if (output_grad.element_type() != operand.element_type() ||
      !SameDimensions(output_grad, operand)) {
    return Invalid("output gradient ", Str(output_grad), " must have the shape of operand ",
                   Str(operand));
  }
  Shape features = MakeArray(operand.element_type(), {operand.dimensions(feature_index)});
  return Shape::Tuple({WithoutLayout(operand), features, features});
}

}  // namespace hloc
