// Tests of the fusion rules: classification, decisions with reasons, the edge
// table switches, budgets, and every user override, each seen through a pass.
#include "passes/fusion/fusion_rules.h"

#include "gtest/gtest.h"
#include "passes/fusion/fusion_test_util.h"
#include "passes/fusion/post_dominator_fusion.h"
#include "passes/fusion/producer_consumer_fusion.h"

namespace hloc {
namespace {

using fusion_test::BodyOpcodes;
using fusion_test::EntryFusions;
using fusion_test::EntryOpcodes;
using fusion_test::Parse;
using fusion_test::RunAndVerify;

constexpr char kChain[] = R"(
HloModule chain
ENTRY main {
  p0 = f32[16] parameter(0)
  a = f32[16] negate(p0)
  b = f32[16] exponential(a)
  c = f32[16] negate(b)
  ROOT d = f32[16] abs(c)
})";

bool AnyFusionHolds(const HloModule& module, HloOpcode opcode) {
  for (const HloInstruction* fusion : EntryFusions(module)) {
    bool found = false;
    fusion->fused_computation()->ForEachInstruction(
        [&](HloInstruction* i) { found = found || i->opcode() == opcode; });
    if (found) return true;
  }
  return false;
}

TEST(FusionRules, ClassifiesOps) {
  auto module = Parse(R"(
HloModule kinds
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p0 = f32[4,8] parameter(0)
  e = f32[4,8] exponential(p0)
  t = f32[8,4] transpose(e), dimensions={1,0}
  z = f32[] constant(0)
  r = f32[4] reduce(p0, z), dimensions={1}, to_apply=add_f32
  bc = f32[4,8] broadcast(r), dimensions={0}
  d = f32[4,4] dot(p0, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tu = (f32[4,8], f32[4,4], f32[8,4]) tuple(bc, d, t)
})");
  FusionRules rules;
  auto kind = [&](absl::string_view name) {
    for (HloInstruction* i : module->entry()->instructions()) {
      if (i->name() == name) return rules.KindOf(*i);
    }
    return OpPatternKind::kOpaque;
  };
  EXPECT_EQ(kind("e"), OpPatternKind::kElementwise);
  EXPECT_EQ(kind("t"), OpPatternKind::kInjective);
  EXPECT_EQ(kind("r"), OpPatternKind::kReduction);
  EXPECT_EQ(kind("bc"), OpPatternKind::kBroadcast);
  EXPECT_EQ(kind("d"), OpPatternKind::kOutElementwiseFusable);
  EXPECT_EQ(kind("tu"), OpPatternKind::kOpaque);
  EXPECT_EQ(kind("p0"), OpPatternKind::kOpaque);
  for (HloInstruction* i : module->entry()->instructions()) {
    if (i->name() == "t") {
      EXPECT_TRUE(FusionRules::IsRealTranspose(*i));
    } else if (i->name() == "e") {
      EXPECT_TRUE(rules.IsExpensive(*i));
    } else if (i->name() == "bc") {
      EXPECT_TRUE(rules.ReusesOperand(*i, 0));
    } else if (i->name() == "z") {
      EXPECT_TRUE(rules.Describe(*i).free_leaf);
    } else if (i->name() == "p0") {
      EXPECT_FALSE(rules.Describe(*i).fusible);
    }
  }
}

TEST(FusionRules, DecisionsCarryTheirReason) {
  FusionDecision refused = FusionDecision::Refuse(fusion_rule::kBudgetOperands, "70 > 64");
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.rule(), "budget-operands");
  EXPECT_EQ(refused.ToString(), "refused (budget-operands): 70 > 64");
  FusionDecision allowed = FusionDecision::Allow(fusion_rule::kLoop);
  EXPECT_TRUE(allowed.ok());
  EXPECT_EQ(allowed.ToString(), "fused (loop)");
  FusionRules rules;
  GroupSummary group;
  group.instructions = 10;
  group.reductions = 1;
  group.dots = 1;
  EXPECT_EQ(rules.CheckGroup(group).rule(), fusion_rule::kOneHero);
  group.dots = 0;
  EXPECT_TRUE(rules.CheckGroup(group).ok());
  group.operands = 65;
  EXPECT_EQ(rules.CheckGroup(group).rule(), fusion_rule::kBudgetOperands);
}

