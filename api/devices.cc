// The API on N devices (CompileForDevices in targets.h): a sharded module
// compiled for its devices, called with global arrays.
//
//   global arguments --split by DevicePlacement--> per-device arguments
//        -> N device threads (host programs on a shared-memory communicator,
//           GPU programs on an NCCL clique, or the multi-device interpreter)
//   per-device results --gathered by DevicePlacement--> global results
//
// Which placement each value gets is decided once, at compile time, from the
// module (a shard_map's shardings, `sharding=` attributes, or pmap-style
// stacking; see CompileOptions::devices).
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/targets.h"
#include "backend/common/declared_result.h"
#include "backend/gpu/run_on_gpu_devices.h"
#include "backend/host/run_on_host_devices.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/status_macros.h"
#include "passes/sharding/device_placement.h"
#include "passes/sharding/per_device_module.h"

namespace hloc {
namespace api {
namespace {

Shape GlobalShape(const DevicePlacement& p) { return Shape(p.type, p.global_dims); }

// Device d's results as array leaves (a tuple's elements, or the array).
std::vector<const Literal*> ResultLeaves(const Literal& result) {
  std::vector<const Literal*> leaves;
  if (result.shape().IsTuple()) {
    for (const Literal& element : result.tuple_elements()) leaves.push_back(&element);
  } else {
    leaves.push_back(&result);
  }
  return leaves;
}

class DevicesImpl : public ExecutableImpl {
 public:
  DevicesImpl(std::unique_ptr<HloModule> module, std::unique_ptr<HostDevicesProgram> host,
              std::unique_ptr<gpu::GpuDevicesProgram> cuda, std::vector<DevicePlacement> inputs,
              std::vector<DevicePlacement> outputs, int num_threads, CustomCalls custom_calls)
      : custom_calls_(std::move(custom_calls)),
        module_(std::move(module)),
        host_(std::move(host)),
        cuda_(std::move(cuda)),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        num_threads_(num_threads) {
    // The interpreter's devices run on threads kept across runs, as the
    // host's and the GPUs' programs keep theirs.
    if (host_ == nullptr && cuda_ == nullptr) {
      interpreter_threads_ = std::make_unique<DeviceThreads>(Devices());
    }
  }

