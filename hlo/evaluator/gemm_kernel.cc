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

void GemmS8(const GemmS8Args& g) {
#if defined(__x86_64__)
  if (GemmS8IsVectorized()) return gemm_avx2::GemmS8S32(g);
#endif
  // Sums in uint32_t: wrapping is defined there and equals s32 two's
  // complement wrapping.
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      uint32_t sum = 0;
      for (int64_t kk = 0; kk < g.k; ++kk) {
        const int32_t product = static_cast<int32_t>(g.a[i * g.a_rs + kk * g.a_cs]) *
                                static_cast<int32_t>(g.b[kk * g.b_rs + j * g.b_cs]);
        sum += static_cast<uint32_t>(product);
      }
      g.c[i * g.ldc + j] = static_cast<int32_t>(sum);
    }
  }
}

bool GemmS8IsVectorized() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
#else
  return false;
#endif
}

void Gemm(const GemmArgs<double>& args) {
#if defined(__x86_64__)
  if (HasAvx2Fma()) return gemm_avx2::GemmF64(args);
#endif
  gemm_baseline::GemmF64(args);
}

}  // namespace eval
}  // namespace hloc
