// Running a module on the first CUDA device: open the device, compile for
// its architecture, load (with the on-disk autotuning cache) and execute.
// For `hloc run --backend=cuda` and tests; without a usable GPU every entry
// point returns a FailedPrecondition status with the reason, never crashes.
#ifndef HLOC_BACKEND_GPU_RUN_ON_GPU_H_
#define HLOC_BACKEND_GPU_RUN_ON_GPU_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "backend/gpu/gpu_compiler.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloc {
namespace gpu {

struct RunOnGpuOptions {
  GpuProgramOptions compile;  // codegen.target is replaced by the device's.
  bool autotune = true;
  // Autotuning cache file; empty: AutotuneCache::DefaultPath().
  std::string autotune_cache_path;
  bool use_cuda_graph = true;
  // The NCCL watchdog's timeout per collective (GpuLoadOptions; <= 0: none,
  // and then programs with collectives may be captured into CUDA graphs).
  absl::Duration collective_timeout = cuda::kDefaultCollectiveTimeout;
};

// Empty when a CUDA device can be used here; else why not.
std::string GpuUnavailableReason();

// Compiles `module` (already optimized: run the default pipeline first) and
// runs it on device 0.
absl::StatusOr<Literal> RunOnGpu(const HloModule& module, absl::Span<const Literal> arguments,
                                 const RunOnGpuOptions& options = {});

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_RUN_ON_GPU_H_
