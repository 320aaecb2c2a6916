// How long the fusion passes take on generated modules of growing size
// (generated_graphs.h): the goal is near-linear growth, 1M instructions in
// well under 10 s for the whole fusion pipeline.
//
//   bazel run -c opt //passes/fusion:fusion_scaling_bench --
//       [--pc|--pd] [--no-verify] [--verify-between] [--repeat=N] 10000 100000 1000000
//
// What is timed, per size and grouping (best of --repeat runs, each on a
// freshly generated module):
//   pipeline   the fusion pipeline (grouping pass, multi-output, horizontal)
//              without the verifier between passes, wall and CPU seconds;
//              with --verify-between the verifier runs after every pass that
//              changed the module, inside the timed region (as in tests)
//   verify     one VerifyModule of the fused module afterwards (not part of
//              the pipeline time), wall and CPU seconds
// Building the module and freeing it are not timed. CPU time is this
// process's user+system time: on a shared machine wall time also counts the
// time other processes held the cores. The last lines fit time = c * n^k
// over the sizes (least squares in log-log) and print the exponent k.
#include <chrono>
#include <sys/resource.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "hlo/verifier.h"
#include "passes/fusion/fusion_pipeline.h"
#include "passes/fusion/generated_graphs.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

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

struct Timing {
  double wall = 1e30, cpu = 1e30;
  void KeepBest(double w, double c) {
    wall = std::min(wall, w);
    cpu = std::min(cpu, c);
  }
};

// Exponent k of time = c * n^k fitted over (n, time) in log-log.
double FitExponent(const std::vector<double>& n, const std::vector<double>& t) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double m = static_cast<double>(n.size());
  for (size_t i = 0; i < n.size(); ++i) {
    const double x = std::log(n[i]), y = std::log(std::max(t[i], 1e-9));
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  bool verify_after = true;
  bool verify_between = false;
  int repeat = 1;
  std::vector<hloc::FusionGrouping> groupings = {hloc::FusionGrouping::kProducerConsumer,
                                                 hloc::FusionGrouping::kPostDominator};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    int64_t n;
    if (arg == "--no-verify") {
      verify_after = false;
    } else if (arg == "--verify-between") {
      verify_between = true;
    } else if (arg == "--pc") {
      groupings = {hloc::FusionGrouping::kProducerConsumer};
    } else if (arg == "--pd") {
      groupings = {hloc::FusionGrouping::kPostDominator};
    } else if (absl::StartsWith(arg, "--repeat=") &&
               absl::SimpleAtoi(arg.substr(9), &n) && n > 0 && n <= 100) {
      repeat = static_cast<int>(n);
    } else if (absl::SimpleAtoi(arg, &n) && n > 0 && n <= 100000000) {
      sizes.push_back(n);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
  if (sizes.empty()) sizes = {10000, 100000, 1000000};
  std::printf("pipeline: fusion passes%s; verify: one VerifyModule afterwards; best of %d\n",
              verify_between ? " with the verifier after each changing pass" : ", no verifier",
              repeat);
  std::printf("%-9s %-17s %8s %10s %9s %10s %9s %8s\n", "size", "grouping", "build s",
              "pipeline s", "pipe cpu", "verify s", "ver cpu", "fusions");
  for (hloc::FusionGrouping grouping : groupings) {
    std::vector<double> ns, cpus, walls;
    for (int64_t n : sizes) {
      Timing pipeline_time, verify_time;
      double build = 0;
      int64_t instructions = 0;
      int fusions = 0;
      std::string report;
      for (int r = 0; r < repeat; ++r) {
        auto start = std::chrono::steady_clock::now();
        std::unique_ptr<hloc::HloModule> module = hloc::MakeLayeredModule(n);
        build = Seconds(start);
        instructions = module->entry()->instruction_count();

        hloc::PipelineOptions pipeline_options;
        pipeline_options.verify_input = verify_between;
        pipeline_options.verify_between_passes = verify_between;
        pipeline_options.verify_output = verify_between;
        hloc::HloPassPipeline pipeline("fusion", pipeline_options);
        hloc::FusionPipelineOptions options;
        options.grouping = grouping;
        hloc::AddFusionPasses(pipeline, options);
        start = std::chrono::steady_clock::now();
        double cpu_start = CpuSeconds();
        absl::StatusOr<bool> changed = pipeline.Run(*module);
        pipeline_time.KeepBest(Seconds(start), CpuSeconds() - cpu_start);
        if (!changed.ok()) {
          std::fprintf(stderr, "fusion failed: %s\n",
                       std::string(changed.status().message()).c_str());
          return 1;
        }
        if (verify_after) {
          start = std::chrono::steady_clock::now();
          cpu_start = CpuSeconds();
          absl::Status verified = hloc::VerifyModule(*module);
          verify_time.KeepBest(Seconds(start), CpuSeconds() - cpu_start);
          if (!verified.ok()) {
            std::fprintf(stderr, "invalid after fusion: %s\n",
                         std::string(verified.message()).c_str());
            return 1;
          }
        } else {
          verify_time.KeepBest(0, 0);
        }
        fusions = CountFusions(*module);
        report = pipeline.TimingReport();
      }
      std::printf("%-9lld %-17s %8.3f %10.3f %9.3f %10.3f %9.3f %8d\n",
                  static_cast<long long>(instructions),
                  grouping == hloc::FusionGrouping::kPostDominator ? "post-dominator"
                                                                    : "producer-consumer",
                  build, pipeline_time.wall, pipeline_time.cpu, verify_time.wall, verify_time.cpu,
                  fusions);
      std::printf("%s", report.c_str());
      std::fflush(stdout);
      ns.push_back(static_cast<double>(instructions));
      cpus.push_back(pipeline_time.cpu);
      walls.push_back(pipeline_time.wall);
    }
    if (ns.size() >= 2) {
      std::printf("fitted exponent (%s): pipeline CPU %.3f, wall %.3f\n",
                  grouping == hloc::FusionGrouping::kPostDominator ? "post-dominator"
                                                                    : "producer-consumer",
                  FitExponent(ns, cpus), FitExponent(ns, walls));
    }
  }
  return 0;
}
