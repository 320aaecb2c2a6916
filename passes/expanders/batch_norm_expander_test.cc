// BatchNormExpander: the interpreter gives the same results before and
// after expansion on every batch-norm case of expander_test_cases.cc, and
// the expansion is plain reductions and elementwise ops.
#include "passes/expanders/batch_norm_expander.h"

#include "gtest/gtest.h"
#include "passes/expanders/expander_test_cases.h"
#include "passes/test_util.h"

namespace hloc {
namespace {

using expanders::CountEverywhere;
using expanders::ExpanderCase;

class BatchNormCaseTest : public ::testing::TestWithParam<ExpanderCase> {};

TEST_P(BatchNormCaseTest, InterpreterAgreesBeforeAndAfter) {
  for (uint64_t seed : {1, 2}) {
    absl::StatusOr<std::unique_ptr<HloModule>> expanded = expanders::ExpandAndCompare(GetParam(), seed);
    ASSERT_TRUE(expanded.ok()) << expanded.status();
  }
}

std::vector<ExpanderCase> BatchNormCases() {
  std::vector<ExpanderCase> cases;
  for (HloOpcode op : {HloOpcode::kBatchNormTraining, HloOpcode::kBatchNormInference,
                       HloOpcode::kBatchNormGrad}) {
    for (const ExpanderCase& c : expanders::ExpanderCasesFor(op)) cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, BatchNormCaseTest, ::testing::ValuesIn(BatchNormCases()),
                         [](const ::testing::TestParamInfo<ExpanderCase>& info) {
                           return info.param.name;
                         });

TEST(BatchNormExpanderTest, TrainingBecomesReductionsAndElementwiseOps) {
  auto module = testing::ParseAndVerifyOrFail(R"(
HloModule m
ENTRY e {
  x = f16[4,3,2] parameter(0)
  scale = f16[3] parameter(1)
  offset = f16[3] parameter(2)
  bn = (f16[4,3,2], f16[3], f16[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
  ROOT y = f16[4,3,2] get-tuple-element(bn), index=0
})");
  ASSERT_NE(module, nullptr);
  BatchNormExpander expander;
  absl::StatusOr<bool> changed = testing::RunAndVerify(expander, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kBatchNormTraining), 0);
  // Sum for the mean, sum of squares for the variance; computed in f32.
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kReduce), 2);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kRsqrt), 1);
  EXPECT_EQ(module->entry()->root()->shape().element_type(), xla::F16);
  module->entry()->ForEachInstruction([](const HloInstruction* i) {
    if (i->opcode() == HloOpcode::kReduce) {
      EXPECT_EQ(i->shape().element_type(), xla::F32);
    }
  });
}

TEST(BatchNormExpanderTest, LeavesInstructionsWithControlDependenciesAlone) {
  auto module = testing::ParseAndVerifyOrFail(R"(
HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  n = f32[4,3] negate(x)
  bn = (f32[4,3], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1, control-predecessors={n}
  ROOT t = (f32[4,3], (f32[4,3], f32[3], f32[3])) tuple(n, bn)
})");
  ASSERT_NE(module, nullptr);
  BatchNormExpander expander;
  absl::StatusOr<bool> changed = testing::RunAndVerify(expander, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace hloc
