// Tests of dot and convolution against straightforward reference loops on
// random inputs (every dimension-number and window feature), plus
// hand-checked reductions, windows, sorting, batch norm and linear algebra,
// random arguments and literal comparison.
#include <cmath>
#include <complex>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/evaluator_test_util.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

using testing_util::EvalOp;
using testing_util::L;
using testing_util::Str;

std::vector<int64_t> Unflatten(int64_t linear, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    index[d] = linear % dims[d];
    linear /= dims[d];
  }
  return index;
}

int64_t Flatten(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t linear = 0;
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

// Convolution straight from XLA's definition, in double.
Literal ReferenceConvolution(const HloInstruction& conv, const Literal& lhs, const Literal& rhs) {
  const auto& dn = *conv.attrs().convolution_dimension_numbers;
  const auto& window = *conv.attrs().window;
  const Shape& out_shape = conv.shape();
  Literal out(out_shape);
  const int64_t nsp = dn.input_spatial_dimensions_size();
  const int64_t fgc = conv.attrs().feature_group_count, bgc = conv.attrs().batch_group_count;
  const int64_t batch = lhs.shape().dimensions(dn.input_batch_dimension());
  const int64_t o_total = rhs.shape().dimensions(dn.kernel_output_feature_dimension());
  const int64_t ci = rhs.shape().dimensions(dn.kernel_input_feature_dimension());
  std::vector<int64_t> kdims;
  for (int64_t i = 0; i < nsp; ++i) kdims.push_back(rhs.shape().dimensions(dn.kernel_spatial_dimensions(i)));
  int64_t nk = 1;
  for (int64_t k : kdims) nk *= k;
  for (int64_t e = 0; e < out.element_count(); ++e) {
    const std::vector<int64_t> oi = Unflatten(e, out_shape.dimensions());
    const int64_t ob = oi[dn.output_batch_dimension()], o = oi[dn.output_feature_dimension()];
    const int64_t fg = o / (o_total / fgc), bg = o / (o_total / bgc);
    const int64_t b = bg * (batch / bgc) + ob;
    double sum = 0;
    for (int64_t c = 0; c < ci; ++c) {
      for (int64_t kf = 0; kf < nk; ++kf) {
        const std::vector<int64_t> kw = Unflatten(kf, kdims);
        std::vector<int64_t> li(lhs.shape().rank()), ri(rhs.shape().rank());
        bool valid = true;
        for (int64_t d = 0; d < nsp && valid; ++d) {
          const auto& wd = window.dimensions(d);
          const int64_t pos = wd.window_reversal() ? kdims[d] - 1 - kw[d] : kw[d];
          const int64_t bd = std::max<int64_t>(1, wd.base_dilation());
          int64_t x = oi[dn.output_spatial_dimensions(d)] * std::max<int64_t>(1, wd.stride()) -
                      wd.padding_low() + pos * std::max<int64_t>(1, wd.window_dilation());
          if (x < 0 || x % bd != 0) valid = false;
          x /= bd;
          if (x >= lhs.shape().dimensions(dn.input_spatial_dimensions(d))) valid = false;
          li[dn.input_spatial_dimensions(d)] = x;
          ri[dn.kernel_spatial_dimensions(d)] = kw[d];
        }
        if (!valid) continue;
        li[dn.input_batch_dimension()] = b;
        li[dn.input_feature_dimension()] = fg * ci + c;
        ri[dn.kernel_output_feature_dimension()] = o;
        ri[dn.kernel_input_feature_dimension()] = c;
        sum += lhs.GetAsDouble(Flatten(li, lhs.shape().dimensions())) *
               rhs.GetAsDouble(Flatten(ri, rhs.shape().dimensions()));
      }
    }
    out.SetFromDouble(e, sum);
  }
  return out;
}

struct ConvCase {
  const char* lhs;
  const char* rhs;
  const char* out;
  const char* attrs;
};

class ConvolutionTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvolutionTest, MatchesReference) {
  const ConvCase& c = GetParam();
  const std::string text = absl::StrCat("HloModule m\nENTRY e {\n  a = ", c.lhs,
                                        " parameter(0)\n  b = ", c.rhs, " parameter(1)\n  ROOT r = ",
                                        c.out, " convolution(a, b), ", c.attrs, "\n}\n");
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(**module, 7);
  ASSERT_TRUE(args.ok()) << args.status();
  absl::StatusOr<Literal> result = Evaluate(**module, *args);
  ASSERT_TRUE(result.ok()) << result.status();
  Literal expected = ReferenceConvolution(*(*module)->entry()->root(), (*args)[0], (*args)[1]);
  ComparisonReport report = CompareLiterals(expected, *result);
  EXPECT_TRUE(report.ok) << report.ToString() << "\n" << text;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvolutionTest,
    ::testing::Values(
        ConvCase{"f32[2,5,6,3]", "f32[3,3,3,4]", "f32[2,3,6,4]",
                 "window={size=3x3 stride=2x1 pad=1_1x0_2}, dim_labels=b01f_01io->b01f"},
        ConvCase{"f32[1,2,4,5]", "f32[3,2,2,3]", "f32[1,3,9,7]",
                 "window={size=2x3 pad=2_1x1_1 lhs_dilate=2x2 rhs_dilate=1x2}, "
                 "dim_labels=bf01_oi01->bf01"},
        ConvCase{"f32[2,4,4,4]", "f32[2,2,2,6]", "f32[2,3,3,6]",
                 "window={size=2x2}, dim_labels=b01f_01io->b01f, feature_group_count=2"},
        ConvCase{"f32[4,3,3,2]", "f32[2,2,2,4]", "f32[2,2,2,4]",
                 "window={size=2x2}, dim_labels=b01f_01io->b01f, batch_group_count=2"},
        ConvCase{"f32[2,3,7]", "f32[4,3,3]", "f32[2,4,4]",
                 "window={size=3 stride=2 pad=1_1}, dim_labels=bf0_oi0->bf0"},
        ConvCase{"f32[1,2,4,4,4]", "f32[2,2,2,2,2]", "f32[1,2,3,3,3]",
                 "window={size=2x2x2}, dim_labels=bf012_oi012->bf012"},
        ConvCase{"f32[1,6,6,2]", "f32[5,5,2,3]", "f32[1,2,2,3]",
                 "window={size=5x5}, dim_labels=b01f_01io->b01f"},
        ConvCase{"f32[2,5,5,3]", "f32[3,3,1,3]", "f32[2,3,3,3]",
                 "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                 "feature_group_count=3"},
        ConvCase{"f32[2,5,5,3]", "f32[3,3,1,3]", "f32[2,10,10,3]",
                 "window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f, "
                 "feature_group_count=3"},
        ConvCase{"f32[4,3,6,6]", "f32[4,3,6,6]", "f32[3,3,1,3]",
                 "window={size=6x6 pad=1_1x1_1}, dim_labels=fb01_io01->01bf, batch_group_count=3"},
        ConvCase{"f32[2,3,6,6]", "f32[2,4,3,3]", "f32[3,3,3,4]",
                 "window={size=3x3 stride=2x2 pad=0_1x0_1 rhs_reversal=1x0}, "
                 "dim_labels=fb01_io01->01bf"},
        ConvCase{"f32[3,4]", "f32[4,5]", "f32[3,5]", "dim_labels=bf_io->bf"},
        ConvCase{"f32[1,3,3,1]", "f32[2,2,1,1]", "f32[1,0,2,1]",
                 "window={size=2x2 pad=-2_0x0_0}, dim_labels=b01f_01io->b01f"},
        ConvCase{"f64[2,3,5]", "f64[3,2,3]", "f64[2,2,5]",
                 "window={size=3 pad=1_1}, dim_labels=bf0_io0->bf0"},
        ConvCase{"bf16[1,4,4,2]", "bf16[2,2,2,2]", "f32[1,3,3,2]",
                 "window={size=2x2}, dim_labels=b01f_01io->b01f"},
        ConvCase{"f32[8,20,20,16]", "f32[1,1,16,24]", "f32[8,20,20,24]",
                 "window={size=1x1}, dim_labels=b01f_01io->b01f"}));

TEST(ConvolutionIntegerTest, WrapsAround) {
  EXPECT_EQ(Str(EvalOp("s8[1,2,1]", "convolution(p0, p1), window={size=1}, dim_labels=bf0_oi0->bf0",
                       {{"s8[1,1,1]", L("s8[1,1,1]", "{{{100}}}")},
                        {"s8[2,1,1]", L("s8[2,1,1]", "{{{2}}, {{-1}}}")}})),
            "s8[1,2,1] {{{-56}, {-100}}}");
}

// Dot straight from the definition.
TEST(DotTest, GeneralDimensionNumbersMatchReference) {
  const char* text = R"(
HloModule m
ENTRY e {
  a = f32[3,4,2,5] parameter(0)
  b = f32[5,2,6,4] parameter(1)
  ROOT d = f32[2,3,6] dot(a, b), lhs_batch_dims={2}, rhs_batch_dims={1}, lhs_contracting_dims={3,1}, rhs_contracting_dims={0,3}
}
)";
  auto module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  auto args = MakeRandomArguments(**module, 3);
  ASSERT_TRUE(args.ok());
  auto result = Evaluate(**module, *args);
  ASSERT_TRUE(result.ok()) << result.status();
  const Literal& a = (*args)[0];
  const Literal& b = (*args)[1];
  Literal expected(Shape(xla::F32, {2, 3, 6}));
  for (int bt = 0; bt < 2; ++bt) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 6; ++j) {
        double s = 0;
        for (int k0 = 0; k0 < 5; ++k0) {
          for (int k1 = 0; k1 < 4; ++k1) {
            s += a.GetAsDouble(((i * 4 + k1) * 2 + bt) * 5 + k0) *
                 b.GetAsDouble(((k0 * 2 + bt) * 6 + j) * 4 + k1);
          }
        }
        expected.SetFromDouble((bt * 3 + i) * 6 + j, s);
      }
    }
  }
  EXPECT_TRUE(CompareLiterals(expected, *result).ok) << CompareLiterals(expected, *result).ToString();
}

