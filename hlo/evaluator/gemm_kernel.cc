// Runtime choice between the GEMM kernel variants (see gemm_kernel.h).
#include "hlo/evaluator/gemm_kernel.h"

namespace hloc {
namespace eval {
namespace {

bool HasAvx2Fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

}  // namespace

void Gemm(const GemmArgs<float>& args) {
#if defined(__x86_64__)
  if (HasAvx2Fma()) return gemm_avx2::GemmF32(args);
#endif
  gemm_baseline::GemmF32(args);
}

void Gemm(const GemmArgs<double>& args) {
#if defined(__x86_64__)
  if (HasAvx2Fma()) return gemm_avx2::GemmF64(args);
#endif
  gemm_baseline::GemmF64(args);
}

}  // namespace eval
}  // namespace hloc
