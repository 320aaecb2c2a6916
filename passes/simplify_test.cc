// Tests of the core rewrites on small HLO texts: each pass does its rewrite,
// leaves a valid module, and keeps the interpreter's results.
#include "gtest/gtest.h"
#include "hlo/text_printer.h"
#include "passes/algebraic_simplifier.h"
#include "passes/call_inliner.h"
#include "passes/common_subexpression_elimination.h"
#include "passes/constant_folding.h"
#include "passes/dead_code_elimination.h"
#include "passes/layout_bitcast_expander.h"
#include "passes/pipeline.h"
#include "passes/reduce_window_rewriter.h"
#include "passes/reshape_sinking.h"
#include "passes/test_util.h"
#include "passes/tuple_simplifier.h"

namespace hloc {
namespace {

using testing::CountOpcode;
using testing::ParseAndVerify;
using testing::RunAndCheckSemantics;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto module = ParseAndVerify(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(*module) : nullptr;
}

// `Pass` and dead-code elimination run to a fixed point on `module`, which
// must compute the same as before (RunAndCheckSemantics).
template <typename Pass>
absl::StatusOr<bool> RunToFixedPointWithDce(HloModule& module) {
  FixedPointPass fix("fix");
  fix.AddPass<Pass>();
  fix.AddPass<DeadCodeElimination>();
  return RunAndCheckSemantics(fix, module);
}

TEST(DeadCodeElimination, RemovesUnusedChainsAndComputations) {
  auto m = Parse(R"(
HloModule m
unused_callee {
  q = f32[4] parameter(0)
  ROOT e = f32[4] exponential(q)
}
ENTRY e {
  p = f32[4] parameter(0)
  dead1 = f32[4] negate(p)
  dead2 = f32[4] abs(dead1)
  ROOT r = f32[4] add(p, p)
})");
  ASSERT_NE(m, nullptr);
  DeadCodeElimination dce;
  auto changed = RunAndCheckSemantics(dce, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(m->entry()->instruction_count(), 2);
  EXPECT_EQ(m->computation_count(), 1);
  EXPECT_FALSE(*dce.Run(*m));  // idempotent
}

TEST(DeadCodeElimination, KeepsSideEffects) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  t = token[] after-all()
  o = token[] outfeed(p, t), outfeed_config=""
  ROOT r = f32[4] negate(p)
})");
  ASSERT_NE(m, nullptr);
  DeadCodeElimination dce;
  ASSERT_TRUE(dce.Run(*m).ok());
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kOutfeed), 1);
}

TEST(CommonSubexpressionElimination, MergesEqualButNotDifferentAttributes) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4,8] parameter(0)
  a = f32[4,8] exponential(p)
  b = f32[4,8] exponential(p)
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  c3 = f32[] constant(3)
  t1 = f32[8,4] transpose(a), dimensions={1,0}
  t2 = f32[8,4] transpose(b), dimensions={1,0}
  ROOT out = (f32[8,4], f32[8,4], f32[], f32[], f32[]) tuple(t1, t2, c1, c2, c3)
})");
  ASSERT_NE(m, nullptr);
  CommonSubexpressionElimination cse;
  auto changed = RunAndCheckSemantics(cse, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const HloInstruction* root = m->entry()->root();
  EXPECT_EQ(root->operand(0), root->operand(1));  // t1 == t2 after a == b
  EXPECT_EQ(root->operand(2), root->operand(3));  // 2 == 2
  EXPECT_NE(root->operand(3), root->operand(4));  // 2 != 3
}

TEST(CommonSubexpressionElimination, NeverMergesRandomOps) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  a = f32[4] rng(lo, hi), distribution=rng_uniform
  b = f32[4] rng(lo, hi), distribution=rng_uniform
  ROOT out = (f32[4], f32[4]) tuple(a, b)
})");
  ASSERT_NE(m, nullptr);
  CommonSubexpressionElimination cse;
  ASSERT_TRUE(cse.Run(*m).ok());
  EXPECT_NE(m->entry()->root()->operand(0), m->entry()->root()->operand(1));
}

TEST(TupleSimplifier, ForwardsElementsAndRepacks) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = (f32[2], s32[3]) parameter(0)
  g0 = f32[2] get-tuple-element(p), index=0
  g1 = s32[3] get-tuple-element(p), index=1
  t = (f32[2], s32[3]) tuple(g0, g1)
  x = f32[2] get-tuple-element(t), index=0
  n = f32[2] negate(x)
  ROOT out = ((f32[2], s32[3]), f32[2]) tuple(t, n)
})");
  ASSERT_NE(m, nullptr);
  TupleSimplifier simplifier;
  auto changed = RunAndCheckSemantics(simplifier, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  const HloInstruction* root = m->entry()->root();
  EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kParameter);
  EXPECT_EQ(root->operand(1)->operand(0)->opcode(), HloOpcode::kGetTupleElement);
  EXPECT_EQ(root->operand(1)->operand(0)->operand(0)->opcode(), HloOpcode::kParameter);
}