TEST(DotTest, LargeMatmulUsesBlockedKernelCorrectly) {
  // Sizes not multiple of the register tile, more than one K block.
  const char* text = R"(
HloModule m
ENTRY e {
  a = f32[37,300] parameter(0)
  b = f32[300,53] parameter(1)
  ROOT d = f32[37,53] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  auto module = ParseHloModule(text);
  ASSERT_TRUE(module.ok());
  auto args = MakeRandomArguments(**module, 11);
  ASSERT_TRUE(args.ok());
  auto result = Evaluate(**module, *args);
  ASSERT_TRUE(result.ok()) << result.status();
  double max_err = 0;
  for (int i = 0; i < 37; ++i) {
    for (int j = 0; j < 53; ++j) {
      double s = 0;
      for (int k = 0; k < 300; ++k) s += (*args)[0].GetAsDouble(i * 300 + k) * (*args)[1].GetAsDouble(k * 53 + j);
      max_err = std::max(max_err, std::fabs(s - result->GetAsDouble(i * 53 + j)));
    }
  }
  EXPECT_LT(max_err, 1e-4);
}

TEST(DotTest, TypesAndAccumulation) {
  EXPECT_EQ(Str(EvalOp("s32[2,2]", "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                       {{"s32[2,2]", L("s32[2,2]", "{{1, 2}, {3, 4}}")},
                        {"s32[2,2]", L("s32[2,2]", "{{5, 6}, {7, 8}}")}})),
            "s32[2,2] {{19, 22}, {43, 50}}");
  EXPECT_EQ(Str(EvalOp("u8[1,1]", "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                       {{"u8[1,2]", L("u8[1,2]", "{{200, 100}}")},
                        {"u8[2,1]", L("u8[2,1]", "{{2}, {1}}")}})),
            "u8[1,1] {{244}}");  // 500 mod 256
  // bf16 operands, f32 result: products accumulate in float.
  EXPECT_EQ(Str(EvalOp("f32[1,1]", "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                       {{"bf16[1,3]", L("bf16[1,3]", "{{256, 1, 1}}")},
                        {"bf16[3,1]", L("bf16[3,1]", "{{1}, {1}, {1}}")}})),
            "f32[1,1] {{258}}");
  EXPECT_EQ(Str(EvalOp("c64[1]", "dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
                       {{"c64[2]", L("c64[2]", "{(1, 1), (0, 2)}")},
                        {"c64[2,1]", L("c64[2,1]", "{{(1, -1)}, {(3, 0)}}")}})),
            "c64[1] {(2, 6)}");
  EXPECT_EQ(Str(EvalOp("f32[2,3]", "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                       {{"f32[2,0]", Literal(Shape(xla::F32, {2, 0}))},
                        {"f32[0,3]", Literal(Shape(xla::F32, {0, 3}))}})),
            "f32[2,3] {{0, 0, 0}, {0, 0, 0}}");
}

