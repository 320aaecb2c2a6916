// The GEMM kernels compiled for baseline x86-64 (SSE2); see gemm_kernel.h.
#include "hlo/evaluator/gemm_kernel.h"

namespace hloc {
namespace eval {
namespace gemm_baseline {
#include "hlo/evaluator/gemm_kernel_impl.inc"
}  // namespace gemm_baseline
}  // namespace eval
}  // namespace hloc
