// Loading and resolving the CUDA driver API (see cuda_driver.h).
#include "runtime/cuda/cuda_driver.h"

#include <string_view>

#include "absl/strings/str_cat.h"

namespace hloc {
namespace cuda {
namespace {

#define HLOC_CUDA_STRINGIFY_EXPANDED(x) HLOC_CUDA_STRINGIFY(x)
#define HLOC_CUDA_STRINGIFY(x) #x

// cuGetProcAddress as CUDA 12+ drivers export it.
using GetProcAddressFn = CUresult (*)(const char* symbol, void** pfn, int cuda_version,
                                      cuuint64_t flags, CUdriverProcAddressQueryResult* status);

}  // namespace

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Load(
    const std::vector<std::string>& library_names) {
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  auto library = DynamicLibrary::Open("no CUDA driver", library_names);
  if (!library.ok()) return library.status();
  driver->library_ = *std::move(library);
  auto get_proc =
      reinterpret_cast<GetProcAddressFn>(driver->library_->Symbol("cuGetProcAddress_v2"));
  std::string missing;
  // `base` is the name without version suffix, which cuGetProcAddress maps
  // to the variant matching CUDA_VERSION; `versioned` is what cuda.h maps
  // the name to, for dlsym on drivers without cuGetProcAddress_v2.
  auto resolve = [&](const char* base, const char* versioned) -> void* {
    void* fn = nullptr;
    // cuCtxSynchronize: CUDA 13 has cuCtxSynchronize_v2(CUcontext) beside
    // the argument-less form cuda.h declares, and a 13.0 driver asked for
    // version 13000 handed back the one that takes a context (called without
    // it, the call failed with CUDA_ERROR_CONTEXT_IS_DESTROYED on an H200,
    // which is what that mix-up would give; not yet confirmed on a GPU):
    // ask for the CUDA 12 ABI, whose cuCtxSynchronize takes no argument.
    const int abi = std::string_view(base) == "cuCtxSynchronize" ? 12000 : CUDA_VERSION;
    if (get_proc != nullptr) {
      CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      if (get_proc(base, &fn, abi, CU_GET_PROC_ADDRESS_DEFAULT, &found) == CUDA_SUCCESS &&
          found == CU_GET_PROC_ADDRESS_SUCCESS && fn != nullptr) {
        return fn;
      }
    }
    fn = driver->library_->Symbol(versioned);
    if (fn == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", versioned);
    return fn;
  };
#define HLOC_CUDA_RESOLVE(fn) \
  driver->fn =                \
      reinterpret_cast<decltype(driver->fn)>(resolve(#fn, HLOC_CUDA_STRINGIFY_EXPANDED(fn)));
  HLOC_CUDA_DRIVER_FUNCTIONS(HLOC_CUDA_RESOLVE)
#undef HLOC_CUDA_RESOLVE
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA driver in ", driver->library_->name(),
                     " lacks functions hloc needs: ", missing, " (the driver is older than CUDA ",
                     CUDA_VERSION / 1000, ".", CUDA_VERSION % 1000 / 10, ")"));
  }
  return driver;
}

absl::StatusOr<const CudaDriver*> CudaDriver::Get() {
  static const absl::StatusOr<const CudaDriver*>* const driver =
      new absl::StatusOr<const CudaDriver*>([]() -> absl::StatusOr<const CudaDriver*> {
        absl::StatusOr<std::unique_ptr<CudaDriver>> loaded = Load({"libcuda.so.1"});
        if (!loaded.ok()) return loaded.status();
        const CudaDriver* d = loaded->release();  // Lives for the process.
        absl::Status init = d->Check(d->cuInit(0), "cuInit");
        if (!init.ok()) return init;
        return d;
      }());
  return *driver;
}

absl::Status CudaDriver::Check(CUresult result, absl::string_view call) const {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* description = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString == nullptr || cuGetErrorString(result, &description) != CUDA_SUCCESS) {
    description = nullptr;
  }
  std::string text = absl::StrCat(call, ": ", name != nullptr ? name : "CUDA error", " (",
                                  description != nullptr ? description : "no description",
                                  ", code ", static_cast<int>(result), ")");
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(text);
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_NOT_FOUND:
      return absl::InvalidArgumentError(text);
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
      return absl::FailedPreconditionError(text);
    default:
      return absl::InternalError(text);
  }
}

int CudaDriver::version() const {
  int v = 0;
  if (cuDriverGetVersion == nullptr || cuDriverGetVersion(&v) != CUDA_SUCCESS) return 0;
  return v;
}

absl::Status CudaResultError(int result, absl::string_view call) {
  return absl::InternalError(absl::StrCat(call, ": CUDA error ", result));
}

}  // namespace cuda
}  // namespace hloc
