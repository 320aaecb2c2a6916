// Tests of the shape rules: the Infer*Shape helpers on plain shapes and
// attributes, and InferShape on every instruction of testdata/every_opcode.hlo
// (which uses every opcode). Invalid whole modules are in verifier_test.cc.
#include "hlo/shape_inference.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

using ::testing::HasSubstr;

Layout MinorToMajor(std::vector<int64_t> minor_to_major) {
  Layout layout;
  layout.minor_to_major = std::move(minor_to_major);
  return layout;
}

Shape F32(std::vector<int64_t> dims) { return Shape(xla::F32, std::move(dims)); }
Shape S32(std::vector<int64_t> dims) { return Shape(xla::S32, std::move(dims)); }
Shape Pred(std::vector<int64_t> dims) { return Shape(xla::PRED, std::move(dims)); }

// The inferred shape as text, or "error: <message>".
std::string Text(const absl::StatusOr<Shape>& result) {
  if (!result.ok()) return std::string("error: ") + std::string(result.status().message());
  return result->ToString();
}

ProgramShape Program(std::vector<Shape> parameters, Shape result) {
  ProgramShape program;
  program.parameters = std::move(parameters);
  program.result = std::move(result);
  return program;
}

ProgramShape ScalarAdder(PrimitiveType t) {
  return Program({Shape::Scalar(t), Shape::Scalar(t)}, Shape::Scalar(t));
}

xla::Window MakeWindow(std::vector<int64_t> sizes, std::vector<int64_t> strides = {},
                       std::vector<std::pair<int64_t, int64_t>> padding = {}) {
  xla::Window window;
  for (size_t i = 0; i < sizes.size(); ++i) {
    xla::WindowDimension* d = window.add_dimensions();
    d->set_size(sizes[i]);
    d->set_stride(strides.empty() ? 1 : strides[i]);
    if (!padding.empty()) {
      d->set_padding_low(padding[i].first);
      d->set_padding_high(padding[i].second);
    }
    d->set_base_dilation(1);
    d->set_window_dilation(1);
  }
  return window;
}

// ---- elementwise

TEST(ShapeInferenceTest, UnaryOps) {
  EXPECT_EQ(Text(InferUnaryShape(HloOpcode::kExp, F32({2, 3}))), "f32[2,3]");
  EXPECT_EQ(Text(InferUnaryShape(HloOpcode::kIsFinite, F32({2}))), "pred[2]");
  EXPECT_EQ(Text(InferUnaryShape(HloOpcode::kAbs, Shape(xla::C64, {4}))), "f32[4]");
  EXPECT_EQ(Text(InferUnaryShape(HloOpcode::kReal, Shape(xla::C128, {}))), "f64[]");
  EXPECT_EQ(Text(InferUnaryShape(HloOpcode::kImag, Shape(xla::C64, {2}))), "f32[2]");
  EXPECT_EQ(Text(InferUnaryShape(HloOpcode::kNot, Pred({3}))), "pred[3]");
  EXPECT_EQ(Text(InferUnaryShape(HloOpcode::kPopulationCount, S32({3}))), "s32[3]");
  EXPECT_EQ(Text(InferUnaryShape(HloOpcode::kCopy, Shape::Tuple({F32({1}), S32({})}))),
            "(f32[1], s32[])");
  EXPECT_THAT(Text(InferUnaryShape(HloOpcode::kExp, S32({2}))),
              HasSubstr("exponential needs floating-point or complex operands, got s32[2]"));
  EXPECT_THAT(Text(InferUnaryShape(HloOpcode::kClz, F32({2}))),
              HasSubstr("count-leading-zeros needs integer operands"));
  EXPECT_THAT(Text(InferUnaryShape(HloOpcode::kAbs, Shape(xla::U8, {2}))),
              HasSubstr("abs needs signed integer"));
  EXPECT_THAT(Text(InferUnaryShape(HloOpcode::kNegate, Shape::Token())),
              HasSubstr("operand must be an array, got token[]"));
}

