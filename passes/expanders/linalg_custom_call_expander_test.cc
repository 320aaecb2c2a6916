// QrExpander and EighExpander: the "Qr",
// "ProductOfElementaryHouseholderReflectors" and "Eigh" custom calls.
//   - Every such case of expander_test_cases.cc gives the interpreter's
//     results after expansion, and no custom call is left.
//   - The expansion against independent numbers: LAPACK's dgeqrf/zgeqrf and
//     numpy's eigvalsh on fixed matrices (computed offline with scipy and
//     written here), and the defining properties (Q^H Q = I, Q R = A,
//     V diag(w) V^H = A, V^H V = I) computed here from the results.
//   - Malformed calls are verifier errors and expander errors, never crashes.
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"
#include "passes/expanders/eigh_expander.h"
#include "passes/expanders/expander_test_cases.h"
#include "passes/expanders/qr_expander.h"
#include "passes/test_util.h"

namespace hloc {
namespace {

using expanders::CountEverywhere;
using expanders::ExpanderCase;

class LinalgCustomCallCaseTest : public ::testing::TestWithParam<ExpanderCase> {};

TEST_P(LinalgCustomCallCaseTest, InterpreterAgreesBeforeAndAfter) {
  for (uint64_t seed : {1, 2}) {
    absl::StatusOr<std::unique_ptr<HloModule>> expanded =
        expanders::ExpandAndCompare(GetParam(), seed);
    ASSERT_TRUE(expanded.ok()) << expanded.status();
    EXPECT_EQ(CountEverywhere(**expanded, HloOpcode::kCustomCall), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, LinalgCustomCallCaseTest,
                         ::testing::ValuesIn(expanders::ExpanderCasesFor(HloOpcode::kCustomCall)),
                         [](const ::testing::TestParamInfo<ExpanderCase>& info) {
                           return info.param.name;
                         });

// Parses `hlo`, expands it with both expanders (checking that they changed
// it and left no custom call) and evaluates it on `arguments`.
Literal ExpandAndEvaluate(const std::string& hlo, const std::vector<Literal>& arguments) {
  std::unique_ptr<HloModule> module = testing::ParseAndVerifyOrFail(hlo);
  if (module == nullptr) return Literal();
  QrExpander qr;
  EighExpander eigh;
  absl::StatusOr<bool> a = testing::RunAndVerify(qr, *module);
  absl::StatusOr<bool> b = testing::RunAndVerify(eigh, *module);
  EXPECT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_TRUE(a.ok() && b.ok() && (*a || *b));
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kCustomCall), 0);
  absl::StatusOr<Literal> result = Evaluate(*module, arguments);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : Literal();
}

Literal Matrix(PrimitiveType type, std::vector<int64_t> dims,
               const std::vector<std::complex<double>>& values) {
  Literal literal(Shape(type, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) literal.SetFromComplex(i, values[i]);
  return literal;
}

void ExpectNear(const Literal& actual, const std::vector<std::complex<double>>& expected,
                double tolerance, const std::string& what) {
  ASSERT_EQ(actual.element_count(), static_cast<int64_t>(expected.size())) << what;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(std::abs(actual.GetAsComplex(i) - expected[i]), 0, tolerance)
        << what << " element " << i << ": " << actual.GetAsComplex(i) << " vs " << expected[i];
  }
}

TEST(QrExpanderTest, MatchesLapackDgeqrf) {
  const std::vector<std::complex<double>> a = {2, -1, 0.5, 1, 3, -2, -0.5, 2, 1, 4, 0, -1};
  std::vector<Literal> args;
  args.push_back(Matrix(xla::F64, {4, 3}, a));
  Literal qr = ExpandAndEvaluate(R"(HloModule m
ENTRY e {
  a = f64[4,3] parameter(0)
  ROOT qr = (f64[4,3], f64[3]) custom-call(a), custom_call_target="Qr"
})",
                                 args);
  ASSERT_TRUE(qr.shape().IsTuple());
  // scipy.linalg.lapack.dgeqrf(a).
  ExpectNear(qr.tuple_elements()[0],
             {-4.6097722286464435, 0.0, 1.193117518002609, 0.1512911436896489, -3.7416573867739418,
              1.2026755886059095, -0.07564557184482446, 0.27917725189016485, -1.8384890581144948,
              0.6051645747585956, 0.08779473284677128, -0.08452119760248557},
             1e-12, "factors");
  ExpectNear(qr.tuple_elements()[1], {1.4338609156373123, 1.8422179846901197, 1.9858136790174559},
             1e-12, "taus");
}

TEST(QrExpanderTest, MatchesLapackZgeqrf) {
  using C = std::complex<double>;
  std::vector<Literal> args;
  args.push_back(
      Matrix(xla::C128, {3, 2}, {C(1, 2), C(-1, 0.5), C(0.5, -1), C(2, 0), C(0, -1), C(1, -1)}));
  Literal qr = ExpandAndEvaluate(R"(HloModule m
ENTRY e {
  a = c128[3,2] parameter(0)
  ROOT qr = (c128[3,2], c128[2]) custom-call(a), custom_call_target="Qr"
})",
                                 args);
  ASSERT_TRUE(qr.shape().IsTuple());
  // scipy.linalg.lapack.zgeqrf(a).
  ExpectNear(
      qr.tuple_elements()[0],
      {C(-2.692582403567252, 0), C(-0.7427813527082077, -2.0426487199475707),
       C(-0.00871603979307238, -0.2660923475843455), C(-1.5892960922891355, 0),
       C(-0.11340977086819612, -0.20938746215024748), C(0.15478198799833343, -0.2605531985414006)},
      1e-12, "factors");
  ExpectNear(
      qr.tuple_elements()[1],
      {C(1.3713906763541037, 0.7427813527082074), C(1.831298026510938, -0.02912112255357842)},
      1e-12, "taus");
}

