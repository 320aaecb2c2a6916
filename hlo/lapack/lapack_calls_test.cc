// JAX's LAPACK custom calls in the interpreter: each routine's result checked
// by the mathematics it promises (P A = L U, L L^T = A, A V = V diag(w), ...),
// not against numbers from LAPACK itself; then the errors.
#include "hlo/lapack/lapack_calls.h"

#include <cmath>
#include <complex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "hlo/custom_call_handlers.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

using C = std::complex<double>;

// Deterministic values in [-1, 1).
std::vector<double> Values(int64_t n, int seed) {
  std::vector<double> v(n);
  uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (double& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<double>(s >> 11) / static_cast<double>(1ull << 53) * 2 - 1;
  }
  return v;
}

Literal Array(PrimitiveType type, std::vector<int64_t> dims, const std::vector<double>& values) {
  Literal literal(Shape(type, dims));
  for (size_t i = 0; i < values.size(); ++i) literal.SetFromDouble(i, values[i]);
  return literal;
}

Literal Evaluated(const std::string& text, std::vector<Literal> args) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return Literal();
  absl::StatusOr<Literal> result = Evaluate(**module, args);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : Literal();
}

double At(const Literal& l, int64_t i) { return l.GetAsDouble(i); }

// A module whose entry is one custom call of `target` on parameters of
// `operand_shapes`, returning `result_shape`.
std::string CallModule(const std::string& target, const std::vector<std::string>& operand_shapes,
                       const std::string& result_shape, const std::string& config) {
  std::string params, operands;
  for (size_t i = 0; i < operand_shapes.size(); ++i) {
    absl::StrAppend(&params, "  p", i, " = ", operand_shapes[i], " parameter(", i, ")\n");
    absl::StrAppend(&operands, i ? ", " : "", "p", i);
  }
  return absl::StrCat("HloModule m\n\nENTRY e {\n", params, "  ROOT c = ", result_shape,
                      " custom-call(", operands, "), custom_call_target=\"", target,
                      "\", api_version=API_VERSION_TYPED_FFI, backend_config={", config, "}\n}\n");
}

TEST(LapackCallsTest, GetrfFactorsWithRowExchanges) {
  for (auto [m, n] : {std::pair<int64_t, int64_t>{4, 4}, {5, 3}, {3, 5}}) {
    const int64_t batch = 2, k = std::min(m, n);
    const std::vector<double> a = Values(batch * m * n, 1);
    const std::string shape = absl::StrCat("f64[2,", m, ",", n, "]");
    Literal r = Evaluated(CallModule("lapack_dgetrf_ffi", {shape},
                               absl::StrCat("(", shape, ", s32[2,", k, "], s32[2])"), ""),
                    {Array(xla::F64, {batch, m, n}, a)});
    ASSERT_EQ(r.tuple_elements().size(), 3u);
    const Literal &lu = r.tuple_elements()[0], &ipiv = r.tuple_elements()[1];
    for (int64_t b = 0; b < batch; ++b) {
      EXPECT_EQ(r.tuple_elements()[2].GetAsInt64(b), 0);
      // P A: the row exchanges applied in order (ipiv is 1-based).
      std::vector<double> pa(a.begin() + b * m * n, a.begin() + (b + 1) * m * n);
      for (int64_t i = 0; i < k; ++i) {
        const int64_t p = ipiv.GetAsInt64(b * k + i) - 1;
        ASSERT_GE(p, i);
        ASSERT_LT(p, m);
        for (int64_t c = 0; c < n; ++c) std::swap(pa[i * n + c], pa[p * n + c]);
      }
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;  // (L U)[i, j], L unit lower m x k, U upper k x n.
          for (int64_t t = 0; t < k; ++t) {
            const double l = t == i ? 1 : t < i ? At(lu, b * m * n + i * n + t) : 0;
            const double u = t <= j ? At(lu, b * m * n + t * n + j) : 0;
            sum += l * u;
          }
          EXPECT_NEAR(sum, pa[i * n + j], 1e-12) << m << "x" << n << " [" << b << "," << i
                                                 << "," << j << "]";
        }
      }
    }
  }
}

