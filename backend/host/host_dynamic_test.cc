// Bounded dynamic shapes on the host: OptimizeForHost runs DynamicPadder,
// the program returns padded buffers and sizes, and HostProgram cuts the
// result to the sizes. Every case against the interpreter, which defines
// the answer (runtime_shapes.h).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

TEST(HostDynamicTest, BitcastConvertBetweenWidthsOfARuntimeSizedArray) {
  Literal p = ParseLiteralText(dynamic_test_modules::kBitcastConvertWidthsP);
  for (const char* n : {"0", "3", "4"}) {
    SCOPED_TRACE(n);
    ExpectSameAsInterpreter(dynamic_test_modules::kBitcastConvertWidths,
                            {p, ParseLiteralText(absl::StrCat("s32[] ", n))});
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

using dynamic_test_modules::DynamicParametersP;
using dynamic_test_modules::DynamicParametersQ;
using dynamic_test_modules::kDynamicParameters;

// Arguments of any size up to the bound, 0 and the bound included: padded
// by the program's DeclaredResult, the result cut back to the sizes.
TEST(HostDynamicTest, DynamicEntryParametersTakeAnySizeUpToTheBound) {
  for (int n : {0, 1, 5, 8}) {
    for (int m : {0, 3, 4}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      ExpectSameAsInterpreter(kDynamicParameters, {ParseLiteralText(DynamicParametersP(n)),
                                                   ParseLiteralText(DynamicParametersQ(m))});
    }
  }
  BothRuns run = RunBoth(kDynamicParameters, {ParseLiteralText(DynamicParametersP(3)),
                                              ParseLiteralText(DynamicParametersQ(2))});
  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_EQ(run.actual.shape().ToString(false), "(f32[], f32[3], s32[], f32[3], f32[1,3])");
}

TEST(HostDynamicTest, ArgumentPastItsBoundIsAnErrorNamingTheParameter) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kDynamicParameters);
  ASSERT_TRUE(module.ok());
  ASSERT_TRUE(host::OptimizeForHost(**module).ok());
  absl::StatusOr<Literal> r = RunOnHost(**module,
                                        {ParseLiteralText(DynamicParametersP(9)),
                                         ParseLiteralText(DynamicParametersQ(2))},
                                        host_testing::TestOptions());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(
                "argument 0 (parameter %p) dimension 0 has size 9, above its bound 8"),
            std::string::npos)
      << r.status();
}

// The padding (values that would sort first) stays past the size.
TEST(HostDynamicTest, SortAndReverseAlongARuntimeSizedDimension) {
  const Literal p = ParseLiteralText(dynamic_test_modules::kSortReverseP);
  const Literal q = ParseLiteralText(dynamic_test_modules::kSortReverseQ);
  for (int n : {0, 1, 4, 6}) {
    SCOPED_TRACE(n);
    ExpectSameAsInterpreter(dynamic_test_modules::kSortReverse,
                            {p, q, ParseLiteralText(absl::StrCat("s32[] ", n)),
                             ParseLiteralText(absl::StrCat("s32[] ", n > 5 ? 5 : n))});
  }
}

// A tuple entry parameter with dynamic leaves: padded leaf by leaf, its
// sizes appended after it.
TEST(HostDynamicTest, TupleParameterWithDynamicLeaves) {
  for (int n : {0, 1, 5, 8}) {
    for (int m : {0, 2, 3}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      ExpectSameAsInterpreter(
          dynamic_test_modules::kTupleParameter,
          {Literal::Tuple({ParseLiteralText(dynamic_test_modules::TupleParameterX(n)),
                           ParseLiteralText("s32[] 7"),
                           ParseLiteralText(dynamic_test_modules::TupleParameterY(m))})});
    }
  }
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseHloModule(dynamic_test_modules::kTupleParameter);
  ASSERT_TRUE(module.ok());
  ASSERT_TRUE(host::OptimizeForHost(**module).ok());
  absl::StatusOr<Literal> r = RunOnHost(
      **module,
      {Literal::Tuple({ParseLiteralText(dynamic_test_modules::TupleParameterX(9)),
                       ParseLiteralText("s32[] 7"),
                       ParseLiteralText(dynamic_test_modules::TupleParameterY(1))})},
      host_testing::TestOptions());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("argument 0 (parameter %p) tuple element 0 dimension 0 "
                                      "has size 9, above its bound 8"),
            std::string::npos)
      << r.status();
}

