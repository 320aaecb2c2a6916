// convolution with any dim_labels, strides, padding (negative too), lhs
// (base) and rhs (window) dilation, window reversal, feature_group_count and
// batch_group_count.
//
// Operands are first copied to canonical layouts in the compute type:
//   In [B][Cin][input spatial...]   Ker [O][Ci][kernel spatial...]
//   Out[B'][O][output spatial...]   (B' = B / batch_group_count)
// Output features split into Q = feature_group_count * batch_group_count
// groups of Oq; group q reads input features q*Ci.. (feature groups) or
// input batches q*B'.. (batch groups, XLA's "output feature o uses batch
// group o / (O / batch_group_count)").
//
// Two GEMM formulations cover the shapes that occur:
//  A. many output positions (forward and input-gradient convolutions):
//     for each kernel position, Out[b][group] += Ker[:, :, k] x X_k where
//     X_k[ci][y] is the input shifted to kernel position k (a view when the
//     shift is the identity, else gathered with zeros for padding);
//  B. few output positions, large kernels (weight gradients): for each
//     output position y, Out[:, group, y] = X_y x Ker_group^T with
//     X_y[b][(ci, k)] the input window at y.
// Per-dimension index tables (input index or -1 for each kernel and output
// position) make the gathers branch-light.
#include <algorithm>
#include <complex>
#include <vector>

#include "hlo/evaluator/compute_buffers.h"
#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/ops.h"
#include "hlo/evaluator/parallel.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

struct ConvPlan {
  int64_t batch = 0, out_batch = 0, in_features = 0, ci = 0, out_features = 0;
  int64_t groups = 1, oq = 0;
  bool batch_groups = false;
  std::vector<int64_t> in_spatial, kernel_spatial, out_spatial;
  int64_t nx = 1, nk = 1, ny = 1;
  // tables[d][kw * out_spatial[d] + y] = input index along spatial dim d for
  // kernel weight index kw and output index y, or -1 (padding / dilation hole).
  std::vector<std::vector<int64_t>> tables;
  // For the innermost spatial dim and each kernel weight index: the valid
  // output range [lo, hi) and input index = y * step + offset inside it
  // (affine=false when the valid positions are not one such run).
  struct InnerRun {
    bool affine = false;
    int64_t lo = 0, hi = 0, step = 1, offset = 0;
  };
  std::vector<InnerRun> inner_runs;
  std::vector<int64_t> lhs_perm, rhs_perm, out_perm;
};

void ComputeInnerRuns(ConvPlan& p) {
  if (p.out_spatial.empty()) return;
  const int64_t d = static_cast<int64_t>(p.out_spatial.size()) - 1;
  const int64_t o = p.out_spatial[d];
  for (int64_t kw = 0; kw < p.kernel_spatial[d]; ++kw) {
    const int64_t* t = p.tables[d].data() + kw * o;
    ConvPlan::InnerRun run;
    int64_t lo = 0;
    while (lo < o && t[lo] < 0) ++lo;
    int64_t hi = lo;
    while (hi < o && t[hi] >= 0) ++hi;
    bool ok = true;
    for (int64_t y = hi; y < o && ok; ++y) ok = t[y] < 0;
    if (ok && hi > lo) {
      const int64_t step = hi - lo > 1 ? t[lo + 1] - t[lo] : 1;
      for (int64_t y = lo; y < hi && ok; ++y) ok = t[y] == t[lo] + (y - lo) * step;
      if (ok) {
        run.affine = true;
        run.lo = lo;
        run.hi = hi;
        run.step = step;
        run.offset = t[lo] - lo * step;
      }
    } else if (ok && hi == lo) {
      run.affine = true;  // Empty run: every position is padding.
    }
    p.inner_runs.push_back(run);
  }
}

