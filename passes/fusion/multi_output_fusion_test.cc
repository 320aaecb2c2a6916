// Tests of multi-output fusion: sibling reductions, a producer becoming an
// extra output, refusing merges that would close a cycle or mix index spaces.
#include "passes/fusion/multi_output_fusion.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "passes/fusion/fusion_test_util.h"
#include "passes/fusion/producer_consumer_fusion.h"

namespace hloc {
namespace {

using fusion_test::BodyOpcodes;
using fusion_test::EntryFusions;
using fusion_test::EntryOpcodes;
using fusion_test::OutputCount;
using fusion_test::Parse;
using fusion_test::RunAndVerify;

constexpr char kReducers[] = R"(
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
)";

std::string WithReducers(absl::string_view name, absl::string_view entry) {
  return absl::StrCat("HloModule ", name, "\n", kReducers, entry);
}

TEST(MultiOutputFusion, SiblingReductionsShareOneKernel) {
  auto module = Parse(WithReducers("siblings", R"(
ENTRY main {
  x = f32[8,128] parameter(0)
  z = f32[] constant(0)
  m = f32[] constant(-inf)
  s = f32[8] reduce(x, z), dimensions={1}, to_apply=add_f32
  mx = f32[8] reduce(x, m), dimensions={1}, to_apply=max_f32
  ROOT t = (f32[8], f32[8]) tuple(s, mx)
})"));
  ProducerConsumerFusion producer_consumer;
  EXPECT_TRUE(RunAndVerify(producer_consumer, *module));
  ASSERT_EQ(EntryFusions(*module).size(), 2u);
  FusionLedger ledger;
  MultiOutputFusion pass(FusionRules(), &ledger);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kInput);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "constant,constant,reduce,reduce");
  EXPECT_EQ(OutputCount(*fusions[0]), 2);
  EXPECT_EQ(fusions[0]->operand_count(), 1);
  EXPECT_EQ(EntryOpcodes(*module), "fusion,get-tuple-element,get-tuple-element,tuple");
  EXPECT_FALSE(ledger.Find(MultiOutputFusion::kName, fusion_rule::kSibling).empty());
  EXPECT_FALSE(RunAndVerify(pass, *module));
}

TEST(MultiOutputFusion, ProducerBecomesAnExtraOutput) {
  auto module = Parse(WithReducers("producer_output", R"(
ENTRY main {
  x = f32[8,128] parameter(0)
  e = f32[8,128] exponential(x)
  z = f32[] constant(0)
  s = f32[8] reduce(e, z), dimensions={1}, to_apply=add_f32
  ROOT t = (f32[8,128], f32[8]) tuple(e, s)
})"));
  ProducerConsumerFusion producer_consumer;
  RunAndVerify(producer_consumer, *module);
  FusionLedger ledger;
  MultiOutputFusion pass(FusionRules(), &ledger);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "constant,exponential,reduce");
  EXPECT_EQ(OutputCount(*fusions[0]), 2);
  EXPECT_EQ(EntryOpcodes(*module), "fusion,get-tuple-element,get-tuple-element,tuple");
  EXPECT_FALSE(ledger.Find(MultiOutputFusion::kName, fusion_rule::kProducerOutput).empty());
  EXPECT_FALSE(RunAndVerify(pass, *module));
}

TEST(MultiOutputFusion, RefusesAMergeThatWouldCloseACycle) {
  auto module = Parse(R"(
HloModule would_cycle
ENTRY main {
  p0 = f32[16] parameter(0)
  p = f32[16] exponential(p0)
  y = f32[16] custom-call(p), custom_call_target="opaque_op"
  c = f32[16] add(p, y)
  ROOT t = (f32[16], f32[16]) tuple(c, p)
})");
  FusionLedger ledger;
  MultiOutputFusion pass(FusionRules(), &ledger);
  EXPECT_FALSE(RunAndVerify(pass, *module));
  auto refusals = ledger.Find(MultiOutputFusion::kName, fusion_rule::kCycle);
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0]->subjects[0], "p");
  EXPECT_EQ(refusals[0]->subjects[1], "c");
}

TEST(MultiOutputFusion, DifferentIndexSpacesStayApart) {
  auto module = Parse(R"(
HloModule spaces
ENTRY main {
  x = f32[16] parameter(0)
  a = f32[16] negate(x)
  b = f32[4,16] broadcast(x), dimensions={1}
  ROOT t = (f32[16], f32[4,16]) tuple(a, b)
})");
  FusionLedger ledger;
  MultiOutputFusion pass(FusionRules(), &ledger);
  EXPECT_FALSE(RunAndVerify(pass, *module));
  EXPECT_FALSE(ledger.Find(MultiOutputFusion::kName, fusion_rule::kIterationSpace).empty());
}

TEST(MultiOutputFusion, LoopSiblingsWithTheSameShape) {
  auto module = Parse(R"(
HloModule loops
ENTRY main {
  x = f32[16] parameter(0)
  a = f32[16] negate(x)
  b = f32[16] exponential(x)
  c = f32[16] abs(x)
  ROOT t = (f32[16], f32[16], f32[16]) tuple(a, b, c)
})");
  MultiOutputFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "abs,exponential,negate");
  EXPECT_EQ(OutputCount(*fusions[0]), 3);
}

// A scan's per-step stores: three updates of three stacked arrays from one
// row. Merged, the kernel would rewrite all three arrays; apart, each writes
// its row in place.
TEST(MultiOutputFusion, UpdatesInPlaceStayApart) {
  auto module = Parse(R"(
HloModule scan_stores
ENTRY main {
  a = f32[64,16] parameter(0)
  b = f32[64,16] parameter(1)
  c = f32[64,16] parameter(2)
  row = f32[1,16] parameter(3)
  i = s32[] parameter(4)
  z = s32[] constant(0)
  ua = f32[64,16] dynamic-update-slice(a, row, i, z)
  ub = f32[64,16] dynamic-update-slice(b, row, i, z)
  uc = f32[64,16] dynamic-update-slice(c, row, i, z)
  ROOT t = (f32[64,16], f32[64,16], f32[64,16]) tuple(ua, ub, uc)
})");
  ProducerConsumerFusion producer_consumer;
  RunAndVerify(producer_consumer, *module);
  for (const HloInstruction* fusion : EntryFusions(*module)) {
    EXPECT_TRUE(UpdatesInPlace(*fusion)) << fusion->ToString();
  }
  const std::string before = PrintModule(*module);
  FusionLedger ledger;
  MultiOutputFusion pass(FusionRules(), &ledger);
  EXPECT_FALSE(RunAndVerify(pass, *module));
  EXPECT_EQ(PrintModule(*module), before);
  EXPECT_FALSE(ledger.Find(MultiOutputFusion::kName, fusion_rule::kInPlaceUpdate).empty());
}

}  // namespace
}  // namespace hloc
