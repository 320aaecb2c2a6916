// The JAX zoo models with gemms and convolutions, through the default
// pipeline (simplify, outline library calls, fuse) and the host backend: every
// gemm/convolution composite call and every dot or convolution left outside
// a fusion must run as a oneDNN library call (the compile report says so),
// and the result must match the interpreter's on the original module and
// XLA:CPU's recorded result. softmax, layer_norm and attention composites
// are not host library operations: they run their bodies as generated
// kernels (the report lists them as refusals, which is expected).
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_test_util.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/loader.h"
#include "passes/standard_pipelines.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace {

std::string ZooDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir != nullptr && workspace != nullptr) {
    return absl::StrCat(srcdir, "/", workspace, "/tests/jax/zoo");
  }
  return "tests/jax/zoo";
}

bool IsHostLibraryLine(const std::string& line) {
  return absl::StrContains(line, "(hloc.gemm") || absl::StrContains(line, "(hloc.batched_gemm") ||
         absl::StrContains(line, "(hloc.conv") || absl::StrContains(line, "(dot)") ||
         absl::StrContains(line, "(convolution)");
}

// Dots and convolutions outside fusions and library calls' bodies, and the
// gemm/convolution composite calls, of the computations the host runs.
int CountLibraryWork(const HloModule& module) {
  int n = 0;
  for (const HloComputation* computation : module.computations()) {
    bool library_body = false, fused = false;
    for (const HloComputation* other : module.computations()) {
      for (const HloInstruction* i : other->instructions()) {
        for (const HloComputation* called : i->called_computations()) {
          if (called != computation) continue;
          fused |= i->opcode() == HloOpcode::kFusion;
          const std::string* name = i->FindFrontendAttribute("composite.name");
          library_body |= i->is_composite() && name != nullptr &&
                          (absl::StartsWith(*name, "hloc.gemm") ||
                           absl::StartsWith(*name, "hloc.batched_gemm") ||
                           absl::StartsWith(*name, "hloc.conv"));
        }
      }
    }
    if (library_body || fused) continue;
    for (const HloInstruction* i : computation->instructions()) {
      const std::string* name = i->FindFrontendAttribute("composite.name");
      const bool library_call = i->opcode() == HloOpcode::kCall && i->is_composite() &&
                                name != nullptr &&
                                (absl::StartsWith(*name, "hloc.gemm") ||
                                 absl::StartsWith(*name, "hloc.batched_gemm") ||
                                 absl::StartsWith(*name, "hloc.conv"));
      n += library_call || i->opcode() == HloOpcode::kDot ||
           i->opcode() == HloOpcode::kConvolution;
    }
  }
  return n;
}

Tolerance ZooTolerance(const Literal& result) {
  const Shape& shape = result.shape().IsTuple() ? result.shape().tuple_shapes(0) : result.shape();
  if (shape.element_type() == xla::BF16) return Tolerance{2e-2, 2e-2};
  return Tolerance{1e-4, 1e-5};
}

class OneDnnZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OneDnnZooTest, LibraryCallsRunOnOneDnnAndMatch) {
  const std::string path = absl::StrCat(ZooDir(), "/", GetParam(), ".snapshot.pb");
  absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  std::unique_ptr<HloModule> module = snapshot->module->Clone();
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline =
      MakeStandardPipeline("default", PipelineOptions{}, nullptr);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  absl::StatusOr<bool> changed = (*pipeline)->Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status();

  host::HostCompileOptions options;
  options.compiler = host_testing::SharedCompiler();
  options.fallback = InterpreterFallback();
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(*module, options);
  ASSERT_TRUE(program.ok()) << program.status();
  const host::HostCompileReport& report = (*program)->report();
  std::cout << GetParam() << ": " << report.ToString();

  // oneDNN has bf16 matmuls only on CPUs with AVX-512 (BF16/AMX); on others
  // it refuses them and the call runs as generated code, which is still
  // checked against the interpreter below.
  int unsupported_here = 0;
  for (const std::string& refusal : report.library_refusals) {
    if (refusal.find("oneDNN has no matmul bf16") != std::string::npos) {
      ++unsupported_here;
      continue;
    }
    EXPECT_FALSE(IsHostLibraryLine(refusal)) << refusal;
  }
  const int expected_calls = CountLibraryWork(*module);
  EXPECT_GT(expected_calls, 0) << "no gemm or convolution left to run";
  if (unsupported_here == 0) {
    EXPECT_EQ(static_cast<int>(report.onednn_calls.size()), expected_calls) << report.ToString();
  } else {
    EXPECT_LE(static_cast<int>(report.onednn_calls.size()), expected_calls) << report.ToString();
  }

  runtime::ThreadPool pool(2);
  absl::StatusOr<Literal> actual = (*program)->Execute(snapshot->arguments, &pool);
  ASSERT_TRUE(actual.ok()) << actual.status();
  absl::StatusOr<Literal> interpreted = Evaluate(*snapshot->module, snapshot->arguments);
  ASSERT_TRUE(interpreted.ok()) << interpreted.status();
  const Tolerance tolerance = ZooTolerance(*interpreted);
  ComparisonReport vs_interpreter = CompareLiterals(*interpreted, *actual, tolerance);
  EXPECT_TRUE(vs_interpreter.ok) << "vs interpreter: " << vs_interpreter.ToString();
  if (snapshot->result.has_value()) {
    ComparisonReport vs_xla = CompareLiterals(*snapshot->result, *actual, tolerance);
    EXPECT_TRUE(vs_xla.ok) << "vs XLA: " << vs_xla.ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, OneDnnZooTest,
                         ::testing::Values("mlp_gelu", "bf16_mlp", "attention",
                                           "transformer_block", "conv2d", "conv_bn_relu",
                                           "resnet_block", "depthwise_conv"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace hloc