const char* kReducers = R"(
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
addi { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] add(a, b) }
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }
ge_u64 { a = u64[] parameter(0)  b = u64[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }
ge_s64 { a = s64[] parameter(0)  b = s64[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }
add_u64 { a = u64[] parameter(0)  b = u64[] parameter(1)  ROOT s = u64[] add(a, b) }
add_s64 { a = s64[] parameter(0)  b = s64[] parameter(1)  ROOT s = s64[] add(a, b) }
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GE
  v = f32[] select(gt, v0, v1)
  i = s32[] select(gt, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
add_bf16 { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT r = bf16[] add(a, b) }
mul_bf16 { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT r = bf16[] multiply(a, b) }
sub_then_neg { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] subtract(a, b)  ROOT n = f32[] negate(s) }
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  c = s32[] parameter(2)  d = s32[] parameter(3)  ROOT r = pred[] compare(a, b), direction=LT }
gt_s32 { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT r = pred[] compare(a, b), direction=GT }
)";

TEST(ReduceTest, DimensionsAndReducers) {
  auto x = [] { return L("f32[2,3]", "{{1, 2, 3}, {4, 5, 6}}"); };
  EXPECT_EQ(Str(EvalOp("f32[3]", "reduce(p0, p1), dimensions={0}, to_apply=add",
                       {{"f32[2,3]", x()}, {"f32[]", L("f32[]", "0")}}, kReducers)),
            "f32[3] {5, 7, 9}");
  EXPECT_EQ(Str(EvalOp("f32[2]", "reduce(p0, p1), dimensions={1}, to_apply=max",
                       {{"f32[2,3]", x()}, {"f32[]", L("f32[]", "-inf")}}, kReducers)),
            "f32[2] {3, 6}");
  EXPECT_EQ(Str(EvalOp("f32[]", "reduce(p0, p1), dimensions={0,1}, to_apply=add",
                       {{"f32[2,3]", x()}, {"f32[]", L("f32[]", "10")}}, kReducers)),
            "f32[] 31");
  EXPECT_EQ(Str(EvalOp("f32[2]", "reduce(p0, p1), dimensions={1}, to_apply=max",
                       {{"f32[2,3]", L("f32[2,3]", "{{1, nan, 3}, {4, 5, 6}}")},
                        {"f32[]", L("f32[]", "-inf")}},
                       kReducers)),
            "f32[2] {nan, 6}");
  // Not a single binary op: called per element in index order: -(-(0-1)-2) ...
  EXPECT_EQ(Str(EvalOp("f32[]", "reduce(p0, p1), dimensions={0}, to_apply=sub_then_neg",
                       {{"f32[3]", L("f32[3]", "{1, 2, 3}")}, {"f32[]", L("f32[]", "0")}},
                       kReducers)),
            "f32[] 2");
  EXPECT_EQ(Str(EvalOp("s32[2]", "reduce(p0, p1), dimensions={0}, to_apply=addi",
                       {{"s32[2,2]", L("s32[2,2]", "{{2147483647, 1}, {1, 2}}")},
                        {"s32[]", L("s32[]", "0")}},
                       kReducers)),
            "s32[2] {-2147483648, 3}");
  EXPECT_EQ(Str(EvalOp("f32[2]", "reduce(p0, p1), dimensions={0}, to_apply=add",
                       {{"f32[0,2]", Literal(Shape(xla::F32, {0, 2}))}, {"f32[]", L("f32[]", "7")}},
                       kReducers)),
            "f32[2] {7, 7}");
}

