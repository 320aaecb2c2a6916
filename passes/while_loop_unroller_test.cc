// WhileLoopUnroller: which loops it counts and copies, which it leaves, and
// that the copies compute what the loop did (against the interpreter).
#include "passes/while_loop_unroller.h"

#include "gtest/gtest.h"
#include "hlo/module.h"
#include "passes/standard_pipelines.h"
#include "passes/test_util.h"

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

// A loop of (counter, x) whose condition is COND and whose body's next
// counter is NEXT, starting at START.
std::string CountedLoop(const std::string& start, const std::string& cond,
                        const std::string& next) {
  return R"(
HloModule m
cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(5)
  ROOT lt = pred[] )" + cond + R"(
}
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  two = s32[] constant(2)
  n = s32[] )" + next + R"(
  fi = f32[] convert(i)
  b = f32[8] broadcast(fi), dimensions={}
  y = f32[8] multiply(x, x)
  z = f32[8] add(y, b)
  ROOT t = (s32[], f32[8]) tuple(n, z)
}
ENTRY e {
  x0 = f32[8] parameter(0)
  s = s32[] constant()" + start + R"()
  init = (s32[], f32[8]) tuple(s, x0)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
})";
}

TEST(WhileLoopUnroller, CountsTripsOfEachLoopShape) {
  struct Case {
    const char* start;
    const char* cond;
    const char* next;
    std::optional<int64_t> trips;
  };
  const Case cases[] = {
      {"0", "compare(i, c), direction=LT", "add(i, one)", 5},
      {"2", "compare(i, c), direction=LT", "add(one, i)", 3},
      {"0", "compare(i, c), direction=LE", "add(i, one)", 6},
      {"0", "compare(c, i), direction=GT", "add(i, one)", 5},
      {"9", "compare(i, c), direction=GT", "subtract(i, one)", 4},
      {"9", "compare(i, c), direction=GE", "subtract(i, one)", 5},
      {"7", "compare(i, c), direction=LT", "add(i, one)", 0},
      // Not counted: steps of two, counting away from the bound, equality.
      {"0", "compare(i, c), direction=LT", "add(i, two)", std::nullopt},
      {"0", "compare(i, c), direction=GT", "add(i, one)", std::nullopt},
      {"0", "compare(i, c), direction=NE", "add(i, one)", std::nullopt},
      {"9", "compare(i, c), direction=LT", "subtract(i, one)", std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.start) + " / " + c.cond + " / " + c.next);
    auto m = Parse(CountedLoop(c.start, c.cond, c.next));
    ASSERT_NE(m, nullptr);
    const HloInstruction* loop = nullptr;
    m->entry()->ForEachInstruction([&](const HloInstruction* i) {
      if (i->opcode() == HloOpcode::kWhile) loop = i;
    });
    ASSERT_NE(loop, nullptr);
    EXPECT_EQ(WhileLoopUnroller::KnownTripCount(*loop), c.trips);

    WhileLoopUnroller unroller;
    auto changed = RunAndCheckSemantics(unroller, *m);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_EQ(*changed, c.trips.has_value());
    EXPECT_EQ(CountOpcode(*m, HloOpcode::kWhile), c.trips ? 0 : 1);
    if (c.trips) {
      EXPECT_EQ(CountOpcode(*m, HloOpcode::kMultiply), *c.trips);
    }
  }
}

TEST(WhileLoopUnroller, LeavesLongLoopsBigBodiesAndSideEffects) {
  auto m = Parse(CountedLoop("0", "compare(i, c), direction=LT", "add(i, one)"));
  ASSERT_NE(m, nullptr);
  // Five trips of an 11-instruction body: over either limit, nothing moves.
  WhileLoopUnrollerOptions few_trips;
  few_trips.max_trip_count = 4;
  EXPECT_FALSE(*WhileLoopUnroller(few_trips).Run(*m));
  WhileLoopUnrollerOptions small_bodies;
  small_bodies.max_instructions = 40;
  EXPECT_FALSE(*WhileLoopUnroller(small_bodies).Run(*m));
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kWhile), 1);

  auto effects = Parse(R"(
HloModule m
cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(3)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  t0 = token[] after-all()
  o = token[] outfeed(x, t0), outfeed_config=""
  ROOT t = (s32[], f32[8]) tuple(n, x)
}
ENTRY e {
  x0 = f32[8] parameter(0)
  s = s32[] constant(0)
  init = (s32[], f32[8]) tuple(s, x0)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
})");
  ASSERT_NE(effects, nullptr);
  WhileLoopUnroller unroller;
  EXPECT_FALSE(*unroller.Run(*effects));
}

