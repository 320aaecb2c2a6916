// The interpreter's scan on hand-computed examples: forward and reverse,
// several inputs and carries of different ranks and types, the scanned
// dimension in the middle, no carry, a carry only, and length 0.
#include "gmock/gmock.h"
#include "hlo/evaluator/evaluator_test_util.h"

namespace hloc {
namespace {

using testing_util::Eval;
using testing_util::L;
using testing_util::Str;

constexpr char kAddStep[] = R"(
add_step {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  s = f32[] add(acc, x)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
)";

std::string CumsumModule(absl::string_view direction) {
  return absl::StrCat("HloModule m\n", kAddStep, R"(
ENTRY e {
  x = f32[4] parameter(0)
  init = f32[] parameter(1)
  ROOT scan = (f32[4], f32[]) scan(x, init), dimensions={0}, num_carries=1, )",
                      direction, R"(to_apply=add_step
})");
}

TEST(EvaluatorScanTest, ForwardRunningSumStartsFromTheInit) {
  std::vector<Literal> args;
  args.push_back(L("f32[4]", "{1, 2, 3, 4}"));
  args.push_back(L("f32[]", "10"));
  // 10+1, 11+2, 13+3, 16+4.
  EXPECT_EQ(Str(Eval(CumsumModule(""), std::move(args))), "(f32[4] {11, 13, 16, 20}, f32[] 20)");
}

TEST(EvaluatorScanTest, ReverseRunsFromTheLastIndexAndWritesInPlace) {
  std::vector<Literal> args;
  args.push_back(L("f32[4]", "{1, 2, 3, 4}"));
  args.push_back(L("f32[]", "0"));
  // Index 3 first: 4, then 4+3, 7+2, 9+1; outputs stay at their own index.
  EXPECT_EQ(Str(Eval(CumsumModule("is_reverse=true, "), std::move(args))),
            "(f32[4] {10, 9, 7, 4}, f32[] 10)");
}

TEST(EvaluatorScanTest, TwoInputsTwoCarriesAlongTheLastDimension) {
  const std::string text = R"(HloModule m
step {
  col = s32[2] parameter(0)
  y = f32[1] parameter(1)
  sum = s32[2] parameter(2)
  prod = f32[1] parameter(3)
  s = s32[2] add(sum, col)
  p = f32[1] multiply(prod, y)
  one = f32[] constant(1)
  ones = f32[1] broadcast(one), dimensions={}
  big = pred[1] compare(y, ones), direction=GT
  ROOT t = (s32[2], pred[1], s32[2], f32[1]) tuple(s, big, s, p)
}
ENTRY e {
  x = s32[2,3] parameter(0)
  y = f32[1,3] parameter(1)
  sum = s32[2] parameter(2)
  prod = f32[1] parameter(3)
  ROOT scan = (s32[2,3], pred[1,3], s32[2], f32[1]) scan(x, y, sum, prod), dimensions={1}, num_carries=2, to_apply=step
})";
  std::vector<Literal> args;
  args.push_back(L("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}"));
  args.push_back(L("f32[1,3]", "{{0.5, 1.5, 2.5}}"));
  args.push_back(L("s32[2]", "{0, 0}"));
  args.push_back(L("f32[1]", "{2}"));
  // Columns {1,4}, {2,5}, {3,6} summed; 2 * 0.5 * 1.5 * 2.5 = 3.75.
  EXPECT_EQ(Str(Eval(text, std::move(args))),
            "(s32[2,3] {{1, 3, 6}, {4, 9, 15}}, pred[1,3] {{false, true, true}}, s32[2] {6, 15}, "
            "f32[1] {3.75})");
}

// The step takes one slice (f32[2] here), not an element: the verifier,
// which Evaluate runs first, says so.
TEST(EvaluatorScanTest, AStepThatDoesNotTakeTheSliceIsRefused) {
  const std::string text = absl::StrCat("HloModule m\n", kAddStep, R"(
ENTRY e {
  x = f32[2,4] parameter(0)
  init = f32[] parameter(1)
  ROOT scan = (f32[2,4], f32[]) scan(x, init), dimensions={1}, num_carries=1, to_apply=add_step
})");
  std::vector<Literal> args;
  args.push_back(L("f32[2,4]", "{{1, 2, 3, 4}, {5, 6, 7, 8}}"));
  args.push_back(L("f32[]", "0"));
  EXPECT_THAT(Str(Eval(text, std::move(args))),
              ::testing::HasSubstr("to_apply parameter 0 is f32[], expected f32[2]"));
}

TEST(EvaluatorScanTest, MiddleDimensionOfARank3Input) {
  const std::string text = R"(HloModule m
step {
  x = s32[2,1] parameter(0)
  acc = s32[2,1] parameter(1)
  s = s32[2,1] add(acc, x)
  ROOT t = (s32[2,1], s32[2,1]) tuple(s, s)
}
ENTRY e {
  x = s32[2,3,1] parameter(0)
  zero = s32[] constant(0)
  init = s32[2,1] broadcast(zero), dimensions={}
  ROOT scan = (s32[2,3,1], s32[2,1]) scan(x, init), dimensions={1}, num_carries=1, is_reverse=true, to_apply=step
})";
  std::vector<Literal> args;
  args.push_back(L("s32[2,3,1]", "{{{1}, {2}, {3}}, {{10}, {20}, {30}}}"));
  EXPECT_EQ(Str(Eval(text, std::move(args))),
            "(s32[2,3,1] {{{6}, {5}, {3}}, {{60}, {50}, {30}}}, s32[2,1] {{6}, {60}})");
}

TEST(EvaluatorScanTest, NoCarryGivesTheBareStackedOutput) {
  const std::string text = R"(HloModule m
row {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
ENTRY e {
  x = f32[3,2] parameter(0)
  ROOT scan = f32[3,2] scan(x), dimensions={0}, num_carries=0, to_apply=row
})";
  std::vector<Literal> args;
  args.push_back(L("f32[3,2]", "{{1, 2}, {3, 4}, {5, 6}}"));
  EXPECT_EQ(Str(Eval(text, std::move(args))), "f32[3,2] {{-1, -2}, {-3, -4}, {-5, -6}}");
}

TEST(EvaluatorScanTest, CarryOnlyGivesTheBareFinalCarryInOrder) {
  // Subtraction does not commute: ((100 - 1) - 2) - 3 forward.
  const std::string text = R"(HloModule m
sub {
  x = s32[] parameter(0)
  acc = s32[] parameter(1)
  ROOT d = s32[] subtract(acc, x)
}
ENTRY e {
  x = s32[3] parameter(0)
  init = s32[] constant(100)
  ROOT scan = s32[] scan(x, init), dimensions={0}, num_carries=1, to_apply=sub
})";
  std::vector<Literal> args;
  args.push_back(L("s32[3]", "{1, 2, 3}"));
  EXPECT_EQ(Str(Eval(text, std::move(args))), "s32[] 94");
}

TEST(EvaluatorScanTest, LengthZeroReturnsTheInit) {
  std::vector<Literal> args;
  args.push_back(L("f32[0]", "{}"));
  args.push_back(L("f32[]", "7"));
  const std::string text = absl::StrCat("HloModule m\n", kAddStep, R"(
ENTRY e {
  x = f32[0] parameter(0)
  init = f32[] parameter(1)
  ROOT scan = (f32[0], f32[]) scan(x, init), dimensions={0}, num_carries=1, to_apply=add_step
})");
  EXPECT_EQ(Str(Eval(text, std::move(args))), "(f32[0] {}, f32[] 7)");
}

}  // namespace
}  // namespace hloc
