// TriangularSolveExpander: triangular-solve as a while loop of ordinary HLO
// (dynamic slices, a batched row-times-matrix dot, elementwise ops), which
// the host and GPU backends compile; before this pass both ran it through
// the interpreter.
//
// Normal form first: T = op(A) restricted to its triangle (the other
// triangle zeroed, the diagonal set to 1 for unit_diagonal; op transposes
// for TRANSPOSE and ADJOINT, real types only), lower' = lower != transposed.
// A right-side solve X T = B is the left-side solve T^T X^T = B^T (and
// lower' flips). Then, for the k x k matrix T and B [k, c], X = 0:
//
//   for s in 0..k-1:
//     i = lower' ? s : k-1-s             forward or backward substitution
//     X[i, :] = (B[i, :] - T[i, :] · X) / T[i, i]
//
// T[i, :] · X only sums over rows of X already solved: the others are still
// 0, and T[i, j] is 0 outside the triangle. The interpreter sums the same
// terms (in double); f16/bf16 are computed in f32, f32 and f64 in their own
// type. One k x c row product per trip: O(k^2 c) work in k trips.
#ifndef HLOC_PASSES_EXPANDERS_TRIANGULAR_SOLVE_EXPANDER_H_
#define HLOC_PASSES_EXPANDERS_TRIANGULAR_SOLVE_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class TriangularSolveExpander : public HloPass {
 public:
  absl::string_view name() const override { return "triangular-solve-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_TRIANGULAR_SOLVE_EXPANDER_H_
