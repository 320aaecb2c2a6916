// Helpers for the tests that run on a GPU (gpu_device_test,
// gpu_corpus_device_test): the process's one device, the whole
// optimize-compile-load-run sequence, and GPU-vs-interpreter tolerances.
#ifndef HLOC_BACKEND_GPU_GPU_DEVICE_TEST_UTIL_H_
#define HLOC_BACKEND_GPU_GPU_DEVICE_TEST_UTIL_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "hlo/shape_util.h"
#include "runtime/cuda/cuda_device.h"

namespace hloc {
namespace gpu {

#define HLOC_SKIP_WITHOUT_GPU()                     \
  do {                                              \
    const std::string reason = cuda::NoGpuReason(); \
    if (!reason.empty()) GTEST_SKIP() << reason;    \
  } while (0)

// Device 0, opened once per process; null when it cannot be opened.
cuda::CudaDevice* TestDevice();

// Optimizes (OptimizeForGpu), compiles for the device, loads and runs
// `module` twice on `arguments` (the second run replays the CUDA graph when
// one was captured) and returns the second result. `plan` receives the
// compiled program's plan when set.
absl::StatusOr<Literal> RunOnTestDevice(const HloModule& module,
                                        absl::Span<const Literal> arguments, bool use_graph,
                                        std::string* plan = nullptr);

// Library summation orders and GPU math functions differ from the
// interpreter's.
Tolerance GpuTolerance(PrimitiveType type);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_DEVICE_TEST_UTIL_H_
