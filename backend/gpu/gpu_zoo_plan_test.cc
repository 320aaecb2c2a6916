// Every JAX zoo model through the CUDA pipeline (gpu_pipeline.h) and the backend's
// compiler in plan mode (no GPU): each model compiles to a plan —
// kernels as PTX assembled by ptxas for sm_90, gemm/conv calls as library
// thunks, sort/topk/scatter as their own kernels — with no op left to a
// host fallback. The plans go to the test log.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/gpu_test_util.h"
#include "backend/gpu/row_normalization_fusion.h"
#include "gtest/gtest.h"
#include "hlo/testing/corpus.h"
#include "hlo/loader.h"

namespace hloc {
namespace gpu {
namespace {

using testdata::ZooDir;
using testdata::ZooModels;

class GpuZooPlanTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuZooPlanTest, CompilesToAPlan) {
  const std::string path = absl::StrCat(ZooDir(), "/", GetParam(), ".snapshot.pb");
  absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  HloModule& module = *snapshot->module;
  FusionLedger ledger;
  absl::StatusOr<bool> optimized = OptimizeForGpu(module, PipelineWithLibraries(), &ledger);
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  for (const LedgerEntry* e : ledger.Find(InlineCallsWithoutGpuLibrary::kPassName, "")) {
    std::printf("inlined %s (%s): %s\n", e->subjects[0].c_str(), e->rule.c_str(),
                e->reason.c_str());
  }
  for (const LedgerEntry* e : ledger.Find(RowNormalizationFusion::kPassName, "")) {
    std::printf("row normalization %s %s (%zu instructions): %s\n",
                e->accepted ? "made" : "refused", e->result.c_str(), e->subjects.size(),
                e->reason.c_str());
  }
  GpuProgramOptions options;
  options.cublaslt = LibraryUse::kAvailable;
  options.cudnn = LibraryUse::kAvailable;
  options.codegen.target = GpuTarget::ForComputeCapability(90);
  absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(module, options);
  ASSERT_TRUE(program.ok()) << program.status();
  const GpuCompileReport& report = (*program)->report();
  std::printf("==== %s\n%s\n", GetParam().c_str(), (*program)->PlanToString().c_str());
  EXPECT_GT(report.kernels + report.library_calls, 0);
  // Sort, topk and scatter have kernels: nothing runs on the host.
  EXPECT_EQ(report.interpreter_calls, 0) << (*program)->PlanToString();
  // Every kernel has PTX, and (ptxas being installed here) a cubin.
  const std::string thunks = (*program)->executable().ThunksToString();
  EXPECT_FALSE(absl::StrContains(thunks, "ptx=0B")) << thunks;
  if (std::getenv("HLOC_PTXAS") == nullptr) {
    FILE* ptxas = std::fopen("/usr/local/cuda/bin/ptxas", "r");
    if (ptxas != nullptr) {
      std::fclose(ptxas);
      EXPECT_FALSE(absl::StrContains(thunks, "cubin=0B")) << thunks;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, GpuZooPlanTest, ::testing::ValuesIn(ZooModels()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(GpuZooPlanTest, RowNormalizationsAreOneKernel) {
  // Before RowNormalizationFusion: softmax 3 kernels, layer_norm 3,
  // attention 7, transformer_block 14 (one per reduction plus epilogues).
  struct Expect {
    const char* model;
    int64_t kernels;  // All generated kernels of the model.
    int64_t row_normalizations;
  };
  for (const Expect& e : {Expect{"softmax", 1, 1}, Expect{"layer_norm", 1, 1},
                          Expect{"attention", 6, 1}, Expect{"transformer_block", 9, 3}}) {
    absl::StatusOr<LoadedSnapshot> snapshot =
        LoadSnapshotFromFile(absl::StrCat(ZooDir(), "/", e.model, ".snapshot.pb"));
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    ASSERT_TRUE(OptimizeForGpu(*snapshot->module, PipelineWithLibraries()).ok()) << e.model;
    auto program = CompileForGpu(*snapshot->module, PlanOptions());
    ASSERT_TRUE(program.ok()) << e.model << ": " << program.status();
    const GpuCompileReport& r = (*program)->report();
    int64_t row_normalizations = 0;
    for (const std::string& s : r.strategies) {
      if (absl::StrContains(s, ": row-normalization ")) ++row_normalizations;
    }
    EXPECT_EQ(r.kernels, e.kernels) << e.model << "\n" << (*program)->PlanToString();
    EXPECT_EQ(row_normalizations, e.row_normalizations)
        << e.model << "\n" << (*program)->PlanToString();
  }
}

TEST(GpuZooPlanTest, LibraryCallsOfTheConvAndMlpModels) {
  // The models whose gemms/convs must reach the libraries.
  struct Expect {
    const char* model;
    bool gemm, conv;
  };
  for (const Expect& e : {Expect{"conv2d", false, true}, Expect{"resnet_block", false, true},
                          Expect{"mlp_gelu", true, false}, Expect{"bf16_mlp", true, false}}) {
    absl::StatusOr<LoadedSnapshot> snapshot =
        LoadSnapshotFromFile(absl::StrCat(ZooDir(), "/", e.model, ".snapshot.pb"));
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    ASSERT_TRUE(RunPipelineForTest(*snapshot->module, "default"));
    auto program = CompileForGpu(*snapshot->module, PlanOptions());
    ASSERT_TRUE(program.ok()) << e.model << ": " << program.status();
    const GpuCompileReport& r = (*program)->report();
    if (e.gemm) {
      EXPECT_FALSE(r.gemms.empty()) << e.model << "\n" << r.ToString();
    }
    if (e.conv) {
      EXPECT_FALSE(r.convs.empty()) << e.model << "\n" << r.ToString();
    }
  }
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
