// The linear-algebra custom calls that XLA's client libraries emit and that
// XLA itself expands into ordinary HLO (TensorFlow's tf.linalg.qr, inv,
// solve and eigh under jit_compile=True produce them). hloc treats them as
// built-in ops: shape inference knows their result shapes (so the verifier
// reports a malformed call), the interpreter computes them
// (hlo/evaluator/linalg_custom_calls.cc) and passes/expanders rewrites them
// for the backends. This file is the one place their conventions are
// written down and decoded:
//
//   "Qr"(a[..., m, n]) -> (a'[..., m, n], taus[..., min(m, n)])
//       LAPACK geqrf's packed form: R on and above the diagonal of a', the
//       Householder vector v_j below it (v_j[j] = 1 implied, v_j[i] = 0 for
//       i < j), H_j = I - taus[j] v_j v_j^H and H_{k-1}^H ... H_0^H a = R.
//   "ProductOfElementaryHouseholderReflectors"(a[..., m, n], taus[..., k])
//       -> q[..., m, n], m >= n, k <= n: the first n columns of
//       H_0 H_1 ... H_{k-1} (LAPACK orgqr / ungqr).
//   "Eigh"(a[..., n, n]) -> (v[..., n, n], w[..., n]), backend_config (or the
//       legacy opaque string) "lower,sort,max_iter,tol", e.g. "1,1,100,1e-06":
//       a is Hermitian and only its lower (lower=1) or upper triangle is
//       read, the imaginary part of its diagonal taken as 0; a = v diag(w)
//       v^H with w real (f32 for c64); sort=1 gives w ascending with v's
//       columns in the same order. max_iter and tol bound the iteration
//       (sweeps; stop when the off-diagonal norm <= tol * Frobenius norm).
//
// Element types: f16, bf16, f32, f64, c64, c128 (XLA's builders accept any
// floating-point or complex type).
#ifndef HLOC_HLO_LINALG_CUSTOM_CALLS_H_
#define HLOC_HLO_LINALG_CUSTOM_CALLS_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/instruction.h"
#include "hlo/shape.h"

namespace hloc {

enum class LinalgCustomCall { kQr, kHouseholderProduct, kEigh };

inline constexpr char kQrTarget[] = "Qr";
inline constexpr char kHouseholderProductTarget[] = "ProductOfElementaryHouseholderReflectors";
inline constexpr char kEighTarget[] = "Eigh";

// Which of the three `target` names, if any.
std::optional<LinalgCustomCall> LinalgCustomCallFromTarget(absl::string_view target);
// Same for a custom-call instruction (nullopt for any other instruction).
std::optional<LinalgCustomCall> LinalgCustomCallOf(const HloInstruction& instruction);

struct EighConfig {
  bool lower = true;
  bool sort = true;
  int64_t max_iter = 100;
  double tol = 1e-6;
};

// Decodes an "Eigh" call's "lower,sort,max_iter,tol" (backend_config, or
// the opaque string when backend_config is empty).
absl::StatusOr<EighConfig> ParseEighConfig(const HloInstruction& eigh);

// The result shape of a linear-algebra custom call of `kind` from its
// operand shapes, or why the operands (or, for "Eigh", the config) are not
// valid for it.
absl::StatusOr<Shape> InferLinalgCustomCallShape(LinalgCustomCall kind,
                                                 const HloInstruction& instruction,
                                                 absl::Span<const Shape* const> operands);

}  // namespace hloc

#endif  // HLOC_HLO_LINALG_CUSTOM_CALLS_H_
