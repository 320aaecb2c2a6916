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
#include "passes/sharding/shard_map_to_per_device.h"
#include "passes/sharding/spmd_partitioner.h"

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

// Per entry parameter and result leaf: how its global array lies on the
// devices of the per-device `module`.
absl::Status Place(const HloModule& module, const ShardMapSignature* shard_map,
                   std::vector<DevicePlacement>* inputs, std::vector<DevicePlacement>* outputs) {
  const HloComputation& entry = *module.entry();
  const int64_t n = module.config().replica_count * module.config().num_partitions;
  const bool stacked = shard_map == nullptr && module.config().replica_count > 1;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    const HloInstruction& parameter = *entry.parameter(i);
    if (!parameter.shape().IsArray()) {
      return absl::UnimplementedError(absl::StrCat(
          "%", parameter.name(), ": a tuple parameter on ", n,
          " devices (the API splits array parameters only)"));
    }
    if (shard_map != nullptr) {
      inputs->push_back(PlacementOfShardedValue(*shard_map, shard_map->inputs[i]));
    } else if (stacked) {
      inputs->push_back(StackedPlacement(parameter.shape(), n));
    } else if (parameter.has_sharding()) {
      HLOC_ASSIGN_OR_RETURN(DevicePlacement placement,
                            PlacementOfSharding(parameter.sharding(), parameter.shape(), n,
                                                absl::StrCat("%", parameter.name())));
      inputs->push_back(std::move(placement));
    } else {
      inputs->push_back(ReplicatedPlacement(parameter.shape(), n));
    }
  }
  const HloInstruction& root = *entry.root();
  std::vector<Shape> leaves;
  if (root.shape().IsTuple()) {
    for (const Shape& element : root.shape().tuple_shapes()) leaves.push_back(element);
  } else {
    leaves.push_back(root.shape());
  }
  for (size_t j = 0; j < leaves.size(); ++j) {
    if (!leaves[j].IsArray()) {
      return absl::UnimplementedError(absl::StrCat(
          "%", root.name(), ": result ", j, " is not an array (the API gathers a root that is "
          "an array or a tuple of arrays on ", n, " devices)"));
    }
    if (shard_map != nullptr) {
      outputs->push_back(PlacementOfShardedValue(*shard_map, shard_map->outputs[j]));
      continue;
    }
    const xla::OpSharding* sharding = nullptr;
    if (!stacked && root.has_sharding()) {
      sharding = &root.sharding();
      if (sharding->type() == xla::OpSharding::TUPLE) {
        sharding = j < static_cast<size_t>(sharding->tuple_shardings_size())
                       ? &sharding->tuple_shardings(static_cast<int>(j))
                       : nullptr;
      }
    }
    if (sharding == nullptr) {
      outputs->push_back(StackedPlacement(leaves[j], n));
      continue;
    }
    HLOC_ASSIGN_OR_RETURN(DevicePlacement placement,
                          PlacementOfSharding(*sharding, leaves[j], n,
                                              absl::StrCat("%", root.name(), " result ", j)));
    outputs->push_back(std::move(placement));
  }
  return absl::OkStatus();
}

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
  ShardMapSignature signature;
  HLOC_ASSIGN_OR_RETURN(const bool shard_map, ShardMapToPerDevice(&signature).Run(module));
  // jax.jit over sharded arguments (sharding annotations on global shapes):
  // hloc's SPMD partitioner makes the per-device module, its parameters and
  // root carrying the shardings that split and gather the global arrays.
  SpmdReport spmd_report;
  SpmdMeshShardings spmd_mesh;
  bool spmd = false;
  if (!shard_map && NeedsSpmdPartitioning(module)) {
    SpmdPartitionOptions spmd_options;
    spmd_options.devices = options.devices > 1 ? options.devices : 0;
    spmd_options.report = &spmd_report;
    spmd_options.mesh_shardings = &spmd_mesh;
    HLOC_ASSIGN_OR_RETURN(spmd, SpmdPartition(spmd_options).Run(module));
  }
  HloModuleConfig& config = *module.mutable_config();
  const int64_t named = config.replica_count * config.num_partitions;
  if (!shard_map && !spmd && options.devices > 1 && named == 1) {
    // Shardings on a module that names one device (jax.jit over sharded
    // inputs) describe global arrays that an SPMD partitioner would split;
    // run as replicas, they would be silently wrong.
    for (const HloInstruction* hlo : module.entry()->instructions()) {
      if (hlo->has_sharding() && hlo->sharding().type() != xla::OpSharding::REPLICATED) {
        return absl::UnimplementedError(absl::StrCat(
            "%", hlo->name(), " carries a sharding but module ", module.name(),
            " is not partitioned (it names one device): hloc has no SPMD partitioner yet; "
            "use shard_map, or a module after XLA's spmd-partitioning pass"));
      }
    }
    config.replica_count = options.devices;
  }
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
  if (!shard_map && config.replica_count > 1 && config.num_partitions > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "module ", module.name(), ": replica_count=", config.replica_count,
        " x num_partitions=", config.num_partitions,
        " (the API splits arguments for replicas or for partitions, not both)"));
  }
  std::vector<DevicePlacement> inputs, outputs;
  HLOC_RETURN_IF_ERROR(Place(module, shard_map ? &signature : nullptr, &inputs, &outputs));
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
  if (spmd) absl::StrAppend(&report, spmd_report.ToString(), "\n");
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
    mesh->axis_names = signature.axis_names;
    mesh->axis_sizes = signature.axis_sizes;
    for (const ShardedValue& v : signature.inputs) mesh->parameters.push_back(v.dimension_axes);
    for (const ShardedValue& v : signature.outputs) mesh->results.push_back(v.dimension_axes);
    impl->mesh_shardings = std::move(mesh);
  } else if (spmd && !spmd_mesh.axis_names.empty()) {
    auto mesh = std::make_unique<MeshShardings>();
    mesh->axis_names = spmd_mesh.axis_names;
    mesh->axis_sizes = spmd_mesh.axis_sizes;
    mesh->parameters = spmd_mesh.parameters;
    mesh->results = spmd_mesh.results;
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