// An outer loop of 3 trips around an inner loop of INNER trips: an inner
// loop short enough unrolls first and then the outer one does; a long inner
// loop keeps both (copies of the outer body would share its computations).
std::string NestedLoops(const std::string& inner_trips) {
  return R"(
HloModule m
inner_cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant()" + inner_trips + R"()
  ROOT lt = pred[] compare(i, c), direction=LT
}
inner_body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  half = f32[] constant(0.5)
  h = f32[8] broadcast(half), dimensions={}
  y = f32[8] multiply(x, h)
  ROOT t = (s32[], f32[8]) tuple(n, y)
}
outer_cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(3)
  ROOT lt = pred[] compare(i, c), direction=LT
}
outer_body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, x)
  w = (s32[], f32[8]) while(init), condition=inner_cond, body=inner_body
  y = f32[8] get-tuple-element(w), index=1
  z = f32[8] add(y, x)
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT t = (s32[], f32[8]) tuple(n, z)
}
ENTRY e {
  x0 = f32[8] parameter(0)
  s = s32[] constant(0)
  init = (s32[], f32[8]) tuple(s, x0)
  w = (s32[], f32[8]) while(init), condition=outer_cond, body=outer_body
  ROOT r = f32[8] get-tuple-element(w), index=1
})";
}

TEST(WhileLoopUnroller, NestedLoopsUnrollInnerFirstAndOnlyWhenBothFit) {
  auto both = Parse(NestedLoops("2"));
  ASSERT_NE(both, nullptr);
  WhileLoopUnroller unroller;
  auto changed = RunAndCheckSemantics(unroller, *both);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOpcode(*both, HloOpcode::kWhile), 0);
  EXPECT_EQ(CountOpcode(*both, HloOpcode::kMultiply), 3 * 2);

  auto long_inner = Parse(NestedLoops("100"));
  ASSERT_NE(long_inner, nullptr);
  changed = RunAndCheckSemantics(unroller, *long_inner);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountOpcode(*long_inner, HloOpcode::kWhile), 1);
}

// The shape of JAX's threefry2x32: a loop of five trips whose state holds the
// counter, two u32 arrays, key words and two rotation tables that swap every
// trip, with the round in a called computation. Through the simplification
// pipeline it becomes loop-free and computes the same bits.
TEST(WhileLoopUnroller, ThreefryShapedLoopBecomesStraightLine) {
  auto m = Parse(R"(
HloModule m
round {
  a = u32[64] parameter(0)
  b = u32[64] parameter(1)
  r = u32[4] parameter(2)
  s = u32[1] slice(r), slice={[1:2]}
  k = u32[] reshape(s)
  kb = u32[64] broadcast(k), dimensions={}
  w = u32[] constant(32)
  wk = u32[] subtract(w, k)
  wkb = u32[64] broadcast(wk), dimensions={}
  ab = u32[64] add(a, b)
  l = u32[64] shift-left(b, kb)
  h = u32[64] shift-right-logical(b, wkb)
  rot = u32[64] or(l, h)
  x = u32[64] xor(ab, rot)
  ROOT t = (u32[64], u32[64]) tuple(ab, x)
}
cond {
  p = (s32[], u32[64], u32[64], u32[4], u32[4], u32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(5)
  ROOT lt = pred[] compare(i, c), direction=LT
}
body {
  p = (s32[], u32[64], u32[64], u32[4], u32[4], u32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = u32[64] get-tuple-element(p), index=1
  b = u32[64] get-tuple-element(p), index=2
  r0 = u32[4] get-tuple-element(p), index=3
  r1 = u32[4] get-tuple-element(p), index=4
  key = u32[] get-tuple-element(p), index=5
  c = (u32[64], u32[64]) call(a, b, r0), to_apply=round
  a1 = u32[64] get-tuple-element(c), index=0
  b1 = u32[64] get-tuple-element(c), index=1
  kb = u32[64] broadcast(key), dimensions={}
  b2 = u32[64] add(b1, kb)
  ui = u32[] convert(i)
  key2 = u32[] add(key, ui)
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT t = (s32[], u32[64], u32[64], u32[4], u32[4], u32[]) tuple(n, a1, b2, r1, r0, key2)
}
ENTRY e {
  x = u32[64] parameter(0)
  y = u32[64] parameter(1)
  key = u32[] parameter(2)
  zero = s32[] constant(0)
  ra = u32[4] constant({13, 15, 26, 6})
  rb = u32[4] constant({17, 29, 16, 24})
  init = (s32[], u32[64], u32[64], u32[4], u32[4], u32[]) tuple(zero, x, y, ra, rb, key)
  w = (s32[], u32[64], u32[64], u32[4], u32[4], u32[]) while(init), condition=cond, body=body
  o0 = u32[64] get-tuple-element(w), index=1
  o1 = u32[64] get-tuple-element(w), index=2
  ROOT o = u32[64] xor(o0, o1)
})");
  ASSERT_NE(m, nullptr);
  auto pipeline = MakeStandardPipeline("simplify", PipelineOptions(), nullptr);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  auto changed = RunAndCheckSemantics(**pipeline, *m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kWhile), 0);
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kCall), 0);
  EXPECT_EQ(m->computation_count(), 1);
  // The rotation amounts are constants in each copy now.
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kSlice), 0);
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kGetTupleElement), 0);
}

}  // namespace
}  // namespace hloc