// M M^T + n I: symmetric positive definite.
std::vector<double> Spd(int64_t n, int seed) {
  const std::vector<double> m = Values(n * n, seed);
  std::vector<double> a(n * n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = i == j ? static_cast<double>(n) : 0;
      for (int64_t t = 0; t < n; ++t) s += m[i * n + t] * m[j * n + t];
      a[i * n + j] = s;
    }
  }
  return a;
}

TEST(LapackCallsTest, PotrfGivesTheCholeskyFactorInTheAskedTriangle) {
  const int64_t n = 5;
  const std::vector<double> a = Spd(n, 2);
  for (char uplo : {'L', 'U'}) {
    Literal r = Evaluated(CallModule("lapack_dpotrf_ffi", {"f64[5,5]"}, "(f64[5,5], s32[])",
                               absl::StrCat("uplo = ", static_cast<int>(uplo), " : ui8")),
                    {Array(xla::F64, {n, n}, a)});
    const Literal& f = r.tuple_elements()[0];
    EXPECT_EQ(r.tuple_elements()[1].GetAsInt64(0), 0);
    auto factor = [&](int64_t i, int64_t j) {  // L[i, j] (L = U^T for 'U').
      if (j > i) return 0.0;
      return uplo == 'L' ? At(f, i * n + j) : At(f, j * n + i);
    };
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t t = 0; t < n; ++t) s += factor(i, t) * factor(j, t);
        EXPECT_NEAR(s, a[i * n + j], 1e-12) << uplo;
        // LAPACK leaves the other triangle as it was (XLA:CPU returns it so).
        if ((uplo == 'L' && j > i) || (uplo == 'U' && j < i)) {
          EXPECT_EQ(At(f, i * n + j), a[i * n + j]);
        }
      }
    }
  }
  // Not positive definite: info names the failing minor.
  Literal r = Evaluated(CallModule("lapack_dpotrf_ffi", {"f64[2,2]"}, "(f64[2,2], s32[])",
                             "uplo = 76 : ui8"),
                  {Array(xla::F64, {2, 2}, {1, 2, 2, 1})});
  EXPECT_EQ(r.tuple_elements()[1].GetAsInt64(0), 2);
}

TEST(LapackCallsTest, TrsmSolvesOnEitherSide) {
  const int64_t m = 4, n = 3;
  std::vector<double> tri = Values(16, 3), tri3 = Values(9, 4);
  for (int64_t i = 0; i < 4; ++i) tri[i * 4 + i] += 3;
  for (int64_t i = 0; i < 3; ++i) tri3[i * 3 + i] += 3;
  const std::vector<double> b = Values(m * n, 5);
  // Left, lower, no transpose: A X = B with A's lower triangle.
  Literal x = Evaluated(CallModule("lapack_dtrsm_ffi", {"f64[4,4]", "f64[4,3]"}, "f64[4,3]",
                             "diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8"),
                  {Array(xla::F64, {4, 4}, tri), Array(xla::F64, {m, n}, b)});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t t = 0; t <= i; ++t) s += tri[i * 4 + t] * At(x, t * n + j);
      EXPECT_NEAR(s, b[i * n + j], 1e-12);
    }
  }
  // Right, upper, transposed, unit diagonal: X op(A) = B, op(A) = A^T.
  Literal y = Evaluated(CallModule("lapack_dtrsm_ffi", {"f64[3,3]", "f64[4,3]"}, "f64[4,3]",
                             "diag = 85 : ui8, side = 82 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8"),
                  {Array(xla::F64, {3, 3}, tri3), Array(xla::F64, {m, n}, b)});
  auto upper_unit = [&](int64_t i, int64_t j) { return i == j ? 1.0 : j > i ? tri3[i * 3 + j] : 0.0; };
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;  // (X A^T)[i, j] = sum_t X[i, t] A[j, t]
      for (int64_t t = 0; t < n; ++t) s += At(y, i * n + t) * upper_unit(j, t);
      EXPECT_NEAR(s, b[i * n + j], 1e-12);
    }
  }
}