// Sort-by-key and argsort along a runtime-sized dimension: no padding in
// any operand's result.
TEST(HostDynamicTest, MultiOperandSortAlongARuntimeSizedDimension) {
  const Literal p = ParseLiteralText(dynamic_test_modules::kSortWithValuesP);
  for (int n : {0, 1, 4, 6}) {
    for (int m : {0, 5, 8}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      ExpectSameAsInterpreter(dynamic_test_modules::kSortWithValues,
                              {p, ParseLiteralText(absl::StrCat("s32[] ", n)),
                               ParseLiteralText(dynamic_test_modules::SortWithValuesQ(m))});
    }
  }
}

// Sizes carried into a while loop and conditional branches.
TEST(HostDynamicTest, SizesFlowIntoLoopsAndBranches) {
  for (int n : {0, 1, 5, 8}) {
    for (int k : {0, 1, 7}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " k=", k));
      ExpectSameAsInterpreter(dynamic_test_modules::kLoopAndBranches,
                              {ParseLiteralText(DynamicParametersP(n)),
                               ParseLiteralText(absl::StrCat("s32[] ", k))});
    }
  }
}

// `text` on (p of size n, s32[] m) for n in {0, 1, 3, 4} and each m: the
// interpreter's answer where it has one, else a host error naming the
// set-dimension-size (and containing `where`). Returns how many failed.
int ExpectSizeChecks(const char* text, std::vector<int> ms, const char* where) {
  int failures = 0;
  for (int n : {0, 1, 3, 4}) {
    for (int m : ms) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      std::vector<Literal> args = {ParseLiteralText(DynamicParametersP(n)),
                                   ParseLiteralText(absl::StrCat("s32[] ", m))};
      BothRuns run = RunBoth(text, args);
      if (run.status.ok()) {
        ExpectSameAsInterpreter(text, args);
        continue;
      }
      // The interpreter refused: the host must too, by instruction.
      ++failures;
      absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
      EXPECT_TRUE(module.ok());
      if (!module.ok()) continue;
      EXPECT_TRUE(host::OptimizeForHost(**module).ok());
      absl::StatusOr<Literal> r = RunOnHost(**module, args, host_testing::TestOptions());
      EXPECT_FALSE(r.ok()) << r->ToString();
      if (r.ok()) continue;
      EXPECT_NE(r.status().message().find("(set-dimension-size)"), std::string::npos)
          << r.status();
      EXPECT_NE(r.status().message().find(where), std::string::npos) << r.status();
    }
  }
  return failures;
}

// Size checks inside a loop body and a branch.
TEST(HostDynamicTest, SizeChecksInLoopsAndBranches) {
  EXPECT_GT(ExpectSizeChecks(dynamic_test_modules::kChecksInLoopAndBranch, {0, 1, 2, 3, 4}, ""),
            2);
}

// A size check in a loop condition: reported naming the loop.
TEST(HostDynamicTest, SizeChecksInLoopConditions) {
  EXPECT_EQ(ExpectSizeChecks(dynamic_test_modules::kCheckInLoopCondition, {0, 1, 2, 3, 4},
                             "in the condition of %w"),
            13);
}

// Input/output aliasing next to a dynamic result.
TEST(HostDynamicTest, AliasedParameterWithDynamicResult) {
  for (int n : {0, 3, 8}) {
    SCOPED_TRACE(n);
    ExpectSameAsInterpreter(dynamic_test_modules::kAliasedWithDynamicResult,
                            {ParseLiteralText("f32[8] {1, 2, 3, 4, 5, 6, 7, 8}"),
                             ParseLiteralText(absl::StrCat("s32[] ", n))});
  }
}

// XLA's PadToStatic and SliceToDynamic custom calls.
TEST(HostDynamicTest, PadToStaticAndSliceToDynamic) {
  for (int n : {0, 3, 8}) {
    for (int m : {0, 5, 8}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      ExpectSameAsInterpreter(dynamic_test_modules::kPadToStaticSliceToDynamic,
                              {ParseLiteralText(DynamicParametersP(n)),
                               ParseLiteralText(absl::StrCat("s32[] ", m))});
    }
  }
}

