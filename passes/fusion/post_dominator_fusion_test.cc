// Tests of post-dominator fusion: the post-dominator tree, the diamond,
// epilogues and prologues, paths through instructions that never fuse, group
// budgets, and re-running on fused modules.
#include "passes/fusion/post_dominator_fusion.h"

#include "gtest/gtest.h"
#include "passes/fusion/fusion_test_util.h"

namespace hloc {
namespace {

using fusion_test::BodyOpcodes;
using fusion_test::EntryFusions;
using fusion_test::EntryOpcodes;
using fusion_test::Parse;
using fusion_test::RunAndVerify;

// One producer, three elementwise branches, joined by adds.
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

TEST(PostDominatorFusion, PostDominatorTree) {
  auto module = Parse(kDiamond);
  FusionRules rules;
  FusionGraph graph(*module->entry(), rules);
  std::vector<int> ipdom = ComputeImmediatePostDominators(graph, 100);
  auto index = [&](absl::string_view name) {
    for (int i = 0; i < graph.size(); ++i) {
      if (graph.node(i)->name() == name) return i;
    }
    return -1;
  };
  EXPECT_EQ(ipdom[index("x")], index("r"));  // paths through ab and directly via c
  EXPECT_EQ(ipdom[index("a")], index("ab"));
  EXPECT_EQ(ipdom[index("ab")], index("r"));
  EXPECT_EQ(ipdom[index("r")], -1);
  EXPECT_EQ(ipdom[index("p1")], index("x"));
}

TEST(PostDominatorFusion, DiamondBecomesOneGroup) {
  auto module = Parse(kDiamond);
  FusionLedger ledger;
  PostDominatorFusion pass(FusionRules(), &ledger);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "add,add,add,exponential,multiply,negate");
  EXPECT_EQ(EntryOpcodes(*module), "fusion");
  auto groups = ledger.Find(PostDominatorFusion::kName, fusion_rule::kCommitted);
  ASSERT_FALSE(groups.empty());
  EXPECT_EQ(groups.back()->event, "group");
  EXPECT_EQ(groups.back()->subjects.size(), 6u);
}

TEST(PostDominatorFusion, ReductionEpilogueFuses) {
  auto module = Parse(R"(
HloModule reduce_epilogue
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,128] parameter(0)
  y = f32[8] parameter(1)
  e = f32[8,128] exponential(x)
  z = f32[] constant(0)
  s = f32[8] reduce(e, z), dimensions={1}, to_apply=add_f32
  q = f32[8] sqrt(s)
  ROOT m = f32[8] multiply(q, y)
})");
  PostDominatorFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kInput);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "constant,exponential,multiply,reduce,sqrt");
}

TEST(PostDominatorFusion, ReductionIsNotRecomputedThroughABroadcast) {
  auto module = Parse(R"(
HloModule softmax_like
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,128] parameter(0)
  z = f32[] constant(0)
  s = f32[8] reduce(x, z), dimensions={1}, to_apply=add_f32
  sb = f32[8,128] broadcast(s), dimensions={0}
  ROOT d = f32[8,128] divide(x, sb)
})");
  PostDominatorFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  for (const HloInstruction* fusion : EntryFusions(*module)) {
    std::string ops = BodyOpcodes(*fusion);
    EXPECT_FALSE(ops.find("reduce") != std::string::npos &&
                 ops.find("broadcast") != std::string::npos)
        << ops;
  }
}

TEST(PostDominatorFusion, DotEpilogue) {
  auto module = Parse(R"(
HloModule dot_bias_relu
ENTRY main {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  b = f32[16] parameter(2)
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,16] broadcast(b), dimensions={1}
  a = f32[8,16] add(d, bb)
  z = f32[] constant(0)
  zb = f32[8,16] broadcast(z), dimensions={}
  ROOT r = f32[8,16] maximum(a, zb)
})");
  PostDominatorFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kOutput);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "add,broadcast,broadcast,constant,dot,maximum");
}

// x reaches r directly and through an op that never fuses: the check of the
// paths to the post-dominator fails, so x and r stay apart.
TEST(PostDominatorFusion, PathThroughOpaqueOpIsRefused) {
  auto module = Parse(R"(
HloModule would_cycle
ENTRY main {
  p0 = f32[16] parameter(0)
  x = f32[16] negate(p0)
  e = f32[16] exponential(x)
  y = f32[16] custom-call(x), custom_call_target="opaque_op"
  s = f32[16] add(e, y)
  ROOT r = f32[16] abs(s)
})");
  FusionLedger ledger;
  PostDominatorFusion pass(FusionRules(), &ledger);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  // e, s and r fuse; x stays out (its other path runs through the custom call).
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "abs,add,exponential");
  EXPECT_EQ(fusions[0]->operand(0)->name(), "x");
  EXPECT_FALSE(ledger.Find(PostDominatorFusion::kName, fusion_rule::kOpaque).empty());
}

TEST(PostDominatorFusion, GroupSizeBudget) {
  auto module = Parse(R"(
HloModule chain
ENTRY main {
  p0 = f32[16] parameter(0)
  a = f32[16] negate(p0)
  b = f32[16] abs(a)
  c = f32[16] negate(b)
  d = f32[16] abs(c)
  e = f32[16] negate(d)
  ROOT f = f32[16] abs(e)
})");
  FusionRules rules;
  rules.budgets().max_instructions = 4;
  PostDominatorFusion pass(rules);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  for (const HloInstruction* fusion : EntryFusions(*module)) {
    EXPECT_LE(fusion->fused_computation()->instruction_count() - fusion->operand_count(), 4);
  }
}

TEST(PostDominatorFusion, RerunIsIdempotentAndMergesFusions) {
  auto module = Parse(kDiamond);
  PostDominatorFusion pass;
  RunAndVerify(pass, *module);
  std::string once = PrintModule(*module);
  EXPECT_FALSE(RunAndVerify(pass, *module));
  EXPECT_EQ(PrintModule(*module), once);

  auto fused = Parse(R"(
HloModule fused_already
fused_a {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  ROOT m = f32[16] multiply(p0, p1)
}
ENTRY main {
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  f1 = f32[16] fusion(x, y), kind=kLoop, calls=fused_a
  e = f32[16] exponential(f1)
  ROOT n = f32[16] negate(e)
})");
  EXPECT_TRUE(RunAndVerify(pass, *fused));
  auto fusions = EntryFusions(*fused);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "exponential,multiply,negate");
  EXPECT_EQ(fused->computation_count(), 2);
}

}  // namespace
}  // namespace hloc