TEST(LapackCallsTest, TrsmConjugateTransposedAndInOneBufferWithItsOperands) {
  // Left, upper, conjugate transposed: A^H X = B for complex A.
  const int64_t n = 3, r = 2;
  const std::vector<double> re = Values(n * n, 6), im = Values(n * n, 7), bv = Values(n * r * 2, 8);
  Literal a(Shape(xla::C128, {n, n})), b(Shape(xla::C128, {n, r}));
  for (int64_t i = 0; i < n * n; ++i) {
    a.SetFromComplex(i, C(re[i] + (i % (n + 1) == 0 ? 3 : 0), im[i]));
  }
  for (int64_t i = 0; i < n * r; ++i) b.SetFromComplex(i, C(bv[2 * i], bv[2 * i + 1]));
  Literal x = Evaluated(CallModule("lapack_ztrsm_ffi", {"c128[3,3]", "c128[3,2]"}, "c128[3,2]",
                                   "diag = 78 : ui8, side = 76 : ui8, trans_x = 67 : ui8, "
                                   "uplo = 85 : ui8"),
                        {a, b});
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < r; ++j) {
      C s = 0;  // (A^H X)[i, j] = sum_t conj(A[t, i]) X[t, j], A upper: t <= i.
      for (int64_t t = 0; t <= i; ++t) {
        s += std::conj(a.GetAsComplex(t * n + i)) * x.GetAsComplex(t * r + j);
      }
      EXPECT_NEAR(std::abs(s - b.GetAsComplex(i * r + j)), 0.0, 1e-12);
    }
  }
  // One buffer for the triangle, the right-hand side and the result (a
  // value solved against itself, computed in place) gives what separate
  // buffers give. (BLAS forbids the overlap, so the triangle is copied
  // first; OpenBLAS, which packs its operands, happens to give the same
  // bytes without that copy, so this checks the result, not the copy.)
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(
      CallModule("lapack_dtrsm_ffi", {"f64[8,8]", "f64[8,8]"}, "f64[8,8]",
                 "diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8"));
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction& call = *(*module)->entry()->root();
  absl::StatusOr<std::shared_ptr<const CustomCallHandler>> handler =
      FindCustomCallHandler(nullptr, call);
  ASSERT_TRUE(handler.ok() && *handler != nullptr);
  const int64_t s = 8;
  std::vector<double> tri = Values(s * s, 9);
  for (int64_t i = 0; i < s; ++i) tri[i * s + i] += 3;
  std::vector<double> apart_a = tri, apart_b = tri, apart_x(s * s), shared = tri;
  const std::vector<void*> apart = {apart_a.data(), apart_b.data(), apart_x.data()};
  const std::vector<void*> one_buffer = {shared.data(), shared.data(), shared.data()};
  ASSERT_TRUE(CallCustomCallHandler(**handler, call, apart).ok());
  ASSERT_TRUE(CallCustomCallHandler(**handler, call, one_buffer).ok());
  EXPECT_EQ(shared, apart_x);
  // L^-1 A for A's lower triangle L: its first column is e_0.
  for (int64_t i = 0; i < s; ++i) EXPECT_NEAR(apart_x[i * s], i == 0 ? 1.0 : 0.0, 1e-12);
}

TEST(LapackCallsTest, GeqrfThenOrgqrGiveOrthonormalQTimesREqualToA) {
  // f32 and batched as JAX emits it for jnp.linalg.qr of [3, 5, 4].
  const int64_t batch = 3, m = 5, n = 4;
  const std::vector<double> a = Values(batch * m * n, 6);
  const std::string text = R"(
HloModule m
ENTRY e {
  a = f32[3,5,4]{1,2,0} parameter(0)
  qr = (f32[3,5,4]{1,2,0}, f32[3,4]{1,0}) custom-call(a), custom_call_target="lapack_sgeqrf_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={}
  r = f32[3,5,4]{1,2,0} get-tuple-element(qr), index=0
  tau = f32[3,4]{1,0} get-tuple-element(qr), index=1
  q = f32[3,5,4]{1,2,0} custom-call(r, tau), custom_call_target="lapack_sorgqr_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={}
  ROOT t = (f32[3,5,4]{1,2,0}, f32[3,5,4]{1,2,0}) tuple(q, r)
})";
  Literal out = Evaluated(text, {Array(xla::F32, {batch, m, n}, a)});
  const Literal &q = out.tuple_elements()[0], &r = out.tuple_elements()[1];
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t o = b * m * n;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t t = 0; t < m; ++t) s += At(q, o + t * n + i) * At(q, o + t * n + j);
        EXPECT_NEAR(s, i == j ? 1 : 0, 1e-5);
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t t = 0; t <= j; ++t) s += At(q, o + i * n + t) * At(r, o + t * n + j);
        EXPECT_NEAR(s, a[o + i * n + j], 1e-5);
      }
    }
  }
}

