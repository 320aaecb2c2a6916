#include "passes/expanders/eigh_expander.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "hlo/linalg_custom_calls.h"
#include "hlo/status_macros.h"
#include "passes/expanders/counted_loop.h"
#include "passes/expanders/expansion_builder.h"
#include "passes/expanders/matrix_batch.h"

namespace hloc {
namespace {

using expanders::ExpansionBuilder;
using expanders::MatrixBatch;

// Shapes and types of one expansion: N x N matrices (N = 2h) of `type`,
// `real` its component type.
struct Jacobi {
  MatrixBatch m;
  int64_t h;
  PrimitiveType type;
  PrimitiveType real;

  int64_t N() const { return 2 * h; }
  int64_t batch_rank() const { return m.batch_rank(); }

  // x[..., r0:r0+rows, c0:c0+columns].
  HloInstruction* Block(ExpansionBuilder& b, HloInstruction* x, int64_t r0, int64_t rows,
                        int64_t c0, int64_t columns) const {
    std::vector<int64_t> starts(batch_rank(), 0);
    starts.push_back(r0);
    starts.push_back(c0);
    return b.Slice(x, starts, m.BatchPlus({r0 + rows, c0 + columns}));
  }

  // Row (dimension 0) or column (1) index of every element of [..., r, c].
  HloInstruction* Index(ExpansionBuilder& b, int64_t rows, int64_t columns, int dimension) const {
    return b.Iota(xla::S32, m.BatchPlus({rows, columns}), batch_rank() + dimension);
  }

  // The diagonal of square x [..., k, k]: [..., k].
  HloInstruction* Diagonal(ExpansionBuilder& b, HloInstruction* x) const {
    if (x == nullptr) return b.MissingOperand();
    const int64_t k = x->shape().dimensions().back();
    const PrimitiveType t = x->shape().element_type();
    HloInstruction* on_diagonal =
        b.Compare(Index(b, k, k, 0), Index(b, k, k, 1), ComparisonDirection::kEq);
    return b.Reduce(b.Select(on_diagonal, x, b.Splat(b.Scalar(t, 0), m.BatchPlus({k, k}))),
                    b.Scalar(t, 0), {batch_rank() + 1},
                    b.ScalarBinaryComputation(HloOpcode::kAdd, t));
  }

  // x's slots along `dimension` (batch_rank + 0 or + 1) moved one step of
  // the circle schedule (see the header).
  HloInstruction* NextSlots(ExpansionBuilder& b, HloInstruction* x, int64_t dimension) const {
    if (h < 2) return x;  // One pair: nothing to move.
    std::vector<HloInstruction*> parts;
    for (auto [begin, end] : std::vector<std::pair<int64_t, int64_t>>{
             {0, 1}, {h, h + 1}, {1, h - 1}, {h + 1, N()}, {h - 1, h}}) {
      if (begin == end) continue;
      std::vector<int64_t> starts(x == nullptr ? 0 : x->shape().rank(), 0);
      std::vector<int64_t> limits = x == nullptr ? std::vector<int64_t>() : x->shape().dimensions();
      if (x != nullptr) {
        starts[dimension] = begin;
        limits[dimension] = end;
      }
      parts.push_back(b.Slice(x, starts, limits));
    }
    return b.Concatenate(parts, dimension);
  }