TEST(ShapeInferenceTest, BinaryOps) {
  EXPECT_EQ(Text(InferBinaryShape(HloOpcode::kAdd, F32({2, 3}), F32({2, 3}))), "f32[2,3]");
  EXPECT_EQ(Text(InferBinaryShape(HloOpcode::kCompare, S32({4}), S32({4}))), "pred[4]");
  EXPECT_EQ(Text(InferBinaryShape(HloOpcode::kComplex, F32({4}), F32({4}))), "c64[4]");
  EXPECT_EQ(Text(InferBinaryShape(HloOpcode::kAnd, Pred({}), Pred({}))), "pred[]");
  EXPECT_EQ(Text(InferBinaryShape(HloOpcode::kShiftLeft, S32({2}), S32({2}))), "s32[2]");
  EXPECT_THAT(Text(InferBinaryShape(HloOpcode::kAdd, F32({2}), F32({3}))),
              HasSubstr("lhs f32[2] and rhs f32[3] have different dimensions"));
  // Scalars are not broadcast implicitly.
  EXPECT_THAT(Text(InferBinaryShape(HloOpcode::kMultiply, F32({}), F32({3}))),
              HasSubstr("different dimensions"));
  EXPECT_THAT(Text(InferBinaryShape(HloOpcode::kAdd, F32({2}), S32({2}))),
              HasSubstr("lhs element type f32 differs from rhs element type s32"));
  EXPECT_EQ(Text(InferBinaryShape(HloOpcode::kAdd, Pred({2}), Pred({2}))), "pred[2]");
  EXPECT_EQ(Text(InferBinaryShape(HloOpcode::kRemainder, Pred({2}), Pred({2}))), "pred[2]");
  EXPECT_EQ(Text(InferBinaryShape(HloOpcode::kDivide, Shape(xla::C64, {2}), Shape(xla::C64, {2}))),
            "c64[2]");
  // No order and no remainder on complex numbers.
  for (HloOpcode op : {HloOpcode::kMaximum, HloOpcode::kMinimum, HloOpcode::kRemainder}) {
    EXPECT_THAT(Text(InferBinaryShape(op, Shape(xla::C128, {2}), Shape(xla::C128, {2}))),
                HasSubstr("needs pred, integer or floating-point operands, got c128[2]"));
  }
  EXPECT_THAT(Text(InferUnaryShape(HloOpcode::kCbrt, Shape(xla::C64, {2}))),
              HasSubstr("cbrt needs floating-point operands, got c64[2]"));
  EXPECT_THAT(Text(InferBinaryShape(HloOpcode::kAtan2, S32({2}), S32({2}))),
              HasSubstr("atan2 needs floating-point or complex operands"));
  EXPECT_THAT(Text(InferBinaryShape(HloOpcode::kShiftLeft, F32({2}), F32({2}))),
              HasSubstr("shift-left needs integer operands"));
  EXPECT_THAT(Text(InferBinaryShape(HloOpcode::kComplex, S32({2}), S32({2}))),
              HasSubstr("complex needs f32 or f64 operands"));
  EXPECT_THAT(Text(InferBinaryShape(HloOpcode::kXor, F32({2}), F32({2}))),
              HasSubstr("xor needs pred or integer operands"));
}

TEST(ShapeInferenceTest, SelectAndClamp) {
  EXPECT_EQ(Text(InferTernaryShape(HloOpcode::kSelect, Pred({2}), F32({2}), F32({2}))), "f32[2]");
  EXPECT_EQ(Text(InferTernaryShape(HloOpcode::kClamp, F32({}), F32({3}), F32({}))), "f32[3]");
  EXPECT_EQ(Text(InferTernaryShape(HloOpcode::kClamp, F32({3}), F32({3}), F32({3}))), "f32[3]");
  EXPECT_THAT(Text(InferTernaryShape(HloOpcode::kSelect, Pred({}), F32({2}), F32({2}))),
              HasSubstr("predicate pred[] must have the dimensions of on_true f32[2]"));
  EXPECT_THAT(Text(InferTernaryShape(HloOpcode::kSelect, S32({2}), F32({2}), F32({2}))),
              HasSubstr("predicate must have element type pred"));
  EXPECT_THAT(Text(InferTernaryShape(HloOpcode::kSelect, Pred({2}), F32({2}), S32({2}))),
              HasSubstr("on_true f32[2] and on_false s32[2] must have the same shape"));
  EXPECT_THAT(Text(InferTernaryShape(HloOpcode::kClamp, F32({2}), F32({3}), F32({}))),
              HasSubstr("min f32[2] must be a scalar or have the dimensions of operand f32[3]"));
  EXPECT_THAT(Text(InferTernaryShape(HloOpcode::kClamp, S32({}), F32({3}), F32({}))),
              HasSubstr("min s32[] must have the element type of operand f32[3]"));
}

TEST(ShapeInferenceTest, Conversions) {
  EXPECT_EQ(Text(InferConvertShape(F32({2}), xla::BF16)), "bf16[2]");
  EXPECT_THAT(Text(InferConvertShape(Shape(xla::C64, {2}), xla::F32)),
              HasSubstr("conversion from complex c64[2] to real type f32"));
  EXPECT_EQ(Text(InferBitcastConvertShape(F32({2}), xla::S32)), "s32[2]");
  EXPECT_EQ(Text(InferBitcastConvertShape(F32({2}), xla::U8)), "u8[2,4]");
  EXPECT_EQ(Text(InferBitcastConvertShape(Shape(xla::U16, {3, 2}), xla::F32)), "f32[3]");
  EXPECT_EQ(Text(InferBitcastConvertShape(Shape(xla::S8, {5}), xla::S4)), "s4[5,2]");
  EXPECT_THAT(Text(InferBitcastConvertShape(Shape(xla::U16, {3, 4}), xla::F32)),
              HasSubstr("needs a minor dimension of size 2"));
  EXPECT_THAT(Text(InferBitcastConvertShape(Shape(xla::C64, {2}), xla::F64)),
              HasSubstr("between complex and real types"));
  EXPECT_EQ(Text(InferStochasticConvertShape(F32({4}), Shape(xla::U32, {4}), xla::S8)), "s8[4]");
  EXPECT_THAT(Text(InferStochasticConvertShape(F32({4}), Shape(xla::U16, {4}), xla::S8)),
              HasSubstr("must be unsigned integers as wide as the operand's f32"));
  EXPECT_EQ(Text(InferReducePrecisionShape(F32({2}), 5, 10)), "f32[2]");
  EXPECT_THAT(Text(InferReducePrecisionShape(F32({2}), 0, 10)),
              HasSubstr("exponent_bits=0 must be at least 1"));
}

// ---- data movement

