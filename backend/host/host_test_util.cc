// Implementation of the host test helpers.
#include "backend/host/host_test_util.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "hlo/evaluator/evaluator.h"
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

Literal ParseLiteralText(absl::string_view text) {
  const size_t space = text.find(' ');
  absl::StatusOr<Shape> shape = ParseShape(text.substr(0, space));
  EXPECT_TRUE(shape.ok()) << shape.status();
  if (!shape.ok()) return Literal();
  absl::StatusOr<Literal> literal = ParseLiteral(text.substr(space + 1), *shape);
  EXPECT_TRUE(literal.ok()) << literal.status() << " in " << text;
  return literal.ok() ? *std::move(literal) : Literal();
}

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

void ExpectExact(absl::string_view hlo, const std::vector<Literal>& args,
                 const RunOnHostOptions& options) {
  Outcome outcome = RunBoth(hlo, args, options);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status << "\n" << hlo;
  EXPECT_TRUE(SameBits(outcome.expected, outcome.actual))
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
