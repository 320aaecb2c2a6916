// The host's inline f32 exp, expm1, tanh, log, log1p, erf and logistic
// (backend/llvm/polynomial_math.h) run as host kernels: their error over a
// dense sweep of the whole f32 line against the function computed in double,
// in ulps of the f32 result, must stay within the header's bounds; special
// values (NaN, infinities, signed zeros, overflow and underflow thresholds,
// denormal inputs and results) must come out exactly.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/base/casts.h"
#include "absl/strings/str_cat.h"
#include "backend/host/host_test_util.h"
#include "backend/host/run_on_host.h"
#include "backend/llvm/polynomial_math.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

struct Function {
  const char* op;
  std::function<double(double)> reference;
  double max_ulp;
  // Inputs below are not measured (see logistic).
  float min_input = -std::numeric_limits<float>::infinity();
};

const Function kFunctions[] = {
    {"exponential", [](double x) { return std::exp(x); }, codegen::kExpMaxUlp},
    {"exponential-minus-one", [](double x) { return std::expm1(x); }, codegen::kExpm1MaxUlp},
    {"tanh", [](double x) { return std::tanh(x); }, codegen::kTanhMaxUlp},
    {"log", [](double x) { return std::log(x); }, codegen::kLogMaxUlp},
    {"log-plus-one", [](double x) { return std::log1p(x); }, codegen::kLog1pMaxUlp},
    {"erf", [](double x) { return std::erf(x); }, codegen::kErfMaxUlp},
    // 1 / (1 + exp(-x)): exp's error plus an add and a divide. Below
    // -88.72 exp(-x) overflows and the formula gives 0 where the function is
    // a denormal, with libm's exp too (the interpreter's result is the same 0).
    {"logistic", [](double x) { return 1 / (1 + std::exp(-x)); }, codegen::kExpMaxUlp + 1.5,
     -88.72f},
};

std::string Module(const char* op, int64_t n) {
  return absl::StrCat("HloModule m\nENTRY e {\n  p = f32[", n, "] parameter(0)\n  ROOT r = f32[",
                      n, "] ", op, "(p)\n}\n");
}

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

Literal F32Literal(const std::vector<float>& values) {
  absl::StatusOr<Shape> shape = ParseShape(absl::StrCat("f32[", values.size(), "]"));
  EXPECT_TRUE(shape.ok());
  absl::StatusOr<Literal> literal = Literal::Create(*shape);
  EXPECT_TRUE(literal.ok());
  std::memcpy(literal->mutable_raw(), values.data(), values.size() * sizeof(float));
  return *std::move(literal);
}

std::vector<float> Floats(const Literal& literal) {
  std::vector<float> values(literal.element_count());
  std::memcpy(values.data(), literal.raw(), values.size() * sizeof(float));
  return values;
}

// Error of `actual` in ulps of the f32 nearest `exact`, for finite f32
// results; infinite results must be exactly those of rounding `exact`.
double UlpError(double exact, float actual) {
  const float rounded = static_cast<float>(exact);
  if (std::isnan(exact)) return std::isnan(actual) ? 0 : INFINITY;
  if (std::isinf(rounded) || std::isinf(actual)) return rounded == actual ? 0 : INFINITY;
  int exponent = 0;
  std::frexp(exact, &exponent);  // exact = m * 2^exponent, m in [0.5, 1).
  const int ulp_exponent = std::max(exponent - 1, -126) - 23;
  return std::fabs(static_cast<double>(actual) - exact) / std::ldexp(1.0, ulp_exponent);
}

RunOnHostOptions PolynomialOptions() {
  RunOnHostOptions options = host_testing::TestOptions();
  host::KernelCompilerOptions kernel;
  kernel.exact_math = false;
  absl::StatusOr<std::shared_ptr<host::KernelCompiler>> compiler =
      host::KernelCompiler::Create(kernel);
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  options.compile.compiler = compiler.ok() ? *compiler : nullptr;
  options.num_threads = 0;
  return options;
}

// Every 97th bit pattern (97 is odd and prime, so the sweep meets every
// mantissa residue and both signs), ~44 million inputs per function.
TEST(PolynomialMathTest, UlpErrorOverDenseSweepIsWithinBound) {
  if (std::getenv("HLOC_HOST_EXACT_MATH") != nullptr) GTEST_SKIP() << "exact math forced on";
  constexpr uint64_t kStride = 97;
  constexpr int64_t kBatch = int64_t{1} << 21;
  RunOnHostOptions options = PolynomialOptions();
  ASSERT_NE(options.compile.compiler, nullptr);
  for (const Function& function : kFunctions) {
    std::unique_ptr<HloModule> module = Parse(Module(function.op, kBatch));
    ASSERT_NE(module, nullptr);
    double worst = 0;
    float worst_input = 0;
    float worst_output = 0;
    int64_t count = 0;
    std::vector<float> inputs(kBatch);
    for (uint64_t bits = 0; bits < (uint64_t{1} << 32);) {
      for (int64_t i = 0; i < kBatch; ++i, bits += kStride) {
        const uint32_t b = static_cast<uint32_t>(bits);  // Wraps in the last batch.
        std::memcpy(&inputs[i], &b, 4);
      }
      absl::StatusOr<Literal> result = RunOnHost(*module, {F32Literal(inputs)}, options);
      ASSERT_TRUE(result.ok()) << result.status();
      const std::vector<float> outputs = Floats(*result);
      for (int64_t i = 0; i < kBatch; ++i) {
        if (inputs[i] < function.min_input) continue;
        const double error = UlpError(function.reference(inputs[i]), outputs[i]);
        if (!(error <= worst)) {
          worst = error;
          worst_input = inputs[i];
          worst_output = outputs[i];
        }
      }
      count += kBatch;
    }
    std::printf("%s: max %.3f ulp over %lld inputs (at x = %.9g: got %.9g, exact %.17g)\n",
                function.op, worst, static_cast<long long>(count), worst_input, worst_output,
                function.reference(worst_input));
    EXPECT_LE(worst, function.max_ulp)
        << function.op << " at x = " << worst_input << " (bits "
        << absl::bit_cast<uint32_t>(worst_input) << "): got " << worst_output << ", exact "
        << function.reference(worst_input);
  }
}

