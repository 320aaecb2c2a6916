// Unit tests of the evaluator's elementwise ops with hand-checked values:
// XLA's integer rules (wraparound, division by zero, shifts), NaN, inf and
// -0.0 handling, f16/bf16 rounding, conversions, compare (incl. total
// order), select and clamp.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/evaluator_test_util.h"
#include "hlo/evaluator/fast_half.h"
#include "hlo/float_formats.h"

namespace hloc {
namespace {

using testing_util::EvalOp;
using testing_util::L;
using testing_util::Str;

std::string Unary(const std::string& op, const std::string& shape, const std::string& in,
                  const std::string& out_shape = "") {
  const std::string out = out_shape.empty() ? shape : out_shape;
  return Str(EvalOp(out, op + "(p0)", {{shape, L(shape, in)}}));
}

std::string Binary(const std::string& op, const std::string& shape, const std::string& a,
                   const std::string& b, const std::string& out_shape = "",
                   const std::string& attrs = "") {
  const std::string out = out_shape.empty() ? shape : out_shape;
  return Str(EvalOp(out, op + "(p0, p1)" + attrs, {{shape, L(shape, a)}, {shape, L(shape, b)}}));
}

TEST(ElementwiseTest, FloatArithmetic) {
  EXPECT_EQ(Binary("add", "f32[3]", "{1, 2.5, -3}", "{4, 0.5, 3}"), "f32[3] {5, 3, 0}");
  EXPECT_EQ(Binary("subtract", "f32[2]", "{1, 0}", "{4, 0}"), "f32[2] {-3, 0}");
  EXPECT_EQ(Binary("multiply", "f32[2]", "{1.5, -0}", "{4, 3}"), "f32[2] {6, -0}");
  EXPECT_EQ(Binary("divide", "f32[4]", "{1, 1, -1, 0}", "{4, 0, 0, 0}"),
            "f32[4] {0.25, inf, -inf, -nan}");  // x86's default NaN has the sign set.
  EXPECT_EQ(Binary("remainder", "f32[2]", "{5.5, -5.5}", "{2, 2}"), "f32[2] {1.5, -1.5}");
  EXPECT_EQ(Binary("power", "f32[3]", "{2, 1, 0}", "{10, nan, 0}"), "f32[3] {1024, 1, 1}");
  EXPECT_EQ(Binary("atan2", "f64[2]", "{1, -0}", "{1, -1}"),
            "f64[2] {0.7853981633974483, -3.141592653589793}");
  EXPECT_EQ(Binary("add", "f64[1]", "{0.1}", "{0.2}"), "f64[1] {0.30000000000000004}");
}

TEST(ElementwiseTest, MaximumMinimumPropagateNaN) {
  EXPECT_EQ(Binary("maximum", "f32[4]", "{1, nan, 3, -inf}", "{2, 1, nan, -5}"),
            "f32[4] {2, nan, nan, -5}");
  EXPECT_EQ(Binary("minimum", "f32[4]", "{1, nan, 3, inf}", "{2, 1, nan, 5}"),
            "f32[4] {1, nan, nan, 5}");
  EXPECT_EQ(Binary("maximum", "s32[2]", "{-5, 7}", "{3, -9}"), "s32[2] {3, 7}");
  EXPECT_EQ(Binary("minimum", "u8[2]", "{5, 200}", "{3, 255}"), "u8[2] {3, 200}");
}

TEST(ElementwiseTest, IntegerWraparound) {
  EXPECT_EQ(Binary("add", "s32[2]", "{2147483647, -2147483648}", "{1, -1}"),
            "s32[2] {-2147483648, 2147483647}");
  EXPECT_EQ(Binary("multiply", "s8[2]", "{100, -128}", "{3, -1}"), "s8[2] {44, -128}");
  EXPECT_EQ(Binary("add", "u8[2]", "{250, 0}", "{10, 0}"), "u8[2] {4, 0}");
  EXPECT_EQ(Binary("subtract", "u32[1]", "{0}", "{1}"), "u32[1] {4294967295}");
  EXPECT_EQ(Binary("multiply", "u16[1]", "{65535}", "{65535}"), "u16[1] {1}");
  EXPECT_EQ(Unary("negate", "s32[2]", "{-2147483648, 5}"), "s32[2] {-2147483648, -5}");
  EXPECT_EQ(Unary("abs", "s8[3]", "{-128, -3, 4}"), "s8[3] {-128, 3, 4}");
  EXPECT_EQ(Binary("add", "s64[1]", "{9223372036854775807}", "{1}"),
            "s64[1] {-9223372036854775808}");
}

TEST(ElementwiseTest, IntegerDivisionFollowsXla) {
  // x / 0 = -1 (all ones), INT_MIN / -1 = INT_MIN, truncation toward zero.
  EXPECT_EQ(Binary("divide", "s32[4]", "{7, -7, 5, -2147483648}", "{2, 2, 0, -1}"),
            "s32[4] {3, -3, -1, -2147483648}");
  EXPECT_EQ(Binary("divide", "u32[2]", "{7, 5}", "{2, 0}"), "u32[2] {3, 4294967295}");
  // x % 0 = x, INT_MIN % -1 = 0, sign follows the dividend.
  EXPECT_EQ(Binary("remainder", "s32[4]", "{7, -7, 5, -2147483648}", "{3, 3, 0, -1}"),
            "s32[4] {1, -1, 5, 0}");
  EXPECT_EQ(Binary("remainder", "u8[2]", "{200, 9}", "{0, 4}"), "u8[2] {200, 1}");
}

TEST(ElementwiseTest, IntegerPower) {
  EXPECT_EQ(Binary("power", "s32[5]", "{2, 3, 1, -2, 5}", "{10, 0, -3, 3, -1}"),
            "s32[5] {1024, 1, 1, -8, 0}");
  EXPECT_EQ(Binary("power", "u8[1]", "{3}", "{6}"), "u8[1] {217}");  // 729 mod 256
}

TEST(ElementwiseTest, ShiftsWithOutOfRangeAmounts) {
  EXPECT_EQ(Binary("shift-left", "s32[4]", "{1, 1, 1, -1}", "{3, 31, 32, -1}"),
            "s32[4] {8, -2147483648, 0, 0}");
  EXPECT_EQ(Binary("shift-right-logical", "s32[3]", "{-1, 16, -1}", "{28, 2, 32}"),
            "s32[3] {15, 4, 0}");
  EXPECT_EQ(Binary("shift-right-arithmetic", "s32[4]", "{-16, 16, -1, 5}", "{2, 2, 40, 99}"),
            "s32[4] {-4, 4, -1, 0}");
  EXPECT_EQ(Binary("shift-right-arithmetic", "u8[2]", "{128, 128}", "{1, 8}"),
            "u8[2] {192, 255}");
  EXPECT_EQ(Binary("shift-left", "u8[2]", "{255, 1}", "{1, 8}"), "u8[2] {254, 0}");
}

TEST(ElementwiseTest, BitwiseAndPred) {
  EXPECT_EQ(Binary("and", "u8[2]", "{12, 255}", "{10, 15}"), "u8[2] {8, 15}");
  EXPECT_EQ(Binary("or", "s32[1]", "{12}", "{3}"), "s32[1] {15}");
  EXPECT_EQ(Binary("xor", "s32[1]", "{12}", "{10}"), "s32[1] {6}");
  EXPECT_EQ(Binary("and", "pred[4]", "{0, 0, 1, 1}", "{0, 1, 0, 1}"),
            "pred[4] {false, false, false, true}");
  EXPECT_EQ(Binary("or", "pred[4]", "{0, 0, 1, 1}", "{0, 1, 0, 1}"),
            "pred[4] {false, true, true, true}");
  EXPECT_EQ(Binary("xor", "pred[4]", "{0, 0, 1, 1}", "{0, 1, 0, 1}"),
            "pred[4] {false, true, true, false}");
  EXPECT_EQ(Unary("not", "pred[2]", "{0, 1}"), "pred[2] {true, false}");
  // Division of preds follows the unsigned integer rules on one bit: x / 0
  // is all ones (true), x % 0 = x, x / 1 = x, x % 1 = 0.
  EXPECT_EQ(Binary("divide", "pred[4]", "{0, 0, 1, 1}", "{0, 1, 0, 1}"),
            "pred[4] {true, false, true, true}");
  EXPECT_EQ(Binary("remainder", "pred[4]", "{0, 0, 1, 1}", "{0, 1, 0, 1}"),
            "pred[4] {false, false, true, false}");
  EXPECT_EQ(Unary("not", "s8[2]", "{0, 5}"), "s8[2] {-1, -6}");
}

TEST(ElementwiseTest, IntegerUnary) {
  EXPECT_EQ(Unary("popcnt", "s32[3]", "{0, -1, 7}"), "s32[3] {0, 32, 3}");
  EXPECT_EQ(Unary("popcnt", "u8[1]", "{255}"), "u8[1] {8}");
  EXPECT_EQ(Unary("count-leading-zeros", "s32[4]", "{0, 1, -1, 65536}"), "s32[4] {32, 31, 0, 15}");
  EXPECT_EQ(Unary("count-leading-zeros", "u8[2]", "{1, 128}"), "u8[2] {7, 0}");
  EXPECT_EQ(Unary("sign", "s32[3]", "{-7, 0, 9}"), "s32[3] {-1, 0, 1}");
}

TEST(ElementwiseTest, FloatUnary) {
  EXPECT_EQ(Unary("sign", "f32[5]", "{-2, -0, 0, 3, nan}"), "f32[5] {-1, -0, 0, 1, nan}");
  EXPECT_EQ(Unary("abs", "f32[3]", "{-2, -0, -inf}"), "f32[3] {2, 0, inf}");
  EXPECT_EQ(Unary("negate", "f32[2]", "{0, -inf}"), "f32[2] {-0, inf}");
  EXPECT_EQ(Unary("round-nearest-afz", "f32[5]", "{0.5, 1.5, 2.5, -2.5, -0.4}"),
            "f32[5] {1, 2, 3, -3, -0}");
  EXPECT_EQ(Unary("round-nearest-even", "f32[5]", "{0.5, 1.5, 2.5, -2.5, -0.4}"),
            "f32[5] {0, 2, 2, -2, -0}");
  EXPECT_EQ(Unary("floor", "f32[2]", "{-1.5, 1.5}"), "f32[2] {-2, 1}");
  EXPECT_EQ(Unary("ceil", "f32[2]", "{-1.5, 1.5}"), "f32[2] {-1, 2}");
  EXPECT_EQ(Unary("sqrt", "f32[3]", "{4, -1, inf}"), "f32[3] {2, -nan, inf}");
  EXPECT_EQ(Unary("rsqrt", "f32[3]", "{4, 0, inf}"), "f32[3] {0.5, inf, 0}");
  {
    absl::StatusOr<Literal> r = EvalOp("f64[2]", "cbrt(p0)", {{"f64[2]", L("f64[2]", "{-27, 8}")}});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NEAR(r->GetAsDouble(0), -3, 1e-15);
    EXPECT_NEAR(r->GetAsDouble(1), 2, 1e-15);
  }
  EXPECT_EQ(Unary("exponential", "f32[2]", "{0, -inf}"), "f32[2] {1, 0}");
  EXPECT_EQ(Unary("log", "f32[3]", "{1, 0, -1}"), "f32[3] {0, -inf, -nan}");
  EXPECT_EQ(Unary("exponential-minus-one", "f64[2]", "{0, 1e-20}"), "f64[2] {0, 1e-20}");
  EXPECT_EQ(Unary("log-plus-one", "f64[2]", "{0, 1e-20}"), "f64[2] {0, 1e-20}");
  EXPECT_EQ(Unary("logistic", "f32[3]", "{0, inf, -inf}"), "f32[3] {0.5, 1, 0}");
  EXPECT_EQ(Unary("tanh", "f32[3]", "{0, inf, -inf}"), "f32[3] {0, 1, -1}");
  EXPECT_EQ(Unary("erf", "f32[3]", "{0, inf, -inf}"), "f32[3] {0, 1, -1}");
  EXPECT_EQ(Unary("is-finite", "f32[4]", "{1, inf, nan, -0}", "pred[4]"),
            "pred[4] {true, false, false, true}");
  EXPECT_EQ(Unary("sine", "f64[1]", "{0}"), "f64[1] {0}");
  EXPECT_EQ(Unary("cosine", "f64[1]", "{0}"), "f64[1] {1}");
  EXPECT_EQ(Unary("tan", "f64[1]", "{0}"), "f64[1] {0}");
}

TEST(ElementwiseTest, NarrowFloatsRoundEachResult) {
  // bf16 has 8 significant bits: 1 + 2^-8 is a tie and rounds to even (1).
  EXPECT_EQ(Binary("add", "bf16[2]", "{1, 256}", "{0.00390625, 1}"), "bf16[2] {1, 256}");
  EXPECT_EQ(Binary("add", "bf16[1]", "{1}", "{0.01171875}"), "bf16[1] {1.015625}");
  // f16 overflows to inf past 65504.
  EXPECT_EQ(Binary("multiply", "f16[2]", "{65504, 300}", "{2, 300}"), "f16[2] {inf, inf}");
  EXPECT_EQ(Binary("add", "f16[1]", "{2048}", "{1}"), "f16[1] {2048}");
  EXPECT_EQ(Binary("divide", "f16[1]", "{1}", "{3}"), "f16[1] {0.33325195}");
  EXPECT_EQ(Unary("sqrt", "bf16[1]", "{2}"), "bf16[1] {1.4140625}");
}

TEST(ElementwiseTest, F8AndF4ComputeInFloatAndRoundOnce) {
  // f8e4m3fn has 3 mantissa bits: 1 + 1/16 and 2 + 1/8 are ties, to even.
  EXPECT_EQ(Binary("add", "f8e4m3fn[2]", "{1, 2}", "{0.0625, 0.125}"), "f8e4m3fn[2] {1, 2}");
  EXPECT_EQ(Binary("multiply", "f8e5m2[2]", "{1.5, -3}", "{1.5, 0.5}"),
            "f8e5m2[2] {2, -1.5}");
  EXPECT_EQ(Binary("compare", "f4e2m1fn[3]", "{0.5, 6, -1}", "{1, 6, -1.5}", "pred[3]",
                   ", direction=LT"),
            "pred[3] {true, false, false}");
  EXPECT_EQ(Unary("sqrt", "f8e4m3fn[1]", "{2}"), "f8e4m3fn[1] {1.375}");
  EXPECT_EQ(Unary("convert", "f8e4m3fn[2]", "{1.5, -0.25}", "f32[2]"), "f32[2] {1.5, -0.25}");
}

TEST(ElementwiseTest, S4AndU4WrapToFourBits) {
  EXPECT_EQ(Binary("multiply", "s4[2]", "{7, -8}", "{2, -1}"), "s4[2] {-2, -8}");
  EXPECT_EQ(Binary("add", "u4[2]", "{15, 7}", "{1, 1}"), "u4[2] {0, 8}");
  EXPECT_EQ(Binary("divide", "s4[3]", "{-8, 7, 5}", "{-1, 0, 2}"), "s4[3] {-8, -1, 2}");
  EXPECT_EQ(Unary("negate", "s4[2]", "{-8, 3}"), "s4[2] {-8, -3}");
  // Ops that see the bit width: 4 bits, not the 8 they are computed in.
  EXPECT_EQ(Unary("count-leading-zeros", "s4[3]", "{1, -1, 0}"), "s4[3] {3, 0, 4}");
  EXPECT_EQ(Unary("count-leading-zeros", "u4[2]", "{1, 15}"), "u4[2] {3, 0}");
  EXPECT_EQ(Unary("popcnt", "s4[2]", "{-1, 5}"), "s4[2] {4, 2}");
  EXPECT_EQ(Binary("shift-right-logical", "s4[3]", "{-1, -8, -1}", "{1, 3, 4}"),
            "s4[3] {7, 1, 0}");
  EXPECT_EQ(Binary("shift-left", "s4[2]", "{3, 1}", "{2, 4}"), "s4[2] {-4, 0}");
  EXPECT_EQ(Unary("convert", "f32[4]", "{100, -100, 3.7, nan}", "s4[4]"), "s4[4] {7, -8, 3, 0}");
  EXPECT_EQ(Unary("convert", "s32[2]", "{17, -9}", "s4[2]"), "s4[2] {1, 7}");
  EXPECT_EQ(Unary("convert", "s4[2]", "{-1, 7}", "u4[2]"), "u4[2] {15, 7}");
}

TEST(ElementwiseTest, CompareDirectionsAndNaN) {
  EXPECT_EQ(Binary("compare", "f32[4]", "{1, 2, nan, -0}", "{2, 2, nan, 0}", "pred[4]",
                   ", direction=LT"),
            "pred[4] {true, false, false, false}");
  EXPECT_EQ(Binary("compare", "f32[3]", "{nan, 1, -0}", "{nan, 1, 0}", "pred[3]",
                   ", direction=NE"),
            "pred[3] {true, false, false}");
  EXPECT_EQ(Binary("compare", "f32[2]", "{nan, 1}", "{nan, 1}", "pred[2]", ", direction=EQ"),
            "pred[2] {false, true}");
  EXPECT_EQ(Binary("compare", "s32[3]", "{-1, 5, 5}", "{1, 5, 4}", "pred[3]", ", direction=GE"),
            "pred[3] {false, true, true}");
  EXPECT_EQ(Binary("compare", "u32[2]", "{4294967295, 1}", "{1, 1}", "pred[2]",
                   ", direction=GT"),
            "pred[2] {true, false}");
  EXPECT_EQ(Binary("compare", "c64[2]", "{(1, 2), (1, 2)}", "{(1, 2), (1, 3)}", "pred[2]",
                   ", direction=EQ"),
            "pred[2] {true, false}");
}

TEST(ElementwiseTest, CompareTotalOrder) {
  // -NaN < -inf < -1 < -0 < +0 < 1 < inf < NaN.
  EXPECT_EQ(Binary("compare", "f32[5]", "{-0, -inf, 1, nan, -nan}", "{0, -1, inf, inf, -inf}",
                   "pred[5]", ", direction=LT, type=TOTALORDER"),
            "pred[5] {true, true, true, false, true}");
  EXPECT_EQ(Binary("compare", "f32[2]", "{nan, -0}", "{nan, 0}", "pred[2]",
                   ", direction=EQ, type=TOTALORDER"),
            "pred[2] {true, false}");
  EXPECT_EQ(Binary("compare", "f64[1]", "{-0}", "{0}", "pred[1]",
                   ", direction=GE, type=TOTALORDER"),
            "pred[1] {false}");
}

TEST(ElementwiseTest, ConvertSaturatesAndRounds) {
  EXPECT_EQ(Unary("convert", "f32[6]", "{1.9, -1.9, 1e10, -1e10, nan, inf}", "s32[6]"),
            "s32[6] {1, -1, 2147483647, -2147483648, 0, 2147483647}");
  EXPECT_EQ(Unary("convert", "f32[3]", "{-5, 300, 255.9}", "u8[3]"), "u8[3] {0, 255, 255}");
  EXPECT_EQ(Unary("convert", "s32[3]", "{300, -1, 127}", "s8[3]"), "s8[3] {44, -1, 127}");
  EXPECT_EQ(Unary("convert", "s32[2]", "{-1, 2}", "u32[2]"), "u32[2] {4294967295, 2}");
  EXPECT_EQ(Unary("convert", "f32[4]", "{0, -0, nan, 0.1}", "pred[4]"),
            "pred[4] {false, false, true, true}");
  EXPECT_EQ(Unary("convert", "pred[2]", "{1, 0}", "f32[2]"), "f32[2] {1, 0}");
  EXPECT_EQ(Unary("convert", "s32[1]", "{16777217}", "f32[1]"), "f32[1] {16777216}");
  EXPECT_EQ(Unary("convert", "f32[2]", "{1.00390625, 65520}", "bf16[2]"), "bf16[2] {1, 65536}");
  EXPECT_EQ(Unary("convert", "f32[2]", "{65520, 0.1}", "f16[2]"), "f16[2] {inf, 0.099975586}");
  EXPECT_EQ(Unary("convert", "f64[1]", "{1e300}", "f32[1]"), "f32[1] {inf}");
  EXPECT_EQ(Unary("convert", "s64[1]", "{-9223372036854775808}", "f64[1]"),
            "f64[1] {-9223372036854775808}");
  EXPECT_EQ(Unary("convert", "f32[1]", "{2.5}", "c64[1]"), "c64[1] {(2.5, 0)}");
}

TEST(ElementwiseTest, BitcastConvert) {
  EXPECT_EQ(Unary("bitcast-convert", "f32[2]", "{1, -0}", "s32[2]"),
            "s32[2] {1065353216, -2147483648}");
  EXPECT_EQ(Unary("bitcast-convert", "u32[1]", "{2143289344}", "f32[1]"), "f32[1] {nan}");
  EXPECT_EQ(Unary("bitcast-convert", "f32[1]", "{1}", "u8[1,4]"), "u8[1,4] {{0, 0, 128, 63}}");
  EXPECT_EQ(Unary("bitcast-convert", "u16[2,2]", "{{1, 0}, {0, 1}}", "u32[2]"),
            "u32[2] {1, 65536}");
}

TEST(ElementwiseTest, ReducePrecision) {
  EXPECT_EQ(Str(EvalOp("f32[4]", "reduce-precision(p0), exponent_bits=8, mantissa_bits=7",
                       {{"f32[4]", L("f32[4]", "{1.00390625, 1.01171875, nan, 3}")}})),
            "f32[4] {1, 1.015625, nan, 3}");
  // f16 range: 1e5 overflows to inf, 1e-10 flushes to zero.
  EXPECT_EQ(Str(EvalOp("f32[3]", "reduce-precision(p0), exponent_bits=5, mantissa_bits=10",
                       {{"f32[3]", L("f32[3]", "{100000, 1e-10, -2}")}})),
            "f32[3] {inf, 0, -2}");
}

TEST(ElementwiseTest, ComplexOps) {
  EXPECT_EQ(Binary("multiply", "c64[1]", "{(1, 2)}", "{(3, 4)}"), "c64[1] {(-5, 10)}");
  EXPECT_EQ(Unary("abs", "c64[1]", "{(3, 4)}", "f32[1]"), "f32[1] {5}");
  EXPECT_EQ(Unary("real", "c128[1]", "{(3, 4)}", "f64[1]"), "f64[1] {3}");
  EXPECT_EQ(Unary("imag", "c128[1]", "{(3, 4)}", "f64[1]"), "f64[1] {4}");
  EXPECT_EQ(Binary("complex", "f32[1]", "{1}", "{-2}", "c64[1]"), "c64[1] {(1, -2)}");
  EXPECT_EQ(Unary("sign", "c64[2]", "{(3, 4), (0, 0)}"), "c64[2] {(0.6, 0.8), (0, 0)}");
}

TEST(ElementwiseTest, SelectAndClamp) {
  EXPECT_EQ(Str(EvalOp("f32[3]", "select(p0, p1, p2)",
                       {{"pred[3]", L("pred[3]", "{1, 0, 1}")},
                        {"f32[3]", L("f32[3]", "{1, 2, 3}")},
                        {"f32[3]", L("f32[3]", "{-1, -2, -3}")}})),
            "f32[3] {1, -2, 3}");
  EXPECT_EQ(Str(EvalOp("f32[4]", "clamp(p0, p1, p2)",
                       {{"f32[]", L("f32[]", "0")},
                        {"f32[4]", L("f32[4]", "{-1, 0.5, 7, nan}")},
                        {"f32[]", L("f32[]", "6")}})),
            "f32[4] {0, 0.5, 6, nan}");
  EXPECT_EQ(Str(EvalOp("s32[3]", "clamp(p0, p1, p2)",
                       {{"s32[3]", L("s32[3]", "{0, 0, 5}")},
                        {"s32[3]", L("s32[3]", "{-4, 9, 1}")},
                        {"s32[3]", L("s32[3]", "{3, 3, 8}")}})),
            "s32[3] {0, 3, 5}");
}

TEST(ElementwiseTest, ZeroElementShapes) {
  absl::StatusOr<Literal> r = EvalOp("f32[0,3]", "add(p0, p1)",
                                     {{"f32[0,3]", Literal(Shape(xla::F32, {0, 3}))},
                                      {"f32[0,3]", Literal(Shape(xla::F32, {0, 3}))}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape().ToString(false), "f32[0,3]");
  EXPECT_EQ(r->element_count(), 0);
  EXPECT_EQ(Unary("negate", "s32[0]", "{}"), "s32[0] {}");
  r = EvalOp("s8[2,0]", "convert(p0)", {{"f32[2,0]", Literal(Shape(xla::F32, {2, 0}))}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape().ToString(false), "s8[2,0]");
}

TEST(ElementwiseTest, FastHalfConversionMatchesReference) {
  uint32_t state = 12345;
  int mismatches = 0;
  for (int i = 0; i < 2000000 && mismatches < 5; ++i) {
    state = state * 1664525u + 1013904223u;
    // Mostly values near the f16 range, plus arbitrary bit patterns.
    uint32_t bits = (i % 2) ? state : ((state & 0x807fffffu) | (((state >> 23) % 40 + 100) << 23));
    float f;
    std::memcpy(&f, &bits, 4);
    if (eval::FastFloatToHalf(f) != FloatToHalf(f)) {
      ++mismatches;
      ADD_FAILURE() << "bits " << std::hex << bits << ": fast " << eval::FastFloatToHalf(f)
                    << " reference " << FloatToHalf(f);
    }
  }
  for (float f : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 5.9604645e-8f, 2.9802322e-8f,
                  2.9802326e-8f, 6.1035156e-5f, 6.1035152e-5f, INFINITY, -INFINITY}) {
    EXPECT_EQ(eval::FastFloatToHalf(f), FloatToHalf(f)) << f;
  }
}

TEST(ElementwiseTest, TypeErrorsAreReported) {
  std::string r = Binary("shift-left", "f32[1]", "{1}", "{1}");
  EXPECT_NE(r.find("ERROR"), std::string::npos) << r;
  EXPECT_NE(r.find("%r"), std::string::npos) << r;
}

}  // namespace
}  // namespace hloc