TEST(ShapeInferenceTest, BroadcastReshapeTranspose) {
  EXPECT_EQ(Text(InferBroadcastShape(F32({3}), {2, 3}, {1})), "f32[2,3]");
  EXPECT_THAT(Text(InferBroadcastShape(F32({3}), {3, 2}, {1})),
              HasSubstr("operand dimension 0 has size 3 but maps to result dimension 1 of size 2"));
  EXPECT_THAT(Text(InferBroadcastShape(F32({3}), {3}, {})),
              HasSubstr("must map each of the operand's 1 dimensions"));
  EXPECT_THAT(Text(InferBroadcastShape(F32({3, 3}), {3, 3}, {0, 0})),
              HasSubstr("repeats dimension 0"));
  EXPECT_EQ(Text(InferReshapeShape(F32({2, 3}), {3, 2})), "f32[3,2]");
  EXPECT_EQ(Text(InferReshapeShape(F32({1}), {})), "f32[]");
  EXPECT_THAT(Text(InferReshapeShape(F32({2, 3}), {4})),
              HasSubstr("reshape from f32[2,3] (6 elements) to f32[4] (4 elements)"));
  EXPECT_EQ(Text(InferTransposeShape(F32({2, 3, 4}), {2, 0, 1})), "f32[4,2,3]");
  EXPECT_THAT(Text(InferTransposeShape(F32({2, 3}), {0})), HasSubstr("is not a permutation"));
  EXPECT_THAT(Text(InferTransposeShape(F32({2, 3}), {0, 2})),
              HasSubstr("dimension 2 is out of range for rank 2"));
  EXPECT_EQ(Text(InferReverseShape(F32({2, 3}), {1})), "f32[2,3]");
  EXPECT_THAT(Text(InferReverseShape(F32({2, 3}), {3})), HasSubstr("out of range"));
}

TEST(ShapeInferenceTest, Slices) {
  EXPECT_EQ(Text(InferSliceShape(F32({10, 8}), {2, 0}, {10, 8}, {3, 1})), "f32[3,8]");
  EXPECT_THAT(Text(InferSliceShape(F32({10}), {2}, {11}, {1})),
              HasSubstr("slice limit 11 in dimension 0 exceeds the operand size 10"));
  EXPECT_THAT(Text(InferSliceShape(F32({10}), {5}, {4}, {1})),
              HasSubstr("slice limit 4 in dimension 0 is below its start 5"));
  EXPECT_THAT(Text(InferSliceShape(F32({10}), {0}, {4}, {0})), HasSubstr("must be positive"));
  const Shape index = S32({});
  EXPECT_EQ(Text(InferDynamicSliceShape(F32({8, 4}), {&index, &index}, {2, 4})), "f32[2,4]");
  EXPECT_THAT(Text(InferDynamicSliceShape(F32({8, 4}), {&index}, {2, 4})),
              HasSubstr("expected 2 start indices"));
  EXPECT_THAT(Text(InferDynamicSliceShape(F32({8, 4}), {&index, &index}, {9, 4})),
              HasSubstr("slice size 9 in dimension 0 exceeds the operand size 8"));
  const Shape f_index = F32({});
  EXPECT_THAT(Text(InferDynamicSliceShape(F32({8}), {&f_index}, {2})),
              HasSubstr("start index 0 must be an integer scalar, got f32[]"));
  const Shape u_index = Shape(xla::U32, {});
  EXPECT_THAT(Text(InferDynamicSliceShape(F32({8, 4}), {&index, &u_index}, {2, 4})),
              HasSubstr("all start indices must have one type"));
  EXPECT_EQ(Text(InferDynamicUpdateSliceShape(F32({8, 4}), F32({2, 4}), {&index, &index})),
            "f32[8,4]");
  EXPECT_THAT(Text(InferDynamicUpdateSliceShape(F32({8, 4}), F32({2, 5}), {&index, &index})),
              HasSubstr("update dimension 1 has size 5, larger than the operand's 4"));
  EXPECT_THAT(Text(InferDynamicUpdateSliceShape(F32({8, 4}), S32({2, 4}), {&index, &index})),
              HasSubstr("must have the element type of operand"));
}

TEST(ShapeInferenceTest, ConcatenateAndPad) {
  const Shape a = F32({2, 3}), b = F32({4, 3}), c = F32({2, 5}), d = S32({2, 3});
  EXPECT_EQ(Text(InferConcatenateShape({&a, &b}, 0)), "f32[6,3]");
  EXPECT_EQ(Text(InferConcatenateShape({&a, &c}, 1)), "f32[2,8]");
  EXPECT_THAT(Text(InferConcatenateShape({&a, &c}, 0)),
              HasSubstr("operand 1 f32[2,5] differs from operand 0 f32[2,3] in dimension 1"));
  EXPECT_THAT(Text(InferConcatenateShape({&a, &d}, 0)), HasSubstr("different element type"));
  EXPECT_THAT(Text(InferConcatenateShape({&a, &b}, 2)),
              HasSubstr("concatenate dimension 2 is out of range for rank 2"));

  xla::PaddingConfig config;
  auto* p0 = config.add_dimensions();
  p0->set_edge_padding_low(1);
  p0->set_edge_padding_high(2);
  p0->set_interior_padding(1);
  auto* p1 = config.add_dimensions();
  p1->set_edge_padding_low(-1);
  p1->set_edge_padding_high(-1);
  // 3 + 2 interior + 1 + 2 = 8; 4 - 2 = 2.
  EXPECT_EQ(Text(InferPadShape(F32({3, 4}), F32({}), config)), "f32[8,2]");
  p1->set_edge_padding_low(-3);
  p1->set_edge_padding_high(-3);
  EXPECT_THAT(Text(InferPadShape(F32({3, 4}), F32({}), config)),
              HasSubstr("padding dimension 1 (size 4, low -3, high -3, interior 0) gives "
                        "negative size -2"));
  EXPECT_THAT(Text(InferPadShape(F32({3, 4}), S32({}), config)),
              HasSubstr("padding value s32[] must have the element type of operand f32[3,4]"));
  EXPECT_THAT(Text(InferPadShape(F32({3}), F32({}), config)),
              HasSubstr("padding config has 2 dimensions, operand f32[3] has 1"));
}

