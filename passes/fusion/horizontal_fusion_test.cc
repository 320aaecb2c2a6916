// Tests of horizontal fusion: independent small kernels share a launch;
// dependent, large or too many kernels do not.
#include "passes/fusion/horizontal_fusion.h"

#include "gtest/gtest.h"
#include "passes/fusion/fusion_test_util.h"

namespace hloc {
namespace {

using fusion_test::BodyOpcodes;
using fusion_test::EntryFusions;
using fusion_test::EntryOpcodes;
using fusion_test::OutputCount;
using fusion_test::Parse;
using fusion_test::RunAndVerify;

constexpr char kThreeKernels[] = R"(
HloModule three
ENTRY main {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  p2 = f32[8,4] parameter(2)
  p3 = f32[3] parameter(3)
  a = f32[16] add(p0, p1)
  b = f32[8,4] exponential(p2)
  c = f32[3] negate(p3)
  ROOT t = (f32[16], f32[8,4], f32[3]) tuple(a, b, c)
})";

TEST(HorizontalFusion, IndependentSmallKernelsShareALaunch) {
  auto module = Parse(kThreeKernels);
  HorizontalFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_TRUE(IsHorizontalFusion(*fusions[0]));
  EXPECT_EQ(fusions[0]->backend_config(), "{\"hloc_horizontal\":true}");
  EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "add,exponential,negate");
  EXPECT_EQ(OutputCount(*fusions[0]), 3);
  EXPECT_EQ(fusions[0]->operand_count(), 4);
  EXPECT_EQ(EntryOpcodes(*module),
            "fusion,get-tuple-element,get-tuple-element,get-tuple-element,tuple");
  std::string once = PrintModule(*module);
  EXPECT_FALSE(RunAndVerify(pass, *module));
  EXPECT_EQ(PrintModule(*module), once);
}

TEST(HorizontalFusion, DependentKernelsStayApart) {
  auto module = Parse(R"(
HloModule dependent
ENTRY main {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  a = f32[16] add(p0, p1)
  b = f32[16] negate(a)
  ROOT t = (f32[16], f32[16]) tuple(a, b)
})");
  FusionLedger ledger;
  HorizontalFusion pass(FusionRules(), &ledger);
  EXPECT_FALSE(RunAndVerify(pass, *module));
  EXPECT_FALSE(ledger.Find(HorizontalFusion::kName, fusion_rule::kCycle).empty());
}

TEST(HorizontalFusion, MemberBudget) {
  auto module = Parse(kThreeKernels);
  FusionRules rules;
  rules.budgets().max_horizontal_members = 2;
  HorizontalFusion pass(rules);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(OutputCount(*fusions[0]), 2);
}

TEST(HorizontalFusion, LargeKernelsAreLeftAlone) {
  auto module = Parse(kThreeKernels);
  FusionRules rules;
  rules.budgets().max_horizontal_elements = 8;
  HorizontalFusion pass(rules);
  EXPECT_FALSE(RunAndVerify(pass, *module));
}

TEST(HorizontalFusion, UpdatesInPlaceKeepTheirOwnKernels) {
  auto module = Parse(R"(
HloModule small_updates
ENTRY main {
  a = f32[8,4] parameter(0)
  row = f32[1,4] parameter(1)
  i = s32[] parameter(2)
  p = f32[16] parameter(3)
  z = s32[] constant(0)
  u = f32[8,4] dynamic-update-slice(a, row, i, z)
  n = f32[16] negate(p)
  e = f32[16] exponential(p)
  ROOT t = (f32[8,4], f32[16], f32[16]) tuple(u, n, e)
})");
  HorizontalFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "exponential,negate");
  EXPECT_NE(EntryOpcodes(*module).find("dynamic-update-slice"), std::string::npos);
}

}  // namespace
}  // namespace hloc
