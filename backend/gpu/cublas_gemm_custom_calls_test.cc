// LowerCublasGemmCustomCalls: which "__cublas$gemm" calls become dots, with
// which dimension numbers and scale, and which stay.
#include "backend/gpu/cublas_gemm_custom_calls.h"

#include <string>

#include "absl/strings/match.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/gpu_test_util.h"
#include "gtest/gtest.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"

namespace hloc {
namespace gpu {
namespace {

std::string GemmModule(const std::string& config) {
  return R"(HloModule m
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[8,5] parameter(1)
  ROOT c = f32[4,5] custom-call(a, b), custom_call_target="__cublas$gemm", backend_config=")" +
         config + R"("
})";
}

const char kDims[] =
    R"(\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],)"
    R"(\"rhs_contracting_dimensions\":[\"0\"],\"lhs_batch_dimensions\":[],)"
    R"(\"rhs_batch_dimensions\":[]})";

TEST(LowerCublasGemmCustomCalls, PlainGemmBecomesADot) {
  auto module = ParseForTest(GemmModule(std::string(R"({\"alpha_real\":1,\"beta\":0,)") + kDims +
                                        R"(,\"epilogue\":\"DEFAULT\"})"));
  ASSERT_NE(module, nullptr);
  LowerCublasGemmCustomCalls pass;
  absl::StatusOr<bool> changed = pass.Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
  const HloInstruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode(), HloOpcode::kDot) << PrintModule(*module);
  EXPECT_EQ(root->attrs().dot_dimension_numbers->lhs_contracting_dimensions(0), 1);
  EXPECT_EQ(root->attrs().dot_dimension_numbers->rhs_contracting_dimensions(0), 0);
}

TEST(LowerCublasGemmCustomCalls, AlphaScalesAndWrappedConfigsAreRead) {
  auto module = ParseForTest(GemmModule(std::string(R"({\"gemm_backend_config\":{)") +
                                        R"(\"alpha_real\":2,\"beta\":0,)" + kDims + "}}"));
  ASSERT_NE(module, nullptr);
  LowerCublasGemmCustomCalls pass;
  ASSERT_TRUE(pass.Run(*module).ok());
  const HloInstruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode(), HloOpcode::kMultiply) << PrintModule(*module);
  EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kDot);
}

TEST(LowerCublasGemmCustomCalls, BiasOrEpilogueStays) {
  for (const std::string& config :
       {std::string(R"({\"alpha_real\":1,\"beta\":1,)") + kDims + "}",
        std::string(R"({\"alpha_real\":1,\"beta\":0,\"epilogue\":\"RELU\",)") + kDims + "}"}) {
    auto module = ParseForTest(GemmModule(config));
    ASSERT_NE(module, nullptr);
    LowerCublasGemmCustomCalls pass;
    absl::StatusOr<bool> changed = pass.Run(*module);
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(*changed) << config;
    EXPECT_EQ(module->entry()->root()->opcode(), HloOpcode::kCustomCall);
  }
}

TEST(LowerCublasGemmCustomCalls, TheCudaPipelineLeavesNoInterpreterOp) {
  auto module = ParseForTest(GemmModule(std::string(R"({\"alpha_real\":1,\"beta\":0,)") + kDims +
                                        "}"));
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(OptimizeForGpu(*module, PipelineWithLibraries()).ok());
  absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*module, PlanOptions());
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->report().interpreter_calls, 0) << (*program)->PlanToString();
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