// JAX's keepdims mean: the divide moves onto the reduce's shape and one
// reshape follows it; a compare keeps its pred type; an op mixing two
// source shapes is left alone.
TEST(ReshapeSinking, ElementwiseOpsMoveAboveSizeOneReshapes) {
  auto m = Parse(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,16] parameter(0)
  zero = f32[] constant(0)
  sum = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
  keep = f32[8,1] reshape(sum)
  n = f32[] constant(16)
  nb = f32[8,1] broadcast(n), dimensions={}
  mean = f32[8,1] divide(keep, nb)
  big = pred[8,1] compare(mean, nb), direction=GT
  y = f32[1,8] parameter(1)
  other = f32[8,1] reshape(y)
  mixed = f32[8,1] add(keep, other)
  ROOT out = (f32[8,1], pred[8,1], f32[8,1]) tuple(mean, big, mixed)
})");
  ASSERT_NE(m, nullptr);
  ReshapeSinking sinking;
  auto changed = RunAndCheckSemantics(sinking, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const HloInstruction* root = m->entry()->root();
  const HloInstruction* mean = root->operand(0);
  ASSERT_EQ(mean->opcode(), HloOpcode::kReshape) << PrintModule(*m);
  EXPECT_EQ(mean->operand(0)->opcode(), HloOpcode::kDivide);
  EXPECT_EQ(mean->operand(0)->shape().dimensions(), (std::vector<int64_t>{8}));
  EXPECT_EQ(mean->operand(0)->operand(0)->opcode(), HloOpcode::kReduce);
  const HloInstruction* big = root->operand(1);
  ASSERT_EQ(big->opcode(), HloOpcode::kReshape) << PrintModule(*m);
  EXPECT_EQ(big->operand(0)->opcode(), HloOpcode::kCompare);
  EXPECT_EQ(big->operand(0)->shape().element_type(), xla::PRED);
  // keep is f32[8] underneath, other is f32[1,8]: different dims, no rewrite.
  EXPECT_EQ(root->operand(2)->opcode(), HloOpcode::kAdd);
}

