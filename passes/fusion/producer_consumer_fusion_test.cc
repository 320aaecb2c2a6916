// Tests of producer-consumer fusion on HLO text: what fuses, what does not
// and why (via the ledger), re-running, and re-fusing fused modules.
#include "passes/fusion/producer_consumer_fusion.h"

#include <string>

#include "gtest/gtest.h"
#include "passes/fusion/fusion_test_util.h"

namespace hloc {
namespace {

using fusion_test::BodyOpcodes;
using fusion_test::EntryFusions;
using fusion_test::EntryOpcodes;
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

TEST(ProducerConsumerFusion, DiamondBecomesOneLoopFusion) {
  auto module = Parse(kDiamond);
  ProducerConsumerFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "add,add,add,exponential,multiply,negate");
  EXPECT_EQ(EntryOpcodes(*module), "fusion");
  EXPECT_EQ(module->entry()->root(), fusions[0]);
  EXPECT_EQ(fusions[0]->operand_count(), 2);
}

TEST(ProducerConsumerFusion, DotWithBiasAndReluIsOneOutputFusion) {
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
  ProducerConsumerFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kOutput);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "add,broadcast,broadcast,constant,dot,maximum");
  EXPECT_EQ(fusions[0]->operand_count(), 3);
}

TEST(ProducerConsumerFusion, ConvolutionWithBiasAndRelu) {
  auto module = Parse(R"(
HloModule conv_bias_relu
ENTRY main {
  x = f32[1,8,8,4] parameter(0)
  w = f32[3,3,4,8] parameter(1)
  b = f32[8] parameter(2)
  c = f32[1,8,8,8] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[1,8,8,8] broadcast(b), dimensions={3}
  a = f32[1,8,8,8] add(c, bb)
  z = f32[] constant(0)
  zb = f32[1,8,8,8] broadcast(z), dimensions={}
  ROOT r = f32[1,8,8,8] maximum(a, zb)
})");
  ProducerConsumerFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kOutput);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "add,broadcast,broadcast,constant,convolution,maximum");
}

constexpr char kReductionPrologueEpilogue[] = R"(
HloModule reduce_pro_epi
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,128] parameter(0)
  e = f32[8,128] exponential(x)
  z = f32[] constant(0)
  s = f32[8] reduce(e, z), dimensions={1}, to_apply=add_f32
  ROOT r = f32[8] sqrt(s)
})";

TEST(ProducerConsumerFusion, ReductionWithPrologueAndEpilogue) {
  auto module = Parse(kReductionPrologueEpilogue);
  ProducerConsumerFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kInput);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "constant,exponential,reduce,sqrt");
}

TEST(ProducerConsumerFusion, ReductionEpilogueMayReshape) {
  auto module = Parse(R"(
HloModule mean
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,64] parameter(0)
  z = f32[] constant(0)
  s = f32[8] reduce(x, z), dimensions={1}, to_apply=add_f32
  r = f32[8,1] reshape(s)
  n = f32[] constant(64)
  nb = f32[8,1] broadcast(n), dimensions={}
  ROOT m = f32[8,1] divide(r, nb)
})");
  ProducerConsumerFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kInput);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "broadcast,constant,constant,divide,reduce,reshape");
}

TEST(ProducerConsumerFusion, SharedConstantIsCopiedIntoEachKernel) {
  auto module = Parse(R"(
HloModule shared_constant
ENTRY main {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  c = f32[] constant(2)
  cb = f32[16] broadcast(c), dimensions={}
  a = f32[16] multiply(p0, cb)
  b = f32[16] multiply(p1, cb)
  ROOT t = (f32[16], f32[16]) tuple(a, b)
})");
  ProducerConsumerFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 2u);
  for (const HloInstruction* fusion : fusions) {
    EXPECT_EQ(BodyOpcodes(*fusion), "broadcast,constant,multiply");
    EXPECT_EQ(fusion->operand_count(), 1);
  }
  // Every reader took a copy, so the originals are gone.
  EXPECT_EQ(EntryOpcodes(*module), "fusion,fusion,tuple");
}