TEST(PolynomialMathTest, SpecialValuesAreExact) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float min_denormal = std::numeric_limits<float>::denorm_min();
  const float max = std::numeric_limits<float>::max();
  struct Case {
    const char* op;
    std::vector<float> in;
    std::vector<float> out;
  };
  const std::vector<Case> cases = {
      {"exponential",
       {nan, inf, -inf, 0.0f, -0.0f, 88.72284f, 89.0f, 1e30f, max, -103.2789f, -104.0f, -1e30f,
        -max, min_denormal, -min_denormal},
       {nan, inf, 0.0f, 1.0f, 1.0f, inf, inf, inf, inf, min_denormal, 0.0f, 0.0f, 0.0f, 1.0f,
        1.0f}},
      {"exponential-minus-one",
       {nan, inf, -inf, 0.0f, -0.0f, 88.72284f, 1e30f, -20.0f, -1e30f, min_denormal,
        -min_denormal, 1e-30f, -1e-30f, 0x1p-126f},
       {nan, inf, -1.0f, 0.0f, -0.0f, inf, inf, -1.0f, -1.0f, min_denormal, -min_denormal, 1e-30f,
        -1e-30f, 0x1p-126f}},
      {"tanh",
       {nan, inf, -inf, 0.0f, -0.0f, 10.0f, -10.0f, 1e30f, -max, min_denormal, -min_denormal,
        1e-30f, -1e-30f},
       {nan, 1.0f, -1.0f, 0.0f, -0.0f, 1.0f, -1.0f, 1.0f, -1.0f, min_denormal, -min_denormal,
        1e-30f, -1e-30f}},
      {"log",
       {nan, inf, -inf, 0.0f, -0.0f, -1.0f, -min_denormal, 1.0f, min_denormal, 0x1p-126f, max,
        2.0f, 0.5f},
       {nan, inf, nan, -inf, -inf, nan, nan, 0.0f, -103.27893f, -87.33655f, 88.72284f,
        0.6931472f, -0.6931472f}},
      {"log-plus-one",
       {nan, inf, -inf, 0.0f, -0.0f, -1.0f, -2.0f, -max, min_denormal, -min_denormal, 1e-30f,
        -1e-30f, max, 1.0f, -0.5f},
       {nan, inf, nan, 0.0f, -0.0f, -inf, nan, nan, min_denormal, -min_denormal, 1e-30f, -1e-30f,
        88.72284f, 0.6931472f, -0.6931472f}},
      {"erf",
       {nan, inf, -inf, 0.0f, -0.0f, 3.92f, -3.92f, 10.0f, -max, min_denormal, -min_denormal},
       {nan, 1.0f, -1.0f, 0.0f, -0.0f, 1.0f, -1.0f, 1.0f, -1.0f, min_denormal, -min_denormal}},
      {"logistic",
       {nan, inf, -inf, 0.0f, -0.0f, 200.0f, -200.0f},
       {nan, 1.0f, 0.0f, 0.5f, 0.5f, 1.0f, 0.0f}},
  };
  RunOnHostOptions options = PolynomialOptions();
  ASSERT_NE(options.compile.compiler, nullptr);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    ASSERT_EQ(c.in.size(), c.out.size());
    std::unique_ptr<HloModule> module = Parse(Module(c.op, c.in.size()));
    ASSERT_NE(module, nullptr);
    absl::StatusOr<Literal> result = RunOnHost(*module, {F32Literal(c.in)}, options);
    ASSERT_TRUE(result.ok()) << result.status();
    const std::vector<float> got = Floats(*result);
    for (size_t i = 0; i < c.in.size(); ++i) {
      if (std::isnan(c.out[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << c.op << "(" << c.in[i] << ") = " << got[i];
      } else {
        EXPECT_EQ(absl::bit_cast<uint32_t>(got[i]), absl::bit_cast<uint32_t>(c.out[i]))
            << c.op << "(" << c.in[i] << ") = " << got[i] << ", expected " << c.out[i];
      }
    }
  }
}

}  // namespace
}  // namespace hloc
