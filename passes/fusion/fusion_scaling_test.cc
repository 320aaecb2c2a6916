// The fusion pipeline grows near-linearly with module size: on generated
// modules of 10k and 100k instructions the per-instruction time may not grow
// by more than a generous factor (the passes avoid whole-graph searches per
// edge; see fusion_graph.h). The module stays valid and every layer fuses.
#include <sys/resource.h>

#include <iostream>

#include "gtest/gtest.h"
#include "hlo/verifier.h"
#include "passes/fusion/fusion_pipeline.h"
#include "passes/fusion/generated_graphs.h"

namespace hloc {
namespace {

// Process CPU time: wall time on a shared build machine also counts the time
// other processes held the cores.
double CpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

double FuseSeconds(int64_t size, FusionGrouping grouping, int64_t* fusions) {
  std::unique_ptr<HloModule> module = MakeLayeredModule(size);
  PipelineOptions pipeline_options;
  pipeline_options.verify_input = false;
  pipeline_options.verify_between_passes = false;
  pipeline_options.verify_output = false;
  HloPassPipeline pipeline("fusion", pipeline_options);
  FusionPipelineOptions options;
  options.grouping = grouping;
  AddFusionPasses(pipeline, options);
  const double start = CpuSeconds();
  absl::StatusOr<bool> changed = pipeline.Run(*module);
  const double seconds = CpuSeconds() - start;
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(VerifyModule(*module).ok());
  *fusions = 0;
  module->entry()->ForEachInstruction(
      [&](HloInstruction* i) { *fusions += i->opcode() == HloOpcode::kFusion; });
  return seconds;
}

TEST(FusionScaling, NearLinear) {
  for (FusionGrouping grouping :
       {FusionGrouping::kProducerConsumer, FusionGrouping::kPostDominator}) {
    int64_t small_fusions = 0, large_fusions = 0;
    // Warm up allocators and caches once.
    FuseSeconds(2000, grouping, &small_fusions);
    double small = FuseSeconds(10000, grouping, &small_fusions);
    double large = FuseSeconds(100000, grouping, &large_fusions);
    std::cout << "10k: " << small << " s, 100k: " << large << " s (CPU)\n";
    EXPECT_GT(small_fusions, 10000 / 18);
    EXPECT_GT(large_fusions, 9 * small_fusions);
    // 10x the instructions; allow 25x the time before calling it superlinear.
    EXPECT_LT(large, 25 * small + 0.5);
  }
}

}  // namespace
}  // namespace hloc