// A gemm's rows regrouped ([B*S,N] -> [B,S,N], as XLA's optimized modules
// do) with a bias along N and an activation after it: the bias, the
// activation and their scalar constants run on [B*S,N] and one reshape
// follows. A broadcast along a regrouped dimension keeps the op where it is.
TEST(ReshapeSinking, ElementwiseOpsWithABiasMoveAboveRegroupingReshapes) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  x = f32[6,4] parameter(0)
  w = f32[4,5] parameter(1)
  d = f32[6,5] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[2,3,5] reshape(d)
  bias = f32[5] parameter(2)
  bb = f32[2,3,5] broadcast(bias), dimensions={2}
  biased = f32[2,3,5] add(r, bb)
  half = f32[] constant(0.5)
  hb = f32[2,3,5] broadcast(half), dimensions={}
  t = f32[2,3,5] tanh(biased)
  act = f32[2,3,5] multiply(t, hb)
  rows = f32[2] parameter(3)
  rb = f32[2,3,5] broadcast(rows), dimensions={0}
  scaled = f32[2,3,5] multiply(r, rb)
  ROOT out = (f32[2,3,5], f32[2,3,5]) tuple(act, scaled)
})");
  ASSERT_NE(m, nullptr);
  auto changed = RunToFixedPointWithDce<ReshapeSinking>(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const HloInstruction* act = m->entry()->root()->operand(0);
  ASSERT_EQ(act->opcode(), HloOpcode::kReshape) << PrintModule(*m);
  const HloInstruction* multiply = act->operand(0);
  ASSERT_EQ(multiply->opcode(), HloOpcode::kMultiply);
  EXPECT_EQ(multiply->shape().dimensions(), (std::vector<int64_t>{6, 5}));
  const HloInstruction* tanh = multiply->operand(0);
  ASSERT_EQ(tanh->opcode(), HloOpcode::kTanh);
  const HloInstruction* add = tanh->operand(0);
  ASSERT_EQ(add->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(add->operand(0)->opcode(), HloOpcode::kDot);
  EXPECT_EQ(add->operand(1)->dimensions(), (std::vector<int64_t>{1}));
  EXPECT_EQ(m->entry()->root()->operand(1)->opcode(), HloOpcode::kMultiply);
}

// XLA's optimized modules reinterpret memory through layouts: each of
// these bitcasts is a transpose (with a reshape, or a change of element type
// at the same width), which the expander writes out; a bitcast that is a
// row-major reshape stays.
TEST(LayoutBitcastExpander, BitcastsThatMoveElementsBecomeTransposes) {
  auto m = Parse(R"(
HloModule m
%copy_body (p: f32[3,3,2,4]) -> f32[3,3,2,4] {
  %p = f32[3,3,2,4]{3,1,0,2} parameter(0)
  %b = f32[2,3,3,4]{3,2,1,0} bitcast(%p)
  %n = f32[2,3,3,4]{3,2,1,0} negate(%b)
  ROOT %c = f32[3,3,2,4]{3,1,0,2} bitcast(%n)
}
ENTRY e {
  x = f32[2,3,3,4]{3,2,1,0} parameter(0)
  disguised = f32[3,3,2,4]{3,1,0,2} bitcast(x)
  to_row_major = f32[3,3,2,4]{3,2,1,0} copy(disguised)
  fused = f32[3,3,2,4]{3,1,0,2} fusion(disguised), kind=kLoop, calls=%copy_body
  y = f32[6,5]{1,0} parameter(1)
  flipped = s32[5,6]{0,1} bitcast(y)
  z = f32[6,6]{1,0} parameter(2)
  square = f32[6,6]{0,1} bitcast(z)
  w = f32[4,1,6]{2,1,0} parameter(3)
  units = f32[4,6,1]{1,2,0} bitcast(w)
  same = f32[24]{0} bitcast(w)
  ROOT t = (f32[3,3,2,4], f32[3,3,2,4], s32[5,6], f32[6,6], f32[4,6,1], f32[24]) tuple(to_row_major, fused, flipped, square, units, same)
})");
  ASSERT_NE(m, nullptr);
  // The shape test the pass and the backends share.
  const HloComputation* entry = m->entry();
  auto is_reshape = [&](const char* name) {
    for (const HloInstruction* i : entry->instructions()) {
      if (i->name() == name) return BitcastIsRowMajorReshape(i->operand(0)->shape(), i->shape());
    }
    ADD_FAILURE() << "no instruction " << name;
    return false;
  };
  EXPECT_FALSE(is_reshape("disguised"));
  EXPECT_FALSE(is_reshape("flipped"));
  EXPECT_FALSE(is_reshape("square"));
  EXPECT_TRUE(is_reshape("units"));  // Only a dimension of size 1 moves.
  EXPECT_TRUE(is_reshape("same"));

  LayoutBitcastExpander expander;
  auto changed = RunAndCheckSemantics(expander, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  int64_t bitcasts = 0;
  for (const HloComputation* computation : m->computations()) {
    for (const HloInstruction* i : computation->instructions()) {
      if (i->opcode() != HloOpcode::kBitcast) continue;
      ++bitcasts;
      EXPECT_TRUE(BitcastIsRowMajorReshape(i->operand(0)->shape(), i->shape()))
          << i->name() << "\n" << PrintModule(*m);
    }
  }
  EXPECT_EQ(bitcasts, 7);  // Each of the 5 rewritten keeps a row-major one.
  EXPECT_EQ(m->entry()->root()->operand(4)->opcode(), HloOpcode::kBitcast);
  EXPECT_EQ(m->entry()->root()->operand(5)->opcode(), HloOpcode::kBitcast);
  // Once is enough.
  auto again = RunAndCheckSemantics(expander, *m);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(*again);
}

// Windows side by side (stride = size) or picks (size 1) read each element
// at most once: a reshape and a reduce compute them. The module has XLA:CPU's
// partial column sums (f16, 32x1 stride 32, with a tail no window covers),
// padded 2x2 max pooling, a variadic (value, index) window, a strided pick
// beside a tile, and a layout on a result; overlapping and dilated windows
// stay reduce-windows.
TEST(ReduceWindowRewriter, NonOverlappingWindowsBecomeReduces) {
  auto m = Parse(R"(
HloModule m
add16 {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT s = f16[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GE
  v = f32[] select(gt, av, bv)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f16[70,8] parameter(0)
  zero16 = f16[] constant(0)
  partial = f16[2,8] reduce-window(x, zero16), window={size=32x1 stride=32x1}, to_apply=add16
  img = f32[1,5,5,3] parameter(1)
  lowest = f32[] constant(-inf)
  pooled = f32[1,3,3,3] reduce-window(img, lowest), window={size=1x2x2x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
  v = f32[6,4] parameter(2)
  idx = s32[6,4] iota(), iota_dimension=0
  minus = s32[] constant(-1)
  arg = (f32[3,4], s32[3,4]) reduce-window(v, idx, lowest, minus), window={size=2x1 stride=2x1}, to_apply=argmax
  picks = f32[2,2] reduce-window(v, lowest), window={size=1x2 stride=3x2}, to_apply=max
  col = f32[4,4]{0,1} reduce-window(v, lowest), window={size=2x1 stride=2x1 pad=1_1x0_0}, to_apply=max
  overlap = f32[2,4] reduce-window(v, lowest), window={size=3x1 stride=2x1}, to_apply=max
  dilated = f32[4,4] reduce-window(v, lowest), window={size=2x1 stride=1x1 rhs_dilate=2x1}, to_apply=max
  ROOT t = (f16[2,8], f32[1,3,3,3], (f32[3,4], s32[3,4]), f32[2,2], f32[4,4]{0,1}, f32[2,4], f32[4,4]) tuple(partial, pooled, arg, picks, col, overlap, dilated)
})");
  ASSERT_NE(m, nullptr);
  ReduceWindowRewriter rewriter;
  auto changed = RunAndCheckSemantics(rewriter, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kReduceWindow), 2) << PrintModule(*m);
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kReduce), 5);
  const HloInstruction* root = m->entry()->root();
  EXPECT_EQ(root->operand(4)->shape().ToString(true), "f32[4,4]{0,1}");
  // The partial sums: 64 of the 70 rows, as [2,32,8] summed over the 32.
  const HloInstruction* partial = root->operand(0);
  ASSERT_EQ(partial->opcode(), HloOpcode::kReduce);
  EXPECT_EQ(partial->dimensions(), std::vector<int64_t>({1}));
  EXPECT_EQ(partial->operand(0)->shape().dimensions(), std::vector<int64_t>({2, 32, 8}));
  auto again = RunAndCheckSemantics(rewriter, *m);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(*again);
}

TEST(CallInliner, InlinesPlainCallsButNotCompositeOnes) {
  auto m = Parse(R"(
HloModule m
plain {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] multiply(a, b)
}
library {
  x = f32[4] parameter(0)
  ROOT y = f32[4] exponential(x)
}
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] call(p, p), to_apply=plain
  ROOT l = f32[4] call(c), to_apply=library, is_composite=true, frontend_attributes={composite.name="hloc.exp",composite.attributes={},composite.version="1"}
})");
  ASSERT_NE(m, nullptr);
  CallInliner inliner;
  auto changed = RunAndCheckSemantics(inliner, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kCall), 1);
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kMultiply), 1);
  CallInliner by_name({"hloc.exp"});
  ASSERT_TRUE(RunAndCheckSemantics(by_name, *m).ok());
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kCall), 0);
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kExp), 1);
}

