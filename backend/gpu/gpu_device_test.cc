// The CUDA backend end to end on a GPU: every JAX zoo model and a few small
// modules compiled, loaded and run, compared with the reference
// interpreter; a gemm through hloc compared with cuBLAS called directly
// (result and time). On a machine without a usable GPU every test reports
// SKIPPED with the reason.
#include <cublas_v2.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_device_test_util.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/gpu_test_modules.h"
#include "gtest/gtest.h"
#include "hlo/testing/corpus.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/loader.h"
#include "hlo/text_parser.h"
#include "runtime/cuda/alternatives_thunk.h"
#include "runtime/cuda/autotune_cache.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/dynamic_library.h"

namespace hloc {
namespace gpu {
namespace {

#define SKIP_WITHOUT_GPU() HLOC_SKIP_WITHOUT_GPU()

using testdata::ZooDir;
using testdata::ZooModels;

cuda::CudaDevice* Device() { return TestDevice(); }

absl::StatusOr<Literal> RunOnDevice(const HloModule& module, absl::Span<const Literal> arguments,
                                    bool use_graph, std::string* plan = nullptr) {
  return RunOnTestDevice(module, arguments, use_graph, plan);
}

class GpuZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuZooTest, MatchesTheInterpreter) {
  SKIP_WITHOUT_GPU();
  ASSERT_NE(Device(), nullptr);
  const std::string path = absl::StrCat(ZooDir(), "/", GetParam(), ".snapshot.pb");
  absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  static const std::set<std::string> kNoGpuPath = {};  // Every zoo model runs on the GPU.
  std::string plan;
  absl::StatusOr<Literal> actual =
      RunOnDevice(*snapshot->module, snapshot->arguments, /*use_graph=*/true, &plan);
  if (kNoGpuPath.count(GetParam()) > 0) {
    ASSERT_FALSE(actual.ok());
    EXPECT_EQ(actual.status().code(), absl::StatusCode::kUnimplemented) << actual.status();
    return;
  }
  ASSERT_TRUE(actual.ok()) << actual.status() << "\n" << plan;
  absl::StatusOr<Literal> expected = Evaluate(*snapshot->module, snapshot->arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  const Tolerance tolerance = GpuTolerance(FirstArrayType(expected->shape()));
  ComparisonReport report = CompareLiterals(*expected, *actual, tolerance);
  EXPECT_TRUE(report.ok) << GetParam() << ": " << report.ToString() << "\n" << plan;
  if (snapshot->result.has_value()) {
    ComparisonReport xla = CompareLiterals(*snapshot->result, *actual, tolerance);
    EXPECT_TRUE(xla.ok) << GetParam() << " vs XLA:CPU: " << xla.ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, GpuZooTest, ::testing::ValuesIn(ZooModels()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// Small modules covering each kernel strategy and control flow, each a
// test case.
const std::vector<std::string>& SmallModules() {
  namespace mods = test_modules;
  static const std::vector<std::string>* const modules = new std::vector<std::string>{
      R"(HloModule elementwise
ENTRY main {
  a = f32[1000] parameter(0)
  b = f32[1000] parameter(1)
  m = f32[1000] multiply(a, b)
  e = f32[1000] exponential(m)
  ROOT t = f32[1000] tanh(e)
})",
      absl::StrCat("HloModule row_reduce\n", mods::Binary("add", "add", "f32"),
                   mods::Reduce("ENTRY main", "f32[64,1000]", "f32[64]", "1", "0", "add")),
      absl::StrCat("HloModule column_reduce\n", mods::Binary("add", "add", "f32"),
                   mods::Reduce("ENTRY main", "f32[1000,64]", "f32[64]", "0", "0", "add")),
      // Split reductions (a partials kernel, then a combine kernel).
      absl::StrCat("HloModule split_full_sum\n", mods::Binary("add", "add", "f32"),
                   mods::Reduce("ENTRY main", "f32[1048576]", "f32[]", "0", "1", "add")),
      absl::StrCat("HloModule split_few_rows_max\n", mods::Binary("max", "maximum", "f32"),
                   mods::Reduce("ENTRY main", "f32[4,262144]", "f32[4]", "1", "-inf", "max")),
      absl::StrCat("HloModule split_columns\n", mods::Binary("add", "add", "f32"),
                   mods::Reduce("ENTRY main", "f32[65536,32]", "f32[32]", "0", "0", "add")),
      absl::StrCat("HloModule split_argmax\n", mods::ArgmaxReducer("argmax"),
                   mods::ArgmaxRows("ENTRY main", {8, 131072}, "argmax")),
      R"(HloModule transpose
ENTRY main {
  a = f32[96,130] parameter(0)
  ROOT t = f32[130,96] transpose(a), dimensions={1,0}
})",
      R"(HloModule conditional
neg { p = f32[16] parameter(0)
  ROOT n = f32[16] negate(p) }
ident { p = f32[16] parameter(0)
  ROOT c = f32[16] copy(p) }
ENTRY main {
  s = pred[] parameter(0)
  x = f32[16] parameter(1)
  ROOT r = f32[16] conditional(s, x, x), true_computation=neg, false_computation=ident
})",
      mods::GemmBiasReluModule("gemm_bias_relu", 64, 128, 96),
      R"(HloModule conv_nchw
ENTRY main {
  x = f32[2,8,17,17] parameter(0)
  k = f32[16,8,3,3] parameter(1)
  ROOT conv = f32[2,16,9,9] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})",
  };
  return *modules;
}

class GpuSmallModuleTest : public ::testing::TestWithParam<int> {};

TEST_P(GpuSmallModuleTest, MatchesTheInterpreter) {
  SKIP_WITHOUT_GPU();
  ASSERT_NE(Device(), nullptr);
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(SmallModules()[GetParam()]);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(**module, 42);
  ASSERT_TRUE(arguments.ok()) << arguments.status();
  absl::StatusOr<Literal> expected = Evaluate(**module, *arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (bool graph : {false, true}) {
    std::string plan;
    absl::StatusOr<Literal> actual = RunOnDevice(**module, *arguments, graph, &plan);
    ASSERT_TRUE(actual.ok()) << actual.status() << "\n" << plan;
    ComparisonReport report = CompareLiterals(*expected, *actual, GpuTolerance(xla::F32));
    EXPECT_TRUE(report.ok) << (*module)->name() << ": " << report.ToString() << "\n" << plan;
  }
}

INSTANTIATE_TEST_SUITE_P(Small, GpuSmallModuleTest,
                         ::testing::Range(0, static_cast<int>(SmallModules().size())));

// A loop whose body is several kernels (a row reduction feeding an
// elementwise update, then the counter): the body is captured into a CUDA
// graph once and replayed each iteration (runtime/cuda/graph_segments.h),
// with the interpreter's answer.
constexpr char kLoopOfKernels[] = R"(
HloModule loop_of_kernels

add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  state = (s32[], f32[64,128]) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  n = s32[] constant(12)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  state = (s32[], f32[64,128]) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  x = f32[64,128] get-tuple-element(state), index=1
  zero = f32[] constant(0)
  rows = f32[64] reduce(x, zero), dimensions={1}, to_apply=add_f32
  k = f32[] constant(0.001)
  kb = f32[64] broadcast(k), dimensions={}
  scaled = f32[64] multiply(rows, kb)
  t = f32[64] tanh(scaled)
  tb = f32[64,128] broadcast(t), dimensions={0}
  y = f32[64,128] subtract(x, tb)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT next = (s32[], f32[64,128]) tuple(j, y)
}

ENTRY main {
  x0 = f32[64,128] parameter(0)
  i0 = s32[] constant(0)
  init = (s32[], f32[64,128]) tuple(i0, x0)
  loop = (s32[], f32[64,128]) while(init), condition=cond, body=body
  ROOT out = f32[64,128] get-tuple-element(loop), index=1
}
)";

TEST(GpuGraphSegmentsTest, ALoopBodyReplaysAsOneGraphPerIteration) {
  SKIP_WITHOUT_GPU();
  ASSERT_NE(Device(), nullptr);
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kLoopOfKernels);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(**module, 7);
  ASSERT_TRUE(arguments.ok()) << arguments.status();
  absl::StatusOr<Literal> expected = Evaluate(**module, *arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (bool graph : {false, true}) {
    std::unique_ptr<HloModule> optimized = (*module)->Clone();
    ASSERT_TRUE(OptimizeForGpu(*optimized).ok());
    GpuProgramOptions options;
    options.codegen.target = TargetForDevice(Device()->info());
    absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*optimized, options);
    ASSERT_TRUE(program.ok()) << program.status();
    cuda::GpuLoadOptions load;
    load.use_cuda_graph = graph;
    ASSERT_TRUE((*program)->Load(Device(), load).ok());
    for (int run = 0; run < 2; ++run) {
      absl::StatusOr<Literal> actual = (*program)->Execute(*arguments);
      ASSERT_TRUE(actual.ok()) << actual.status();
      ComparisonReport report = CompareLiterals(*expected, *actual, GpuTolerance(xla::F32));
      EXPECT_TRUE(report.ok) << report.ToString() << "\n" << (*program)->PlanToString();
    }
    const cuda::GraphStats stats = (*program)->executable().graph_stats();
    EXPECT_EQ(stats.capture_failures, 0);
    if (!graph) {
      EXPECT_EQ(stats.captured, 0);
      EXPECT_EQ(stats.launches, 0);
      continue;
    }
    // Captured once (more only when the condition or the steps around the
    // loop are graphs too); launched every iteration of both runs.
    EXPECT_GE(stats.captured, 1) << (*program)->PlanToString();
    EXPECT_LE(stats.captured, 3) << (*program)->PlanToString();
    EXPECT_GE(stats.launches, 2 * 12) << (*program)->PlanToString();
  }
}

