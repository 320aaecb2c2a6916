// Bounded dynamic shapes in the interpreter (runtime_shapes.h): values carry
// their runtime sizes, ops see only the valid region, results come back at
// their runtime size, and what the interpreter cannot size is an error.
#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator_test_util.h"

namespace hloc {
namespace {

using testing_util::Eval;
using testing_util::L;
using testing_util::Str;

constexpr char kReduceExp[] = R"(
HloModule dyn

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(p, n), dimensions={0}
  e = f32[<=8] negate(d)
  z = f32[] constant(0)
  r = f32[] reduce(e, z), dimensions={0}, to_apply=add
  g = s32[] get-dimension-size(d), dimensions={0}
  ROOT t = (f32[], s32[], f32[<=8]) tuple(r, g, e)
}
)";

Literal Eight() { return L("f32[8]", "{1, 2, 3, 4, 5, 6, 7, 8}"); }

TEST(EvaluatorDynamicTest, ReduceSeesOnlyTheRuntimeSize) {
  EXPECT_EQ(Str(Eval(kReduceExp, {Eight(), L("s32[]", "3")})),
            "(f32[] -6, s32[] 3, f32[3] {-1, -2, -3})");
}

TEST(EvaluatorDynamicTest, SizeZeroAndSizeAtTheBound) {
  EXPECT_EQ(Str(Eval(kReduceExp, {Eight(), L("s32[]", "0")})), "(f32[] 0, s32[] 0, f32[0] {})");
  EXPECT_EQ(Str(Eval(kReduceExp, {Eight(), L("s32[]", "8")})),
            "(f32[] -36, s32[] 8, f32[8] {-1, -2, -3, -4, -5, -6, -7, -8})");
}

TEST(EvaluatorDynamicTest, SizeOutsideTheBoundIsAnError) {
  for (const char* n : {"9", "-1"}) {
    absl::StatusOr<Literal> r = Eval(kReduceExp, {Eight(), L("s32[]", n)});
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_NE(r.status().message().find("instruction %d (set-dimension-size): size"),
              std::string::npos)
        << r.status();
    EXPECT_NE(r.status().message().find("outside the bound [0, 8]"), std::string::npos);
  }
}

TEST(EvaluatorDynamicTest, BitcastConvertBetweenWidthsKeepsTheRuntimeSize) {
  // The width ratio's minor dimension is never runtime-sized; the leading
  // one follows the operand, widening and narrowing back.
  constexpr char kWidths[] = R"(
HloModule m
ENTRY e {
  p = u32[4,2] parameter(0)
  n = s32[] parameter(1)
  d = u32[<=4,2] set-dimension-size(p, n), dimensions={0}
  w = u64[<=4] bitcast-convert(d)
  back = u32[<=4,2] bitcast-convert(w)
  ROOT t = (u64[<=4], u32[<=4,2]) tuple(w, back)
}
)";
  Literal p = L("u32[4,2]", "{{1, 2}, {3, 4}, {5, 6}, {7, 8}}");
  EXPECT_EQ(Str(Eval(kWidths, {p, L("s32[]", "2")})),
            "(u64[2] {8589934593, 17179869187}, u32[2,2] {{1, 2}, {3, 4}})");
  EXPECT_EQ(Str(Eval(kWidths, {p, L("s32[]", "0")})), "(u64[0] {}, u32[0,2] {})");
}

TEST(EvaluatorDynamicTest, DotContractsOnlyTheRuntimeSize) {
  constexpr char kDot[] = R"(
HloModule m
ENTRY e {
  a = f32[2,4] parameter(0)
  b = f32[4,3] parameter(1)
  n = s32[] parameter(2)
  da = f32[2,<=4] set-dimension-size(a, n), dimensions={1}
  db = f32[<=4,3] set-dimension-size(b, n), dimensions={0}
  ROOT d = f32[2,3] dot(da, db), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  Literal a = L("f32[2,4]", "{{1, 2, 100, 100}, {3, 4, 100, 100}}");
  Literal b = L("f32[4,3]", "{{1, 0, 1}, {0, 1, 1}, {100, 100, 100}, {100, 100, 100}}");
  EXPECT_EQ(Str(Eval(kDot, {a, b, L("s32[]", "2")})), "f32[2,3] {{1, 2, 3}, {3, 4, 7}}");
  // Operands whose contracting sizes disagree.
  constexpr char kMismatch[] = R"(
HloModule m
ENTRY e {
  a = f32[2,4] parameter(0)
  b = f32[4,3] parameter(1)
  n = s32[] parameter(2)
  da = f32[2,<=4] set-dimension-size(a, n), dimensions={1}
  ROOT d = f32[2,3] dot(da, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  absl::StatusOr<Literal> r = Eval(kMismatch, {a, b, L("s32[]", "2")});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("contracting dimension 0 has runtime sizes 2 and 4"),
            std::string::npos)
      << r.status();
}

TEST(EvaluatorDynamicTest, DataMovementFollowsTheRuntimeSize) {
  constexpr char kMoves[] = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=4] set-dimension-size(p, n), dimensions={0}
  b = f32[2,<=4] broadcast(d), dimensions={1}
  t = f32[<=4,2] transpose(b), dimensions={1,0}
  r = f32[<=8] reshape(t)
  s = f32[<=7] slice(r), slice={[1:8]}
  c = f32[<=8] concatenate(p, d), dimensions={0}
  z = f32[] constant(0)
  q = f32[<=6] pad(d, z), padding=2_0
  w = f32[<=4] add(d, p)
  ROOT out = (f32[<=8], f32[<=7], f32[<=8], f32[<=6], f32[<=4]) tuple(r, s, c, q, w)
}
)";
  EXPECT_EQ(Str(Eval(kMoves, {L("f32[4]", "{1, 2, 3, 4}"), L("s32[]", "2")})),
            "(f32[4] {1, 1, 2, 2}, f32[3] {1, 2, 2}, f32[6] {1, 2, 3, 4, 1, 2}, "
            "f32[4] {0, 0, 1, 2}, f32[2] {2, 4})");
}