TEST(ReduceTest, NarrowFloatSumsAndProductsRoundOnce) {
  // bf16 has 8 significant bits: 256 + 1 rounded at each step stays 256
  // (ties to even), while the exact 258 is representable; 1.03125^4 =
  // 1.1309.. rounds to 1.1328125 once, to 1.125 step by step. A reduce's
  // sum accumulates in double, products and every window in f32; each
  // output rounds once.
  EXPECT_EQ(Str(EvalOp("bf16[]", "reduce(p0, p1), dimensions={0}, to_apply=add_bf16",
                       {{"bf16[3]", L("bf16[3]", "{256, 1, 1}")}, {"bf16[]", L("bf16[]", "0")}},
                       kReducers)),
            "bf16[] 258");
  EXPECT_EQ(Str(EvalOp("bf16[]", "reduce(p0, p1), dimensions={0}, to_apply=mul_bf16",
                       {{"bf16[4]", L("bf16[4]", "{1.03125, 1.03125, 1.03125, 1.03125}")},
                        {"bf16[]", L("bf16[]", "1")}},
                       kReducers)),
            "bf16[] 1.1328125");
  EXPECT_EQ(Str(EvalOp("bf16[1]", "reduce-window(p0, p1), window={size=3}, to_apply=add_bf16",
                       {{"bf16[3]", L("bf16[3]", "{256, 1, 1}")}, {"bf16[]", L("bf16[]", "0")}},
                       kReducers)),
            "bf16[1] {258}");
  EXPECT_EQ(Str(EvalOp("bf16[1]", "reduce-window(p0, p1), window={size=4}, to_apply=mul_bf16",
                       {{"bf16[4]", L("bf16[4]", "{1.03125, 1.03125, 1.03125, 1.03125}")},
                        {"bf16[]", L("bf16[]", "1")}},
                       kReducers)),
            "bf16[1] {1.1328125}");
}

