// The interpreter's reference for the linear-algebra custom calls of
// hlo/linalg_custom_calls.h ("Qr", "ProductOfElementaryHouseholderReflectors",
// "Eigh"): textbook algorithms on one matrix at a time in complex<double>
// (real inputs stay real in it), rounded once to the result type. They are
// written independently of passes/expanders' expansions, which the tests
// compare against them.
//
//   Qr       unblocked Householder QR with LAPACK's xLARFG reflector
//            (beta = -sign(Re alpha) * norm, tau = 0 when nothing is below
//            the diagonal and alpha is real);
//   product  Q = H_0 ... H_{k-1} applied to the first n columns of I;
//   Eigh     cyclic Jacobi (row by row over the pairs p < q) to double
//            precision: the converged decomposition. max_iter and tol only
//            bound how hard the expansion works, so they are not read here.
#ifndef HLOC_HLO_EVALUATOR_LINALG_CUSTOM_CALLS_H_
#define HLOC_HLO_EVALUATOR_LINALG_CUSTOM_CALLS_H_

#include "absl/status/statusor.h"
#include "hlo/evaluator/ops.h"
#include "hlo/linalg_custom_calls.h"

namespace hloc {
namespace eval {

absl::StatusOr<Literal> EvalLinalgCustomCall(LinalgCustomCall kind, const HloInstruction& hlo,
                                             Operands ops);

}  // namespace eval
}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_LINALG_CUSTOM_CALLS_H_
