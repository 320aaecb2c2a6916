// Sort and top-k on the host (see library_calls.h). Both sort each row (all
// indices but the sorted dimension) through a permutation, stably, which is
// the order the interpreter produces: ties keep their original order. Rows
// go to the pool; a comparator that orders by one operand's keys sorts by
// radix (key_sort.h), any other is called by a comparison sort.
#include "backend/host/library_calls.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/host/fft_library.h"
#include "backend/host/key_sort.h"
#include "backend/host/running_reduction.h"
#include "hlo/evaluator/gemm_kernel.h"

namespace hloc {
namespace host {
namespace {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

int64_t ElementCount(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape.dimensions()) n *= d;
  return n;
}

absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeSort(
    const HloInstruction& hlo, KernelCompiler& compiler) {
  using Result = std::optional<runtime::LibraryCallThunk::Function>;
  if (hlo.dimensions().size() != 1 || hlo.operand_count() < 1 || hlo.to_apply() == nullptr) {
    return Result();
  }
  const Shape& shape = hlo.operand(0)->shape();
  const int64_t dim = hlo.dimensions(0);
  if (dim < 0 || dim >= shape.rank()) return Result();
  std::vector<int> widths;
  for (const HloInstruction* operand : hlo.operands()) {
    if (!operand->shape().IsArray() || operand->shape().dimensions() != shape.dimensions()) {
      return Result();
    }
    widths.push_back(ByteWidth(operand->shape().element_type()));
  }
  const int64_t operands = hlo.operand_count();
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  const int64_t n = shape.dimensions(dim), stride = strides[dim];
  const int64_t rows = n == 0 ? 0 : ElementCount(shape) / n;
  // Row r's first element; rows split over the pool, a few thousand
  // elements per task at least.
  auto row_base = [=](int64_t r) { return (r / stride) * stride * n + r % stride; };
  const int64_t rows_per_task = std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1));
  auto permute = [=](absl::Span<void* const> buffers, int64_t base,
                     const std::vector<int64_t>& perm) {
    for (int64_t i = 0; i < operands; ++i) {
      const uint8_t* in = static_cast<const uint8_t*>(buffers[i]);
      uint8_t* out = static_cast<uint8_t*>(buffers[operands + i]);
      const int w = widths[i];
      auto gather = [&](auto element) {
        constexpr size_t kSize = sizeof(element);  // Fixed-size copies: a load and a store.
        for (int64_t j = 0; j < n; ++j) {
          std::memcpy(out + (base + j * stride) * kSize, in + (base + perm[j] * stride) * kSize,
                      kSize);
        }
      };
      switch (w) {
        case 1: gather(uint8_t{}); break;
        case 2: gather(uint16_t{}); break;
        case 4: gather(uint32_t{}); break;
        case 8: gather(uint64_t{}); break;
        default:
          for (int64_t j = 0; j < n; ++j) {
            std::memcpy(out + (base + j * stride) * w, in + (base + perm[j] * stride) * w, w);
          }
      }
    }
  };
  if (std::optional<KeyOrder> order = ClassifySortComparator(*hlo.to_apply(), operands)) {
    const KeyOrder key = *order;
    return Result([=](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
      const uint8_t* keys = static_cast<const uint8_t*>(buffers[key.operand]);
      runtime::ParallelForOrInline(pool, rows, rows_per_task, [&](int64_t begin, int64_t end) {
        KeySorter sorter(key);
        std::vector<int64_t> perm;
        for (int64_t r = begin; r < end; ++r) {
          uint8_t* values = static_cast<uint8_t*>(buffers[1]);
          if (operands == 1 && sorter.SortRowValues(keys, values, row_base(r), stride, n)) continue;
          sorter.SortRow(keys, row_base(r), stride, n, &perm);
          permute(buffers, row_base(r), perm);
        }
      });
      return absl::OkStatus();
    });
  }
  absl::StatusOr<CompiledKernel> comparator = compiler.Compile(*hlo.to_apply());
  if (!comparator.ok()) {
    if (comparator.status().code() == absl::StatusCode::kUnimplemented) return Result();
    return comparator.status();
  }
  if (comparator->num_buffers != 2 * operands + 1) return Result();
  const runtime::KernelFunction less = comparator->function;
  return Result([=](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
    runtime::ParallelForOrInline(pool, rows, rows_per_task, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> perm(n);
      std::vector<void*> args(2 * operands + 1);
      uint8_t result = 0;
      args[2 * operands] = &result;
      for (int64_t r = begin; r < end; ++r) {
        const int64_t base = row_base(r);
        std::iota(perm.begin(), perm.end(), 0);
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
          for (int64_t i = 0; i < operands; ++i) {
            uint8_t* data = static_cast<uint8_t*>(buffers[i]);
            args[2 * i] = data + (base + a * stride) * widths[i];
            args[2 * i + 1] = data + (base + b * stride) * widths[i];
          }
          less(args.data(), 0, 1);
          return result != 0;
        });
        permute(buffers, base, perm);
      }
    });
    return absl::OkStatus();
  });
}