TEST(ReduceTest, MultiOperandArgmax) {
  EXPECT_EQ(Str(EvalOp("(f32[2], s32[2])", "reduce(p0, p1, p2, p3), dimensions={1}, to_apply=argmax",
                       {{"f32[2,3]", L("f32[2,3]", "{{1, 7, 3}, {9, 5, 9}}")},
                        {"s32[2,3]", L("s32[2,3]", "{{0, 1, 2}, {0, 1, 2}}")},
                        {"f32[]", L("f32[]", "-inf")},
                        {"s32[]", L("s32[]", "-1")}},
                       kReducers)),
            "(f32[2] {7, 9}, s32[2] {1, 0})");
}

TEST(ReduceWindowTest, PaddingStridesDilation) {
  EXPECT_EQ(Str(EvalOp("f32[3]", "reduce-window(p0, p1), window={size=2 stride=2 pad=1_1}, to_apply=add",
                       {{"f32[4]", L("f32[4]", "{1, 2, 3, 4}")}, {"f32[]", L("f32[]", "0")}},
                       kReducers)),
            "f32[3] {1, 5, 4}");
  EXPECT_EQ(Str(EvalOp("f32[2]", "reduce-window(p0, p1), window={size=2 rhs_dilate=2}, to_apply=max",
                       {{"f32[4]", L("f32[4]", "{1, 9, 3, 4}")}, {"f32[]", L("f32[]", "-inf")}},
                       kReducers)),
            "f32[2] {3, 9}");
  EXPECT_EQ(Str(EvalOp("f32[2]", "reduce-window(p0, p1), window={size=2 lhs_dilate=2}, to_apply=add",
                       {{"f32[2]", L("f32[2]", "{5, 7}")}, {"f32[]", L("f32[]", "0")}}, kReducers)),
            "f32[2] {5, 7}");
  // Cumulative sum as XLA lowers it.
  EXPECT_EQ(Str(EvalOp("s32[4]", "reduce-window(p0, p1), window={size=4 pad=3_0}, to_apply=addi",
                       {{"s32[4]", L("s32[4]", "{1, 2, 3, 4}")}, {"s32[]", L("s32[]", "0")}},
                       kReducers)),
            "s32[4] {1, 3, 6, 10}");
}

TEST(SelectAndScatterTest, MaxPoolGradient) {
  EXPECT_EQ(Str(EvalOp("f32[4]",
                       "select-and-scatter(p0, p1, p2), window={size=2 stride=2}, select=ge, scatter=add",
                       {{"f32[4]", L("f32[4]", "{1, 5, 7, 7}")},
                        {"f32[2]", L("f32[2]", "{10, 20}")},
                        {"f32[]", L("f32[]", "0")}},
                       kReducers)),
            "f32[4] {0, 10, 20, 0}");
  // Overlapping windows both select index 1.
  EXPECT_EQ(Str(EvalOp("f32[3]",
                       "select-and-scatter(p0, p1, p2), window={size=2 stride=1}, select=ge, scatter=add",
                       {{"f32[3]", L("f32[3]", "{1, 5, 2}")},
                        {"f32[2]", L("f32[2]", "{10, 20}")},
                        {"f32[]", L("f32[]", "0")}},
                       kReducers)),
            "f32[3] {0, 30, 0}");
  // 64-bit integers past 2^53 are told apart (as doubles these are all
  // 2^64, or 2^62): each window selects its largest.
  EXPECT_EQ(Str(EvalOp("u64[3]",
                       "select-and-scatter(p0, p1, p2), window={size=2 stride=1 pad=1_1}, "
                       "select=ge_u64, scatter=add_u64",
                       {{"u64[3]", L("u64[3]", "{18446744073709551614, 18446744073709551613, "
                                               "18446744073709551615}")},
                        {"u64[4]", L("u64[4]", "{1, 10, 100, 1000}")},
                        {"u64[]", L("u64[]", "0")}},
                       kReducers)),
            "u64[3] {11, 0, 1100}");
  EXPECT_EQ(Str(EvalOp("s64[3]",
                       "select-and-scatter(p0, p1, p2), window={size=2 stride=1 pad=1_1}, "
                       "select=ge_s64, scatter=add_s64",
                       {{"s64[3]", L("s64[3]", "{4611686018427387905, 4611686018427387904, "
                                               "4611686018427387907}")},
                        {"s64[4]", L("s64[4]", "{1, 10, 100, 1000}")},
                        {"s64[]", L("s64[]", "0")}},
                       kReducers)),
            "s64[3] {11, 0, 1100}");
}

