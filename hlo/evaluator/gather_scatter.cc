// gather and scatter with XLA's full dimension numbers, batching dimensions
// included. gather clamps each slice's start so the slice lies inside the
// operand (XLA's rule); scatter skips an update window that would not fit
// (what XLA's CPU and GPU backends do) and applies the windows in the
// order of the update elements.
#include <algorithm>
#include <utility>

#include "absl/algorithm/container.h"
#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/ops.h"
#include "hlo/evaluator/strided_copy.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

bool Contains(const google::protobuf::RepeatedField<int64_t>& list, int64_t v) {
  return absl::c_linear_search(list, v);
}

// Reads the index vector for one batch position: S[k] for k < length.
struct IndexReader {
  const Literal* indices;
  std::vector<int64_t> strides;  // Of the indices array.
  int64_t vector_dim;            // == rank when the vector is implicit.
  int64_t length;
  // Indices dims other than vector_dim, in order.
  std::vector<int64_t> batch_dims;

  static absl::StatusOr<IndexReader> Make(const HloInstruction& hlo, const Literal& indices,
                                          int64_t vector_dim) {
    IndexReader r;
    r.indices = &indices;
    const int64_t rank = indices.shape().rank();
    if (!IsInteger(indices.shape().element_type())) {
      return InstructionError(hlo, "indices must be integers");
    }
    if (vector_dim < 0 || vector_dim > rank) {
      return InstructionError(hlo, "index_vector_dim ", vector_dim, " out of range");
    }
    r.strides = RowMajorStrides(indices.shape().dimensions());
    r.vector_dim = vector_dim;
    r.length = vector_dim < rank ? indices.shape().dimensions(vector_dim) : 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != vector_dim) r.batch_dims.push_back(d);
    }
    return r;
  }
  // Linear offset in the indices array of batch position `g`.
  int64_t Base(absl::Span<const int64_t> g) const {
    int64_t base = 0;
    for (size_t k = 0; k < batch_dims.size(); ++k) base += g[k] * strides[batch_dims[k]];
    return base;
  }
  int64_t Get(int64_t base, int64_t k) const {
    const int64_t pos = vector_dim < static_cast<int64_t>(strides.size())
                            ? base + k * strides[vector_dim]
                            : base;
    if (IsUnsignedInteger(indices->shape().element_type())) {
      return static_cast<int64_t>(std::min<uint64_t>(indices->GetAsUint64(pos), INT64_MAX));
    }
    return indices->GetAsInt64(pos);
  }
};

// Advances an odometer; false when it wraps around.
bool Bump(std::vector<int64_t>& index, absl::Span<const int64_t> dims) {
  for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

}  // namespace