// cuBLAS itself, for the comparison below.
struct Cublas {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  decltype(&::cublasSgemm_v2) sgemm = nullptr;
};

TEST(GpuGemmTest, MatchesAndKeepsUpWithCublasCalledDirectly) {
  SKIP_WITHOUT_GPU();
  cuda::CudaDevice* device = Device();
  ASSERT_NE(device, nullptr);
  auto library = cuda::DynamicLibrary::Open("cuBLAS not available",
                                            {"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
  if (!library.ok()) GTEST_SKIP() << library.status();
  Cublas cublas;
  cublas.create = reinterpret_cast<decltype(cublas.create)>((*library)->Symbol("cublasCreate_v2"));
  cublas.destroy =
      reinterpret_cast<decltype(cublas.destroy)>((*library)->Symbol("cublasDestroy_v2"));
  cublas.set_stream =
      reinterpret_cast<decltype(cublas.set_stream)>((*library)->Symbol("cublasSetStream_v2"));
  cublas.sgemm = reinterpret_cast<decltype(cublas.sgemm)>((*library)->Symbol("cublasSgemm_v2"));
  ASSERT_TRUE(cublas.create && cublas.destroy && cublas.set_stream && cublas.sgemm);

  const int n = 2048;
  const std::string text = test_modules::SquareGemmModule("gemm", n);
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(OptimizeForGpu(**module).ok());
  GpuProgramOptions options;
  options.codegen.target = TargetForDevice(device->info());
  auto program = CompileForGpu(**module, options);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ((*program)->report().gemms.size(), 1u) << (*program)->PlanToString();
  ASSERT_TRUE((*program)->Load(device).ok());
  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(**module, 3);
  ASSERT_TRUE(arguments.ok());
  absl::StatusOr<Literal> ours = (*program)->Execute(*arguments);
  ASSERT_TRUE(ours.ok()) << ours.status();

  // The same product with cublasSgemm: row-major C = A B is column-major C^T = B^T A^T.
  const int64_t bytes = int64_t{n} * n * 4;
  absl::StatusOr<CUdeviceptr> a = device->Allocate(bytes), b = device->Allocate(bytes),
                              c = device->Allocate(bytes);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_TRUE(device->CopyToDevice(*a, (*arguments)[0].raw(), bytes).ok());
  ASSERT_TRUE(device->CopyToDevice(*b, (*arguments)[1].raw(), bytes).ok());
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublas.create(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublas.set_stream(handle, reinterpret_cast<cudaStream_t>(device->stream())),
            CUBLAS_STATUS_SUCCESS);
  const float one = 1, zero = 0;
  auto run_cublas = [&]() -> absl::Status {
    if (cublas.sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                     reinterpret_cast<const float*>(*b), n, reinterpret_cast<const float*>(*a), n,
                     &zero, reinterpret_cast<float*>(*c), n) != CUBLAS_STATUS_SUCCESS) {
      return absl::InternalError("cublasSgemm failed");
    }
    return absl::OkStatus();
  };
  ASSERT_TRUE(run_cublas().ok());
  Literal theirs(ours->shape());
  ASSERT_TRUE(device->CopyToHost(theirs.mutable_raw(), *c, bytes).ok());
  ASSERT_TRUE(device->Synchronize().ok());
  ComparisonReport report = CompareLiterals(theirs, *ours, Tolerance{1e-4, 1e-4});
  EXPECT_TRUE(report.ok) << report.ToString();

  // Time: best of 10 each.
  double best_ours = 1e30, best_theirs = 1e30;
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<double> t = (*program)->executable().TimeRun();
    ASSERT_TRUE(t.ok()) << t.status();
    best_ours = std::min(best_ours, *t);
    absl::StatusOr<double> u = device->TimeOnStream(run_cublas);
    ASSERT_TRUE(u.ok()) << u.status();
    best_theirs = std::min(best_theirs, *u);
  }
  std::printf("gemm %dx%dx%d f32: hloc %.3f ms, cuBLAS direct %.3f ms, hloc reaches %.0f%%\n", n, n,
              n, best_ours, best_theirs, 100.0 * best_theirs / best_ours);
  cublas.destroy(handle);
  for (CUdeviceptr p : {*a, *b, *c}) device->Free(p).IgnoreError();
}

