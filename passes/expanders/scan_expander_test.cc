// ScanExpander: the interpreter gives the same results before and after
// expansion on every scan case of expander_test_cases.cc (forward, reverse,
// several inputs and carries, no carry, bare results, nested, empty), and
// the expansion is one while loop per scan with the step inlined.
#include "passes/expanders/scan_expander.h"

#include "gtest/gtest.h"
#include "passes/expanders/expander_test_cases.h"
#include "passes/test_util.h"

namespace hloc {
namespace {

using expanders::CountEverywhere;
using expanders::ExpanderCase;

class ScanCaseTest : public ::testing::TestWithParam<ExpanderCase> {};

TEST_P(ScanCaseTest, InterpreterAgreesBeforeAndAfter) {
  for (uint64_t seed : {1, 2, 3}) {
    absl::StatusOr<std::unique_ptr<HloModule>> expanded =
        expanders::ExpandAndCompare(GetParam(), seed);
    ASSERT_TRUE(expanded.ok()) << expanded.status();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ScanCaseTest,
                         ::testing::ValuesIn(expanders::ExpanderCasesFor(HloOpcode::kScan)),
                         [](const ::testing::TestParamInfo<ExpanderCase>& info) {
                           return info.param.name;
                         });

TEST(ScanExpanderTest, BecomesOneWhileWithTheStepInlined) {
  auto module = testing::ParseAndVerifyOrFail(R"(
HloModule m
add_step {
  x = f32[2] parameter(0)
  acc = f32[2] parameter(1)
  s = f32[2] add(acc, x)
  ROOT t = (f32[2], f32[2]) tuple(s, s)
}
ENTRY e {
  x = f32[2,5] parameter(0)
  init = f32[2] parameter(1)
  ROOT scan = (f32[2,5], f32[2]) scan(x, init), dimensions={1}, num_carries=1, is_reverse=true, to_apply=add_step
})");
  ASSERT_NE(module, nullptr);
  ScanExpander expander;
  absl::StatusOr<bool> changed = testing::RunAndVerify(expander, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kScan), 0);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kWhile), 1);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kCall), 0);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kDynamicSlice), 1);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kDynamicUpdateSlice), 1);
  // The step lives on inside the loop body, not as a callee.
  EXPECT_EQ(module->FindComputation("add_step"), nullptr);
}

TEST(ScanExpanderTest, LeavesAModuleWithoutScanAlone) {
  auto module = testing::ParseAndVerifyOrFail(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
})");
  ASSERT_NE(module, nullptr);
  ScanExpander expander;
  absl::StatusOr<bool> changed = testing::RunAndVerify(expander, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace hloc