TEST(LapackCallsTest, HeevdGivesAscendingEigenpairsOfAHermitianMatrix) {
  const int64_t n = 4;
  const std::vector<double> re = Values(n * n, 7), im = Values(n * n, 8);
  std::vector<C> a(n * n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      a[i * n + j] = i == j ? C(re[i * n + i], 0)
                            : i < j ? C(re[i * n + j], im[i * n + j])
                                    : std::conj(C(re[j * n + i], im[j * n + i]));
    }
  }
  Literal input(Shape(xla::C128, {n, n}));
  for (int64_t i = 0; i < n * n; ++i) input.SetFromComplex(i, a[i]);
  Literal r = Evaluated(CallModule("lapack_zheevd_ffi", {"c128[4,4]"}, "(c128[4,4], f64[4], s32[])",
                             "mode = 86 : ui8, uplo = 76 : ui8"),
                  {std::move(input)});
  const Literal &v = r.tuple_elements()[0], &w = r.tuple_elements()[1];
  EXPECT_EQ(r.tuple_elements()[2].GetAsInt64(0), 0);
  for (int64_t j = 0; j < n; ++j) {
    if (j > 0) {
      EXPECT_LE(At(w, j - 1), At(w, j));
    }
    for (int64_t i = 0; i < n; ++i) {
      C av = 0;  // (A v_j)[i]
      for (int64_t t = 0; t < n; ++t) av += a[i * n + t] * v.GetAsComplex(t * n + j);
      EXPECT_NEAR(std::abs(av - At(w, j) * v.GetAsComplex(i * n + j)), 0, 1e-12);
    }
  }
}

TEST(LapackCallsTest, GesddReconstructsInFullAndThinModes) {
  const int64_t m = 3, n = 5, k = 3;
  const std::vector<double> a = Values(m * n, 9);
  for (char mode : {'A', 'S', 'N'}) {
    const int64_t uc = mode == 'A' ? m : k, vr = mode == 'A' ? n : k;
    const std::string u = absl::StrCat("f64[", m, ",", mode == 'N' ? m : uc, "]");
    const std::string vt = absl::StrCat("f64[", mode == 'N' ? n : vr, ",", n, "]");
    Literal r = Evaluated(CallModule("lapack_dgesdd_ffi", {"f64[3,5]"},
                               absl::StrCat("(f64[3,5], f64[3], ", u, ", ", vt, ", s32[])"),
                               absl::StrCat("mode = ", static_cast<int>(mode), " : ui8")),
                    {Array(xla::F64, {m, n}, a)});
    const Literal &s = r.tuple_elements()[1], &ul = r.tuple_elements()[2],
                  &vl = r.tuple_elements()[3];
    EXPECT_EQ(r.tuple_elements()[4].GetAsInt64(0), 0);
    EXPECT_GE(At(s, 0), At(s, 1));
    EXPECT_GE(At(s, 1), At(s, 2));
    if (mode == 'N') {
      for (int64_t i = 0; i < m * m; ++i) EXPECT_EQ(At(ul, i), 0);  // Not computed: zeros.
      continue;
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t t = 0; t < k; ++t) sum += At(ul, i * uc + t) * At(s, t) * At(vl, t * n + j);
        EXPECT_NEAR(sum, a[i * n + j], 1e-12) << mode;
      }
    }
  }
}