TEST(ProducerConsumerFusion, ExpensiveProducerIsNotDuplicated) {
  auto module = Parse(R"(
HloModule no_dup
ENTRY main {
  p0 = f32[16] parameter(0)
  e = f32[16] exponential(p0)
  a = f32[16] negate(e)
  b = f32[16] abs(e)
  ROOT t = (f32[16], f32[16]) tuple(a, b)
})");
  FusionLedger ledger;
  ProducerConsumerFusion pass(FusionRules(), &ledger);
  RunAndVerify(pass, *module);
  // exp stays on its own: copying it would compute it twice.
  EXPECT_TRUE(EntryFusions(*module).empty());
  EXPECT_EQ(EntryOpcodes(*module), "abs,exponential,negate,tuple");
  EXPECT_FALSE(ledger.Find(ProducerConsumerFusion::kName, fusion_rule::kNotDuplicable).empty());
}

TEST(ProducerConsumerFusion, CheapProducerIsDuplicatedIntoEveryConsumer) {
  auto module = Parse(R"(
HloModule dup
ENTRY main {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  s = f32[16] add(p0, p1)
  a = f32[16] exponential(s)
  b = f32[16] log(s)
  ROOT t = (f32[16], f32[16]) tuple(a, b)
})");
  ProducerConsumerFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 2u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "add,exponential");
  EXPECT_EQ(BodyOpcodes(*fusions[1]), "add,log");
  EXPECT_EQ(EntryOpcodes(*module), "fusion,fusion,tuple");
}

TEST(ProducerConsumerFusion, ExpensiveProducerIntoBroadcastIsRefused) {
  auto module = Parse(R"(
HloModule reuse
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8,256] parameter(1)
  e = f32[8] exponential(p0)
  eb = f32[8,256] broadcast(e), dimensions={0}
  ROOT m = f32[8,256] multiply(eb, p1)
})");
  FusionLedger ledger;
  ProducerConsumerFusion pass(FusionRules(), &ledger);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "broadcast,multiply");
  EXPECT_EQ(fusions[0]->operand(0)->opcode(), HloOpcode::kExp);
  auto refusals = ledger.Find(ProducerConsumerFusion::kName, fusion_rule::kExpensiveIntoReuse);
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0]->subjects[0], "e");
}

// x feeds c directly and through an instruction that never fuses: pulling x
// into c's kernel would make that instruction both read the kernel and feed it.
constexpr char kWouldCycle[] = R"(
HloModule would_cycle
ENTRY main {
  p0 = f32[16] parameter(0)
  x = f32[16] negate(p0)
  y = f32[16] custom-call(x), custom_call_target="opaque_op"
  ROOT c = f32[16] add(x, y)
})";

TEST(ProducerConsumerFusion, NeverMakesACycle) {
  auto module = Parse(kWouldCycle);
  FusionLedger ledger;
  ProducerConsumerFusion pass(FusionRules(), &ledger);
  RunAndVerify(pass, *module);
  EXPECT_TRUE(EntryFusions(*module).empty());
  EXPECT_FALSE(ledger.Find(ProducerConsumerFusion::kName, fusion_rule::kOutsideUse).empty());
}

TEST(ProducerConsumerFusion, SecondRunChangesNothing) {
  for (const char* text : {kDiamond, kReductionPrologueEpilogue, kWouldCycle}) {
    auto module = Parse(text);
    ProducerConsumerFusion pass;
    RunAndVerify(pass, *module);
    std::string once = PrintModule(*module);
    EXPECT_FALSE(RunAndVerify(pass, *module));
    EXPECT_EQ(PrintModule(*module), once);
  }
}

