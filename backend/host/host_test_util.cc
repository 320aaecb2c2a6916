// Implementation of the host test helpers.
#include "backend/host/host_test_util.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "backend/host/host_pipeline.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/testing/literal_text.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace host_testing {

std::shared_ptr<host::KernelCompiler> SharedCompiler() {
  static std::shared_ptr<host::KernelCompiler>* compiler = [] {
    auto created = host::KernelCompiler::Create();
    EXPECT_TRUE(created.ok()) << created.status();
    return new std::shared_ptr<host::KernelCompiler>(created.ok() ? *created : nullptr);
  }();
  return *compiler;
}

RunOnHostOptions TestOptions(bool allow_fallback) {
  RunOnHostOptions options;
  options.compile.compiler = SharedCompiler();
  options.interpreter_fallback = allow_fallback;
  options.num_threads = 2;
  options.execute.min_parallel_cost = 64;
  return options;
}

RunOnHostOptions WithExactMath(RunOnHostOptions options) {
  static std::shared_ptr<host::KernelCompiler>* compiler = [] {
    host::KernelCompilerOptions kernel;
    kernel.exact_math = true;
    auto created = host::KernelCompiler::Create(kernel);
    EXPECT_TRUE(created.ok()) << created.status();
    return new std::shared_ptr<host::KernelCompiler>(created.ok() ? *created : nullptr);
  }();
  options.compile.compiler = *compiler;
  return options;
}

Literal ParseLiteralText(absl::string_view text) { return testdata::ParseLiteralText(text); }

namespace {

void Leaves(const Literal& literal, std::vector<const Literal*>* out) {
  if (literal.shape().IsTuple()) {
    for (const Literal& e : literal.tuple_elements()) Leaves(e, out);
  } else {
    out->push_back(&literal);
  }
}

}  // namespace