TEST(FusionRules, NeverFuseOpcode) {
  auto module = Parse(kChain);
  FusionRules rules;
  rules.NeverFuseOpcode(HloOpcode::kExp);
  FusionLedger ledger;
  ProducerConsumerFusion pass(rules, &ledger);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  EXPECT_FALSE(AnyFusionHolds(*module, HloOpcode::kExp));
  EXPECT_EQ(EntryOpcodes(*module), "exponential,fusion,negate");
  EXPECT_FALSE(ledger.Find("", fusion_rule::kOverrideOpcode).empty());
}

TEST(FusionRules, NeverFuseInstructionByName) {
  auto module = Parse(kChain);
  FusionRules rules;
  rules.NeverFuseInstruction("c");
  FusionLedger ledger;
  ProducerConsumerFusion pass(rules, &ledger);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "exponential,negate");
  EXPECT_EQ(EntryOpcodes(*module), "abs,fusion,negate");
  EXPECT_FALSE(ledger.Find("", fusion_rule::kOverrideName).empty());
}

TEST(FusionRules, FrontendAttributeIsABarrier) {
  auto module = Parse(R"(
HloModule barrier
ENTRY main {
  p0 = f32[16] parameter(0)
  a = f32[16] negate(p0)
  b = f32[16] abs(a)
  c = f32[16] negate(b), frontend_attributes={_hloc_no_fusion="true"}
  d = f32[16] abs(c)
  ROOT e = f32[16] negate(d)
})");
  for (int grouping = 0; grouping < 2; ++grouping) {
    std::unique_ptr<HloModule> copy = module->Clone();
    FusionLedger ledger;
    std::unique_ptr<HloPass> pass;
    if (grouping == 0) pass = std::make_unique<ProducerConsumerFusion>(FusionRules(), &ledger);
    else pass = std::make_unique<PostDominatorFusion>(FusionRules(), &ledger);
    EXPECT_TRUE(RunAndVerify(*pass, *copy));
    auto fusions = EntryFusions(*copy);
    ASSERT_EQ(fusions.size(), 2u) << PrintModule(*copy);
    EXPECT_EQ(BodyOpcodes(*fusions[0]), "abs,negate");
    EXPECT_EQ(BodyOpcodes(*fusions[1]), "abs,negate");
    // The barrier sits alone between the two kernels.
    EXPECT_EQ(fusions[1]->operand(0)->opcode(), HloOpcode::kNegate);
    EXPECT_EQ(fusions[1]->operand(0)->operand(0), fusions[0]);
    EXPECT_FALSE(ledger.Find("", fusion_rule::kOverrideAttribute).empty());
  }
}

TEST(FusionRules, ExtraEdgeRuleVetoes) {
  auto module = Parse(kChain);
  FusionRules rules;
  rules.AddEdgeRule("no-exp-into-negate",
                    [](const HloInstruction& producer, const HloInstruction& consumer) {
                      if (producer.opcode() == HloOpcode::kExp &&
                          consumer.opcode() == HloOpcode::kNegate) {
                        return FusionDecision::Refuse("backend", "exp cannot feed negate here");
                      }
                      return FusionDecision::Allow("backend");
                    });
  FusionLedger ledger;
  ProducerConsumerFusion pass(rules, &ledger);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 2u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "exponential,negate");
  EXPECT_EQ(BodyOpcodes(*fusions[1]), "abs,negate");
  auto vetoes = ledger.Find("", "no-exp-into-negate");
  ASSERT_EQ(vetoes.size(), 1u);
  EXPECT_NE(vetoes[0]->reason.find("exp cannot feed negate"), std::string::npos);
}