TEST(LapackCallsTest, GeevGivesComplexPairsOfARealMatrix) {
  // A rotation-like block (eigenvalues 1 +- 2i) and a real eigenvalue 3.
  const std::vector<double> a = {1, -2, 0, 2, 1, 0, 0.5, 0.25, 3};
  Literal r = Evaluated(CallModule("lapack_dgeev_ffi", {"f64[3,3]"},
                             "(f64[3], f64[3], c128[3,3], c128[3,3], s32[])",
                             "compute_left = 78 : ui8, compute_right = 86 : ui8"),
                  {Array(xla::F64, {3, 3}, a)});
  const Literal &wr = r.tuple_elements()[0], &wi = r.tuple_elements()[1],
                &vl = r.tuple_elements()[2], &vr = r.tuple_elements()[3];
  EXPECT_EQ(r.tuple_elements()[4].GetAsInt64(0), 0);
  for (int64_t j = 0; j < 3; ++j) {
    const C lambda(At(wr, j), At(wi, j));
    for (int64_t i = 0; i < 3; ++i) {
      C av = 0;
      for (int64_t t = 0; t < 3; ++t) av += a[i * 3 + t] * vr.GetAsComplex(t * 3 + j);
      EXPECT_NEAR(std::abs(av - lambda * vr.GetAsComplex(i * 3 + j)), 0, 1e-12) << j;
      EXPECT_EQ(vl.GetAsComplex(i * 3 + j), C(0, 0));  // Left vectors not asked for.
    }
  }
  // A NaN: not decomposed, info -4 (XLA:CPU's rule).
  Literal bad = Evaluated(CallModule("lapack_dgeev_ffi", {"f64[2,2]"},
                               "(f64[2], f64[2], c128[2,2], c128[2,2], s32[])",
                               "compute_left = 78 : ui8, compute_right = 86 : ui8"),
                    {Array(xla::F64, {2, 2}, {1, NAN, 0, 1})});
  EXPECT_EQ(bad.tuple_elements()[4].GetAsInt64(0), -4);
}

TEST(LapackCallsTest, GeesSytrdGehrdKeepTheMatrixUpToSimilarity) {
  const int64_t n = 4;
  const std::vector<double> a = Values(n * n, 10), s = Spd(n, 11);
  double trace = 0, strace = 0, snorm = 0;
  for (int64_t i = 0; i < n; ++i) trace += a[i * n + i], strace += s[i * n + i];
  for (double x : s) snorm += x * x;
  // Schur: A = Z T Z^T.
  Literal g = Evaluated(CallModule("lapack_dgees_ffi", {"f64[4,4]"},
                             "(f64[4,4], f64[4,4], f64[4], f64[4], s32[], s32[])",
                             "mode = 86 : ui8, sort = 78 : ui8"),
                  {Array(xla::F64, {n, n}, a)});
  const Literal &t = g.tuple_elements()[0], &z = g.tuple_elements()[1];
  EXPECT_EQ(g.tuple_elements()[5].GetAsInt64(0), 0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < n; ++p) {
        for (int64_t q = 0; q < n; ++q) sum += At(z, i * n + p) * At(t, p * n + q) * At(z, j * n + q);
      }
      EXPECT_NEAR(sum, a[i * n + j], 1e-12);
    }
  }
  // Tridiagonal reduction of a symmetric matrix: same trace and Frobenius norm.
  Literal tr = Evaluated(CallModule("lapack_dsytrd_ffi", {"f64[4,4]"},
                              "(f64[4,4], f64[4], f64[3], f64[3], s32[])", "uplo = 76 : ui8"),
                   {Array(xla::F64, {n, n}, s)});
  double dtrace = 0, dnorm = 0;
  for (int64_t i = 0; i < n; ++i) dtrace += At(tr.tuple_elements()[1], i);
  for (int64_t i = 0; i < n; ++i) dnorm += std::pow(At(tr.tuple_elements()[1], i), 2);
  for (int64_t i = 0; i + 1 < n; ++i) dnorm += 2 * std::pow(At(tr.tuple_elements()[2], i), 2);
  EXPECT_NEAR(dtrace, strace, 1e-12);
  EXPECT_NEAR(dnorm, snorm, 1e-9);
  // Hessenberg: zeros below the subdiagonal hold reflectors; the diagonal's sum is the trace.
  Literal h = Evaluated(CallModule("lapack_dgehrd_ffi", {"f64[4,4]"}, "(f64[4,4], f64[3], s32[])",
                             "high = 4 : i32, low = 1 : i32"),
                  {Array(xla::F64, {n, n}, a)});
  double htrace = 0;
  for (int64_t i = 0; i < n; ++i) htrace += At(h.tuple_elements()[0], i * n + i);
  EXPECT_NEAR(htrace, trace, 1e-12);
  EXPECT_EQ(h.tuple_elements()[2].GetAsInt64(0), 0);
}