absl::StatusOr<Literal> EvalGather(const HloInstruction& hlo, Operands ops) {
  const Literal& operand = *ops[0];
  const Literal& indices = *ops[1];
  const xla::GatherDimensionNumbers& dn = hlo.attrs().gather_dimension_numbers;
  const std::vector<int64_t>& slice_sizes = hlo.attrs().gather_slice_sizes;
  const Shape& out_shape = hlo.shape();
  const int64_t rank = operand.shape().rank();
  if (static_cast<int64_t>(slice_sizes.size()) != rank) {
    return InstructionError(hlo, "slice_sizes has ", slice_sizes.size(), " entries for rank ",
                            rank);
  }
  HLOC_ASSIGN_OR_RETURN(IndexReader reader,
                        IndexReader::Make(hlo, indices, dn.index_vector_dim()));
  if (reader.length != dn.start_index_map_size()) {
    return InstructionError(hlo, "index vector length ", reader.length,
                            " differs from start_index_map size ", dn.start_index_map_size());
  }
  for (int64_t d : dn.start_index_map()) {
    if (d < 0 || d >= rank) return InstructionError(hlo, "start_index_map entry out of range");
  }
  std::vector<int64_t> offset_operand_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand.shape().dimensions(d)) {
      return InstructionError(hlo, "slice size ", slice_sizes[d], " out of range in dimension ", d);
    }
    if (!Contains(dn.collapsed_slice_dims(), d) && !Contains(dn.operand_batching_dims(), d)) {
      offset_operand_dims.push_back(d);
    }
  }
  if (static_cast<int64_t>(offset_operand_dims.size()) != dn.offset_dims_size()) {
    return InstructionError(hlo, "offset_dims does not match the uncollapsed slice dimensions");
  }
  std::vector<int64_t> out_batch_dims;
  for (int64_t d = 0; d < out_shape.rank(); ++d) {
    if (!Contains(dn.offset_dims(), d)) out_batch_dims.push_back(d);
  }
  if (out_batch_dims.size() != reader.batch_dims.size()) {
    return InstructionError(hlo, "result batch rank does not match the indices");
  }
  std::vector<int64_t> batch_sizes;
  for (int64_t d : reader.batch_dims) batch_sizes.push_back(indices.shape().dimensions(d));
  for (size_t k = 0; k < out_batch_dims.size(); ++k) {
    if (out_shape.dimensions(out_batch_dims[k]) != batch_sizes[k]) {
      return InstructionError(hlo, "result batch dimension sizes do not match the indices");
    }
  }
  // Position among the indices' batch dims of each start_indices_batching_dim.
  std::vector<int64_t> batching_pos;
  for (int64_t d : dn.start_indices_batching_dims()) {
    auto it = absl::c_find(reader.batch_dims, d);
    if (it == reader.batch_dims.end()) return InstructionError(hlo, "bad batching dimension");
    batching_pos.push_back(it - reader.batch_dims.begin());
  }
  if (batching_pos.size() != static_cast<size_t>(dn.operand_batching_dims_size())) {
    return InstructionError(hlo, "batching dimension lists differ in length");
  }

  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, out_shape));
  const std::vector<int64_t> in_strides = RowMajorStrides(operand.shape().dimensions());
  const std::vector<int64_t> out_strides = RowMajorStrides(out_shape.dimensions());
  std::vector<int64_t> copy_dims, src_strides, dst_strides;
  for (size_t j = 0; j < offset_operand_dims.size(); ++j) {
    copy_dims.push_back(slice_sizes[offset_operand_dims[j]]);
    src_strides.push_back(in_strides[offset_operand_dims[j]]);
    dst_strides.push_back(out_strides[dn.offset_dims(j)]);
    if (out_shape.dimensions(dn.offset_dims(j)) != copy_dims.back()) {
      return InstructionError(hlo, "offset dimension sizes differ from slice_sizes");
    }
  }
  const int w = ByteWidth(operand.shape().element_type());
  if (out.element_count() == 0) return std::move(out);
  std::vector<int64_t> g(batch_sizes.size(), 0), start(rank);
  do {
    const int64_t base = reader.Base(g);
    std::fill(start.begin(), start.end(), 0);
    for (int64_t k = 0; k < reader.length; ++k) start[dn.start_index_map(k)] = reader.Get(base, k);
    for (size_t i = 0; i < batching_pos.size(); ++i) {
      start[dn.operand_batching_dims(i)] = g[batching_pos[i]];
    }
    int64_t src_base = 0, dst_base = 0;
    for (int64_t d = 0; d < rank; ++d) {
      start[d] = std::clamp<int64_t>(start[d], 0, operand.shape().dimensions(d) - slice_sizes[d]);
      src_base += start[d] * in_strides[d];
    }
    for (size_t k = 0; k < g.size(); ++k) dst_base += g[k] * out_strides[out_batch_dims[k]];
    StridedCopy(w, operand.raw(), src_base, src_strides, out.mutable_raw(), dst_base, dst_strides,
                copy_dims);
  } while (Bump(g, batch_sizes));
  return std::move(out);
}