// Q^H Q = I and Q R = A for tf.linalg.qr's pair on a random 7 x 3 batch.
TEST(QrExpanderTest, ExplicitQIsOrthonormalAndReconstructs) {
  const ExpanderCase* qr_case = nullptr;
  for (const ExpanderCase& c : expanders::ExpanderCases()) {
    if (c.name == "QrExplicitTallF32") qr_case = &c;
  }
  ASSERT_NE(qr_case, nullptr);
  const int64_t batches = 2, m = 7, n = 3;
  std::vector<std::complex<double>> a;
  for (int64_t i = 0; i < batches * m * n; ++i) a.push_back(std::sin(1.0 + 0.7 * i));
  std::vector<Literal> args;
  args.push_back(Matrix(xla::F32, {batches, m, n}, a));
  Literal out = ExpandAndEvaluate(qr_case->hlo, args);
  ASSERT_TRUE(out.shape().IsTuple());
  const Literal& q = out.tuple_elements()[0];
  const Literal& r = out.tuple_elements()[1];
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t k = 0; k < m; ++k) {
          dot += q.GetAsDouble((b * m + k) * n + i) * q.GetAsDouble((b * m + k) * n + j);
        }
        EXPECT_NEAR(dot, i == j ? 1 : 0, 1e-5) << "Q^T Q at " << b << "," << i << "," << j;
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double qr = 0;
        for (int64_t k = 0; k < n; ++k) {
          qr += q.GetAsDouble((b * m + i) * n + k) * r.GetAsDouble((b * n + k) * n + j);
        }
        EXPECT_NEAR(qr, a[(b * m + i) * n + j].real(), 1e-5)
            << "QR at " << b << "," << i << "," << j;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < i; ++j) EXPECT_EQ(r.GetAsDouble((b * n + i) * n + j), 0);
    }
  }
}

// Eigenvalues against numpy.linalg.eigvalsh, eigenvectors by A V = V diag(w).
TEST(EighExpanderTest, MatchesNumpyEigvalsh) {
  const std::vector<std::complex<double>> s = {4,  1, -2, 0.5, 1,   3, 0,  1,
                                               -2, 0, 5,  -1,  0.5, 1, -1, 2};
  for (const char* config : {"1,1,100,1e-12", "0,1,100,1e-12"}) {
    SCOPED_TRACE(config);
    std::vector<Literal> args;
    args.push_back(Matrix(xla::F64, {4, 4}, s));
    Literal out = ExpandAndEvaluate(absl::StrCat(R"(HloModule m
ENTRY e {
  a = f64[4,4] parameter(0)
  ROOT eigh = (f64[4,4], f64[4]) custom-call(a), custom_call_target="Eigh", backend_config=")",
                                                 config, "\"\n}\n"),
                                    args);
    ASSERT_TRUE(out.shape().IsTuple());
    const Literal& v = out.tuple_elements()[0];
    const Literal& w = out.tuple_elements()[1];
    ExpectNear(w, {1.0471386409290873, 2.3609454269745447, 3.6025744003397637, 6.9893415317566046},
               1e-10, "eigenvalues");
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        double av = 0;
        for (int64_t k = 0; k < 4; ++k) av += s[i * 4 + k].real() * v.GetAsDouble(k * 4 + j);
        EXPECT_NEAR(av, v.GetAsDouble(i * 4 + j) * w.GetAsDouble(j), 1e-10);
      }
    }
  }
}

