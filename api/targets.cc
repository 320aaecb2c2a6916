// The API's three targets (targets.h): the host backend (JIT kernels and
// oneDNN calls on the client's thread pool), the CUDA backend (device 0,
// arguments and results in host memory, runs serialized per executable),
// and the reference interpreter.
#include "api/targets.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/profile.h"
#include "backend/common/declared_result.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/run_on_gpu.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/run_on_host.h"
#include "backend/llvm/array_leaves.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/status_macros.h"
#include "hlo/text_printer.h"
#include "passes/dynamic_padder.h"
#include "passes/sharding/remove_sharding_annotations.h"
#include "passes/standard_pipelines.h"
#include "runtime/cuda/autotune_cache.h"
#include "runtime/cuda/cuda_device.h"

namespace hloc {
namespace api {
namespace {

// Profiles time the shared host runtime's thunks (runtime/thunk_profiler.h).
absl::Status ProfileUnsupported(absl::string_view backend) {
  return absl::UnimplementedError(absl::StrCat(
      "profiles cover the host backend only; the ", backend,
      " backend does not run its program through the host runtime's thunks"));
}

}  // namespace

bool IsKnownPipeline(const std::string& name) {
  return name == "default" || name == "no-fusion" || name == "fallback" || name == "none";
}

absl::Status OptimizeForBackend(Backend backend, const CompileOptions& options, HloModule& module,
                                FusionLedger* ledger) {
  // On one device JAX's sharding annotations are identities (every
  // backend, every pipeline, "none" included).
  HLOC_RETURN_IF_ERROR(RemoveShardingAnnotations().Run(module).status());
  const std::string& name = options.pipeline;
  if (name == "none" || (backend == Backend::kInterpreter && name == "default")) {
    return absl::OkStatus();
  }
  PipelineOptions pipeline;
  pipeline.dump_to = options.dump_dir;
  pipeline.disabled_passes.insert(options.disabled_passes.begin(), options.disabled_passes.end());
  if (name == "fallback" || backend == Backend::kInterpreter) {
    if (backend != Backend::kInterpreter) {
      // The compiled backends take static shapes: bounded dynamic ones
      // become buffers at their bound plus sizes first, as their own
      // pipelines do (DeclaredResult below then pads and cuts).
      DynamicPadder padder;
      HLOC_RETURN_IF_ERROR(padder.Run(module).status());
    }
    // The interpreter runs what a pipeline leaves too (for bisection):
    // "no-fusion" is the simplifier alone there.
    HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> passes,
                          MakeStandardPipeline(name == "fallback" ? "fallback" : "simplify",
                                               pipeline, ledger));
    HLOC_RETURN_IF_ERROR(passes->Run(module).status());
    if (backend == Backend::kInterpreter) return absl::OkStatus();
  } else if (backend == Backend::kCuda) {
    gpu::GpuPipelineOptions gpu_options;
    gpu_options.pipeline = pipeline;
    if (name == "no-fusion") gpu_options.pipeline.optimization_level = 0;
    HLOC_RETURN_IF_ERROR(gpu::OptimizeForGpu(module, gpu_options, ledger).status());
  } else {
    host::HostPipelineOptions host_options;
    host_options.pipeline = pipeline;
    host_options.fusion = name != "no-fusion";
    HLOC_RETURN_IF_ERROR(host::OptimizeForHost(module, host_options, ledger).status());
  }
  // Bounded dynamic shapes: DescribeEntry records the contract; Executable
  // pads the arguments and cuts the result (DeclaredResult).
  return backend::DeclaredResult::ForModule(module).status();
}

namespace {

// The array leaves of `parameters` as the API's arguments: their specs at
// the bounds and, when `dynamic`, which of their dimensions are dynamic and
// which parameter (and tuple element) each is.
void DescribeArguments(absl::Span<const Shape> parameters, absl::Span<const std::string> names,
                       bool dynamic, ExecutableImpl* impl) {
  for (size_t k = 0; k < parameters.size(); ++k) {
    for (const ArrayLeaf& leaf : ArrayLeaves(parameters[k])) {
      impl->parameters.push_back({leaf.shape->element_type(), leaf.shape->dimensions()});
      if (!dynamic) continue;
      impl->dynamic_dims.push_back(leaf.shape->dynamic_dimensions());
      std::string name = absl::StrCat("parameter %", k < names.size() ? names[k] : "");
      if (!leaf.index.empty()) {
        absl::StrAppend(&name, ", tuple element ", absl::StrJoin(leaf.index, "."));
      }
      impl->argument_names.push_back(std::move(name));
    }
  }
  if (dynamic) impl->declared_parameters.assign(parameters.begin(), parameters.end());
}

}  // namespace

void DescribeEntry(const HloModule& module, ExecutableImpl* impl) {
  // OptimizeForBackend read the contract already: no error here.
  absl::StatusOr<backend::DeclaredResult> declared = backend::DeclaredResult::ForModule(module);
  const bool dynamic = declared.ok() && declared->dynamic();
  if (dynamic && declared->dynamic_parameters()) {
    DescribeArguments(declared->declared_parameters(), declared->declared_parameter_names(),
                      /*dynamic=*/true, impl);
  } else {
    std::vector<Shape> shapes;
    std::vector<std::string> names;
    bool any_dynamic = !module.entry()->root()->shape().is_static();
    for (const HloInstruction* parameter : module.entry()->parameters()) {
      shapes.push_back(parameter->shape());
      names.push_back(parameter->name());
      any_dynamic = any_dynamic || !parameter->shape().is_static();
    }
    // A target running the module as declared takes and returns runtime
    // sizes itself.
    impl->runs_declared = !dynamic && any_dynamic && impl->RunsDeclaredModule();
    DescribeArguments(shapes, names, impl->runs_declared, impl);
  }
  // A padded module's root is (result, sizes, checks): the result as
  // declared is what the caller sees, at its bounds.
  impl->result_shape =
      dynamic ? declared->declared_result_shape() : module.entry()->root()->shape();
  for (const ArrayLeaf& leaf : ArrayLeaves(impl->result_shape)) {
    impl->results.push_back({leaf.shape->element_type(), leaf.shape->dimensions()});
  }
  if (impl->runs_declared) impl->padded_result = !impl->result_shape.is_static();
  if (dynamic) {
    impl->padded_result = declared->dynamic_result() || declared->num_checks() > 0;
    impl->program_result_shape = module.entry()->root()->shape();
    impl->dynamic_entry = std::make_shared<const backend::DeclaredResult>(*declared);
  }
}

namespace {

void CollectLeaves(Literal* literal, std::vector<Literal*>* out) {
  if (literal->shape().IsTuple()) {
    for (Literal& element : *literal->mutable_tuple_elements()) CollectLeaves(&element, out);
  } else if (literal->shape().IsArray()) {
    out->push_back(literal);
  }
}

// A zero literal of `shape`, tuples included.
absl::StatusOr<Literal> ZeroLiteral(const Shape& shape) {
  if (!shape.IsTuple()) return Literal::Create(shape);
  std::vector<Literal> elements;
  for (const Shape& element : shape.tuple_shapes()) {
    HLOC_ASSIGN_OR_RETURN(Literal literal, ZeroLiteral(element));
    elements.push_back(std::move(literal));
  }
  return Literal::Tuple(std::move(elements));
}

class HostImpl : public ExecutableImpl {
 public:
  HostImpl(std::unique_ptr<host::HostProgram> program, std::shared_ptr<runtime::ThreadPool> pool)
      : program_(std::move(program)), pool_(std::move(pool)) {}

