#include "passes/expanders/cholesky_expander.h"

#include <vector>

#include "hlo/status_macros.h"
#include "passes/expanders/counted_loop.h"
#include "passes/expanders/expansion_builder.h"
#include "passes/expanders/matrix_batch.h"

namespace hloc {
namespace {

using expanders::ExpansionBuilder;
using expanders::MatrixBatch;

bool CanExpand(const HloInstruction& cholesky) {
  if (!cholesky.control_predecessors().empty() || !cholesky.control_successors().empty()) {
    return false;
  }
  const Shape& a = cholesky.operand(0)->shape();
  return expanders::IsRealMatrixBatch(a) && a.dimensions(a.rank() - 1) == a.dimensions(a.rank() - 2);
}

// A per-matrix scalar [b..., 1, 1] broadcast to [b..., n, 1].
HloInstruction* BroadcastPerMatrix(ExpansionBuilder& b, const MatrixBatch& m, HloInstruction* x) {
  return b.Broadcast(b.Reshape(x, m.BatchPlus({})), m.BatchPlus({m.rows(), 1}),
                     m.BatchDimensions());
}

absl::Status Expand(HloInstruction* cholesky) {
  const MatrixBatch m(cholesky->shape().dimensions());
  const PrimitiveType type = cholesky->shape().element_type();
  const PrimitiveType compute = expanders::LinalgComputeType(type);
  const bool lower = cholesky->attrs().cholesky_options->lower();
  const int64_t n = m.rows();
  ExpansionBuilder b(cholesky->parent(), cholesky);
  // Work on the lower triangle: A itself, or A's transpose for lower=false.
  HloInstruction* a = b.ConvertIfNeeded(cholesky->operand(0), compute);
  if (!lower) a = b.Transpose(a, m.SwapMinor());
  HloInstruction* zeros = b.Splat(b.Scalar(compute, 0), m.dims());

  std::vector<HloInstruction*> result = expanders::BuildCountedLoop(
      b, n, {a, zeros},
      [&](ExpansionBuilder& c, HloInstruction* j, const std::vector<HloInstruction*>& state) {
        HloInstruction* matrix = state[0];
        HloInstruction* factor = state[1];
        HloInstruction* zero = c.IndexScalar(xla::S32, 0);
        // v = A[:, j] - L · L[j, :]^T, [b..., n, 1].
        HloInstruction* row = c.Reshape(MatrixBatch::Row(c, factor, j), m.BatchPlus({n, 1}));
        HloInstruction* v = c.Binary(HloOpcode::kSubtract, MatrixBatch::Column(c, matrix, j),
                                     MatrixBatch::MatMul(c, factor, row));
        HloInstruction* ljj =
            BroadcastPerMatrix(c, m, c.Unary(HloOpcode::kSqrt, MatrixBatch::Element(c, v, j, zero)));
        HloInstruction* i = c.Iota(xla::S32, m.BatchPlus({n, 1}), m.batch_rank());
        HloInstruction* jb = c.Splat(j, m.BatchPlus({n, 1}));
        HloInstruction* column = c.Select(
            c.Compare(i, jb, ComparisonDirection::kGt), c.Binary(HloOpcode::kDivide, v, ljj),
            c.Select(c.Compare(i, jb, ComparisonDirection::kEq), ljj,
                     c.Splat(c.Scalar(compute, 0), m.BatchPlus({n, 1}))));
        return std::vector<HloInstruction*>{matrix, MatrixBatch::Update(c, factor, column, zero, j)};
      });
  HloInstruction* l = result.empty() ? nullptr : result[1];
  if (!lower) l = b.Transpose(l, m.SwapMinor());
  HloInstruction* out = b.ConvertIfNeeded(l, type);
  HLOC_RETURN_IF_ERROR(b.status());
  return expanders::ReplaceInstruction(cholesky, out);
}

}  // namespace

absl::StatusOr<bool> CholeskyExpander::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* cholesky : computation->MakeInstructionPostOrder()) {
      if (cholesky->opcode() != HloOpcode::kCholesky || !CanExpand(*cholesky)) continue;
      HLOC_RETURN_IF_ERROR(Expand(cholesky));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