::testing::AssertionResult SameBits(const Literal& expected, const Literal& actual) {
  if (!expected.shape().Compatible(actual.shape())) {
    return ::testing::AssertionFailure() << "shapes differ: " << expected.shape().ToString()
                                         << " vs " << actual.shape().ToString();
  }
  std::vector<const Literal*> e, a;
  Leaves(expected, &e);
  Leaves(actual, &a);
  for (size_t leaf = 0; leaf < e.size(); ++leaf) {
    const PrimitiveType type = e[leaf]->shape().element_type();
    if (!e[leaf]->shape().IsArray()) continue;
    const int width = ByteWidth(type);
    for (int64_t i = 0; i < e[leaf]->element_count(); ++i) {
      if (IsFloatingPoint(type) && std::isnan(e[leaf]->GetAsDouble(i)) &&
          std::isnan(a[leaf]->GetAsDouble(i))) {
        continue;
      }
      if (std::memcmp(e[leaf]->raw() + i * width, a[leaf]->raw() + i * width, width) != 0) {
        std::string ev, av;
        e[leaf]->AppendElementTo(i, &ev);
        a[leaf]->AppendElementTo(i, &av);
        return ::testing::AssertionFailure()
               << "leaf " << leaf << " element " << i << ": expected " << ev << ", got " << av;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

Outcome RunBoth(absl::string_view hlo, const std::vector<Literal>& args,
                const RunOnHostOptions& options) {
  Outcome outcome;
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(hlo);
  if (!module.ok()) {
    outcome.status = module.status();
    return outcome;
  }
  absl::StatusOr<Literal> expected = Evaluate(**module, args);
  if (!expected.ok()) {
    outcome.status = absl::Status(expected.status().code(),
                                  absl::StrCat("interpreter: ", expected.status().message()));
    return outcome;
  }
  outcome.expected = *std::move(expected);
  absl::StatusOr<Literal> actual = RunOnHost(**module, args, options);
  if (!actual.ok()) {
    outcome.status = absl::Status(actual.status().code(),
                                  absl::StrCat("host: ", actual.status().message()));
    return outcome;
  }
  outcome.actual = *std::move(actual);
  return outcome;
}

std::vector<Literal> RandomArgs(absl::string_view hlo, uint64_t seed) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(**module, seed);
  EXPECT_TRUE(args.ok()) << args.status();
  return args.ok() ? *std::move(args) : std::vector<Literal>();
}

void ExpectExactAfterPipeline(absl::string_view hlo, const std::vector<Literal>& args,
                              const RunOnHostOptions& options) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(hlo);
  ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
  absl::StatusOr<Literal> expected = Evaluate(**module, args);
  ASSERT_TRUE(expected.ok()) << "interpreter: " << expected.status() << "\n" << hlo;
  absl::StatusOr<bool> optimized = host::OptimizeForHost(**module);
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  absl::StatusOr<Literal> actual = RunOnHost(**module, args, options);
  ASSERT_TRUE(actual.ok()) << "host: " << actual.status() << "\n" << hlo;
  EXPECT_TRUE(SameBits(*expected, *actual))
      << hlo << "\nexpected " << expected->ToString() << "\nactual   " << actual->ToString();
}

void ExpectExact(absl::string_view hlo, const std::vector<Literal>& args,
                 const RunOnHostOptions& options) {
  Outcome outcome = RunBoth(hlo, args, options);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status << "\n" << hlo;
  EXPECT_TRUE(SameBits(outcome.expected, outcome.actual))
      << hlo << "\nexpected " << outcome.expected.ToString() << "\nactual   "
      << outcome.actual.ToString();
}

namespace {

// Bits of a float element, with the format's widths.
struct FloatBits {
  uint64_t bits = 0;
  int exponent_bits = 0;
  int mantissa_bits = 0;
  bool sign() const { return (bits >> (exponent_bits + mantissa_bits)) & 1; }
  uint64_t magnitude() const { return bits & ((uint64_t{1} << (exponent_bits + mantissa_bits)) - 1); }
  uint64_t exponent_all_ones() const {
    return ((uint64_t{1} << exponent_bits) - 1) << mantissa_bits;
  }
  bool nan() const {
    return (magnitude() & exponent_all_ones()) == exponent_all_ones() &&
           (magnitude() & ((uint64_t{1} << mantissa_bits) - 1)) != 0;
  }
  bool inf() const { return magnitude() == exponent_all_ones(); }
  // Position on the number line in ulps: consecutive floats differ by 1.
  int64_t ordinal() const {
    const int64_t m = static_cast<int64_t>(magnitude());
    return sign() ? -m : m;
  }
};

bool ReadFloatBits(const Literal& literal, int64_t i, FloatBits* out) {
  const PrimitiveType type = literal.shape().element_type();
  const int width = ByteWidth(type);
  switch (type) {
    case xla::F32: *out = {0, 8, 23}; break;
    case xla::F64: *out = {0, 11, 52}; break;
    case xla::F16: *out = {0, 5, 10}; break;
    case xla::BF16: *out = {0, 8, 7}; break;
    default: return false;
  }
  std::memcpy(&out->bits, literal.raw() + i * width, width);  // Little-endian.
  return true;
}

}  // namespace

::testing::AssertionResult WithinUlps(const Literal& expected, const Literal& actual,
                                      int64_t max_ulps) {
  if (!expected.shape().Compatible(actual.shape())) {
    return ::testing::AssertionFailure() << "shapes differ: " << expected.shape().ToString()
                                         << " vs " << actual.shape().ToString();
  }
  std::vector<const Literal*> e, a;
  Leaves(expected, &e);
  Leaves(actual, &a);
  for (size_t leaf = 0; leaf < e.size(); ++leaf) {
    if (!e[leaf]->shape().IsArray()) continue;
    FloatBits probe;
    if (e[leaf]->element_count() == 0 || !ReadFloatBits(*e[leaf], 0, &probe)) {
      ::testing::AssertionResult same = SameBits(*e[leaf], *a[leaf]);
      if (!same) return same;
      continue;
    }
    for (int64_t i = 0; i < e[leaf]->element_count(); ++i) {
      FloatBits x, y;
      ReadFloatBits(*e[leaf], i, &x);
      ReadFloatBits(*a[leaf], i, &y);
      bool ok;
      if (x.nan() || y.nan()) {
        ok = x.nan() && y.nan();
      } else if (x.inf() || y.inf() || (x.magnitude() == 0 && y.magnitude() == 0)) {
        ok = x.bits == y.bits;
      } else {
        ok = std::abs(x.ordinal() - y.ordinal()) <= max_ulps;
      }
      if (!ok) {
        std::string ev, av;
        e[leaf]->AppendElementTo(i, &ev);
        a[leaf]->AppendElementTo(i, &av);
        return ::testing::AssertionFailure()
               << "leaf " << leaf << " element " << i << ": expected " << ev << ", got " << av
               << " (" << std::abs(x.ordinal() - y.ordinal()) << " ulps apart, at most "
               << max_ulps << " allowed; NaN, infinities and pairs of zeros must match exactly)";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

void ExpectWithinUlps(absl::string_view hlo, const std::vector<Literal>& args, int64_t max_ulps,
                      const RunOnHostOptions& options) {
  Outcome outcome = RunBoth(hlo, args, options);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status << "\n" << hlo;
  EXPECT_TRUE(WithinUlps(outcome.expected, outcome.actual, max_ulps))
      << hlo << "\nexpected " << outcome.expected.ToString() << "\nactual   "
      << outcome.actual.ToString();
}

void ExpectClose(absl::string_view hlo, const std::vector<Literal>& args,
                 const Tolerance& tolerance, const RunOnHostOptions& options) {
  Outcome outcome = RunBoth(hlo, args, options);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status << "\n" << hlo;
  ComparisonReport report = CompareLiterals(outcome.expected, outcome.actual, tolerance);
  EXPECT_TRUE(report.ok) << report.ToString() << "\n" << hlo;
}

}  // namespace host_testing
}  // namespace hloc
