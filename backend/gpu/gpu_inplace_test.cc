// The in-place and aliasing cases the host runs (backend/host/
// host_inplace_test.cc, modules in backend/common/in_place_test_modules.h)
// through the GPU compiler: in plan mode (no GPU needed) the plan shares
// buffers where the host's does — loop states, updates in place written by
// update-only kernels, outputs in their aliased parameter's memory — and
// not where it must not; on a GPU the results match the interpreter
// (SKIPPED, with the reason, where there is none).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/common/in_place_test_modules.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_device_test_util.h"
#include "backend/gpu/gpu_test_util.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "passes/standard_pipelines.h"
#include "hlo/evaluator/random_arguments.h"

namespace hloc {
namespace gpu {
namespace {

namespace modules = in_place_testing;

std::unique_ptr<GpuProgram> PlanModule(const HloModule& module, bool in_place = true) {
  GpuProgramOptions options = PlanOptions();
  options.update_in_place = in_place;
  absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(module, options);
  EXPECT_TRUE(program.ok()) << program.status();
  return program.ok() ? *std::move(program) : nullptr;
}

// The module as written, or after the default pipeline (fusions). The
// modules' loops run a handful of trips, few enough for WhileLoopUnroller
// to turn into straight-line code; the tests are about the buffers of loop
// state, so the loops stay loops.
std::unique_ptr<HloModule> Module(const char* text, bool fused = false) {
  std::unique_ptr<HloModule> module = ParseForTest(text);
  if (module == nullptr || !fused) return module;
  PipelineOptions options;
  options.disabled_passes.insert("while-loop-unroller");
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline =
      MakeStandardPipeline("default", options, nullptr);
  EXPECT_TRUE(pipeline.ok()) << pipeline.status();
  if (!pipeline.ok()) return nullptr;
  absl::Status run = (*pipeline)->Run(*module).status();
  EXPECT_TRUE(run.ok()) << run;
  return run.ok() ? std::move(module) : nullptr;
}

// `text` (after the default pipeline when `fused`) planned with updates in
// place; null, with a test failure, when it does not parse or compile.
std::unique_ptr<GpuProgram> Plan(const char* text, bool fused = false) {
  std::unique_ptr<HloModule> module = Module(text, fused);
  if (module == nullptr) {
    ADD_FAILURE() << "the module does not parse";
    return nullptr;
  }
  return PlanModule(*module);
}

TEST(GpuInPlaceTest, ScanUpdatesLoopStateInPlace) {
  for (bool fused : {false, true}) {
    std::unique_ptr<HloModule> module = Module(modules::kScanRows, fused);
    ASSERT_NE(module, nullptr);
    std::unique_ptr<GpuProgram> before = PlanModule(*module, false);
    std::unique_ptr<GpuProgram> after = PlanModule(*module, true);
    ASSERT_NE(before, nullptr);
    ASSERT_NE(after, nullptr);
    const GpuCompileReport& report = after->report();
    SCOPED_TRACE(absl::StrCat(fused ? "fused: " : "unfused: ", after->PlanToString()));
    EXPECT_EQ(before->report().update_kernels, 0);
    EXPECT_EQ(report.update_kernels, 1);
    EXPECT_EQ(report.updates_in_place, 1);
    EXPECT_GE(report.loop_states_reused, 1);
    EXPECT_GE(after->executable().shared_bytes(), 2 * 64 * 128 * 4);
    EXPECT_TRUE(absl::StrContains(after->executable().ThunksToString(), "update-in-place"));
    // The array's three buffers (initial zeros, loop state, update) live in
    // one: device memory holds one f32[64,128] instead of two.
    EXPECT_GE(before->executable().device_bytes(), 2 * 64 * 128 * 4);
    EXPECT_LT(after->executable().device_bytes(), 2 * 64 * 128 * 4);
  }
}

TEST(GpuInPlaceTest, OldValueStillReadIsNotOverwritten) {
  for (bool fused : {false, true}) {
    std::unique_ptr<GpuProgram> after = Plan(modules::kScanKeepsOld, fused);
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->report().updates_in_place, 0) << after->PlanToString();
  }
}

TEST(GpuInPlaceTest, EntryParameterIsCopiedNotOverwritten) {
  std::unique_ptr<GpuProgram> after = Plan(modules::kDusParameter);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->report().update_kernels, 1) << after->PlanToString();
  EXPECT_EQ(after->report().updates_in_place, 0) << after->PlanToString();
}

TEST(GpuInPlaceTest, DeadTemporaryIsUpdatedInPlace) {
  for (bool live : {false, true}) {
    std::unique_ptr<GpuProgram> after = Plan(live ? modules::kDusLiveTemp : modules::kDusDeadTemp);
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->report().update_kernels, 1);
    EXPECT_EQ(after->report().updates_in_place, live ? 0 : 1) << after->PlanToString();
  }
}