TEST(ProducerConsumerFusion, FusionsMergeIntoFusionsWithoutNesting) {
  auto module = Parse(R"(
HloModule fused_already
fused_a {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  ROOT m = f32[16] multiply(p0, p1)
}
fused_b {
  q0 = f32[16] parameter(0)
  ROOT e = f32[16] exponential(q0)
}
ENTRY main {
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  f1 = f32[16] fusion(x, y), kind=kLoop, calls=fused_a
  f2 = f32[16] fusion(f1), kind=kLoop, calls=fused_b
  ROOT n = f32[16] negate(f2)
})");
  ProducerConsumerFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "exponential,multiply,negate");
  EXPECT_EQ(module->computation_count(), 2);  // entry and the one fused computation
  EXPECT_FALSE(RunAndVerify(pass, *module));
}

TEST(ProducerConsumerFusion, MultiOutputFusionConsumerKeepsItsReaders) {
  auto module = Parse(R"(
HloModule consumer_is_multi_output
fused_mo {
  p0 = f32[16] parameter(0)
  n = f32[16] negate(p0)
  a = f32[16] abs(p0)
  ROOT t = (f32[16], f32[16]) tuple(n, a)
}
ENTRY main {
  x = f32[16] parameter(0)
  y = f32[16] parameter(1)
  s = f32[16] add(x, y)
  f = (f32[16], f32[16]) fusion(s), kind=kLoop, calls=fused_mo
  g0 = f32[16] get-tuple-element(f), index=0
  g1 = f32[16] get-tuple-element(f), index=1
  ROOT r = (f32[16], f32[16]) tuple(g0, g1)
})");
  ProducerConsumerFusion pass;
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "abs,add,negate");
  EXPECT_EQ(fusion_test::OutputCount(*fusions[0]), 2);
}

TEST(ProducerConsumerFusion, InstructionBudgetSplitsLongChains) {
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
  rules.budgets().max_instructions = 3;
  FusionLedger ledger;
  ProducerConsumerFusion pass(rules, &ledger);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 2u);
  EXPECT_EQ(BodyOpcodes(*fusions[0]), "abs,negate,negate");
  EXPECT_EQ(BodyOpcodes(*fusions[1]), "abs,abs,negate");
  EXPECT_FALSE(ledger.Find(ProducerConsumerFusion::kName, fusion_rule::kBudgetInstructions)
                   .empty());
}

// An accumulation into one buffer, as JAX's MoE dispatch lowers it: each step
// reads a block back (dynamic-slice), adds to it and writes it in place
// (dynamic-update-slice). In one kernel every step would compute the
// previous buffer at two indices (its own, and the block read back), so its
// code doubles per step; the code-copies budget stops the chain.
std::string AccumulationChain(int steps) {
  std::string text = R"(
HloModule accumulate
ENTRY main {
  buffer0 = f32[64,8] parameter(0)
  y = f32[16,8] parameter(1)
  zero = s32[] constant(0)
)";
  for (int i = 0; i < steps; ++i) {
    const std::string b = "buffer" + std::to_string(i), k = std::to_string(i);
    text += "  at" + k + " = s32[] constant(" + std::to_string(3 * i) + ")\n";
    text += "  read" + k + " = f32[16,8] dynamic-slice(" + b + ", at" + k +
            ", zero), dynamic_slice_sizes={16,8}\n";
    text += "  sum" + k + " = f32[16,8] add(read" + k + ", y)\n";
    text += std::string(i + 1 == steps ? "  ROOT " : "  ") + "buffer" + std::to_string(i + 1) +
            " = f32[64,8] dynamic-update-slice(" + b + ", sum" + k + ", at" + k + ", zero)\n";
  }
  return text + "}\n";
}