  absl::Status Run(absl::Span<const void* const> parameters, absl::Span<void* const> outputs,
                   const ExecuteOptions& options) const override {
    runtime::ExecuteOptions execute;
    execute.max_while_iterations = options.max_while_iterations;
    if (options.profile != nullptr) return RunProfiled(parameters, outputs, execute, *options.profile);
    return program_->executable().Execute(parameters, outputs, pool_.get(), execute);
  }
  int64_t AliasedParameter(int64_t output) const override {
    return program_->executable().aliased_parameter(output);
  }

 private:
  // The runs recorded into a Profile (its `collector`), for one program.
  struct ProfileRuns {
    // This executable while it lives: a new one at the same address is not it.
    std::weak_ptr<const int> owner;
    std::unique_ptr<runtime::ThunkProfiler> profiler;
  };

  absl::Status RunProfiled(absl::Span<const void* const> parameters,
                           absl::Span<void* const> outputs, runtime::ExecuteOptions execute,
                           Profile& profile) const {
    // Only this class makes collectors, so the cast is of the right type; a
    // profile of another program starts over.
    auto runs = std::static_pointer_cast<ProfileRuns>(profile.collector);
    if (runs == nullptr || runs->owner.lock() != profile_owner_) {
      runs = std::make_shared<ProfileRuns>();
      runs->owner = profile_owner_;
      runs->profiler = program_->executable().MakeProfiler();
    }
    execute.profiler = runs->profiler.get();
    absl::Status status = program_->executable().Execute(parameters, outputs, pool_.get(), execute);
    if (!status.ok()) return status;
    profile = SummarizeProfile(*runs->profiler, program_->module(),
                               MeasureMachinePeak(pool_ ? pool_->num_threads() : 1), "host");
    profile.collector = std::move(runs);
    return absl::OkStatus();
  }

