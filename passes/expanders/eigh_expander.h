// EighExpander: the "Eigh" custom call (hlo/linalg_custom_calls.h;
// tf.linalg.eigh and self_adjoint_eig under jit_compile=True emit it) as
// ordinary HLO: parallel-order cyclic Jacobi, so it runs on every backend
// without the interpreter.
//
// The Hermitian matrix the chosen triangle describes is padded to an even
// size N = 2h (a zero row and column: an isolated index that no rotation
// ever touches, sliced off at the end). Its indices sit in N "slots"; slot
// i < h is paired with slot i + h. One round rotates all h pairs at once,
// each by the 2x2 rotation that zeroes its off-diagonal entry b:
//
//   tau = (a_qq - a_pp) / (2|b|),  t = sign(tau) / (|tau| + sqrt(1 + tau^2))
//   c = 1 / sqrt(1 + t^2),  s = t c,  w = b / |b|   (t = 0 when b = 0)
//   J = [[c, s w], [-s conj(w), c]]:   A <- J^H A J,  V <- V J
//
// applied as elementwise updates of the top and bottom halves of A's rows,
// then of A's and V's columns (O(N^2) per round, no matrix product). Then
// the slots move as the "circle" schedule of a round-robin tournament: slot
// 0 stays, the others shift one place around the cycle
//
//   top    0  1  2 .. h-1          top    0  h  1 .. h-2
//   bottom h h+1   .. N-1    ->    bottom h+1 .. N-1  h-1
//
// so N - 1 rounds (one sweep) pair every two indices once and bring every
// index back to its own slot. Sweeps repeat (an outer loop with a
// data-dependent exit) while some matrix of the batch has
// |offdiag(A)| > tol |A| (Frobenius norms) and fewer than max_iter sweeps
// ran, as XLA's expansion does. Then w = diag(A), v = V, sorted ascending
// by w with a two-operand sort when the config asks for it.
//
// f16/bf16 compute in f32; f32, f64, c64 and c128 in their own type.
#ifndef HLOC_PASSES_EXPANDERS_EIGH_EXPANDER_H_
#define HLOC_PASSES_EXPANDERS_EIGH_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class EighExpander : public HloPass {
 public:
  absl::string_view name() const override { return "eigh-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_EIGH_EXPANDER_H_
