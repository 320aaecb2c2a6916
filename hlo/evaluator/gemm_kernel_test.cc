// Checks both GEMM kernel variants (baseline and AVX2+FMA, when the CPU has
// it) against a plain triple loop on shapes that exercise every path:
// packed blocks with edge tiles, few rows, few columns, strided and
// transposed operand views, accumulation.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/evaluator/gemm_kernel.h"

namespace hloc {
namespace eval {
namespace {

template <typename T>
void CheckVariant(void (*gemm)(const GemmArgs<T>&), int64_t m, int64_t n, int64_t k,
                  bool transpose_a, bool transpose_b, bool accumulate) {
  std::vector<T> a(m * k), b(k * n), c(m * n), expected(m * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(std::sin(0.37 * i));
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(std::cos(0.11 * i));
  for (size_t i = 0; i < c.size(); ++i) c[i] = expected[i] = accumulate ? T(0.5) : T(99);
  GemmArgs<T> g;
  g.m = m; g.n = n; g.k = k;
  g.a = a.data();
  g.a_rs = transpose_a ? 1 : k;
  g.a_cs = transpose_a ? m : 1;
  g.b = b.data();
  g.b_rs = transpose_b ? 1 : n;
  g.b_cs = transpose_b ? k : 1;
  g.c = c.data();
  g.ldc = n;
  g.accumulate = accumulate;
  gemm(g);
  double max_err = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = accumulate ? 0.5 : 0;
      for (int64_t kk = 0; kk < k; ++kk) s += double(a[i * g.a_rs + kk * g.a_cs]) * b[kk * g.b_rs + j * g.b_cs];
      max_err = std::max(max_err, std::fabs(s - c[i * n + j]));
    }
  }
  EXPECT_LT(max_err, 1e-3) << m << "x" << n << "x" << k << " ta=" << transpose_a
                           << " tb=" << transpose_b << " acc=" << accumulate;
}

TEST(GemmKernelTest, AllPathsMatchTripleLoop) {
  const int64_t shapes[][3] = {{1, 1, 1},   {2, 40, 7},  {7, 3, 300}, {13, 17, 5},
                               {6, 16, 256}, {25, 530, 270}, {1, 100, 3}, {50, 2, 600}};
  bool avx2 = false;
#if defined(__x86_64__) && defined(__GNUC__)
  avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  for (const auto& s : shapes) {
    for (int variant = 0; variant < 4; ++variant) {
      const bool ta = variant & 1, tb = variant & 2;
      for (bool acc : {false, true}) {
        CheckVariant<float>(gemm_baseline::GemmF32, s[0], s[1], s[2], ta, tb, acc);
        CheckVariant<double>(gemm_baseline::GemmF64, s[0], s[1], s[2], ta, tb, acc);
        if (avx2) {
          CheckVariant<float>(gemm_avx2::GemmF32, s[0], s[1], s[2], ta, tb, acc);
          CheckVariant<double>(gemm_avx2::GemmF64, s[0], s[1], s[2], ta, tb, acc);
        }
      }
    }
  }
}

}  // namespace
}  // namespace eval
}  // namespace hloc
