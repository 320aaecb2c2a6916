// s4/u4 and the f8/f4 kinds on the host with no interpreter fallback. Converts
// are checked against hlo/float_formats.h (NarrowFloatToDouble,
// DoubleToNarrowFloat) and the literal's own sub-byte rules: f32 -> each
// narrow float -> f32 on values around every rounding case, chains of narrow
// -> narrow converts, integers to and from s4/u4 (wrapping) and floats to
// s4/u4 (saturating), and data movement of s4. Arithmetic (which the pipeline
// upcasts, passes/expanders/narrow_type_upcasting.h) is checked against the
// interpreter bit for bit, on arguments that cover every code.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/host/host_test_util.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/float_formats.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

using host_testing::ExpectExactAfterPipeline;
using host_testing::RandomArgs;
using host_testing::TestOptions;

absl::StatusOr<Literal> RunHost(const std::string& hlo, const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(hlo);
  if (!module.ok()) return module.status();
  return RunOnHost(**module, args, TestOptions());
}

std::string Chain(const std::vector<std::string>& types, int64_t n) {
  std::string text = absl::StrCat("HloModule m\nENTRY e {\n  v0 = ", types[0], "[", n,
                                  "] parameter(0)\n");
  for (size_t i = 1; i < types.size(); ++i) {
    absl::StrAppend(&text, "  ", i + 1 == types.size() ? "ROOT " : "", "v", i, " = ", types[i],
                    "[", n, "] convert(v", i - 1, ")\n");
  }
  return text + "}\n";
}

// Every code's value, its neighbours' midpoints and a little either side,
// zeros, infinities, NaN and values far out of range.
std::vector<float> Probes(PrimitiveType type) {
  std::vector<float> probes = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f, 1e-30f};
  const int count = 1 << BitWidth(type);
  std::vector<double> values;
  for (int code = 0; code < count; ++code) {
    const double v = NarrowFloatToDouble(type, static_cast<uint8_t>(code));
    if (std::isfinite(v)) values.push_back(v);
  }
  for (double v : values) {
    probes.push_back(static_cast<float>(v));
    for (double w : values) {
      const double mid = (v + w) / 2;
      probes.push_back(static_cast<float>(mid));
      probes.push_back(std::nextafter(static_cast<float>(mid), INFINITY));
      probes.push_back(std::nextafter(static_cast<float>(mid), -INFINITY));
    }
  }
  return probes;
}

TEST(HostNarrowTypesTest, NarrowFloatConvertsFollowFloatFormats) {
  for (PrimitiveType type : {xla::F8E5M2, xla::F8E4M3FN, xla::F8E4M3FNUZ, xla::F8E5M2FNUZ,
                             xla::F8E4M3, xla::F8E3M4, xla::F8E8M0FNU, xla::F4E2M1FN}) {
    const std::string name(PrimitiveTypeName(type));
    const std::vector<float> probes = Probes(type);
    const int64_t n = static_cast<int64_t>(probes.size());
    absl::StatusOr<Literal> input = Literal::Create(Shape(xla::F32, {n}));
    ASSERT_TRUE(input.ok());
    for (int64_t i = 0; i < n; ++i) input->mutable_data<float>()[i] = probes[i];
    // f32 -> narrow (its bits) and f32 -> narrow -> f32.
    absl::StatusOr<Literal> bits = RunHost(Chain({"f32", name}, n), {*input});
    ASSERT_TRUE(bits.ok()) << name << ": " << bits.status();
    absl::StatusOr<Literal> round_trip = RunHost(Chain({"f32", name, "f32"}, n), {*input});
    ASSERT_TRUE(round_trip.ok()) << name << ": " << round_trip.status();
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t expected = DoubleToNarrowFloat(type, probes[i]);
      ASSERT_EQ(bits->raw()[i], expected) << name << " of " << probes[i];
      const float back = static_cast<float>(NarrowFloatToDouble(type, expected));
      const float actual = round_trip->data<float>()[i];
      if (std::isnan(back)) {
        EXPECT_TRUE(std::isnan(actual)) << name << " of " << probes[i];
      } else {
        EXPECT_EQ(std::signbit(actual), std::signbit(back)) << name << " of " << probes[i];
        EXPECT_EQ(actual, back) << name << " of " << probes[i];
      }
    }
  }
}