TEST(ShapeInferenceTest, TuplesIotaDimensionSizes) {
  const Shape a = F32({2}), b = S32({});
  EXPECT_EQ(Text(InferTupleShape({&a, &b})), "(f32[2], s32[])");
  EXPECT_EQ(Text(InferGetTupleElementShape(Shape::Tuple({a, b}), 1)), "s32[]");
  EXPECT_THAT(Text(InferGetTupleElementShape(Shape::Tuple({a, b}), 2)),
              HasSubstr("index=2 is out of range for a tuple of 2 elements"));
  EXPECT_THAT(Text(InferGetTupleElementShape(a, 0)), HasSubstr("operand f32[2] is not a tuple"));
  EXPECT_EQ(Text(InferIotaShape(S32({4, 2}), 1)), "s32[4,2]");
  EXPECT_THAT(Text(InferIotaShape(S32({4}), 1)), HasSubstr("iota_dimension 1 is out of range"));
  EXPECT_EQ(Text(InferGetDimensionSizeShape(F32({4, 2}), 1)), "s32[]");
  EXPECT_EQ(Text(InferSetDimensionSizeShape(F32({4, 2}), S32({}), 0)), "f32[<=4,2]");
  EXPECT_THAT(Text(InferSetDimensionSizeShape(F32({4, 2}), Shape(xla::S64, {}), 0)),
              HasSubstr("size operand must be s32[]"));
}

// ---- reductions and windows

TEST(ShapeInferenceTest, Reduce) {
  const Shape input = F32({2, 3, 4}), init = F32({});
  EXPECT_EQ(Text(InferReduceShape({&input, &init}, {1}, ScalarAdder(xla::F32))), "f32[2,4]");
  const Shape indices = S32({2, 3, 4}), index_init = S32({});
  ProgramShape argmax = Program({Shape::Scalar(xla::F32), Shape::Scalar(xla::S32),
                                 Shape::Scalar(xla::F32), Shape::Scalar(xla::S32)},
                                Shape::Tuple({Shape::Scalar(xla::F32), Shape::Scalar(xla::S32)}));
  EXPECT_EQ(Text(InferReduceShape({&input, &indices, &init, &index_init}, {0, 2}, argmax)),
            "(f32[3], s32[3])");
  EXPECT_THAT(Text(InferReduceShape({&input, &init}, {3}, ScalarAdder(xla::F32))),
              HasSubstr("dimensions={3}: dimension 3 is out of range for rank 3"));
  EXPECT_THAT(Text(InferReduceShape({&input, &init}, {0}, ScalarAdder(xla::S32))),
              HasSubstr("reducer parameter 0 must be f32[], got s32[]"));
  EXPECT_THAT(Text(InferReduceShape({&input, &init}, {0}, Program({init}, init))),
              HasSubstr("reducer takes 1 parameters, expected 2"));
  // Elements and accumulators have one type (no bf16 inputs into f32 sums).
  const Shape bf16_input = Shape(xla::BF16, {2, 3, 4});
  EXPECT_THAT(Text(InferReduceShape({&bf16_input, &init}, {2}, ScalarAdder(xla::F32))),
              HasSubstr("reducer parameter 1 must be bf16[], got f32[]"));
  EXPECT_THAT(Text(InferReduceShape({&bf16_input, &init}, {2},
                                    Program({Shape::Scalar(xla::F32), Shape::Scalar(xla::BF16)},
                                            Shape::Scalar(xla::F32)))),
              HasSubstr("operand 0 has element type bf16 but its init value and accumulator are "
                        "f32"));
  const Shape bad_init = F32({1});
  EXPECT_THAT(Text(InferReduceShape({&input, &bad_init}, {0}, ScalarAdder(xla::F32))),
              HasSubstr("init value 0 must be a scalar, got f32[1]"));
}

TEST(ShapeInferenceTest, Windows) {
  const Shape input = F32({4, 6}), init = F32({});
  EXPECT_EQ(Text(InferReduceWindowShape({&input, &init}, MakeWindow({2, 3}, {2, 3}),
                                        ScalarAdder(xla::F32))),
            "f32[2,2]");
  EXPECT_EQ(
      Text(InferReduceWindowShape({&input, &init}, MakeWindow({3, 3}, {1, 1}, {{1, 1}, {1, 1}}),
                                  ScalarAdder(xla::F32))),
      "f32[4,6]");
  EXPECT_THAT(Text(InferReduceWindowShape({&input, &init}, MakeWindow({2}), ScalarAdder(xla::F32))),
              HasSubstr("window has 1 dimensions but operand f32[4,6] has rank 2"));
  EXPECT_THAT(Text(InferReduceWindowShape({&input, &init}, MakeWindow({2, 2}, {0, 1}),
                                          ScalarAdder(xla::F32))),
              HasSubstr("window dimension 0 has stride 0"));
  ProgramShape select =
      Program({Shape::Scalar(xla::F32), Shape::Scalar(xla::F32)}, Shape::Scalar(xla::PRED));
  EXPECT_EQ(Text(InferSelectAndScatterShape(input, select, MakeWindow({2, 3}, {2, 3}), F32({2, 2}),
                                            init, ScalarAdder(xla::F32))),
            "f32[4,6]");
  EXPECT_THAT(Text(InferSelectAndScatterShape(input, select, MakeWindow({2, 3}, {2, 3}),
                                              F32({2, 3}), init, ScalarAdder(xla::F32))),
              HasSubstr("source f32[2,3] must have the shape of the windowed operand f32[2,2]"));
  EXPECT_THAT(
      Text(InferSelectAndScatterShape(input, ScalarAdder(xla::F32), MakeWindow({2, 3}, {2, 3}),
                                      F32({2, 2}), init, ScalarAdder(xla::F32))),
      HasSubstr("select result must be pred[], got f32[]"));
}

