// The pipeline's verifier: a bad input is refused before any pass runs and
// blamed on the input; a pass that breaks the module is named, even when it
// says it changed nothing.
#include "passes/pipeline.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

using ::testing::HasSubstr;

// Counts its runs; optionally breaks the module (the root's declared shape)
// and reports `reports_change`.
class ProbePass : public HloPass {
 public:
  ProbePass(bool breaks, bool reports_change) : breaks_(breaks), reports_change_(reports_change) {}
  absl::string_view name() const override { return "probe"; }
  absl::StatusOr<bool> Run(HloModule& module) override {
    ++runs;
    if (breaks_) module.entry()->root()->set_shape(Shape(PrimitiveType::F32, {3}));
    return reports_change_;
  }
  int runs = 0;

 private:
  bool breaks_;
  bool reports_change_;
};

std::unique_ptr<HloModule> Parse(const std::string& root_shape) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = " + root_shape +
      " negate(p)\n}\n");
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

TEST(PipelineVerifier, InvalidInputIsBlamedOnTheInputAndNoPassRuns) {
  std::unique_ptr<HloModule> module = Parse("f32[4]");
  HloPassPipeline pipeline("test");
  ProbePass& probe = pipeline.AddPass<ProbePass>(/*breaks=*/false, /*reports_change=*/true);
  absl::StatusOr<bool> result = pipeline.Run(*module);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("input module fails verification: computation e, instruction %n"));
  EXPECT_EQ(probe.runs, 0);
}

TEST(PipelineVerifier, PassThatBreaksTheModuleIsNamed) {
  for (bool reports_change : {true, false}) {
    std::unique_ptr<HloModule> module = Parse("f32[2]");
    PipelineOptions options;
    options.verify_between_passes = true;
    HloPassPipeline pipeline("test", options);
    pipeline.AddPass<ProbePass>(/*breaks=*/true, reports_change);
    absl::StatusOr<bool> result = pipeline.Run(*module);
    ASSERT_FALSE(result.ok());
    EXPECT_THAT(std::string(result.status().message()),
                HasSubstr("module is invalid after pass probe"));
  }
}

TEST(PipelineVerifier, WithoutVerificationBetweenPassesTheOutputIsStillChecked) {
  std::unique_ptr<HloModule> module = Parse("f32[2]");
  PipelineOptions options;
  options.verify_between_passes = false;
  HloPassPipeline pipeline("test", options);
  pipeline.AddPass<ProbePass>(/*breaks=*/true, /*reports_change=*/true);
  absl::StatusOr<bool> result = pipeline.Run(*module);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("module is invalid after pipeline test"));
}

// Tests are debug builds: every pass is verified by default.
TEST(PipelineVerifier, DebugBuildsVerifyAfterEveryPass) {
  EXPECT_TRUE(PipelineOptions().verify_between_passes);
  EXPECT_TRUE(PipelineOptions().verify_input);
}

}  // namespace
}  // namespace hloc
