// Collectives on GPUs with NCCL, against the multi-device interpreter: every
// module of gpu_collective_test_modules (all-reduce, all-gather,
// reduce-scatter, all-to-all, collective-permute, collective-broadcast,
// replica-id) on one GPU (one rank), with and without CUDA graphs, and on
// all the GPUs of the machine when there are several (one rank per GPU, the
// same code path). Results must equal the interpreter's exactly (the
// arguments keep every sum an exact integer).
//
// Without a GPU, or without libnccl.so.2 (nccl_library.h says where it is
// looked for; HLOC_NCCL_LIBRARY names a file), each test reports SKIPPED
// with the reason.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_collective_test_modules.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/run_on_gpu_devices.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/text_parser.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/nccl_library.h"

namespace hloc {
namespace gpu {
namespace {

namespace mods = test_modules;

// Why the collectives cannot run here, or "".
std::string SkipReason() {
  const std::string no_gpu = cuda::NoGpuReason();
  if (!no_gpu.empty()) return no_gpu;
  absl::StatusOr<const cuda::NcclLibrary*> nccl = cuda::NcclLibrary::Get();
  if (!nccl.ok()) return std::string(nccl.status().message());
  return "";
}

#define HLOC_SKIP_WITHOUT_NCCL()                  \
  do {                                            \
    const std::string reason = SkipReason();      \
    if (!reason.empty()) GTEST_SKIP() << reason;  \
  } while (0)

// Runs every case on `devices` GPUs (twice, the second run checked) and
// compares each device's result with the interpreter's.
void ExpectCasesMatchInterpreter(int devices, bool use_graph) {
  for (const mods::CollectiveCase& c : mods::CollectiveCases(devices)) {
    SCOPED_TRACE(absl::StrCat(c.name, " on ", devices, " GPUs", use_graph ? ", graph" : ""));
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.text);
    ASSERT_TRUE(module.ok()) << module.status();
    std::vector<std::vector<Literal>> args(devices);
    for (int d = 0; d < devices; ++d) args[d].push_back(mods::CollectiveArgument(d, devices));
    absl::StatusOr<std::vector<Literal>> expected = EvaluateOnDevices(**module, args);
    ASSERT_TRUE(expected.ok()) << expected.status();

    std::unique_ptr<HloModule> optimized = (*module)->Clone();
    absl::StatusOr<bool> changed = OptimizeForGpu(*optimized);
    ASSERT_TRUE(changed.ok()) << changed.status();
    RunOnGpuOptions options;
    options.autotune = false;
    options.use_cuda_graph = use_graph;
    absl::StatusOr<std::unique_ptr<GpuDevicesProgram>> program =
        GpuDevicesProgram::Compile(*optimized, options);
    ASSERT_TRUE(program.ok()) << program.status();
    const std::string plan = (*program)->program(0).PlanToString();
    EXPECT_EQ((*program)->program(0).report().interpreter_calls, 0) << plan;
    for (int run = 0; run < 2; ++run) {
      absl::StatusOr<std::vector<Literal>> actual = (*program)->Execute(args);
      ASSERT_TRUE(actual.ok()) << "run " << run << ": " << actual.status() << "\n" << plan;
      ASSERT_EQ(actual->size(), expected->size());
      for (int d = 0; d < devices; ++d) {
        EXPECT_EQ((*actual)[d].ToString(), (*expected)[d].ToString())
            << "run " << run << ", device " << d << "\n" << plan;
      }
    }
  }
}

TEST(GpuCollectiveDeviceTest, NcclLibrary) {
  HLOC_SKIP_WITHOUT_NCCL();
  const cuda::NcclLibrary* nccl = *cuda::NcclLibrary::Get();
  std::cout << "NCCL " << nccl->version() << " from " << nccl->path() << ", "
            << GpuDeviceCount() << " GPUs\n";
  EXPECT_GT(nccl->version(), 0);
}

TEST(GpuCollectiveDeviceTest, OneGpu) {
  HLOC_SKIP_WITHOUT_NCCL();
  ExpectCasesMatchInterpreter(1, /*use_graph=*/false);
}

TEST(GpuCollectiveDeviceTest, OneGpuInACudaGraph) {
  HLOC_SKIP_WITHOUT_NCCL();
  ExpectCasesMatchInterpreter(1, /*use_graph=*/true);
}

TEST(GpuCollectiveDeviceTest, EveryGpu) {
  HLOC_SKIP_WITHOUT_NCCL();
  const int gpus = GpuDeviceCount();
  if (gpus < 2) GTEST_SKIP() << "one GPU here (" << gpus << "); the one-GPU tests ran the same path";
  ExpectCasesMatchInterpreter(gpus, /*use_graph=*/false);
}

// A module for more devices than the machine has is an error naming the
// counts, not a hang.
TEST(GpuCollectiveDeviceTest, MoreDevicesThanGpusIsAnError) {
  HLOC_SKIP_WITHOUT_NCCL();
  const int devices = GpuDeviceCount() + 1;
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseHloModule(mods::CollectiveCases(devices)[0].text);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::unique_ptr<GpuDevicesProgram>> program =
      GpuDevicesProgram::Compile(**module);
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("GPUs"), std::string::npos) << program.status();
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