// ---- contractions

xla::DotDimensionNumbers DotDims(std::vector<int64_t> lc, std::vector<int64_t> rc,
                                 std::vector<int64_t> lb = {}, std::vector<int64_t> rb = {}) {
  xla::DotDimensionNumbers d;
  for (int64_t x : lc) d.add_lhs_contracting_dimensions(x);
  for (int64_t x : rc) d.add_rhs_contracting_dimensions(x);
  for (int64_t x : lb) d.add_lhs_batch_dimensions(x);
  for (int64_t x : rb) d.add_rhs_batch_dimensions(x);
  return d;
}

TEST(ShapeInferenceTest, Dot) {
  EXPECT_EQ(Text(InferDotShape(F32({2, 3}), F32({3, 4}), DotDims({1}, {0}), std::nullopt)),
            "f32[2,4]");
  // Batch dimensions first, then lhs free, then rhs free.
  EXPECT_EQ(Text(InferDotShape(F32({5, 2, 3}), F32({3, 5, 7}), DotDims({2}, {0}, {0}, {1}),
                               std::nullopt)),
            "f32[5,2,7]");
  EXPECT_EQ(
      Text(InferDotShape(Shape(xla::S8, {2, 3}), Shape(xla::S8, {3}), DotDims({1}, {0}), xla::S32)),
      "s32[2]");
  EXPECT_EQ(
      Text(InferDotShape(Shape(xla::BF16, {2, 3}), F32({3}), DotDims({1}, {0}), std::nullopt)),
      "f32[2]");
  EXPECT_THAT(Text(InferDotShape(F32({2, 3}), F32({4, 5}), DotDims({1}, {0}), std::nullopt)),
              HasSubstr("lhs contracting dimension 1 has size 3, rhs contracting dimension 0 "
                        "has size 4"));
  EXPECT_THAT(Text(InferDotShape(F32({5, 2, 3}), F32({6, 3, 7}), DotDims({2}, {1}, {0}, {0}),
                                 std::nullopt)),
              HasSubstr("lhs batch dimension 0 has size 5, rhs batch dimension 0 has size 6"));
  EXPECT_THAT(Text(InferDotShape(F32({2, 3}), F32({3, 4}), DotDims({1}, {}), std::nullopt)),
              HasSubstr("lhs has 1 contracting dimensions, rhs has 0"));
  EXPECT_THAT(Text(InferDotShape(F32({2, 3}), F32({3, 4}), DotDims({2}, {0}), std::nullopt)),
              HasSubstr("lhs_contracting_dims={2}: dimension 2 is out of range for rank 2"));
  EXPECT_THAT(
      Text(InferDotShape(F32({3, 3}), F32({3, 3}), DotDims({0}, {0}, {0}, {1}), std::nullopt)),
      HasSubstr("dimension 0 is in both lhs_batch_dims and lhs_contracting_dims"));
  EXPECT_THAT(Text(InferDotShape(Shape(xla::S32, {2, 3}), Shape(xla::S32, {3}), DotDims({1}, {0}),
                                 xla::S8)),
              HasSubstr("preferred element type s8 is narrower than the s32 operands"));
  EXPECT_THAT(Text(InferDotShape(F32({2, 3}), S32({3}), DotDims({1}, {0}), std::nullopt)),
              HasSubstr("lhs element type f32 and rhs element type s32 differ"));
  // With a result type, operand types may mix (int4 weights times bf16).
  EXPECT_EQ(Text(InferDotShape(Shape(xla::BF16, {2, 3}), Shape(xla::S4, {3}), DotDims({1}, {0}),
                               xla::BF16)),
            "bf16[2]");
}

TEST(ShapeInferenceTest, RaggedDot) {
  xla::RaggedDotDimensionNumbers dnums;
  *dnums.mutable_dot_dimension_numbers() = DotDims({1}, {1});
  dnums.add_lhs_ragged_dimensions(0);
  dnums.add_rhs_group_dimensions(0);
  // Ragged non-contracting: lhs [m,k], rhs [g,k,n], group_sizes [g] -> [m,n].
  EXPECT_EQ(Text(InferRaggedDotShape(F32({11, 5}), F32({3, 5, 7}), S32({3}), dnums, std::nullopt)),
            "f32[11,7]");
  EXPECT_THAT(
      Text(InferRaggedDotShape(F32({11, 5}), F32({4, 5, 7}), S32({3}), dnums, std::nullopt)),
      HasSubstr("rhs group dimension 0 has size 4 but group_sizes s32[3] has 3 groups"));
  // Ragged contracting: lhs [m,k], rhs [k,n] -> [g,m,n].
  xla::RaggedDotDimensionNumbers contracting;
  *contracting.mutable_dot_dimension_numbers() = DotDims({1}, {0});
  contracting.add_lhs_ragged_dimensions(1);
  EXPECT_EQ(
      Text(InferRaggedDotShape(F32({11, 5}), F32({5, 7}), S32({3}), contracting, std::nullopt)),
      "f32[3,11,7]");
}

