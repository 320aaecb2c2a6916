// Shape rules of the ops that index one operand by another or contract
// dimensions: dot, ragged-dot, convolution, gather and scatter. See
// shape_inference.h.
#include <algorithm>

#include "hlo/shape_inference.h"
#include "hlo/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hloc {

using namespace shape_inference_internal;  // NOLINT: helpers of this library.

namespace {

using Dims = absl::Span<const int64_t>;

Dims AsSpan(const google::protobuf::RepeatedField<int64_t>& field) {
  return Dims(field.data(), field.size());
}

absl::Status CheckDisjoint(Dims a, absl::string_view a_name, Dims b, absl::string_view b_name) {
  for (int64_t d : a) {
    if (Contains(b, d)) {
      return Invalid("dimension ", d, " is in both ", a_name, " and ", b_name);
    }
  }
  return absl::OkStatus();
}

// Indices of gather/scatter: the shape with the implicit trailing index
// vector dimension made explicit.
absl::StatusOr<std::vector<int64_t>> ExpandedIndexDims(const Shape& indices,
                                                       int64_t index_vector_dim) {
  HLOC_RETURN_IF_ERROR(ExpectArray(indices, "indices"));
  if (!IsInteger(indices.element_type())) {
    return Invalid("indices ", Str(indices), " must be integers");
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return Invalid("index_vector_dim=", index_vector_dim, " is out of range for indices ",
                   Str(indices));
  }
  std::vector<int64_t> dims = indices.dimensions();
  if (index_vector_dim == indices.rank()) dims.push_back(1);
  return dims;
}

}  // namespace

absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs,
                                    const xla::DotDimensionNumbers& dnums,
                                    std::optional<PrimitiveType> preferred_element_type) {
  HLOC_RETURN_IF_ERROR(ExpectArray(lhs, "lhs"));
  HLOC_RETURN_IF_ERROR(ExpectArray(rhs, "rhs"));
  Dims lb = AsSpan(dnums.lhs_batch_dimensions()), rb = AsSpan(dnums.rhs_batch_dimensions());
  Dims lc = AsSpan(dnums.lhs_contracting_dimensions());
  Dims rc = AsSpan(dnums.rhs_contracting_dimensions());
  if (lb.size() != rb.size()) {
    return Invalid("lhs has ", lb.size(), " batch dimensions, rhs has ", rb.size());
  }
  if (lc.size() != rc.size()) {
    return Invalid("lhs has ", lc.size(), " contracting dimensions, rhs has ", rc.size());
  }
  HLOC_RETURN_IF_ERROR(CheckDimensionList(lb, lhs.rank(), "lhs_batch_dims"));
  HLOC_RETURN_IF_ERROR(CheckDimensionList(rb, rhs.rank(), "rhs_batch_dims"));
  HLOC_RETURN_IF_ERROR(CheckDimensionList(lc, lhs.rank(), "lhs_contracting_dims"));
  HLOC_RETURN_IF_ERROR(CheckDimensionList(rc, rhs.rank(), "rhs_contracting_dims"));
  HLOC_RETURN_IF_ERROR(CheckDisjoint(lb, "lhs_batch_dims", lc, "lhs_contracting_dims"));
  HLOC_RETURN_IF_ERROR(CheckDisjoint(rb, "rhs_batch_dims", rc, "rhs_contracting_dims"));
  for (size_t i = 0; i < lb.size(); ++i) {
    if (!SizesMatch(lhs.dimensions(lb[i]), rhs.dimensions(rb[i]))) {
      return Invalid("lhs batch dimension ", lb[i], " has size ", lhs.dimensions(lb[i]),
                     ", rhs batch dimension ", rb[i], " has size ", rhs.dimensions(rb[i]));
    }
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    if (!SizesMatch(lhs.dimensions(lc[i]), rhs.dimensions(rc[i]))) {
      return Invalid("lhs contracting dimension ", lc[i], " has size ", lhs.dimensions(lc[i]),
                     ", rhs contracting dimension ", rc[i], " has size ", rhs.dimensions(rc[i]));
    }
  }
  HLOC_ASSIGN_OR_RETURN(
      PrimitiveType type,
      ContractionResultType(lhs.element_type(), rhs.element_type(), preferred_element_type));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  auto add = [&](const Shape& s, int64_t d) {
    dims.push_back(s.dimensions(d));
    dynamic.push_back(s.is_dynamic_dimension(d));
  };
  for (int64_t d : lb) add(lhs, d);
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (!Contains(lb, d) && !Contains(lc, d)) add(lhs, d);
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (!Contains(rb, d) && !Contains(rc, d)) add(rhs, d);
  }
  return MakeArray(type, dims, dynamic);
}

