// Collectives on GPUs with NCCL, against the multi-device interpreter: every
// module of gpu_collective_test_modules (all-reduce, all-gather,
// reduce-scatter, all-to-all, collective-permute, collective-broadcast,
// replica-id) on one GPU (one rank), with and without CUDA graphs, and on
// all the GPUs of the machine when there are several (one rank per GPU, the
// same code path). Results must equal the interpreter's exactly (the
// arguments keep every sum an exact integer). Without a CUDA graph the
// collectives run under the NCCL watchdog (nccl_clique.h); the graph runs
// turn it off. The watchdog itself: a two-rank communicator whose second
// rank never joins must fail with DeadlineExceeded within its short
// timeout, after which the GPU still runs a collective program correctly.
//
// Without a GPU, or without libnccl.so.2 (nccl_library.h says where it is
// looked for; HLOC_NCCL_LIBRARY names a file), each test reports SKIPPED
// with the reason.
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "backend/gpu/gpu_collective_test_modules.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/run_on_gpu_devices.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/text_parser.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/nccl_clique.h"
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

// The module optimized for the GPU and compiled for its devices (no
// autotuning: the collectives are the point), its collectives watched with
// `timeout` (0: not watched, which a CUDA graph needs).
absl::StatusOr<std::unique_ptr<GpuDevicesProgram>> CompileForGpus(
    const HloModule& module, bool use_graph,
    absl::Duration timeout = cuda::kDefaultCollectiveTimeout) {
  std::unique_ptr<HloModule> optimized = module.Clone();
  absl::StatusOr<bool> changed = OptimizeForGpu(*optimized);
  if (!changed.ok()) return changed.status();
  RunOnGpuOptions options;
  options.autotune = false;
  options.use_cuda_graph = use_graph;
  options.collective_timeout = timeout;
  return GpuDevicesProgram::Compile(*optimized, options);
}

// Runs every case (the first `limit`) on `devices` GPUs (twice, the second
// run checked) and compares each device's result with the interpreter's.
void ExpectCasesMatchInterpreter(int devices, bool use_graph, size_t limit = 1000,
                                 absl::Duration timeout = cuda::kDefaultCollectiveTimeout) {
  std::vector<mods::CollectiveCase> cases = mods::CollectiveCases(devices);
  if (cases.size() > limit) cases.resize(limit);
  for (const mods::CollectiveCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.name, " on ", devices, " GPUs", use_graph ? ", graph" : ""));
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.text);
    ASSERT_TRUE(module.ok()) << module.status();
    std::vector<std::vector<Literal>> args(devices);
    for (int d = 0; d < devices; ++d) args[d].push_back(mods::CollectiveArgument(d, devices));
    absl::StatusOr<std::vector<Literal>> expected = EvaluateOnDevices(**module, args);
    ASSERT_TRUE(expected.ok()) << expected.status();

    absl::StatusOr<std::unique_ptr<GpuDevicesProgram>> program =
        CompileForGpus(**module, use_graph, timeout);
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
  // A graph needs the watchdog off.
  ExpectCasesMatchInterpreter(1, /*use_graph=*/true, /*limit=*/1000, absl::ZeroDuration());
}

// A watched collective waits on the host, so its program runs thunk by
// thunk even when graphs are allowed; unwatched, the same program may be
// captured (printed: a library may refuse capture).
TEST(GpuCollectiveDeviceTest, WatchedCollectivesRunWithoutACudaGraph) {
  HLOC_SKIP_WITHOUT_NCCL();
  const mods::CollectiveCase c = mods::CollectiveCases(1)[0];
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<std::vector<Literal>> args(1);
  args[0].push_back(mods::CollectiveArgument(0, 1));
  for (const absl::Duration timeout : {absl::Seconds(5), absl::ZeroDuration()}) {
    absl::StatusOr<std::unique_ptr<GpuDevicesProgram>> program =
        CompileForGpus(**module, /*use_graph=*/true, timeout);
    ASSERT_TRUE(program.ok()) << program.status();
    for (int run = 0; run < 2; ++run) {
      absl::StatusOr<std::vector<Literal>> result = (*program)->Execute(args);
      ASSERT_TRUE(result.ok()) << result.status();
    }
    const bool graph = (*program)->program(0).executable().uses_graph();
    std::cout << c.name << " with collective_timeout " << timeout
              << (graph ? ": CUDA graph\n" : ": thunk by thunk\n");
    if (timeout > absl::ZeroDuration()) EXPECT_FALSE(graph) << "a watched collective in a graph";
  }
}

TEST(GpuCollectiveDeviceTest, EveryGpu) {
  HLOC_SKIP_WITHOUT_NCCL();
  const int gpus = GpuDeviceCount();
  if (gpus < 2) GTEST_SKIP() << "one GPU here (" << gpus << "); the one-GPU tests ran the same path";
  ExpectCasesMatchInterpreter(gpus, /*use_graph=*/false);
}

