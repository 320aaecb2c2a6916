// JAX's LAPACK custom calls on the CPU (`lapack_<t><routine>_ffi`, typed FFI),
// run by hloc with the system's LAPACK (lapack_library.h), so `jnp.linalg`
// and `jax.scipy.linalg` programs lowered for the CPU run on hloc: on the
// host backend (a library-call thunk), in the interpreter, and on the GPU
// between kernels (through the host, like any host custom call).
//
//   target                      operands            results (each with the batch dims first)
//   lapack_?trsm_ffi            a[k,k], b[m,n]      x[m,n]             side uplo trans_x diag
//   lapack_?getrf_ffi           a[m,n]              lu, ipiv s32[min], info s32
//   lapack_?geqrf_ffi           a[m,n]              a', tau[min]
//   lapack_?geqp3_ffi           a[m,n], jpvt s32[n] a', jpvt', tau[min]
//   lapack_?orgqr/ungqr_ffi     a[m,n], tau[k]      q[m,n]
//   lapack_?potrf_ffi           a[n,n]              a', info                   uplo
//   lapack_?gesdd/gesvd_ffi     a[m,n]              a', s real[min], u, vt, info  mode A|S|N
//   lapack_?syevd/heevd_ffi     a[n,n]              v, w real[n], info         mode V|N, uplo
//   lapack_?geev_ffi  (real)    a[n,n]              wr, wi, vl c, vr c, info   compute_left/right V|N
//   lapack_?geev_ffi  (complex) a[n,n]              w, vl, vr, info
//   lapack_?gees_ffi  (real)    a[n,n]              t, vs, wr, wi, sdim s32, info   mode V|N, sort N
//   lapack_?gees_ffi  (complex) a[n,n]              t, vs, w, sdim s32, info
//   lapack_?gehrd_ffi           a[n,n]              a', tau[n-1], info         low, high
//   lapack_?sytrd/hetrd_ffi     a[n,n]              a', d real[n], e real[n-1], tau[n-1], info  uplo
//   lapack_?gtsv_ffi            dl[n], d[n], du[n], b[n,k]   dl', d', du', b', info
//
// ? is s, d, c or z (f32, f64, c64, c128). Results are what LAPACK leaves in
// each array, as XLA:CPU returns them (info as LAPACK sets it; ipiv and jpvt
// 1-based); outputs a mode does not compute are zeros. hloc's buffers are
// row-major whatever layout the module names, so each matrix is transposed
// into LAPACK's column-major order and back (trsm and potrf instead solve
// the transposed problem in place). Batch elements may be split over the
// frame's `parallel` ranges; each gives the same bytes on any thread.
//
// DecodeLapackCall checks the instruction (target, element types, operand
// and result shapes, attributes) when a program is built, so a malformed
// call is a compile-time error naming it and the run needs no checks.
#ifndef HLOC_HLO_LAPACK_LAPACK_CALLS_H_
#define HLOC_HLO_LAPACK_LAPACK_CALLS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hlo/custom_call_targets.h"
#include "hlo/instruction.h"
#include "hlo/primitive_type.h"

namespace hloc {
namespace lapack {

enum class Routine {
  kTrsm, kGetrf, kGeqrf, kGeqp3, kOrgqr, kPotrf, kGesdd, kGesvd,
  kSyevd, kGeev, kGees, kGehrd, kSytrd, kGtsv,
};

// One decoded call.
struct LapackCall {
  Routine routine = Routine::kGetrf;
  PrimitiveType type = xla::F32;  // Of the matrices: F32, F64, C64 or C128.
  std::string name;               // LAPACK's routine, e.g. "dgetrf", "zheevd".
  char side = 'L', uplo = 'L', trans = 'N', diag = 'N';  // trsm, potrf, syevd, sytrd
  char mode = 'V';                // gesdd/gesvd A|S|N; syevd, gees V|N
  char left = 'N', right = 'N';   // geev
  int32_t low = 1, high = 0;      // gehrd (1-based, as LAPACK's ilo/ihi)
};

// True for names of the form lapack_*_ffi (hloc's to implement).
bool IsLapackTarget(absl::string_view target);

// Decodes and checks `hlo`, a custom call to a lapack_*_ffi target.
// Unimplemented for a target hloc does not implement (naming those it
// does), InvalidArgument naming the instruction for bad shapes or attributes.
absl::StatusOr<LapackCall> DecodeLapackCall(const HloInstruction& hlo);

// Runs a decoded call on the frame of its instruction (operands and results
// as custom_call_targets.h lays them out). Errors: LAPACK missing.
absl::Status RunLapackCall(const LapackCall& call, const CustomCallFrame& frame);

// DecodeLapackCall, then a handler that runs it.
absl::StatusOr<std::shared_ptr<const CustomCallHandler>> MakeLapackHandler(
    const HloInstruction& hlo);

}  // namespace lapack
}  // namespace hloc

#endif  // HLOC_HLO_LAPACK_LAPACK_CALLS_H_