  std::unique_ptr<host::HostProgram> program_;
  std::shared_ptr<runtime::ThreadPool> pool_;
  std::shared_ptr<const int> profile_owner_ = std::make_shared<const int>(0);
};

class InterpreterImpl : public ExecutableImpl {
 public:
  InterpreterImpl(std::unique_ptr<HloModule> module, int num_threads, CustomCalls custom_calls)
      : module_(std::move(module)),
        num_threads_(num_threads),
        custom_calls_(std::move(custom_calls)) {}

  bool RunsDeclaredModule() const override { return true; }

  absl::StatusOr<Literal> RunDeclared(absl::Span<const Literal> arguments,
                                      const ExecuteOptions& options) const override {
    if (options.profile != nullptr) return ProfileUnsupported("interpreter");
    return Evaluate(*module_, arguments, Options(options));
  }

  absl::Status Run(absl::Span<const void* const> parameters, absl::Span<void* const> outputs,
                   const ExecuteOptions& options) const override {
    if (options.profile != nullptr) return ProfileUnsupported("interpreter");
    std::vector<Literal> arguments;
    size_t next = 0;
    for (const HloInstruction* parameter : module_->entry()->parameters()) {
      HLOC_ASSIGN_OR_RETURN(Literal argument, ZeroLiteral(parameter->shape()));
      std::vector<Literal*> leaves;
      CollectLeaves(&argument, &leaves);
      for (Literal* leaf : leaves) {
        if (leaf->size_bytes() > 0) {
          std::memcpy(leaf->mutable_raw(), parameters[next], leaf->size_bytes());
        }
        ++next;
      }
      arguments.push_back(std::move(argument));
    }
    HLOC_ASSIGN_OR_RETURN(Literal result, Evaluate(*module_, arguments, Options(options)));
    std::vector<Literal*> leaves;
    CollectLeaves(&result, &leaves);
    if (leaves.size() != outputs.size()) {
      return absl::InternalError(absl::StrCat("the interpreter returned ", leaves.size(),
                                              " arrays for ", outputs.size(), " results"));
    }
    for (size_t j = 0; j < leaves.size(); ++j) {
      if (leaves[j]->size_bytes() != results[j].byte_size()) {
        return absl::InternalError(absl::StrCat("the interpreter's result ", j, " is ",
                                                leaves[j]->shape().ToString(false), ", not ",
                                                results[j].ToString()));
      }
      if (leaves[j]->size_bytes() > 0) {
        std::memcpy(outputs[j], leaves[j]->raw(), leaves[j]->size_bytes());
      }
    }
    return absl::OkStatus();
  }

 private:
  EvaluatorOptions Options(const ExecuteOptions& options) const {
    EvaluatorOptions evaluator;
    evaluator.num_threads = num_threads_;
    evaluator.max_while_iterations = options.max_while_iterations;
    evaluator.custom_calls = custom_calls_.get();
    return evaluator;
  }

  std::unique_ptr<HloModule> module_;
  int num_threads_;
  CustomCalls custom_calls_;
};

class CudaImpl : public ExecutableImpl {
 public:
  CudaImpl(std::unique_ptr<cuda::CudaDevice> device, ClientDevice buffers_device,
           std::unique_ptr<gpu::GpuProgram> program)
      : device_(std::move(device)),
        buffers_device_(std::move(buffers_device)),
        program_(std::move(program)) {}
  ~CudaImpl() override { program_.reset(); }  // Device memory goes before the device.

  absl::Status Run(absl::Span<const void* const> parameters, absl::Span<void* const> outputs,
                   const ExecuteOptions& options) const override {
    return RunWithDeviceMemory(parameters, outputs, {}, {}, options);
  }

  absl::Status RunWithDeviceMemory(absl::Span<const void* const> parameters,
                                   absl::Span<void* const> outputs,
                                   absl::Span<const char> parameter_on_device,
                                   absl::Span<const char> output_on_device,
                                   const ExecuteOptions& options) const override {
    if (options.profile != nullptr) return ProfileUnsupported("cuda");
    std::lock_guard<std::mutex> lock(mu_);  // One arena per executable.
    return program_->executable().Execute(parameters, outputs, parameter_on_device,
                                          output_on_device);
  }

  int64_t AliasedParameter(int64_t output) const override {
    return program_->executable().aliased_parameter(output);
  }

  Location location() const override {
    return Location{Location::Kind::kCuda, device_->info().ordinal};
  }

  absl::StatusOr<Buffer> AllocateOnTargetDevice(const ArraySpec& spec) const override {
    return AllocateOnDevice(buffers_device_, spec);
  }

  absl::Status WaitForDeviceWork() const override { return buffers_device_.WaitForAllWork(); }

