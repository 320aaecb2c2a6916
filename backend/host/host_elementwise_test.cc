// Elementwise ops on the host against the interpreter, bit for bit: float
// math on NaN/inf/-0.0 in f16, bf16, f32 and f64; integer wraparound,
// division by zero, shifts and powers; compare (with TOTALORDER); every
// convert between supported types; select, clamp, bitcast-convert and
// reduce-precision; stochastic-convert; exp around its underflow bound. The exceptions are the
// f32-computed exp, expm1, log, logistic and tanh, which the host emits as
// polynomials (backend/llvm/polynomial_math.h): within a few ulps by default,
// and bit for bit with KernelCompilerOptions::exact_math (libm).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "backend/host/host_test_util.h"
#include "gtest/gtest.h"

namespace hloc {
namespace {

using host_testing::ExpectExact;
using host_testing::ExpectWithinUlps;
using host_testing::ParseLiteralText;

constexpr int kCount = 20;
const char* kFloatsA =
    "{0, -0, 1, -1, 0.5, -2.5, 3.5, 1e30, -1e-30, inf, -inf, nan, 100, -100, 2, 1e-8, 0.75, "
    "-0.3, 7, 65519}";
const char* kFloatsB =
    "{-0, 0, 2, 3, -0.5, 2.5, -1.5, 1e-30, 1e30, inf, nan, -inf, 0.01, 3, -2, 1e8, 0.25, 0.3, "
    "-7, 1.5}";

const char* kFloatTypes[] = {"f32", "f64", "f16", "bf16"};

std::string UnaryModule(const std::string& in_type, const std::string& out_type,
                        const std::string& op, int count, const std::string& attrs = "") {
  return absl::StrCat("HloModule m\nENTRY e {\n  p = ", in_type, "[", count,
                      "] parameter(0)\n  ROOT r = ", out_type, "[", count, "] ", op, "(p)", attrs,
                      "\n}\n");
}

std::string BinaryModule(const std::string& in_type, const std::string& out_type,
                         const std::string& op, int count, const std::string& attrs = "") {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", in_type, "[", count,
                      "] parameter(0)\n  b = ", in_type, "[", count,
                      "] parameter(1)\n  ROOT r = ", out_type, "[", count, "] ", op, "(a, b)",
                      attrs, "\n}\n");
}

// f16 cannot hold the large magnitudes of the shared value lists.
Literal Values(const std::string& type, int count, const char* values) {
  std::string text = values;
  if (type == "f16") {
    text = absl::StrReplaceAll(text, {{"1e30", "6e4"}, {"1e8", "5e4"}, {"1e10", "3e4"},
                                      {"3e38", "6e4"}, {"1e300", "6e4"}, {"1e-310", "1e-9"},
                                      {"1e-30", "1e-7"}, {"1e-40", "3e-8"}});
  }
  return ParseLiteralText(absl::StrCat(type, "[", count, "] ", text));
}

RunOnHostOptions ExactMathOptions() {
  return host_testing::WithExactMath(host_testing::TestOptions());
}

bool IsPolynomialOp(const std::string& op) {
  return op == "exponential" || op == "exponential-minus-one" || op == "log" ||
         op == "log-plus-one" || op == "erf" || op == "logistic" || op == "tanh";
}

// The polynomials' f32 bound (polynomial_math.h: at most 2.5 ulps from the
// correctly rounded result, log1p 3) plus libm's own error on the
// interpreter's side; f16 and bf16 round the f32 result once more, so they
// may land 1 ulp of their type away; f64 still calls libm.
int64_t PolynomialUlps(const std::string& type, const std::string& op) {
  if (type == "f32") return op == "log-plus-one" ? 4 : 3;
  if (type == "f64") return 0;
  return 1;
}

TEST(HostElementwiseTest, FloatUnaryOps) {
  const char* ops[] = {"abs", "negate", "sign", "ceil", "floor", "round-nearest-afz",
                       "round-nearest-even", "exponential", "exponential-minus-one", "log",
                       "log-plus-one", "logistic", "sqrt", "rsqrt", "cbrt", "sine", "cosine",
                       "tan", "tanh", "erf", "copy"};
  for (const char* type : kFloatTypes) {
    for (const char* op : ops) {
      SCOPED_TRACE(absl::StrCat(op, " on ", type));
      const std::string hlo = UnaryModule(type, type, op, kCount);
      if (IsPolynomialOp(op)) {
        ExpectWithinUlps(hlo, {Values(type, kCount, kFloatsA)}, PolynomialUlps(type, op));
        ExpectExact(hlo, {Values(type, kCount, kFloatsA)}, ExactMathOptions());
      } else {
        ExpectExact(hlo, {Values(type, kCount, kFloatsA)});
      }
    }
    SCOPED_TRACE(absl::StrCat("is-finite on ", type));
    ExpectExact(UnaryModule(type, "pred", "is-finite", kCount), {Values(type, kCount, kFloatsA)});
  }
}

// exp skips libm below its underflow bound (kernels return +0 there
// directly); around the bound and in the denormal range the results must
// still be libm's, bit for bit (exact math; the polynomial within its ulps).
TEST(HostElementwiseTest, ExponentialAroundUnderflow) {
  const char* f32 =
      "{-87.3, -100, -103.9, -103.97, -103.972, -103.9721, -103.98, -104, -104.0001, -105, "
      "-1e30, -3.4028235e38, -inf, nan, 0, -0, 88.7, 88.8, -745, -0.5}";
  const char* f64 =
      "{-708, -740, -745.1, -745.13, -745.1332, -745.2, -746, -746.0001, -750, -1e300, "
      "-inf, nan, 0, -0, 709.7, 709.8, -103.98, -104.5, -1, -0.5}";
  ExpectExact(UnaryModule("f32", "f32", "exponential", kCount), {Values("f32", kCount, f32)},
              ExactMathOptions());
  ExpectWithinUlps(UnaryModule("f32", "f32", "exponential", kCount),
                   {Values("f32", kCount, f32)}, PolynomialUlps("f32", "exponential"));
  ExpectExact(UnaryModule("f64", "f64", "exponential", kCount), {Values("f64", kCount, f64)});
}

TEST(HostElementwiseTest, FloatBinaryOps) {
  const char* ops[] = {"add", "subtract", "multiply", "divide", "remainder",
                       "maximum", "minimum", "power", "atan2"};
  for (const char* type : kFloatTypes) {
    for (const char* op : ops) {
      SCOPED_TRACE(absl::StrCat(op, " on ", type));
      ExpectExact(BinaryModule(type, type, op, kCount),
                  {Values(type, kCount, kFloatsA), Values(type, kCount, kFloatsB)});
    }
  }
}

TEST(HostElementwiseTest, FloatCompareIncludingTotalOrder) {
  const char* directions[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  // Both orders of each pair, and signed zeros and NaNs against each other.
  const char* a = "{0, -0, 1, nan, -nan, inf, -inf, 2, -0, nan, 1, 0, -1, 3, inf, 5, -5, nan, 0, -0}";
  const char* b = "{-0, 0, nan, 1, nan, -inf, inf, 2, -0, -nan, 1, 0, -2, 3, nan, 4, -4, -inf, 0, 0}";
  for (const char* type : kFloatTypes) {
    for (const char* direction : directions) {
      for (const char* total : {"", ", type=TOTALORDER"}) {
        SCOPED_TRACE(absl::StrCat(direction, total, " on ", type));
        ExpectExact(BinaryModule(type, "pred", "compare", kCount,
                                 absl::StrCat(", direction=", direction, total)),
                    {Values(type, kCount, a), Values(type, kCount, b)});
      }
    }
  }
}

struct IntType {
  const char* name;
  const char* a;
  const char* b;
};

// Extremes, zero divisors, MIN / -1, and shift amounts at and past the width.
const IntType kIntTypes[] = {
    {"s8", "{0, 1, -1, 127, -128, 5, -7, 100, -100, 3, -128, 64, 2, -2, 9, 1, -3, 0, 77, -1}",
     "{0, -1, 1, 1, -1, 2, 3, 8, 7, -3, 0, 9, 7, 6, -1, 100, 2, 5, -9, 8}"},
    {"s16", "{0, 1, -1, 32767, -32768, 5, -7, 1000, -1000, 3, -32768, 64, 2, -2, 9, 1, -3, 0, 77, -1}",
     "{0, -1, 1, 1, -1, 2, 3, 16, 15, -3, 0, 17, 7, 6, -1, 100, 2, 5, -9, 16}"},
    {"s32", "{0, 1, -1, 2147483647, -2147483648, 5, -7, 100000, -100000, 3, -2147483648, 64, 2, -2, 9, 1, -3, 0, 77, -1}",
     "{0, -1, 1, 1, -1, 2, 3, 32, 31, -3, 0, 33, 7, 6, -1, 100, 2, 5, -9, 32}"},
    {"s64", "{0, 1, -1, 9223372036854775807, -9223372036854775808, 5, -7, 10000000000, -100000, 3, -9223372036854775808, 64, 2, -2, 9, 1, -3, 0, 77, -1}",
     "{0, -1, 1, 1, -1, 2, 3, 64, 63, -3, 0, 65, 7, 6, -1, 100, 2, 5, -9, 64}"},
    {"u8", "{0, 1, 255, 128, 7, 200, 3, 17, 254, 9, 0, 64, 2, 250, 9, 1, 3, 0, 77, 255}",
     "{0, 255, 1, 1, 2, 3, 8, 7, 9, 0, 9, 7, 6, 100, 2, 5, 200, 8, 3, 128}"},
    {"u16", "{0, 1, 65535, 32768, 7, 200, 3, 17, 65534, 9, 0, 64, 2, 250, 9, 1, 3, 0, 77, 65535}",
     "{0, 65535, 1, 1, 2, 3, 16, 15, 9, 0, 17, 7, 6, 100, 2, 5, 200, 16, 3, 128}"},
    {"u32", "{0, 1, 4294967295, 2147483648, 7, 200, 3, 17, 4294967294, 9, 0, 64, 2, 250, 9, 1, 3, 0, 77, 4294967295}",
     "{0, 4294967295, 1, 1, 2, 3, 32, 31, 9, 0, 33, 7, 6, 100, 2, 5, 200, 32, 3, 128}"},
    {"u64", "{0, 1, 18446744073709551615, 9223372036854775808, 7, 200, 3, 17, 18446744073709551614, 9, 0, 64, 2, 250, 9, 1, 3, 0, 77, 18446744073709551615}",
     "{0, 18446744073709551615, 1, 1, 2, 3, 64, 63, 9, 0, 65, 7, 6, 100, 2, 5, 200, 64, 3, 128}"},
};

TEST(HostElementwiseTest, IntegerOps) {
  const char* unary[] = {"negate", "abs", "not", "sign", "count-leading-zeros", "popcnt", "copy"};
  const char* binary[] = {"add", "subtract", "multiply", "divide", "remainder", "maximum",
                          "minimum", "power", "and", "or", "xor", "shift-left",
                          "shift-right-logical", "shift-right-arithmetic"};
  for (const IntType& t : kIntTypes) {
    for (const char* op : unary) {
      // abs and sign take signed operands only (the verifier's rule, as XLA's).
      const bool is_unsigned = t.name[0] == 'u';
      if (is_unsigned && (std::string(op) == "abs" || std::string(op) == "sign")) continue;
      SCOPED_TRACE(absl::StrCat(op, " on ", t.name));
      ExpectExact(UnaryModule(t.name, t.name, op, kCount), {Values(t.name, kCount, t.a)});
    }
    for (const char* op : binary) {
      SCOPED_TRACE(absl::StrCat(op, " on ", t.name));
      ExpectExact(BinaryModule(t.name, t.name, op, kCount),
                  {Values(t.name, kCount, t.a), Values(t.name, kCount, t.b)});
    }
    for (const char* direction : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      SCOPED_TRACE(absl::StrCat("compare ", direction, " on ", t.name));
      ExpectExact(BinaryModule(t.name, "pred", "compare", kCount,
                               absl::StrCat(", direction=", direction)),
                  {Values(t.name, kCount, t.a), Values(t.name, kCount, t.b)});
    }
  }
}

TEST(HostElementwiseTest, PredOps) {
  const char* a = "{0, 0, 1, 1}";
  const char* b = "{0, 1, 0, 1}";
  ExpectExact(UnaryModule("pred", "pred", "not", 4), {Values("pred", 4, a)});
  for (const char* op : {"and", "or", "xor", "add", "multiply", "maximum", "minimum", "power",
                         "subtract", "divide", "remainder"}) {
    SCOPED_TRACE(op);
    ExpectExact(BinaryModule("pred", "pred", op, 4), {Values("pred", 4, a), Values("pred", 4, b)});
  }
  for (const char* direction : {"EQ", "NE", "LT", "GT"}) {
    ExpectExact(BinaryModule("pred", "pred", "compare", 4, absl::StrCat(", direction=", direction)),
                {Values("pred", 4, a), Values("pred", 4, b)});
  }
}

TEST(HostElementwiseTest, ConvertBetweenAllTypes) {
  const char* targets[] = {"pred", "s8", "s16", "s32", "s64", "u8", "u16",
                           "u32", "u64", "f16", "bf16", "f32", "f64"};
  struct Source {
    const char* type;
    const char* values;
  };
  const Source sources[] = {
      {"f32", "{0, -0, 1.5, -1.5, 2.5, -2.5, 1e10, -1e10, 3e38, -3e38, inf, -inf, nan, 255.9, "
              "-129, 65504, 65520, 1e-40, 0.1, 4294967296}"},
      {"f64", "{0, -0, 1.5, -1.5, 2.5, -2.5, 1e10, -1e10, 1e300, -1e300, inf, -inf, nan, 255.9, "
              "-129, 65504, 65519.99, 1e-310, 0.1, 1.00000011920928955078125}"},
      {"f16", "{0, -0, 1.5, -1.5, 2.5, -2.5, 1000, -1000, 65504, -65504, inf, -inf, nan, 255.9, "
              "-129, 6e-8, 0.1, 0.3, 7, -7}"},
      {"bf16", "{0, -0, 1.5, -1.5, 2.5, -2.5, 1e10, -1e10, 3e38, -3e38, inf, -inf, nan, 255, "
               "-129, 65536, 1e-39, 0.1, 7, -7}"},
      {"s32", "{0, 1, -1, 2147483647, -2147483648, 255, 256, -129, 65504, 65520, 16777217, "
              "-16777217, 100, 7, 3, 2049, -2049, 1000000, 5, 9}"},
      {"s64", "{0, 1, -1, 9223372036854775807, -9223372036854775808, 255, 256, -129, 65504, "
              "65520, 9007199254740993, -9007199254740993, 100, 7, 3, 2049, -2049, 1000000, "
              "4294967296, 9}"},
      {"u64", "{0, 1, 18446744073709551615, 9223372036854775808, 255, 256, 65504, 65520, "
              "9007199254740993, 100, 7, 3, 2049, 1000000, 4294967296, 9, 16777217, 33, 1, 2}"},
      {"u8", "{0, 1, 255, 128, 127, 7, 200, 3, 17, 254, 9, 0, 64, 2, 250, 9, 1, 3, 0, 77}"},
      {"s8", "{0, 1, -1, 127, -128, 5, -7, 100, -100, 3, -128, 64, 2, -2, 9, 1, -3, 0, 77, -1}"},
      {"u32", "{0, 1, 4294967295, 2147483648, 7, 16777217, 3, 17, 4294967294, 9, 0, 64, 2, "
              "250, 9, 1, 3, 0, 77, 65520}"},
      {"pred", "{0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1, 0, 1}"},
  };
  for (const Source& source : sources) {
    // One module per source type: a tuple of all conversions (one kernel).
    std::string text = absl::StrCat("HloModule m\nENTRY e {\n  p = ", source.type, "[", kCount,
                                    "] parameter(0)\n");
    std::string root = "  ROOT t = (";
    std::string operands;
    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); ++i) {
      absl::StrAppend(&text, "  c", i, " = ", targets[i], "[", kCount, "] convert(p)\n");
      absl::StrAppend(&root, i ? ", " : "", targets[i], "[", kCount, "]");
      absl::StrAppend(&operands, i ? ", " : "", "c", i);
    }
    absl::StrAppend(&text, root, ") tuple(", operands, ")\n}\n");
    SCOPED_TRACE(absl::StrCat("convert from ", source.type));
    ExpectExact(text, {Values(source.type, kCount, source.values)});
  }
}

TEST(HostElementwiseTest, SelectAndClampWithScalarOperands) {
  for (const char* type : kFloatTypes) {
    SCOPED_TRACE(type);
    const std::string text = absl::StrReplaceAll(R"(
HloModule m
ENTRY e {
  x = $T[20] parameter(0)
  y = $T[20] parameter(1)
  lo = $T[] constant(-1)
  hi = $T[] constant(2)
  c = $T[20] clamp(lo, x, hi)
  p = pred[20] compare(x, y), direction=LT
  s = $T[20] select(p, c, y)
  nan = $T[] constant(nan)
  c2 = $T[20] clamp(x, y, nan)
  ROOT t = ($T[20], $T[20], $T[20]) tuple(s, c, c2)
})", {{"$T", type}});
    ExpectExact(text, {Values(type, kCount, kFloatsA), Values(type, kCount, kFloatsB)});
  }
  const std::string ints = R"(
HloModule m
ENTRY e {
  x = s32[20] parameter(0)
  lo = s32[] constant(-5)
  hi = s32[20] parameter(1)
  ROOT c = s32[20] clamp(lo, x, hi)
})";
  ExpectExact(ints, {Values("s32", kCount, kIntTypes[2].a), Values("s32", kCount, kIntTypes[2].b)});
}