absl::StatusOr<ConvPlan> PlanConvolution(const HloInstruction& hlo, const Shape& lhs,
                                         const Shape& rhs, const Shape& out) {
  const xla::ConvolutionDimensionNumbers& dn = hlo.attrs().convolution_dimension_numbers;
  const xla::Window& window = hlo.attrs().window;
  const int64_t nsp = dn.input_spatial_dimensions_size();
  if (dn.kernel_spatial_dimensions_size() != nsp || dn.output_spatial_dimensions_size() != nsp ||
      lhs.rank() != nsp + 2 || rhs.rank() != nsp + 2 || out.rank() != nsp + 2) {
    return InstructionError(hlo, "dim_labels do not match operand ranks");
  }
  if (window.dimensions_size() != nsp && !(nsp == 0 && window.dimensions_size() == 0)) {
    return InstructionError(hlo, "window has ", window.dimensions_size(), " dimensions for ", nsp,
                            " spatial dimensions");
  }
  ConvPlan p;
  auto check_dim = [&](int64_t d, int64_t rank) { return d >= 0 && d < rank; };
  p.lhs_perm = {dn.input_batch_dimension(), dn.input_feature_dimension()};
  p.rhs_perm = {dn.kernel_output_feature_dimension(), dn.kernel_input_feature_dimension()};
  std::vector<int64_t> out_canon = {dn.output_batch_dimension(), dn.output_feature_dimension()};
  for (int64_t i = 0; i < nsp; ++i) {
    p.lhs_perm.push_back(dn.input_spatial_dimensions(i));
    p.rhs_perm.push_back(dn.kernel_spatial_dimensions(i));
    out_canon.push_back(dn.output_spatial_dimensions(i));
  }
  for (int64_t i = 0; i < nsp + 2; ++i) {
    if (!check_dim(p.lhs_perm[i], nsp + 2) || !check_dim(p.rhs_perm[i], nsp + 2) ||
        !check_dim(out_canon[i], nsp + 2)) {
      return InstructionError(hlo, "dimension number out of range");
    }
  }
  // out_perm[r] = canonical dim holding actual output dim r.
  p.out_perm.assign(nsp + 2, -1);
  for (int64_t c = 0; c < nsp + 2; ++c) p.out_perm[out_canon[c]] = c;
  for (int64_t v : p.out_perm) {
    if (v < 0) return InstructionError(hlo, "output dimension numbers are not a permutation");
  }
  const int64_t fgc = hlo.attrs().feature_group_count, bgc = hlo.attrs().batch_group_count;
  if (fgc < 1 || bgc < 1) return InstructionError(hlo, "group counts must be positive");
  p.batch = lhs.dimensions(p.lhs_perm[0]);
  p.in_features = lhs.dimensions(p.lhs_perm[1]);
  p.out_features = rhs.dimensions(p.rhs_perm[0]);
  p.ci = rhs.dimensions(p.rhs_perm[1]);
  if (p.ci * fgc != p.in_features) {
    return InstructionError(hlo, "kernel input features ", p.ci, " x feature_group_count ", fgc,
                            " != input features ", p.in_features);
  }
  p.groups = fgc * bgc;
  p.batch_groups = bgc > 1;
  if (p.out_features % p.groups != 0 || p.batch % bgc != 0) {
    return InstructionError(hlo, "group counts do not divide the feature/batch sizes");
  }
  p.oq = p.out_features / p.groups;
  p.out_batch = p.batch / bgc;
  if (out.dimensions(out_canon[0]) != p.out_batch ||
      out.dimensions(out_canon[1]) != p.out_features) {
    return InstructionError(hlo, "result batch/feature sizes do not match the operands");
  }
  p.tables.resize(nsp);
  for (int64_t i = 0; i < nsp; ++i) {
    const xla::WindowDimension& wd = window.dimensions(i);
    const int64_t in = lhs.dimensions(p.lhs_perm[2 + i]);
    const int64_t k = rhs.dimensions(p.rhs_perm[2 + i]);
    const int64_t o = out.dimensions(out_canon[2 + i]);
    const int64_t stride = wd.stride() > 0 ? wd.stride() : 1;
    const int64_t wdil = wd.window_dilation() > 0 ? wd.window_dilation() : 1;
    const int64_t bdil = wd.base_dilation() > 0 ? wd.base_dilation() : 1;
    if (wd.size() != k) return InstructionError(hlo, "window size differs from kernel size");
    const int64_t padded = (in > 0 ? (in - 1) * bdil + 1 : 0) + wd.padding_low() + wd.padding_high();
    const int64_t span = (k - 1) * wdil + 1;
    const int64_t expected = (k == 0 || padded < span) ? 0 : (padded - span) / stride + 1;
    if (expected != o) {
      return InstructionError(hlo, "spatial dimension ", i, ": expected output size ", expected,
                              ", result has ", o);
    }
    p.in_spatial.push_back(in);
    p.kernel_spatial.push_back(k);
    p.out_spatial.push_back(o);
    p.nx *= in;
    p.nk *= k;
    p.ny *= o;
    std::vector<int64_t>& t = p.tables[i];
    t.assign(k * o, -1);
    for (int64_t kw = 0; kw < k; ++kw) {
      const int64_t pos = wd.window_reversal() ? k - 1 - kw : kw;
      for (int64_t y = 0; y < o; ++y) {
        int64_t x = y * stride - wd.padding_low() + pos * wdil;
        if (x < 0 || x % bdil != 0) continue;
        x /= bdil;
        if (x < in) t[kw * o + y] = x;
      }
    }
  }
  ComputeInnerRuns(p);
  return p;
}