TEST(EvaluatorDynamicTest, DynamicParameterTakesAnySizeUpToItsBound) {
  constexpr char kParam[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[<=4] parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(p, z), dimensions={0}, to_apply=add
  g = s32[] get-dimension-size(p), dimensions={0}
  ROOT t = (f32[], s32[]) tuple(r, g)
}
)";
  EXPECT_EQ(Str(Eval(kParam, {L("f32[2]", "{5, 6}")})), "(f32[] 11, s32[] 2)");
  EXPECT_EQ(Str(Eval(kParam, {L("f32[4]", "{1, 2, 3, 4}")})), "(f32[] 10, s32[] 4)");
  absl::StatusOr<Literal> r = Eval(kParam, {L("f32[5]", "{1, 2, 3, 4, 5}")});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("argument 0 has shape f32[5]"), std::string::npos)
      << r.status();
  EXPECT_NE(r.status().message().find(": dimension 0 has size 5, above its bound 4"),
            std::string::npos)
      << r.status();
}

// A tuple parameter's dynamic leaves take any size up to their bounds too;
// past one, the error says which element and dimension.
TEST(EvaluatorDynamicTest, TupleParameterLeavesTakeAnySizeUpToTheirBounds) {
  constexpr char kTuple[] = R"(
HloModule m
ENTRY e {
  p = (f32[<=4], s32[]) parameter(0)
  x = f32[<=4] get-tuple-element(p), index=0
  g = s32[] get-dimension-size(x), dimensions={0}
  ROOT t = (f32[<=4], s32[]) tuple(x, g)
}
)";
  EXPECT_EQ(Str(Eval(kTuple, {Literal::Tuple({L("f32[2]", "{5, 6}"), L("s32[]", "1")})})),
            "(f32[2] {5, 6}, s32[] 2)");
  absl::StatusOr<Literal> r =
      Eval(kTuple, {Literal::Tuple({L("f32[5]", "{1, 2, 3, 4, 5}"), L("s32[]", "1")})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "parameter %p has shape (f32[<=4], s32[]): tuple element 0 dimension 0 has size "
                "5, above its bound 4"),
            std::string::npos)
      << r.status();
}

// Windows slide over the runtime size: a cumulative sum of the first n
// elements, and a convolution's result sized by its window.
TEST(EvaluatorDynamicTest, WindowsSlideOverTheRuntimeSize) {
  constexpr char kWindows[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=4] set-dimension-size(p, n), dimensions={0}
  z = f32[] constant(0)
  w = f32[<=4] reduce-window(d, z), window={size=4 pad=3_0}, to_apply=add
  x = f32[1,<=4,1] reshape(d)
  k = f32[2,1,1] constant({{{1}}, {{10}}})
  c = f32[1,<=3,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f
  ROOT t = (f32[<=4], f32[1,<=3,1]) tuple(w, c)
}
)";
  absl::StatusOr<Literal> r = Eval(kWindows, {L("f32[4]", "{1, 2, 3, 4}"), L("s32[]", "3")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ToString(), "(f32[3] {1, 3, 6}, f32[1,2,1] {{{21}, {32}}})");
}

TEST(EvaluatorDynamicTest, UnsizedOpIsALocatedError) {
  constexpr char kSelectAndScatter[] = R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=4] set-dimension-size(p, n), dimensions={0}
  src = f32[2] constant({1, 2})
  z = f32[] constant(0)
  ROOT w = f32[<=4] select-and-scatter(d, src, z), window={size=2 stride=2}, select=ge, scatter=add
}
)";
  absl::StatusOr<Literal> r =
      Eval(kSelectAndScatter, {L("f32[4]", "{1, 2, 3, 4}"), L("s32[]", "2")});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("instruction %w (select-and-scatter)"), std::string::npos)
      << r.status();
}

TEST(EvaluatorDynamicTest, StaticSliceMayNotReadPastTheRuntimeSize) {
  constexpr char kSlice[] = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=4] set-dimension-size(p, n), dimensions={0}
  ROOT s = f32[3] slice(d), slice={[0:3]}
}
)";
  EXPECT_EQ(Str(Eval(kSlice, {L("f32[4]", "{1, 2, 3, 4}"), L("s32[]", "3")})),
            "f32[3] {1, 2, 3}");
  absl::StatusOr<Literal> r = Eval(kSlice, {L("f32[4]", "{1, 2, 3, 4}"), L("s32[]", "2")});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("reads past its runtime size 2"), std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace hloc