TEST(HostElementwiseTest, BitcastConvertAndReducePrecision) {
  ExpectExact(UnaryModule("f32", "s32", "bitcast-convert", kCount), {Values("f32", kCount, kFloatsA)});
  ExpectExact(UnaryModule("f64", "u64", "bitcast-convert", kCount), {Values("f64", kCount, kFloatsA)});
  ExpectExact(UnaryModule("bf16", "s16", "bitcast-convert", kCount), {Values("bf16", kCount, kFloatsA)});
  ExpectExact(UnaryModule("s16", "f16", "bitcast-convert", kCount), {Values("s16", kCount, kIntTypes[1].a)});
  for (const char* type : kFloatTypes) {
    for (const char* bits : {"exponent_bits=5, mantissa_bits=10", "exponent_bits=8, mantissa_bits=7",
                             "exponent_bits=4, mantissa_bits=0", "exponent_bits=11, mantissa_bits=52"}) {
      SCOPED_TRACE(absl::StrCat(type, " ", bits));
      ExpectExact(UnaryModule(type, type, "reduce-precision", kCount, absl::StrCat(", ", bits)),
                  {Values(type, kCount, kFloatsA)});
    }
  }
}

// bitcast-convert between widths adds or drops a minor dimension (the narrow
// parts of a wide element, in memory order). Alone, and inside one loop
// fusion behind and ahead of index remaps (reshape, transpose, reverse), as
// the rng-bit-generator expansion emits it. Without the emitter's remap these
// fell back to the interpreter (refused here) or read an index of the wrong
// rank.
TEST(HostElementwiseTest, BitcastConvertBetweenWidths) {
  ExpectExact(R"(HloModule m
ENTRY e {
  p = u8[2,3,4] parameter(0)
  w = s32[2,3] bitcast-convert(p)
  q = f64[3] parameter(1)
  n = u16[3,4] bitcast-convert(q)
  ROOT t = (s32[2,3], u16[3,4]) tuple(w, n)
})",
              {ParseLiteralText("u8[2,3,4] {{{1,2,3,4},{255,0,0,128},{9,8,7,6}},"
                                "{{0,0,0,0},{255,255,255,255},{17,0,1,0}}}"),
               ParseLiteralText("f64[3] {1.5, -0, nan}")});
  ExpectExact(R"(HloModule m
%fused (p: u8[24], f: f32[6], h: bf16[4,2]) -> (u8[3,2,4], f32[3,2], bf16[4,2]) {
  %p = u8[24] parameter(0)
  %r = u8[2,3,4] reshape(%p)
  %w = s32[2,3] bitcast-convert(%r)
  %t = s32[3,2] transpose(%w), dimensions={1,0}
  %s = s32[3,2] add(%t, %t)
  %b = u8[3,2,4] bitcast-convert(%s)
  %rev = u8[3,2,4] reverse(%b), dimensions={2}
  %f = f32[6] parameter(1)
  %fr = f32[3,2] reshape(%f)
  %d = f64[3] bitcast-convert(%fr)
  %neg = f64[3] negate(%d)
  %back = f32[3,2] bitcast-convert(%neg)
  %h = bf16[4,2] parameter(2)
  %hw = f32[4] bitcast-convert(%h)
  %two = f32[] constant(2)
  %twos = f32[4] broadcast(%two), dimensions={}
  %m = f32[4] multiply(%hw, %twos)
  %hn = bf16[4,2] bitcast-convert(%m)
  ROOT %out = (u8[3,2,4], f32[3,2], bf16[4,2]) tuple(%rev, %back, %hn)
}
ENTRY e {
  p = u8[24] parameter(0)
  f = f32[6] parameter(1)
  h = bf16[4,2] parameter(2)
  ROOT r = (u8[3,2,4], f32[3,2], bf16[4,2]) fusion(p, f, h), kind=kLoop, calls=%fused
})",
              {ParseLiteralText("u8[24] {1,2,3,4,255,0,0,128,9,8,7,6,0,0,0,0,255,255,255,255,"
                                "17,0,1,0}"),
               ParseLiteralText("f32[6] {1, -2, 0.5, 3e38, -0, inf}"),
               ParseLiteralText("bf16[4,2] {{1, 2}, {-0, 0}, {0.5, -3}, {inf, 1e-3}}")});
}

