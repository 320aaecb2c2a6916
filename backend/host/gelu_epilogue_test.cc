// GeluTanhInPlace against the tanh formula in double, on both its vector body
// and its scalar tail, over the range where GELU changes shape and its tails.
#include "backend/host/gelu_epilogue.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace hloc {
namespace {

// 0.5 * x * (1 + tanh(u)) written as x / (1 + exp(-2u)), in long double: the
// tanh form in double rounds 1 + tanh(u) to 0 below x ~ -6.
double Reference(double x) {
  const long double u = std::sqrt(2.0L / M_PI) * (x + 0.044715L * x * x * x);
  return static_cast<double>(x / (1.0L + std::exp(-2.0L * u)));
}

TEST(GeluTanhInPlace, MatchesTheFormula) {
  std::vector<float> xs;
  for (double x = -12.0; x <= 12.0; x += 1.0 / 1024) xs.push_back(static_cast<float>(x));
  for (float x : {1e-30f, -1e-30f, 0.0f, -0.0f, 1e-7f, -1e-7f, 30.0f, -30.0f, 1e4f, -1e4f, 3e38f,
                  std::numeric_limits<float>::denorm_min()}) {
    xs.push_back(x);
  }
  xs.push_back(0.5f);  // An odd count: the last elements take the scalar path.
  std::vector<float> ys = xs;
  host::GeluTanhInPlace(ys.data(), static_cast<int64_t>(ys.size()));
  double worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = Reference(xs[i]);
    const double error = std::fabs(ys[i] - want);
    // Eight float ulps of the result, times |2u| where that is larger: u is
    // rounded to float, and exp(-2u) turns its rounding into a relative
    // error of the result (x < -2; an f32 evaluation of the tanh form loses
    // all digits there instead, to cancellation in 1 + tanh(u)). 1e-30
    // absolute where GELU has gone to zero.
    const double two_u = 2 * std::sqrt(2.0 / M_PI) * (xs[i] + 0.044715 * xs[i] * xs[i] * xs[i]);
    const double amplification = std::fmax(1.0, std::fabs(two_u));
    const double tolerance = std::fmax(
        8 * std::numeric_limits<float>::epsilon() * amplification * std::fabs(want), 1e-30);
    EXPECT_LE(error, tolerance) << "x = " << xs[i] << " got " << ys[i] << " want " << want;
    if (std::fabs(want) > 1e-30) {
      worst = std::fmax(worst, error / (std::fabs(want) * amplification));
    }
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
  EXPECT_LT(worst, 8 * std::numeric_limits<float>::epsilon());
}

TEST(GeluTanhInPlace, NanStaysNanAndInfinityIsIdentityAbove) {
  std::vector<float> ys(9, std::numeric_limits<float>::quiet_NaN());
  ys[3] = std::numeric_limits<float>::infinity();
  ys[8] = std::numeric_limits<float>::infinity();
  host::GeluTanhInPlace(ys.data(), static_cast<int64_t>(ys.size()));
  EXPECT_TRUE(std::isnan(ys[0]));
  EXPECT_TRUE(std::isnan(ys[7]));
  EXPECT_EQ(ys[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(ys[8], std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace hloc
