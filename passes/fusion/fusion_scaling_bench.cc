// How long the fusion passes take on generated modules of growing size
// (generated_graphs.h): the goal is near-linear growth, 1M instructions in
// well under 10 s for the whole fusion pipeline.
//
//   bazel run -c opt //passes/fusion:fusion_scaling_bench -- [--pc|--pd] [--no-verify] 10000 100000 1000000
#include <chrono>
#include <sys/resource.h>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "hlo/verifier.h"
#include "passes/fusion/fusion_pipeline.h"
#include "passes/fusion/generated_graphs.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// CPU time of this process: on a shared machine wall time also counts the
// time other processes held the cores.
double CpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

int CountFusions(const hloc::HloModule& module) {
  int count = 0;
  module.entry()->ForEachInstruction(
      [&](hloc::HloInstruction* i) { count += i->opcode() == hloc::HloOpcode::kFusion; });
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  bool verify_after = true;
  std::vector<hloc::FusionGrouping> groupings = {hloc::FusionGrouping::kProducerConsumer,
                                                 hloc::FusionGrouping::kPostDominator};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    int64_t n;
    if (arg == "--no-verify") {
      verify_after = false;
    } else if (arg == "--pc") {
      groupings = {hloc::FusionGrouping::kProducerConsumer};
    } else if (arg == "--pd") {
      groupings = {hloc::FusionGrouping::kPostDominator};
    } else if (absl::SimpleAtoi(arg, &n) && n > 0) {
      sizes.push_back(n);
    }
  }
  if (sizes.empty()) sizes = {10000, 100000, 1000000};
  std::printf("%-10s %-18s %9s %9s %10s %9s %9s\n", "size", "grouping", "build s", "fusion s",
              "fusion cpu", "verify s", "fusions");
  for (int64_t n : sizes) {
    for (hloc::FusionGrouping grouping : groupings) {
      auto start = std::chrono::steady_clock::now();
      std::unique_ptr<hloc::HloModule> module = hloc::MakeLayeredModule(n);
      const double build = Seconds(start);
      const int64_t instructions = module->entry()->instruction_count();

      hloc::PipelineOptions pipeline_options;
      pipeline_options.verify_between_passes = false;
      hloc::HloPassPipeline pipeline("fusion", pipeline_options);
      hloc::FusionPipelineOptions options;
      options.grouping = grouping;
      hloc::AddFusionPasses(pipeline, options);
      start = std::chrono::steady_clock::now();
      const double cpu_start = CpuSeconds();
      absl::StatusOr<bool> changed = pipeline.Run(*module);
      const double fusion = Seconds(start);
      const double fusion_cpu = CpuSeconds() - cpu_start;
      if (!changed.ok()) {
        std::fprintf(stderr, "fusion failed: %s\n", std::string(changed.status().message()).c_str());
        return 1;
      }
      start = std::chrono::steady_clock::now();
      absl::Status verified = verify_after ? hloc::VerifyModule(*module) : absl::OkStatus();
      const double verify = Seconds(start);
      if (!verified.ok()) {
        std::fprintf(stderr, "invalid after fusion: %s\n", std::string(verified.message()).c_str());
        return 1;
      }
      std::printf("%-10lld %-18s %9.3f %9.3f %10.3f %9.3f %9d\n",
                  static_cast<long long>(instructions),
                  grouping == hloc::FusionGrouping::kPostDominator ? "post-dominator"
                                                                    : "producer-consumer",
                  build, fusion, fusion_cpu, verify, CountFusions(*module));
      std::printf("%s", pipeline.TimingReport().c_str());
      std::fflush(stdout);
      // Freeing a big module takes a while; keep it out of the next timing.
      module.reset();
    }
  }
  return 0;
}