TEST(HostNarrowTypesTest, ChainsOfNarrowConvertsFollowFloatFormats) {
  const std::vector<std::string> chain = {"f32",      "f8e5m2",   "f8e4m3fn", "f8e4m3fnuz",
                                          "f8e5m2fnuz", "f8e4m3", "f8e3m4",   "f4e2m1fn",
                                          "f32"};
  const std::vector<PrimitiveType> types = {xla::F8E5M2,     xla::F8E4M3FN, xla::F8E4M3FNUZ,
                                            xla::F8E5M2FNUZ, xla::F8E4M3,   xla::F8E3M4,
                                            xla::F4E2M1FN};
  const std::vector<float> probes = {0.0f, -0.0f, 0.3f, -1.7f, 2.5f, 5.9f, -6.2f, 100.0f, NAN,
                                     INFINITY, 0.01f, 3.25f};
  const int64_t n = static_cast<int64_t>(probes.size());
  absl::StatusOr<Literal> input = Literal::Create(Shape(xla::F32, {n}));
  ASSERT_TRUE(input.ok());
  for (int64_t i = 0; i < n; ++i) input->mutable_data<float>()[i] = probes[i];
  absl::StatusOr<Literal> out = RunHost(Chain(chain, n), {*input});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t i = 0; i < n; ++i) {
    double v = probes[i];
    for (PrimitiveType t : types) v = NarrowFloatToDouble(t, DoubleToNarrowFloat(t, v));
    const float actual = out->data<float>()[i];
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(actual)) << probes[i];
    } else {
      EXPECT_EQ(actual, static_cast<float>(v)) << probes[i];
    }
  }
}

TEST(HostNarrowTypesTest, SubByteIntegersWrapAndSaturate) {
  const std::vector<int32_t> ints = {-20, -9, -8, -7, -1, 0, 1, 7, 8, 15, 16, 17, 100};
  const int64_t n = static_cast<int64_t>(ints.size());
  absl::StatusOr<Literal> input = Literal::Create(Shape(xla::S32, {n}));
  ASSERT_TRUE(input.ok());
  for (int64_t i = 0; i < n; ++i) input->mutable_data<int32_t>()[i] = ints[i];
  for (const char* type : {"s4", "u4"}) {
    const bool is_signed = std::string(type) == "s4";
    absl::StatusOr<Literal> out = RunHost(Chain({"s32", type, "s32"}, n), {*input});
    ASSERT_TRUE(out.ok()) << type << ": " << out.status();
    absl::StatusOr<Literal> floats = RunHost(Chain({"s32", "f32", type, "s32"}, n), {*input});
    ASSERT_TRUE(floats.ok()) << type << ": " << floats.status();
    for (int64_t i = 0; i < n; ++i) {
      const int32_t low = ints[i] & 15;
      const int32_t wrapped = is_signed && low >= 8 ? low - 16 : low;
      EXPECT_EQ(out->data<int32_t>()[i], wrapped) << type << " of " << ints[i];
      const int32_t saturated = is_signed ? std::min(7, std::max(-8, ints[i]))
                                          : std::min(15, std::max(0, ints[i]));
      EXPECT_EQ(floats->data<int32_t>()[i], saturated) << type << " of " << ints[i];
    }
  }
  // s4 data movement and a constant, against the interpreter.
  const std::string broadcast = R"(HloModule m
ENTRY e {
  x = s4[3] constant({-2, -3, 7})
  p = s4[3,5] parameter(0)
  b = s4[3,5] broadcast(x), dimensions={0}
  t = s4[5,3] transpose(p), dimensions={1,0}
  r = s4[5,3] reverse(t), dimensions={0}
  ROOT o = (s4[3,5], s4[5,3]) tuple(b, r)
}
)";
  host_testing::ExpectExact(
      broadcast, {host_testing::ParseLiteralText(
                     "s4[3,5] {{-8, -7, -1, 0, 7}, {1, 2, 3, 4, 5}, {-2, -3, -4, -5, -6}}")});
}

// Parameters of `shape` whose position k holds code (k * (2i + 1) + i) mod
// 2^bits for parameter i: every code, and many pairs of codes.
std::vector<Literal> EveryCode(const Shape& shape, int count) {
  std::vector<Literal> arguments;
  const int64_t codes = int64_t{1} << BitWidth(shape.element_type());
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<Literal> literal = Literal::Create(shape);
    EXPECT_TRUE(literal.ok());
    for (int64_t k = 0; k < literal->element_count(); ++k) {
      const int64_t code = (k * (2 * i + 1) + i) % codes;
      if (IsInteger(shape.element_type())) {
        literal->SetFromInt64(k, code);
      } else {
        literal->mutable_raw()[k] = static_cast<uint8_t>(code);
      }
    }
    arguments.push_back(*std::move(literal));
  }
  return arguments;
}

