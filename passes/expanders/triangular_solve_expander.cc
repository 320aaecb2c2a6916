#include "passes/expanders/triangular_solve_expander.h"

#include <vector>

#include "hlo/status_macros.h"
#include "passes/expanders/counted_loop.h"
#include "passes/expanders/expansion_builder.h"
#include "passes/expanders/matrix_batch.h"

namespace hloc {
namespace {

using expanders::ExpansionBuilder;
using expanders::MatrixBatch;

bool CanExpand(const HloInstruction& solve) {
  if (!solve.control_predecessors().empty() || !solve.control_successors().empty()) return false;
  const Shape& a = solve.operand(0)->shape();
  const Shape& b = solve.operand(1)->shape();
  return expanders::IsRealMatrixBatch(a) && expanders::IsRealMatrixBatch(b) &&
         a.element_type() == b.element_type() && a.rank() == b.rank();
}

absl::Status Expand(HloInstruction* solve) {
  const xla::TriangularSolveOptions& options = solve->attrs().triangular_solve_options;
  const PrimitiveType type = solve->shape().element_type();
  const PrimitiveType compute = expanders::LinalgComputeType(type);
  const MatrixBatch a_batch(solve->operand(0)->shape().dimensions());
  const MatrixBatch b_batch(solve->operand(1)->shape().dimensions());
  const int64_t k = a_batch.rows();
  ExpansionBuilder b(solve->parent(), solve);

  // T = op(A) restricted to its triangle.
  HloInstruction* a = b.ConvertIfNeeded(solve->operand(0), compute);
  HloInstruction* row = b.Iota(xla::S32, a_batch.dims(), a_batch.batch_rank());
  HloInstruction* column = b.Iota(xla::S32, a_batch.dims(), a_batch.batch_rank() + 1);
  HloInstruction* zeros = b.Splat(b.Scalar(compute, 0), a_batch.dims());
  HloInstruction* t = b.Select(
      b.Compare(column, row, options.lower() ? ComparisonDirection::kLe : ComparisonDirection::kGe),
      a, zeros);
  if (options.unit_diagonal()) {
    t = b.Select(b.Compare(row, column, ComparisonDirection::kEq),
                 b.Splat(b.Scalar(compute, 1), a_batch.dims()), t);
  }
  const bool transposed = options.transpose_a() == xla::TriangularSolveOptions::TRANSPOSE ||
                          options.transpose_a() == xla::TriangularSolveOptions::ADJOINT;
  bool t_lower = options.lower() != transposed;
  if (transposed) t = b.Transpose(t, a_batch.SwapMinor());
  // Right side: X T = B  <=>  T^T X^T = B^T.
  HloInstruction* rhs = b.ConvertIfNeeded(solve->operand(1), compute);
  if (!options.left_side()) {
    t = b.Transpose(t, a_batch.SwapMinor());
    t_lower = !t_lower;
    rhs = b.Transpose(rhs, b_batch.SwapMinor());
  }
  const MatrixBatch x_batch(rhs == nullptr ? b_batch.dims() : rhs->shape().dimensions());
  const int64_t c = x_batch.columns();

  std::vector<HloInstruction*> result = expanders::BuildCountedLoop(
      b, k, {t, rhs, b.Splat(b.Scalar(compute, 0), x_batch.dims())},
      [&](ExpansionBuilder& body, HloInstruction* s, const std::vector<HloInstruction*>& state) {
        HloInstruction* tri = state[0];
        HloInstruction* targets = state[1];
        HloInstruction* x = state[2];
        HloInstruction* i =
            t_lower ? s
                    : body.Binary(HloOpcode::kSubtract, body.IndexScalar(xla::S32, k - 1), s);
        HloInstruction* diagonal = body.Broadcast(
            body.Reshape(MatrixBatch::Element(body, tri, i, i), x_batch.BatchPlus({})),
            x_batch.BatchPlus({1, c}), x_batch.BatchDimensions());
        HloInstruction* solved = body.Binary(
            HloOpcode::kDivide,
            body.Binary(HloOpcode::kSubtract, MatrixBatch::Row(body, targets, i),
                        MatrixBatch::MatMul(body, MatrixBatch::Row(body, tri, i), x)),
            diagonal);
        return std::vector<HloInstruction*>{
            tri, targets, MatrixBatch::Update(body, x, solved, i, body.IndexScalar(xla::S32, 0))};
      });
  HloInstruction* x = result.empty() ? nullptr : result[2];
  if (!options.left_side()) x = b.Transpose(x, x_batch.SwapMinor());
  HloInstruction* out = b.ConvertIfNeeded(x, type);
  HLOC_RETURN_IF_ERROR(b.status());
  return expanders::ReplaceInstruction(solve, out);
}

}  // namespace

absl::StatusOr<bool> TriangularSolveExpander::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* solve : computation->MakeInstructionPostOrder()) {
      if (solve->opcode() != HloOpcode::kTriangularSolve || !CanExpand(*solve)) continue;
      HLOC_RETURN_IF_ERROR(Expand(solve));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
