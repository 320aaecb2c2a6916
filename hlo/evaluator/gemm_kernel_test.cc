// Checks both GEMM kernel variants (baseline and AVX2+FMA, when the CPU has
// it) against a plain triple loop on shapes that exercise every path:
// packed blocks with edge tiles, few rows, few columns, strided and
// transposed operand views, accumulation.
#include <cmath>
#include <cstdint>
#include <random>
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

// GemmS8 against a triple loop summing in int64 and wrapping to s32.
void CheckS8(int64_t m, int64_t n, int64_t k, bool transpose_a, bool transpose_b,
             int extreme, uint32_t seed) {
  std::vector<int8_t> a(m * k), b(k * n);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-128, 127);
  for (int8_t& x : a) x = static_cast<int8_t>(extreme == 0 ? value(rng) : extreme);
  for (int8_t& x : b) x = static_cast<int8_t>(extreme == 0 ? value(rng) : extreme);
  std::vector<int32_t> c(m * n, 12345);
  GemmS8Args g;
  g.m = m; g.n = n; g.k = k;
  g.a = a.data();
  g.a_rs = transpose_a ? 1 : k;
  g.a_cs = transpose_a ? m : 1;
  g.b = b.data();
  g.b_rs = transpose_b ? 1 : n;
  g.b_cs = transpose_b ? k : 1;
  g.c = c.data();
  g.ldc = n;
  GemmS8(g);
  int64_t wrong = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        s += int64_t{a[i * g.a_rs + kk * g.a_cs]} * b[kk * g.b_rs + j * g.b_cs];
      }
      const int32_t want = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(s)));
      if (c[i * n + j] != want && ++wrong <= 3) {
        ADD_FAILURE() << m << "x" << n << "x" << k << " ta=" << transpose_a << " tb=" << transpose_b
                      << " extreme=" << extreme << ": C(" << i << "," << j << ") = " << c[i * n + j]
                      << ", want " << want;
      }
    }
  }
}

TEST(GemmKernelTest, S8MatchesExactSums) {
  // Edge tiles (m % 4, n % 16), odd k and k past the 16-value vector packing
  // of A, several k blocks (512), column blocks (256), row blocks (64) and
  // blocks of packed A (1024 rows), vectors.
  const int64_t shapes[][3] = {{1, 1, 1},       {6, 16, 2},      {7, 17, 3},    {13, 35, 511},
                               {73, 257, 1025}, {100, 40, 1024}, {1, 300, 77},  {300, 1, 77},
                               {5, 3, 0},       {8, 32, 33},     {1030, 20, 600}};
  uint32_t seed = 1;
  for (const auto& s : shapes) {
    for (int variant = 0; variant < 4; ++variant) {
      CheckS8(s[0], s[1], s[2], variant & 1, variant & 2, 0, seed++);
    }
  }
  // Extremes: -128 * -128 pairs (2^15 each, what a saturating s16 pair sum
  // would clip), and -128 * 127.
  CheckS8(12, 32, 1000, false, false, -128, 0);
  CheckS8(12, 32, 999, true, true, -128, 0);
  // Sums past the s32 range wrap: 2^14 * 140000 > 2^31.
  CheckS8(2, 17, 140000, false, true, -128, 0);
  EXPECT_EQ(GemmS8IsVectorized(),
#if defined(__x86_64__) && defined(__GNUC__)
            static_cast<bool>(__builtin_cpu_supports("avx2"))
#else
            false
#endif
  );
}

}  // namespace
}  // namespace eval
}  // namespace hloc