// Top k along the last dimension: values and s32 indices, largest first
// (or smallest first), ties by lower index.
absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeTopK(
    const HloInstruction& hlo, bool largest) {
  using Result = std::optional<runtime::LibraryCallThunk::Function>;
  if (hlo.operand_count() != 1 || !hlo.shape().IsTuple() || hlo.shape().tuple_shapes_size() != 2) {
    return Result();
  }
  const Shape& shape = hlo.operand(0)->shape();
  const Shape& values = hlo.shape().tuple_shapes(0);
  const Shape& indices = hlo.shape().tuple_shapes(1);
  if (!HasOrderKeys(shape.element_type()) || shape.rank() < 1 ||
      indices.element_type() != xla::S32 ||
      values.element_type() != shape.element_type() || values.rank() != shape.rank()) {
    return Result();
  }
  const int64_t n = shape.dimensions(shape.rank() - 1);
  const int64_t k = values.dimensions(values.rank() - 1);
  if (k > n || ElementCount(indices) != ElementCount(values)) return Result();
  const int64_t rows = n == 0 ? 0 : ElementCount(shape) / n;
  if (rows * k != ElementCount(values)) return Result();
  const int w = ByteWidth(shape.element_type());
  KeyOrder order;  // The element type's total order, ascending.
  order.type = shape.element_type();
  // Each row in one pass, keeping its k best so far in a heap whose top is
  // the worst of them (O(n log k), most elements rejected by one compare);
  // rows split over the pool. Order: key, then lower index first, a total
  // order, so the result is the stable sort's first k.
  return Result([=](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
    const uint8_t* in = static_cast<const uint8_t*>(buffers[0]);
    uint8_t* out_values = static_cast<uint8_t*>(buffers[1]);
    int32_t* out_indices = static_cast<int32_t*>(buffers[2]);
    using Entry = std::pair<uint64_t, int64_t>;  // key, index
    auto better = [largest](const Entry& a, const Entry& b) {
      if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
      return a.second < b.second;
    };
    auto task = [&](int64_t begin, int64_t end) {
      std::vector<Entry> best;
      best.reserve(k);
      std::vector<uint64_t> keys(n);
      for (int64_t r = begin; r < end; ++r) {
        best.clear();
        LoadOrderKeys(order, in, r * n, 1, n, keys.data());
        for (int64_t j = 0; j < n && k > 0; ++j) {
          const Entry e{keys[j], j};
          if (static_cast<int64_t>(best.size()) < k) {
            best.push_back(e);
            std::push_heap(best.begin(), best.end(), better);
          } else if (better(e, best.front())) {
            std::pop_heap(best.begin(), best.end(), better);
            best.back() = e;
            std::push_heap(best.begin(), best.end(), better);
          }
        }
        std::sort_heap(best.begin(), best.end(), better);
        for (int64_t j = 0; j < k; ++j) {
          std::memcpy(out_values + (r * k + j) * w, in + (r * n + best[j].second) * w, w);
          out_indices[r * k + j] = static_cast<int32_t>(best[j].second);
        }
      }
    };
    runtime::ParallelForOrInline(pool, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)),
                                 task);
    return absl::OkStatus();
  });
}

// Reads element `i` of an integer index array as int64 (unsigned values
// above INT64_MAX read as INT64_MAX), as the interpreter does.
using IndexReadFn = int64_t (*)(const uint8_t*, int64_t);
template <typename T>
int64_t ReadIndex(const uint8_t* data, int64_t i) {
  T v;
  std::memcpy(&v, data + i * sizeof(T), sizeof(T));
  if constexpr (std::is_unsigned<T>::value) {
    return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
  } else {
    return static_cast<int64_t>(v);
  }
}
// Calls fn(T{}) with the C++ type T of integer index type `type`; false
// (fn not called) for any other type.
template <typename Fn>
bool WithIndexType(PrimitiveType type, Fn&& fn) {
  switch (type) {
    case xla::S8: fn(int8_t{}); return true;
    case xla::S16: fn(int16_t{}); return true;
    case xla::S32: fn(int32_t{}); return true;
    case xla::S64: fn(int64_t{}); return true;
    case xla::U8: fn(uint8_t{}); return true;
    case xla::U16: fn(uint16_t{}); return true;
    case xla::U32: fn(uint32_t{}); return true;
    case xla::U64: fn(uint64_t{}); return true;
    default: return false;
  }
}
std::optional<IndexReadFn> IndexReaderFor(PrimitiveType type) {
  std::optional<IndexReadFn> reader;
  WithIndexType(type, [&](auto t) { reader = &ReadIndex<decltype(t)>; });
  return reader;
}

