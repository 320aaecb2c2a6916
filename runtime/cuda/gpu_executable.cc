// GpuExecutable: placement, loading, execution (see gpu_executable.h).
#include "runtime/cuda/gpu_executable.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/status_util.h"
#include "runtime/storage_plan.h"

namespace hloc {
namespace cuda {
namespace {

// cuBLASLt and cuDNN want 256-byte aligned operands for their fast paths;
// kernels need 16.
constexpr int64_t kAlignment = 256;

int64_t AlignUp(int64_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

absl::StatusOr<std::unique_ptr<GpuExecutable>> GpuExecutable::Create(GpuProgramSpec spec) {
  std::unique_ptr<GpuExecutable> e(new GpuExecutable(std::move(spec)));
  const std::vector<runtime::BufferSpec>& buffers = e->spec_.buffers;
  const size_t n = buffers.size();
  HLOC_CUDA_ASSIGN_OR_RETURN(
      runtime::StoragePlan plan,
      runtime::PlanStorage(buffers, e->spec_.outputs, e->spec_.output_parameter_aliases));
  e->parameter_sizes_ = plan.parameter_sizes;
  e->aliased_parameter_ = plan.aliased_parameter;
  e->storage_root_ = plan.storage_root;
  e->shared_bytes_ = plan.shared_bytes;
  e->offsets_.assign(n, 0);
  // Constants first, then parameters, then the arena.
  int64_t offset = 0;
  for (runtime::BufferSpec::Kind kind :
       {runtime::BufferSpec::Kind::kConstant, runtime::BufferSpec::Kind::kParameter}) {
    for (size_t i = 0; i < n; ++i) {
      if (buffers[i].kind != kind) continue;
      e->offsets_[i] = offset;
      offset += AlignUp(std::max<int64_t>(buffers[i].size, 1));
    }
    if (kind == runtime::BufferSpec::Kind::kConstant) e->constants_bytes_ = offset;
  }
  e->parameters_bytes_ = offset - e->constants_bytes_;
  // A group holding an output the plan aliases with parameter k lives in
  // k's bytes (copied in before each run, never read after the group's
  // first write); every other group gets a place in the arena.
  std::vector<int64_t> root_parameter(n, -1);
  for (size_t j = 0; j < e->spec_.outputs.size(); ++j) {
    if (plan.aliased_parameter[j] >= 0) {
      root_parameter[plan.storage_root[e->spec_.outputs[j]]] = plan.aliased_parameter[j];
    }
  }
  std::vector<runtime::BufferInterval> temps;
  for (size_t i = 0; i < n; ++i) {
    if (!plan.is_temp_root[i] || root_parameter[i] >= 0) continue;
    temps.push_back(plan.group_live[i]);
    e->temp_ids_.push_back(i);
  }
  e->arena_ = runtime::AssignArenaOffsets(temps, kAlignment);
  e->arena_buffers_ = temps;
  for (size_t t = 0; t < e->temp_ids_.size(); ++t) {
    e->offsets_[e->temp_ids_[t]] = offset + e->arena_.offsets[t];
  }
  for (size_t i = 0; i < n; ++i) {
    if (plan.is_temp_root[i] && root_parameter[i] >= 0) {
      e->offsets_[i] = e->offsets_[plan.parameter_buffer[root_parameter[i]]];
    }
  }
  for (size_t i = 0; i < n; ++i) e->offsets_[i] = e->offsets_[plan.storage_root[i]];
  e->total_bytes_ = offset + e->arena_.arena_size;
  return e;
}

GpuExecutable::~GpuExecutable() {
  if (device_ != nullptr && device_->MakeCurrent().ok()) {
    segments_.reset();  // Graphs before the memory they name.
    device_->Free(base_).IgnoreError();
  }
}

absl::Status GpuExecutable::Load(CudaDevice* device, const GpuLoadOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  if (device_ != nullptr) return absl::FailedPreconditionError("executable already loaded");
  HLOC_CUDA_RETURN_IF_ERROR(device->MakeCurrent());
  HLOC_CUDA_ASSIGN_OR_RETURN(base_, device->Allocate(std::max<int64_t>(total_bytes_, kAlignment)));
  device_ = device;
  addresses_.resize(spec_.buffers.size());
  for (size_t i = 0; i < spec_.buffers.size(); ++i) addresses_[i] = base_ + offsets_[i];
  for (size_t i = 0; i < spec_.buffers.size(); ++i) {
    const runtime::BufferSpec& b = spec_.buffers[i];
    if (b.kind == runtime::BufferSpec::Kind::kConstant && b.size > 0) {
      HLOC_CUDA_RETURN_IF_ERROR(device->CopyToDevice(addresses_[i], b.data.data(), b.size));
    }
  }
  HLOC_CUDA_RETURN_IF_ERROR(device->Synchronize());
  GpuInitContext init;
  init.device = device;
  init.buffers = addresses_;
  init.autotune = options.autotune;
  init.autotune_cache = options.autotune_cache;
  init.log = &load_log_;
  init.device_name = device->info().name;
  init.alternatives = options.alternatives;
  init.time_sequence = options.time_sequence;
  init.collectives = options.collectives;
  init.collective_timeout = options.collective_timeout;
  HLOC_CUDA_RETURN_IF_ERROR(InitializeSequence(spec_.thunks, init));
  HLOC_CUDA_RETURN_IF_ERROR(device->Synchronize());
  use_graph_ = options.use_cuda_graph;
  segments_ = std::make_unique<GraphSegments>(&spec_.thunks);
  return absl::OkStatus();
}

absl::Status GpuExecutable::RunThunks(const GpuExecuteOptions& options) {
  GpuExecutionContext context;
  context.device = device_;
  context.buffers = addresses_;
  context.options = options;
  context.graphs = use_graph_;
  context.graph_stats = &graph_stats_;
  context.log = &load_log_;
  return segments_->Execute(context);
}

absl::Status GpuExecutable::Execute(absl::Span<const void* const> parameters,
                                    absl::Span<void* const> outputs,
                                    const GpuExecuteOptions& options) {
  return Execute(parameters, outputs, {}, {}, options);
}

absl::Status GpuExecutable::Execute(absl::Span<const void* const> parameters,
                                    absl::Span<void* const> outputs,
                                    absl::Span<const char> parameter_on_device,
                                    absl::Span<const char> output_on_device,
                                    const GpuExecuteOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  if (device_ == nullptr) return absl::FailedPreconditionError("executable not loaded");
  if (static_cast<int64_t>(parameters.size()) != num_parameters()) {
    return absl::InvalidArgumentError(
        absl::StrCat("program takes ", num_parameters(), " parameters, got ", parameters.size()));
  }
  if (outputs.size() != spec_.outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("program has ", spec_.outputs.size(), " outputs, got ", outputs.size()));
  }
  if ((!parameter_on_device.empty() && parameter_on_device.size() != parameters.size()) ||
      (!output_on_device.empty() && output_on_device.size() != outputs.size())) {
    return absl::InvalidArgumentError("one device flag per parameter and output, or none");
  }
  HLOC_CUDA_RETURN_IF_ERROR(device_->MakeCurrent());
  for (size_t i = 0; i < spec_.buffers.size(); ++i) {
    const runtime::BufferSpec& b = spec_.buffers[i];
    if (b.kind == runtime::BufferSpec::Kind::kParameter && b.size > 0) {
      const void* source = parameters[b.parameter];
      if (!parameter_on_device.empty() && parameter_on_device[b.parameter]) {
        HLOC_CUDA_RETURN_IF_ERROR(device_->CopyOnDevice(
            addresses_[i], static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(source)), b.size));
      } else {
        HLOC_CUDA_RETURN_IF_ERROR(device_->CopyToDevice(addresses_[i], source, b.size));
      }
    }
  }
  HLOC_CUDA_RETURN_IF_ERROR(RunThunks(options));
  for (size_t j = 0; j < outputs.size(); ++j) {
    const BufferId id = spec_.outputs[j];
    if (!output_on_device.empty() && output_on_device[j]) {
      HLOC_CUDA_RETURN_IF_ERROR(device_->CopyOnDevice(
          static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(outputs[j])), addresses_[id],
          spec_.buffers[id].size));
    } else {
      HLOC_CUDA_RETURN_IF_ERROR(
          device_->CopyToHost(outputs[j], addresses_[id], spec_.buffers[id].size));
    }
  }
  return device_->Synchronize();
}

absl::Status GpuExecutable::RunInPlace(const GpuExecuteOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  if (device_ == nullptr) return absl::FailedPreconditionError("executable not loaded");
  HLOC_CUDA_RETURN_IF_ERROR(device_->MakeCurrent());
  HLOC_CUDA_RETURN_IF_ERROR(RunThunks(options));
  return device_->Synchronize();
}

absl::StatusOr<double> GpuExecutable::TimeRun(const GpuExecuteOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  if (device_ == nullptr) return absl::FailedPreconditionError("executable not loaded");
  HLOC_CUDA_RETURN_IF_ERROR(device_->MakeCurrent());
  return device_->TimeOnStream([&] { return RunThunks(options); });
}

absl::StatusOr<double> GpuExecutable::TimeRuns(int runs, const GpuExecuteOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  if (device_ == nullptr) return absl::FailedPreconditionError("executable not loaded");
  if (runs < 1) return absl::InvalidArgumentError(absl::StrCat("TimeRuns: ", runs, " runs"));
  HLOC_CUDA_RETURN_IF_ERROR(device_->MakeCurrent());
  return device_->TimeOnStream([&]() -> absl::Status {
    for (int i = 0; i < runs; ++i) HLOC_CUDA_RETURN_IF_ERROR(RunThunks(options));
    return absl::OkStatus();
  });
}

std::string GpuExecutable::ThunksToString() const {
  std::string out;
  AppendSequence(spec_.thunks, &out, 0);
  return out;
}

std::string GpuExecutable::MemoryReport() const {
  std::vector<std::string> names;
  for (size_t id : temp_ids_) {
    std::string name = spec_.buffers[id].name;
    for (size_t i = 0; i < storage_root_.size(); ++i) {
      if (i != id && storage_root_[i] == static_cast<BufferId>(id)) {
        absl::StrAppend(&name, " = ", spec_.buffers[i].name);
      }
    }
    names.push_back(std::move(name));
  }
  int64_t sharing = 0, aliased = 0;
  for (size_t i = 0; i < storage_root_.size(); ++i) {
    if (storage_root_[i] != static_cast<BufferId>(i)) ++sharing;
  }
  for (int64_t k : aliased_parameter_) aliased += k >= 0 ? 1 : 0;
  return absl::StrCat("device memory ", total_bytes_, " B: constants ", constants_bytes_,
                      " B, parameters ", parameters_bytes_, " B, ",
                      runtime::ArenaReport(arena_, arena_buffers_, names), sharing,
                      " buffers in another's bytes (", shared_bytes_, " B), ", aliased,
                      " outputs in a parameter's bytes\n");
}

}  // namespace cuda
}  // namespace hloc
