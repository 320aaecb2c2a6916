// GPU thunks (see gpu_thunk.h).
#include "runtime/cuda/gpu_thunk.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/control_flow.h"
#include "runtime/cuda/graph_segments.h"
#include "runtime/cuda/status_util.h"

namespace hloc {
namespace cuda {
namespace {

std::string Indent(int indent) { return std::string(2 * indent, ' '); }

std::string Ids(const std::vector<BufferId>& ids) {
  return absl::StrCat("(", absl::StrJoin(ids, ", "), ")");
}

absl::Status CheckIds(const std::vector<BufferId>& ids, size_t table, absl::string_view label) {
  for (BufferId id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= table) {
      return absl::InvalidArgumentError(absl::StrCat(label, ": buffer ", id, " out of range"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status InitializeSequence(ThunkSequence& sequence, GpuInitContext& context) {
  for (auto& thunk : sequence) HLOC_CUDA_RETURN_IF_ERROR(thunk->Initialize(context));
  return absl::OkStatus();
}

absl::Status ExecuteSequence(const ThunkSequence& sequence, GpuExecutionContext& context) {
  for (const auto& thunk : sequence) HLOC_CUDA_RETURN_IF_ERROR(thunk->Execute(context));
  return absl::OkStatus();
}

void AppendSequence(const ThunkSequence& sequence, std::string* out, int indent) {
  for (const auto& thunk : sequence) thunk->AppendTo(out, indent);
}

bool SequenceReadsBackToHost(const ThunkSequence& sequence) {
  for (const auto& thunk : sequence) {
    if (thunk->ReadsBackToHost()) return true;
  }
  return false;
}

// ---- kernel launch

absl::Status KernelThunk::Initialize(GpuInitContext& context) {
  HLOC_CUDA_RETURN_IF_ERROR(CheckIds(buffers_, context.buffers.size(), label_));
  HLOC_CUDA_ASSIGN_OR_RETURN(function_, context.device->LoadKernel(*image_));
  return absl::OkStatus();
}

absl::Status KernelThunk::Execute(GpuExecutionContext& context) const {
  if (function_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(label_, ": kernel not loaded"));
  }
  const uint64_t threads = uint64_t{launch_.grid[0]} * launch_.grid[1] * launch_.grid[2] *
                           launch_.block[0] * launch_.block[1] * launch_.block[2];
  if (threads == 0) return absl::OkStatus();
  std::vector<CUdeviceptr> values(buffers_.size());
  std::vector<void*> arguments(buffers_.size());
  for (size_t i = 0; i < buffers_.size(); ++i) {
    values[i] = context.buffers[buffers_[i]];
    arguments[i] = &values[i];
  }
  absl::Status status = context.device->Launch(function_, launch_, arguments.data());
  if (!status.ok())
    return absl::Status(status.code(), absl::StrCat(label_, ": ", status.message()));
  return absl::OkStatus();
}

void KernelThunk::AppendTo(std::string* out, int indent) const {
  absl::StrAppend(out, Indent(indent), "kernel ", label_, " ", image_->name, " ", strategy_,
                  " grid=", launch_.grid[0], ",", launch_.grid[1], ",", launch_.grid[2],
                  " block=", launch_.block[0], ",", launch_.block[1], ",", launch_.block[2],
                  launch_.shared_bytes > 0 ? absl::StrCat(" shared=", launch_.shared_bytes) : "",
                  " buffers=", Ids(buffers_), " ptx=", image_->ptx.size(),
                  "B cubin=", image_->cubin.size(), "B\n");
}

// ---- copies

absl::Status CopyThunk::Execute(GpuExecutionContext& context) const {
  return context.device->CopyOnDevice(context.buffers[destination_], context.buffers[source_],
                                      bytes_);
}

void CopyThunk::AppendTo(std::string* out, int indent) const {
  absl::StrAppend(out, Indent(indent), "copy ", source_, " -> ", destination_, " (", bytes_,
                  " B)\n");
}

// ---- gemm

GemmBuffers GemmThunk::Pointers(const std::vector<CUdeviceptr>& table) const {
  GemmBuffers b;
  size_t i = 0;
  b.lhs = table[buffers_[i++]];
  b.rhs = table[buffers_[i++]];
  if (HasBias(config_.epilogue)) b.bias = table[buffers_[i++]];
  b.output = table[buffers_[i++]];
  b.workspace = table[buffers_[i++]];
  b.workspace_bytes = workspace_bytes_;
  return b;
}

absl::Status GemmThunk::Initialize(GpuInitContext& context) {
  const size_t expected = HasBias(config_.epilogue) ? 5 : 4;
  if (buffers_.size() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(label_, ": gemm takes ", expected, " buffers, got ", buffers_.size()));
  }
  HLOC_CUDA_RETURN_IF_ERROR(CheckIds(buffers_, context.buffers.size(), label_));
  if (context.cublaslt == nullptr) {
    HLOC_CUDA_ASSIGN_OR_RETURN(context.cublaslt, CublasLtHandle::Create());
  }
  GemmTuning tuning;
  tuning.autotune = context.autotune;
  tuning.cache = context.autotune_cache;
  absl::StatusOr<std::unique_ptr<GemmRunner>> runner = GemmRunner::Create(
      config_, context.cublaslt, context.device, Pointers(context.buffers), tuning);
  if (!runner.ok()) {
    return absl::Status(runner.status().code(),
                        absl::StrCat(label_, ": ", runner.status().message()));
  }
  runner_ = *std::move(runner);
  if (context.log != nullptr) {
    context.log->push_back(absl::StrCat(label_, ": ", config_.ToString(), ": ", runner_->choice()));
  }
  return absl::OkStatus();
}

absl::Status GemmThunk::Execute(GpuExecutionContext& context) const {
  if (runner_ == nullptr)
    return absl::FailedPreconditionError(absl::StrCat(label_, ": not initialized"));
  return runner_->Run(Pointers(context.buffers), context.device->stream());
}

void GemmThunk::AppendTo(std::string* out, int indent) const {
  absl::StrAppend(out, Indent(indent), "cublaslt ", label_, " ", config_.ToString(),
                  " buffers=", Ids(buffers_), " workspace=", workspace_bytes_, "B\n");
}

// ---- convolution

ConvBuffers ConvThunk::Pointers(const std::vector<CUdeviceptr>& table) const {
  ConvBuffers b;
  size_t i = 0;
  b.input = table[buffers_[i++]];
  b.filter = table[buffers_[i++]];
  if (config_.epilogue != ConvEpilogue::kNone) b.bias = table[buffers_[i++]];
  b.output = table[buffers_[i++]];
  b.workspace = table[buffers_[i++]];
  b.workspace_bytes = workspace_bytes_;
  return b;
}

absl::Status ConvThunk::Initialize(GpuInitContext& context) {
  const size_t expected = config_.epilogue != ConvEpilogue::kNone ? 5 : 4;
  if (buffers_.size() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(label_, ": conv takes ", expected, " buffers, got ", buffers_.size()));
  }
  HLOC_CUDA_RETURN_IF_ERROR(CheckIds(buffers_, context.buffers.size(), label_));
  if (context.cudnn == nullptr) {
    HLOC_CUDA_ASSIGN_OR_RETURN(context.cudnn, CudnnHandle::Create(context.device));
  }
  ConvTuning tuning;
  tuning.autotune = context.autotune;
  tuning.cache = context.autotune_cache;
  absl::StatusOr<std::unique_ptr<ConvRunner>> runner =
      ConvRunner::Create(config_, context.cudnn, context.device, Pointers(context.buffers), tuning);
  if (!runner.ok()) {
    return absl::Status(runner.status().code(),
                        absl::StrCat(label_, ": ", runner.status().message()));
  }
  runner_ = *std::move(runner);
  if (context.log != nullptr) {
    context.log->push_back(absl::StrCat(label_, ": ", config_.ToString(), ": ", runner_->choice()));
  }
  return absl::OkStatus();
}

absl::Status ConvThunk::Execute(GpuExecutionContext& context) const {
  if (runner_ == nullptr)
    return absl::FailedPreconditionError(absl::StrCat(label_, ": not initialized"));
  return runner_->Run(Pointers(context.buffers));
}

void ConvThunk::AppendTo(std::string* out, int indent) const {
  absl::StrAppend(out, Indent(indent), "cudnn ", label_, " ", config_.ToString(),
                  " buffers=", Ids(buffers_), " workspace=", workspace_bytes_, "B\n");
}

// ---- control flow

WhileThunk::~WhileThunk() = default;

absl::Status WhileThunk::Initialize(GpuInitContext& context) {
  HLOC_CUDA_RETURN_IF_ERROR(CheckIds({predicate_}, context.buffers.size(), label_));
  HLOC_CUDA_RETURN_IF_ERROR(InitializeSequence(condition_, context));
  HLOC_CUDA_RETURN_IF_ERROR(InitializeSequence(body_, context));
  condition_graphs_ = std::make_shared<GraphSegments>(&condition_);
  body_graphs_ = std::make_shared<GraphSegments>(&body_);
  return absl::OkStatus();
}

absl::Status WhileThunk::Execute(GpuExecutionContext& context) const {
  if (condition_graphs_ == nullptr || body_graphs_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(label_, ": not initialized"));
  }
  return runtime::RunWhileLoop(
      label_, context.options.max_while_iterations,
      [&] { return condition_graphs_->Execute(context); },
      [&]() -> absl::StatusOr<bool> {
        uint8_t predicate = 0;
        HLOC_CUDA_RETURN_IF_ERROR(
            context.device->CopyToHost(&predicate, context.buffers[predicate_], 1));
        HLOC_CUDA_RETURN_IF_ERROR(context.device->Synchronize());
        return predicate != 0;
      },
      [&] { return body_graphs_->Execute(context); });
}

void WhileThunk::AppendTo(std::string* out, int indent) const {
  absl::StrAppend(out, Indent(indent), "while ", label_, " predicate=", predicate_, "\n",
                  Indent(indent + 1), "condition:\n");
  AppendSequence(condition_, out, indent + 2);
  absl::StrAppend(out, Indent(indent + 1), "body:\n");
  AppendSequence(body_, out, indent + 2);
}

ConditionalThunk::~ConditionalThunk() = default;

absl::Status ConditionalThunk::Initialize(GpuInitContext& context) {
  HLOC_CUDA_RETURN_IF_ERROR(CheckIds({selector_}, context.buffers.size(), label_));
  if (branches_.empty()) return absl::InvalidArgumentError(absl::StrCat(label_, ": no branches"));
  branch_graphs_.clear();
  for (ThunkSequence& branch : branches_) {
    HLOC_CUDA_RETURN_IF_ERROR(InitializeSequence(branch, context));
    branch_graphs_.push_back(std::make_shared<GraphSegments>(&branch));
  }
  return absl::OkStatus();
}

absl::Status ConditionalThunk::Execute(GpuExecutionContext& context) const {
  int32_t value = 0;
  HLOC_CUDA_RETURN_IF_ERROR(
      context.device->CopyToHost(&value, context.buffers[selector_], selector_is_pred_ ? 1 : 4));
  HLOC_CUDA_RETURN_IF_ERROR(context.device->Synchronize());
  const size_t branch = runtime::SelectBranch(value, selector_is_pred_, branches_.size());
  if (branch >= branch_graphs_.size()) {
    return absl::FailedPreconditionError(absl::StrCat(label_, ": not initialized"));
  }
  return branch_graphs_[branch]->Execute(context);
}

void ConditionalThunk::AppendTo(std::string* out, int indent) const {
  absl::StrAppend(out, Indent(indent), "conditional ", label_, " selector=", selector_,
                  selector_is_pred_ ? " (pred)" : " (index)", "\n");
  for (size_t b = 0; b < branches_.size(); ++b) {
    absl::StrAppend(out, Indent(indent + 1), "branch ", b, ":\n");
    AppendSequence(branches_[b], out, indent + 2);
  }
}

// ---- host calls (interpreter ops, registered custom calls)

absl::Status HostCallThunk::Initialize(GpuInitContext& context) {
  HLOC_CUDA_RETURN_IF_ERROR(CheckIds(inputs_, context.buffers.size(), label_));
  HLOC_CUDA_RETURN_IF_ERROR(CheckIds(outputs_, context.buffers.size(), label_));
  if (input_bytes_.size() != inputs_.size() || output_bytes_.size() != outputs_.size() ||
      !function_) {
    return absl::InvalidArgumentError(absl::StrCat(label_, ": malformed host step"));
  }
  return absl::OkStatus();
}

absl::Status HostCallThunk::Execute(GpuExecutionContext& context) const {
  // 8-byte words keep every host copy aligned for any element type.
  auto words = [](int64_t bytes) { return static_cast<size_t>((bytes + 7) / 8); };
  std::vector<std::vector<uint64_t>> in(inputs_.size()), out(outputs_.size());
  std::vector<const void*> in_ptrs(inputs_.size());
  std::vector<void*> out_ptrs(outputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    in[i].resize(words(input_bytes_[i]));
    in_ptrs[i] = in[i].data();
    if (input_bytes_[i] > 0) {
      HLOC_CUDA_RETURN_IF_ERROR(
          context.device->CopyToHost(in[i].data(), context.buffers[inputs_[i]], input_bytes_[i]));
    }
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    out[i].resize(words(output_bytes_[i]));
    out_ptrs[i] = out[i].data();
  }
  HLOC_CUDA_RETURN_IF_ERROR(context.device->Synchronize());
  absl::Status status = function_(in_ptrs, out_ptrs);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat(error_prefix_, status.message()));
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (output_bytes_[i] > 0) {
      HLOC_CUDA_RETURN_IF_ERROR(context.device->CopyToDevice(context.buffers[outputs_[i]],
                                                             out[i].data(), output_bytes_[i]));
    }
  }
  // The host copies die with this call.
  return context.device->Synchronize();
}

std::string HostCallThunk::BuffersToString() const {
  return absl::StrCat("inputs=", Ids(inputs_), " outputs=", Ids(outputs_));
}

void InterpreterThunk::AppendTo(std::string* out, int indent) const {
  absl::StrAppend(out, Indent(indent), "interpreter ", label_, " ", BuffersToString(),
                  " (on the host: ", reason_, ")\n");
}

void CustomCallThunk::AppendTo(std::string* out, int indent) const {
  absl::StrAppend(out, Indent(indent), "custom-call ", label_, " target=\"", target_, "\" ",
                  BuffersToString(), " (registered function, on the host)\n");
}

}  // namespace cuda
}  // namespace hloc