TEST(SortTest, KeysValuesStableAndComparator) {
  EXPECT_EQ(Str(EvalOp("(f32[5], s32[5])", "sort(p0, p1), dimensions={0}, is_stable=true, to_apply=lt",
                       {{"f32[5]", L("f32[5]", "{3, 1, 2, 1, -0}")},
                        {"s32[5]", L("s32[5]", "{0, 1, 2, 3, 4}")}},
                       kReducers)),
            "(f32[5] {-0, 1, 1, 2, 3}, s32[5] {4, 1, 3, 2, 0})");
  EXPECT_EQ(Str(EvalOp("s32[2,3]", "sort(p0), dimensions={1}, to_apply=gt_s32",
                       {{"s32[2,3]", L("s32[2,3]", "{{1, 3, 2}, {-1, -3, 0}}")}}, kReducers)),
            "s32[2,3] {{3, 2, 1}, {0, -1, -3}}");
  EXPECT_EQ(Str(EvalOp("s32[2,2]", "sort(p0), dimensions={0}, to_apply=gt_s32",
                       {{"s32[2,2]", L("s32[2,2]", "{{1, 4}, {2, 3}}")}}, kReducers)),
            "s32[2,2] {{2, 4}, {1, 3}}");
}

TEST(SortTest, TopK) {
  EXPECT_EQ(Str(EvalOp("(f32[2,2], s32[2,2])", "topk(p0), k=2, largest=true",
                       {{"f32[2,4]", L("f32[2,4]", "{{1, 9, 3, 9}, {-1, -2, nan, 0}}")}})),
            "(f32[2,2] {{9, 9}, {nan, 0}}, s32[2,2] {{1, 3}, {2, 3}})");
}

TEST(BatchNormTest, TrainingInferenceGrad) {
  // Feature 0: {1, 3} -> mean 2, var 1; feature 1: {2, 2} -> mean 2, var 0.
  EXPECT_EQ(Str(EvalOp("(f32[2,2], f32[2], f32[2])",
                       "batch-norm-training(p0, p1, p2), epsilon=0, feature_index=1",
                       {{"f32[2,2]", L("f32[2,2]", "{{1, 2}, {3, 2}}")},
                        {"f32[2]", L("f32[2]", "{2, 1}")},
                        {"f32[2]", L("f32[2]", "{0, 5}")}})),
            "(f32[2,2] {{-2, -nan}, {2, -nan}}, f32[2] {2, 2}, f32[2] {1, 0})");  // 0/0
  EXPECT_EQ(Str(EvalOp("f32[2,2]", "batch-norm-inference(p0, p1, p2, p3, p4), epsilon=0, feature_index=0",
                       {{"f32[2,2]", L("f32[2,2]", "{{1, 2}, {3, 5}}")},
                        {"f32[2]", L("f32[2]", "{1, 2}")},
                        {"f32[2]", L("f32[2]", "{0, 1}")},
                        {"f32[2]", L("f32[2]", "{1, 3}")},
                        {"f32[2]", L("f32[2]", "{4, 1}")}})),
            "f32[2,2] {{0, 0.5}, {1, 5}}");
  // grad_offset = sum(dy); grad_scale = sum(dy * (x - mean)) / std.
  absl::StatusOr<Literal> g = EvalOp(
      "(f32[2,1], f32[1], f32[1])", "batch-norm-grad(p0, p1, p2, p3, p4), epsilon=0, feature_index=1",
      {{"f32[2,1]", L("f32[2,1]", "{{1}, {3}}")},
       {"f32[1]", L("f32[1]", "{2}")},
       {"f32[1]", L("f32[1]", "{2}")},
       {"f32[1]", L("f32[1]", "{1}")},
       {"f32[2,1]", L("f32[2,1]", "{{1}, {5}}")}});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->tuple_elements()[1].ToString(), "f32[1] {4}");
  EXPECT_EQ(g->tuple_elements()[2].ToString(), "f32[1] {6}");
  // dx = 2 * (dy - 3 - (x - 2) * 4 / 2) = {2*(1-3+2), 2*(5-3-2)} = {0, 0}.
  EXPECT_EQ(g->tuple_elements()[0].ToString(), "f32[2,1] {{0}, {0}}");
}

