// dot with general dimension numbers. Operands are brought to [batch, M, K]
// and [batch, K, N] views (a copy only when the contracting or free
// dimensions are not already contiguous in that order), multiplied with the
// blocked GEMM, and the [batch, M, N] product is exactly the result's
// row-major order (batch dims, lhs free dims, rhs free dims).
//
// Accumulation: f16/bf16/f32 in float, f64 in double, complex in its own
// type, integers in the result type with wraparound. Operands of a type other
// than the result's are converted to the result type first.
#include <algorithm>
#include <complex>
#include <numeric>
#include <vector>

#include "absl/algorithm/container.h"
#include "hlo/evaluator/compute_buffers.h"
#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/gemm_kernel.h"
#include "hlo/evaluator/ops.h"
#include "hlo/evaluator/parallel.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

struct DotPlan {
  std::vector<int64_t> lhs_perm, rhs_perm;  // batch, free, contracting / batch, contracting, free
  int64_t batch = 1, m = 1, n = 1, k = 1;
};

absl::StatusOr<DotPlan> PlanDot(const HloInstruction& hlo, const Shape& lhs, const Shape& rhs) {
  const xla::DotDimensionNumbers& dn = hlo.attrs().dot_dimension_numbers;
  DotPlan plan;
  if (dn.lhs_batch_dimensions_size() != dn.rhs_batch_dimensions_size() ||
      dn.lhs_contracting_dimensions_size() != dn.rhs_contracting_dimensions_size()) {
    return InstructionError(hlo, "batch or contracting dimension lists differ in length");
  }
  std::vector<bool> lhs_used(lhs.rank(), false), rhs_used(rhs.rank(), false);
  auto use = [&](std::vector<bool>& used, int64_t d) {
    if (d < 0 || d >= static_cast<int64_t>(used.size()) || used[d]) return false;
    used[d] = true;
    return true;
  };
  for (int i = 0; i < dn.lhs_batch_dimensions_size(); ++i) {
    const int64_t l = dn.lhs_batch_dimensions(i), r = dn.rhs_batch_dimensions(i);
    if (!use(lhs_used, l) || !use(rhs_used, r) || lhs.dimensions(l) != rhs.dimensions(r)) {
      return InstructionError(hlo, "bad batch dimensions");
    }
    plan.lhs_perm.push_back(l);
    plan.rhs_perm.push_back(r);
    plan.batch *= lhs.dimensions(l);
  }
  std::vector<int64_t> lhs_contract, rhs_contract;
  for (int i = 0; i < dn.lhs_contracting_dimensions_size(); ++i) {
    const int64_t l = dn.lhs_contracting_dimensions(i), r = dn.rhs_contracting_dimensions(i);
    if (!use(lhs_used, l) || !use(rhs_used, r) || lhs.dimensions(l) != rhs.dimensions(r)) {
      return InstructionError(hlo, "bad contracting dimensions");
    }
    lhs_contract.push_back(l);
    rhs_contract.push_back(r);
    plan.k *= lhs.dimensions(l);
  }
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (!lhs_used[d]) {
      plan.lhs_perm.push_back(d);
      plan.m *= lhs.dimensions(d);
    }
  }
  for (int64_t d : lhs_contract) plan.lhs_perm.push_back(d);
  for (int64_t d : rhs_contract) plan.rhs_perm.push_back(d);
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (!rhs_used[d]) {
      plan.rhs_perm.push_back(d);
      plan.n *= rhs.dimensions(d);
    }
  }
  return plan;
}

// Generic triple loop for integer and complex types (i, k, j order).
template <typename C>
void SimpleMatmul(const DotPlan& p, const C* a, const C* b, C* c) {
  for (int64_t bt = 0; bt < p.batch; ++bt) {
    const C* ab = a + bt * p.m * p.k;
    const C* bb = b + bt * p.k * p.n;
    C* cb = c + bt * p.m * p.n;
    for (int64_t i = 0; i < p.m; ++i) {
      C* crow = cb + i * p.n;
      for (int64_t j = 0; j < p.n; ++j) crow[j] = C(0);
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const C av = ab[i * p.k + kk];
        const C* brow = bb + kk * p.n;
        if constexpr (std::is_integral<C>::value) {
          using U = std::make_unsigned_t<C>;
          using W = std::conditional_t<(sizeof(C) < 8), uint32_t, uint64_t>;
          for (int64_t j = 0; j < p.n; ++j) {
            crow[j] = static_cast<C>(static_cast<U>(crow[j]) +
                                     static_cast<U>(static_cast<W>(static_cast<U>(av)) *
                                                    static_cast<W>(static_cast<U>(brow[j]))));
          }
        } else {
          for (int64_t j = 0; j < p.n; ++j) crow[j] += av * brow[j];
        }
      }
    }
  }
}