  // One round: every pair (i, i + h) rotated, then the slots moved.
  std::vector<HloInstruction*> Round(ExpansionBuilder& b, HloInstruction* a,
                                     HloInstruction* v) const {
    const int64_t B = batch_rank();
    const std::vector<int64_t> pair_dims = m.BatchPlus({h});
    HloInstruction* app = expanders::RealPart(b, Diagonal(b, Block(b, a, 0, h, 0, h)));
    HloInstruction* aqq = expanders::RealPart(b, Diagonal(b, Block(b, a, h, h, h, h)));
    HloInstruction* apq = Diagonal(b, Block(b, a, 0, h, h, h));
    HloInstruction* magnitude = b.Unary(HloOpcode::kAbs, apq);
    auto splat = [&](double value) { return b.Splat(b.Scalar(real, value), pair_dims); };
    HloInstruction* none = b.Compare(magnitude, splat(0), ComparisonDirection::kEq);
    HloInstruction* safe = b.Select(none, splat(1), magnitude);
    HloInstruction* tau = b.Binary(HloOpcode::kDivide, b.Binary(HloOpcode::kSubtract, aqq, app),
                                   b.Binary(HloOpcode::kMultiply, splat(2), safe));
    HloInstruction* t = b.Binary(
        HloOpcode::kDivide,
        b.Select(b.Compare(tau, splat(0), ComparisonDirection::kGe), splat(1), splat(-1)),
        b.Binary(HloOpcode::kAdd, b.Unary(HloOpcode::kAbs, tau),
                 b.Unary(HloOpcode::kSqrt, b.Binary(HloOpcode::kAdd, splat(1),
                                                    b.Binary(HloOpcode::kMultiply, tau, tau)))));
    t = b.Select(none, splat(0), t);
    HloInstruction* c = b.Binary(
        HloOpcode::kDivide, splat(1),
        b.Unary(HloOpcode::kSqrt,
                b.Binary(HloOpcode::kAdd, splat(1), b.Binary(HloOpcode::kMultiply, t, t))));
    HloInstruction* s = b.Binary(HloOpcode::kMultiply, t, c);
    HloInstruction* shift = b.Binary(HloOpcode::kMultiply, t, magnitude);
    HloInstruction* new_app = b.Binary(HloOpcode::kSubtract, app, shift);
    HloInstruction* new_aqq = b.Binary(HloOpcode::kAdd, aqq, shift);
    // J's entries in the matrix type: c, s w (row p, column q) and
    // s conj(w) (its negation at row q, column p); w = b / |b| is the sign
    // of b for real types.
    HloInstruction* ct = b.ConvertIfNeeded(c, type);
    HloInstruction* w = b.Select(none, b.Splat(b.Scalar(type, 1), pair_dims),
                                 b.Binary(HloOpcode::kDivide, apq, b.ConvertIfNeeded(safe, type)));
    HloInstruction* st = b.ConvertIfNeeded(s, type);
    HloInstruction* sw = b.Binary(HloOpcode::kMultiply, st, w);
    HloInstruction* swc = b.Binary(HloOpcode::kMultiply, st, expanders::Conjugate(b, w));
    const int64_t n = N();
    auto mul = [&](HloInstruction* x, HloInstruction* y) {
      return b.Binary(HloOpcode::kMultiply, x, y);
    };
    // Rows: p' = c p - s w q,  q' = s conj(w) p + c q   (J^H from the left).
    {
      HloInstruction* top = Block(b, a, 0, h, 0, n);
      HloInstruction* bottom = Block(b, a, h, h, 0, n);
      auto spread = [&](HloInstruction* k) { return m.Spread(b, k, {h, n}, 0); };
      a = b.Concatenate(
          {b.Binary(HloOpcode::kSubtract, mul(spread(ct), top), mul(spread(sw), bottom)),
           b.Binary(HloOpcode::kAdd, mul(spread(swc), top), mul(spread(ct), bottom))},
          B);
    }
    // Columns of A and V: p' = c p - s conj(w) q,  q' = s w p + c q   (J from the right).
    auto rotate_columns = [&](HloInstruction* x) {
      HloInstruction* left = Block(b, x, 0, n, 0, h);
      HloInstruction* right = Block(b, x, 0, n, h, h);
      auto spread = [&](HloInstruction* k) { return m.Spread(b, k, {n, h}, 1); };
      return b.Concatenate(
          {b.Binary(HloOpcode::kSubtract, mul(spread(ct), left), mul(spread(swc), right)),
           b.Binary(HloOpcode::kAdd, mul(spread(sw), left), mul(spread(ct), right))},
          B + 1);
    };
    a = rotate_columns(a);
    v = rotate_columns(v);
    // The rotated 2x2 blocks exactly: the new diagonal, zeros at (i, i+h).
    HloInstruction* rows = Index(b, n, n, 0);
    HloInstruction* columns = Index(b, n, n, 1);
    HloInstruction* diagonal = b.ConvertIfNeeded(b.Concatenate({new_app, new_aqq}, B), type);
    a = b.Select(b.Compare(rows, columns, ComparisonDirection::kEq),
                 m.Spread(b, diagonal, {n, n}, 0), a);
    HloInstruction* distance =
        b.Unary(HloOpcode::kAbs, b.Binary(HloOpcode::kSubtract, rows, columns));
    a = b.Select(b.Compare(distance, b.Splat(b.IndexScalar(xla::S32, h), m.BatchPlus({n, n})),
                           ComparisonDirection::kEq),
                 b.Splat(b.Scalar(type, 0), m.BatchPlus({n, n})), a);
    a = NextSlots(b, NextSlots(b, a, B), B + 1);
    v = NextSlots(b, v, B + 1);
    return {a, v};
  }