// The watchdog on a real NCCL and GPU: rank 0 of a two-rank communicator
// whose rank 1 never joins waits in NCCL's bootstrap for ever without it.
// With a 3 s timeout the init must fail with DeadlineExceeded in about 3 s
// (ncclCommAbort releases it), and the GPU must then still run a
// collective program, watched, correctly.
TEST(GpuCollectiveDeviceTest, AbsentRankTimesOutAndTheGpuStaysUsable) {
  HLOC_SKIP_WITHOUT_NCCL();
  absl::StatusOr<std::unique_ptr<cuda::CudaDevice>> device = cuda::CudaDevice::Open(0);
  ASSERT_TRUE(device.ok()) << device.status();
  const cuda::NcclLibrary& nccl = **cuda::NcclLibrary::Get();
  const absl::Duration timeout = absl::Seconds(3);
  const cuda::NcclWait wait =
      cuda::NcclWait::Starting("two-rank init, rank 1 absent", {0, 1}, 0, timeout);
  const std::vector<cuda::NcclMember> members = {{/*rank=*/0, /*ordinal=*/0}};
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<ncclComm_t>> comms =
      cuda::InitNcclCommunicators(nccl, /*nranks=*/2, members, cuda::SelectDeviceWithDriver, wait);
  const absl::Duration took = absl::Now() - start;
  std::cout << "absent rank: " << comms.status() << " after " << took << "\n";
  ASSERT_FALSE(comms.ok()) << "a two-rank communicator was made with one rank";
  EXPECT_EQ(comms.status().code(), absl::StatusCode::kDeadlineExceeded) << comms.status();
  EXPECT_NE(comms.status().message().find("did not finish within 3s"), std::string::npos)
      << comms.status();
  EXPECT_GE(took, timeout);
  EXPECT_LT(took, timeout + absl::Seconds(30)) << "the abort took long";
  ASSERT_TRUE((*device)->MakeCurrent().ok());
  // The GPU after the abort: a watched all-reduce program, run twice.
  ExpectCasesMatchInterpreter(1, /*use_graph=*/false, /*limit=*/1, /*timeout=*/absl::Seconds(5));
}

// A ragged-all-to-all whose sizes run past its input fails with the
// planner's error (naming the instruction), not an NCCL transfer out of
// bounds; the failure aborts the program's communicators, so the next run
// is refused with a clear error instead of using them.
TEST(GpuCollectiveDeviceTest, BadRaggedSizesFailAndAbortTheProgram) {
  HLOC_SKIP_WITHOUT_NCCL();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule ragged_past_the_end, replica_count=1
ENTRY e {
  p = f32[2,6] parameter(0)
  input = f32[6,2] transpose(p), dimensions={1,0}
  output = f32[6,2] negate(input)
  input_offsets = s32[1] constant({5})
  sizes = s32[1] constant({3})
  output_offsets = s32[1] constant({0})
  ROOT r = f32[6,2] ragged-all-to-all(input, output, input_offsets, sizes, output_offsets, sizes), replica_groups={}
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::unique_ptr<GpuDevicesProgram>> program =
      CompileForGpus(**module, /*use_graph=*/false);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<std::vector<Literal>> args(1);
  args[0].push_back(mods::CollectiveArgument(0, 1));
  absl::StatusOr<std::vector<Literal>> first = (*program)->Execute(args);
  ASSERT_FALSE(first.ok()) << "rows 5..8 of a 6-row input ran";
  std::cout << "first run: " << first.status() << "\n";
  EXPECT_EQ(first.status().code(), absl::StatusCode::kOutOfRange) << first.status();
  EXPECT_NE(first.status().message().find("of an input of 6 rows"), std::string::npos)
      << first.status();
  absl::StatusOr<std::vector<Literal>> second = (*program)->Execute(args);
  ASSERT_FALSE(second.ok());
  std::cout << "second run: " << second.status() << "\n";
  EXPECT_NE(second.status().message().find("aborted"), std::string::npos) << second.status();
}

// The devices of a program run on its kept threads (DeviceThreads): every
// run is one more run of the same threads, device d on the same thread
// each time (device 0 on the caller), one thread per device. A device
// whose arguments are wrong fails naming itself, the others (waiting in
// NCCL for it on several GPUs) are released by the clique's abort, and the
// program then refuses to run on its aborted communicators.
TEST(GpuCollectiveDeviceTest, DevicesRunOnKeptThreadsAndAFailingDeviceIsNamed) {
  HLOC_SKIP_WITHOUT_NCCL();
  const int gpus = GpuDeviceCount();
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseHloModule(mods::CollectiveCases(gpus)[0].text);  // all-reduce
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::unique_ptr<GpuDevicesProgram>> program =
      CompileForGpus(**module, /*use_graph=*/false);
  ASSERT_TRUE(program.ok()) << program.status();
  const DeviceThreads& threads = (*program)->threads();
  ASSERT_EQ(threads.size(), gpus);
  std::vector<std::thread::id> ids;
  for (int d = 1; d < gpus; ++d) ids.push_back(threads.id(d));
  std::vector<std::vector<Literal>> args(gpus);
  for (int d = 0; d < gpus; ++d) args[d].push_back(mods::CollectiveArgument(d, gpus));
  for (int run = 0; run < 3; ++run) {
    absl::StatusOr<std::vector<Literal>> out = (*program)->Execute(args);
    ASSERT_TRUE(out.ok()) << "run " << run << ": " << out.status();
  }
  EXPECT_EQ(threads.runs(), 3u);
  for (int d = 1; d < gpus; ++d) EXPECT_EQ(threads.id(d), ids[d - 1]) << "device " << d;
  // The last device gets an argument of the wrong shape.
  const int failing = gpus - 1;
  args[failing][0] = Literal::Scalar(xla::F32, 1.0f);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<Literal>> failed = (*program)->Execute(args);
  std::cout << "failing device: " << failed.status() << " after " << absl::Now() - start << "\n";
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message().rfind(absl::StrCat("device ", failing, ": "), 0), 0u)
      << failed.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(60)) << "the other devices were not released";
  EXPECT_EQ(threads.runs(), 4u);
  // The failure aborted the communicators: the program runs no more.
  args[failing][0] = mods::CollectiveArgument(failing, gpus);
  absl::StatusOr<std::vector<Literal>> again = (*program)->Execute(args);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("aborted"), std::string::npos) << again.status();
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