std::string ElementwiseModule(const std::string& type, const std::string& result,
                              const std::string& op) {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", type, "[256] parameter(0)\n  b = ", type,
                      "[256] parameter(1)\n  ROOT r = ", result, "[256] ", op, "\n}\n");
}

// bf16 sums and products in reductions and windows, bit for bit with the
// interpreter: a reduce's sum accumulates in double, products and windows
// (cumsum as a running reduction) in f32, and each output rounds once
// (UpcastNarrowTypeArithmetic widens them). Long windows and rows make
// rounding at every step differ in most elements.
TEST(HostNarrowTypesTest, HalfReductionsRoundOnceLikeTheInterpreter) {
  const std::string hlo = R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
mul {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] multiply(a, b)
}
ENTRY e {
  x = bf16[64,33] parameter(0)
  zero = bf16[] constant(0)
  one = bf16[] constant(1)
  wsum = bf16[64,9] reduce-window(x, zero), window={size=1x25}, to_apply=add
  wprod = bf16[64,9] reduce-window(x, one), window={size=1x25}, to_apply=mul
  cumsum = bf16[64,33] reduce-window(x, zero), window={size=64x1 pad=63_0x0_0}, to_apply=add
  rsum = bf16[33] reduce(x, zero), dimensions={0}, to_apply=add
  rprod = bf16[64] reduce(x, one), dimensions={1}, to_apply=mul
  cprod = bf16[33] reduce(x, one), dimensions={0}, to_apply=mul
  ROOT out = (bf16[64,9], bf16[64,9], bf16[64,33], bf16[33], bf16[64], bf16[33]) tuple(wsum, wprod, cumsum, rsum, rprod, cprod)
})";
  ExpectExactAfterPipeline(hlo, RandomArgs(hlo));
}

TEST(HostNarrowTypesTest, NarrowFloatArithmeticMatchesTheInterpreter) {
  for (PrimitiveType type : {xla::F8E5M2, xla::F8E4M3FN, xla::F8E4M3FNUZ, xla::F8E5M2FNUZ,
                             xla::F8E4M3B11FNUZ, xla::F8E4M3, xla::F8E3M4, xla::F8E8M0FNU,
                             xla::F4E2M1FN}) {
    const std::string name(PrimitiveTypeName(type));
    const std::vector<Literal> args = EveryCode(Shape(type, {256}), 2);
    for (const char* op : {"add(a, b)", "subtract(a, b)", "multiply(a, b)", "divide(a, b)",
                           "maximum(a, b)", "minimum(a, b)", "sqrt(a)", "negate(a)", "abs(a)",
                           "floor(a)", "sign(a)", "round-nearest-even(a)", "clamp(b, a, b)"}) {
      SCOPED_TRACE(absl::StrCat(name, " ", op));
      ExpectExactAfterPipeline(ElementwiseModule(name, name, op), args);
    }
    for (const char* op : {"exponential(a)", "tanh(a)", "power(a, b)"}) {
      SCOPED_TRACE(absl::StrCat(name, " ", op));
      ExpectExactAfterPipeline(ElementwiseModule(name, name, op), args,
                                host_testing::WithExactMath(TestOptions()));
    }
    // real and imag of a real number: itself and +0.
    for (const char* op : {"real(a)", "imag(a)"}) {
      SCOPED_TRACE(absl::StrCat(name, " ", op));
      ExpectExactAfterPipeline(ElementwiseModule(name, name, op), args);
    }
    SCOPED_TRACE(name);
    ExpectExactAfterPipeline(ElementwiseModule(name, "pred", "compare(a, b), direction=LT"),
                              args);
    ExpectExactAfterPipeline(ElementwiseModule(name, "pred", "compare(a, b), direction=EQ"),
                              args);
  }
}