absl::StatusOr<Shape> InferRaggedDotShape(const Shape& lhs, const Shape& rhs,
                                          const Shape& group_sizes,
                                          const xla::RaggedDotDimensionNumbers& dnums,
                                          std::optional<PrimitiveType> preferred_element_type) {
  HLOC_RETURN_IF_ERROR(ExpectArray(lhs, "lhs"));
  HLOC_RETURN_IF_ERROR(ExpectArray(rhs, "rhs"));
  HLOC_RETURN_IF_ERROR(ExpectArray(group_sizes, "group_sizes"));
  if (!IsInteger(group_sizes.element_type()) || group_sizes.rank() < 1) {
    return Invalid("group_sizes ", Str(group_sizes), " must be an integer array of rank >= 1");
  }
  const int64_t num_groups = group_sizes.dimensions(group_sizes.rank() - 1);
  const xla::DotDimensionNumbers& dot = dnums.dot_dimension_numbers();
  if (dnums.lhs_ragged_dimensions_size() != 1) {
    return Invalid("lhs_ragged_dims must name exactly one dimension, got ",
                   Str(AsSpan(dnums.lhs_ragged_dimensions())));
  }
  const int64_t ragged = dnums.lhs_ragged_dimensions(0);
  HLOC_RETURN_IF_ERROR(CheckDimensionIndex(ragged, lhs.rank(), "lhs ragged dimension"));
  Dims groups = AsSpan(dnums.rhs_group_dimensions());
  const bool ragged_contracting = Contains(AsSpan(dot.lhs_contracting_dimensions()), ragged);
  const bool ragged_batch = Contains(AsSpan(dot.lhs_batch_dimensions()), ragged);
  if (ragged_contracting || ragged_batch) {
    // Groups partition a contracting or batch dimension; rhs has no group dimension.
    if (!groups.empty()) {
      return Invalid("rhs_group_dims must be empty when the lhs ragged dimension ", ragged,
                     " is a ", ragged_batch ? "batch" : "contracting", " dimension");
    }
    HLOC_ASSIGN_OR_RETURN(Shape result, InferDotShape(lhs, rhs, dot, preferred_element_type));
    if (ragged_batch) return result;
    std::vector<int64_t> dims = {num_groups};
    dims.insert(dims.end(), result.dimensions().begin(), result.dimensions().end());
    return MakeArray(result.element_type(), dims);
  }
  // Ragged non-contracting dimension: rhs holds one matrix per group along
  // its group dimension, which the result does not have.
  if (groups.size() != 1) {
    return Invalid("rhs_group_dims must name exactly one dimension when the lhs ragged dimension ",
                   ragged, " is not contracting or batch");
  }
  const int64_t group = groups[0];
  HLOC_RETURN_IF_ERROR(CheckDimensionIndex(group, rhs.rank(), "rhs group dimension"));
  if (Contains(AsSpan(dot.rhs_batch_dimensions()), group) ||
      Contains(AsSpan(dot.rhs_contracting_dimensions()), group)) {
    return Invalid("rhs group dimension ", group, " must not be a batch or contracting dimension");
  }
  if (!SizesMatch(rhs.dimensions(group), num_groups)) {
    return Invalid("rhs group dimension ", group, " has size ", rhs.dimensions(group),
                   " but group_sizes ", Str(group_sizes), " has ", num_groups, " groups");
  }
  std::vector<int64_t> rhs_dims = rhs.dimensions();
  rhs_dims.erase(rhs_dims.begin() + group);
  Shape rhs_without_group = MakeArray(rhs.element_type(), rhs_dims);
  xla::DotDimensionNumbers adjusted = dot;
  auto shift = [group](google::protobuf::RepeatedField<int64_t>* dims) {
    for (int64_t& d : *dims) {
      if (d > group) --d;
    }
  };
  shift(adjusted.mutable_rhs_batch_dimensions());
  shift(adjusted.mutable_rhs_contracting_dimensions());
  return InferDotShape(lhs, rhs_without_group, adjusted, preferred_element_type);
}