TEST(LinalgTest, CholeskyAndTriangularSolve) {
  EXPECT_EQ(Str(EvalOp("f32[2,2]", "cholesky(p0), lower=true",
                       {{"f32[2,2]", L("f32[2,2]", "{{4, 99}, {2, 5}}")}})),
            "f32[2,2] {{2, 0}, {1, 2}}");
  EXPECT_EQ(Str(EvalOp("f32[2,2]", "cholesky(p0), lower=false",
                       {{"f32[2,2]", L("f32[2,2]", "{{4, 2}, {99, 5}}")}})),
            "f32[2,2] {{2, 1}, {0, 2}}");
  // [[2,0],[1,2]] x = [[2],[5]] -> x = [[1],[2]].
  EXPECT_EQ(Str(EvalOp("f32[2,1]",
                       "triangular-solve(p0, p1), left_side=true, lower=true, transpose_a=NO_TRANSPOSE",
                       {{"f32[2,2]", L("f32[2,2]", "{{2, 7}, {1, 2}}")},
                        {"f32[2,1]", L("f32[2,1]", "{{2}, {5}}")}})),
            "f32[2,1] {{1}, {2}}");
  // x [[2,0],[1,2]]^T = [[4, 6]]: x A^T with A^T = [[2,1],[0,2]] -> x = [[2, 2]].
  EXPECT_EQ(Str(EvalOp("f32[1,2]",
                       "triangular-solve(p0, p1), left_side=false, lower=true, transpose_a=TRANSPOSE",
                       {{"f32[2,2]", L("f32[2,2]", "{{2, 0}, {1, 2}}")},
                        {"f32[1,2]", L("f32[1,2]", "{{4, 6}}")}})),
            "f32[1,2] {{2, 2}}");
  EXPECT_EQ(Str(EvalOp("f32[2,1]",
                       "triangular-solve(p0, p1), left_side=true, lower=false, unit_diagonal=true, "
                       "transpose_a=NO_TRANSPOSE",
                       {{"f32[2,2]", L("f32[2,2]", "{{5, 3}, {0, 5}}")},
                        {"f32[2,1]", L("f32[2,1]", "{{7}, {2}}")}})),
            "f32[2,1] {{1}, {2}}");
}

TEST(RngTest, DeterministicAndInRange) {
  auto run = [] {
    return EvalOp("f32[1000]", "rng(p0, p1), distribution=rng_uniform",
                  {{"f32[]", L("f32[]", "2")}, {"f32[]", L("f32[]", "3")}});
  };
  absl::StatusOr<Literal> a = run(), b = run();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(*a == *b);
  for (int64_t i = 0; i < a->element_count(); ++i) {
    ASSERT_GE(a->GetAsDouble(i), 2);
    ASSERT_LT(a->GetAsDouble(i), 3);
  }
  // rng-bit-generator's XLA bit-exactness is checked in
  // evaluator_rng_bit_generator_test.cc.
}

TEST(RandomArgumentsTest, DeterministicNonZeroAndIndexAware) {
  const char* text = R"(
HloModule m
ENTRY e {
  x = f32[10,4] parameter(0)
  i = s32[] parameter(1)
  ids = s64[6,1] parameter(2)
  d = f32[3,4] dynamic-slice(x, i, s32[] constant(0)), dynamic_slice_sizes={3,4}
  g = f32[6,4] gather(x, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  ROOT t = (f32[3,4], f32[6,4]) tuple(d, g)
}
)";
  auto module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto a = MakeRandomArguments(**module, seed);
    auto b = MakeRandomArguments(**module, seed);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->size(), 3u);
    EXPECT_TRUE((*a)[0] == (*b)[0]);
    EXPECT_GE((*a)[1].GetAsInt64(0), 0);
    EXPECT_LE((*a)[1].GetAsInt64(0), 7);  // 10 - 3
    for (int64_t k = 0; k < 6; ++k) {
      EXPECT_GE((*a)[2].GetAsInt64(k), 0);
      EXPECT_LT((*a)[2].GetAsInt64(k), 10);
    }
  }
  auto c = MakeRandomArguments(**module, 1), d = MakeRandomArguments(**module, 2);
  EXPECT_FALSE((*c)[0] == (*d)[0]);
  auto zero_ok = MakeRandomLiteral(Shape(xla::S8, {1}), 5);
  ASSERT_TRUE(zero_ok.ok());
  auto single = MakeRandomLiteral(Shape(xla::PRED, {1}), 0);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->GetAsInt64(0), 1);  // Never all zeros.
}

