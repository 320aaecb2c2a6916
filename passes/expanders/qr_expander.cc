#include "passes/expanders/qr_expander.h"

#include <algorithm>
#include <vector>

#include "hlo/linalg_custom_calls.h"
#include "hlo/status_macros.h"
#include "passes/expanders/counted_loop.h"
#include "passes/expanders/expansion_builder.h"
#include "passes/expanders/matrix_batch.h"

namespace hloc {
namespace {

using expanders::Conjugate;
using expanders::ExpansionBuilder;
using expanders::MatrixBatch;

HloInstruction* Zero(ExpansionBuilder& b, PrimitiveType type) { return b.Scalar(type, 0); }

// v [b..., m, 1] as the row v^H [b..., 1, m].
HloInstruction* AdjointRow(ExpansionBuilder& b, const MatrixBatch& m, HloInstruction* v) {
  return b.Reshape(Conjugate(b, v), m.BatchPlus({1, m.rows()}));
}

// x - tau v (v^H x) for x [b..., m, n], v [b..., m, 1], tau [b...]: the
// reflector I - tau v v^H applied from the left.
HloInstruction* Reflect(ExpansionBuilder& b, const MatrixBatch& m, HloInstruction* x,
                        HloInstruction* v, HloInstruction* tau,
                        HloInstruction* column_mask = nullptr) {
  HloInstruction* w = MatrixBatch::MatMul(b, AdjointRow(b, m, v), x);  // [b..., 1, n]
  if (column_mask != nullptr) {
    w = b.Select(column_mask, w,
                 b.Splat(Zero(b, w->shape().element_type()), m.BatchPlus({1, m.columns()})));
  }
  HloInstruction* update =
      b.Binary(HloOpcode::kMultiply, m.SpreadScalar(b, tau, {m.rows(), m.columns()}),
               MatrixBatch::MatMul(b, v, w));
  return b.Binary(HloOpcode::kSubtract, x, update);
}

// Householder QR (see the header) on `a` of the compute type.
std::vector<HloInstruction*> BuildQr(ExpansionBuilder& b, const MatrixBatch& m, HloInstruction* a) {
  const PrimitiveType type = a->shape().element_type();
  const bool complex = IsComplex(type);
  const PrimitiveType real = complex ? ComplexComponentType(type) : type;
  const int64_t k = std::min(m.rows(), m.columns());
  HloInstruction* taus = b.Splat(Zero(b, type), m.BatchPlus({k}));
  if (k == 0) return {a, taus};  // No column to slice.
  return expanders::BuildCountedLoop(
      b, k, {a, taus},
      [&](ExpansionBuilder& c, HloInstruction* j, const std::vector<HloInstruction*>& state) {
        HloInstruction* a = state[0];
        HloInstruction* taus = state[1];
        HloInstruction* zero = c.IndexScalar(xla::S32, 0);
        const std::vector<int64_t> column_dims = m.BatchPlus({m.rows(), 1});
        HloInstruction* x = MatrixBatch::Column(c, a, j);
        HloInstruction* rows = c.Iota(xla::S32, column_dims, m.batch_rank());
        HloInstruction* jc = c.Splat(j, column_dims);
        HloInstruction* below = c.Compare(rows, jc, ComparisonDirection::kGt);
        HloInstruction* at_j = c.Compare(rows, jc, ComparisonDirection::kEq);
        HloInstruction* zeros = c.Splat(Zero(c, type), column_dims);
        HloInstruction* x_below = c.Select(below, x, zeros);
        HloInstruction* alpha = c.Reshape(MatrixBatch::Element(c, a, j, j), m.BatchPlus({}));
        HloInstruction* sigma = c.Reduce(expanders::AbsSquared(c, x_below), Zero(c, real),
                                         {m.batch_rank(), m.batch_rank() + 1},
                                         c.ScalarBinaryComputation(HloOpcode::kAdd, real));
        HloInstruction* alpha_re = expanders::RealPart(c, alpha);
        HloInstruction* alpha_im = expanders::ImagPart(c, alpha);
        HloInstruction* mu = c.Unary(
            HloOpcode::kSqrt, c.Binary(HloOpcode::kAdd, expanders::AbsSquared(c, alpha), sigma));
        const std::vector<int64_t> batch = m.BatchPlus({});
        HloInstruction* real_zero = c.Splat(Zero(c, real), batch);
        HloInstruction* beta = c.Select(c.Compare(alpha_re, real_zero, ComparisonDirection::kGe),
                                        c.Unary(HloOpcode::kNegate, mu), mu);
        HloInstruction* identity = c.Compare(sigma, real_zero, ComparisonDirection::kEq);
        if (complex) {
          identity = c.Binary(HloOpcode::kAnd, identity,
                              c.Compare(alpha_im, real_zero, ComparisonDirection::kEq));
        }
        HloInstruction* tau =
            c.Binary(HloOpcode::kDivide, c.Binary(HloOpcode::kSubtract, beta, alpha_re), beta);
        if (complex) {
          tau = c.Binary(HloOpcode::kComplex, tau,
                         c.Binary(HloOpcode::kDivide, c.Unary(HloOpcode::kNegate, alpha_im), beta));
        }
        tau = c.Select(identity, c.Splat(Zero(c, type), batch), tau);
        HloInstruction* beta_t = c.ConvertIfNeeded(beta, type);
        HloInstruction* divisor = c.Select(identity, c.Splat(c.Scalar(type, 1), batch),
                                           c.Binary(HloOpcode::kSubtract, alpha, beta_t));
        // v = [0.., 1, x[j+1:] / divisor].
        HloInstruction* v = c.Select(
            below, c.Binary(HloOpcode::kDivide, x_below, m.SpreadScalar(c, divisor, {m.rows(), 1})),
            c.Select(at_j, c.Splat(c.Scalar(type, 1), column_dims), zeros));
        // Columns after j: A -= conj(tau) v (v^H A).
        HloInstruction* columns =
            c.Iota(xla::S32, m.BatchPlus({1, m.columns()}), m.batch_rank() + 1);
        HloInstruction* after_j =
            c.Compare(columns, c.Splat(j, m.BatchPlus({1, m.columns()})), ComparisonDirection::kGt);
        HloInstruction* updated = Reflect(c, m, a, v, Conjugate(c, tau), after_j);
        // Column j: what is above the diagonal, beta, the vector below.
        HloInstruction* new_beta = c.Select(identity, alpha, beta_t);
        HloInstruction* column =
            c.Select(below, v, c.Select(at_j, m.SpreadScalar(c, new_beta, {m.rows(), 1}), x));
        updated = MatrixBatch::Update(c, updated, column, zero, j);
        std::vector<HloInstruction*> tau_starts(m.batch_rank(), zero);
        tau_starts.push_back(j);
        HloInstruction* new_taus =
            c.DynamicUpdateSlice(taus, c.Reshape(tau, m.BatchPlus({1})), tau_starts);
        return std::vector<HloInstruction*>{updated, new_taus};
      });
}

// Q = H_0 ... H_{k-1} I[:, :n] for `a` [b..., m, n], `taus` [b..., k].
HloInstruction* BuildHouseholderProduct(ExpansionBuilder& b, const MatrixBatch& m,
                                        HloInstruction* a, HloInstruction* taus, int64_t k) {
  const PrimitiveType type = a->shape().element_type();
  HloInstruction* eye =
      b.Convert(b.Compare(b.Iota(xla::S32, m.dims(), m.batch_rank()),
                          b.Iota(xla::S32, m.dims(), m.batch_rank() + 1), ComparisonDirection::kEq),
                type);
  if (k == 0) return eye;
  std::vector<HloInstruction*> result = expanders::BuildCountedLoop(
      b, k, {a, taus, eye},
      [&](ExpansionBuilder& c, HloInstruction* s, const std::vector<HloInstruction*>& state) {
        HloInstruction* zero = c.IndexScalar(xla::S32, 0);
        // The last reflector first.
        HloInstruction* i = c.Binary(HloOpcode::kSubtract, c.IndexScalar(xla::S32, k - 1), s);
        const std::vector<int64_t> column_dims = m.BatchPlus({m.rows(), 1});
        HloInstruction* rows = c.Iota(xla::S32, column_dims, m.batch_rank());
        HloInstruction* ic = c.Splat(i, column_dims);
        HloInstruction* v = c.Select(
            c.Compare(rows, ic, ComparisonDirection::kGt), MatrixBatch::Column(c, state[0], i),
            c.Convert(c.Compare(rows, ic, ComparisonDirection::kEq), type));
        std::vector<HloInstruction*> tau_starts(m.batch_rank(), zero);
        tau_starts.push_back(i);
        HloInstruction* tau =
            c.Reshape(c.DynamicSlice(state[1], tau_starts, m.BatchPlus({1})), m.BatchPlus({}));
        return std::vector<HloInstruction*>{state[0], state[1], Reflect(c, m, state[2], v, tau)};
      });
  return result.empty() ? nullptr : result[2];
}

absl::Status Expand(HloInstruction* call, LinalgCustomCall kind) {
  HLOC_RETURN_IF_ERROR(expanders::CheckLinalgCustomCall(*call, kind));
  const Shape& a_shape = call->operand(0)->shape();
  const MatrixBatch m(a_shape.dimensions());
  const PrimitiveType type = a_shape.element_type();
  const PrimitiveType compute = expanders::LinalgComputeType(type);
  ExpansionBuilder b(call->parent(), call);
  HloInstruction* a = b.ConvertIfNeeded(call->operand(0), compute);
  HloInstruction* out = nullptr;
  if (kind == LinalgCustomCall::kQr) {
    std::vector<HloInstruction*> qr = BuildQr(b, m, a);
    if (!qr.empty()) {
      out = b.Tuple({b.ConvertIfNeeded(qr[0], type), b.ConvertIfNeeded(qr[1], type)});
    }
  } else {
    const Shape& taus = call->operand(1)->shape();
    HloInstruction* q = BuildHouseholderProduct(
        b, m, a, b.ConvertIfNeeded(call->operand(1), compute), taus.dimensions(taus.rank() - 1));
    out = b.ConvertIfNeeded(q, type);
  }
  HLOC_RETURN_IF_ERROR(b.status());
  return expanders::ReplaceInstruction(call, out);
}

}  // namespace

absl::StatusOr<bool> QrExpander::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* call : computation->MakeInstructionPostOrder()) {
      const std::optional<LinalgCustomCall> kind = LinalgCustomCallOf(*call);
      if (kind != LinalgCustomCall::kQr && kind != LinalgCustomCall::kHouseholderProduct) continue;
      if (!call->control_predecessors().empty() || !call->control_successors().empty()) continue;
      HLOC_RETURN_IF_ERROR(Expand(call, *kind));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