// A call returning a tuple (a backend inlining a multi-output library call
// it lacks, such as hloc.layer_norm on the host) leaves no tuple behind: each
// get-tuple-element reads its element, the root one included, so fusion sees
// the elements' producers, not one value holding them all. A tuple also read
// whole stays.
TEST(FusionInliner, ModulesArrivingFusedBecomePlainHlo) {
  // As XLA:CPU leaves a module: a dot in a custom (YNNPACK) fusion, a loop
  // fusion with two outputs read through get-tuple-elements, and a fusion
  // nested in another.
  auto m = Parse(R"(
HloModule m
%ynn (a: f32[8,16], b: f32[16,4]) -> f32[8,4] {
  %a = f32[8,16]{1,0} parameter(0)
  %b = f32[16,4]{1,0} parameter(1)
  ROOT %d = f32[8,4]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
%inner (x: f32[8,4]) -> f32[8,4] {
  %x = f32[8,4]{1,0} parameter(0)
  ROOT %t = f32[8,4]{1,0} tanh(%x)
}
%two (p: f32[8,4]) -> (f32[8,4], f32[8,4]) {
  %p = f32[8,4]{1,0} parameter(0)
  %n = f32[8,4]{1,0} negate(%p)
  %f = f32[8,4]{1,0} fusion(%n), kind=kLoop, calls=%inner
  ROOT %r = (f32[8,4]{1,0}, f32[8,4]{1,0}) tuple(%n, %f)
}
ENTRY %e (a: f32[8,16], b: f32[16,4]) -> f32[8,4] {
  %a = f32[8,16]{1,0} parameter(0)
  %b = f32[16,4]{1,0} parameter(1)
  %g = f32[8,4]{1,0} fusion(%a, %b), kind=kCustom, calls=%ynn, backend_config={"fusion_config":{"kind":"__ynn_fusion"}}
  %both = (f32[8,4]{1,0}, f32[8,4]{1,0}) fusion(%g), kind=kLoop, calls=%two
  %first = f32[8,4]{1,0} get-tuple-element(%both), index=0
  %second = f32[8,4]{1,0} get-tuple-element(%both), index=1
  ROOT %s = f32[8,4]{1,0} add(%first, %second)
})");
  ASSERT_NE(m, nullptr);
  FusionLedger ledger;
  FusionInliner inliner(&ledger);
  auto changed = RunAndCheckSemantics(inliner, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kFusion), 0) << PrintModule(*m);
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kDot), 1);
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kTanh), 1);
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kGetTupleElement), 0) << PrintModule(*m);
  // The fused computations are gone with their fusions.
  EXPECT_EQ(m->computations().size(), 1u) << PrintModule(*m);
  // Each inlined fusion is in the ledger, nested ones first.
  ASSERT_EQ(ledger.entries().size(), 3u) << ledger.ToText();
  EXPECT_EQ(ledger.entries()[0].subjects, std::vector<std::string>{"f"});
  EXPECT_EQ(ledger.entries()[0].computation, "two");
  EXPECT_EQ(ledger.entries()[1].rule, "kCustom");
  EXPECT_EQ(ledger.entries()[2].subjects, std::vector<std::string>{"both"});
}