namespace {

// Applies updates pairs (operand element, update element) with a combiner
// known to be one binary op, or plain overwrite (kind == nullopt).
template <typename Tag>
void ApplySimple(std::optional<HloOpcode> kind, Literal* target, const Literal& updates,
                 const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  using C = typename Tag::Compute;
  auto* dst = reinterpret_cast<typename Tag::Storage*>(target->mutable_raw());
  const auto* src = reinterpret_cast<const typename Tag::Storage*>(updates.raw());
  auto apply = [&](auto f) {
    for (const auto& [t, u] : pairs) dst[t] = Tag::Store(f(Tag::Load(dst[t]), Tag::Load(src[u])));
  };
  if (!kind) {
    for (const auto& [t, u] : pairs) dst[t] = src[u];
    return;
  }
  switch (*kind) {
    case HloOpcode::kAdd:
      if constexpr (kIsPred<Tag>) {
        apply([](C a, C b) { return a || b; });
      } else {
        apply([](C a, C b) { return static_cast<C>(a + b); });
      }
      break;
    case HloOpcode::kMultiply:
      if constexpr (kIsPred<Tag>) {
        apply([](C a, C b) { return a && b; });
      } else {
        apply([](C a, C b) { return static_cast<C>(a * b); });
      }
      break;
    default:
      break;
  }
}

}  // namespace