// stochastic-convert: values with fractions, at and past the result's
// limits, NaN and infinities, with random words below and above each
// fraction.
TEST(HostElementwiseTest, StochasticConvert) {
  struct Case {
    const char* in;
    const char* bits;
    const char* out;
  };
  for (const Case& c : {Case{"f32", "u32", "s32"}, Case{"f32", "u32", "s8"},
                        Case{"f64", "u64", "s16"}, Case{"f16", "u16", "s8"},
                        Case{"bf16", "u16", "s16"}, Case{"f64", "u64", "s64"}}) {
    SCOPED_TRACE(absl::StrCat(c.in, " -> ", c.out));
    const std::string text = absl::StrCat(
        "HloModule m\nENTRY e {\n  a = ", c.in, "[20] parameter(0)\n  b = ", c.bits,
        "[20] parameter(1)\n  ROOT r = ", c.out, "[20] stochastic-convert(a, b)\n}\n");
    const char* words = "{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}";
    Literal random = Values(c.bits, kCount, words);
    // Random words spread over the whole range: index * (max / 19).
    for (int64_t i = 0; i < kCount; ++i) {
      const int bits = std::string(c.bits) == "u16" ? 16 : std::string(c.bits) == "u32" ? 32 : 64;
      const uint64_t max = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      random.SetFromUint64(i, max / 19 * static_cast<uint64_t>(i));
    }
    ExpectExact(text, {Values(c.in, kCount,
                              "{0.5, -0.5, 1.25, -1.75, 2.5, 127.5, -128.5, 126.9, -127.9, 1e10, "
                              "-1e10, inf, -inf, nan, -0, 0, 0.001, -3.999, 32767.5, 100.3}"),
                       random});
  }
}

}  // namespace
}  // namespace hloc