// Splits a flat kernel weight index into per-dimension indices.
void Unflatten(int64_t flat, const std::vector<int64_t>& dims, std::vector<int64_t>* idx) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    (*idx)[d] = dims[d] > 0 ? flat % dims[d] : 0;
    flat = dims[d] > 0 ? flat / dims[d] : 0;
  }
}

// Visits the output positions row by row (a row = the innermost spatial
// dim) for kernel weight index kw: row_fn(out_offset, input_row_or_null)
// where input_row points at the input row the kernel position reads (null
// when the outer dims fall in padding).
template <typename C, typename RowFn>
void ForEachShiftedRow(const ConvPlan& p, const std::vector<int64_t>& kw, const C* plane,
                       RowFn&& row_fn) {
  const int64_t nsp = static_cast<int64_t>(p.out_spatial.size());
  const int64_t inner = p.out_spatial[nsp - 1];
  if (inner == 0) return;
  std::vector<const int64_t*> rows(nsp);
  for (int64_t d = 0; d < nsp; ++d) rows[d] = p.tables[d].data() + kw[d] * p.out_spatial[d];
  std::vector<int64_t> y(nsp, 0);
  int64_t out_pos = 0;
  while (true) {
    int64_t base = 0;
    bool valid = true;
    for (int64_t d = 0; d < nsp - 1; ++d) {
      const int64_t x = rows[d][y[d]];
      if (x < 0) {
        valid = false;
        break;
      }
      base = base * p.in_spatial[d] + x;
    }
    row_fn(out_pos, valid ? plane + base * p.in_spatial[nsp - 1] : nullptr);
    out_pos += inner;
    int64_t d = nsp - 2;
    for (; d >= 0; --d) {
      if (++y[d] < p.out_spatial[d]) break;
      y[d] = 0;
    }
    if (d < 0) break;
  }
}

// dst[y] = input at kernel weight index kw (0 in padding), all positions y.
template <typename C>
void GatherShifted(const ConvPlan& p, const std::vector<int64_t>& kw, const C* plane, C* dst) {
  const int64_t nsp = static_cast<int64_t>(p.out_spatial.size());
  if (nsp == 0) {
    dst[0] = plane[0];
    return;
  }
  const int64_t inner = p.out_spatial[nsp - 1];
  const ConvPlan::InnerRun& run = p.inner_runs[kw[nsp - 1]];
  const int64_t* table = p.tables[nsp - 1].data() + kw[nsp - 1] * inner;
  ForEachShiftedRow(p, kw, plane, [&](int64_t pos, const C* row) {
    C* out = dst + pos;
    if (row == nullptr) {
      for (int64_t i = 0; i < inner; ++i) out[i] = C(0);
    } else if (run.affine) {
      for (int64_t i = 0; i < run.lo; ++i) out[i] = C(0);
      const C* src = row + run.offset;
      if (run.step == 1) {
        for (int64_t i = run.lo; i < run.hi; ++i) out[i] = src[i];
      } else {
        for (int64_t i = run.lo; i < run.hi; ++i) out[i] = src[i * run.step];
      }
      for (int64_t i = run.hi; i < inner; ++i) out[i] = C(0);
    } else {
      for (int64_t i = 0; i < inner; ++i) out[i] = table[i] >= 0 ? row[table[i]] : C(0);
    }
  });
}