TEST(CallInliner, TupleResultsAreReadElementByElement) {
  auto m = Parse(R"(
HloModule m
stats {
  x = f32[4,8] parameter(0)
  z = f32[] constant(0)
  s = f32[4] reduce(x, z), dimensions={1}, to_apply=add
  b = f32[4,8] broadcast(s), dimensions={0}
  ROOT t = (f32[4], f32[4,8]) tuple(s, b)
}
add {
  a = f32[] parameter(0)
  c = f32[] parameter(1)
  ROOT r = f32[] add(a, c)
}
ENTRY e {
  p = f32[4,8] parameter(0)
  c = (f32[4], f32[4,8]) call(p), to_apply=stats, is_composite=true, frontend_attributes={composite.name="hloc.stats",composite.attributes={},composite.version="1"}
  b = f32[4,8] get-tuple-element(c), index=1
  m = f32[4,8] multiply(b, p)
  c2 = (f32[4], f32[4,8]) call(m), to_apply=stats, is_composite=true, frontend_attributes={composite.name="hloc.stats",composite.attributes={},composite.version="1"}
  s2 = f32[4] get-tuple-element(c2), index=0
  ROOT r = ((f32[4], f32[4,8]), f32[4]) tuple(c2, s2)
})");
  ASSERT_NE(m, nullptr);
  CallInliner inliner({"hloc.stats"});
  ASSERT_TRUE(RunAndCheckSemantics(inliner, *m).ok());
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kCall), 0);
  // c's tuple and gte are gone; c2's tuple is read whole by the root, so it
  // stays, while s2 reads the reduce directly.
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kGetTupleElement), 0) << PrintModule(*m);
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kTuple), 2) << PrintModule(*m);
  const HloInstruction* root = m->entry()->root();
  EXPECT_EQ(root->operand(1)->opcode(), HloOpcode::kReduce) << PrintModule(*m);
  EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kTuple) << PrintModule(*m);

  auto rooted = Parse(R"(
HloModule m
pair {
  x = f32[4] parameter(0)
  n = f32[4] negate(x)
  ROOT t = (f32[4], f32[4]) tuple(x, n)
}
ENTRY e {
  p = f32[4] parameter(0)
  c = (f32[4], f32[4]) call(p), to_apply=pair
  ROOT g = f32[4] get-tuple-element(c), index=1
})");
  ASSERT_NE(rooted, nullptr);
  CallInliner plain;
  ASSERT_TRUE(RunAndCheckSemantics(plain, *rooted).ok());
  EXPECT_EQ(rooted->entry()->root()->opcode(), HloOpcode::kNegate) << PrintModule(*rooted);
  EXPECT_EQ(CountOpcode(*rooted, HloOpcode::kTuple), 0);
}

TEST(AlgebraicSimplifier, ArithmeticIdentities) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  zero = f32[] constant(0)
  zeros = f32[4] broadcast(zero), dimensions={}
  one = f32[4] constant({1, 1, 1, 1})
  a = f32[4] add(p, zeros)
  b = f32[4] multiply(one, a)
  c = f32[4] divide(b, one)
  d = f32[4] subtract(c, zeros)
  n1 = f32[4] negate(d)
  ROOT n2 = f32[4] negate(n1)
})");
  ASSERT_NE(m, nullptr);
  AlgebraicSimplifier simplifier;
  auto changed = RunAndCheckSemantics(simplifier, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(m->entry()->root()->opcode(), HloOpcode::kParameter);
}