xla::ConvolutionDimensionNumbers Conv2dNhwc() {
  // b01f_01io->b01f
  xla::ConvolutionDimensionNumbers d;
  d.set_input_batch_dimension(0);
  d.set_input_feature_dimension(3);
  d.add_input_spatial_dimensions(1);
  d.add_input_spatial_dimensions(2);
  d.set_kernel_input_feature_dimension(2);
  d.set_kernel_output_feature_dimension(3);
  d.add_kernel_spatial_dimensions(0);
  d.add_kernel_spatial_dimensions(1);
  d.set_output_batch_dimension(0);
  d.set_output_feature_dimension(3);
  d.add_output_spatial_dimensions(1);
  d.add_output_spatial_dimensions(2);
  return d;
}

TEST(ShapeInferenceTest, Convolution) {
  const auto dnums = Conv2dNhwc();
  EXPECT_EQ(Text(InferConvolutionShape(F32({8, 32, 32, 3}), F32({3, 3, 3, 16}), 1, 1,
                                       MakeWindow({3, 3}, {1, 1}, {{1, 1}, {1, 1}}), dnums,
                                       std::nullopt)),
            "f32[8,32,32,16]");
  EXPECT_EQ(Text(InferConvolutionShape(F32({8, 32, 32, 3}), F32({3, 3, 3, 16}), 1, 1,
                                       MakeWindow({3, 3}, {2, 2}), dnums, std::nullopt)),
            "f32[8,15,15,16]");
  // Depthwise: 16 groups of 1 input feature each.
  EXPECT_EQ(Text(InferConvolutionShape(F32({1, 10, 10, 16}), F32({3, 3, 1, 16}), 16, 1,
                                       MakeWindow({3, 3}), dnums, std::nullopt)),
            "f32[1,8,8,16]");
  EXPECT_THAT(Text(InferConvolutionShape(F32({8, 32, 32, 4}), F32({3, 3, 3, 16}), 1, 1,
                                         MakeWindow({3, 3}), dnums, std::nullopt)),
              HasSubstr("input feature dimension size 4 / feature_group_count=1 must equal the "
                        "kernel input feature dimension size 3"));
  EXPECT_THAT(Text(InferConvolutionShape(F32({8, 32, 32, 3}), F32({3, 3, 3, 16}), 1, 1,
                                         MakeWindow({3, 5}), dnums, std::nullopt)),
              HasSubstr("window dimension 1 has size 5 but kernel spatial dimension 1 has size 3"));
  EXPECT_THAT(Text(InferConvolutionShape(F32({8, 32, 3}), F32({3, 3, 3, 16}), 1, 1,
                                         MakeWindow({3, 3}), dnums, std::nullopt)),
              HasSubstr("lhs f32[8,32,3] must have rank 4"));
  EXPECT_THAT(Text(InferConvolutionShape(F32({8, 32, 32, 3}), F32({3, 3, 3, 16}), 2, 1,
                                         MakeWindow({3, 3}), dnums, std::nullopt)),
              HasSubstr("input feature dimension size 3 is not a multiple of "
                        "feature_group_count=2"));
  EXPECT_THAT(Text(InferConvolutionShape(F32({6, 32, 32, 3}), F32({3, 3, 3, 16}), 1, 4,
                                         MakeWindow({3, 3}), dnums, std::nullopt)),
              HasSubstr("input batch dimension size 6 is not a multiple of batch_group_count=4"));
}

TEST(ShapeInferenceTest, GatherAndScatter) {
  // Row gather: operand [5,4], indices [3] (implicit index vector) -> [3,4].
  xla::GatherDimensionNumbers g;
  g.add_offset_dims(1);
  g.add_collapsed_slice_dims(0);
  g.add_start_index_map(0);
  g.set_index_vector_dim(1);
  EXPECT_EQ(Text(InferGatherShape(F32({5, 4}), S32({3}), g, {1, 4})), "f32[3,4]");
  EXPECT_THAT(Text(InferGatherShape(F32({5, 4}), S32({3}), g, {2, 4})),
              HasSubstr("collapsed slice dimension 0 has slice size 2"));
  EXPECT_THAT(Text(InferGatherShape(F32({5, 4}), S32({3}), g, {1, 5})),
              HasSubstr("slice size 5 of dimension 1 is outside [0, 4]"));
  EXPECT_THAT(Text(InferGatherShape(F32({5, 4}), F32({3}), g, {1, 4})),
              HasSubstr("indices f32[3] must be integers"));
  g.set_index_vector_dim(3);
  EXPECT_THAT(Text(InferGatherShape(F32({5, 4}), S32({3}), g, {1, 4})),
              HasSubstr("index_vector_dim=3 is out of range"));

  // Row scatter-add: operand [5,4], indices [3,1], updates [3,4].
  xla::ScatterDimensionNumbers s;
  s.add_update_window_dims(1);
  s.add_inserted_window_dims(0);
  s.add_scatter_dims_to_operand_dims(0);
  s.set_index_vector_dim(1);
  const Shape operand = F32({5, 4}), indices = S32({3, 1}), updates = F32({3, 4});
  EXPECT_EQ(Text(InferScatterShape({&operand, &indices, &updates}, ScalarAdder(xla::F32), s)),
            "f32[5,4]");
  const Shape wide_updates = F32({3, 6});
  EXPECT_THAT(
      Text(InferScatterShape({&operand, &indices, &wide_updates}, ScalarAdder(xla::F32), s)),
      HasSubstr("update window dimension 1 has size 6, larger than operand dimension 1 "
                "of size 4"));
  const Shape short_updates = F32({2, 4});
  EXPECT_THAT(
      Text(InferScatterShape({&operand, &indices, &short_updates}, ScalarAdder(xla::F32), s)),
      HasSubstr("update scatter dimension 0 has size 2 but indices dimension 0 has size 3"));
  EXPECT_THAT(Text(InferScatterShape({&operand, &indices, &updates}, ScalarAdder(xla::S32), s)),
              HasSubstr("reducer parameter 0 must be f32[]"));
  // Two operands scattered together give a tuple.
  const Shape operand2 = S32({5, 4}), updates2 = S32({3, 4});
  ProgramShape pair = Program({Shape::Scalar(xla::F32), Shape::Scalar(xla::S32),
                               Shape::Scalar(xla::F32), Shape::Scalar(xla::S32)},
                              Shape::Tuple({Shape::Scalar(xla::F32), Shape::Scalar(xla::S32)}));
  EXPECT_EQ(Text(InferScatterShape({&operand, &operand2, &indices, &updates, &updates2}, pair, s)),
            "(f32[5,4], s32[5,4])");
}