absl::StatusOr<Literal> EvalScatter(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  if (ops.size() < 3 || ops.size() % 2 == 0) {
    return InstructionError(hlo, "scatter needs 2N+1 operands");
  }
  const int64_t n = (static_cast<int64_t>(ops.size()) - 1) / 2;
  const Literal& indices = *ops[n];
  const xla::ScatterDimensionNumbers& dn = hlo.attrs().scatter_dimension_numbers;
  const Shape& operand_shape = ops[0]->shape();
  const Shape& update_shape = ops[n + 1]->shape();
  const int64_t rank = operand_shape.rank();
  for (int64_t i = 0; i < n; ++i) {
    if (!ops[i]->shape().SameDimensions(operand_shape) ||
        !ops[n + 1 + i]->shape().SameDimensions(update_shape)) {
      return InstructionError(hlo, "scatter operands (or updates) differ in shape");
    }
  }
  HLOC_ASSIGN_OR_RETURN(IndexReader reader,
                        IndexReader::Make(hlo, indices, dn.index_vector_dim()));
  if (reader.length != dn.scatter_dims_to_operand_dims_size()) {
    return InstructionError(hlo, "index vector length differs from scatter_dims_to_operand_dims");
  }
  for (int64_t d : dn.scatter_dims_to_operand_dims()) {
    if (d < 0 || d >= rank) return InstructionError(hlo, "scatter_dims_to_operand_dims entry out of range");
  }
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(dn.inserted_window_dims(), d) && !Contains(dn.input_batching_dims(), d)) {
      window_operand_dims.push_back(d);
    }
  }
  if (static_cast<int64_t>(window_operand_dims.size()) != dn.update_window_dims_size()) {
    return InstructionError(hlo, "update_window_dims does not match the operand's window dims");
  }
  std::vector<int64_t> update_scatter_dims;
  for (int64_t d = 0; d < update_shape.rank(); ++d) {
    if (!Contains(dn.update_window_dims(), d)) update_scatter_dims.push_back(d);
  }
  if (update_scatter_dims.size() != reader.batch_dims.size()) {
    return InstructionError(hlo, "update scatter rank does not match the indices");
  }
  std::vector<int64_t> scatter_sizes;
  for (size_t k = 0; k < update_scatter_dims.size(); ++k) {
    scatter_sizes.push_back(update_shape.dimensions(update_scatter_dims[k]));
    if (scatter_sizes.back() != indices.shape().dimensions(reader.batch_dims[k])) {
      return InstructionError(hlo, "update scatter dimension sizes differ from the indices'");
    }
  }
  std::vector<int64_t> batching_pos;
  for (int64_t d : dn.scatter_indices_batching_dims()) {
    auto it = absl::c_find(reader.batch_dims, d);
    if (it == reader.batch_dims.end()) return InstructionError(hlo, "bad batching dimension");
    batching_pos.push_back(it - reader.batch_dims.begin());
  }
  if (batching_pos.size() != static_cast<size_t>(dn.input_batching_dims_size())) {
    return InstructionError(hlo, "batching dimension lists differ in length");
  }
  // Window sizes per operand dimension (1 for inserted and batching dims).
  std::vector<int64_t> window_size(rank, 1), window_dims;
  for (size_t j = 0; j < window_operand_dims.size(); ++j) {
    window_size[window_operand_dims[j]] = update_shape.dimensions(dn.update_window_dims(j));
    window_dims.push_back(window_size[window_operand_dims[j]]);
  }
  const std::vector<int64_t> op_strides = RowMajorStrides(operand_shape.dimensions());
  const std::vector<int64_t> up_strides = RowMajorStrides(update_shape.dimensions());

  // (operand element, update element) in update order.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (ops[n + 1]->element_count() > 0) {
    std::vector<int64_t> g(scatter_sizes.size(), 0), start(rank), w(window_dims.size());
    do {
      const int64_t base = reader.Base(g);
      std::fill(start.begin(), start.end(), 0);
      for (int64_t k = 0; k < reader.length; ++k) {
        start[dn.scatter_dims_to_operand_dims(k)] = reader.Get(base, k);
      }
      for (size_t i = 0; i < batching_pos.size(); ++i) {
        start[dn.input_batching_dims(i)] = g[batching_pos[i]];
      }
      bool in_bounds = true;
      int64_t op_base = 0, up_base = 0;
      for (int64_t d = 0; d < rank; ++d) {
        if (start[d] < 0 || start[d] > operand_shape.dimensions(d) - window_size[d]) {
          in_bounds = false;
        }
        op_base += start[d] * op_strides[d];
      }
      if (!in_bounds) continue;
      for (size_t k = 0; k < g.size(); ++k) up_base += g[k] * up_strides[update_scatter_dims[k]];
      std::fill(w.begin(), w.end(), 0);
      if (absl::c_any_of(window_dims, [](int64_t s) { return s == 0; })) continue;
      do {
        int64_t o = op_base, u = up_base;
        for (size_t j = 0; j < w.size(); ++j) {
          o += w[j] * op_strides[window_operand_dims[j]];
          u += w[j] * up_strides[dn.update_window_dims(j)];
        }
        pairs.emplace_back(o, u);
      } while (Bump(w, window_dims));
    } while (Bump(g, scatter_sizes));
  }

  std::vector<Literal> results;
  for (int64_t i = 0; i < n; ++i) results.push_back(*ops[i]);
  const HloComputation* combiner = hlo.to_apply();
  if (combiner == nullptr) return InstructionError(hlo, "scatter has no to_apply computation");
  std::optional<SimpleReducer> simple = MatchSimpleReducer(*combiner);
  const HloInstruction* root = combiner->root();
  const bool overwrite = n == 1 && root->opcode() == HloOpcode::kParameter &&
                         root->parameter_number() == 1;
  if (n == 1 && (overwrite || (simple && (simple->opcode == HloOpcode::kAdd ||
                                          simple->opcode == HloOpcode::kMultiply)))) {
    std::optional<HloOpcode> kind;
    if (!overwrite) kind = simple->opcode;
    HLOC_RETURN_IF_ERROR(DispatchType(operand_shape.element_type(), [&](auto tag) {
      ApplySimple<decltype(tag)>(kind, &results[0], *ops[n + 1], pairs);
      return absl::OkStatus();
    }));
  } else {
    std::vector<Literal> args(2 * n);
    std::vector<const Literal*> arg_ptrs(2 * n);
    for (const auto& [t, u] : pairs) {
      for (int64_t i = 0; i < n; ++i) {
        args[i] = ElementAsScalar(results[i], t);
        args[n + i] = ElementAsScalar(*ops[n + 1 + i], u);
      }
      for (int64_t i = 0; i < 2 * n; ++i) arg_ptrs[i] = &args[i];
      HLOC_ASSIGN_OR_RETURN(Literal r, ctx.Call(*combiner, arg_ptrs));
      if (n == 1 && !r.shape().IsTuple()) {
        StoreElement(r, &results[0], t);
      } else {
        if (static_cast<int64_t>(r.tuple_elements().size()) != n) {
          return InstructionError(hlo, "combiner returned the wrong number of values");
        }
        for (int64_t i = 0; i < n; ++i) StoreElement(r.tuple_elements()[i], &results[i], t);
      }
    }
  }
  if (n == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

}  // namespace eval
}  // namespace hloc
