// RunOnGpu (see run_on_gpu.h).
#include "backend/gpu/run_on_gpu.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "runtime/cuda/autotune_cache.h"
#include "runtime/cuda/cuda_device.h"

namespace hloc {
namespace gpu {

std::string GpuUnavailableReason() { return cuda::NoGpuReason(); }

absl::StatusOr<Literal> RunOnGpu(const HloModule& module, absl::Span<const Literal> arguments,
                                 const RunOnGpuOptions& options) {
  const std::string reason = GpuUnavailableReason();
  if (!reason.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the CUDA backend cannot run: ", reason));
  }
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaDevice> device, cuda::CudaDevice::Open(0));
  GpuProgramOptions compile = options.compile;
  compile.codegen.target = TargetForDevice(device->info());
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<GpuProgram> program, CompileForGpu(module, compile));
  std::unique_ptr<cuda::AutotuneCache> cache;
  if (options.autotune) {
    HLOC_ASSIGN_OR_RETURN(cache, cuda::AutotuneCache::Open(options.autotune_cache_path.empty()
                                                               ? cuda::AutotuneCache::DefaultPath()
                                                               : options.autotune_cache_path));
  }
  cuda::GpuLoadOptions load;
  load.autotune = options.autotune;
  load.autotune_cache = cache.get();
  load.use_cuda_graph = options.use_cuda_graph;
  load.collective_timeout = options.collective_timeout;
  HLOC_RETURN_IF_ERROR(program->Load(device.get(), load));
  if (cache != nullptr) {
    absl::Status saved = cache->Save();
    // A read-only home directory must not stop the run.
    if (!saved.ok()) std::fprintf(stderr, "warning: %s\n", std::string(saved.message()).c_str());
  }
  HLOC_ASSIGN_OR_RETURN(Literal result, program->Execute(arguments));
  program.reset();  // Frees device memory before the device goes.
  return result;
}

}  // namespace gpu
}  // namespace hloc