TEST(EighExpanderTest, HermitianMatchesNumpyEigvalsh) {
  using C = std::complex<double>;
  // Only the lower triangle is meaningful; the upper one is garbage.
  std::vector<Literal> args;
  args.push_back(Matrix(xla::C64, {3, 3},
                        {C(2, 0.25), C(9, 9), C(-7, 1), C(1, 1), C(3, -0.5), C(8, 0), C(0, -0.5),
                         C(-1, 0), C(1, 0)}));
  Literal out = ExpandAndEvaluate(R"(HloModule m
ENTRY e {
  a = c64[3,3] parameter(0)
  ROOT eigh = (c64[3,3], f32[3]) custom-call(a), custom_call_target="Eigh", backend_config="1,1,100,1e-06"
})",
                                  args);
  ASSERT_TRUE(out.shape().IsTuple());
  ExpectNear(out.tuple_elements()[1], {0.41367191440148326, 1.2560653460230855, 4.330262739575431},
             1e-5, "eigenvalues");
}

// A repeated eigenvalue (1, 1, 4) and the zero matrix (no sweep runs).
TEST(EighExpanderTest, RepeatedEigenvaluesAndZeroMatrix) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  a = f32[2,3,3] parameter(0)
  ROOT eigh = (f32[2,3,3], f32[2,3]) custom-call(a), custom_call_target="Eigh", backend_config="1,1,100,1e-06"
})";
  std::vector<Literal> args;
  args.push_back(
      Matrix(xla::F32, {2, 3, 3}, {2, 1, 1, 1, 2, 1, 1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  Literal out = ExpandAndEvaluate(hlo, args);
  ASSERT_TRUE(out.shape().IsTuple());
  ExpectNear(out.tuple_elements()[1], {1, 1, 4, 0, 0, 0}, 1e-5, "eigenvalues");
  const Literal& v = out.tuple_elements()[0];
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        double gram = 0;
        for (int64_t k = 0; k < 3; ++k) {
          gram += v.GetAsDouble(b * 9 + k * 3 + i) * v.GetAsDouble(b * 9 + k * 3 + j);
        }
        EXPECT_NEAR(gram, i == j ? 1 : 0, 1e-5) << b << " " << i << " " << j;
      }
    }
  }
  // The zero matrix keeps the identity.
  for (int64_t k = 0; k < 9; ++k) EXPECT_EQ(v.GetAsDouble(9 + k), k % 4 == 0 ? 1 : 0) << k;
}

// ---------------------------------------------------------------- errors

TEST(LinalgCustomCallErrorTest, MalformedCallsFailVerification) {
  const char* bad[] = {
      // Result not a tuple.
      R"(HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  ROOT qr = f32[4,3] custom-call(a), custom_call_target="Qr"
})",
      // taus of the wrong length.
      R"(HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  ROOT qr = (f32[4,3], f32[4]) custom-call(a), custom_call_target="Qr"
})",
      // An integer matrix.
      R"(HloModule m
ENTRY e {
  a = s32[4,3] parameter(0)
  ROOT qr = (s32[4,3], s32[3]) custom-call(a), custom_call_target="Qr"
})",
      // m < n for the product.
      R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  t = f32[2] parameter(1)
  ROOT q = f32[2,3] custom-call(a, t), custom_call_target="ProductOfElementaryHouseholderReflectors"
})",
      // Eigenvalues of a complex matrix are real.
      R"(HloModule m
ENTRY e {
  a = c64[3,3] parameter(0)
  ROOT e = (c64[3,3], c64[3]) custom-call(a), custom_call_target="Eigh", backend_config="1,1,100,1e-6"
})",
      // A config that is not "lower,sort,max_iter,tol".
      R"(HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT e = (f32[3,3], f32[3]) custom-call(a), custom_call_target="Eigh", backend_config="{}"
})",
  };
  for (const char* text : bad) {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::Status verified = VerifyModule(**module);
    EXPECT_FALSE(verified.ok()) << text;
    // Unverified, the expanders and the interpreter refuse it too.
    QrExpander qr;
    EighExpander eigh;
    absl::StatusOr<bool> a = qr.Run(**module);
    absl::StatusOr<bool> b = eigh.Run(**module);
    EXPECT_FALSE(a.ok() && b.ok()) << text;
    EXPECT_NE(std::string(a.ok() ? b.status().message() : a.status().message()).find("%"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace hloc
