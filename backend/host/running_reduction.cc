// Running reductions on the host (see running_reduction.h).
#include "backend/host/running_reduction.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/ops.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace host {
namespace {

struct Running {
  int64_t dimension;
  bool reverse;  // output i reduces inputs i..n-1
  HloOpcode op;
};

bool DirectlyComputed(PrimitiveType type) {
  switch (type) {
    case xla::PRED: case xla::S8: case xla::S16: case xla::S32: case xla::S64:
    case xla::U8: case xla::U16: case xla::U32: case xla::U64:
    case xla::F16: case xla::BF16: case xla::F32: case xla::F64:
      return true;
    default:
      return false;
  }
}

// Whether init, folded into the accumulator for every padding position as
// well, would leave it as it is: always for idempotent ops; for add and xor
// a constant 0, for multiply a constant 1.
bool PaddingAddsNothing(HloOpcode op, const HloInstruction& init) {
  switch (op) {
    case HloOpcode::kMaximum: case HloOpcode::kMinimum: case HloOpcode::kAnd: case HloOpcode::kOr:
      return true;
    case HloOpcode::kAdd: case HloOpcode::kXor: case HloOpcode::kMultiply:
      break;
    default:
      return false;
  }
  if (init.opcode() != HloOpcode::kConstant || init.literal().element_count() != 1) return false;
  return init.literal().GetAsDouble(0) == (op == HloOpcode::kMultiply ? 1.0 : 0.0);
}

std::optional<Running> Match(const HloInstruction& hlo) {
  if (hlo.opcode() != HloOpcode::kReduceWindow || hlo.operand_count() != 2 ||
      !hlo.shape().IsArray() || hlo.to_apply() == nullptr) {
    return std::nullopt;
  }
  const Shape& in = hlo.operand(0)->shape();
  if (!in.IsArray() || !in.is_static() || !hlo.shape().is_static() ||
      !in.SameDimensions(hlo.shape()) || in.element_type() != hlo.shape().element_type() ||
      !DirectlyComputed(in.element_type())) {
    return std::nullopt;
  }
  std::optional<eval::SimpleReducer> reducer = eval::MatchSimpleReducer(*hlo.to_apply());
  if (!reducer.has_value()) return std::nullopt;
  const HloOpcode op = reducer->opcode;
  const bool bitwise = op == HloOpcode::kAnd || op == HloOpcode::kOr || op == HloOpcode::kXor;
  if (bitwise && IsFloatingPoint(in.element_type())) return std::nullopt;
  if (!PaddingAddsNothing(op, *hlo.operand(1))) return std::nullopt;
  const xla::Window& window = hlo.attrs().window;
  if (window.dimensions_size() != in.rank()) return std::nullopt;
  std::optional<Running> found;
  for (int64_t d = 0; d < in.rank(); ++d) {
    const xla::WindowDimension& w = window.dimensions(d);
    if (w.stride() > 1 || w.window_dilation() > 1 || w.base_dilation() > 1 ||
        w.window_reversal()) {
      return std::nullopt;
    }
    if (w.size() == 1 && w.padding_low() == 0 && w.padding_high() == 0) continue;
    const int64_t n = in.dimensions(d);
    if (found.has_value() || n < 2 || w.size() != n) return std::nullopt;
    if (w.padding_low() == n - 1 && w.padding_high() == 0) {
      found = Running{d, false, op};
    } else if (w.padding_low() == 0 && w.padding_high() == n - 1) {
      found = Running{d, true, op};
    } else {
      return std::nullopt;
    }
  }
  return found;
}

// Lines walked together where the dimension is the innermost one: as many
// independent accumulators as that.
constexpr int64_t kLines = 8;
// Elements of a row walked together otherwise.
constexpr int64_t kRow = 64;

template <typename Tag, typename F>
void Fold(const Running& r, const std::vector<int64_t>& dims, const void* input, const void* init,
          void* output, runtime::ThreadPool* pool, F f) {
  using C = typename Tag::Compute;
  using S = typename Tag::Storage;
  const S* in = static_cast<const S*>(input);
  S* out = static_cast<S*>(output);
  const C init_value = Tag::Load(*static_cast<const S*>(init));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < r.dimension; ++d) outer *= dims[d];
  for (size_t d = r.dimension + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t n = dims[r.dimension];
  if (outer == 0 || inner == 0 || n == 0) return;
  auto at = [&](int64_t s) { return r.reverse ? n - 1 - s : s; };
  // Units: lines (inner == 1), or kRow-wide pieces of a row otherwise.
  const int64_t pieces = inner == 1 ? 1 : (inner + kRow - 1) / kRow;
  const int64_t units = outer * pieces;
  auto task = [&](int64_t begin, int64_t end) {
    C acc[kRow > kLines ? kRow : kLines];
    if (inner == 1) {
      for (int64_t first = begin; first < end; first += kLines) {
        const int64_t count = std::min(kLines, end - first);
        std::fill(acc, acc + count, init_value);
        for (int64_t s = 0; s < n; ++s) {
          const int64_t j = at(s);
          for (int64_t v = 0; v < count; ++v) {
            const int64_t k = (first + v) * n + j;
            acc[v] = f(acc[v], Tag::Load(in[k]));
            out[k] = Tag::Store(acc[v]);
          }
        }
      }
      return;
    }
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t o = unit / pieces, i0 = (unit % pieces) * kRow;
      const int64_t width = std::min(kRow, inner - i0);
      std::fill(acc, acc + width, init_value);
      for (int64_t s = 0; s < n; ++s) {
        const int64_t row = (o * n + at(s)) * inner + i0;
        for (int64_t i = 0; i < width; ++i) {
          acc[i] = f(acc[i], Tag::Load(in[row + i]));
          out[row + i] = Tag::Store(acc[i]);
        }
      }
    }
  };
  const int64_t per_unit = n * (inner == 1 ? 1 : std::min(kRow, inner));
  runtime::ParallelForOrInline(pool, units, std::max<int64_t>(1, 16384 / per_unit), task);
}

