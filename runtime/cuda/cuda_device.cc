// CudaDevice: context, stream, memory, modules, launches, events, graphs.
#include "runtime/cuda/cuda_device.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/cuda/status_util.h"

namespace hloc {
namespace cuda {
namespace {

// Bytes of JIT log kept per module load.
constexpr int kJitLogBytes = 8192;

}  // namespace

std::string DeviceInfo::ToString() const {
  return absl::StrFormat(
      "device %d: %s, sm_%d%d, %d SMs, %d threads/block, %d KiB shared/block (opt-in %d KiB), "
      "%.1f GiB, driver %d.%d",
      ordinal, name, compute_major, compute_minor, sm_count, max_threads_per_block,
      max_shared_per_block / 1024, max_shared_per_block_optin / 1024,
      total_memory / (1024.0 * 1024.0 * 1024.0), driver_version / 1000, driver_version % 1000 / 10);
}

std::string NoGpuReason() {
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
  if (!driver.ok()) return std::string(driver.status().message());
  int count = 0;
  absl::Status status = (*driver)->Check((*driver)->cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (!status.ok()) return std::string(status.message());
  if (count < 1) return "no CUDA device (cuDeviceGetCount returned 0)";
  return "";
}

absl::StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Open(int ordinal) {
  HLOC_CUDA_ASSIGN_OR_RETURN(const CudaDriver* d, CudaDriver::Get());
  int count = 0;
  HLOC_CUDA_RETURN_IF_ERROR(d->Check(d->cuDeviceGetCount(&count), "cuDeviceGetCount"));
  if (ordinal < 0 || ordinal >= count) {
    return absl::NotFoundError(
        absl::StrCat("CUDA device ", ordinal, " does not exist (", count, " devices)"));
  }
  CUdevice device = 0;
  HLOC_CUDA_RETURN_IF_ERROR(d->Check(d->cuDeviceGet(&device, ordinal), "cuDeviceGet"));
  CUcontext context = nullptr;
  HLOC_CUDA_RETURN_IF_ERROR(
      d->Check(d->cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain"));
  std::unique_ptr<CudaDevice> result(new CudaDevice(d, device, context));
  HLOC_CUDA_RETURN_IF_ERROR(result->MakeCurrent());
  HLOC_CUDA_RETURN_IF_ERROR(
      d->Check(d->cuStreamCreate(&result->stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
  DeviceInfo& info = result->info_;
  info.ordinal = ordinal;
  char name[256] = {};
  HLOC_CUDA_RETURN_IF_ERROR(
      d->Check(d->cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName"));
  info.name = name;
  struct Query {
    CUdevice_attribute attribute;
    int* value;
    const char* what;
  };
  const Query queries[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.compute_major, "compute major"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.compute_minor, "compute minor"},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.sm_count, "SM count"},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info.max_threads_per_block, "threads/block"},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &info.max_threads_per_sm, "threads/SM"},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &info.warp_size, "warp size"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &info.max_shared_per_block, "shared"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &info.max_shared_per_block_optin,
       "shared opt-in"},
  };
  for (const Query& q : queries) {
    HLOC_CUDA_RETURN_IF_ERROR(d->Check(d->cuDeviceGetAttribute(q.value, q.attribute, device),
                                       absl::StrCat("cuDeviceGetAttribute(", q.what, ")")));
  }
  size_t total = 0;
  HLOC_CUDA_RETURN_IF_ERROR(d->Check(d->cuDeviceTotalMem(&total, device), "cuDeviceTotalMem"));
  info.total_memory = static_cast<int64_t>(total);
  info.driver_version = d->version();
  return result;
}

CudaDevice::~CudaDevice() {
  if (MakeCurrent().ok()) {
    for (auto& [key, module] : modules_) driver_->cuModuleUnload(module);
    if (stream_ != nullptr) driver_->cuStreamDestroy(stream_);
  }
  driver_->cuDevicePrimaryCtxRelease(device_);
}

absl::Status CudaDevice::MakeCurrent() const {
  return driver_->Check(driver_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

absl::StatusOr<CUdeviceptr> CudaDevice::Allocate(int64_t bytes) {
  if (bytes < 0) return absl::InvalidArgumentError(absl::StrCat("allocation of ", bytes, " bytes"));
  if (bytes == 0) return CUdeviceptr{0};
  CUdeviceptr pointer = 0;
  HLOC_CUDA_RETURN_IF_ERROR(
      driver_->Check(driver_->cuMemAlloc(&pointer, static_cast<size_t>(bytes)),
                     absl::StrCat("cuMemAlloc(", bytes, " bytes)")));
  return pointer;
}

absl::Status CudaDevice::Free(CUdeviceptr pointer) {
  if (pointer == 0) return absl::OkStatus();
  return driver_->Check(driver_->cuMemFree(pointer), "cuMemFree");
}

absl::Status CudaDevice::CopyToDevice(CUdeviceptr destination, const void* source, int64_t bytes) {
  if (bytes <= 0) return absl::OkStatus();
  return driver_->Check(driver_->cuMemcpyHtoDAsync(destination, source, bytes, stream_),
                        absl::StrCat("cuMemcpyHtoDAsync(", bytes, " bytes)"));
}

absl::Status CudaDevice::CopyToHost(void* destination, CUdeviceptr source, int64_t bytes) {
  if (bytes <= 0) return absl::OkStatus();
  return driver_->Check(driver_->cuMemcpyDtoHAsync(destination, source, bytes, stream_),
                        absl::StrCat("cuMemcpyDtoHAsync(", bytes, " bytes)"));
}

absl::Status CudaDevice::CopyOnDevice(CUdeviceptr destination, CUdeviceptr source, int64_t bytes) {
  if (bytes <= 0 || destination == source) return absl::OkStatus();
  return driver_->Check(driver_->cuMemcpyDtoDAsync(destination, source, bytes, stream_),
                        absl::StrCat("cuMemcpyDtoDAsync(", bytes, " bytes)"));
}

absl::Status CudaDevice::CopyRowsOnDevice(CUdeviceptr destination, int64_t destination_pitch,
                                          CUdeviceptr source, int64_t source_pitch,
                                          int64_t row_bytes, int64_t rows) {
  if (row_bytes <= 0 || rows <= 0) return absl::OkStatus();
  CUDA_MEMCPY2D copy = {};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = source;
  copy.srcPitch = static_cast<size_t>(source_pitch);
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = destination;
  copy.dstPitch = static_cast<size_t>(destination_pitch);
  copy.WidthInBytes = static_cast<size_t>(row_bytes);
  copy.Height = static_cast<size_t>(rows);
  return driver_->Check(driver_->cuMemcpy2DAsync(&copy, stream_),
                        absl::StrCat("cuMemcpy2DAsync(", rows, " rows of ", row_bytes, " bytes)"));
}

absl::Status CudaDevice::Memset(CUdeviceptr destination, uint8_t value, int64_t bytes) {
  if (bytes <= 0) return absl::OkStatus();
  return driver_->Check(driver_->cuMemsetD8Async(destination, value, bytes, stream_),
                        "cuMemsetD8Async");
}

absl::Status CudaDevice::SynchronizeContext() {
  return driver_->Check(driver_->cuCtxSynchronize(), "cuCtxSynchronize");
}

absl::Status CudaDevice::Synchronize() {
  return driver_->Check(driver_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

absl::StatusOr<bool> CudaDevice::StreamDone() {
  const CUresult result = driver_->cuStreamQuery(stream_);
  if (result == CUDA_ERROR_NOT_READY) return false;
  HLOC_CUDA_RETURN_IF_ERROR(driver_->Check(result, "cuStreamQuery"));
  return true;
}

absl::StatusOr<CUfunction> CudaDevice::LoadKernel(const KernelImage& image) {
  if (image.ptx.empty() && image.cubin.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", image.name, " has no PTX or cubin"));
  }
  std::lock_guard<std::mutex> lock(modules_mu_);
  const std::string key =
      absl::StrCat(std::hash<std::string>()(image.cubin), ":", image.cubin.size(), ":",
                   std::hash<std::string>()(image.ptx), ":", image.ptx.size());
  CUmodule module = nullptr;
  auto found = modules_.find(key);
  if (found != modules_.end()) {
    module = found->second;
  } else {
    absl::Status cubin_status = absl::NotFoundError("no cubin");
    if (!image.cubin.empty()) {
      cubin_status = driver_->Check(
          driver_->cuModuleLoadDataEx(&module, image.cubin.data(), 0, nullptr, nullptr),
          absl::StrCat("cuModuleLoadDataEx(cubin of ", image.name, ")"));
    }
    if (!cubin_status.ok()) {
      if (image.ptx.empty()) return cubin_status;
      // The driver JIT compiles the PTX; its error log explains rejections.
      std::string log(kJitLogBytes, '\0');
      CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
      void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(log.size()))};
      absl::Status ptx_status = driver_->Check(
          driver_->cuModuleLoadDataEx(&module, image.ptx.c_str(), 2, options, values),
          absl::StrCat("cuModuleLoadDataEx(PTX of ", image.name, ")"));
      if (!ptx_status.ok()) {
        log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
        return absl::Status(ptx_status.code(),
                            absl::StrCat(ptx_status.message(), log.empty() ? "" : ": ", log));
      }
    }
    modules_[key] = module;
  }
  auto function = functions_.find({module, image.name});
  if (function != functions_.end()) return function->second;
  CUfunction f = nullptr;
  HLOC_CUDA_RETURN_IF_ERROR(
      driver_->Check(driver_->cuModuleGetFunction(&f, module, image.name.c_str()),
                     absl::StrCat("cuModuleGetFunction(", image.name, ")")));
  functions_[{module, image.name}] = f;
  return f;
}

absl::Status CudaDevice::Launch(CUfunction function, const LaunchConfig& c, void** arguments) {
  if (c.shared_bytes > 48 * 1024) {
    HLOC_CUDA_RETURN_IF_ERROR(driver_->Check(
        driver_->cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    static_cast<int>(c.shared_bytes)),
        "cuFuncSetAttribute(max dynamic shared)"));
  }
  return driver_->Check(
      driver_->cuLaunchKernel(function, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
                              c.block[2], c.shared_bytes, stream_, arguments, nullptr),
      absl::StrFormat("cuLaunchKernel(grid %u,%u,%u block %u,%u,%u shared %u)", c.grid[0],
                      c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2], c.shared_bytes));
}

absl::StatusOr<double> CudaDevice::TimeOnStream(const std::function<absl::Status()>& work) {
  CUevent start = nullptr, stop = nullptr;
  HLOC_CUDA_RETURN_IF_ERROR(
      driver_->Check(driver_->cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate"));
  absl::Status status =
      driver_->Check(driver_->cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  float ms = 0;
  if (status.ok()) status = driver_->Check(driver_->cuEventRecord(start, stream_), "cuEventRecord");
  if (status.ok()) status = work();
  if (status.ok()) status = driver_->Check(driver_->cuEventRecord(stop, stream_), "cuEventRecord");
  if (status.ok()) status = driver_->Check(driver_->cuEventSynchronize(stop), "cuEventSynchronize");
  if (status.ok()) {
    status = driver_->Check(driver_->cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  }
  driver_->cuEventDestroy(start);
  if (stop != nullptr) driver_->cuEventDestroy(stop);
  if (!status.ok()) return status;
  return static_cast<double>(ms);
}

absl::StatusOr<CUgraphExec> CudaDevice::CaptureGraph(const std::function<absl::Status()>& work) {
  HLOC_CUDA_RETURN_IF_ERROR(
      driver_->Check(driver_->cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                     "cuStreamBeginCapture"));
  absl::Status work_status = work();
  CUgraph graph = nullptr;
  absl::Status end =
      driver_->Check(driver_->cuStreamEndCapture(stream_, &graph), "cuStreamEndCapture");
  if (!work_status.ok()) {
    if (graph != nullptr) driver_->cuGraphDestroy(graph);
    return work_status;
  }
  HLOC_CUDA_RETURN_IF_ERROR(end);
  CUgraphExec exec = nullptr;
  absl::Status instantiate = driver_->Check(driver_->cuGraphInstantiateWithFlags(&exec, graph, 0),
                                            "cuGraphInstantiateWithFlags");
  driver_->cuGraphDestroy(graph);
  HLOC_CUDA_RETURN_IF_ERROR(instantiate);
  return exec;
}

absl::Status CudaDevice::LaunchGraph(CUgraphExec graph) {
  return driver_->Check(driver_->cuGraphLaunch(graph, stream_), "cuGraphLaunch");
}

void CudaDevice::DestroyGraph(CUgraphExec graph) {
  if (graph != nullptr) driver_->cuGraphExecDestroy(graph);
}

}  // namespace cuda
}  // namespace hloc