// dst[y] (+)= w * input at kernel weight index kw: the depthwise kernel.
template <typename C>
void AccumulateShifted(const ConvPlan& p, const std::vector<int64_t>& kw, const C* plane, C w,
                       C* dst) {
  const int64_t nsp = static_cast<int64_t>(p.out_spatial.size());
  if (nsp == 0) {
    dst[0] = WrappingMulAdd(dst[0], w, plane[0]);
    return;
  }
  const int64_t inner = p.out_spatial[nsp - 1];
  const ConvPlan::InnerRun& run = p.inner_runs[kw[nsp - 1]];
  const int64_t* table = p.tables[nsp - 1].data() + kw[nsp - 1] * inner;
  ForEachShiftedRow(p, kw, plane, [&](int64_t pos, const C* row) {
    if (row == nullptr) return;
    C* out = dst + pos;
    if (run.affine) {
      const C* src = row + run.offset;
      if (run.step == 1) {
        for (int64_t i = run.lo; i < run.hi; ++i) out[i] = WrappingMulAdd(out[i], w, src[i]);
      } else {
        for (int64_t i = run.lo; i < run.hi; ++i) {
          out[i] = WrappingMulAdd(out[i], w, src[i * run.step]);
        }
      }
    } else {
      for (int64_t i = 0; i < inner; ++i) {
        if (table[i] >= 0) out[i] = WrappingMulAdd(out[i], w, row[table[i]]);
      }
    }
  });
}

// True when kernel weight index kw maps output position y to input y in
// every dimension (so X_k is the input plane itself).
bool IsIdentityShift(const ConvPlan& p, const std::vector<int64_t>& kw) {
  for (size_t d = 0; d < p.out_spatial.size(); ++d) {
    if (p.out_spatial[d] != p.in_spatial[d]) return false;
    const int64_t* row = p.tables[d].data() + kw[d] * p.out_spatial[d];
    for (int64_t y = 0; y < p.out_spatial[d]; ++y) {
      if (row[y] != y) return false;
    }
  }
  return true;
}

template <typename C>
void ConvByKernelPosition(const ConvPlan& p, const C* in, const C* ker, C* out, int threads) {
  const int64_t tasks_base = p.out_batch * p.groups;
  const int64_t msplit = tasks_base >= threads ? 1 : std::min<int64_t>(threads, p.oq);
  const int64_t rows_per = (p.oq + msplit - 1) / msplit;
  std::vector<std::vector<int64_t>> kws(p.nk, std::vector<int64_t>(p.kernel_spatial.size()));
  std::vector<bool> identity(p.nk);
  for (int64_t k = 0; k < p.nk; ++k) {
    Unflatten(k, p.kernel_spatial, &kws[k]);
    identity[k] = IsIdentityShift(p, kws[k]);
  }
  const int64_t cost = 2 * p.oq / msplit * p.ci * p.nk * p.ny + p.ci * p.nk * p.ny;
  ParallelFor(threads, tasks_base * msplit, cost, [&](int64_t begin, int64_t end) {
    std::vector<C> x(p.ci * p.ny);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t split = task % msplit;
      const int64_t ob = (task / msplit) / p.groups, q = (task / msplit) % p.groups;
      const int64_t m0 = split * rows_per, m1 = std::min(p.oq, m0 + rows_per);
      if (m0 >= m1) continue;
      const int64_t b = p.batch_groups ? q * p.out_batch + ob : ob;
      const int64_t f0 = p.batch_groups ? 0 : q * p.ci;
      const C* in_planes = in + (b * p.in_features + f0) * p.nx;
      C* out_block = out + (ob * p.out_features + q * p.oq + m0) * p.ny;
      bool first = true;
      if (p.ci == 1 && m1 - m0 == 1) {
        // One input and one output feature: accumulate shifted planes.
        for (int64_t i = 0; i < p.ny; ++i) out_block[i] = C(0);
        const C* weights = ker + (q * p.oq + m0) * p.nk;
        for (int64_t k = 0; k < p.nk; ++k) {
          AccumulateShifted(p, kws[k], in_planes, weights[k], out_block);
        }
        continue;
      }
      for (int64_t k = 0; k < p.nk; ++k) {
        GemmArgs<C> g;
        g.m = m1 - m0;
        g.n = p.ny;
        g.k = p.ci;
        g.a = ker + ((q * p.oq + m0) * p.ci) * p.nk + k;
        g.a_rs = p.ci * p.nk;
        g.a_cs = p.nk;
        if (identity[k]) {
          g.b = in_planes;
        } else {
          for (int64_t c = 0; c < p.ci; ++c) {
            GatherShifted(p, kws[k], in_planes + c * p.nx, x.data() + c * p.ny);
          }
          g.b = x.data();
        }
        g.b_rs = p.ny;
        g.b_cs = 1;
        g.c = out_block;
        g.ldc = p.ny;
        g.accumulate = !first;
        GemmAny(g);
        first = false;
      }
      if (first) {
        for (int64_t i = 0; i < (m1 - m0) * p.ny; ++i) out_block[i] = C(0);
      }
    }
  });
}

