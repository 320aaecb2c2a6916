// Tests of fallback fusion: the marker, the grouping it copies, re-running,
// and how the other passes treat its fusions.
#include "passes/fusion/fallback_fusion.h"

#include "gtest/gtest.h"
#include "passes/fusion/fusion_test_util.h"
#include "passes/fusion/producer_consumer_fusion.h"

namespace hloc {
namespace {

using fusion_test::BodyOpcodes;
using fusion_test::EntryFusions;
using fusion_test::Parse;
using fusion_test::RunAndVerify;

constexpr char kDiamond[] = R"(
HloModule diamond
ENTRY main {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  x = f32[16] add(p0, p1)
  a = f32[16] negate(x)
  b = f32[16] exponential(x)
  c = f32[16] multiply(x, x)
  ab = f32[16] add(a, b)
  ROOT r = f32[16] add(ab, c)
})";

TEST(FallbackFusion, RecordsTheGroupingWithTheMarker) {
  for (FusionGrouping grouping :
       {FusionGrouping::kProducerConsumer, FusionGrouping::kPostDominator}) {
    auto module = Parse(kDiamond);
    FallbackFusion pass(FusionRules(), grouping);
    EXPECT_TRUE(RunAndVerify(pass, *module));
    auto fusions = EntryFusions(*module);
    ASSERT_EQ(fusions.size(), 1u);
    EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kCustom);
    EXPECT_EQ(fusions[0]->backend_config(), "{\"hloc_fallback\":true}");
    EXPECT_TRUE(IsFallbackFusion(*fusions[0]));
    EXPECT_EQ(BodyOpcodes(*fusions[0]), "add,add,add,exponential,multiply,negate");
    std::string once = PrintModule(*module);
    EXPECT_FALSE(RunAndVerify(pass, *module));
    EXPECT_EQ(PrintModule(*module), once);
  }
}

TEST(FallbackFusion, SameGroupsAsProducerConsumerFusion) {
  constexpr char kText[] = R"(
HloModule two_kernels
ENTRY main {
  p0 = f32[16] parameter(0)
  e = f32[16] exponential(p0)
  a = f32[16] negate(e)
  b = f32[16] abs(e)
  n = f32[16] negate(a)
  ROOT t = (f32[16], f32[16]) tuple(n, b)
})";
  auto fallback = Parse(kText);
  auto normal = Parse(kText);
  FallbackFusion fallback_pass;
  ProducerConsumerFusion normal_pass;
  RunAndVerify(fallback_pass, *fallback);
  RunAndVerify(normal_pass, *normal);
  auto a = EntryFusions(*fallback);
  auto b = EntryFusions(*normal);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_EQ(BodyOpcodes(*a[k]), BodyOpcodes(*b[k]));
}

TEST(FallbackFusion, OtherPassesLeaveFallbackFusionsAlone) {
  auto module = Parse(R"(
HloModule mixed
ENTRY main {
  p0 = f32[16] parameter(0)
  e = f32[16] exponential(p0)
  ROOT n = f32[16] negate(e)
})");
  FallbackFusion fallback;
  EXPECT_TRUE(RunAndVerify(fallback, *module));
  ProducerConsumerFusion normal;
  EXPECT_FALSE(RunAndVerify(normal, *module));
  FusionRules rules;
  NodeTraits traits = rules.Describe(*EntryFusions(*module)[0]);
  EXPECT_FALSE(traits.fusible);
  EXPECT_EQ(traits.why_not_rule, fusion_rule::kCustomFusion);
}

}  // namespace
}  // namespace hloc
