// RngExpander: the legacy rng op as rng-bit-generator + elementwise math.
// XLA leaves rng's values undefined, so the checks are the distribution's:
// every draw in [a, b) (uniform) or with the right mean and spread (normal),
// all values of a small integer range drawn, two rngs of
// one module drawing differently, and the same values on every run.
#include <cmath>
#include <memory>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/status_macros.h"
#include "passes/expanders/expander_test_cases.h"
#include "passes/expanders/rng_bit_generator_expander.h"
#include "passes/expanders/rng_expander.h"
#include "passes/test_util.h"

namespace hloc {
namespace {

using expanders::CountEverywhere;

constexpr char kRngs[] = R"(
HloModule rngs
ENTRY main {
  a = f32[] constant(-2)
  b = f32[] constant(3)
  u32 = f32[4000] rng(a, b), distribution=rng_uniform
  u32b = f32[4000] rng(a, b), distribution=rng_uniform
  zero = f64[] constant(0)
  one = f64[] constant(1)
  u64 = f64[4000] rng(zero, one), distribution=rng_uniform
  hz = f16[] constant(0)
  ho = f16[] constant(1)
  u16 = f16[4000] rng(hz, ho), distribution=rng_uniform
  lo = s32[] constant(-5)
  hi = s32[] constant(5)
  i32 = s32[4000] rng(lo, hi), distribution=rng_uniform
  seven = s32[] constant(7)
  same = s32[10] rng(seven, seven), distribution=rng_uniform
  ten = u8[] constant(10)
  twenty = u8[] constant(20)
  i8 = u8[4000] rng(ten, twenty), distribution=rng_uniform
  mean = f32[] constant(1)
  sd = f32[] constant(2)
  n = f32[40000] rng(mean, sd), distribution=rng_normal
  ROOT out = (f32[4000], f32[4000], f64[4000], f16[4000], s32[4000], s32[10], u8[4000], f32[40000]) tuple(u32, u32b, u64, u16, i32, same, i8, n)
}
)";

absl::StatusOr<Literal> ExpandAndRun() {
  std::unique_ptr<HloModule> module = testing::ParseAndVerifyOrFail(kRngs);
  if (module == nullptr) return absl::InternalError("parse");
  RngExpander rng;
  RngBitGeneratorExpander bits;
  HLOC_ASSIGN_OR_RETURN(bool changed, testing::RunAndVerify(rng, *module));
  EXPECT_TRUE(changed);
  HLOC_ASSIGN_OR_RETURN(changed, testing::RunAndVerify(bits, *module));
  EXPECT_TRUE(changed);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kRng), 0);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kRngBitGenerator), 0);
  return Evaluate(*module, {});
}

TEST(RngExpanderTest, DrawsFollowTheDistributions) {
  absl::StatusOr<Literal> out = ExpandAndRun();
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<Literal>& r = out->tuple_elements();
  auto stats = [](const Literal& l, double* lo, double* hi, double* mean, double* sd) {
    double sum = 0, sq = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < l.element_count(); ++i) {
      const double v = l.GetAsDouble(i);
      *lo = std::min(*lo, v);
      *hi = std::max(*hi, v);
      sum += v;
      sq += v * v;
    }
    *mean = sum / l.element_count();
    *sd = std::sqrt(sq / l.element_count() - *mean * *mean);
  };
  double lo, hi, mean, sd;
  stats(r[0], &lo, &hi, &mean, &sd);  // f32 in [-2, 3): mean 0.5, sd 5/sqrt(12) = 1.44.
  EXPECT_GE(lo, -2.0);
  EXPECT_LT(hi, 3.0);
  EXPECT_NEAR(mean, 0.5, 0.15);
  EXPECT_NEAR(sd, 1.443, 0.1);
  int differ = 0;
  for (int64_t i = 0; i < r[0].element_count(); ++i) differ += r[0].GetAsDouble(i) != r[1].GetAsDouble(i);
  EXPECT_GT(differ, 3900) << "two rngs of one module drew the same values";
  stats(r[2], &lo, &hi, &mean, &sd);  // f64 in [0, 1).
  EXPECT_GE(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_NEAR(mean, 0.5, 0.05);
  stats(r[3], &lo, &hi, &mean, &sd);  // f16 in [0, 1), rounding up to 1 excluded.
  EXPECT_GE(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_NEAR(mean, 0.5, 0.05);
  std::set<int64_t> ints;
  for (int64_t i = 0; i < r[4].element_count(); ++i) ints.insert(r[4].GetAsInt64(i));
  EXPECT_EQ(ints, (std::set<int64_t>{-5, -4, -3, -2, -1, 0, 1, 2, 3, 4}));
  for (int64_t i = 0; i < r[5].element_count(); ++i) EXPECT_EQ(r[5].GetAsInt64(i), 7);
  std::set<int64_t> bytes;
  for (int64_t i = 0; i < r[6].element_count(); ++i) bytes.insert(r[6].GetAsInt64(i));
  EXPECT_EQ(bytes.size(), 10u);
  EXPECT_EQ(*bytes.begin(), 10);
  EXPECT_EQ(*bytes.rbegin(), 19);
  stats(r[7], &lo, &hi, &mean, &sd);  // normal(1, 2).
  EXPECT_NEAR(mean, 1.0, 0.05);
  EXPECT_NEAR(sd, 2.0, 0.05);
  EXPECT_TRUE(std::isfinite(lo) && std::isfinite(hi));
}

TEST(RngExpanderTest, SameValuesOnEveryRun) {
  absl::StatusOr<Literal> first = ExpandAndRun();
  absl::StatusOr<Literal> second = ExpandAndRun();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_TRUE(*first == *second);
}

}  // namespace
}  // namespace hloc
