// SelectAndScatterExpander: the interpreter gives the same results before
// and after expansion on every select-and-scatter case of
// expander_test_cases.cc (ties, padding, overlapping windows, layouts), and
// the expansion is one reduce-window and one scatter.
#include "passes/expanders/select_and_scatter_expander.h"

#include "gtest/gtest.h"
#include "passes/expanders/expander_test_cases.h"
#include "passes/test_util.h"

namespace hloc {
namespace {

using expanders::CountEverywhere;
using expanders::ExpanderCase;

class SelectAndScatterCaseTest : public ::testing::TestWithParam<ExpanderCase> {};

TEST_P(SelectAndScatterCaseTest, InterpreterAgreesBeforeAndAfter) {
  for (uint64_t seed : {1, 2, 3}) {
    absl::StatusOr<std::unique_ptr<HloModule>> expanded = expanders::ExpandAndCompare(GetParam(), seed);
    ASSERT_TRUE(expanded.ok()) << expanded.status();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, SelectAndScatterCaseTest,
                         ::testing::ValuesIn(expanders::ExpanderCasesFor(HloOpcode::kSelectAndScatter)),
                         [](const ::testing::TestParamInfo<ExpanderCase>& info) {
                           return info.param.name;
                         });

TEST(SelectAndScatterExpanderTest, BecomesReduceWindowAndScatter) {
  auto module = testing::ParseAndVerifyOrFail(R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,6] parameter(0)
  src = f32[2,2] parameter(1)
  init = f32[] constant(0)
  ROOT sas = f32[4,6] select-and-scatter(x, src, init), window={size=2x3 stride=2x3}, select=ge, scatter=add
})");
  ASSERT_NE(module, nullptr);
  SelectAndScatterExpander expander;
  absl::StatusOr<bool> changed = testing::RunAndVerify(expander, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kSelectAndScatter), 0);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kReduceWindow), 1);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kScatter), 1);
  // The select computation lives on inside the reducer, not as a callee.
  EXPECT_EQ(module->FindComputation("ge"), nullptr);
  EXPECT_NE(module->FindComputation("add"), nullptr);
}

}  // namespace
}  // namespace hloc