  absl::Status Run(absl::Span<const void* const> parameters, absl::Span<void* const> outputs,
                   const ExecuteOptions& options) const override {
    const int64_t n = Devices();
    const HloComputation& entry = *module_->entry();
    std::vector<std::vector<Literal>> arguments(n);
    for (int64_t d = 0; d < n; ++d) {
      for (size_t i = 0; i < inputs_.size(); ++i) {
        HLOC_ASSIGN_OR_RETURN(Literal piece, Literal::Create(entry.parameter(i)->shape()));
        CopyBlockToDevice(inputs_[i], d, parameters[i], piece.mutable_raw());
        arguments[d].push_back(std::move(piece));
      }
    }
    absl::StatusOr<std::vector<Literal>> results;
    if (host_ != nullptr) {
      runtime::ExecuteOptions execute;
      execute.max_while_iterations = options.max_while_iterations;
      results = host_->Execute(arguments, execute);
    } else if (cuda_ != nullptr) {
      // One run at a time: the ranks of two runs must not interleave their
      // NCCL calls.
      std::lock_guard<std::mutex> lock(cuda_mu_);
      results = cuda_->Execute(arguments);
    } else {
      MultiDeviceOptions evaluate;
      evaluate.evaluator.num_threads = num_threads_ > 0 ? num_threads_ : 1;
      evaluate.evaluator.max_while_iterations = options.max_while_iterations;
      evaluate.evaluator.custom_calls = custom_calls_.get();
      evaluate.threads = interpreter_threads_.get();
      results = EvaluateOnDevices(*module_, arguments, evaluate);
    }
    if (!results.ok()) return results.status();
    for (int64_t d = 0; d < n; ++d) {
      const std::vector<const Literal*> leaves = ResultLeaves((*results)[d]);
      if (leaves.size() != outputs_.size()) {
        return absl::InternalError(absl::StrCat("device ", d, " returned ", leaves.size(),
                                                " arrays for ", outputs_.size(), " results"));
      }
      for (size_t j = 0; j < outputs_.size(); ++j) {
        if (outputs_[j].gathers[d]) CopyBlockFromDevice(outputs_[j], d, leaves[j]->raw(), outputs[j]);
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t Devices() const {
    return module_->config().replica_count * module_->config().num_partitions;
  }

  CustomCalls custom_calls_;                     // Registered targets (the interpreter's).
  std::unique_ptr<HloModule> module_;            // The per-device module.
  std::unique_ptr<HostDevicesProgram> host_;     // Null: the GPUs or the interpreter.
  std::unique_ptr<gpu::GpuDevicesProgram> cuda_;  // Null: the host or the interpreter.
  mutable std::mutex cuda_mu_;
  std::unique_ptr<DeviceThreads> interpreter_threads_;  // Only for the interpreter.
  std::vector<DevicePlacement> inputs_, outputs_;
  int num_threads_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ExecutableImpl>> CompileOnDevices(
    HloModule& module, Backend backend, const CompileOptions& options,
    const HostTargetContext* host, int num_threads, CustomCalls custom_calls, FusionLedger* ledger,
    absl::Duration collective_timeout, bool* caller_error) {
  if (backend != Backend::kHost && backend != Backend::kInterpreter &&
      backend != Backend::kCuda) {
    return absl::UnimplementedError(absl::StrCat("devices=", options.devices, " on backend ",
                                                 BackendName(backend)));
  }
  // shard_map, jax.jit over sharded arguments (SPMD partitioner), per-device
  // code as written, or replicas (passes/sharding/per_device_module.h).
  HLOC_ASSIGN_OR_RETURN(PerDeviceModule made, MakePerDeviceModule(module, options.devices));
  const bool shard_map = made.kind == PerDeviceModule::Kind::kShardMap;
  const bool spmd = made.kind == PerDeviceModule::Kind::kSpmd;
  const HloModuleConfig& config = module.config();
  const int64_t n = config.replica_count * config.num_partitions;
  if (options.devices != 0 && options.devices != n) {
    *caller_error = true;
    return absl::InvalidArgumentError(absl::StrCat(
        "devices=", options.devices, " but module ", module.name(), " runs on ",
        shard_map ? "a mesh of " : "", n, " devices (replica_count=", config.replica_count,
        " x num_partitions=", config.num_partitions, ")"));
  }
  if (n < 1 || n > 1024) {
    return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), " runs on ", n,
                                                   " devices (1 to 1024)"));
  }
  std::vector<DevicePlacement> inputs, outputs;
  HLOC_RETURN_IF_ERROR(PlaceGlobalArrays(module, made, &inputs, &outputs));
  HLOC_RETURN_IF_ERROR(OptimizeForBackend(backend, options, module, ledger));
  HLOC_ASSIGN_OR_RETURN(backend::DeclaredResult declared,
                        backend::DeclaredResult::ForModule(module));
  if (declared.dynamic()) {
    return absl::UnimplementedError(absl::StrCat(
        "module ", module.name(), " has bounded dynamic shapes (entry parameters, result or size ",
        "checks): executables on ", n, " devices take and return static arrays only"));
  }

  Stats stats;
  stats.backend = backend;
  stats.devices = n;
  std::string report;
  std::unique_ptr<HostDevicesProgram> program;
  std::unique_ptr<gpu::GpuDevicesProgram> gpus;
  if (backend == Backend::kCuda) {
    // One GPU per device, collectives through NCCL.
    gpu::RunOnGpuOptions compile;
    compile.compile.custom_calls = custom_calls;
    compile.collective_timeout = collective_timeout;
    HLOC_ASSIGN_OR_RETURN(gpus, gpu::GpuDevicesProgram::Compile(module, compile));
    const gpu::GpuCompileReport& r = gpus->program(0).report();
    if (!options.allow_interpreter_ops && r.host_fallbacks > 0) {
      return absl::UnimplementedError(absl::StrCat(
          "ops with no CUDA kernel (allow_interpreter_ops is off): ",
          r.host.empty() ? "" : r.host.front()));
    }
    stats.kernels = r.kernels;
    stats.fused_kernels = r.fused_kernels;
    stats.library_calls = r.library_calls;
    stats.interpreter_ops = r.host_fallbacks;
    stats.interpreter_op_names = r.host;
    stats.peak_memory_bytes = gpus->program(0).executable().device_bytes();
    report = absl::StrCat(n, " GPUs, each:\n", gpus->program(0).PlanToString());
  } else if (backend == Backend::kHost) {
    RunOnHostDevicesOptions compile;
    compile.host.compile.compiler = host->kernel_compiler;
    if (options.allow_interpreter_ops) compile.host.compile.fallback = InterpreterFallback();
    compile.host.compile.custom_calls = custom_calls;
    const host::KernelCompilerStats before = host->kernel_compiler->stats();
    HLOC_ASSIGN_OR_RETURN(program, HostDevicesProgram::Compile(module, compile));
    const host::KernelCompilerStats after = host->kernel_compiler->stats();
    const host::HostCompileReport& r = program->report();
    stats.kernels = r.kernels;
    stats.fused_kernels = r.fused_kernels;
    stats.library_calls = r.library_calls;
    stats.interpreter_ops = r.interpreter_calls;
    stats.interpreter_op_names = r.fallback_ops;
    stats.peak_memory_bytes = program->program(0).executable().arena().arena_size;
    stats.kernels_from_disk_cache = after.disk_cache_hits - before.disk_cache_hits;
    stats.kernels_to_disk_cache = after.disk_cache_writes - before.disk_cache_writes;
    report = absl::StrCat(n, " devices, each:\n", r.ToString(), "thunks:\n",
                          program->program(0).executable().ThunksToString());
  } else {
    report = absl::StrCat(n, " devices, every op on the reference interpreter\n");
  }
  if (spmd) absl::StrAppend(&report, made.spmd_report.ToString(), "\n");
  absl::StrAppend(&report, "arguments:\n");
  for (const DevicePlacement& p : inputs) absl::StrAppend(&report, "  ", p.ToString(), "\n");
  absl::StrAppend(&report, "results:\n");
  for (const DevicePlacement& p : outputs) absl::StrAppend(&report, "  ", p.ToString(), "\n");

  std::vector<Shape> result_shapes;
  for (const DevicePlacement& p : outputs) result_shapes.push_back(GlobalShape(p));
  const bool tuple_result = module.entry()->root()->shape().IsTuple();
  auto impl = std::make_unique<DevicesImpl>(module.Clone(), std::move(program), std::move(gpus),
                                            inputs, outputs, num_threads, custom_calls);
  for (const DevicePlacement& p : inputs) impl->parameters.push_back({p.type, p.global_dims});
  for (const DevicePlacement& p : outputs) impl->results.push_back({p.type, p.global_dims});
  impl->result_shape = tuple_result ? Shape::Tuple(result_shapes) : result_shapes[0];
  impl->stats = std::move(stats);
  impl->report = std::move(report);
  if (shard_map) {
    auto mesh = std::make_unique<MeshShardings>();
    mesh->axis_names = made.shard_map.axis_names;
    mesh->axis_sizes = made.shard_map.axis_sizes;
    for (const ShardedValue& v : made.shard_map.inputs) mesh->parameters.push_back(v.dimension_axes);
    for (const ShardedValue& v : made.shard_map.outputs) mesh->results.push_back(v.dimension_axes);
    impl->mesh_shardings = std::move(mesh);
  } else if (spmd && !made.spmd_mesh.axis_names.empty()) {
    auto mesh = std::make_unique<MeshShardings>();
    mesh->axis_names = made.spmd_mesh.axis_names;
    mesh->axis_sizes = made.spmd_mesh.axis_sizes;
    mesh->parameters = made.spmd_mesh.parameters;
    mesh->results = made.spmd_mesh.results;
    impl->mesh_shardings = std::move(mesh);
  }
  return impl;
}

absl::StatusOr<std::unique_ptr<ExecutableImpl>> CompileForDevices(
    HloModule& module, Backend backend, const CompileOptions& options,
    const HostTargetContext* host, int num_threads, CustomCalls custom_calls,
    FusionLedger* ledger, absl::Duration collective_timeout) {
  bool caller_error = false;
  absl::StatusOr<std::unique_ptr<ExecutableImpl>> impl =
      CompileOnDevices(module, backend, options, host, num_threads, std::move(custom_calls), ledger,
                       collective_timeout, &caller_error);
  if (impl.ok() || caller_error || absl::IsFailedPrecondition(impl.status()) ||
      absl::IsResourceExhausted(impl.status())) {
    return impl;
  }
  return MarkCompileError(impl.status());
}

}  // namespace api
}  // namespace hloc