absl::StatusOr<Shape> InferConvolutionShape(const Shape& lhs, const Shape& rhs,
                                            int64_t feature_group_count, int64_t batch_group_count,
                                            const xla::Window& window,
                                            const xla::ConvolutionDimensionNumbers& dnums,
                                            std::optional<PrimitiveType> preferred_element_type) {
  HLOC_RETURN_IF_ERROR(ExpectArray(lhs, "lhs"));
  HLOC_RETURN_IF_ERROR(ExpectArray(rhs, "rhs"));
  const int64_t spatial = dnums.input_spatial_dimensions_size();
  if (dnums.kernel_spatial_dimensions_size() != spatial ||
      dnums.output_spatial_dimensions_size() != spatial) {
    return Invalid("dim_labels name ", spatial, " input, ", dnums.kernel_spatial_dimensions_size(),
                   " kernel and ", dnums.output_spatial_dimensions_size(),
                   " output spatial dimensions");
  }
  if (window.dimensions_size() != spatial) {
    return Invalid("window has ", window.dimensions_size(), " dimensions but the convolution has ",
                   spatial, " spatial dimensions");
  }
  if (lhs.rank() != spatial + 2) {
    return Invalid("lhs ", Str(lhs), " must have rank ", spatial + 2, " (batch, feature and ",
                   spatial, " spatial dimensions)");
  }
  if (rhs.rank() != spatial + 2) {
    return Invalid("rhs ", Str(rhs), " must have rank ", spatial + 2,
                   " (input feature, output feature and ", spatial, " spatial dimensions)");
  }
  std::vector<int64_t> input = {dnums.input_batch_dimension(), dnums.input_feature_dimension()};
  std::vector<int64_t> kernel = {dnums.kernel_input_feature_dimension(),
                                 dnums.kernel_output_feature_dimension()};
  std::vector<int64_t> output = {dnums.output_batch_dimension(), dnums.output_feature_dimension()};
  for (int64_t i = 0; i < spatial; ++i) {
    input.push_back(dnums.input_spatial_dimensions(i));
    kernel.push_back(dnums.kernel_spatial_dimensions(i));
    output.push_back(dnums.output_spatial_dimensions(i));
  }
  HLOC_RETURN_IF_ERROR(CheckDimensionList(input, spatial + 2, "input dim_labels"));
  HLOC_RETURN_IF_ERROR(CheckDimensionList(kernel, spatial + 2, "kernel dim_labels"));
  HLOC_RETURN_IF_ERROR(CheckDimensionList(output, spatial + 2, "output dim_labels"));
  if (feature_group_count < 1) {
    return Invalid("feature_group_count=", feature_group_count, " must be positive");
  }
  if (batch_group_count < 1) {
    return Invalid("batch_group_count=", batch_group_count, " must be positive");
  }
  if (feature_group_count > 1 && batch_group_count > 1) {
    return Invalid("feature_group_count=", feature_group_count,
                   " and batch_group_count=", batch_group_count, " cannot both exceed 1");
  }
  HLOC_ASSIGN_OR_RETURN(
      PrimitiveType type,
      ContractionResultType(lhs.element_type(), rhs.element_type(), preferred_element_type));
  if (HasUnboundedDimension(lhs) || HasUnboundedDimension(rhs)) {
    return Invalid("convolution over unbounded dynamic dimensions is not supported");
  }
  const int64_t input_batch = lhs.dimensions(dnums.input_batch_dimension());
  const int64_t input_features = lhs.dimensions(dnums.input_feature_dimension());
  const int64_t kernel_input_features = rhs.dimensions(dnums.kernel_input_feature_dimension());
  const int64_t kernel_output_features = rhs.dimensions(dnums.kernel_output_feature_dimension());
  if (input_features % feature_group_count != 0) {
    return Invalid("input feature dimension size ", input_features,
                   " is not a multiple of feature_group_count=", feature_group_count);
  }
  if (input_features / feature_group_count != kernel_input_features) {
    return Invalid("input feature dimension size ", input_features,
                   " / feature_group_count=", feature_group_count,
                   " must equal the kernel input feature dimension size ", kernel_input_features);
  }
  if (kernel_output_features % feature_group_count != 0) {
    return Invalid("kernel output feature dimension size ", kernel_output_features,
                   " is not a multiple of feature_group_count=", feature_group_count);
  }
  if (kernel_output_features % batch_group_count != 0) {
    return Invalid("kernel output feature dimension size ", kernel_output_features,
                   " is not a multiple of batch_group_count=", batch_group_count);
  }
  if (input_batch % batch_group_count != 0) {
    return Invalid("input batch dimension size ", input_batch,
                   " is not a multiple of batch_group_count=", batch_group_count);
  }
  std::vector<int64_t> base_dims;
  for (int64_t i = 0; i < spatial; ++i) {
    const int64_t kernel_size = rhs.dimensions(dnums.kernel_spatial_dimensions(i));
    if (window.dimensions(i).size() != kernel_size) {
      return Invalid("window dimension ", i, " has size ", window.dimensions(i).size(),
                     " but kernel spatial dimension ", dnums.kernel_spatial_dimensions(i),
                     " has size ", kernel_size);
    }
    base_dims.push_back(lhs.dimensions(dnums.input_spatial_dimensions(i)));
  }
  HLOC_ASSIGN_OR_RETURN(Shape windowed,
                        InferWindowOutputShape(MakeArray(type, base_dims), window, type));
  std::vector<int64_t> dims(spatial + 2);
  dims[dnums.output_batch_dimension()] = input_batch / batch_group_count;
  dims[dnums.output_feature_dimension()] = kernel_output_features;
  for (int64_t i = 0; i < spatial; ++i) {
    dims[dnums.output_spatial_dimensions(i)] = windowed.dimensions(i);
  }
  return MakeArray(type, dims);
}

