// The interpreter's "Qr", "ProductOfElementaryHouseholderReflectors" and
// "Eigh" custom calls (linalg_custom_calls.cc) against LAPACK and numpy
// (dgeqrf, dorgqr, eigh on fixed matrices, computed offline with scipy and
// written here), and CheckCustomCallTargets accepting them.
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/evaluator_test_util.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

using testing_util::Eval;
using testing_util::L;

void ExpectNear(const Literal& actual, const std::vector<double>& expected, double tolerance,
                const std::string& what, bool absolute_values = false) {
  ASSERT_EQ(actual.element_count(), static_cast<int64_t>(expected.size())) << what;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double x = actual.GetAsDouble(i);
    EXPECT_NEAR(absolute_values ? std::abs(x) : x, expected[i], tolerance) << what << " " << i;
  }
}

TEST(LinalgCustomCallsTest, QrOfAWideMatrixMatchesDgeqrf) {
  absl::StatusOr<Literal> r = Eval(R"(HloModule m
ENTRY e {
  a = f64[2,4] parameter(0)
  ROOT qr = (f64[2,4], f64[2]) custom-call(a), custom_call_target="Qr"
})",
                                   {L("f64[2,4]", "{{1, 2, -1, 0.5}, {3, -1, 2, 1}}")});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNear(r->tuple_elements()[0],
             {-3.1622776601683795, 0.3162277660168378, -1.5811388300841895, -1.1067971810589328,
              0.7207592200561264, -2.2135943621178655, 1.58113883008419, -0.15811388300841883},
             1e-14, "factors");
  ExpectNear(r->tuple_elements()[1], {1.316227766016838, 0.0}, 1e-14, "taus");
}

TEST(LinalgCustomCallsTest, ProductOfQrReflectorsMatchesDorgqr) {
  absl::StatusOr<Literal> r =
      Eval(R"(HloModule m
ENTRY e {
  a = f64[4,3] parameter(0)
  qr = (f64[4,3], f64[3]) custom-call(a), custom_call_target="Qr"
  f = f64[4,3] get-tuple-element(qr), index=0
  t = f64[3] get-tuple-element(qr), index=1
  ROOT q = f64[4,3] custom-call(f, t), custom_call_target="ProductOfElementaryHouseholderReflectors"
})",
           {L("f64[4,3]", "{{2, -1, 0.5}, {1, 3, -2}, {-0.5, 2, 1}, {4, 0, -1}}")});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNear(*r,
             {-0.4338609156373123, 0.26726124191242434, -0.3786905798117618, -0.21693045781865616,
              -0.8017837257372731, 0.42257023661553855, 0.10846522890932808, -0.5345224838248487,
              -0.8232006448291888, -0.8677218312746247, 0, -0.019197349851652397},
             1e-14, "q");
}

TEST(LinalgCustomCallsTest, EighMatchesNumpyForEitherTriangle) {
  // The lower triangle holds the matrix; the upper one garbage, and the
  // transposed literal the other way round.
  const char* lower = "{{4, 99, -99}, {1, 3, 7}, {-2, 0.5, 5}}";
  const char* upper = "{{4, 1, -2}, {99, 3, 0.5}, {-99, 7, 5}}";
  for (auto [config, value] :
       {std::pair{"1,1,100,1e-06", lower}, std::pair{"0,1,100,1e-06", upper}}) {
    absl::StatusOr<Literal> r = Eval(absl::StrCat(R"(HloModule m
ENTRY e {
  a = f64[3,3] parameter(0)
  ROOT e = (f64[3,3], f64[3]) custom-call(a), custom_call_target="Eigh", backend_config=")",
                                                  config, "\"\n}\n"),
                                     {L("f64[3,3]", value)});
    ASSERT_TRUE(r.ok()) << r.status();
    // numpy.linalg.eigh: eigenvalues, and eigenvectors up to sign.
    ExpectNear(r->tuple_elements()[1], {1.5842066930926224, 3.8393364524664815, 6.576456854440894},
               1e-12, "w");
    ExpectNear(r->tuple_elements()[0],
               {0.6382426181957055, 0.4453394849537664, 0.6279483286543613, 0.6145469400410333,
                0.7860144038136982, 0.06718195802147686, 0.46365765258959596, 0.4287821126615604,
                0.7753499087873778},
               1e-12, "|v|", /*absolute_values=*/true);
  }
}

TEST(LinalgCustomCallsTest, CheckCustomCallTargetsAcceptsThem) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  qr = (f32[3,3], f32[3]) custom-call(a), custom_call_target="Qr"
  f = f32[3,3] get-tuple-element(qr), index=0
  t = f32[3] get-tuple-element(qr), index=1
  q = f32[3,3] custom-call(f, t), custom_call_target="ProductOfElementaryHouseholderReflectors"
  e = (f32[3,3], f32[3]) custom-call(q), custom_call_target="Eigh", backend_config="1,0,10,1e-6"
  ROOT v = f32[3,3] get-tuple-element(e), index=0
})");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(CheckCustomCallTargets(**module, nullptr).ok());
}

}  // namespace
}  // namespace hloc