template <typename C>
void ConvByOutputPosition(const ConvPlan& p, const C* in, const C* ker, C* out, int threads) {
  const int64_t ck = p.ci * p.nk;
  const int64_t tasks_base = p.groups * p.ny;
  const int64_t msplit = tasks_base >= threads ? 1 : std::min<int64_t>(threads, p.out_batch);
  const int64_t rows_per = (p.out_batch + msplit - 1) / msplit;
  const int64_t nsp = static_cast<int64_t>(p.out_spatial.size());
  const int64_t cost = 2 * (rows_per + 1) * ck * p.oq;
  ParallelFor(threads, tasks_base * msplit, cost, [&](int64_t begin, int64_t end) {
    std::vector<C> x;
    std::vector<C> c_tmp;
    std::vector<int64_t> yidx(nsp), kidx(nsp), positions;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t split = task % msplit;
      const int64_t q = (task / msplit) / p.ny, y = (task / msplit) % p.ny;
      const int64_t m0 = split * rows_per, m1 = std::min(p.out_batch, m0 + rows_per);
      if (m0 >= m1) continue;
      const int64_t rows = m1 - m0;
      Unflatten(y, p.out_spatial, &yidx);
      const int64_t f0 = p.batch_groups ? 0 : q * p.ci;
      const int64_t b0 = p.batch_groups ? q * p.out_batch : 0;
      // Is the window at y the whole input plane in order?
      bool identity = p.nk == p.nx;
      for (int64_t d = 0; identity && d < nsp; ++d) {
        if (p.kernel_spatial[d] != p.in_spatial[d]) identity = false;
        for (int64_t kw = 0; identity && kw < p.kernel_spatial[d]; ++kw) {
          if (p.tables[d][kw * p.out_spatial[d] + yidx[d]] != kw) identity = false;
        }
      }
      GemmArgs<C> g;
      g.m = rows;
      g.n = p.oq;
      g.k = ck;
      if (identity) {
        g.a = in + ((b0 + m0) * p.in_features + f0) * p.nx;
        g.a_rs = p.in_features * p.nx;
      } else {
        // Input position of each kernel weight at y (-1: padding).
        positions.resize(p.nk);
        for (int64_t kflat = 0; kflat < p.nk; ++kflat) {
          Unflatten(kflat, p.kernel_spatial, &kidx);
          int64_t pos = 0;
          for (int64_t d = 0; d < nsp && pos >= 0; ++d) {
            const int64_t xi = p.tables[d][kidx[d] * p.out_spatial[d] + yidx[d]];
            pos = xi < 0 ? -1 : pos * p.in_spatial[d] + xi;
          }
          positions[kflat] = pos;
        }
        x.resize(rows * ck);
        for (int64_t r = 0; r < rows; ++r) {
          const C* planes = in + ((b0 + m0 + r) * p.in_features + f0) * p.nx;
          for (int64_t c = 0; c < p.ci; ++c) {
            const C* plane = planes + c * p.nx;
            C* dst = x.data() + r * ck + c * p.nk;
            for (int64_t kflat = 0; kflat < p.nk; ++kflat) {
              const int64_t pos = positions[kflat];
              dst[kflat] = pos >= 0 ? plane[pos] : C(0);
            }
          }
        }
        g.a = x.data();
        g.a_rs = ck;
      }
      g.a_cs = 1;
      g.b = ker + (q * p.oq) * ck;
      g.b_rs = 1;
      g.b_cs = ck;
      c_tmp.assign(rows * p.oq, C(0));
      g.c = c_tmp.data();
      g.ldc = p.oq;
      GemmAny(g);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t o = 0; o < p.oq; ++o) {
          out[((m0 + r) * p.out_features + q * p.oq + o) * p.ny + y] = c_tmp[r * p.oq + o];
        }
      }
    }
  });
}

bool IsIdentityPerm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

