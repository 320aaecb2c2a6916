// ragged-dot: a dot whose lhs has one "ragged" dimension split into
// consecutive groups by group_sizes (the last dimension of group_sizes counts
// the groups; any leading dimensions index the lhs batch dimensions and the
// dimensions of the ragged dimension's kind listed before it). By the kind of
// the ragged dimension:
//   non-contracting: rhs has a group dimension; an lhs row in group g is
//     multiplied by rhs's g-th slice; rows past the last group give zeros.
//   contracting: the result gets a leading group dimension; group g
//     contracts only over its own slice of the ragged dimension.
//   batch: the result is the ordinary dot (as JAX's lowering computes it).
// Rows that fall in several groups (negative sizes) sum each group's product.
// This is a plain loop nest: a reference, not a fast kernel. Floating results
// accumulate in double, integer results in 64-bit with wraparound.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "hlo/evaluator/ops.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

enum class RaggedMode { kNonContracting, kContracting, kBatch };

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

absl::StatusOr<Literal> EvalRaggedDot(const HloInstruction& hlo, Operands ops) {
  if (ops.size() != 3 || !hlo.shape().IsArray()) {
    return InstructionError(hlo, "needs lhs, rhs and group_sizes and an array result");
  }
  const Literal& lhs = *ops[0];
  const Literal& rhs = *ops[1];
  const Literal& sizes = *ops[2];
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  const Shape& gs = sizes.shape();
  const xla::RaggedDotDimensionNumbers& rdn = hlo.attrs().ragged_dot_dimension_numbers;
  const xla::DotDimensionNumbers& dn = rdn.dot_dimension_numbers();
  if (dn.lhs_batch_dimensions_size() != dn.rhs_batch_dimensions_size() ||
      dn.lhs_contracting_dimensions_size() != dn.rhs_contracting_dimensions_size()) {
    return InstructionError(hlo, "batch or contracting dimension lists differ in length");
  }
  if (rdn.lhs_ragged_dimensions_size() != 1) {
    return InstructionError(hlo, "needs exactly one lhs ragged dimension");
  }
  if (gs.rank() < 1 || !IsInteger(gs.element_type())) {
    return InstructionError(hlo, "group_sizes must be an integer array of rank >= 1");
  }
  const int64_t lrank = ls.rank(), rrank = rs.rank();
  std::vector<bool> lused(lrank, false), rused(rrank, false);
  auto use = [](std::vector<bool>& used, int64_t d) {
    if (d < 0 || d >= static_cast<int64_t>(used.size()) || used[d]) return false;
    used[d] = true;
    return true;
  };
  std::vector<int64_t> lb, rb, lc, rc, lf, rf;
  for (int i = 0; i < dn.lhs_batch_dimensions_size(); ++i) {
    const int64_t l = dn.lhs_batch_dimensions(i), r = dn.rhs_batch_dimensions(i);
    if (!use(lused, l) || !use(rused, r) || ls.dimensions(l) != rs.dimensions(r)) {
      return InstructionError(hlo, "bad batch dimensions");
    }
    lb.push_back(l);
    rb.push_back(r);
  }
  for (int i = 0; i < dn.lhs_contracting_dimensions_size(); ++i) {
    const int64_t l = dn.lhs_contracting_dimensions(i), r = dn.rhs_contracting_dimensions(i);
    if (!use(lused, l) || !use(rused, r) || ls.dimensions(l) != rs.dimensions(r)) {
      return InstructionError(hlo, "bad contracting dimensions");
    }
    lc.push_back(l);
    rc.push_back(r);
  }
  const int64_t ragged = rdn.lhs_ragged_dimensions(0);
  if (ragged < 0 || ragged >= lrank) {
    return InstructionError(hlo, "lhs ragged dimension out of range");
  }
  for (int64_t d = 0; d < lrank; ++d) {
    if (!lused[d]) lf.push_back(d);
  }
  const RaggedMode mode = Contains(lc, ragged)   ? RaggedMode::kContracting
                          : Contains(lb, ragged) ? RaggedMode::kBatch
                                                 : RaggedMode::kNonContracting;
  const int64_t num_groups = gs.dimensions(gs.rank() - 1);
  int64_t group_dim = -1;
  if (mode == RaggedMode::kNonContracting) {
    if (rdn.rhs_group_dimensions_size() != 1 || !use(rused, rdn.rhs_group_dimensions(0))) {
      return InstructionError(hlo, "needs one rhs group dimension distinct from the others");
    }
    group_dim = rdn.rhs_group_dimensions(0);
    if (rs.dimensions(group_dim) != num_groups) {
      return InstructionError(hlo, "rhs group dimension size differs from the group count");
    }
  } else if (rdn.rhs_group_dimensions_size() != 0) {
    return InstructionError(hlo, "rhs group dimensions must be empty in this mode");
  }
  for (int64_t d = 0; d < rrank; ++d) {
    if (!rused[d]) rf.push_back(d);
  }
  // The lhs dimensions indexing group_sizes' leading dimensions.
  std::vector<int64_t> prefix = lb;
  const std::vector<int64_t>& kind =
      mode == RaggedMode::kContracting ? lc : mode == RaggedMode::kBatch ? lb : lf;
  if (mode != RaggedMode::kBatch) {
    for (int64_t d : kind) {
      if (d == ragged) break;
      prefix.push_back(d);
    }
  } else {
    prefix.assign(lb.begin(), std::find(lb.begin(), lb.end(), ragged));
  }
  if (gs.rank() > 1) {
    bool ok = gs.rank() == static_cast<int64_t>(prefix.size()) + 1;
    for (size_t i = 0; ok && i < prefix.size(); ++i) {
      ok = gs.dimensions(i) == ls.dimensions(prefix[i]);
    }
    if (!ok) return InstructionError(hlo, "group_sizes shape does not match the lhs");
  }
  // Result: [groups (contracting mode)] + batch + lhs free + rhs free.
  std::vector<int64_t> out_dims;
  if (mode == RaggedMode::kContracting) out_dims.push_back(num_groups);
  for (int64_t d : lb) out_dims.push_back(ls.dimensions(d));
  for (int64_t d : lf) out_dims.push_back(ls.dimensions(d));
  for (int64_t d : rf) out_dims.push_back(rs.dimensions(d));
  if (out_dims != hlo.shape().dimensions()) {
    return InstructionError(hlo, "result shape does not match the ragged-dot dimensions");
  }
  const PrimitiveType out_type = hlo.shape().element_type();
  const bool is_float = IsFloatingPoint(out_type);
  if (!is_float && !IsInteger(out_type)) {
    return InstructionUnimplemented(hlo, "result type ", PrimitiveTypeName(out_type));
  }
  for (const Literal* op : {&lhs, &rhs}) {
    const PrimitiveType t = op->shape().element_type();
    if (!IsFloatingPoint(t) && !IsInteger(t)) {
      return InstructionUnimplemented(hlo, "operand type ", PrimitiveTypeName(t));
    }
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  const std::vector<int64_t> lstride = RowMajorStrides(ls.dimensions());
  const std::vector<int64_t> rstride = RowMajorStrides(rs.dimensions());
  std::vector<int64_t> kdims;
  for (int64_t d : lc) kdims.push_back(ls.dimensions(d));
  int64_t kcount = 1;
  for (int64_t k : kdims) kcount *= k;

  std::vector<int64_t> li(lrank, 0), ri(rrank, 0), oi(out_dims.size(), 0), ki(kdims.size(), 0);
  // [start, end) of group g in the group_sizes row picked by the lhs index.
  auto group_range = [&](int64_t g, int64_t* start, int64_t* end) {
    int64_t row = 0;
    if (gs.rank() > 1) {
      for (size_t i = 0; i < prefix.size(); ++i) row = row * gs.dimensions(i) + li[prefix[i]];
    }
    const int64_t base = row * num_groups;
    int64_t s = 0;
    for (int64_t h = 0; h < g; ++h) s += sizes.GetAsInt64(base + h);
    *start = s;
    *end = s + sizes.GetAsInt64(base + g);
  };
  auto in_group = [&](int64_t g) {
    int64_t start, end;
    group_range(g, &start, &end);
    return start <= li[ragged] && li[ragged] < end;
  };
  const int64_t n = out.element_count();
  for (int64_t o = 0; o < n; ++o) {
    size_t p = 0;
    int64_t out_group = -1;
    if (mode == RaggedMode::kContracting) out_group = oi[p++];
    for (size_t i = 0; i < lb.size(); ++i, ++p) li[lb[i]] = ri[rb[i]] = oi[p];
    for (int64_t d : lf) li[d] = oi[p++];
    for (int64_t d : rf) ri[d] = oi[p++];
    double facc = 0;
    uint64_t iacc = 0;
    // The rhs groups this element uses (all for the other modes: one pass).
    const int64_t passes = mode == RaggedMode::kNonContracting ? num_groups : 1;
    for (int64_t g = 0; g < passes; ++g) {
      if (mode == RaggedMode::kNonContracting) {
        if (!in_group(g)) continue;
        ri[group_dim] = g;
      }
      std::fill(ki.begin(), ki.end(), 0);
      for (int64_t k = 0; k < kcount; ++k) {
        for (size_t i = 0; i < lc.size(); ++i) li[lc[i]] = ri[rc[i]] = ki[i];
        if (mode != RaggedMode::kContracting || in_group(out_group)) {
          int64_t lpos = 0, rpos = 0;
          for (int64_t d = 0; d < lrank; ++d) lpos += li[d] * lstride[d];
          for (int64_t d = 0; d < rrank; ++d) rpos += ri[d] * rstride[d];
          if (is_float) {
            facc += lhs.GetAsDouble(lpos) * rhs.GetAsDouble(rpos);
          } else {
            iacc += static_cast<uint64_t>(lhs.GetAsInt64(lpos)) *
                    static_cast<uint64_t>(rhs.GetAsInt64(rpos));
          }
        }
        for (int64_t i = static_cast<int64_t>(ki.size()) - 1; i >= 0; --i) {
          if (++ki[i] < kdims[i]) break;
          ki[i] = 0;
        }
      }
    }
    if (is_float) {
      out.SetFromDouble(o, facc);
    } else {
      out.SetFromInt64(o, static_cast<int64_t>(iacc));
    }
    for (int64_t i = static_cast<int64_t>(oi.size()) - 1; i >= 0; --i) {
      if (++oi[i] < out_dims[i]) break;
      oi[i] = 0;
    }
  }
  return std::move(out);
}

}  // namespace eval
}  // namespace hloc