TEST(FusionRules, ExtraInstructionRule) {
  auto module = Parse(kChain);
  FusionRules rules;
  rules.AddInstructionRule("keep-abs", [](const HloInstruction& i) {
    return i.opcode() == HloOpcode::kAbs ? FusionDecision::Refuse("keep-abs", "abs stays")
                                         : FusionDecision::Allow("keep-abs");
  });
  ProducerConsumerFusion pass(rules);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  EXPECT_FALSE(AnyFusionHolds(*module, HloOpcode::kAbs));
}

constexpr char kDotWithPrologue[] = R"(
HloModule dot_prologue
ENTRY main {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  n = f32[8,32] negate(x)
  ROOT d = f32[8,16] dot(n, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(FusionRules, DotPrologueIsASwitch) {
  for (bool on : {false, true}) {
    for (int grouping = 0; grouping < 2; ++grouping) {
      auto module = Parse(kDotWithPrologue);
      FusionRules rules;
      rules.set_fuse_into_dot_prologue(on);
      std::unique_ptr<HloPass> pass;
      if (grouping == 0) pass = std::make_unique<ProducerConsumerFusion>(rules);
      else pass = std::make_unique<PostDominatorFusion>(rules);
      EXPECT_EQ(RunAndVerify(*pass, *module), on);
      auto fusions = EntryFusions(*module);
      if (on) {
        ASSERT_EQ(fusions.size(), 1u);
        EXPECT_EQ(BodyOpcodes(*fusions[0]), "dot,negate");
        EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kOutput);
      } else {
        EXPECT_TRUE(fusions.empty());
      }
    }
  }
}

TEST(FusionRules, ExpensivePrologueStaysOutOfDotEvenWhenOn) {
  auto module = Parse(R"(
HloModule dot_exp
ENTRY main {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  e = f32[8,32] exponential(x)
  ROOT d = f32[8,16] dot(e, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  FusionRules rules;
  rules.set_fuse_into_dot_prologue(true);
  ProducerConsumerFusion pass(rules);
  EXPECT_FALSE(RunAndVerify(pass, *module));
}

TEST(FusionRules, EdgeTableCanForbidReductionEpilogue) {
  auto module = Parse(R"(
HloModule epilogue
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,128] parameter(0)
  z = f32[] constant(0)
  s = f32[8] reduce(x, z), dimensions={1}, to_apply=add_f32
  ROOT r = f32[8] sqrt(s)
})");
  FusionRules rules;
  rules.set_fuse_reduction_epilogue(false);
  EXPECT_FALSE(rules.EdgeAllowed(OpPatternKind::kReduction, OpPatternKind::kElementwise));
  ProducerConsumerFusion pass(rules);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "constant,reduce");
  EXPECT_EQ(EntryOpcodes(*module), "fusion,sqrt");
}

TEST(FusionRules, SideEffectsAndControlEdgesNeverFuse) {
  auto module = Parse(R"(
HloModule effects
ENTRY main {
  p0 = f32[16] parameter(0)
  a = f32[16] negate(p0)
  b = f32[16] abs(a), control-predecessors={a}
  ROOT c = f32[16] negate(b)
})");
  FusionRules rules;
  for (HloInstruction* i : module->entry()->instructions()) {
    if (i->name() == "b") {
      NodeTraits traits = rules.Describe(*i);
      EXPECT_FALSE(traits.fusible);
      EXPECT_EQ(traits.why_not_rule, fusion_rule::kControlDependency);
    }
  }
  ProducerConsumerFusion pass(rules);
  RunAndVerify(pass, *module);
  EXPECT_FALSE(AnyFusionHolds(*module, HloOpcode::kAbs));
}

}  // namespace
}  // namespace hloc
