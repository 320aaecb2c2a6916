// The expanders on the CUDA backend, with no GPU needed: every hand-written
// case of passes/expanders/expander_test_cases.cc goes through the GPU
// pipeline (which expands first), is planned down to PTX with no op left to
// run on the host, and every generated kernel small enough to emulate runs
// in the GPU emulator (backend/gpu/gpu_emulator.h) against the interpreter.
// tests/expanders/expanders_host_test.cc runs the same cases end to end on
// the host. The scan cases are also assembled with ptxas.
#include <string>

#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_emulator.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/gpu_test_util.h"
#include "backend/gpu/kernel_sites.h"
#include "gtest/gtest.h"
#include "absl/strings/str_join.h"
#include "hlo/text_parser.h"
#include "passes/expanders/expander_test_cases.h"

namespace hloc {
namespace {

using expanders::ExpanderCase;

gpu::Emulator& SharedEmulator() {
  static gpu::Emulator* emulator = new gpu::Emulator();
  return *emulator;
}

class GpuCaseTest : public ::testing::TestWithParam<ExpanderCase> {};

TEST_P(GpuCaseTest, PlansWithoutHostFallbackAndKernelsMatchTheInterpreter) {
  const ExpanderCase& c = GetParam();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<bool> changed = gpu::OptimizeForGpu(**module, gpu::PipelineWithLibraries());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(expanders::CountEverywhere(**module, c.opcode), 0);

  absl::StatusOr<std::unique_ptr<gpu::GpuProgram>> program =
      gpu::CompileForGpu(**module, gpu::PlanOptions());
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->report().host_fallbacks, 0)
      << absl::StrJoin((*program)->report().host, "\n");

  gpu::Emulator& emulator = SharedEmulator();
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  int checked = 0;
  for (const gpu::KernelSite& site : gpu::CollectKernelSites(**module).kernels) {
    absl::StatusOr<gpu::GpuKernel> probe = gpu::CompileUnassembled(*site.computation);
    ASSERT_TRUE(probe.ok()) << probe.status() << " %" << site.instruction->name();
    if (probe->launch.total_threads() > 65536) continue;
    bool ran = false;
    EXPECT_EQ(gpu::CheckKernel(emulator, *site.computation, 3, &ran), "")
        << "%" << site.instruction->name();
    checked += ran;
  }
  std::cout << c.name << ": " << checked << " kernels emulated\n";
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuCaseTest, ::testing::ValuesIn(expanders::ExpanderCases()),
                         [](const ::testing::TestParamInfo<ExpanderCase>& info) {
                           return info.param.name;
                         });

// scan's expansion (a while loop of dynamic-slice and dynamic-update-slice
// around the inlined step) also assembles: every kernel through ptxas for
// sm_90.
class GpuAssembledScanTest : public ::testing::TestWithParam<ExpanderCase> {};

TEST_P(GpuAssembledScanTest, KernelsAssembleForSm90) {
  const ExpanderCase& c = GetParam();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<bool> changed = gpu::OptimizeForGpu(**module, gpu::PipelineWithLibraries());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(expanders::CountEverywhere(**module, HloOpcode::kScan), 0);
  absl::StatusOr<std::unique_ptr<gpu::GpuProgram>> program =
      gpu::CompileForGpu(**module, gpu::AssembledSm90Options());
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->report().host_fallbacks, 0)
      << absl::StrJoin((*program)->report().host, "\n");
}

INSTANTIATE_TEST_SUITE_P(Scan, GpuAssembledScanTest,
                         ::testing::ValuesIn(expanders::ExpanderCasesFor(HloOpcode::kScan)),
                         [](const ::testing::TestParamInfo<ExpanderCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace hloc
