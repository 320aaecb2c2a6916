// One CUDA device as hloc uses it: the device's primary context, one stream
// on which everything runs in order, device memory, modules loaded from cubin
// or PTX (the driver JITs PTX) with a cache, kernel launches, events for
// timing, and CUDA graph capture of a stretch of stream work.
#ifndef HLOC_RUNTIME_CUDA_CUDA_DEVICE_H_
#define HLOC_RUNTIME_CUDA_CUDA_DEVICE_H_

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/cuda_driver.h"

namespace hloc {
namespace cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int compute_major = 0, compute_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int warp_size = 32;
  int max_shared_per_block = 0;        // Bytes without opt-in.
  int max_shared_per_block_optin = 0;  // Bytes with cuFuncSetAttribute.
  int64_t total_memory = 0;
  int driver_version = 0;
  std::string ToString() const;  // One line.
};

// The reason no GPU can be used here ("no CUDA driver: dlopen libcuda.so.1
// failed: ...", "cuInit: CUDA_ERROR_NO_DEVICE (...)", "no CUDA device"), or
// empty when device 0 is usable. Tests skip with this text.
std::string NoGpuReason();

// A kernel image: PTX text and/or a cubin. The cubin is preferred; the PTX
// goes to the driver's JIT when there is no cubin or the cubin is rejected
// (another architecture).
struct KernelImage {
  std::string name;  // Entry point.
  std::string ptx;
  std::string cubin;
};

struct LaunchConfig {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared_bytes = 0;
};

class CudaDevice {
 public:
  // Retains device `ordinal`'s primary context and creates the stream.
  static absl::StatusOr<std::unique_ptr<CudaDevice>> Open(int ordinal = 0);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const DeviceInfo& info() const { return info_; }
  const CudaDriver& driver() const { return *driver_; }
  CUstream stream() const { return stream_; }
  // Makes the context current on the calling thread (each entry point of
  // the runtime calls it; it is cheap).
  absl::Status MakeCurrent() const;

  // Device memory (cuMemAlloc; 256-byte aligned). Zero bytes give 0.
  absl::StatusOr<CUdeviceptr> Allocate(int64_t bytes);
  absl::Status Free(CUdeviceptr pointer);

  // Copies, ordered on the stream. Host memory must stay valid until the
  // next Synchronize.
  absl::Status CopyToDevice(CUdeviceptr destination, const void* source, int64_t bytes);
  absl::Status CopyToHost(void* destination, CUdeviceptr source, int64_t bytes);
  absl::Status CopyOnDevice(CUdeviceptr destination, CUdeviceptr source, int64_t bytes);
  // `rows` rows of `row_bytes`, `source_pitch` bytes apart in the source and
  // `destination_pitch` apart in the destination (cuMemcpy2DAsync).
  absl::Status CopyRowsOnDevice(CUdeviceptr destination, int64_t destination_pitch,
                                CUdeviceptr source, int64_t source_pitch, int64_t row_bytes,
                                int64_t rows);
  absl::Status Memset(CUdeviceptr destination, uint8_t value, int64_t bytes);
  absl::Status Synchronize();
  // Waits for every stream of the context (cuCtxSynchronize): other
  // frameworks' work on this device's primary context included.
  absl::Status SynchronizeContext();
  // Whether the stream's work has all run (cuStreamQuery), without
  // blocking: what a watchdog polls instead of Synchronize.
  absl::StatusOr<bool> StreamDone();

  // The kernel's function, loading its module once (cached by image bytes).
  absl::StatusOr<CUfunction> LoadKernel(const KernelImage& image);
  // Launches `function` with `arguments` (pointers to each argument value).
  absl::Status Launch(CUfunction function, const LaunchConfig& config, void** arguments);

  // Milliseconds `work` takes on the stream (events around it; synchronizes).
  absl::StatusOr<double> TimeOnStream(const std::function<absl::Status()>& work);

  // Records `work`'s stream operations into a CUDA graph and instantiates it;
  // nothing runs during capture. Work must not synchronize or read back.
  absl::StatusOr<CUgraphExec> CaptureGraph(const std::function<absl::Status()>& work);
  absl::Status LaunchGraph(CUgraphExec graph);
  void DestroyGraph(CUgraphExec graph);

 private:
  CudaDevice(const CudaDriver* driver, CUdevice device, CUcontext context)
      : driver_(driver), device_(device), context_(context) {}
  const CudaDriver* driver_;
  CUdevice device_;
  CUcontext context_;
  CUstream stream_ = nullptr;
  DeviceInfo info_;
  std::mutex modules_mu_;
  std::map<std::string, CUmodule> modules_;  // Key: hash of the image.
  std::map<std::pair<CUmodule, std::string>, CUfunction> functions_;
};

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_CUDA_DEVICE_H_
