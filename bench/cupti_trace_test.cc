// SummarizeSteps on hand-made traces, and CuptiTracer where CUPTI or the
// GPU is missing (this machine): a status saying why, never a crash.
#include "bench/cupti_trace.h"

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "gtest/gtest.h"
#include "runtime/cuda/dynamic_library.h"

namespace hloc {
namespace gpu_bench {
namespace {

using Kind = DeviceActivity::Kind;

TEST(SummarizeSteps, SpanIsFirstStartToLastEndOfEachStep) {
  // Step 0 starts at 1000 ns: a kernel 1100-1300 and a memset 1400-1500
  // (span 400 ns); step 1 at 2000: kernels 2100-2200, 2150-2400 (span 300).
  // An activity before the first step belongs to no step.
  const std::vector<uint64_t> starts = {1000, 2000};
  const std::vector<DeviceActivity> activities = {{Kind::kKernel, 2150, 2400},
                                                  {Kind::kKernel, 1100, 1300},
                                                  {Kind::kMemset, 1400, 1500},
                                                  {Kind::kKernel, 500, 900},
                                                  {Kind::kKernel, 2100, 2200}};
  const StepTraceSummary s = SummarizeSteps(starts, activities);
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.steps_with_work, 2);
  // Medians of two values take the larger (v[size / 2]), as Median does.
  EXPECT_DOUBLE_EQ(s.span_us, 0.4);
  EXPECT_DOUBLE_EQ(s.busy_us, 0.35);  // 300 and 350 ns
  EXPECT_DOUBLE_EQ(s.activities, 2);
  EXPECT_DOUBLE_EQ(s.kernels, 2);  // 1 and 2
}

TEST(SummarizeSteps, MedianOverStepsIgnoresAnOutlier) {
  std::vector<uint64_t> starts;
  std::vector<DeviceActivity> activities;
  for (uint64_t i = 0; i < 5; ++i) {
    starts.push_back(i * 1000000);
    const uint64_t dur = i == 2 ? 90000 : 1000;  // One slow step.
    activities.push_back({Kind::kKernel, i * 1000000 + 10, i * 1000000 + 10 + dur});
  }
  const StepTraceSummary s = SummarizeSteps(starts, activities);
  EXPECT_EQ(s.steps_with_work, 5);
  EXPECT_DOUBLE_EQ(s.span_us, 1.0);
}

TEST(SummarizeSteps, StepsWithoutActivitiesAreCountedButNotMedianed) {
  const StepTraceSummary s = SummarizeSteps({10, 20, 30}, {{Kind::kMemcpy, 25, 29}});
  EXPECT_EQ(s.steps, 3);
  EXPECT_EQ(s.steps_with_work, 1);
  EXPECT_DOUBLE_EQ(s.span_us, 0.004);
  EXPECT_DOUBLE_EQ(s.kernels, 0);
  EXPECT_EQ(SummarizeSteps({}, {{Kind::kKernel, 1, 2}}).steps_with_work, 0);
}

TEST(CuptiTracer, MissingLibraryIsAStatusNamingIt) {
  auto tracer = CuptiTracer::Open({"libhloc_no_such_cupti.so"});
  ASSERT_FALSE(tracer.ok());
  EXPECT_TRUE(cuda::IsLibraryMissing(tracer.status())) << tracer.status();
  EXPECT_NE(tracer.status().message().find("CUPTI not available: dlopen libhloc_no_such_cupti.so"),
            std::string::npos)
      << tracer.status();
}

TEST(CuptiTracer, LibraryWithoutCuptiSymbolsIsMissing) {
  auto tracer = CuptiTracer::Open({"libc.so.6"});
  ASSERT_FALSE(tracer.ok());
  EXPECT_TRUE(cuda::IsLibraryMissing(tracer.status())) << tracer.status();
  EXPECT_NE(tracer.status().message().find("lacks cuptiActivityRegisterCallbacks"),
            std::string::npos)
      << tracer.status();
}

TEST(CuptiTracer, DefaultNamesPutTheEnvironmentFirst) {
  setenv("HLOC_CUPTI_LIBRARY", "/opt/x/libcupti.so.13", 1);
  const std::vector<std::string> names = DefaultCuptiLibraryNames();
  unsetenv("HLOC_CUPTI_LIBRARY");
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[0], "/opt/x/libcupti.so.13");
  EXPECT_EQ(names[1], "libcupti.so.13");
}

// With the real libcupti but no GPU (or no driver), tracing fails with a
// status naming the CUPTI call, or, where a GPU exists, records nothing for
// steps that launch no work: either way a status, not a crash.
TEST(CuptiTracer, RealLibraryWithoutDeviceWorkGivesAStatus) {
  std::vector<std::string> names;
  for (const std::string& name : DefaultCuptiLibraryNames()) {
    if (name.find('/') == std::string::npos || std::ifstream(name).good()) names.push_back(name);
  }
  auto tracer = CuptiTracer::Open(names);
  if (!tracer.ok()) {
    EXPECT_TRUE(cuda::IsLibraryMissing(tracer.status()) ||
                tracer.status().message().find("cupti") != std::string::npos)
        << tracer.status();
    GTEST_SKIP() << "no usable libcupti here: " << tracer.status();
  }
  auto summary = (*tracer)->TraceSteps(3, [] { return absl::OkStatus(); });
  ASSERT_FALSE(summary.ok()) << "no step launched any device work";
  std::cout << "tracing with " << (*tracer)->Describe() << ": " << summary.status() << "\n";
  EXPECT_NE(summary.status().message().find(summary.status().code() == absl::StatusCode::kNotFound
                                                ? "recorded no kernel"
                                                : "cupti"),
            std::string::npos)
      << summary.status();
  // A second trace after a failed one fails the same way (nothing left enabled).
  EXPECT_FALSE((*tracer)->TraceSteps(1, [] { return absl::OkStatus(); }).ok());
}

}  // namespace
}  // namespace gpu_bench
}  // namespace hloc
