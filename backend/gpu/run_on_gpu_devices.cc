// Running a module on N GPUs (see run_on_gpu_devices.h).
#include "backend/gpu/run_on_gpu_devices.h"

#include "absl/strings/str_cat.h"
#include "hlo/collective_groups.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace gpu {

int GpuDeviceCount() {
  if (!cuda::NoGpuReason().empty()) return 0;
  absl::StatusOr<const cuda::CudaDriver*> driver = cuda::CudaDriver::Get();
  if (!driver.ok()) return 0;
  int count = 0;
  if ((*driver)->cuDeviceGetCount(&count) != CUDA_SUCCESS) return 0;
  return count;
}

GpuDevicesProgram::~GpuDevicesProgram() {
  programs_.clear();
  clique_.reset();
  devices_.clear();
}

absl::StatusOr<std::unique_ptr<GpuDevicesProgram>> GpuDevicesProgram::Compile(
    const HloModule& module, const RunOnGpuOptions& options) {
  const std::string reason = GpuUnavailableReason();
  if (!reason.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the CUDA backend cannot run: ", reason));
  }
  const int64_t n = DeviceMesh::Of(module.config()).device_count();
  const int gpus = GpuDeviceCount();
  if (n < 1 || n > gpus) {
    return absl::FailedPreconditionError(
        absl::StrCat("module ", module.name(), " runs on ", n, " devices (replica_count ",
                     module.config().replica_count, " x num_partitions ",
                     module.config().num_partitions, "); this machine has ", gpus, " GPUs"));
  }
  std::unique_ptr<GpuDevicesProgram> self(new GpuDevicesProgram());
  std::vector<int> ordinals;
  for (int d = 0; d < n; ++d) {
    HLOC_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaDevice> device, cuda::CudaDevice::Open(d));
    self->devices_.push_back(std::move(device));
    ordinals.push_back(d);
  }
  GpuProgramOptions compile = options.compile;
  compile.codegen.target = TargetForDevice(self->devices_[0]->info());
  if (compile.kernel_cache == nullptr) {
    compile.kernel_cache = std::make_shared<GpuKernelCache>(compile.codegen);
  }
  std::unique_ptr<cuda::AutotuneCache> cache;
  if (options.autotune) {
    HLOC_ASSIGN_OR_RETURN(cache, cuda::AutotuneCache::Open(options.autotune_cache_path.empty()
                                                               ? cuda::AutotuneCache::DefaultPath()
                                                               : options.autotune_cache_path));
  }
  for (int64_t d = 0; d < n; ++d) {
    HLOC_ASSIGN_OR_RETURN(std::unique_ptr<GpuProgram> program, CompileForGpu(module, compile));
    if (d == 0 && program->report().collectives > 0) {
      // Only programs that talk need NCCL.
      HLOC_ASSIGN_OR_RETURN(self->clique_, cuda::NcclClique::Create(ordinals));
    }
    cuda::GpuLoadOptions load;
    load.autotune = options.autotune;
    load.autotune_cache = cache.get();
    load.use_cuda_graph = options.use_cuda_graph && n == 1;
    load.collective_timeout = options.collective_timeout;
    if (self->clique_ != nullptr) {
      load.collectives = std::make_shared<cuda::NcclRank>(cuda::NcclRank{self->clique_, d});
    }
    absl::Status loaded = program->Load(self->devices_[d].get(), load);
    if (!loaded.ok()) {
      return absl::Status(loaded.code(), absl::StrCat("device ", d, ": ", loaded.message()));
    }
    self->programs_.push_back(std::move(program));
  }
  if (cache != nullptr) cache->Save().IgnoreError();  // A read-only home must not stop the run.
  self->threads_ = std::make_unique<DeviceThreads>(n);
  return self;
}

absl::StatusOr<std::vector<Literal>> GpuDevicesProgram::Execute(
    absl::Span<const std::vector<Literal>> arguments) {
  const int64_t n = device_count();
  if (static_cast<int64_t>(arguments.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("the program runs on ", n, " devices, got arguments for ", arguments.size()));
  }
  if (clique_ != nullptr) {
    if (absl::Status aborted = clique_->aborted(); !aborted.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "an earlier run aborted this program's NCCL communicators (", aborted.message(),
          "); compile it again"));
    }
  }
  // The shared multi-device runner on the program's kept threads (one per
  // device, the first error naming its device). A device that fails aborts
  // the clique's communicators, which releases ranks waiting in NCCL for it.
  return RunOnDeviceThreads(
      n, [&](int64_t d) { return programs_[d]->Execute(arguments[d]); },
      [&](const absl::Status& status) {
        if (clique_ != nullptr) clique_->Abort(status);
      },
      threads_.get());
}

absl::StatusOr<std::vector<Literal>> RunOnGpuDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments,
    const RunOnGpuOptions& options) {
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<GpuDevicesProgram> program,
                        GpuDevicesProgram::Compile(module, options));
  return program->Execute(arguments);
}

}  // namespace gpu
}  // namespace hloc
