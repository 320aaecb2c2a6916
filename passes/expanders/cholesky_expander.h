// CholeskyExpander: cholesky as a while loop over the columns of ordinary
// HLO (dynamic slices, a batched matrix-vector dot, elementwise ops), which
// the host and GPU backends compile; before this pass both ran cholesky
// through the interpreter.
//
// For a batch of n x n matrices A (the lower triangle is read; with
// lower=false the upper one, by working on A's transpose) and L = 0:
//
//   for j in 0..n-1:
//     v      = A[:, j] - L · L[j, :]      L[j, k] is 0 for k >= j (not yet
//                                        written), so this is
//                                        A[i,j] - sum_{k<j} L[i,k] L[j,k]
//     l_jj   = sqrt(v[j])                 NaN when A is not positive definite,
//                                        as in the interpreter
//     L[:, j] = i > j ? v[i] / l_jj : (i == j ? l_jj : 0)
//
// The result is L (its transpose for lower=false), with zeros in the other
// triangle as the interpreter writes them. One matrix-vector product per
// column: O(n^3) work in n loop trips, fine for the small matrices models
// factor. f16/bf16 are computed in f32, f32 and f64 in their own type (the
// interpreter uses double).
#ifndef HLOC_PASSES_EXPANDERS_CHOLESKY_EXPANDER_H_
#define HLOC_PASSES_EXPANDERS_CHOLESKY_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class CholeskyExpander : public HloPass {
 public:
  absl::string_view name() const override { return "cholesky-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_CHOLESKY_EXPANDER_H_