TEST(LapackCallsTest, GtsvSolvesATridiagonalSystem) {
  const int64_t n = 5, k = 2;
  std::vector<double> dl = Values(n, 12), d = Values(n, 13), du = Values(n, 14);
  for (double& x : d) x += 4;
  dl[0] = 0;
  du[n - 1] = 0;
  const std::vector<double> b = Values(n * k, 15);
  Literal r = Evaluated(CallModule("lapack_dgtsv_ffi", {"f64[5]", "f64[5]", "f64[5]", "f64[5,2]"},
                             "(f64[5], f64[5], f64[5], f64[5,2], s32[])", ""),
                  {Array(xla::F64, {n}, dl), Array(xla::F64, {n}, d), Array(xla::F64, {n}, du),
                   Array(xla::F64, {n, k}, b)});
  const Literal& x = r.tuple_elements()[3];
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      double s = d[i] * At(x, i * k + j);
      if (i > 0) s += dl[i] * At(x, (i - 1) * k + j);
      if (i + 1 < n) s += du[i] * At(x, (i + 1) * k + j);
      EXPECT_NEAR(s, b[i * k + j], 1e-12);
    }
  }
}

// Batch elements handed to several threads (frame.parallel, as the host
// backend's pool does) give the bytes one thread gives, and the split is
// really taken.
TEST(LapackCallsTest, BatchSplitOverThreadsGivesTheSameBytes) {
  struct Case {
    std::string target;
    std::vector<std::string> operands;
    std::string result;
    std::string config;
  } cases[] = {
      {"lapack_sgetrf_ffi", {"f32[9,32,32]"}, "(f32[9,32,32], s32[9,32], s32[9])", ""},
      {"lapack_dpotrf_ffi", {"f64[9,32,32]"}, "(f64[9,32,32], s32[9])", "uplo = 76 : ui8"},
      {"lapack_strsm_ffi", {"f32[9,32,32]", "f32[9,32,24]"}, "f32[9,32,24]",
       "diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8"},
      {"lapack_cgesdd_ffi", {"c64[9,32,32]"},
       "(c64[9,32,32], f32[9,32], c64[9,32,32], c64[9,32,32], s32[9])", "mode = 65 : ui8"},
      {"lapack_dsyevd_ffi", {"f64[9,32,32]"}, "(f64[9,32,32], f64[9,32], s32[9])",
       "mode = 86 : ui8, uplo = 76 : ui8"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target);
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        ParseHloModule(CallModule(c.target, c.operands, c.result, c.config));
    ASSERT_TRUE(module.ok()) << module.status();
    const HloInstruction& call = *(*module)->entry()->root();
    absl::StatusOr<std::shared_ptr<const CustomCallHandler>> handler =
        FindCustomCallHandler(nullptr, call);
    ASSERT_TRUE(handler.ok() && *handler != nullptr) << handler.status();
    std::vector<const Shape*> operand_shapes, result_shapes;
    for (const HloInstruction* operand : call.operands()) {
      AppendArrayLeafShapes(operand->shape(), &operand_shapes);
    }
    AppendArrayLeafShapes(call.shape(), &result_shapes);
    std::vector<std::vector<char>> operands;
    for (size_t i = 0; i < operand_shapes.size(); ++i) {
      Literal values(*operand_shapes[i]);
      const std::vector<double> v = Values(values.element_count() * 2, static_cast<int>(i) + 7);
      for (int64_t e = 0; e < values.element_count(); ++e) {
        // Diagonally dominant (symmetric where it matters for potrf).
        values.SetFromDouble(e, v[e] + (e % 33 == 0 ? 40.0 : 0.0));
      }
      const char* bytes = reinterpret_cast<const char*>(values.raw());
      operands.emplace_back(bytes, bytes + values.size_bytes());
    }
    auto run = [&](const ParallelRanges* parallel) {
      std::vector<std::vector<char>> results;
      std::vector<void*> buffers;
      for (std::vector<char>& operand : operands) buffers.push_back(operand.data());
      for (const Shape* shape : result_shapes) {
        results.emplace_back(Literal(*shape).size_bytes(), 0);
      }
      for (std::vector<char>& result : results) buffers.push_back(result.data());
      absl::Status status = CallCustomCallHandler(**handler, call, buffers, parallel);
      EXPECT_TRUE(status.ok()) << status;
      return results;
    };
    int chunks = 0;
    const ParallelRanges parallel = [&chunks](int64_t n, int64_t grain,
                                              const std::function<void(int64_t, int64_t)>& fn) {
      std::vector<std::thread> threads;
      for (int64_t begin = 0; begin < n; begin += grain) {
        threads.emplace_back([&fn, begin, grain, n] { fn(begin, std::min(n, begin + grain)); });
        ++chunks;
      }
      for (std::thread& thread : threads) thread.join();
    };
    const std::vector<std::vector<char>> one = run(nullptr), split = run(&parallel);
    EXPECT_GT(chunks, 1);
    EXPECT_TRUE(one == split);
  }
}