bool Contains(const google::protobuf::RepeatedField<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// Advances a row-major odometer; false when it wraps around.
bool Bump(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

// A scatter combiner that is one binary op of its two parameters, or the
// update parameter itself (JAX's `.at[].set`), is applied as a typed loop
// over contiguous rows instead of one kernel call per element.
enum class RowCombine { kNone, kAdd, kMultiply, kMax, kMin, kReplace };
struct CombinerForm {
  RowCombine op = RowCombine::kNone;
  bool update_first = false;  // max/min(update, operand): which NaN or zero wins.
};
CombinerForm ClassifyCombiner(const HloComputation& c) {
  const HloInstruction* root = c.root();
  if (c.num_parameters() != 2 || root == nullptr || root->shape().rank() != 0 ||
      root->shape().IsTuple()) {
    return {};
  }
  auto param = [](const HloInstruction* h) {
    return h->opcode() == HloOpcode::kParameter ? h->parameter_number() : int64_t{-1};
  };
  if (param(root) == 1) return {RowCombine::kReplace, false};
  if (root->operand_count() != 2) return {};
  const int64_t a = param(root->operand(0)), b = param(root->operand(1));
  if (!((a == 0 && b == 1) || (a == 1 && b == 0))) return {};
  switch (root->opcode()) {
    case HloOpcode::kAdd: return {RowCombine::kAdd, a == 1};
    case HloOpcode::kMultiply: return {RowCombine::kMultiply, a == 1};
    case HloOpcode::kMaximum: return {RowCombine::kMax, a == 1};
    case HloOpcode::kMinimum: return {RowCombine::kMin, a == 1};
    default: return {};
  }
}

// dst[j] = combine(dst[j], src[j]) for j in [0, len), with the interpreter's
// semantics: integers wrap, float max/min return the first NaN operand.
template <typename T, bool = std::is_integral<T>::value>
struct WrappingArith {
  using type = T;
};
template <typename T>
struct WrappingArith<T, true> {
  using type = std::make_unsigned_t<T>;
};
// a + b, wrapping for signed integers as for unsigned ones.
template <typename T>
T WrappingAdd(T a, T b) {
  using Arith = typename WrappingArith<T>::type;
  return static_cast<T>(static_cast<Arith>(a) + static_cast<Arith>(b));
}

template <typename T>
void CombineRow(RowCombine op, bool update_first, T* dst, const T* src, int64_t len) {
  using Arith = typename WrappingArith<T>::type;
  switch (op) {
    case RowCombine::kReplace:
      std::memmove(dst, src, len * sizeof(T));
      return;
    case RowCombine::kAdd:
      for (int64_t j = 0; j < len; ++j) dst[j] = WrappingAdd(dst[j], src[j]);
      return;
    case RowCombine::kMultiply:
      for (int64_t j = 0; j < len; ++j) {
        dst[j] = static_cast<T>(static_cast<Arith>(dst[j]) * static_cast<Arith>(src[j]));
      }
      return;
    case RowCombine::kMax:
    case RowCombine::kMin:
      for (int64_t j = 0; j < len; ++j) {
        const T x = update_first ? src[j] : dst[j];
        const T y = update_first ? dst[j] : src[j];
        T r;
        if (std::is_floating_point<T>::value && x != x) {
          r = x;
        } else if (std::is_floating_point<T>::value && y != y) {
          r = y;
        } else if (op == RowCombine::kMax) {
          r = x < y ? y : x;
        } else {
          r = y < x ? y : x;
        }
        dst[j] = r;
      }
      return;
    case RowCombine::kNone:
      return;
  }
}

using CombineRowFn = void (*)(RowCombine, bool, void*, const void*, int64_t);
template <typename T>
void CombineRowErased(RowCombine op, bool update_first, void* dst, const void* src,
                      int64_t len) {
  CombineRow<T>(op, update_first, static_cast<T*>(dst), static_cast<const T*>(src), len);
}
std::optional<CombineRowFn> RowCombinerFor(PrimitiveType type) {
  switch (type) {
    case xla::F32: return &CombineRowErased<float>;
    case xla::F64: return &CombineRowErased<double>;
    case xla::S8: return &CombineRowErased<int8_t>;
    case xla::S16: return &CombineRowErased<int16_t>;
    case xla::S32: return &CombineRowErased<int32_t>;
    case xla::S64: return &CombineRowErased<int64_t>;
    case xla::U8: return &CombineRowErased<uint8_t>;
    case xla::U16: return &CombineRowErased<uint16_t>;
    case xla::U32: return &CombineRowErased<uint32_t>;
    case xla::U64: return &CombineRowErased<uint64_t>;
    default: return std::nullopt;
  }
}

// Histograms: out[index[g]] combined with up[g] for g in [0, count), in
// order, skipping indices outside [0, out_count): the row walk with the
// index and element types known, so no call per element.
using ScatterScalarsFn = void (*)(RowCombine, bool, void*, int64_t, const void*, const uint8_t*,
                                  int64_t, int64_t);
template <typename T, typename I>
void ScatterScalars(RowCombine op, bool update_first, void* out, int64_t out_count,
                    const void* updates, const uint8_t* index, int64_t index_stride,
                    int64_t count) {
  T* o = static_cast<T*>(out);
  const T* u = static_cast<const T*>(updates);
  auto each = [&](auto&& combine) {
    for (int64_t g = 0; g < count; ++g) {
      const int64_t i = ReadIndex<I>(index, g * index_stride);
      if (i >= 0 && i < out_count) combine(o + i, u + g);
    }
  };
  // Sums get their own loop: CombineRow's switch per element made the
  // histogram scatter of 1M updates 2.2 ms instead of 0.66 ms.
  if (op == RowCombine::kAdd) {
    each([](T* d, const T* x) { *d = WrappingAdd(*d, *x); });
  } else {
    each([&](T* d, const T* x) { CombineRow<T>(op, update_first, d, x, 1); });
  }
}
template <typename T>
std::optional<ScatterScalarsFn> ScatterScalarsIndexedBy(PrimitiveType index) {
  switch (index) {
    case xla::S32: return &ScatterScalars<T, int32_t>;
    case xla::S64: return &ScatterScalars<T, int64_t>;
    case xla::U32: return &ScatterScalars<T, uint32_t>;
    default: return std::nullopt;
  }
}
// The types histograms count in (weights' and counts'): others take the row walk.
std::optional<ScatterScalarsFn> ScatterScalarsFor(PrimitiveType type, PrimitiveType index) {
  switch (type) {
    case xla::F32: return ScatterScalarsIndexedBy<float>(index);
    case xla::F64: return ScatterScalarsIndexedBy<double>(index);
    case xla::S32: return ScatterScalarsIndexedBy<int32_t>(index);
    case xla::S64: return ScatterScalarsIndexedBy<int64_t>(index);
    default: return std::nullopt;
  }
}

// Where each update of a point scatter lands (MakeScatter): update u (the
// scatter dims walked row-major) reads its index vector at
// sum_k g_k * strides[k], components `component_stride` apart; component c
// indexes an operand dimension of `operand_sizes[c]` elements
// `operand_strides[c]` apart.
struct PointIndexing {
  int64_t length = 0;
  int64_t component_stride = 0;
  std::vector<int64_t> sizes, strides;
  std::vector<int64_t> operand_sizes, operand_strides;
};
template <typename I>
void PointOffsets(const PointIndexing& p, const uint8_t* data, int64_t count, int64_t* out) {
  auto offset = [&](int64_t base) {
    int64_t o = 0;
    for (int64_t c = 0; c < p.length; ++c) {
      const int64_t v = ReadIndex<I>(data, base + c * p.component_stride);
      if (v < 0 || v >= p.operand_sizes[c]) return int64_t{-1};
      o += v * p.operand_strides[c];
    }
    return o;
  };
  // The usual layout: one contiguous index vector per update, in order.
  const bool packed = (p.length == 1 || p.component_stride == 1) && !p.strides.empty() &&
                      p.strides.back() == p.length;
  bool row_major = packed;
  for (size_t k = 1; row_major && k < p.strides.size(); ++k) {
    row_major = p.strides[k - 1] == p.strides[k] * p.sizes[k];
  }
  if (row_major) {
    for (int64_t u = 0; u < count; ++u) out[u] = offset(u * p.length);
    return;
  }
  std::vector<int64_t> g(p.sizes.size(), 0);
  for (int64_t u = 0; u < count; ++u) {
    int64_t base = 0;
    for (size_t k = 0; k < g.size(); ++k) base += g[k] * p.strides[k];
    out[u] = offset(base);
    Bump(g, p.sizes);
  }
}
// The offsets for indices of `type` (one MakeScatter has read with
// IndexReaderFor, so the type is one WithIndexType knows).
std::vector<int64_t> ListPointOffsets(const PointIndexing& p, PrimitiveType type,
                                      const uint8_t* data, int64_t count) {
  std::vector<int64_t> out(count);
  WithIndexType(type, [&](auto t) { PointOffsets<decltype(t)>(p, data, count, out.data()); });
  return out;
}

// scatter: results start as copies of the operands; every update element,
// in row-major update order, is combined into its operand element. A window
// whose start puts any part of it out of bounds is skipped whole. Windows are
// walked as rows: when the last window dimension is the last dimension of
// both the operand and the updates, a row is that many contiguous elements
// (else one). A combiner that ClassifyCombiner names runs as a typed loop per
// row, split across threads by ranges of the result (each thread walks every
// update, applying only the part of each row inside its range, so every
// element still sees its updates in order); any other combiner is the
// compiled kernel called per element.
absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeScatter(
    const HloInstruction& hlo, KernelCompiler& compiler) {
  using Result = std::optional<runtime::LibraryCallThunk::Function>;
  const int64_t n = (hlo.operand_count() - 1) / 2;
  if (n < 1 || hlo.operand_count() != 2 * n + 1 || hlo.to_apply() == nullptr) return Result();
  const Shape& operand = hlo.operand(0)->shape();
  const Shape& indices = hlo.operand(n)->shape();
  const Shape& updates = hlo.operand(n + 1)->shape();
  std::optional<IndexReadFn> read_index = IndexReaderFor(indices.element_type());
  if (!read_index) return Result();
  std::vector<int> widths;
  for (int64_t i = 0; i < n; ++i) {
    if (hlo.operand(i)->shape().dimensions() != operand.dimensions() ||
        hlo.operand(n + 1 + i)->shape().dimensions() != updates.dimensions()) {
      return Result();
    }
    widths.push_back(ByteWidth(hlo.operand(i)->shape().element_type()));
  }
  const xla::ScatterDimensionNumbers& dn = hlo.attrs().scatter_dimension_numbers;
  const int64_t rank = operand.rank();
  const int64_t vector_dim = dn.index_vector_dim();
  if (vector_dim < 0 || vector_dim > indices.rank()) return Result();
  const int64_t length = vector_dim < indices.rank() ? indices.dimensions(vector_dim) : 1;
  if (length != dn.scatter_dims_to_operand_dims_size()) return Result();
  for (int64_t d : dn.scatter_dims_to_operand_dims()) {
    if (d < 0 || d >= rank) return Result();
  }
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(dn.inserted_window_dims(), d) && !Contains(dn.input_batching_dims(), d)) {
      window_operand_dims.push_back(d);
    }
  }
  if (static_cast<int64_t>(window_operand_dims.size()) != dn.update_window_dims_size()) {
    return Result();
  }
  std::vector<int64_t> update_scatter_dims, index_batch_dims;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (!Contains(dn.update_window_dims(), d)) update_scatter_dims.push_back(d);
  }
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d != vector_dim) index_batch_dims.push_back(d);
  }
  if (update_scatter_dims.size() != index_batch_dims.size()) return Result();
  std::vector<int64_t> scatter_sizes;
  for (size_t k = 0; k < update_scatter_dims.size(); ++k) {
    scatter_sizes.push_back(updates.dimensions(update_scatter_dims[k]));
    if (scatter_sizes.back() != indices.dimensions(index_batch_dims[k])) return Result();
  }
  std::vector<int64_t> batching_pos;
  for (int64_t d : dn.scatter_indices_batching_dims()) {
    auto it = std::find(index_batch_dims.begin(), index_batch_dims.end(), d);
    if (it == index_batch_dims.end()) return Result();
    batching_pos.push_back(it - index_batch_dims.begin());
  }
  if (batching_pos.size() != static_cast<size_t>(dn.input_batching_dims_size())) return Result();
  std::vector<int64_t> window_size(rank, 1), window_dims;
  for (size_t j = 0; j < window_operand_dims.size(); ++j) {
    window_size[window_operand_dims[j]] = updates.dimensions(dn.update_window_dims(j));
    window_dims.push_back(window_size[window_operand_dims[j]]);
  }
  const std::vector<int64_t> update_window(dn.update_window_dims().begin(),
                                           dn.update_window_dims().end());
  // Rows: the last window dimension when it is contiguous on both sides.
  const bool contiguous_rows = !window_operand_dims.empty() &&
                               window_operand_dims.back() == rank - 1 &&
                               update_window.back() == updates.rank() - 1;
  const int64_t row_length = contiguous_rows ? window_dims.back() : 1;
  std::vector<int64_t> row_dims = window_dims;  // The window dims walked per row.
  if (contiguous_rows) row_dims.back() = 1;

  const CombinerForm form = n == 1 ? ClassifyCombiner(*hlo.to_apply()) : CombinerForm{};
  std::optional<CombineRowFn> row_combine;
  if (form.op != RowCombine::kNone &&
      hlo.to_apply()->root()->shape().element_type() == operand.element_type() &&
      hlo.operand(0)->shape().element_type() == hlo.operand(2)->shape().element_type() &&
      hlo.shape().element_type() == hlo.operand(0)->shape().element_type()) {
    row_combine = RowCombinerFor(hlo.operand(0)->shape().element_type());
  }
  runtime::KernelFunction combine = nullptr;
  if (!row_combine) {
    absl::StatusOr<CompiledKernel> combiner = compiler.Compile(*hlo.to_apply());
    if (!combiner.ok()) {
      if (combiner.status().code() == absl::StatusCode::kUnimplemented) return Result();
      return combiner.status();
    }
    if (combiner->num_buffers != 3 * n) return Result();
    combine = combiner->function;
  }
  const std::vector<int64_t> op_strides = RowMajorStrides(operand.dimensions());
  const std::vector<int64_t> up_strides = RowMajorStrides(updates.dimensions());
  const std::vector<int64_t> index_strides = RowMajorStrides(indices.dimensions());
  const std::vector<int64_t> operand_dims = operand.dimensions();
  const int64_t operand_count = ElementCount(operand);
  const int64_t update_count = ElementCount(updates);
  const std::vector<int64_t> scatter_to_operand(dn.scatter_dims_to_operand_dims().begin(),
                                                dn.scatter_dims_to_operand_dims().end());
  const std::vector<int64_t> input_batching(dn.input_batching_dims().begin(),
                                            dn.input_batching_dims().end());
  const int64_t index_rank = indices.rank();
  const IndexReadFn read = *read_index;
  // JAX's `.at[i].add(u)` and segment sums: a matrix whose rows are picked
  // by one index per update row, each update row a whole window row; and
  // histograms (bincount, jnp.histogram): a vector whose elements are picked
  // by one index per update element. Walked by a plain loop over the update
  // rows (same rows, same order).
  const bool matrix_rows = rank == 2 && updates.rank() == 2 && contiguous_rows &&
                           window_operand_dims == std::vector<int64_t>{1} &&
                           window_size[0] == 1 && window_size[1] <= operand_dims[1];
  const bool vector_elements = rank == 1 && updates.rank() == 1 && window_operand_dims.empty();
  const bool one_index_per_row =
      (matrix_rows || vector_elements) && length == 1 && scatter_sizes.size() == 1 &&
      batching_pos.empty() && scatter_to_operand[0] == 0 &&
      update_scatter_dims == std::vector<int64_t>{0};
  const std::optional<ScatterScalarsFn> scatter_scalars =
      row_combine && one_index_per_row && vector_elements
          ? ScatterScalarsFor(operand.element_type(), indices.element_type())
          : std::nullopt;
  // Point scatters (every window one element, no batching dims: XLA's own
  // expansion of select-and-scatter, JAX's `x.at[i, j].add(u)`): the operand
  // offset of each update, in update order (-1 when out of bounds), is listed
  // first, then the typed scalar loop combines. The generic walk below spent
  // ~30 ns per update on them.
  const bool point_updates =
      row_combine && !scatter_scalars && batching_pos.empty() &&
      std::all_of(window_size.begin(), window_size.end(), [](int64_t w) { return w == 1; });
  const std::optional<ScatterScalarsFn> scatter_points =
      point_updates ? ScatterScalarsFor(operand.element_type(), xla::S64) : std::nullopt;
  PointIndexing points;
  if (scatter_points) {
    points.length = length;
    points.component_stride = vector_dim < index_rank ? index_strides[vector_dim] : 0;
    for (size_t k = 0; k < scatter_sizes.size(); ++k) {
      points.sizes.push_back(scatter_sizes[k]);
      points.strides.push_back(index_strides[index_batch_dims[k]]);
    }
    for (int64_t k = 0; k < length; ++k) {
      points.operand_sizes.push_back(operand_dims[scatter_to_operand[k]]);
      points.operand_strides.push_back(op_strides[scatter_to_operand[k]]);
    }
  }
  // Calls row(o, u) for every in-bounds row in update order: o and u are the
  // element offsets of its first element in the operand and the updates.
  auto for_each_row = [=](const uint8_t* index_data, auto&& row) {
    if (one_index_per_row) {
      const int64_t index_stride = index_strides[index_batch_dims[0]];
      for (int64_t g = 0; g < scatter_sizes[0]; ++g) {
        const int64_t start = read(index_data, g * index_stride);
        if (start < 0 || start >= operand_dims[0]) continue;
        row(start * op_strides[0], g * up_strides[0]);
      }
      return;
    }
    std::vector<int64_t> g(scatter_sizes.size(), 0), start(rank), w(row_dims.size());
    do {
      int64_t base = 0;
      for (size_t k = 0; k < g.size(); ++k) base += g[k] * index_strides[index_batch_dims[k]];
      std::fill(start.begin(), start.end(), 0);
      for (int64_t k = 0; k < length; ++k) {
        const int64_t pos = vector_dim < index_rank ? base + k * index_strides[vector_dim] : base;
        start[scatter_to_operand[k]] = read(index_data, pos);
      }
      for (size_t i = 0; i < batching_pos.size(); ++i) start[input_batching[i]] = g[batching_pos[i]];
      bool in_bounds = true;
      int64_t op_base = 0, up_base = 0;
      for (int64_t d = 0; d < rank; ++d) {
        if (start[d] < 0 || start[d] > operand_dims[d] - window_size[d]) in_bounds = false;
        op_base += start[d] * op_strides[d];
      }
      if (!in_bounds) continue;
      for (size_t k = 0; k < g.size(); ++k) up_base += g[k] * up_strides[update_scatter_dims[k]];
      std::fill(w.begin(), w.end(), 0);
      do {
        int64_t o = op_base, u = up_base;
        for (size_t j = 0; j < w.size(); ++j) {
          o += w[j] * op_strides[window_operand_dims[j]];
          u += w[j] * up_strides[update_window[j]];
        }
        row(o, u);
      } while (Bump(w, row_dims));
    } while (Bump(g, scatter_sizes));
  };
  return Result([=](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(buffers[2 * n + 1 + i], buffers[i], operand_count * widths[i]);
    }
    if (update_count == 0) return absl::OkStatus();
    for (int64_t s : window_dims) {
      if (s == 0) return absl::OkStatus();
    }
    const uint8_t* index_data = static_cast<const uint8_t*>(buffers[n]);
    if (scatter_scalars) {
      (*scatter_scalars)(form.op, form.update_first, buffers[3], operand_count, buffers[2],
                         index_data, index_strides[index_batch_dims[0]], scatter_sizes[0]);
      return absl::OkStatus();
    }
    if (scatter_points) {
      const std::vector<int64_t> offsets =
          ListPointOffsets(points, indices.element_type(), index_data, update_count);
      (*scatter_points)(form.op, form.update_first, buffers[3], operand_count, buffers[2],
                        reinterpret_cast<const uint8_t*>(offsets.data()), 1, update_count);
      return absl::OkStatus();
    }
    if (row_combine) {
      uint8_t* out = static_cast<uint8_t*>(buffers[3]);
      const uint8_t* up = static_cast<const uint8_t*>(buffers[2]);
      const int64_t w = widths[0];
      const CombineRowFn apply = *row_combine;
      // Result elements [lo, hi) get their updates from this walk.
      auto walk = [&](int64_t lo, int64_t hi) {
        for_each_row(index_data, [&](int64_t o, int64_t u) {
          const int64_t b = std::max(o, lo), e = std::min(o + row_length, hi);
          if (b < e) apply(form.op, form.update_first, out + b * w, up + (u + b - o) * w, e - b);
        });
      };
      const int64_t threads = pool == nullptr ? 1 : pool->num_threads();
      // Each thread walks every update: worth it for long rows and much data.
      if (threads > 1 && row_length >= 64 && update_count >= (int64_t{1} << 16)) {
        const int64_t chunk = (operand_count + threads - 1) / threads;
        pool->ParallelFor(threads, 1, [&](int64_t begin, int64_t end) {
          for (int64_t t = begin; t < end; ++t) {
            walk(t * chunk, std::min(operand_count, (t + 1) * chunk));
          }
        });
      } else {
        walk(0, operand_count);
      }
      return absl::OkStatus();
    }
    std::vector<void*> args(3 * n);
    std::vector<uint64_t> scratch(2 * n);  // Combined values, then copied out.
    for_each_row(index_data, [&](int64_t o0, int64_t u0) {
      for (int64_t j = 0; j < row_length; ++j) {
        for (int64_t i = 0; i < n; ++i) {
          args[i] = static_cast<uint8_t*>(buffers[2 * n + 1 + i]) + (o0 + j) * widths[i];
          args[n + i] = static_cast<uint8_t*>(buffers[n + 1 + i]) + (u0 + j) * widths[i];
          args[2 * n + i] = &scratch[i];
        }
        combine(args.data(), 0, 1);
        for (int64_t i = 0; i < n; ++i) std::memcpy(args[i], &scratch[i], widths[i]);
      }
    });
    return absl::OkStatus();
  });
}