// tf2xla's top_k and sort end in set-dimension-size with the full size and a
// static result: the operand itself. A dynamic result keeps the op.
TEST(AlgebraicSimplifier, StaticSetDimensionSizeIsItsOperand) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4,3] parameter(0)
  three = s32[] constant(3)
  static = f32[4,3] set-dimension-size(p, three), dimensions={1}
  n = s32[] parameter(1)
  dynamic = f32[4,<=3] set-dimension-size(p, n), dimensions={1}
  ROOT out = (f32[4,3], f32[4,<=3]) tuple(static, dynamic)
})");
  ASSERT_NE(m, nullptr);
  AlgebraicSimplifier simplifier;
  auto changed = simplifier.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(m->entry()->root()->operand(0)->opcode(), HloOpcode::kParameter);
  EXPECT_EQ(m->entry()->root()->operand(1)->opcode(), HloOpcode::kSetDimensionSize);
}

TEST(AlgebraicSimplifier, ShapeChainsFold) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2,3,4] parameter(0)
  r1 = f32[6,4] reshape(p)
  r2 = f32[24] reshape(r1)
  t1 = f32[3,2,4] transpose(p), dimensions={1,0,2}
  t2 = f32[4,2,3] transpose(t1), dimensions={2,1,0}
  s = f32[] parameter(1)
  b1 = f32[5] broadcast(s), dimensions={}
  b2 = f32[5,7] broadcast(b1), dimensions={0}
  sl1 = f32[2,3,2] slice(p), slice={[0:2], [0:3], [0:4:2]}
  sl2 = f32[1,3,1] slice(sl1), slice={[1:2], [0:3], [1:2]}
  w = f64[24] convert(r2)
  back = f32[24] convert(w)
  ROOT out = (f32[24], f32[4,2,3], f32[5,7], f32[1,3,1], f32[24]) tuple(r2, t2, b2, sl2, back)
})");
  ASSERT_NE(m, nullptr);
  AlgebraicSimplifier simplifier;
  auto changed = RunAndCheckSemantics(simplifier, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  DeadCodeElimination dce;
  ASSERT_TRUE(dce.Run(*m).ok());
  const HloInstruction* root = m->entry()->root();
  EXPECT_EQ(root->operand(0)->operand(0)->opcode(), HloOpcode::kParameter);  // one reshape
  EXPECT_EQ(root->operand(1)->operand(0)->opcode(), HloOpcode::kParameter);  // one transpose
  EXPECT_EQ(root->operand(2)->operand(0)->opcode(), HloOpcode::kParameter);  // one broadcast
  EXPECT_EQ(root->operand(3)->operand(0)->opcode(), HloOpcode::kParameter);  // one slice
  EXPECT_EQ(root->operand(4)->opcode(), HloOpcode::kReshape);  // f32->f64->f32 dropped
}

// A bitcast that reads as a row-major reshape (XLA's optimized modules write
// reshapes so) is a reshape, and folds with its neighbours; one that changes
// the element type or moves elements through its layouts is not.
TEST(AlgebraicSimplifier, RowMajorBitcastsAreReshapes) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[260,768]{1,0} parameter(0)
  split = f32[4,65,768]{2,1,0} bitcast(p)
  n = f32[4,65,768]{2,1,0} negate(split)
  merged = f32[260,768]{1,0} bitcast(split)
  as_int = s32[260,768]{1,0} bitcast(p)
  moved = f32[768,260]{0,1} bitcast(p)
  ROOT out = (f32[4,65,768], f32[260,768], s32[260,768], f32[768,260]{0,1}) tuple(n, merged, as_int, moved)
})");
  ASSERT_NE(m, nullptr);
  auto changed = RunToFixedPointWithDce<AlgebraicSimplifier>(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  const HloInstruction* root = m->entry()->root();
  EXPECT_EQ(root->operand(0)->operand(0)->opcode(), HloOpcode::kReshape) << PrintModule(*m);
  EXPECT_EQ(root->operand(1)->opcode(), HloOpcode::kParameter);  // There and back.
  EXPECT_EQ(root->operand(2)->opcode(), HloOpcode::kBitcast);
  EXPECT_EQ(root->operand(3)->opcode(), HloOpcode::kBitcast);
}

