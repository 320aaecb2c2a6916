// The CUDA driver API, loaded with dlopen("libcuda.so.1") so hloc never links
// against libcuda: a table of function pointers resolved through the
// driver's cuGetProcAddress (the ABI version of the headers we compiled
// against), or with dlsym of the versioned names cuda.h maps to on drivers
// older than CUDA 12. Every CUresult becomes an absl::Status naming the call
// and the driver's error name and description.
#ifndef HLOC_RUNTIME_CUDA_CUDA_DRIVER_H_
#define HLOC_RUNTIME_CUDA_CUDA_DRIVER_H_

#include <cuda.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/dynamic_library.h"

namespace hloc {
namespace cuda {

// X(function) for each driver function hloc uses. The names go through
// cuda.h's macros (cuMemAlloc is cuMemAlloc_v2), so the member types match
// the headers' ABI.
#define HLOC_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuInit)                           \
  X(cuDriverGetVersion)               \
  X(cuGetErrorName)                   \
  X(cuGetErrorString)                 \
  X(cuDeviceGetCount)                 \
  X(cuDeviceGet)                      \
  X(cuDeviceGetName)                  \
  X(cuDeviceGetAttribute)             \
  X(cuDeviceTotalMem)                 \
  X(cuDevicePrimaryCtxRetain)         \
  X(cuDevicePrimaryCtxRelease)        \
  X(cuCtxSetCurrent)                  \
  X(cuCtxSynchronize)                 \
  X(cuStreamCreate)                   \
  X(cuStreamDestroy)                  \
  X(cuStreamSynchronize)              \
  X(cuStreamQuery)                    \
  X(cuMemAlloc)                       \
  X(cuMemFree)                        \
  X(cuMemGetInfo)                     \
  X(cuMemcpyHtoDAsync)                \
  X(cuMemcpyDtoHAsync)                \
  X(cuMemcpyDtoDAsync)                \
  X(cuMemcpy2DAsync)                  \
  X(cuMemsetD8Async)                  \
  X(cuModuleLoadDataEx)               \
  X(cuModuleUnload)                   \
  X(cuModuleGetFunction)              \
  X(cuFuncSetAttribute)               \
  X(cuLaunchKernel)                   \
  X(cuEventCreate)                    \
  X(cuEventDestroy)                   \
  X(cuEventRecord)                    \
  X(cuEventSynchronize)               \
  X(cuEventElapsedTime)               \
  X(cuStreamBeginCapture)             \
  X(cuStreamEndCapture)               \
  X(cuGraphInstantiateWithFlags)      \
  X(cuGraphLaunch)                    \
  X(cuGraphExecDestroy)               \
  X(cuGraphDestroy)

class CudaDriver {
 public:
  // The process-wide driver: libcuda.so.1 loaded, every function resolved and
  // cuInit(0) run, once. Fails with "no CUDA driver: dlopen libcuda.so.1
  // failed: ..." (IsLibraryMissing is true) when the library is absent, or
  // with cuInit's error (e.g. CUDA_ERROR_NO_DEVICE).
  static absl::StatusOr<const CudaDriver*> Get();

  // A driver loaded from `library_names` (tests point it at a missing file).
  // Does not run cuInit.
  static absl::StatusOr<std::unique_ptr<CudaDriver>> Load(
      const std::vector<std::string>& library_names);

  // OK for CUDA_SUCCESS, else "<call>: <CUDA_ERROR_NAME> (<description>)".
  absl::Status Check(CUresult result, absl::string_view call) const;

  // CUDA version of the driver (e.g. 12040), 0 when the query fails.
  int version() const;

#define HLOC_CUDA_DECLARE_MEMBER(fn) decltype(&::fn) fn = nullptr;
  HLOC_CUDA_DRIVER_FUNCTIONS(HLOC_CUDA_DECLARE_MEMBER)
#undef HLOC_CUDA_DECLARE_MEMBER

 private:
  CudaDriver() = default;
  std::shared_ptr<DynamicLibrary> library_;
};

// A status for a CUresult without a loaded driver (names only the number).
absl::Status CudaResultError(int result, absl::string_view call);

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_CUDA_DRIVER_H_