template <typename OutTag>
absl::StatusOr<Literal> ConvTyped(const HloInstruction& hlo, const Literal& lhs,
                                  const Literal& rhs, const ConvPlan& p, EvalContext& ctx) {
  if constexpr (kIsPred<OutTag>) {
    return InstructionUnimplemented(hlo, "pred result");
  } else {
  using C = typename OutTag::Compute;
  constexpr bool kDirect = std::is_same<typename OutTag::Storage, C>::value;
  // An operand in canonical order and compute type: the literal itself when
  // it already is, else a converted, permuted copy.
  auto prepare = [&](const Literal& lit, const std::vector<int64_t>& perm,
                     std::vector<C>* copy) -> absl::StatusOr<const C*> {
    if (kDirect && lit.shape().element_type() == OutTag::kPrimitiveType && IsIdentityPerm(perm)) {
      return reinterpret_cast<const C*>(lit.raw());
    }
    HLOC_RETURN_IF_ERROR(DispatchType(lit.shape().element_type(), [&](auto tag) -> absl::Status {
      using InTag = decltype(tag);
      if constexpr (kIsPred<InTag> || (kIsComplex<InTag> && !kIsComplex<OutTag>)) {
        return InstructionUnimplemented(hlo, "unsupported operand type");
      } else {
        *copy = PermuteToCompute<InTag, C>(lit, perm);
        return absl::OkStatus();
      }
    }));
    return copy->data();
  };
  std::vector<C> in_copy, ker_copy;
  HLOC_ASSIGN_OR_RETURN(const C* in, prepare(lhs, p.lhs_perm, &in_copy));
  HLOC_ASSIGN_OR_RETURN(const C* ker, prepare(rhs, p.rhs_perm, &ker_copy));
  std::vector<int64_t> canon_dims = {p.out_batch, p.out_features};
  for (int64_t o : p.out_spatial) canon_dims.push_back(o);
  const bool write_result = kDirect && IsIdentityPerm(p.out_perm);
  HLOC_ASSIGN_OR_RETURN(Literal result,
                        NewLiteral(hlo, write_result ? hlo.shape()
                                                     : Shape(hlo.shape().element_type(), canon_dims)));
  std::vector<C> out_copy;
  C* out;
  if (write_result) {
    out = reinterpret_cast<C*>(result.mutable_raw());
  } else {
    out_copy.assign(p.out_batch * p.out_features * p.ny, C(0));
    out = out_copy.data();
  }
  if (result.element_count() > 0 && p.ci > 0 && p.nk > 0) {
    if (p.ny >= p.nk) {
      ConvByKernelPosition<C>(p, in, ker, out, ctx.num_threads());
    } else {
      ConvByOutputPosition<C>(p, in, ker, out, ctx.num_threads());
    }
  }
  if (write_result) return std::move(result);
  // Canonical [B'][O][spatial] -> result type and dimension order.
  auto* dst = reinterpret_cast<typename OutTag::Storage*>(result.mutable_raw());
  for (size_t i = 0; i < out_copy.size(); ++i) dst[i] = OutTag::Store(out_copy[i]);
  Literal transposed = TransposeLiteral(result, p.out_perm);
  if (hlo.shape().has_layout()) transposed.set_layout(hlo.shape().layout());
  return std::move(transposed);
  }
}

}  // namespace

absl::StatusOr<Literal> EvalConvolution(const HloInstruction& hlo, Operands ops,
                                        EvalContext& ctx) {
  const Literal& lhs = *ops[0];
  const Literal& rhs = *ops[1];
  if (!lhs.shape().IsArray() || !rhs.shape().IsArray() || !hlo.shape().IsArray()) {
    return InstructionError(hlo, "operands and result must be arrays");
  }
  HLOC_ASSIGN_OR_RETURN(ConvPlan plan, PlanConvolution(hlo, lhs.shape(), rhs.shape(), hlo.shape()));
  const PrimitiveType out_type = hlo.shape().element_type();
  if (out_type == xla::PRED) return InstructionUnimplemented(hlo, "convolution producing pred");
  if (!hlo.shape().CheckedByteSize() || *hlo.shape().CheckedByteSize() > Literal::kMaxBytes) {
    return InstructionError(hlo, "result too large");
  }
  return DispatchType(out_type, [&](auto tag) {
    return ConvTyped<decltype(tag)>(hlo, lhs, rhs, plan, ctx);
  });
}

}  // namespace eval
}  // namespace hloc