// Transposes that swap a matrix's two dimensions fold into the dot reading
// them (a.T @ b, q @ k^T per batch), also after a reshape that merges runs of
// the transposed dimensions moves them past it (XLA's weight gradients:
// transpose, layout copy, reshape, dot). A transpose that moves a batch
// dimension stays.
TEST(AlgebraicSimplifier, MatrixTransposesFoldIntoDots) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  g = f32[4,6,5] parameter(0)
  t = f32[5,4,6]{0,2,1} transpose(g), dimensions={2,0,1}
  c = f32[5,4,6] copy(t)
  r = f32[5,24] reshape(c)
  h = f32[24,3] parameter(1)
  dw = f32[5,3] dot(r, h), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  a = f32[8,5] parameter(2)
  at = f32[5,8] transpose(a), dimensions={1,0}
  b = f32[8,3] parameter(3)
  d1 = f32[5,3] dot(at, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  q = f32[2,6,4] parameter(4)
  k = f32[2,6,4] parameter(5)
  kt = f32[2,4,6] transpose(k), dimensions={0,2,1}
  s = f32[2,6,6] dot(q, kt), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  n = f32[6,2,4] parameter(6)
  nt = f32[2,6,4] transpose(n), dimensions={1,0,2}
  s2 = f32[2,6,6] dot(nt, q), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  shared = f32[5,4,6] transpose(g), dimensions={2,0,1}
  flat = f32[5,24] reshape(shared)
  ROOT out = (f32[5,3], f32[5,3], f32[2,6,6], f32[2,6,6], f32[5,24], f32[5,4,6]) tuple(dw, d1, s, s2, flat, shared)
})");
  ASSERT_NE(m, nullptr);
  auto changed = RunToFixedPointWithDce<AlgebraicSimplifier>(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  // nt, and `shared`, which the root also reads: moving it past `flat`
  // would compute the transpose twice.
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kTranspose), 2) << PrintModule(*m);
  EXPECT_EQ(m->entry()->root()->operand(4)->operand(0)->opcode(), HloOpcode::kTranspose);
  const HloInstruction* root = m->entry()->root();
  const HloInstruction* dw = root->operand(0);
  ASSERT_EQ(dw->opcode(), HloOpcode::kDot);
  EXPECT_EQ(dw->operand(0)->opcode(), HloOpcode::kReshape) << PrintModule(*m);
  EXPECT_EQ(dw->operand(0)->shape().dimensions(), (std::vector<int64_t>{24, 5}));
  EXPECT_EQ(dw->attrs().dot_dimension_numbers->lhs_contracting_dimensions(0), 0);
  EXPECT_EQ(root->operand(1)->operand(0)->opcode(), HloOpcode::kParameter);
  EXPECT_EQ(root->operand(2)->operand(1)->opcode(), HloOpcode::kParameter);
  EXPECT_EQ(root->operand(2)->attrs().dot_dimension_numbers->rhs_contracting_dimensions(0), 2);
  EXPECT_EQ(root->operand(3)->operand(0)->opcode(), HloOpcode::kTranspose);
}

// transpose(dot(a, b)) swapping the result's free blocks is dot(b, a); a
// transpose that moves a batch dimension, or a dot read elsewhere, stays.
TEST(AlgebraicSimplifier, TransposedDotSwapsItsOperands) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[3,5,4] parameter(0)
  b = f32[3,4,2,6] parameter(1)
  d = f32[3,5,2,6] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  t = f32[3,2,6,5] transpose(d), dimensions={0,2,3,1}
  x = f32[8,4] parameter(2)
  y = f32[4,7] parameter(3)
  d2 = f32[8,7] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t2 = f32[7,8] transpose(d2), dimensions={1,0}
  d3 = f32[3,5,2,6] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  t3 = f32[5,3,2,6] transpose(d3), dimensions={1,0,2,3}
  d4 = f32[8,7] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t4 = f32[7,8] transpose(d4), dimensions={1,0}
  n4 = f32[8,7] negate(d4)
  ROOT out = (f32[3,2,6,5], f32[7,8], f32[5,3,2,6], f32[7,8], f32[8,7]) tuple(t, t2, t3, t4, n4)
})");
  ASSERT_NE(m, nullptr);
  AlgebraicSimplifier simplifier;
  auto changed = RunAndCheckSemantics(simplifier, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  DeadCodeElimination dce;
  ASSERT_TRUE(dce.Run(*m).ok());
  const HloInstruction* root = m->entry()->root();
  for (int k : {0, 1}) {
    const HloInstruction* dot = root->operand(k);
    ASSERT_EQ(dot->opcode(), HloOpcode::kDot) << dot->ToString();
    EXPECT_EQ(dot->operand(0)->parameter_number(), 2 * k + 1) << dot->ToString();
    EXPECT_EQ(dot->operand(1)->parameter_number(), 2 * k) << dot->ToString();
  }
  EXPECT_EQ(root->operand(2)->opcode(), HloOpcode::kTranspose);  // moves the batch dimension
  EXPECT_EQ(root->operand(3)->opcode(), HloOpcode::kTranspose);  // the dot is read elsewhere
}

