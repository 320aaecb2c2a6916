// The GEMM kernels compiled with -mavx2 -mfma (see BUILD); called only when
// the CPU reports both features (gemm_kernel.cc).
#include "hlo/evaluator/gemm_kernel.h"

namespace hloc {
namespace eval {
namespace gemm_avx2 {
#include "hlo/evaluator/gemm_kernel_impl.inc"
}  // namespace gemm_avx2
}  // namespace eval
}  // namespace hloc