// The interpreter's binary ops (hlo/evaluator/reduce_window.cc).
template <typename Tag>
void RunTyped(const Running& r, const std::vector<int64_t>& dims, absl::Span<void* const> buffers,
              runtime::ThreadPool* pool) {
  using C = typename Tag::Compute;
  auto fold = [&](auto f) { Fold<Tag>(r, dims, buffers[0], buffers[1], buffers[2], pool, f); };
  if constexpr (eval::kIsPred<Tag>) {
    switch (r.op) {
      case HloOpcode::kAnd: case HloOpcode::kMultiply: case HloOpcode::kMinimum:
        return fold([](bool a, bool b) { return a && b; });
      case HloOpcode::kXor:
        return fold([](bool a, bool b) { return a != b; });
      default:
        return fold([](bool a, bool b) { return a || b; });
    }
  } else if constexpr (eval::kIsInt<Tag>) {
    using U = std::make_unsigned_t<C>;
    using W = std::conditional_t<(sizeof(C) < 8), uint32_t, uint64_t>;
    switch (r.op) {
      case HloOpcode::kAdd:
        return fold([](C a, C b) { return static_cast<C>(static_cast<W>(static_cast<U>(a)) + static_cast<W>(static_cast<U>(b))); });
      case HloOpcode::kMultiply:
        return fold([](C a, C b) { return static_cast<C>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))); });
      case HloOpcode::kMaximum: return fold([](C a, C b) { return a < b ? b : a; });
      case HloOpcode::kMinimum: return fold([](C a, C b) { return b < a ? b : a; });
      case HloOpcode::kAnd: return fold([](C a, C b) { return static_cast<C>(a & b); });
      case HloOpcode::kOr: return fold([](C a, C b) { return static_cast<C>(a | b); });
      default: return fold([](C a, C b) { return static_cast<C>(a ^ b); });
    }
  } else {
    switch (r.op) {
      case HloOpcode::kAdd: return fold([](C a, C b) { return a + b; });
      case HloOpcode::kMultiply: return fold([](C a, C b) { return static_cast<C>(a * b); });
      case HloOpcode::kMaximum:
        return fold([](C a, C b) {
          if (std::isnan(a)) return a;
          if (std::isnan(b)) return b;
          return a < b ? b : a;
        });
      default:
        return fold([](C a, C b) {
          if (std::isnan(a)) return a;
          if (std::isnan(b)) return b;
          return b < a ? b : a;
        });
    }
  }
}

}  // namespace

bool IsRunningReduction(const HloInstruction& hlo) { return Match(hlo).has_value(); }

absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeRunningReduction(
    const HloInstruction& hlo) {
  using Function = runtime::LibraryCallThunk::Function;
  const std::optional<Running> running = Match(hlo);
  if (!running.has_value()) return std::optional<Function>();
  const Running r = *running;
  const std::vector<int64_t> dims = hlo.shape().dimensions();
  const PrimitiveType type = hlo.shape().element_type();
  return std::optional<Function>(
      [r, dims, type](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
        return eval::DispatchType</*kWithComplex=*/false>(type, [&](auto tag) -> absl::Status {
          RunTyped<decltype(tag)>(r, dims, buffers, pool);
          return absl::OkStatus();
        });
      });
}

}  // namespace host
}  // namespace hloc
