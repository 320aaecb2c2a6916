// Helpers for the GPU code generation tests: parse HLO text (and run a
// standard pipeline over it), read zoo models and find ptxas and FileCheck
// in the test's runfiles, plan or compile a kernel without assembling, run
// FileCheck on generated text.
#ifndef HLOC_BACKEND_GPU_GPU_TEST_UTIL_H_
#define HLOC_BACKEND_GPU_GPU_TEST_UTIL_H_

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "absl/status/statusor.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/kernel_codegen.h"
#include "hlo/module.h"
#include "passes/fusion/fusion_ledger.h"

namespace hloc {
namespace gpu {

std::unique_ptr<HloModule> ParseForTest(absl::string_view text);

// Runs the standard pipeline `pipeline` ("default", "outline", ...) over
// `module`; a test failure (and false) when it cannot.
bool RunPipelineForTest(HloModule& module, const std::string& pipeline,
                        FusionLedger* ledger = nullptr);

// ParseForTest, then RunPipelineForTest; null on failure.
std::unique_ptr<HloModule> ParseAndRunPipeline(absl::string_view text,
                                               const std::string& pipeline,
                                               FusionLedger* ledger = nullptr);

// The text of tests/jax/zoo/<model>.before.txt (a data dependency), or ""
// outside Bazel or when it is missing.
std::string ZooModelText(absl::string_view model);

// Program options that plan as on a machine with cuBLASLt and cuDNN and stop
// at PTX (no GPU or ptxas needed).
GpuProgramOptions PlanOptions();

// PlanOptions for sm_90 with every kernel through ptxas: the test's own
// (runfiles) under Bazel, else HLOC_PTXAS or the CUDA install's (a
// standalone test binary on a GPU machine).
GpuProgramOptions AssembledSm90Options();

// The CUDA pipeline's options with cuBLASLt and cuDNN taken as available.
GpuPipelineOptions PipelineWithLibraries();

// `computation`'s kernel for `target`, PTX only (no ptxas).
absl::StatusOr<GpuKernel> CompileUnassembled(const HloComputation& computation,
                                             const GpuTarget& target = GpuTarget());

// $TEST_SRCDIR/cuda/bin/ptxas (a data dependency), or "" outside Bazel.
std::string RunfilesPtxas();

// Runs LLVM's FileCheck (from the runfiles) with `checks` over `input`.
::testing::AssertionResult FileCheck(const std::string& input, const std::string& checks);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_TEST_UTIL_H_
