// Device time of one step from CUPTI's activity trace, measured the way
// bench/gpu_vs_xla.py measures XLA (JAX's profiler is CUPTI too), so that
// the two "device" columns mean the same thing:
//
//   activities  every kernel (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), memcpy
//               and memset the device runs while steps are traced
//   a step      the activities starting at or after the host timestamp taken
//               just before the step's call, and before the next step's
//               (each step waits for the device before the next begins)
//   span        last activity end - first activity start of one step; also
//               the sum of activity durations ("busy") and their count
//   reported    medians over the traced steps
//
//     host:  |call 0 ......sync|call 1 ......sync|call 2 ...
//     GPU:       [k][k]  [memset][k]   [k][k][k]
//                ^-------span 0-----^  ^-span 1-^
//
// libcupti is opened with dlopen (HLOC_CUPTI_LIBRARY, then libcupti.so.13
// on the loader path, then the toolkit's folders), so gpu_bench runs where
// it is missing: the tracer is then an error status saying why, and
// gpu_bench reports CUDA-event times only.
#ifndef HLOC_BENCH_CUPTI_TRACE_H_
#define HLOC_BENCH_CUPTI_TRACE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/cuda/dynamic_library.h"

namespace hloc {
namespace gpu_bench {

// One traced device activity, CUPTI timestamps in nanoseconds.
struct DeviceActivity {
  enum class Kind { kKernel, kMemcpy, kMemset };
  Kind kind = Kind::kKernel;
  uint64_t start_ns = 0, end_ns = 0;
};

// Medians over the steps that had at least one activity.
struct StepTraceSummary {
  double span_us = 0;     // First start to last end.
  double busy_us = 0;     // Sum of activity durations.
  double activities = 0;  // Kernels + memcpys + memsets.
  double kernels = 0;
  int steps = 0;            // Steps traced.
  int steps_with_work = 0;  // Of those, steps with an activity.
};

// Splits `activities` by step as the header describes: `step_starts` holds
// each step's host timestamp (ascending, CUPTI's clock); activities that
// start before the first step are ignored.
StepTraceSummary SummarizeSteps(const std::vector<uint64_t>& step_starts,
                                std::vector<DeviceActivity> activities);

// The library names tried, in order: $HLOC_CUPTI_LIBRARY when set, then
// libcupti.so.13 / libcupti.so through the loader path (gpu_vs_xla.py puts
// the pip nvidia/*/lib folders on it), then the CUDA toolkit's folders.
std::vector<std::string> DefaultCuptiLibraryNames();

class CuptiTracer {
 public:
  // Opens libcupti and registers the activity-buffer callbacks. CUPTI's
  // callbacks carry no user pointer, so the records go to one process-wide
  // collector; one tracer traces at a time (TraceSteps is serialized).
  // A missing library is a status for which cuda::IsLibraryMissing holds.
  static absl::StatusOr<std::unique_ptr<CuptiTracer>> Open(
      const std::vector<std::string>& library_names = DefaultCuptiLibraryNames());
  ~CuptiTracer();
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  // Enables kernel, memcpy and memset activities, runs `step` `steps` times
  // (each must wait for the device before returning), flushes and disables
  // the activities, and summarizes. An error names the CUPTI call that failed
  // or says that no activity was recorded.
  absl::StatusOr<StepTraceSummary> TraceSteps(int steps, const std::function<absl::Status()>& step);

  // "libcupti.so.13 (CUPTI API version N)".
  std::string Describe() const;

 private:
  struct Api;
  CuptiTracer(std::shared_ptr<cuda::DynamicLibrary> library, std::unique_ptr<Api> api);
  std::shared_ptr<cuda::DynamicLibrary> library_;
  std::unique_ptr<Api> api_;
};

}  // namespace gpu_bench
}  // namespace hloc

#endif  // HLOC_BENCH_CUPTI_TRACE_H_