// Library or generated kernel, timed at load (runtime/cuda/
// alternatives_thunk.h): an 8x8x8 gemm, where the generated kernel may win,
// and a 2048^3 one, where cuBLASLt must. Every way of choosing computes the
// right product, and a reload takes the cached choice without timing.
TEST(GpuLibraryOrGeneratedTest, TimesBothAlternativesAndCachesTheChoice) {
  SKIP_WITHOUT_GPU();
  cuda::CudaDevice* device = Device();
  ASSERT_NE(device, nullptr);
  cuda::AutotuneCache cache;  // In memory: shared by the loads below.
  for (int n : {8, 2048}) {
    const std::string text = test_modules::SquareGemmModule("gemm", n);
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(**module, 9);
    ASSERT_TRUE(arguments.ok()) << arguments.status();
    // The reference: the interpreter for the small product; for the large
    // one (too slow to interpret) 512 sampled entries summed in double.
    std::optional<Literal> expected;
    if (n <= 64) {
      absl::StatusOr<Literal> evaluated = Evaluate(**module, *arguments);
      ASSERT_TRUE(evaluated.ok()) << evaluated.status();
      expected = *std::move(evaluated);
    }
    auto check = [&](const Literal& actual, absl::string_view how) {
      if (expected.has_value()) {
        ComparisonReport report = CompareLiterals(*expected, actual, GpuTolerance(xla::F32));
        EXPECT_TRUE(report.ok) << n << " " << how << ": " << report.ToString();
        return;
      }
      const float* a = reinterpret_cast<const float*>((*arguments)[0].raw());
      const float* b = reinterpret_cast<const float*>((*arguments)[1].raw());
      const float* d = reinterpret_cast<const float*>(actual.raw());
      int bad = 0;
      for (int s = 0; s < 512; ++s) {
        const int64_t i = (s * 7919) % n, j = (s * 104729 + 13) % n;
        double sum = 0, magnitude = 0;
        for (int64_t l = 0; l < n; ++l) {
          sum += double{a[i * n + l]} * b[l * n + j];
          magnitude += std::abs(double{a[i * n + l]} * b[l * n + j]);
        }
        if (std::abs(d[i * n + j] - sum) > 1e-3 * magnitude + 1e-5) ++bad;
      }
      EXPECT_EQ(bad, 0) << n << " " << how << ": sampled entries off";
    };
    struct Load {
      const char* how;
      cuda::AlternativeSelection selection;
    };
    std::string timed_choice;
    for (const Load& load : {Load{"timed", cuda::AlternativeSelection::kTimed},
                             Load{"reloaded", cuda::AlternativeSelection::kTimed},
                             Load{"library", cuda::AlternativeSelection::kLibrary},
                             Load{"generated", cuda::AlternativeSelection::kGenerated}}) {
      std::unique_ptr<HloModule> optimized = (*module)->Clone();
      ASSERT_TRUE(OptimizeForGpu(*optimized).ok());
      GpuProgramOptions options;
      options.codegen.target = TargetForDevice(device->info());
      absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*optimized, options);
      ASSERT_TRUE(program.ok()) << program.status();
      ASSERT_EQ((*program)->report().alternatives.size(), 1u) << (*program)->PlanToString();
      cuda::GpuLoadOptions load_options;
      load_options.autotune_cache = &cache;
      load_options.alternatives = load.selection;
      absl::Status loaded = (*program)->Load(device, load_options);
      ASSERT_TRUE(loaded.ok()) << loaded << "\n" << (*program)->PlanToString();
      std::string choice;
      for (const std::string& line : (*program)->executable().load_log()) {
        if (absl::StrContains(line, "-> library") || absl::StrContains(line, "-> generated")) {
          choice = line;
        }
      }
      ASSERT_FALSE(choice.empty()) << absl::StrJoin((*program)->executable().load_log(), "\n");
      std::printf("gemm %dx%dx%d %s: %s\n", n, n, n, load.how, choice.c_str());
      absl::StatusOr<Literal> actual = (*program)->Execute(*arguments);
      ASSERT_TRUE(actual.ok()) << actual.status() << "\n" << (*program)->PlanToString();
      check(*actual, load.how);
      if (load.selection != cuda::AlternativeSelection::kTimed) {
        EXPECT_TRUE(absl::StrContains(choice, absl::StrCat("-> ", load.how, " (forced)"))) << choice;
      } else if (timed_choice.empty()) {
        EXPECT_TRUE(absl::StrContains(choice, " ms vs generated ")) << choice;
        EXPECT_FALSE(absl::StrContains(choice, "(cached)")) << choice;
        timed_choice = choice;
        if (n >= 1024) {
          EXPECT_TRUE(absl::EndsWith(choice, "-> library")) << choice;
        }
      } else {
        // The same decision, from the cache.
        EXPECT_EQ(choice, absl::StrCat(timed_choice, " (cached)"));
      }
    }
  }
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
