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

using dynamic_test_modules::kDynamicContractionDot;
using dynamic_test_modules::kElementwiseChain;
using dynamic_test_modules::kReduceExp;

Literal P8() { return ParseLiteralText(dynamic_test_modules::kReduceExpP); }

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
  Literal p = ParseLiteralText(dynamic_test_modules::kElementwiseChainP);
  Literal q = ParseLiteralText(dynamic_test_modules::kElementwiseChainQ);
  for (const char* n : {"0", "2", "6"}) {
    SCOPED_TRACE(n);
    ExpectSameAsInterpreter(kElementwiseChain, {p, q, ParseLiteralText(absl::StrCat("s32[] ", n))});
  }
}

TEST(HostDynamicTest, DotWithARuntimeSizedContraction) {
  Literal a = ParseLiteralText(dynamic_test_modules::kDynamicContractionDotA);
  Literal b = ParseLiteralText(dynamic_test_modules::kDynamicContractionDotB);
  for (const char* n : {"0", "1", "3"}) {
    SCOPED_TRACE(n);
    ExpectSameAsInterpreter(kDynamicContractionDot,
                            {a, b, ParseLiteralText(absl::StrCat("s32[] ", n))});
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