TEST(ProducerConsumerFusion, CodeCopiesBudgetStopsAnAccumulationChain) {
  auto module = Parse(AccumulationChain(6));
  ASSERT_NE(module, nullptr);
  FusionRules rules;
  rules.budgets().max_code_copies = 4;
  rules.budgets().min_in_place_update_ratio = 1 << 20;  // Not the rule tested here.
  FusionLedger ledger;
  ProducerConsumerFusion pass(rules, &ledger);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  EXPECT_GE(EntryFusions(*module).size(), 2u);
  auto refusals = ledger.Find(ProducerConsumerFusion::kName, fusion_rule::kBudgetCodeCopies);
  ASSERT_FALSE(refusals.empty());
  EXPECT_NE(refusals[0]->reason.find("times (read at that many indices) > 4"), std::string::npos)
      << refusals[0]->reason;

  // Without the budget the whole chain is one kernel: the refusal above is
  // this rule's doing, not another's.
  auto unlimited = Parse(AccumulationChain(6));
  FusionRules loose;
  loose.budgets().max_code_copies = 1 << 20;
  loose.budgets().min_in_place_update_ratio = 1 << 20;
  ProducerConsumerFusion loose_pass(loose, nullptr);
  EXPECT_TRUE(RunAndVerify(loose_pass, *unlimited));
  EXPECT_EQ(EntryFusions(*unlimited).size(), 1u);
}

// By default each step of that chain is its own kernel that updates the
// buffer in place (rule in-place-update: 16 of 64 rows written), reading back
// only the block it writes; a second run changes nothing.
TEST(ProducerConsumerFusion, SmallUpdatesStayInPlaceKernels) {
  auto module = Parse(AccumulationChain(6));
  ASSERT_NE(module, nullptr);
  FusionRules rules;
  FusionLedger ledger;
  ProducerConsumerFusion pass(rules, &ledger);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  std::vector<const HloInstruction*> fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 6u);
  for (const HloInstruction* fusion : fusions) {
    EXPECT_TRUE(UpdatesInPlace(*fusion)) << fusion->ToString();
    EXPECT_NE(BodyOpcodes(*fusion).find("add,"), std::string::npos);
    EXPECT_NE(BodyOpcodes(*fusion).find("dynamic-slice,dynamic-update-slice"), std::string::npos);
  }
  EXPECT_FALSE(ledger.Find(ProducerConsumerFusion::kName, fusion_rule::kInPlaceUpdate).empty());
  ProducerConsumerFusion again(rules, nullptr);
  EXPECT_FALSE(RunAndVerify(again, *module));

  // An update of more than a quarter of the array fuses into its reader.
  auto wide = Parse(R"(
HloModule wide
ENTRY main {
  b = f32[8,8] parameter(0)
  y = f32[4,8] parameter(1)
  zero = s32[] constant(0)
  u = f32[8,8] dynamic-update-slice(b, y, zero, zero)
  ROOT n = f32[8,8] negate(u)
})");
  ProducerConsumerFusion wide_pass(rules, nullptr);
  EXPECT_TRUE(RunAndVerify(wide_pass, *wide));
  EXPECT_EQ(EntryFusions(*wide).size(), 1u);
}

// Elementwise readers share one copy however many there are: a value read by
// a diamond of elementwise ops is computed once.
TEST(ProducerConsumerFusion, ElementwiseReadersShareOneCopy) {
  auto module = Parse(kDiamond);
  FusionRules rules;
  rules.budgets().max_code_copies = 1;
  ProducerConsumerFusion pass(rules, nullptr);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  ASSERT_EQ(EntryFusions(*module).size(), 1u);
}

TEST(ProducerConsumerFusion, OperandBudget) {
  auto module = Parse(R"(
HloModule wide
ENTRY main {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  p2 = f32[16] parameter(2)
  p3 = f32[16] parameter(3)
  a = f32[16] add(p0, p1)
  b = f32[16] add(p2, p3)
  ROOT c = f32[16] add(a, b)
})");
  FusionRules rules;
  rules.budgets().max_operands = 3;
  ProducerConsumerFusion pass(rules);
  EXPECT_TRUE(RunAndVerify(pass, *module));
  auto fusions = EntryFusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_LE(fusions[0]->operand_count(), 3);
}

}  // namespace
}  // namespace hloc