TEST(LapackCallsTest, EmptyBatchesAndMatricesRun) {
  Literal r = Evaluated(CallModule("lapack_sgetrf_ffi", {"f32[0,3,3]"}, "(f32[0,3,3], s32[0,3], s32[0])", ""),
                  {Literal(Shape(xla::F32, {0, 3, 3}))});
  EXPECT_EQ(r.tuple_elements().size(), 3u);
  Literal e = Evaluated(CallModule("lapack_dsyevd_ffi", {"f64[0,0]"}, "(f64[0,0], f64[0], s32[])",
                             "mode = 86 : ui8, uplo = 76 : ui8"),
                  {Literal(Shape(xla::F64, {0, 0}))});
  EXPECT_EQ(e.tuple_elements()[2].GetAsInt64(0), 0);
}

// Each malformed call is an error naming the instruction and saying what,
// when the handler is looked up (compile time), never a crash when run.
TEST(LapackCallsTest, MalformedCallsAreErrorsNamingTheInstruction) {
  struct Case {
    std::string text;
    absl::StatusCode code;
    std::string message;
  } cases[] = {
      {CallModule("lapack_sfoo_ffi", {"f32[2,2]"}, "f32[2,2]", ""), absl::StatusCode::kUnimplemented,
       "is not one hloc implements (lapack_{s,d,c,z}{trsm,getrf"},
      {CallModule("lapack_dgetrf_ffi", {"f32[2,2]"}, "(f32[2,2], s32[2], s32[])", ""),
       absl::StatusCode::kInvalidArgument, "operand 0 must be f64[2,2], not f32[2,2]"},
      {CallModule("lapack_sgetrf_ffi", {"f32[2,3]"}, "(f32[2,3], s32[3], s32[])", ""),
       absl::StatusCode::kInvalidArgument, "result 1 must be s32[2], not s32[3]"},
      {CallModule("lapack_spotrf_ffi", {"f32[2,3]"}, "(f32[2,3], s32[])", "uplo = 76 : ui8"),
       absl::StatusCode::kInvalidArgument, "must be square"},
      {CallModule("lapack_spotrf_ffi", {"f32[2,2]"}, "(f32[2,2], s32[])", "uplo = 88 : ui8"),
       absl::StatusCode::kInvalidArgument, "attribute uplo = 88 ('X') is not one of"},
      {CallModule("lapack_spotrf_ffi", {"f32[2,2]"}, "(f32[2,2], s32[])", ""),
       absl::StatusCode::kInvalidArgument, "attribute uplo is missing"},
      {CallModule("lapack_spotrf_ffi", {"f32[2,2]"}, "f32[2,2]", "uplo = 76 : ui8"),
       absl::StatusCode::kInvalidArgument, "returns a tuple of 2 arrays"},
      {CallModule("lapack_strsm_ffi", {"f32[3,3]", "f32[4,2]"}, "f32[4,2]",
                  "diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8"),
       absl::StatusCode::kInvalidArgument, "does not fit a 3 x 3 triangular matrix on the left"},
      {CallModule("lapack_sorgqr_ffi", {"f32[3,4]", "f32[3]"}, "f32[3,4]", ""),
       absl::StatusCode::kInvalidArgument, "needs rows >= columns >= reflectors"},
      {CallModule("lapack_dgehrd_ffi", {"f64[4,4]"}, "(f64[4,4], f64[3], s32[])",
                  "high = 5 : i32, low = 1 : i32"),
       absl::StatusCode::kInvalidArgument, "must satisfy 1 <= low <= high <= 4"},
      {CallModule("lapack_dgees_ffi", {"f64[2,2]"}, "(f64[2,2], f64[2,2], f64[2], f64[2], s32[], s32[])",
                  "mode = 86 : ui8, sort = 83 : ui8"),
       absl::StatusCode::kInvalidArgument, "only sort = 'N' is supported"},
      {CallModule("lapack_dgesdd_ffi", {"f64[2,2]"}, "(f64[2,2], f64[2], f64[2,2], f64[2,2], s32[])",
                  "mode = 65 : ui8 x"),
       absl::StatusCode::kInvalidArgument, "backend_config"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.text);
    ASSERT_TRUE(module.ok()) << c.text << module.status();
    const HloInstruction* call = (*module)->entry()->root();
    absl::StatusOr<std::shared_ptr<const CustomCallHandler>> handler =
        FindCustomCallHandler(nullptr, *call);
    ASSERT_FALSE(handler.ok()) << c.text;
    EXPECT_EQ(handler.status().code(), c.code) << handler.status();
    EXPECT_NE(handler.status().message().find(c.message), std::string::npos) << handler.status();
    EXPECT_NE(handler.status().message().find("%c"), std::string::npos) << handler.status();
    // The interpreter's compile-time check says the same before running anything.
    EXPECT_FALSE(CheckCustomCallTargets(**module, nullptr).ok());
  }
}