 private:
  std::unique_ptr<cuda::CudaDevice> device_;
  // Results left on the device hold this one (the client's), not device_.
  ClientDevice buffers_device_;
  std::unique_ptr<gpu::GpuProgram> program_;
  mutable std::mutex mu_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ExecutableImpl>> CompileForHostTarget(
    const HloModule& optimized, const CompileOptions& options, const HostTargetContext& context,
    CustomCalls custom_calls) {
  host::HostCompileOptions compile;
  compile.compiler = context.kernel_compiler;
  compile.custom_calls = std::move(custom_calls);
  if (options.allow_interpreter_ops) compile.fallback = InterpreterFallback();
  const host::KernelCompilerStats before = context.kernel_compiler->stats();
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<host::HostProgram> program,
                        host::CompileForHost(optimized, compile));
  const host::KernelCompilerStats after = context.kernel_compiler->stats();
  const host::HostCompileReport& report = program->report();
  Stats stats;
  stats.backend = Backend::kHost;
  stats.kernels = report.kernels;
  stats.fused_kernels = report.fused_kernels;
  stats.library_calls = report.library_calls;
  stats.interpreter_ops = report.interpreter_calls;
  stats.interpreter_op_names = report.fallback_ops;
  stats.peak_memory_bytes = program->executable().arena().arena_size;
  stats.kernels_from_disk_cache = after.disk_cache_hits - before.disk_cache_hits;
  stats.kernels_to_disk_cache = after.disk_cache_writes - before.disk_cache_writes;
  std::string text = absl::StrCat(report.ToString(), "thunks:\n",
                                  program->executable().ThunksToString(),
                                  program->executable().MemoryReport());
  auto impl = std::make_unique<HostImpl>(std::move(program), context.pool);
  impl->stats = std::move(stats);
  impl->report = std::move(text);
  return impl;
}

absl::StatusOr<std::unique_ptr<ExecutableImpl>> CompileForInterpreterTarget(
    const HloModule& module, int num_threads, CustomCalls custom_calls) {
  HLOC_RETURN_IF_ERROR(CheckCustomCallTargets(module, custom_calls.get()));
  auto impl = std::make_unique<InterpreterImpl>(module.Clone(), num_threads,
                                                std::move(custom_calls));
  impl->stats.backend = Backend::kInterpreter;
  impl->report = "every op runs on the reference interpreter\n";
  return impl;
}

absl::Duration CollectiveTimeout(const ClientOptions& options) {
  return options.collective_timeout_seconds < 0
             ? cuda::kDefaultCollectiveTimeout
             : absl::Seconds(options.collective_timeout_seconds);
}

absl::StatusOr<std::unique_ptr<ExecutableImpl>> CompileForCudaTarget(
    const HloModule& optimized, const CompileOptions& options,
    ClientDevice buffers_device, CustomCalls custom_calls,
    absl::Duration collective_timeout) {
  const std::string reason = gpu::GpuUnavailableReason();
  if (!reason.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the CUDA backend cannot run: ", reason));
  }
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaDevice> device, cuda::CudaDevice::Open(0));
  gpu::GpuProgramOptions compile;
  compile.codegen.target = gpu::TargetForDevice(device->info());
  compile.custom_calls = std::move(custom_calls);
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<gpu::GpuProgram> program,
                        gpu::CompileForGpu(optimized, compile));
  if (!options.allow_interpreter_ops && program->report().host_fallbacks > 0) {
    return absl::UnimplementedError(absl::StrCat(
        "ops with no CUDA kernel (allow_interpreter_ops is off): ",
        program->report().host.empty() ? "" : program->report().host.front()));
  }
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<cuda::AutotuneCache> cache,
                        cuda::AutotuneCache::Open(cuda::AutotuneCache::DefaultPath()));
  cuda::GpuLoadOptions load;
  load.autotune_cache = cache.get();
  load.collective_timeout = collective_timeout;
  HLOC_RETURN_IF_ERROR(program->Load(device.get(), load));
  (void)cache->Save();  // A read-only home directory must not stop the compile.
  const gpu::GpuCompileReport& report = program->report();
  Stats stats;
  stats.backend = Backend::kCuda;
  stats.kernels = report.kernels;
  stats.fused_kernels = report.fused_kernels;
  stats.library_calls = report.library_calls;
  stats.interpreter_ops = report.host_fallbacks;
  stats.interpreter_op_names = report.host;
  stats.peak_memory_bytes = program->executable().device_bytes();
  std::string text = program->PlanToString();
  auto impl = std::make_unique<CudaImpl>(std::move(device), std::move(buffers_device),
                                         std::move(program));
  impl->stats = std::move(stats);
  impl->report = std::move(text);
  return impl;
}

}  // namespace api
}  // namespace hloc