  // True while some matrix has |offdiag(a)|^2 > tol^2 |a|^2.
  HloInstruction* NotConverged(ExpansionBuilder& b, HloInstruction* a, double tol) const {
    const int64_t n = N();
    HloInstruction* squares = expanders::AbsSquared(b, a);
    HloComputation* add = b.ScalarBinaryComputation(HloOpcode::kAdd, real);
    HloInstruction* zero = b.Scalar(real, 0);
    const std::vector<int64_t> minor = {batch_rank(), batch_rank() + 1};
    HloInstruction* total = b.Reduce(squares, zero, minor, add);
    HloInstruction* off =
        b.Reduce(b.Select(b.Compare(Index(b, n, n, 0), Index(b, n, n, 1), ComparisonDirection::kNe),
                          squares, b.Splat(zero, m.BatchPlus({n, n}))),
                 zero, minor, add);
    HloInstruction* bound =
        b.Binary(HloOpcode::kMultiply, total, b.Splat(b.Scalar(real, tol * tol), m.BatchPlus({})));
    HloInstruction* open = b.Compare(off, bound, ComparisonDirection::kGt);
    if (batch_rank() == 0) return open;
    return b.Reduce(open, b.Scalar(xla::PRED, 0), m.BatchDimensions(),
                    b.ScalarBinaryComputation(HloOpcode::kOr, xla::PRED));
  }
};

// The Hermitian matrix `lower`'s triangle of `a` describes (the imaginary
// part of the diagonal dropped).
HloInstruction* Hermitian(ExpansionBuilder& b, const MatrixBatch& m, HloInstruction* a,
                          bool lower) {
  HloInstruction* rows = b.Iota(xla::S32, m.dims(), m.batch_rank());
  HloInstruction* columns = b.Iota(xla::S32, m.dims(), m.batch_rank() + 1);
  HloInstruction* mirrored = expanders::Conjugate(b, b.Transpose(a, m.SwapMinor()));
  HloInstruction* diagonal = a;
  if (a != nullptr && IsComplex(a->shape().element_type())) {
    diagonal = b.Convert(b.Unary(HloOpcode::kReal, a), a->shape().element_type());
  }
  const ComparisonDirection kept = lower ? ComparisonDirection::kGt : ComparisonDirection::kLt;
  const ComparisonDirection other = lower ? ComparisonDirection::kLt : ComparisonDirection::kGt;
  return b.Select(b.Compare(rows, columns, kept), a,
                  b.Select(b.Compare(rows, columns, other), mirrored, diagonal));
}

// x [..., n, n] with a zero row and column appended.
HloInstruction* PadOne(ExpansionBuilder& b, const MatrixBatch& m, HloInstruction* x) {
  if (x == nullptr) return b.MissingOperand();
  const int64_t n = m.rows();
  HloInstruction* zero = b.Scalar(x->shape().element_type(), 0);
  x = b.Concatenate({x, b.Splat(zero, m.BatchPlus({n, 1}))}, m.batch_rank() + 1);
  return b.Concatenate({x, b.Splat(zero, m.BatchPlus({1, n + 1}))}, m.batch_rank());
}

// (w, v) sorted along w's last dimension, v's columns alike.
std::vector<HloInstruction*> SortByEigenvalue(ExpansionBuilder& b, const MatrixBatch& m,
                                              HloInstruction* w, HloInstruction* v) {
  if (w == nullptr || v == nullptr) return {b.MissingOperand(), nullptr};
  const PrimitiveType real = w->shape().element_type();
  const PrimitiveType type = v->shape().element_type();
  HloComputation* less = b.NewComputation("sort_less");
  {
    ExpansionBuilder c = b.ForComputation(less);
    HloInstruction* lhs = c.Parameter(0, Shape::Scalar(real), "w_lhs");
    HloInstruction* rhs = c.Parameter(1, Shape::Scalar(real), "w_rhs");
    c.Parameter(2, Shape::Scalar(type), "v_lhs");
    c.Parameter(3, Shape::Scalar(type), "v_rhs");
    HloInstruction* root = c.Compare(lhs, rhs, ComparisonDirection::kLt);
    if (!c.status().ok()) {
      b.Fail(c.status());
      return {nullptr, nullptr};
    }
    less->set_root(root);
  }
  const int64_t n = m.rows();
  HloInstruction* keys = m.Spread(b, w, {n, n}, 1);
  HloInstruction* sorted = b.Build(HloOpcode::kSort, {keys, v}, [&](HloInstruction& sort) {
    sort.mutable_attrs()->dimensions = {m.batch_rank() + 1};
    sort.mutable_attrs()->is_stable = true;
    sort.AppendCalledComputation(less);
  });
  HloInstruction* sorted_keys = b.GetTupleElement(sorted, 0);
  std::vector<int64_t> starts(m.batch_rank() + 2, 0);
  HloInstruction* first_row = b.Slice(sorted_keys, starts, m.BatchPlus({1, n}));
  return {b.Reshape(first_row, m.BatchPlus({n})), b.GetTupleElement(sorted, 1)};
}

absl::Status Expand(HloInstruction* eigh) {
  HLOC_RETURN_IF_ERROR(expanders::CheckLinalgCustomCall(*eigh, LinalgCustomCall::kEigh));
  HLOC_ASSIGN_OR_RETURN(EighConfig config, ParseEighConfig(*eigh));
  const Shape& a_shape = eigh->operand(0)->shape();
  const MatrixBatch m(a_shape.dimensions());
  const int64_t n = m.rows();
  const PrimitiveType type = a_shape.element_type();
  const PrimitiveType w_type = eigh->shape().tuple_shapes(1).element_type();
  const PrimitiveType compute = expanders::LinalgComputeType(type);
  const PrimitiveType real = IsComplex(compute) ? ComplexComponentType(compute) : compute;
  ExpansionBuilder b(eigh->parent(), eigh);
  HloInstruction* a = b.ConvertIfNeeded(eigh->operand(0), compute);
  HloInstruction* w = nullptr;
  HloInstruction* v = nullptr;
  if (n <= 1) {
    w = b.Reshape(expanders::RealPart(b, a), m.BatchPlus({n}));
    v = b.Splat(b.Scalar(compute, 1), m.dims());
  } else {
    const Jacobi jacobi{MatrixBatch(m.BatchPlus({n + n % 2, n + n % 2})), (n + 1) / 2, compute,
                        real};
    HloInstruction* h = Hermitian(b, m, a, config.lower);
    if (n % 2 == 1) h = PadOne(b, m, h);
    const int64_t N = jacobi.N();
    const MatrixBatch& p = jacobi.m;
    HloInstruction* eye = b.Convert(
        b.Compare(b.Iota(xla::S32, p.dims(), p.batch_rank()),
                  b.Iota(xla::S32, p.dims(), p.batch_rank() + 1), ComparisonDirection::kEq),
        compute);
    std::vector<HloInstruction*> result = expanders::BuildCountedLoop(
        // The loop counter is s32.
        b, std::min<int64_t>(config.max_iter, std::numeric_limits<int32_t>::max()), {h, eye},
        [&](ExpansionBuilder& sweep, HloInstruction*, const std::vector<HloInstruction*>& state) {
          return expanders::BuildCountedLoop(sweep, N - 1, state,
                                             [&](ExpansionBuilder& round, HloInstruction*,
                                                 const std::vector<HloInstruction*>& pair) {
                                               return jacobi.Round(round, pair[0], pair[1]);
                                             });
        },
        [&](ExpansionBuilder& condition, const std::vector<HloInstruction*>& state) {
          return jacobi.NotConverged(condition, state[0], config.tol);
        });
    if (!result.empty()) {
      std::vector<int64_t> starts(p.batch_rank() + 2, 0);
      w = expanders::RealPart(b, jacobi.Diagonal(b, result[0]));
      std::vector<int64_t> w_starts(p.batch_rank() + 1, 0);
      w = b.Slice(w, w_starts, m.BatchPlus({n}));
      v = b.Slice(result[1], starts, m.BatchPlus({n, n}));
      if (config.sort) {
        std::vector<HloInstruction*> sorted = SortByEigenvalue(b, m, w, v);
        w = sorted[0];
        v = sorted[1];
      }
    }
  }
  HloInstruction* out = b.Tuple({b.ConvertIfNeeded(v, type), b.ConvertIfNeeded(w, w_type)});
  HLOC_RETURN_IF_ERROR(b.status());
  return expanders::ReplaceInstruction(eigh, out);
}

}  // namespace

absl::StatusOr<bool> EighExpander::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* call : computation->MakeInstructionPostOrder()) {
      if (LinalgCustomCallOf(*call) != LinalgCustomCall::kEigh) continue;
      if (!call->control_predecessors().empty() || !call->control_successors().empty()) continue;
      HLOC_RETURN_IF_ERROR(Expand(call));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
