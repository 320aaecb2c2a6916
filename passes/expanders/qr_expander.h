// QrExpander: the "Qr" and "ProductOfElementaryHouseholderReflectors"
// custom calls (hlo/linalg_custom_calls.h; tf.linalg.qr, inv and solve
// under jit_compile=True emit them) as ordinary HLO, so they run on every
// backend without the interpreter.
//
// Qr is unblocked Householder QR, one trip of a counted loop per column j
// of a batch of m x n matrices A (k = min(m, n) trips):
//
//   x      = A[:, j];  alpha = x[j];  sigma = |x[j+1:]|^2
//   mu     = sqrt(|alpha|^2 + sigma);  beta = Re(alpha) >= 0 ? -mu : mu
//   tau    = (beta - Re alpha) / beta - i Im(alpha) / beta   (0 and beta =
//            alpha when sigma = 0 and alpha is real: H_j = I)
//   v      = [0.., 1, x[j+1:] / (alpha - beta)]
//   A[:, j+1:] -= conj(tau) v (v^H A[:, j+1:])    one matrix-vector product
//   A[:, j] = [A[:j, j], beta, v[j+1:]];  taus[j] = tau
//
// which is LAPACK's geqr2 with xLARFG's sign convention. The product of
// reflectors runs the other way, from the last reflector to the first:
//
//   Q = I[:, :n];  for i = k-1 .. 0:  Q -= tau_i v_i (v_i^H Q)
//
// Both are O(m n^2) in k trips of matrix-vector work: fine for the small
// and medium matrices models factor (XLA blocks the updates into matrix
// products for large ones). f16/bf16 compute in f32; f32, f64, c64 and c128
// in their own type. A call whose shapes are not those of its target is an
// error naming the instruction.
#ifndef HLOC_PASSES_EXPANDERS_QR_EXPANDER_H_
#define HLOC_PASSES_EXPANDERS_QR_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class QrExpander : public HloPass {
 public:
  absl::string_view name() const override { return "qr-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_QR_EXPANDER_H_