// ---- sorting, mapping, control flow

TEST(ShapeInferenceTest, SortTopKMap) {
  const Shape keys = F32({4, 8}), values = S32({4, 8});
  ProgramShape less =
      Program({Shape::Scalar(xla::F32), Shape::Scalar(xla::F32)}, Shape::Scalar(xla::PRED));
  EXPECT_EQ(Text(InferSortShape({&keys}, 1, less)), "f32[4,8]");
  ProgramShape less2 = Program({Shape::Scalar(xla::F32), Shape::Scalar(xla::F32),
                                Shape::Scalar(xla::S32), Shape::Scalar(xla::S32)},
                               Shape::Scalar(xla::PRED));
  EXPECT_EQ(Text(InferSortShape({&keys, &values}, 1, less2)), "(f32[4,8], s32[4,8])");
  EXPECT_THAT(Text(InferSortShape({&keys, &values}, 1, less)),
              HasSubstr("comparator takes 2 parameters, expected 4"));
  EXPECT_THAT(Text(InferSortShape({&keys}, 2, less)),
              HasSubstr("sort dimension 2 is out of range"));
  EXPECT_EQ(Text(InferTopKShape(keys, 3)), "(f32[4,3], s32[4,3])");
  EXPECT_THAT(Text(InferTopKShape(keys, 9)), HasSubstr("k=9 is outside [0, 8]"));
  ProgramShape to_s32 = Program({Shape::Scalar(xla::F32)}, Shape::Scalar(xla::S32));
  EXPECT_EQ(Text(InferMapShape({&keys}, to_s32, {0, 1})), "s32[4,8]");
  EXPECT_THAT(Text(InferMapShape({&keys}, to_s32, {1, 0})), HasSubstr("must list all 2"));
  EXPECT_THAT(Text(InferMapShape({&keys, &keys}, to_s32, {})),
              HasSubstr("to_apply takes 1 parameters, map has 2 operands"));
}

TEST(ShapeInferenceTest, ControlFlow) {
  const Shape state = Shape::Tuple({S32({}), F32({4})});
  ProgramShape condition = Program({state}, Shape::Scalar(xla::PRED));
  ProgramShape body = Program({state}, state);
  EXPECT_EQ(Text(InferWhileShape(condition, body, state)), "(s32[], f32[4])");
  EXPECT_THAT(Text(InferWhileShape(condition, Program({state}, F32({4})), state)),
              HasSubstr("body result f32[4] differs from its parameter (s32[], f32[4])"));
  EXPECT_THAT(Text(InferWhileShape(Program({state}, S32({})), body, state)),
              HasSubstr("condition result must be pred[], got s32[]"));
  const Shape index = S32({}), pred = Pred({}), a = F32({2}), b = S32({});
  std::vector<ProgramShape> branches = {Program({a}, F32({})), Program({b}, F32({}))};
  EXPECT_EQ(Text(InferConditionalShape(index, branches, {&a, &b})), "f32[]");
  EXPECT_EQ(Text(InferConditionalShape(pred, branches, {&a, &b})), "f32[]");
  EXPECT_THAT(Text(InferConditionalShape(index, branches, {&a, &a})),
              HasSubstr("branch 1 parameter s32[] differs from its operand f32[2]"));
  branches[1].result = S32({});
  EXPECT_THAT(Text(InferConditionalShape(index, branches, {&a, &b})),
              HasSubstr("branch 1 returns s32[] but branch 0 returns f32[]"));
  EXPECT_EQ(Text(InferCallShape({&a, &b}, Program({a, b}, F32({7})))), "f32[7]");
  EXPECT_THAT(Text(InferCallShape({&a}, Program({a, b}, F32({7})))),
              HasSubstr("called computation takes 2 parameters but 1 operands are passed"));
}

// ---- linear algebra, fft, random numbers, batch norm