TEST(LapackCallsTest, OtherTargetsAreNotHlocsAndRegisteredOnesComeFirst) {
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseHloModule(CallModule("my_target", {"f32[2]"}, "f32[2]", ""));
  ASSERT_TRUE(module.ok());
  absl::StatusOr<std::shared_ptr<const CustomCallHandler>> none =
      FindCustomCallHandler(nullptr, *(*module)->entry()->root());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  EXPECT_FALSE(lapack::IsLapackTarget("my_target"));
  EXPECT_TRUE(lapack::IsLapackTarget("lapack_sgetrf_ffi"));

  CustomCallRegistry registry;
  ASSERT_TRUE(registry
                  .Register("lapack_sgetrf_ffi",
                            [](const CustomCallFrame&) { return absl::OkStatus(); })
                  .ok());
  absl::StatusOr<std::unique_ptr<HloModule>> lu = ParseHloModule(
      CallModule("lapack_sgetrf_ffi", {"f32[2,2]"}, "(f32[2,2], s32[2], s32[])", ""));
  ASSERT_TRUE(lu.ok());
  std::shared_ptr<const CustomCallTargets> targets = registry.Snapshot();
  absl::StatusOr<std::shared_ptr<const CustomCallHandler>> handler =
      FindCustomCallHandler(targets.get(), *(*lu)->entry()->root());
  ASSERT_TRUE(handler.ok());
  EXPECT_EQ(*handler, targets->Find("lapack_sgetrf_ffi"));
}

}  // namespace
}  // namespace hloc
