// Collectives in GPU plans, without a GPU: every collective of
// gpu_collective_test_modules compiles (for one device and for four) to
// NCCL thunks with PTX kernels for the ops around them and nothing in the
// interpreter; a reduction NCCL lacks is a compile error naming the
// instruction; and running asks for GPUs first.
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_collective_test_modules.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/gpu_test_util.h"
#include "backend/gpu/run_on_gpu_devices.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace gpu {
namespace {

namespace mods = test_modules;

TEST(GpuCollectivePlanTest, EveryCollectiveIsAnNcclThunk) {
  for (int devices : {1, 4}) {
    for (const mods::CollectiveCase& c : mods::CollectiveCases(devices)) {
      SCOPED_TRACE(absl::StrCat(c.name, " on ", devices, " devices"));
      // As the device test compiles it.
      absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.text);
      ASSERT_TRUE(module.ok()) << module.status();
      absl::StatusOr<bool> optimized = OptimizeForGpu(**module);
      ASSERT_TRUE(optimized.ok()) << optimized.status();
      absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(**module, PlanOptions());
      ASSERT_TRUE(program.ok()) << program.status();
      const GpuCompileReport& report = (*program)->report();
      const std::string thunks = (*program)->executable().ThunksToString();
      EXPECT_GT(report.collectives, 0) << report.ToString();
      EXPECT_EQ(report.interpreter_calls, 0) << report.ToString();
      EXPECT_TRUE(absl::StrContains(thunks, absl::StrCat("nccl ", c.name, " "))) << thunks;
      // The elementwise ops around the collective are PTX kernels.
      EXPECT_TRUE(absl::StrContains(thunks, "kernel ")) << thunks;
      EXPECT_GT(report.kernels, 0) << report.ToString();
      if (devices > 1 && (c.name == "all-gather" || c.name == "all-to-all")) {
        // An inner dimension is repacked through scratch.
        EXPECT_TRUE(absl::StrContains((*program)->PlanToString(), ".scratch"))
            << (*program)->PlanToString();
      }
    }
  }
}

// The device test's oracle: the multi-device interpreter runs every case
// (so a GPU run that fails is the GPU's failure, not the module's).
TEST(GpuCollectivePlanTest, InterpreterRunsEveryCase) {
  for (int devices : {1, 4}) {
    for (const mods::CollectiveCase& c : mods::CollectiveCases(devices)) {
      SCOPED_TRACE(absl::StrCat(c.name, " on ", devices, " devices"));
      absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.text);
      ASSERT_TRUE(module.ok()) << module.status();
      std::vector<std::vector<Literal>> args(devices);
      for (int d = 0; d < devices; ++d) args[d].push_back(mods::CollectiveArgument(d, devices));
      absl::StatusOr<std::vector<Literal>> results = EvaluateOnDevices(**module, args);
      ASSERT_TRUE(results.ok()) << results.status();
      ASSERT_EQ(static_cast<int>(results->size()), devices);
      if (c.name == "replica-id") {
        EXPECT_EQ((*results)[devices - 1].ToString().find("u32[] " +
                                                          std::to_string(devices - 1)) !=
                      std::string::npos,
                  true)
            << (*results)[devices - 1].ToString();
      }
    }
  }
}

TEST(GpuCollectivePlanTest, GroupsAndPairsArePrinted) {
  std::unique_ptr<HloModule> module = ParseAndRunPipeline(R"(
HloModule m, replica_count=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[8] parameter(0)
  ar = f32[8] all-reduce(p), replica_groups=[2,2]<=[4], to_apply=add
  cp = f32[8] collective-permute(ar), source_target_pairs={{0,1},{1,0}}
  ROOT n = f32[8] negate(cp)
}
)",
                                                          "default");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*module, PlanOptions());
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string thunks = (*program)->executable().ThunksToString();
  EXPECT_TRUE(absl::StrContains(thunks, "nccl all-reduce %ar sum f32 groups={{0,1},{2,3}}"))
      << thunks;
  EXPECT_TRUE(absl::StrContains(thunks, "nccl collective-permute %cp pairs={{0,1},{1,0}}"))
      << thunks;
}

TEST(GpuCollectivePlanTest, ReductionNcclLacksIsACompileError) {
  std::unique_ptr<HloModule> module = ParseAndRunPipeline(R"(
HloModule m, replica_count=2

or_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT o = s32[] or(a, b)
}

ENTRY e {
  p = s32[8] parameter(0)
  ROOT ar = s32[8] all-reduce(p), replica_groups={}, to_apply=or_s32
}
)",
                                                          "default");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*module, PlanOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_TRUE(absl::StrContains(program.status().message(), "%ar")) << program.status();
  EXPECT_TRUE(absl::StrContains(program.status().message(), "NCCL has no or reduction over s32"))
      << program.status();
}

TEST(GpuCollectivePlanTest, RunningNeedsAGpuPerDevice) {
  if (GpuDeviceCount() >= 4) GTEST_SKIP() << "this machine has 4 GPUs";
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseHloModule(mods::CollectiveCases(4)[0].text);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::unique_ptr<GpuDevicesProgram>> program =
      GpuDevicesProgram::Compile(**module);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition) << program.status();
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