TEST(ShapeInferenceTest, NumericOps) {
  EXPECT_EQ(Text(InferCholeskyShape(F32({2, 4, 4}))), "f32[2,4,4]");
  EXPECT_THAT(Text(InferCholeskyShape(F32({4, 3}))), HasSubstr("square matrices"));
  xla::TriangularSolveOptions left;
  left.set_left_side(true);
  EXPECT_EQ(Text(InferTriangularSolveShape(F32({4, 4}), F32({4, 2}), left)), "f32[4,2]");
  EXPECT_THAT(Text(InferTriangularSolveShape(F32({4, 4}), F32({2, 4}), left)),
              HasSubstr("b f32[2,4] dimension 0 has size 2"));
  EXPECT_EQ(Text(InferFftShape(Shape(xla::C64, {8, 16}), xla::FFT, {16})), "c64[8,16]");
  EXPECT_EQ(Text(InferFftShape(F32({8, 16}), xla::RFFT, {16})), "c64[8,9]");
  EXPECT_EQ(Text(InferFftShape(Shape(xla::C64, {8, 9}), xla::IRFFT, {16})), "f32[8,16]");
  EXPECT_THAT(Text(InferFftShape(F32({8, 16}), xla::FFT, {16})),
              HasSubstr("FFT/IFFT need a complex operand"));
  EXPECT_THAT(Text(InferFftShape(F32({8, 15}), xla::RFFT, {16})),
              HasSubstr("RFFT operand dimension 1 has size 15 but fft_length is 16"));
  EXPECT_EQ(Text(InferRngShape(F32({}), F32({}), xla::RNG_NORMAL, F32({3}))), "f32[3]");
  EXPECT_THAT(Text(InferRngShape(S32({}), S32({}), xla::RNG_NORMAL, S32({3}))),
              HasSubstr("normal rng needs floating-point parameters"));
  EXPECT_EQ(Text(InferRngBitGeneratorShape(Shape(xla::U64, {2}), Shape(xla::U32, {8}))),
            "(u64[2], u32[8])");
  EXPECT_EQ(Text(InferBatchNormTrainingShape(F32({2, 3, 5}), F32({3}), F32({3}), 1)),
            "(f32[2,3,5], f32[3], f32[3])");
  EXPECT_THAT(Text(InferBatchNormTrainingShape(F32({2, 3, 5}), F32({5}), F32({3}), 1)),
              HasSubstr("scale f32[5] must be a vector of the 3 features"));
  EXPECT_EQ(
      Text(InferBatchNormInferenceShape(F32({2, 3}), F32({3}), F32({3}), F32({3}), F32({3}), 1)),
      "f32[2,3]");
  EXPECT_EQ(
      Text(InferBatchNormGradShape(F32({2, 3}), F32({3}), F32({3}), F32({3}), F32({2, 3}), 1)),
      "(f32[2,3], f32[3], f32[3])");
  EXPECT_THAT(
      Text(InferBatchNormGradShape(F32({2, 3}), F32({3}), F32({3}), F32({3}), F32({2, 3}), 2)),
      HasSubstr("feature_index 2 is out of range for rank 2"));
}

TEST(ShapeInferenceTest, CompatibilityIgnoresLayoutAndDynamism) {
  Shape a = F32({2, 3});
  Shape b = F32({2, 3});
  b.set_layout(MinorToMajor({0, 1}));
  b.set_dynamic_dimension(0, true);
  EXPECT_TRUE(ShapesCompatible(a, b));
  EXPECT_FALSE(ShapesCompatible(a, F32({3, 2})));
  EXPECT_FALSE(ShapesCompatible(a, Shape(xla::BF16, {2, 3})));
  EXPECT_TRUE(ShapesCompatible(a, Shape(xla::BF16, {2, 3}), /*ignore_fp_precision=*/true));
  Shape unbounded = F32({2, 3});
  unbounded.set_dimension(1, Shape::kUnboundedSize);
  unbounded.set_dynamic_dimension(1, true);
  EXPECT_TRUE(ShapesCompatible(a, unbounded));
}

// ---- whole instructions

TEST(ShapeInferenceTest, EveryOpcodeInfersItsDeclaredShape) {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  ASSERT_TRUE(srcdir != nullptr && workspace != nullptr) << "run under bazel test";
  const std::string path = absl::StrCat(srcdir, "/", workspace, "/hlo/testdata/every_opcode.hlo");
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  auto modules = ParseHloModules(text.str());
  ASSERT_TRUE(modules.ok()) << modules.status().message();
  absl::flat_hash_set<HloOpcode> covered;
  for (const auto& module : *modules) {
    for (const HloComputation* computation : module->computations()) {
      for (const HloInstruction* instruction : computation->instructions()) {
        covered.insert(instruction->opcode());
        absl::StatusOr<Shape> inferred = InferShape(*instruction);
        ASSERT_TRUE(inferred.ok()) << inferred.status().message();
        EXPECT_TRUE(ShapesCompatible(*inferred, instruction->shape()))
            << instruction->name() << ": inferred " << inferred->ToString() << ", declared "
            << instruction->shape().ToString();
      }
    }
  }
  for (int i = 0; i < kHloOpcodeCount; ++i) {
    const HloOpcode opcode = static_cast<HloOpcode>(i);
    EXPECT_TRUE(covered.contains(opcode)) << "no valid case for " << HloOpcodeName(opcode);
  }
}

// A wrong declared shape is what InferShape exposes; its errors name the
// instruction.
TEST(ShapeInferenceTest, InferShapeNamesTheInstruction) {
  auto module = ParseHloModule(R"(HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_EQ(Text(InferShape(*(*module)->entry()->root())),
            "error: dot %d: lhs contracting dimension 1 has size 3, rhs contracting dimension 0 "
            "has size 4");
}

}  // namespace
}  // namespace hloc