// JAX lays a transpose out as the bitcast of its operand ({0,1} for a
// matrix). The swapped dot keeps that layout where a tuple reads it, and is
// written row-major where only elementwise ops do (a weight gradient added
// to its accumulator), so they read it contiguously.
TEST(AlgebraicSimplifier, SwappedDotReadByElementwiseOpsIsRowMajor) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  x = f32[16,64]{1,0} parameter(0)
  g = f32[16,128]{1,0} parameter(1)
  acc = f32[64,128]{1,0} parameter(2)
  d = f32[128,64]{1,0} dot(g, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  t = f32[64,128]{0,1} transpose(d), dimensions={1,0}
  s = f32[64,128]{1,0} add(acc, t)
  d2 = f32[128,64]{1,0} dot(g, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  t2 = f32[64,128]{0,1} transpose(d2), dimensions={1,0}
  ROOT out = (f32[64,128]{1,0}, f32[64,128]{0,1}) tuple(s, t2)
})");
  ASSERT_NE(m, nullptr);
  AlgebraicSimplifier simplifier;
  auto changed = RunAndCheckSemantics(simplifier, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const HloInstruction* root = m->entry()->root();
  const HloInstruction* summed = root->operand(0)->operand(1);
  ASSERT_EQ(summed->opcode(), HloOpcode::kDot) << summed->ToString();
  EXPECT_EQ(summed->shape().ToString(true), "f32[64,128]{1,0}");
  const HloInstruction* returned = root->operand(1);
  ASSERT_EQ(returned->opcode(), HloOpcode::kDot) << returned->ToString();
  EXPECT_EQ(returned->shape().ToString(true), "f32[64,128]{0,1}");
}

TEST(AlgebraicSimplifier, LossyConvertChainsStay) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = bf16[4] convert(p)
  ROOT back = f32[4] convert(n)
})");
  ASSERT_NE(m, nullptr);
  AlgebraicSimplifier simplifier;
  auto changed = simplifier.Run(*m);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

TEST(ConstantFolding, FoldsSmallExpressionsOnly) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  a = f32[3] constant({1, 2, 3})
  b = f32[3] constant({10, 20, 30})
  s = f32[3] add(a, b)
  e = f32[3] exponential(s)
  zero = f32[] constant(0)
  big = f32[1000,1000] broadcast(zero), dimensions={}
  ROOT out = (f32[3], f32[1000,1000]) tuple(e, big)
})");
  ASSERT_NE(m, nullptr);
  ConstantFolding folding;
  auto changed = RunAndCheckSemantics(folding, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(m->entry()->root()->operand(0)->opcode(), HloOpcode::kConstant);
  EXPECT_EQ(m->entry()->root()->operand(1)->opcode(), HloOpcode::kBroadcast);
}

TEST(Pipeline, FixedPointStopsAndDumpsAndDisables) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  zero = f32[] constant(0)
  zeros = f32[4] broadcast(zero), dimensions={}
  a = f32[4] add(p, zeros)
  b = f32[4] add(p, zeros)
  ROOT out = f32[4] multiply(a, b)
})");
  ASSERT_NE(m, nullptr);
  std::string dir = ::testing::TempDir() + "/dumps";
  PipelineOptions options;
  options.dump_to = dir;
  options.disabled_passes.insert("cse");
  HloPassPipeline pipeline("simplify", options);
  FixedPointPass& fix = pipeline.AddPass<FixedPointPass>("simplify-fix", 5);
  fix.AddPass<AlgebraicSimplifier>();
  fix.AddPass<DeadCodeElimination>();
  pipeline.AddPass<CommonSubexpressionElimination>();
  auto changed = pipeline.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_LE(fix.iterations_run(), 3);
  EXPECT_EQ(m->entry()->root()->operand(0)->opcode(), HloOpcode::kParameter);
  ASSERT_EQ(pipeline.timings().size(), 1u);  // cse disabled
  EXPECT_NE(pipeline.TimingReport().find("simplify-fix"), std::string::npos);
  FILE* f = std::fopen((dir + "/001-simplify-simplify-fix.hlo").c_str(), "r");
  EXPECT_NE(f, nullptr);
  if (f) std::fclose(f);
}

}  // namespace
}  // namespace hloc