absl::StatusOr<Shape> InferGatherShape(const Shape& operand, const Shape& start_indices,
                                       const xla::GatherDimensionNumbers& dnums,
                                       absl::Span<const int64_t> slice_sizes) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  const int64_t ivd = dnums.index_vector_dim();
  HLOC_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ExpandedIndexDims(start_indices, ivd));
  const int64_t indices_rank = static_cast<int64_t>(indices.size());
  Dims offset = AsSpan(dnums.offset_dims());
  Dims collapsed = AsSpan(dnums.collapsed_slice_dims());
  Dims start_map = AsSpan(dnums.start_index_map());
  Dims operand_batching = AsSpan(dnums.operand_batching_dims());
  Dims indices_batching = AsSpan(dnums.start_indices_batching_dims());
  const int64_t output_rank = static_cast<int64_t>(offset.size()) + indices_rank - 1;

  if (static_cast<int64_t>(start_map.size()) != indices[ivd]) {
    return Invalid("start_index_map has ", start_map.size(), " entries but index vector ",
                   "dimension ", ivd, " of the indices has size ", indices[ivd]);
  }
  HLOC_RETURN_IF_ERROR(CheckSortedDimensionList(offset, output_rank, "offset_dims"));
  HLOC_RETURN_IF_ERROR(CheckSortedDimensionList(collapsed, operand.rank(), "collapsed_slice_dims"));
  HLOC_RETURN_IF_ERROR(
      CheckSortedDimensionList(operand_batching, operand.rank(), "operand_batching_dims"));
  HLOC_RETURN_IF_ERROR(
      CheckDisjoint(collapsed, "collapsed_slice_dims", operand_batching, "operand_batching_dims"));
  HLOC_RETURN_IF_ERROR(CheckDimensionList(start_map, operand.rank(), "start_index_map"));
  HLOC_RETURN_IF_ERROR(
      CheckDisjoint(start_map, "start_index_map", operand_batching, "operand_batching_dims"));
  HLOC_RETURN_IF_ERROR(
      CheckDimensionList(indices_batching, indices_rank, "start_indices_batching_dims"));
  if (Contains(indices_batching, ivd)) {
    return Invalid("start_indices_batching_dims must not contain index_vector_dim=", ivd);
  }
  if (indices_batching.size() != operand_batching.size()) {
    return Invalid("operand_batching_dims has ", operand_batching.size(),
                   " entries but start_indices_batching_dims has ", indices_batching.size());
  }
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return Invalid("slice_sizes=", Str(slice_sizes), " must have one size per dimension of ",
                   "operand ", Str(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0 ||
        (!IsUnbounded(operand.dimensions(i)) && slice_sizes[i] > operand.dimensions(i))) {
      return Invalid("slice size ", slice_sizes[i], " of dimension ", i, " is outside [0, ",
                     operand.dimensions(i), "]");
    }
  }
  for (int64_t d : collapsed) {
    if (slice_sizes[d] > 1) {
      return Invalid("collapsed slice dimension ", d, " has slice size ", slice_sizes[d],
                     "; it must be 0 or 1");
    }
  }
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    const int64_t d = operand_batching[i];
    if (slice_sizes[d] > 1) {
      return Invalid("operand batching dimension ", d, " has slice size ", slice_sizes[d],
                     "; it must be 0 or 1");
    }
    if (!SizesMatch(operand.dimensions(d), indices[indices_batching[i]])) {
      return Invalid("operand batching dimension ", d, " has size ", operand.dimensions(d),
                     " but indices batching dimension ", indices_batching[i], " has size ",
                     indices[indices_batching[i]]);
    }
  }
  const int64_t window_dims =
      operand.rank() - static_cast<int64_t>(collapsed.size() + operand_batching.size());
  if (static_cast<int64_t>(offset.size()) != window_dims) {
    return Invalid("offset_dims has ", offset.size(), " entries but the operand has ", window_dims,
                   " dimensions that are neither collapsed nor batching");
  }
  std::vector<int64_t> offset_sizes, batch_sizes;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (!Contains(collapsed, d) && !Contains(operand_batching, d)) {
      offset_sizes.push_back(slice_sizes[d]);
    }
  }
  for (int64_t d = 0; d < indices_rank; ++d) {
    if (d != ivd) batch_sizes.push_back(indices[d]);
  }
  std::vector<int64_t> dims;
  size_t next_offset = 0, next_batch = 0;
  for (int64_t i = 0; i < output_rank; ++i) {
    dims.push_back(Contains(offset, i) ? offset_sizes[next_offset++] : batch_sizes[next_batch++]);
  }
  return MakeArray(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferScatterShape(absl::Span<const Shape* const> operands,
                                        const ProgramShape& to_apply,
                                        const xla::ScatterDimensionNumbers& dnums) {
  if (operands.size() < 3 || operands.size() % 2 == 0) {
    return Invalid("scatter needs N operands, the indices and N updates; got ", operands.size(),
                   " operands");
  }
  const size_t n = operands.size() / 2;
  const Shape& operand = *operands[0];
  const Shape& updates = *operands[n + 1];
  for (size_t i = 0; i < n; ++i) {
    HLOC_RETURN_IF_ERROR(ExpectArray(*operands[i], absl::StrCat("operand ", i)));
    HLOC_RETURN_IF_ERROR(ExpectArray(*operands[n + 1 + i], absl::StrCat("update ", i)));
    if (!SameDimensions(*operands[i], operand)) {
      return Invalid("operand ", i, " ", Str(*operands[i]),
                     " must have the dimensions of "
                     "operand 0 ",
                     Str(operand));
    }
    if (!SameDimensions(*operands[n + 1 + i], updates)) {
      return Invalid("update ", i, " ", Str(*operands[n + 1 + i]),
                     " must have the dimensions "
                     "of update 0 ",
                     Str(updates));
    }
    if (operands[n + 1 + i]->element_type() != operands[i]->element_type()) {
      return Invalid("update ", i, " ", Str(*operands[n + 1 + i]),
                     " must have the element type "
                     "of operand ",
                     i, " ", Str(*operands[i]));
    }
  }
  const int64_t ivd = dnums.index_vector_dim();
  HLOC_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ExpandedIndexDims(*operands[n], ivd));
  const int64_t indices_rank = static_cast<int64_t>(indices.size());
  Dims window = AsSpan(dnums.update_window_dims());
  Dims inserted = AsSpan(dnums.inserted_window_dims());
  Dims to_operand = AsSpan(dnums.scatter_dims_to_operand_dims());
  Dims input_batching = AsSpan(dnums.input_batching_dims());
  Dims indices_batching = AsSpan(dnums.scatter_indices_batching_dims());

  HLOC_RETURN_IF_ERROR(CheckSortedDimensionList(window, updates.rank(), "update_window_dims"));
  HLOC_RETURN_IF_ERROR(CheckSortedDimensionList(inserted, operand.rank(), "inserted_window_dims"));
  HLOC_RETURN_IF_ERROR(
      CheckSortedDimensionList(input_batching, operand.rank(), "input_batching_dims"));
  HLOC_RETURN_IF_ERROR(
      CheckDisjoint(inserted, "inserted_window_dims", input_batching, "input_batching_dims"));
  HLOC_RETURN_IF_ERROR(
      CheckDimensionList(indices_batching, indices_rank, "scatter_indices_batching_dims"));
  if (Contains(indices_batching, ivd)) {
    return Invalid("scatter_indices_batching_dims must not contain index_vector_dim=", ivd);
  }
  if (indices_batching.size() != input_batching.size()) {
    return Invalid("input_batching_dims has ", input_batching.size(),
                   " entries but scatter_indices_batching_dims has ", indices_batching.size());
  }
  const int64_t expected_operand_rank =
      static_cast<int64_t>(window.size() + inserted.size() + input_batching.size());
  if (operand.rank() != expected_operand_rank) {
    return Invalid("operand ", Str(operand), " must have rank ", expected_operand_rank,
                   " (update_window_dims + inserted_window_dims + input_batching_dims)");
  }
  if (static_cast<int64_t>(to_operand.size()) != indices[ivd]) {
    return Invalid("scatter_dims_to_operand_dims has ", to_operand.size(),
                   " entries but index vector dimension ", ivd, " of the indices has size ",
                   indices[ivd]);
  }
  HLOC_RETURN_IF_ERROR(
      CheckDimensionList(to_operand, operand.rank(), "scatter_dims_to_operand_dims"));
  HLOC_RETURN_IF_ERROR(CheckDisjoint(to_operand, "scatter_dims_to_operand_dims", input_batching,
                                     "input_batching_dims"));
  const int64_t expected_updates_rank = static_cast<int64_t>(window.size()) + indices_rank - 1;
  if (updates.rank() != expected_updates_rank) {
    return Invalid("updates ", Str(updates), " must have rank ", expected_updates_rank,
                   " (update_window_dims plus the indices' scatter dimensions)");
  }
  // Window dimensions of the updates fit in the operand dimensions they map to.
  size_t next_window = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(inserted, d) || Contains(input_batching, d)) continue;
    const int64_t u = window[next_window++];
    if (!IsUnbounded(updates.dimensions(u)) && !IsUnbounded(operand.dimensions(d)) &&
        updates.dimensions(u) > operand.dimensions(d)) {
      return Invalid("update window dimension ", u, " has size ", updates.dimensions(u),
                     ", larger than operand dimension ", d, " of size ", operand.dimensions(d));
    }
  }
  // The other update dimensions are the indices' scatter dimensions, in order.
  int64_t next_index = 0;
  for (int64_t u = 0; u < updates.rank(); ++u) {
    if (Contains(window, u)) continue;
    if (next_index == ivd) ++next_index;
    if (!SizesMatch(updates.dimensions(u), indices[next_index])) {
      return Invalid("update scatter dimension ", u, " has size ", updates.dimensions(u),
                     " but indices dimension ", next_index, " has size ", indices[next_index]);
    }
    ++next_index;
  }
  std::vector<PrimitiveType> types;
  for (size_t i = 0; i < n; ++i) types.push_back(operands[i]->element_type());
  HLOC_RETURN_IF_ERROR(CheckReducerSignature(to_apply, types, types));
  if (n == 1) return WithoutLayout(operand);
  std::vector<Shape> results;
  for (size_t i = 0; i < n; ++i) results.push_back(WithoutLayout(*operands[i]));
  return Shape::Tuple(std::move(results));
}

}  // namespace hloc
