// Bounded dynamic shapes on the host: OptimizeForHost runs DynamicPadder,
// the program returns padded buffers and sizes, and HostProgram cuts the
// result to the sizes. Every case against the interpreter, which defines
// the answer (runtime_shapes.h).
#include <string>
#include <vector>

#include "backend/host/host_pipeline.h"
#include "backend/host/host_test_util.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/text_parser.h"
#include "passes/dynamic_test_modules.h"

namespace hloc {
namespace {

using host_testing::ParseLiteralText;

struct BothRuns {
  absl::Status status;
  Literal expected, actual;
};

BothRuns RunBoth(absl::string_view text, const std::vector<Literal>& args, bool fusion = true) {
  BothRuns run;
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) {
    run.status = module.status();
    return run;
  }
  absl::StatusOr<Literal> expected = Evaluate(**module, args);
  if (!expected.ok()) {
    run.status = expected.status();
    return run;
  }
  run.expected = *std::move(expected);
  host::HostPipelineOptions pipeline;
  pipeline.fusion = fusion;
  if (absl::Status s = host::OptimizeForHost(**module, pipeline).status(); !s.ok()) {
    run.status = s;
    return run;
  }
  absl::StatusOr<Literal> actual = RunOnHost(**module, args, host_testing::TestOptions());
  if (!actual.ok()) {
    run.status = actual.status();
    return run;
  }
  run.actual = *std::move(actual);
  return run;
}

void ExpectSameAsInterpreter(absl::string_view text, const std::vector<Literal>& args) {
  for (bool fusion : {true, false}) {
    SCOPED_TRACE(fusion ? "fusion" : "no fusion");
    BothRuns run = RunBoth(text, args, fusion);
    ASSERT_TRUE(run.status.ok()) << run.status;
    // The result shapes carry the runtime sizes: compare them first.
    EXPECT_EQ(run.expected.shape().ToString(false), run.actual.shape().ToString(false));
    ComparisonReport report = CompareLiterals(run.expected, run.actual);
    EXPECT_TRUE(report.ok) << report.ToString() << "\nexpected " << run.expected.ToString()
                           << "\nactual   " << run.actual.ToString();
  }
}

using dynamic_test_modules::kReduceExp;

Literal P8() { return ParseLiteralText("f32[8] {0.5, 1, -2, 3, 0.25, 1.5, -1, 2}"); }

TEST(HostDynamicTest, ReduceOverARuntimeSizedDimension) {
  for (const char* n : {"0", "1", "5", "8"}) {
    SCOPED_TRACE(n);
    ExpectSameAsInterpreter(kReduceExp, {P8(), ParseLiteralText(absl::StrCat("s32[] ", n))});
  }
}

TEST(HostDynamicTest, OutputOfDynamicShapeComesBackAtItsSize) {
  BothRuns run = RunBoth(kReduceExp, {P8(), ParseLiteralText("s32[] 3")});
  ASSERT_TRUE(run.status.ok()) << run.status;
  ASSERT_TRUE(run.actual.shape().IsTuple());
  EXPECT_EQ(run.actual.tuple_elements()[2].shape().ToString(false), "f32[3]");
  EXPECT_EQ(run.actual.tuple_elements()[1].ToString(), "s32[] 3");
}

TEST(HostDynamicTest, SizeBeyondTheBoundIsAnError) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kReduceExp);
  ASSERT_TRUE(module.ok());
  ASSERT_TRUE(host::OptimizeForHost(**module).ok());
  for (const char* n : {"9", "-1"}) {
    absl::StatusOr<Literal> r = RunOnHost(
        **module, {P8(), ParseLiteralText(absl::StrCat("s32[] ", n))}, host_testing::TestOptions());
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_NE(r.status().message().find("instruction %d (set-dimension-size)"), std::string::npos)
        << r.status();
  }
}

TEST(HostDynamicTest, ElementwiseChainAndBroadcastOfADynamicDimension) {
  constexpr char kChain[] = R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  p = f32[6] parameter(0)
  q = f32[6] parameter(1)
  n = s32[] parameter(2)
  d = f32[<=6] set-dimension-size(p, n), dimensions={0}
  t = f32[<=6] tanh(d)
  m = f32[<=6] multiply(t, q)
  b = f32[3,<=6] broadcast(m), dimensions={1}
  one = f32[] constant(1)
  ones = f32[3,<=6] broadcast(one), dimensions={}
  s = f32[3,<=6] add(b, ones)
  lo = f32[] constant(-inf)
  r = f32[3] reduce(s, lo), dimensions={1}, to_apply=max
  ROOT out = (f32[3], f32[3,<=6]) tuple(r, s)
}
)";
  Literal p = ParseLiteralText("f32[6] {0.5, -1, 2, 0.25, -3, 1}");
  Literal q = ParseLiteralText("f32[6] {1, 2, 3, 4, 5, 6}");
  for (const char* n : {"0", "2", "6"}) {
    SCOPED_TRACE(n);
    ExpectSameAsInterpreter(kChain, {p, q, ParseLiteralText(absl::StrCat("s32[] ", n))});
  }
}

TEST(HostDynamicTest, DotWithARuntimeSizedContraction) {
  constexpr char kDot[] = R"(
HloModule m
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[5,4] parameter(1)
  n = s32[] parameter(2)
  da = f32[3,<=5] set-dimension-size(a, n), dimensions={1}
  db = f32[<=5,4] set-dimension-size(b, n), dimensions={0}
  ROOT d = f32[3,4] dot(da, db), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  Literal a = ParseLiteralText(
      "f32[3,5] {{1, 2, 3, inf, 5}, {0.5, -1, 2, 4, nan}, {1, 1, 1, 1, 1}}");
  Literal b = ParseLiteralText(
      "f32[5,4] {{1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}, {2, 2, 2, 2}, {inf, 3, 3, 3}}");
  for (const char* n : {"0", "1", "3"}) {
    SCOPED_TRACE(n);
    ExpectSameAsInterpreter(kDot, {a, b, ParseLiteralText(absl::StrCat("s32[] ", n))});
  }
}

TEST(HostDynamicTest, DynamicEntryParameterIsAClearError) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m
ENTRY e {
  p = f32[<=4] parameter(0)
  ROOT n = f32[<=4] negate(p)
}
)");
  ASSERT_TRUE(module.ok());
  absl::Status s = host::OptimizeForHost(**module).status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("instruction %p (parameter)"), std::string::npos) << s;
}

TEST(HostDynamicTest, UnpaddedModuleIsRefusedByTheProgramBuilder) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kReduceExp);
  ASSERT_TRUE(module.ok());
  absl::StatusOr<Literal> r =
      RunOnHost(**module, {P8(), ParseLiteralText("s32[] 3")}, host_testing::TestOptions());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("dynamic-padder"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace hloc