template <typename C>
void FastMatmul(const DotPlan& p, const C* a, const C* b, C* c, int threads) {
  // Split across batches when there are enough, else across row blocks.
  if (p.batch >= threads || p.m < 2 * threads) {
    ParallelFor(threads, p.batch, 2 * p.m * p.n * p.k, [&](int64_t begin, int64_t end) {
      for (int64_t bt = begin; bt < end; ++bt) {
        GemmArgs<C> g;
        g.m = p.m; g.n = p.n; g.k = p.k;
        g.a = a + bt * p.m * p.k; g.a_rs = p.k; g.a_cs = 1;
        g.b = b + bt * p.k * p.n; g.b_rs = p.n; g.b_cs = 1;
        g.c = c + bt * p.m * p.n; g.ldc = p.n;
        Gemm(g);
      }
    });
    return;
  }
  for (int64_t bt = 0; bt < p.batch; ++bt) {
    ParallelFor(threads, p.m, 2 * p.n * p.k, [&](int64_t begin, int64_t end) {
      GemmArgs<C> g;
      g.m = end - begin; g.n = p.n; g.k = p.k;
      g.a = a + bt * p.m * p.k + begin * p.k; g.a_rs = p.k; g.a_cs = 1;
      g.b = b + bt * p.k * p.n; g.b_rs = p.n; g.b_cs = 1;
      g.c = c + bt * p.m * p.n + begin * p.n; g.ldc = p.n;
      Gemm(g);
    });
  }
}

template <typename OutTag>
absl::StatusOr<Literal> DotTyped(const HloInstruction& hlo, const Literal& lhs,
                                 const Literal& rhs, const DotPlan& plan, EvalContext& ctx) {
  if constexpr (kIsPred<OutTag>) {
    return InstructionUnimplemented(hlo, "pred result");
  } else {
  using C = typename OutTag::Compute;
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  if (out.element_count() != plan.batch * plan.m * plan.n) {
    return InstructionError(hlo, "result shape does not match the dot dimensions");
  }
  // Operands converted to the result's compute type and permuted.
  auto prepare = [&](const Literal& lit, const std::vector<int64_t>& perm) {
    return DispatchType(lit.shape().element_type(), [&](auto tag) -> absl::StatusOr<std::vector<C>> {
      using InTag = decltype(tag);
      using IC = typename InTag::Compute;
      if constexpr (kIsComplex<InTag> && !kIsComplex<OutTag>) {
        return InstructionUnimplemented(hlo, "complex operands with a real result");
      } else if constexpr (kIsPred<InTag> || (!kIsComplex<OutTag> && !std::is_convertible<IC, C>::value)) {
        return InstructionUnimplemented(hlo, "unsupported operand type");
      } else {
        return PermuteToCompute<InTag, C>(lit, perm);
      }
    });
  };
  HLOC_ASSIGN_OR_RETURN(std::vector<C> a, prepare(lhs, plan.lhs_perm));
  HLOC_ASSIGN_OR_RETURN(std::vector<C> b, prepare(rhs, plan.rhs_perm));
  auto* dst = reinterpret_cast<typename OutTag::Storage*>(out.mutable_raw());
  if constexpr (std::is_same<C, float>::value || std::is_same<C, double>::value) {
    if constexpr (std::is_same<typename OutTag::Storage, C>::value) {
      FastMatmul<C>(plan, a.data(), b.data(), reinterpret_cast<C*>(dst), ctx.num_threads());
    } else {
      std::vector<C> c(out.element_count());
      FastMatmul<C>(plan, a.data(), b.data(), c.data(), ctx.num_threads());
      for (int64_t i = 0; i < out.element_count(); ++i) dst[i] = OutTag::Store(c[i]);
    }
  } else {
    std::vector<C> c(out.element_count());
    SimpleMatmul<C>(plan, a.data(), b.data(), c.data());
    for (int64_t i = 0; i < out.element_count(); ++i) dst[i] = OutTag::Store(c[i]);
  }
  return std::move(out);
  }
}

}  // namespace

absl::StatusOr<Literal> EvalDot(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  const Literal& lhs = *ops[0];
  const Literal& rhs = *ops[1];
  if (ops.size() != 2) return InstructionUnimplemented(hlo, "sparse dot is not supported");
  if (!lhs.shape().IsArray() || !rhs.shape().IsArray() || !hlo.shape().IsArray()) {
    return InstructionError(hlo, "operands and result must be arrays");
  }
  HLOC_ASSIGN_OR_RETURN(DotPlan plan, PlanDot(hlo, lhs.shape(), rhs.shape()));
  const PrimitiveType out_type = hlo.shape().element_type();
  if (out_type == xla::PRED) return InstructionUnimplemented(hlo, "dot producing pred");
  return DispatchType(out_type, [&](auto tag) {
    return DotTyped<decltype(tag)>(hlo, lhs, rhs, plan, ctx);
  });
}

}  // namespace eval
}  // namespace hloc