// Consecutive ascending dimension numbers (empty counts): the dims merge
// into one with the stride of the last.
bool Consecutive(const std::vector<int64_t>& dims) {
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] != dims[i - 1] + 1) return false;
  }
  return true;
}

// dot of f32 or f64 operands through the project's blocked GEMM (the kernel
// behind the interpreter's dot), and s8 x s8 -> s32 through its exact
// integer GEMM (eval::GemmS8), when each operand's free dimensions and
// contracting dimensions are runs of adjacent dimensions, so every batch is
// one strided matrix product. Rows or columns of each product are split over
// threads.
absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeDot(
    const HloInstruction& hlo) {
  using Result = std::optional<runtime::LibraryCallThunk::Function>;
  if (hlo.operand_count() != 2) return Result();
  const Shape& lhs = hlo.operand(0)->shape();
  const Shape& rhs = hlo.operand(1)->shape();
  const PrimitiveType type = hlo.shape().element_type();
  const bool s8 = type == xla::S32 && lhs.element_type() == xla::S8 && rhs.element_type() == xla::S8;
  if (!s8 && ((type != xla::F32 && type != xla::F64) || lhs.element_type() != type ||
              rhs.element_type() != type)) {
    return Result();
  }
  const xla::DotDimensionNumbers& dn = hlo.attrs().dot_dimension_numbers;
  const std::vector<int64_t> lb(dn.lhs_batch_dimensions().begin(), dn.lhs_batch_dimensions().end());
  const std::vector<int64_t> rb(dn.rhs_batch_dimensions().begin(), dn.rhs_batch_dimensions().end());
  const std::vector<int64_t> lc(dn.lhs_contracting_dimensions().begin(),
                                dn.lhs_contracting_dimensions().end());
  const std::vector<int64_t> rc(dn.rhs_contracting_dimensions().begin(),
                                dn.rhs_contracting_dimensions().end());
  if (lb.size() != rb.size() || lc.size() != rc.size()) return Result();
  std::vector<int64_t> lf, rf;
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (!std::count(lb.begin(), lb.end(), d) && !std::count(lc.begin(), lc.end(), d)) lf.push_back(d);
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (!std::count(rb.begin(), rb.end(), d) && !std::count(rc.begin(), rc.end(), d)) rf.push_back(d);
  }
  if (!Consecutive(lf) || !Consecutive(rf) || !Consecutive(lc) || !Consecutive(rc)) return Result();
  const std::vector<int64_t> ls = RowMajorStrides(lhs.dimensions());
  const std::vector<int64_t> rs = RowMajorStrides(rhs.dimensions());
  int64_t m = 1, n = 1, k = 1;
  for (int64_t d : lf) m *= lhs.dimensions(d);
  for (int64_t d : rf) n *= rhs.dimensions(d);
  for (size_t i = 0; i < lc.size(); ++i) {
    if (lhs.dimensions(lc[i]) != rhs.dimensions(rc[i])) return Result();
    k *= lhs.dimensions(lc[i]);
  }
  std::vector<int64_t> batch_sizes;
  for (size_t i = 0; i < lb.size(); ++i) {
    if (lhs.dimensions(lb[i]) != rhs.dimensions(rb[i])) return Result();
    batch_sizes.push_back(lhs.dimensions(lb[i]));
  }
  if (ElementCount(hlo.shape()) != m * n * [&] {
        int64_t b = 1;
        for (int64_t s : batch_sizes) b *= s;
        return b;
      }()) {
    return Result();
  }
  const int64_t a_rs = lf.empty() ? 0 : ls[lf.back()];
  const int64_t a_cs = lc.empty() ? 0 : ls[lc.back()];
  const int64_t b_rs = rc.empty() ? 0 : rs[rc.back()];
  const int64_t b_cs = rf.empty() ? 0 : rs[rf.back()];
  std::vector<int64_t> lhs_batch_strides, rhs_batch_strides;
  for (size_t i = 0; i < lb.size(); ++i) {
    lhs_batch_strides.push_back(ls[lb[i]]);
    rhs_batch_strides.push_back(rs[rb[i]]);
  }
  int64_t batches = 1;
  for (int64_t s : batch_sizes) batches *= s;
  // T: the operands' element type, C: the result's; Args: the kernel's
  // arguments (eval::GemmArgs<T> or eval::GemmS8Args).
  auto run = [=](auto zero, auto c_zero, auto args_type, absl::Span<void* const> buffers,
                 runtime::ThreadPool* pool) {
    using T = decltype(zero);
    using C = decltype(c_zero);
    using Args = decltype(args_type);
    const T* a = static_cast<const T*>(buffers[0]);
    const T* b = static_cast<const T*>(buffers[1]);
    C* c = static_cast<C*>(buffers[2]);
    // A block of rows packs all of B again, a block of columns all of A, so
    // the split is along the dimension whose repacked operand is smaller (rows
    // when m >= n), into one block per product on one thread, else one block
    // per thread over all batches (an idle caller takes a late worker's block,
    // so a busy machine still balances), each at least kMinBlock long. (At
    // [512,1024] x [1024,1024] s8 on two threads this used to be four blocks
    // of rows, packing the larger B four times over.)
    constexpr int64_t kMinBlock = 64;
    const bool by_columns = n > m;
    const int64_t extent = by_columns ? n : m;
    const int64_t threads = pool == nullptr ? 1 : pool->num_threads();
    const int64_t blocks = std::clamp<int64_t>((threads + batches - 1) / batches, 1,
                                               (extent + kMinBlock - 1) / kMinBlock);
    const int64_t block = (extent + blocks - 1) / blocks;
    auto task = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t batch = t / blocks, first = (t % blocks) * block;
        int64_t a_off = 0, b_off = 0, rest = batch;
        for (int64_t i = static_cast<int64_t>(batch_sizes.size()) - 1; i >= 0; --i) {
          const int64_t idx = rest % batch_sizes[i];
          rest /= batch_sizes[i];
          a_off += idx * lhs_batch_strides[i];
          b_off += idx * rhs_batch_strides[i];
        }
        const int64_t row = by_columns ? 0 : first, column = by_columns ? first : 0;
        Args g;
        g.m = by_columns ? m : std::min(block, m - row);
        g.n = by_columns ? std::min(block, n - column) : n;
        g.k = k;
        g.a = a + a_off + row * a_rs;
        g.a_rs = a_rs;
        g.a_cs = a_cs;
        g.b = b + b_off + column * b_cs;
        g.b_rs = b_rs;
        g.b_cs = b_cs;
        g.c = c + batch * m * n + row * n + column;
        g.ldc = n;
        if constexpr (std::is_same_v<Args, eval::GemmS8Args>) {
          eval::GemmS8(g);
        } else {
          eval::Gemm(g);
        }
      }
    };
    const int64_t tasks = batches * blocks;
    if (pool != nullptr && tasks > 1 && m * n * k > (int64_t{1} << 16)) {
      pool->ParallelFor(tasks, 1, task);
    } else {
      task(0, tasks);
    }
  };
  if (m == 0 || n == 0 || batches == 0) {
    return Result([](absl::Span<void* const>, runtime::ThreadPool*) { return absl::OkStatus(); });
  }
  return Result([=](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
    if (s8) {
      run(int8_t{}, int32_t{}, eval::GemmS8Args{}, buffers, pool);
    } else if (type == xla::F32) {
      run(float{}, float{}, eval::GemmArgs<float>{}, buffers, pool);
    } else {
      run(double{}, double{}, eval::GemmArgs<double>{}, buffers, pool);
    }
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeLibraryCall(
    const HloInstruction& hlo, KernelCompiler& compiler) {
  switch (hlo.opcode()) {
    case HloOpcode::kSort:
      return MakeSort(hlo, compiler);
    case HloOpcode::kTopK:
      return MakeTopK(hlo, hlo.attrs().largest);
    case HloOpcode::kScatter:
      return MakeScatter(hlo, compiler);
    case HloOpcode::kDot:
      return MakeDot(hlo);
    case HloOpcode::kFft:
      return MakeFft(hlo);
    case HloOpcode::kReduceWindow:
      return MakeRunningReduction(hlo);
    case HloOpcode::kCustomCall:
      if (hlo.attrs().custom_call_target == "TopK") return MakeTopK(hlo, /*largest=*/true);
      return std::optional<runtime::LibraryCallThunk::Function>();
    default:
      return std::optional<runtime::LibraryCallThunk::Function>();
  }
}

}  // namespace host
}  // namespace hloc
