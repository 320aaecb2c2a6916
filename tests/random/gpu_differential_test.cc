// Random differential testing on the CUDA backend: the random modules of
// differential_test (random_module.h), each through the CUDA pipeline and the
// GPU compiler for sm_90 with every kernel through ptxas (no GPU needed: a
// module the verifier accepts must compile for the GPU), and, where a GPU is
// usable, run on it (every other module with a CUDA graph) and compared with
// the reference interpreter. Ops the GPU compiler leaves to the interpreter
// are counted and printed, not hidden.
//
// Budget and failure reports as differential_driver.h says; the default
// (40 s) is for CI without a GPU. On a GPU machine:
//   HLOC_RANDOM_SECONDS=120 ./gpu_differential_test
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_device_test_util.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/gpu_test_util.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/verifier.h"
#include "runtime/cuda/cuda_device.h"
#include "tests/random/differential_driver.h"

namespace hloc::random_hlo {
namespace {

struct GpuCounts {
  int64_t compiled = 0;  // modules through CompileForGpu (sm_90, ptxas)
  int64_t ran = 0;       // modules run on the device
  int64_t kernels = 0;
  int64_t library_calls = 0;
  int64_t interpreter_calls = 0;
  std::map<std::string, int> interpreter_opcodes;
};

// The looser of the random modules' tolerance and the GPU's (library
// summation orders, GPU math functions).
Tolerance GpuRandomTolerance(PrimitiveType type) {
  const Tolerance a = RandomTolerance(type);
  const Tolerance b = gpu::GpuTolerance(type);
  if (type != xla::F64 && type != xla::F32 && type != xla::F16 && type != xla::BF16 &&
      type != xla::C64 && type != xla::C128) {
    return a;  // integers and pred: exact
  }
  Tolerance looser;
  looser.rtol = std::max(a.rtol.value_or(0), b.rtol.value_or(0));
  looser.atol = std::max(a.atol.value_or(0), b.atol.value_or(0));
  return looser;
}

const gpu::GpuProgramOptions& Sm90Options() {
  static const gpu::GpuProgramOptions* options =
      new gpu::GpuProgramOptions(gpu::AssembledSm90Options());
  return *options;
}

std::string Check(const HloModule& module, uint64_t seed, bool gpu_usable, GpuCounts* counts) {
  absl::Status verified = VerifyModule(module);
  if (!verified.ok()) {
    return absl::StrCat("generator: module fails verification: ", verified.ToString());
  }
  // Compile for sm_90 whatever the machine has: the plan and every kernel
  // through ptxas.
  std::unique_ptr<HloModule> optimized = module.Clone();
  absl::StatusOr<bool> changed = gpu::OptimizeForGpu(*optimized, gpu::PipelineWithLibraries());
  if (!changed.ok()) return absl::StrCat("CUDA pipeline: ", changed.status().ToString());
  absl::StatusOr<std::unique_ptr<gpu::GpuProgram>> program =
      gpu::CompileForGpu(*optimized, Sm90Options());
  if (!program.ok()) return absl::StrCat("GPU compiler (sm_90): ", program.status().ToString());
  ++counts->compiled;
  const gpu::GpuCompileReport& report = (*program)->report();
  counts->kernels += report.kernels;
  counts->library_calls += report.library_calls;
  counts->interpreter_calls += report.interpreter_calls;
  for (const auto& [opcode, name] : report.interpreter_opcodes) {
    ++counts->interpreter_opcodes[opcode];
  }
  if (!gpu_usable) return "";

  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(module, seed);
  if (!arguments.ok()) return absl::StrCat("arguments: ", arguments.status().ToString());
  EvaluatorOptions evaluator_options;
  evaluator_options.num_threads = 1;
  absl::StatusOr<Literal> expected = Evaluate(module, *arguments, evaluator_options);
  if (!expected.ok()) return absl::StrCat("interpreter: ", expected.status().ToString());
  const bool graph = seed % 2 == 0;
  absl::StatusOr<Literal> actual = gpu::RunOnTestDevice(module, *arguments, graph);
  if (!actual.ok()) {
    return absl::StrCat("GPU run (", graph ? "graph" : "no graph", "): ",
                        actual.status().ToString());
  }
  ++counts->ran;
  std::string d = Difference(*expected, *actual, GpuRandomTolerance);
  if (!d.empty()) return absl::StrCat("GPU (", graph ? "graph" : "no graph", ") differs: ", d);
  return "";
}

TEST(GpuDifferentialTest, InterpreterVsCudaBackend) {
  const std::string no_gpu = cuda::NoGpuReason();
  if (!no_gpu.empty()) {
    std::printf("no GPU (%s): compiling for sm_90 with ptxas only, nothing runs\n",
                no_gpu.c_str());
  }
  GpuCounts counts;
  DifferentialRun run;
  run.target = "//tests/random:gpu_differential_test";
  run.default_seconds = 40;
  run.check = [&](const HloModule& module, uint64_t seed) {
    return Check(module, seed, no_gpu.empty(), &counts);
  };
  const DifferentialSummary summary = RunDifferential(run);
  const std::string interpreted = CountsText(counts.interpreter_opcodes);
  std::printf("gpu differential: %s\ncuda backend: %lld compiled for sm_90, %lld ran on the "
              "GPU%s; %lld kernels, %lld library calls, %lld interpreter ops (%s )\n",
              summary.ToString().c_str(), static_cast<long long>(counts.compiled),
              static_cast<long long>(counts.ran),
              no_gpu.empty() ? "" : absl::StrCat(" (", no_gpu, ")").c_str(),
              static_cast<long long>(counts.kernels),
              static_cast<long long>(counts.library_calls),
              static_cast<long long>(counts.interpreter_calls), interpreted.c_str());
  EXPECT_GE(summary.count, std::min<int64_t>(summary.max_count, 20));
  EXPECT_GT(counts.kernels, counts.interpreter_calls);
  if (no_gpu.empty()) {
    EXPECT_EQ(counts.ran, summary.count - summary.failures);
  }
}

}  // namespace
}  // namespace hloc::random_hlo
