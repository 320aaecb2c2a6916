// Helpers shared by dot and convolution: copying a literal into a plain
// buffer of its compute type with permuted dimensions, and a GEMM entry
// point for any compute type (the blocked kernel for float/double, plain
// loops with wraparound for integers and complex).
#ifndef HLOC_HLO_EVALUATOR_COMPUTE_BUFFERS_H_
#define HLOC_HLO_EVALUATOR_COMPUTE_BUFFERS_H_

#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"
#include "hlo/evaluator/gemm_kernel.h"
#include "hlo/evaluator/ops.h"
#include "hlo/literal.h"

namespace hloc {
namespace eval {

// Copies `lit` (element type of Tag) into compute type C with its dimensions
// reordered to perm[0], perm[1], ... (row-major).
template <typename Tag, typename C>
std::vector<C> PermuteToCompute(const Literal& lit, absl::Span<const int64_t> perm) {
  const std::vector<int64_t>& dims = lit.shape().dimensions();
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  const int64_t n = lit.element_count();
  std::vector<C> out(n);
  const auto* src = reinterpret_cast<const typename Tag::Storage*>(lit.raw());
  const int64_t rank = static_cast<int64_t>(perm.size());
  if (n == 0) return out;
  if (rank == 0) {
    out[0] = static_cast<C>(Tag::Load(src[0]));
    return out;
  }
  std::vector<int64_t> pdims(rank), pstrides(rank), index(rank, 0);
  for (int64_t i = 0; i < rank; ++i) {
    pdims[i] = dims[perm[i]];
    pstrides[i] = strides[perm[i]];
  }
  const int64_t inner = pdims[rank - 1], inner_stride = pstrides[rank - 1];
  int64_t s = 0, o = 0;
  while (true) {
    for (int64_t i = 0; i < inner; ++i) {
      out[o++] = static_cast<C>(Tag::Load(src[s + i * inner_stride]));
    }
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      s += pstrides[d];
      if (++index[d] < pdims[d]) break;
      s -= pstrides[d] * pdims[d];
      index[d] = 0;
    }
    if (d < 0) break;
  }
  return out;
}

template <typename C>
C WrappingMulAdd(C acc, C a, C b) {
  if constexpr (std::is_integral<C>::value) {
    using U = std::make_unsigned_t<C>;
    using W = std::conditional_t<(sizeof(C) < 8), uint32_t, uint64_t>;
    return static_cast<C>(static_cast<U>(
        static_cast<U>(acc) +
        static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b)))));
  } else {
    return acc + a * b;
  }
}

template <typename C>
void GemmAny(const GemmArgs<C>& g) {
  if constexpr (std::is_same<C, float>::value || std::is_same<C, double>::value) {
    Gemm(g);
  } else {
    for (int64_t i = 0; i < g.m; ++i) {
      C* crow = g.c + i * g.ldc;
      if (!g.accumulate) {
        for (int64_t j = 0; j < g.n; ++j) crow[j] = C(0);
      }
      for (int64_t k = 0; k < g.k; ++k) {
        const C a = g.a[i * g.a_rs + k * g.a_cs];
        const C* b = g.b + k * g.b_rs;
        for (int64_t j = 0; j < g.n; ++j) crow[j] = WrappingMulAdd(crow[j], a, b[j * g.b_cs]);
      }
    }
  }
}

}  // namespace eval
}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_COMPUTE_BUFFERS_H_