TEST(CompareLiteralsTest, TolerancesNaNAndWorstElement) {
  Literal e = L("f32[2,2]", "{{1, 2}, {nan, inf}}");
  EXPECT_TRUE(CompareLiterals(e, L("f32[2,2]", "{{1.000001, 2}, {nan, inf}}")).ok);
  ComparisonReport r = CompareLiterals(e, L("f32[2,2]", "{{1, 2.1}, {nan, inf}}"));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.worst_index, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(r.worst_actual, "2.1");
  EXPECT_NE(r.ToString().find("[0,1]"), std::string::npos) << r.ToString();
  EXPECT_FALSE(CompareLiterals(e, L("f32[2,2]", "{{1, 2}, {0, inf}}")).ok);
  EXPECT_FALSE(CompareLiterals(e, L("f32[2,2]", "{{1, 2}, {nan, -inf}}")).ok);
  Tolerance loose;
  loose.rtol = 0.1;
  EXPECT_TRUE(CompareLiterals(e, L("f32[2,2]", "{{1, 2.1}, {nan, inf}}"), loose).ok);
  EXPECT_TRUE(CompareLiterals(L("bf16[1]", "{1}"), L("bf16[1]", "{1.0078125}")).ok);
  EXPECT_FALSE(CompareLiterals(L("s32[1]", "{1}"), L("s32[1]", "{2}")).ok);
  ComparisonReport shape = CompareLiterals(L("s32[1]", "{1}"), L("s32[2]", "{1, 1}"));
  EXPECT_FALSE(shape.ok);
  EXPECT_NE(shape.message.find("shape mismatch"), std::string::npos);
  std::vector<Literal> t1, t2;
  t1.push_back(L("f32[1]", "{1}"));
  t1.push_back(L("s32[1]", "{3}"));
  t2.push_back(L("f32[1]", "{1}"));
  t2.push_back(L("s32[1]", "{4}"));
  ComparisonReport tuple = CompareLiterals(Literal::Tuple(std::move(t1)), Literal::Tuple(std::move(t2)));
  EXPECT_FALSE(tuple.ok);
  EXPECT_EQ(tuple.worst_tuple_index, (std::vector<int64_t>{1}));
}

}  // namespace
}  // namespace hloc

namespace hloc {
namespace {

TEST(FftTest, ForwardInverseRealTransforms) {
  EXPECT_EQ(Str(EvalOp("c64[4]", "fft(p0), fft_type=FFT, fft_length={4}",
                       {{"c64[4]", L("c64[4]", "{(1, 0), (0, 0), (0, 0), (0, 0)}")}})),
            "c64[4] {(1, 0), (1, 0), (1, 0), (1, 0)}");
  absl::StatusOr<Literal> f = EvalOp("c64[4]", "fft(p0), fft_type=FFT, fft_length={4}",
                                     {{"c64[4]", L("c64[4]", "{(1, 0), (2, 0), (3, 0), (4, 0)}")}});
  ASSERT_TRUE(f.ok()) << f.status();
  // DFT of 1,2,3,4: 10, -2+2i, -2, -2-2i.
  const std::complex<double> want[] = {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}};
  for (int i = 0; i < 4; ++i) EXPECT_LT(std::abs(f->GetAsComplex(i) - want[i]), 1e-5);
  absl::StatusOr<Literal> r = EvalOp("c64[3]", "fft(p0), fft_type=RFFT, fft_length={4}",
                                     {{"f32[4]", L("f32[4]", "{1, 2, 3, 4}")}});
  ASSERT_TRUE(r.ok()) << r.status();
  for (int i = 0; i < 3; ++i) EXPECT_LT(std::abs(r->GetAsComplex(i) - want[i]), 1e-5);
  absl::StatusOr<Literal> ir = EvalOp("f32[4]", "fft(p0), fft_type=IRFFT, fft_length={4}",
                                      {{"c64[3]", L("c64[3]", "{(10, 0), (-2, 2), (-2, 0)}")}});
  ASSERT_TRUE(ir.ok()) << ir.status();
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(ir->GetAsDouble(i), i + 1, 1e-5);
  absl::StatusOr<Literal> inv = EvalOp("c64[2,2]", "fft(p0), fft_type=IFFT, fft_length={2,2}",
                                       {{"c64[2,2]", L("c64[2,2]", "{{(4, 0), (0, 0)}, {(0, 0), (0, 0)}}")}});
  ASSERT_TRUE(inv.ok()) << inv.status();
  for (int i = 0; i < 4; ++i) EXPECT_LT(std::abs(inv->GetAsComplex(i) - std::complex<double>(1, 0)), 1e-6);
}

}  // namespace
}  // namespace hloc