TEST(HostNarrowTypesTest, SubByteIntegerArithmeticMatchesTheInterpreter) {
  for (PrimitiveType type : {xla::S4, xla::U4}) {
    const std::string name(PrimitiveTypeName(type));
    const std::vector<Literal> args = EveryCode(Shape(type, {256}), 2);
    for (const char* op :
         {"add(a, b)", "subtract(a, b)", "multiply(a, b)", "divide(a, b)", "remainder(a, b)",
          "maximum(a, b)", "minimum(a, b)", "power(a, b)", "and(a, b)", "or(a, b)", "xor(a, b)",
          "shift-left(a, b)", "shift-right-arithmetic(a, b)", "negate(a)", "not(a)",
          "clamp(b, a, b)"}) {
      SCOPED_TRACE(absl::StrCat(name, " ", op));
      ExpectExactAfterPipeline(ElementwiseModule(name, name, op), args);
    }
    if (type == xla::S4) {
      ExpectExactAfterPipeline(ElementwiseModule(name, name, "abs(a)"), args);
      ExpectExactAfterPipeline(ElementwiseModule(name, name, "sign(a)"), args);
    }
    SCOPED_TRACE(name);
    ExpectExactAfterPipeline(ElementwiseModule(name, "pred", "compare(a, b), direction=LT"),
                              args);
  }
  // popcnt, shift-right-logical and clz read s4's own 4 bits (zero-extended
  // by the upcast; clz then drops the 4 zeros the extension added), with no
  // interpreter fallback.
  const std::vector<Literal> args = EveryCode(Shape(xla::S4, {256}), 2);
  ExpectExactAfterPipeline(ElementwiseModule("s4", "s4", "popcnt(a)"), args);
  ExpectExactAfterPipeline(ElementwiseModule("s4", "s4", "shift-right-logical(a, b)"), args);
  ExpectExactAfterPipeline(ElementwiseModule("s4", "s4", "count-leading-zeros(a)"), args);
  ExpectExactAfterPipeline(ElementwiseModule("u4", "u4", "count-leading-zeros(a)"),
                            EveryCode(Shape(xla::U4, {256}), 2));
}

TEST(HostNarrowTypesTest, ReductionsAndDotsOnNarrowTypesMatchTheInterpreter) {
  // A max reduction is exact in any order; the add reduction sums 0s and 1s,
  // whose partial sums f8e5m2 holds exactly, so the order cannot matter.
  const std::string reduce = R"(HloModule m
max {
  x = f8e4m3fn[] parameter(0)
  y = f8e4m3fn[] parameter(1)
  ROOT m = f8e4m3fn[] maximum(x, y)
}
add {
  x = f8e5m2[] parameter(0)
  y = f8e5m2[] parameter(1)
  ROOT s = f8e5m2[] add(x, y)
}
ENTRY e {
  a = f8e4m3fn[16,16] parameter(0)
  b = f8e5m2[4,8] parameter(1)
  z = f8e4m3fn[] constant(-448)
  zb = f8e5m2[] constant(0)
  r = f8e4m3fn[16] reduce(a, z), dimensions={1}, to_apply=max
  s = f8e5m2[4] reduce(b, zb), dimensions={1}, to_apply=add
  ROOT t = (f8e4m3fn[16], f8e5m2[4]) tuple(r, s)
}
)";
  std::vector<Literal> args = EveryCode(Shape(xla::F8E4M3FN, {16, 16}), 1);
  args.push_back(host_testing::ParseLiteralText(
      "f8e5m2[4,8] {{1, 0, 1, 1, 0, 1, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0}, "
      "{1, 1, 1, 1, 1, 1, 1, 1}, {0, 1, 0, 1, 0, 1, 0, 0}}"));
  ExpectExactAfterPipeline(reduce, args);
  // s4 dots wrap like the interpreter's; f8 products are exact in f32 and
  // these sums of eight stay within f32's 24 bits.
  const std::string dots = R"(HloModule m
ENTRY e {
  a = s4[4,8] parameter(0)
  b = s4[8,3] parameter(1)
  c = f8e4m3fn[4,8] parameter(2)
  d = f8e5m2[8,3] parameter(3)
  p = s4[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  q = f32[4,3] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s4[4,3], f32[4,3]) tuple(p, q)
}
)";
  ExpectExactAfterPipeline(
      dots, {EveryCode(Shape(xla::S4, {4, 8}), 1)[0], EveryCode(Shape(xla::S4, {8, 3}), 2)[1],
             host_testing::ParseLiteralText("f8e4m3fn[4,8] {{1, 2, -3, 0.5, 4, -1, 1.5, 2}, "
                                            "{0, 1, 1, 1, 1, 1, 1, 1}, {-2, 2, -2, 2, 3, 3, 3, 3}, "
                                            "{0.25, 0.5, 1, 2, 4, 8, 16, 32}}"),
             host_testing::ParseLiteralText("f8e5m2[8,3] {{1, 2, 3}, {4, -1, 0.5}, {1, 1, 1}, "
                                            "{2, 2, 2}, {-1, 0, 1}, {0.5, 0.25, 1}, {1, 2, 4}, "
                                            "{8, 1, 0}}")});
}

}  // namespace
}  // namespace hloc