TEST(GpuInPlaceTest, FusionReadingTheTargetElsewhereWritesEverything) {
  std::unique_ptr<GpuProgram> after = Plan(modules::kDusReadsTarget);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->report().update_kernels, 0) << after->PlanToString();
}

TEST(GpuInPlaceTest, FusedUpdateWritesOnlyTheUpdate) {
  std::unique_ptr<GpuProgram> after = Plan(modules::kDusFused);
  ASSERT_NE(after, nullptr);
  const std::string plan = after->PlanToString();
  EXPECT_EQ(after->report().updates_in_place, 1) << plan;
  // One thread per element of the f32[2,64] update: one block of 128.
  EXPECT_TRUE(absl::StrContains(plan, "%f: update-in-place")) << plan;
  EXPECT_TRUE(absl::StrContains(plan, "grid=1,1,1 block=128,1,1")) << plan;
  EXPECT_TRUE(absl::StrContains(plan, "1 buffers in another's bytes")) << plan;
}

TEST(GpuInPlaceTest, AccumulationIntoAWindowUpdatesInPlace) {
  std::unique_ptr<GpuProgram> after = Plan(modules::kDusAccumulatesWindow);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->report().update_kernels, 3) << after->PlanToString();
  EXPECT_EQ(after->report().updates_in_place, 3) << after->PlanToString();
}

// `text` planned with its input_output_alias: `expected` outputs live in
// their parameter's memory, the others are refused with a reason.
void CheckAliases(const char* text, int64_t expected, bool fused = false) {
  std::unique_ptr<GpuProgram> program = Plan(text, fused);
  ASSERT_NE(program, nullptr);
  const GpuCompileReport& report = program->report();
  EXPECT_EQ(static_cast<int64_t>(report.aliased_outputs.size()), expected) << report.ToString();
  EXPECT_EQ(report.alias_refusals.size() + report.aliased_outputs.size(), 1u) << report.ToString();
  EXPECT_EQ(program->executable().aliased_parameter(0), expected == 1 ? 0 : -1);
  EXPECT_TRUE(absl::StrContains(program->executable().MemoryReport(),
                                absl::StrCat(expected, " outputs in a parameter's bytes")))
      << program->executable().MemoryReport();
}

TEST(GpuInPlaceTest, AliasedOutputsLiveInTheirParameter) {
  CheckAliases(modules::kDonatedUpdate, 1);
  CheckAliases(modules::kDonatedScan, 1);
  CheckAliases(modules::kDonatedReverse, 0);
}

TEST(GpuInPlaceTest, ElementwiseResultLivesInItsDonatedParameter) {
  for (bool fused : {false, true}) {
    SCOPED_TRACE(fused ? "after the default pipeline" : "as written");
    CheckAliases(modules::kDonatedElementwise, 1, fused);
    CheckAliases(modules::kDonatedElementwiseFusion, 1, fused);
    CheckAliases(modules::kDonatedFusionReadsElsewhere, 0, fused);
  }
}

TEST(GpuInPlaceTest, BadAliasIsAnError) {
  std::unique_ptr<HloModule> module = Module(modules::kBadAlias);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*module, PlanOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_TRUE(absl::StrContains(program.status().message(), "input_output_alias"))
      << program.status();
}

// On a GPU: every case runs and matches the interpreter (updates in place,
// shared loop states and aliased outputs included).
TEST(GpuInPlaceDeviceTest, MatchesTheInterpreter) {
  HLOC_SKIP_WITHOUT_GPU();
  for (const char* text :
       {modules::kScanRows, modules::kScanKeepsOld, modules::kDusParameter, modules::kDusDeadTemp,
        modules::kDusLiveTemp, modules::kDusReadsTarget, modules::kDusFused,
        modules::kDusAccumulatesWindow, modules::kDonatedUpdate, modules::kDonatedScan, modules::kDonatedReverse,
        modules::kDonatedElementwise, modules::kDonatedElementwiseFusion,
        modules::kDonatedFusionReadsElsewhere}) {
    std::unique_ptr<HloModule> module = Module(text);
    ASSERT_NE(module, nullptr);
    absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(*module, 7);
    ASSERT_TRUE(arguments.ok()) << arguments.status();
    absl::StatusOr<Literal> expected = Evaluate(*module, *arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    std::string plan;
    absl::StatusOr<Literal> actual =
        RunOnTestDevice(*module, *arguments, /*use_graph=*/true, &plan);
    ASSERT_TRUE(actual.ok()) << actual.status() << "\n" << plan;
    EXPECT_TRUE(CompareLiterals(*expected, *actual, Tolerance{1e-5, 1e-6}).ok)
        << module->name() << "\n"
        << plan;
  }
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
