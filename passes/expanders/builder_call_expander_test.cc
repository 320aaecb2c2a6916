// BuilderCallExpander: "xla_builder.*" custom calls with their decomposition
// attached are inlined (nested ones too), the decompositions go, and the
// interpreter's answer is the same before (where it runs the decomposition
// itself) and after. Builder calls without a decomposition, and other
// targets with a called computation, are left alone.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/testing/literal_text.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"
#include "passes/expanders/builder_call_expander.h"
#include "passes/expanders/expander_test_cases.h"
#include "passes/test_util.h"

namespace hloc {
namespace {

using expanders::CountEverywhere;
using testdata::ParseLiteralText;

// acos(x) = atan2(sqrt((1 - x)(1 + x)), x), its square root itself a builder
// call with a decomposition, in f32 and c64-free form; cosh through exp.
constexpr char kBuilderCalls[] = R"(
HloModule builder_calls

sqrt_impl {
  a = f32[4] parameter(0)
  ROOT s = f32[4] sqrt(a)
}

acos_impl {
  x = f32[4] parameter(0)
  one = f32[] constant(1)
  ones = f32[4] broadcast(one), dimensions={}
  l = f32[4] subtract(ones, x)
  r = f32[4] add(ones, x)
  p = f32[4] multiply(l, r)
  s = f32[4] custom-call(p), custom_call_target="xla_builder.math.Sqrt", called_computations={sqrt_impl}
  ROOT a = f32[4] atan2(s, x)
}

cosh_impl {
  x = f32[4] parameter(0)
  e = f32[4] exponential(x)
  n = f32[4] negate(x)
  f = f32[4] exponential(n)
  t = f32[4] add(e, f)
  half = f32[] constant(0.5)
  h = f32[4] broadcast(half), dimensions={}
  ROOT c = f32[4] multiply(t, h)
}

ENTRY main {
  x = f32[4] parameter(0)
  a = f32[4] custom-call(x), custom_call_target="xla_builder.math.Acos", called_computations={acos_impl}
  c = f32[4] custom-call(x), custom_call_target="xla_builder.math.Cosh", called_computations={cosh_impl}
  ROOT t = (f32[4], f32[4]) tuple(a, c)
}
)";

TEST(BuilderCallExpanderTest, InlinesDecompositionsAndKeepsTheAnswer) {
  std::unique_ptr<HloModule> module = testing::ParseAndVerifyOrFail(kBuilderCalls);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments;
  arguments.push_back(ParseLiteralText("f32[4] {-0.5, 0, 0.25, 1}"));
  absl::StatusOr<Literal> before = Evaluate(*module, arguments);
  ASSERT_TRUE(before.ok()) << before.status();
  BuilderCallExpander expander;
  absl::StatusOr<bool> changed = testing::RunAndVerify(expander, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kCustomCall), 0);
  EXPECT_EQ(module->computations().size(), 1u) << "decompositions left behind";
  absl::StatusOr<Literal> after = Evaluate(*module, arguments);
  ASSERT_TRUE(after.ok()) << after.status();
  ComparisonReport report = CompareLiterals(*before, *after, Tolerance{0, 0});
  EXPECT_TRUE(report.ok) << report.ToString();
  // acos(-0.5) = 2.0944, acos(1) = 0; cosh(0) = 1.
  EXPECT_NEAR(before->tuple_elements()[0].GetAsDouble(0), 2.0943951, 1e-6);
  EXPECT_EQ(before->tuple_elements()[0].GetAsDouble(3), 0.0);
  EXPECT_EQ(before->tuple_elements()[1].GetAsDouble(1), 1.0);
}

TEST(BuilderCallExpanderTest, LeavesOtherCustomCallsAlone) {
  std::unique_ptr<HloModule> module = testing::ParseAndVerifyOrFail(R"(
HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  ROOT a = f32[4] custom-call(x), custom_call_target="xla_builder.math.Acos"
})");
  ASSERT_NE(module, nullptr);
  BuilderCallExpander expander;
  absl::StatusOr<bool> changed = testing::RunAndVerify(expander, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  // Without a decomposition the target is unknown to the interpreter.
  absl::StatusOr<Literal> r = Evaluate(*module, {ParseLiteralText("f32[4] {0, 0, 0, 0}")});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("xla_builder.math.Acos"), std::string::npos) << r.status();
}

TEST(BuilderCallExpanderTest, ADecompositionOfTheWrongSignatureFailsVerification) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m
impl {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] add(a, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT a = f32[4] custom-call(x), custom_call_target="xla_builder.math.Acos", called_computations={impl}
})");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status verified = VerifyModule(**module);
  EXPECT_FALSE(verified.ok());
  EXPECT_NE(verified.message().find("%a"), std::string::npos) << verified;
}

}  // namespace
}  // namespace hloc