// Gather, dynamic-slice and dynamic-update-slice on a runtime-sized operand.
TEST(HostDynamicTest, SlicingARuntimeSizedOperand) {
  for (int n : {3, 8}) {
    for (int i : {0, 2, 7, -3}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " i=", i));
      ExpectSameAsInterpreter(dynamic_test_modules::kSlicingRuntimeSized,
                              {ParseLiteralText(DynamicParametersP(n)),
                               ParseLiteralText(absl::StrCat("s32[] ", i)),
                               ParseLiteralText("s32[] 6")});
    }
  }
}

// Reduce-windows and convolutions over runtime-sized dimensions.
TEST(HostDynamicTest, WindowsOverRuntimeSizes) {
  for (int n : {0, 1, 2, 3, 5, 8}) {
    SCOPED_TRACE(absl::StrCat("n=", n));
    ExpectSameAsInterpreter(dynamic_test_modules::kWindowsRuntimeSized,
                            {ParseLiteralText(DynamicParametersP(n))});
  }
}

// Scatter with runtime-sized indices and updates, into runtime-sized and
// static operands.
TEST(HostDynamicTest, ScatterWithRuntimeSizes) {
  for (int n : {0, 3, 8}) {
    for (int m : {0, 3, 8}) {
      for (int j : {2, 6}) {
        SCOPED_TRACE(absl::StrCat("n=", n, " m=", m, " j=", j));
        ExpectSameAsInterpreter(dynamic_test_modules::kScatterRuntimeSized,
                                {ParseLiteralText(DynamicParametersP(n)),
                                 ParseLiteralText(absl::StrCat("s32[] ", m)),
                                 ParseLiteralText(absl::StrCat("s32[] ", j))});
      }
    }
  }
}

// Calls whose callees have dynamic shapes: inlined by the padder.
TEST(HostDynamicTest, CallsWithDynamicShapes) {
  for (int n : {0, 1, 5, 8}) {
    SCOPED_TRACE(n);
    ExpectSameAsInterpreter(dynamic_test_modules::kDynamicBuilderCall,
                            {ParseLiteralText(DynamicParametersP(n))});
    ExpectSameAsInterpreter(dynamic_test_modules::kDynamicCalls,
                            {ParseLiteralText(DynamicParametersP(n))});
  }
}

// The corpus's import_bounded_dynamism shapes: a dynamic parameter straight
// to a dynamic result through broadcast, convert and a unit-dimension reshape.
TEST(HostDynamicTest, DynamicParameterToDynamicResult) {
  constexpr char kBroadcast[] = R"(
HloModule m, entry_computation_layout={(f32[1,1,<=6]{2,1,0})->f32[1,4,1,<=6]{3,2,1,0}}
ENTRY main {
  p = f32[1,1,<=6] parameter(0)
  ROOT b = f32[1,4,1,<=6] broadcast(p), dimensions={0,2,3}
}
)";
  constexpr char kConvert[] = R"(
HloModule m
ENTRY main {
  p = pred[<=5,<=4] parameter(0)
  ROOT c = f32[<=5,<=4] convert(p)
}
)";
  constexpr char kReshape[] = R"(
HloModule m
ENTRY main {
  p = f32[<=5] parameter(0)
  ROOT r = f32[1,<=5] reshape(p)
}
)";
  for (int n : {0, 2, 6}) {
    SCOPED_TRACE(n);
    std::string values;
    for (int k = 0; k < n; ++k) absl::StrAppend(&values, k ? ", " : "", k + 0.5);
    ExpectSameAsInterpreter(
        kBroadcast, {ParseLiteralText(absl::StrCat("f32[1,1,", n, "] {{{", values, "}}}"))});
  }
  ExpectSameAsInterpreter(kConvert, {ParseLiteralText("pred[3,2] {{1, 0}, {0, 0}, {1, 1}}")});
  ExpectSameAsInterpreter(kConvert, {ParseLiteralText("pred[0,4] {}")});
  ExpectSameAsInterpreter(kReshape, {ParseLiteralText("f32[4] {1, 2, 3, 4}")});
  ExpectSameAsInterpreter(kReshape, {ParseLiteralText("f32[0] {}")});
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
