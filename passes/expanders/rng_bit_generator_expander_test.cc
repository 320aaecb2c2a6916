// RngBitGeneratorExpander: the expanded module draws exactly the
// interpreter's bits and new state, for both algorithms, every output width
// from 8 to 64 bits, odd and even shapes, scalars, and counters that carry
// into the high word.
#include "passes/expanders/rng_bit_generator_expander.h"

#include "gtest/gtest.h"
#include "passes/expanders/expander_test_cases.h"
#include "passes/test_util.h"

namespace hloc {
namespace {

using expanders::CountEverywhere;
using expanders::ExpanderCase;

class RngBitGeneratorCaseTest : public ::testing::TestWithParam<ExpanderCase> {};

TEST_P(RngBitGeneratorCaseTest, BitsMatchTheInterpreter) {
  for (uint64_t seed : {1, 2, 3}) {
    absl::StatusOr<std::unique_ptr<HloModule>> expanded =
        expanders::ExpandAndCompare(GetParam(), seed);
    ASSERT_TRUE(expanded.ok()) << expanded.status();
    EXPECT_EQ(CountEverywhere(**expanded, HloOpcode::kWhile), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RngBitGeneratorCaseTest,
    ::testing::ValuesIn(expanders::ExpanderCasesFor(HloOpcode::kRngBitGenerator)),
    [](const ::testing::TestParamInfo<ExpanderCase>& info) { return info.param.name; });

TEST(RngBitGeneratorExpanderTest, LeavesSubByteOutputsToTheInterpreter) {
  auto module = testing::ParseAndVerifyOrFail(R"(
HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u4[8]) rng-bit-generator(s), algorithm=rng_three_fry
})");
  ASSERT_NE(module, nullptr);
  RngBitGeneratorExpander expander;
  absl::StatusOr<bool> changed = testing::RunAndVerify(expander, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace hloc
