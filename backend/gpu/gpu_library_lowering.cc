// The library-call part of the GPU lowering (GpuLowering, gpu_lowering.h):
// a composite call outlined by passes/outlining becomes a cuBLASLt / cuDNN
// thunk from its LibraryCallPlan, with prep kernels (padding, filter
// layout, bias) where the library needs its operands in another form, or an
// alternatives thunk that also holds a generated kernel; a call no library
// takes becomes one kernel, or the program builder inlines it.
// Every decision goes to the fusion ledger when one is given.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/common/literal_leaves.h"
#include "backend/gpu/gpu_lowering.h"
#include "hlo/status_macros.h"
#include "passes/outlining/composite_attributes.h"
#include "runtime/cuda/alternatives_thunk.h"

namespace hloc {
namespace gpu {
namespace {

using backend::InstructionError;
using runtime::BufferId;
using runtime::BufferSpec;

const Shape& ValueShape(const HloInstruction& call, const CalleeValue& value) {
  return value.parameter >= 0 ? call.operand(value.parameter)->shape() : value.constant->shape();
}

// Zero padding of a conv input (cuDNN's legacy API pads symmetrically only).
std::unique_ptr<HloComputation> PadComputation(const HloInstruction& call, const Shape& shape,
                                               const LibraryCallPlan& plan,
                                               const HloInstruction& conv) {
  auto c = std::make_unique<HloComputation>(absl::StrCat(call.name(), ".pad"));
  HloInstruction* p = c->AddInstruction(HloInstruction::CreateParameter(0, shape, "p0"));
  HloInstruction* zero = c->AddInstruction(
      HloInstruction::CreateConstant(Literal(Shape::Scalar(shape.element_type()))));
  const auto& spatial = conv.attrs().convolution_dimension_numbers->input_spatial_dimensions();
  xla::PaddingConfig config;
  std::vector<int64_t> dims = shape.dimensions();
  for (int64_t d = 0; d < shape.rank(); ++d) {
    xla::PaddingConfig::PaddingConfigDimension* pd = config.add_dimensions();
    for (int i = 0; i < spatial.size(); ++i) {
      if (spatial[i] != d) continue;
      pd->set_edge_padding_low(plan.input_pad_low[i]);
      pd->set_edge_padding_high(plan.input_pad_high[i]);
      dims[d] += plan.input_pad_low[i] + plan.input_pad_high[i];
    }
  }
  HloInstruction* pad = c->AddInstruction(
      HloInstruction::Create(HloOpcode::kPad, Shape(shape.element_type(), dims), {p, zero}));
  pad->mutable_attrs()->padding_config = config;
  pad->set_name(absl::StrCat(call.name(), ".pad"));
  c->set_root(pad);
  return c;
}

// The filter in cuDNN's order, scaled per output feature when the
// epilogue has a scale (conv(x, w) * s == conv(x, w * s)).
std::unique_ptr<HloComputation> FilterComputation(const HloInstruction& call, const Shape& shape,
                                                  const LibraryCallPlan& plan,
                                                  const Shape* scale_shape) {
  auto c = std::make_unique<HloComputation>(absl::StrCat(call.name(), ".filter"));
  HloInstruction* w = c->AddInstruction(HloInstruction::CreateParameter(0, shape, "w"));
  if (!plan.filter_permutation.empty()) {
    std::vector<int64_t> dims;
    for (int64_t d : plan.filter_permutation) dims.push_back(shape.dimensions(d));
    HloInstruction* t = c->AddInstruction(
        HloInstruction::Create(HloOpcode::kTranspose, Shape(shape.element_type(), dims), {w}));
    t->mutable_attrs()->dimensions = plan.filter_permutation;
    w = t;
  }
  if (scale_shape != nullptr) {
    HloInstruction* s =
        c->AddInstruction(HloInstruction::CreateParameter(1, *scale_shape, "scale"));
    // Output features are dimension 0 in both OIHW and OHWI.
    HloInstruction* b = c->AddInstruction(HloInstruction::CreateBroadcast(w->shape(), s, {0}));
    w = c->AddInstruction(HloInstruction::Create(HloOpcode::kMultiply, w->shape(), {w, b}));
  }
  w->set_name(absl::StrCat(call.name(), ".filter"));
  c->set_root(w);
  return c;
}

// bias - sub * scale, with the terms the plan has (sub is present).
std::unique_ptr<HloComputation> BiasComputation(const HloInstruction& call, const Shape& shape,
                                                const LibraryCallPlan& plan) {
  auto c = std::make_unique<HloComputation>(absl::StrCat(call.name(), ".bias"));
  int64_t next = 0;
  HloInstruction* bias = nullptr;
  if (plan.bias) bias = c->AddInstruction(HloInstruction::CreateParameter(next++, shape, "bias"));
  HloInstruction* term = c->AddInstruction(HloInstruction::CreateParameter(next++, shape, "sub"));
  if (plan.scale) {
    HloInstruction* scale =
        c->AddInstruction(HloInstruction::CreateParameter(next++, shape, "scale"));
    term = c->AddInstruction(HloInstruction::Create(HloOpcode::kMultiply, shape, {term, scale}));
  }
  HloInstruction* root =
      bias != nullptr
          ? c->AddInstruction(HloInstruction::Create(HloOpcode::kSubtract, shape, {bias, term}))
          : c->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, shape, {term}));
  root->set_name(absl::StrCat(call.name(), ".bias"));
  c->set_root(root);
  return c;
}

}  // namespace

void GpuLowering::Ledger(const HloInstruction& call, bool accepted, absl::string_view rule,
                         absl::string_view reason, absl::string_view result) {
  if (options_.ledger == nullptr) return;
  LedgerEntry entry;
  entry.pass = "gpu-compiler";
  entry.computation = call.parent() != nullptr ? call.parent()->name() : "";
  entry.event = "library-call";
  entry.subjects = {call.name()};
  entry.accepted = accepted;
  entry.rule = std::string(rule);
  entry.reason = std::string(reason);
  entry.result = std::string(result);
  options_.ledger->Add(std::move(entry));
}

absl::StatusOr<bool> GpuLowering::EmitLibraryCall(backend::ProgramBuilder& builder,
                                                  const HloInstruction& call,
                                                  backend::ThunkList* out) {
  // Every custom call here is a registered one (op_lowering.h: TopK is a kernel).
  if (call.opcode() == HloOpcode::kCustomCall) return EmitRegisteredCustomCall(builder, call, out);
  if (!GpuLibraryFamily(call).has_value()) return false;
  const std::string* name_attr = call.FindFrontendAttribute(kCompositeName);
  const std::string composite = name_attr != nullptr ? *name_attr : "?";
  absl::StatusOr<LibraryCallPlan> plan = PlanLibraryCall(call, options_.library);
  std::string reason;
  if (!plan.ok()) {
    if (plan.status().code() != absl::StatusCode::kFailedPrecondition) return plan.status();
    reason = std::string(plan.status().message());
  } else {
    absl::Status available = GpuLibraryAvailable(
        plan->library == GpuLibrary::kCublasLt ? options_.cublaslt : options_.cudnn, plan->library);
    if (!available.ok()) reason = std::string(available.message());
  }
  if (!reason.empty()) {
    ++report_.inlined_library_calls;
    report_.inlined.push_back(absl::StrCat("%", call.name(), " ", composite, ": ", reason));
    Ledger(call, false, "no-gpu-library", reason, "");
    // The callee as one kernel when the emitters cover it; else the
    // builder inlines it, op by op.
    return builder.EmitKernel(call, *call.to_apply(), out);
  }
  if (options_.library.try_generated &&
      LibraryCallFlops(*plan) <= options_.library.try_generated_max_flops) {
    return EmitLibraryOrGenerated(builder, call, composite, *plan, out);
  }
  HLOC_RETURN_IF_ERROR(EmitLibraryThunk(builder, call, composite, *plan, out));
  return true;
}

// The library call and, when the callee compiles to one kernel, that
// kernel as the other alternative of the same step: it reads the call's
// operands and writes the library call's result buffer; its scratch (if
// any) is a temporary live only at this step, like the library's
// workspace, so the two never share memory with each other or with
// anything live across the step.
absl::StatusOr<bool> GpuLowering::EmitLibraryOrGenerated(backend::ProgramBuilder& builder,
                                                         const HloInstruction& call,
                                                         absl::string_view composite,
                                                         const LibraryCallPlan& plan,
                                                         backend::ThunkList* out) {
  absl::StatusOr<std::shared_ptr<const GpuKernel>> kernel = cache_->GetOrCompile(*call.to_apply());
  if (!kernel.ok()) {
    if (kernel.status().code() != absl::StatusCode::kUnimplemented) {
      return absl::Status(kernel.status().code(),
                          absl::StrCat("compiling %", call.name(),
                                       " as generated code: ", kernel.status().message()));
    }
    HLOC_RETURN_IF_ERROR(EmitLibraryThunk(builder, call, composite, plan, out));
    return true;
  }
  std::unique_ptr<backend::ThunkList> library = NewThunkList();
  HLOC_RETURN_IF_ERROR(EmitLibraryThunk(builder, call, composite, plan, library.get()));
  std::vector<BufferId> buffers = builder.buffers().UseOperands(call);
  const std::vector<BufferId>& results = builder.buffers().LeavesOf(&call);
  buffers.insert(buffers.end(), results.begin(), results.end());
  const std::string label = absl::StrCat("%", call.name());
  cuda::ThunkSequence generated;
  HLOC_RETURN_IF_ERROR(AddKernelThunk(builder, call, **kernel, std::move(buffers), &generated,
                                      label, /*strategies=*/nullptr));
  const int64_t workspace = plan.library == GpuLibrary::kCublasLt ? options_.gemm_workspace_bytes
                                                                  : options_.conv_workspace_bytes;
  // With the device name, the autotune cache key: what the library runs
  // and which kernel was generated.
  std::string fingerprint =
      absl::StrCat(composite, " ", plan.ToString(), " workspace=", workspace, " | generated ",
                   (*kernel)->name, " ", (*kernel)->strategy, " grid=", (*kernel)->launch.grid[0],
                   " block=", (*kernel)->launch.block[0]);
  Thunks(out).push_back(std::make_unique<cuda::LibraryOrGeneratedThunk>(
      label, std::move(fingerprint), TakeThunks(std::move(library)), std::move(generated)));
  const std::string line =
      absl::StrCat(label, " ", composite, ": ", GpuLibraryName(plan.library), " or generated ",
                   (*kernel)->strategy, " ", (*kernel)->name, " (grid ", (*kernel)->launch.grid[0],
                   ", block ", (*kernel)->launch.block[0], ")");
  report_.alternatives.push_back(line);
  Ledger(call, true, "library-or-generated", "timed at load, the faster runs", line);
  return true;
}

// The buffer holding a value a library call reads.
absl::StatusOr<BufferId> GpuLowering::ValueBuffer(backend::ProgramBuilder& builder,
                                                  const HloInstruction& call,
                                                  const CalleeValue& value) {
  if (value.parameter >= 0) {
    if (value.parameter >= call.operand_count()) {
      return InstructionError(call, "library operand out of range");
    }
    const std::vector<BufferId>& leaves = builder.buffers().LeavesOf(call.operand(value.parameter));
    if (leaves.size() != 1) return InstructionError(call, "library operand is not an array");
    return leaves[0];
  }
  std::vector<BufferId> ids = builder.buffers().NewConstants(*value.constant);
  if (ids.size() != 1) return InstructionError(call, "library constant is not an array");
  return ids[0];
}

// A generated kernel computing `computation` from `inputs` into a new
// temporary (the preparation steps of a library call), one step.
absl::StatusOr<BufferId> GpuLowering::EmitPrepKernel(backend::ProgramBuilder& builder,
                                                     const HloInstruction& call,
                                                     const HloComputation& computation,
                                                     const std::vector<BufferId>& inputs,
                                                     cuda::ThunkSequence* out) {
  absl::StatusOr<std::shared_ptr<const GpuKernel>> kernel = cache_->GetOrCompile(computation);
  if (!kernel.ok()) {
    return absl::Status(kernel.status().code(),
                        absl::StrCat("compiling ", computation.name(), " for %", call.name(), ": ",
                                     kernel.status().message()));
  }
  backend::BufferTable& table = builder.buffers();
  table.Advance();
  for (BufferId id : inputs) table.Use(id);
  const BufferId result = table.NewTemp(backend::LeafBytes(computation.root()->shape()),
                                        absl::StrCat("%", computation.name()));
  std::vector<BufferId> buffers = inputs;
  buffers.push_back(result);
  std::vector<std::string> strategies;
  HLOC_RETURN_IF_ERROR(AddKernelThunk(builder, call, **kernel, std::move(buffers), out,
                                      absl::StrCat("%", computation.name()), &strategies));
  report_.kernels += static_cast<int64_t>(strategies.size());
  report_.strategies.insert(report_.strategies.end(), strategies.begin(), strategies.end());
  return result;
}

// cuDNN's operands from the call's: the input padded, the filter in
// cuDNN's order and scaled, and the bias folded from the epilogue's vectors.
absl::Status GpuLowering::EmitConvPrep(backend::ProgramBuilder& builder, const HloInstruction& call,
                                       const LibraryCallPlan& plan, std::vector<BufferId>* args,
                                       cuda::ThunkSequence* out) {
  const HloInstruction* conv = nullptr;
  for (const HloInstruction* i : call.to_apply()->MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kConvolution) conv = i;
  }
  if (conv == nullptr) return InstructionError(call, "no convolution in the callee");
  if (!plan.input_pad_low.empty()) {
    std::unique_ptr<HloComputation> pad =
        PadComputation(call, ValueShape(call, plan.operands[0]), plan, *conv);
    HLOC_ASSIGN_OR_RETURN((*args)[0], EmitPrepKernel(builder, call, *pad, {(*args)[0]}, out));
  }
  std::optional<BufferId> scale;
  if (plan.scale) {
    HLOC_ASSIGN_OR_RETURN(BufferId id, ValueBuffer(builder, call, *plan.scale));
    scale = id;
  }
  if (!plan.filter_permutation.empty() || scale.has_value()) {
    const Shape* scale_shape = plan.scale ? &ValueShape(call, *plan.scale) : nullptr;
    std::unique_ptr<HloComputation> filter =
        FilterComputation(call, ValueShape(call, plan.operands[1]), plan, scale_shape);
    std::vector<BufferId> inputs = {(*args)[1]};
    if (scale) inputs.push_back(*scale);
    HLOC_ASSIGN_OR_RETURN((*args)[1], EmitPrepKernel(builder, call, *filter, inputs, out));
  }
  if (plan.conv.epilogue == cuda::ConvEpilogue::kNone) return absl::OkStatus();
  std::optional<BufferId> bias;
  if (plan.bias) {
    HLOC_ASSIGN_OR_RETURN(BufferId id, ValueBuffer(builder, call, *plan.bias));
    bias = id;
  }
  if (plan.sub) {
    HLOC_ASSIGN_OR_RETURN(BufferId sub, ValueBuffer(builder, call, *plan.sub));
    std::vector<BufferId> inputs;
    if (bias) inputs.push_back(*bias);
    inputs.push_back(sub);
    if (scale) inputs.push_back(*scale);
    std::unique_ptr<HloComputation> computation =
        BiasComputation(call, ValueShape(call, *plan.sub), plan);
    HLOC_ASSIGN_OR_RETURN(BufferId folded,
                          EmitPrepKernel(builder, call, *computation, inputs, out));
    bias = folded;
  }
  if (!bias) {
    // A relu with nothing to add: cuDNN's fused call still reads a bias.
    BufferSpec zeros;
    zeros.kind = BufferSpec::Kind::kConstant;
    zeros.size = plan.conv.bias_bytes();
    zeros.data.assign(zeros.size, 0);
    zeros.name = absl::StrCat("%", call.name(), ".zero_bias");
    bias = builder.buffers().Add(std::move(zeros));
  }
  args->push_back(*bias);
  return absl::OkStatus();
}

absl::Status GpuLowering::EmitLibraryThunk(backend::ProgramBuilder& builder,
                                           const HloInstruction& call, absl::string_view composite,
                                           const LibraryCallPlan& plan, backend::ThunkList* out) {
  std::vector<BufferId> args;
  for (const CalleeValue& value : plan.operands) {
    HLOC_ASSIGN_OR_RETURN(BufferId id, ValueBuffer(builder, call, value));
    args.push_back(id);
  }
  const std::string label = absl::StrCat("%", call.name());
  const bool gemm = plan.library == GpuLibrary::kCublasLt;
  if (!gemm) HLOC_RETURN_IF_ERROR(EmitConvPrep(builder, call, plan, &args, &Thunks(out)));
  backend::BufferTable& table = builder.buffers();
  table.Advance();
  for (BufferId id : args) table.Use(id);
  std::vector<BufferId> results = table.NewTemps(call);
  if (results.size() != 1) return InstructionError(call, "library call result is not an array");
  const int64_t workspace_bytes =
      gemm ? options_.gemm_workspace_bytes : options_.conv_workspace_bytes;
  const BufferId workspace = table.NewTemp(workspace_bytes, absl::StrCat(label, ".workspace"));
  args.push_back(results[0]);
  args.push_back(workspace);
  if (gemm) {
    Thunks(out).push_back(
        std::make_unique<cuda::GemmThunk>(label, plan.gemm, args, workspace_bytes));
    report_.gemms.emplace_back(call.name(), plan.gemm);
  } else {
    Thunks(out).push_back(
        std::make_unique<cuda::ConvThunk>(label, plan.conv, args, workspace_bytes));
    report_.convs.emplace_back(call.name(), plan.conv);
  }
  ++report_.library_calls;
  const std::string line = absl::StrCat(label, " ", composite, " -> ", GpuLibraryName(plan.library),
                                        " ", plan.ToString());
  report_.library.push_back(line);
  Ledger(call, true, "gpu-library", absl::StrCat("runs in ", GpuLibraryName(plan.library)),
         plan.ToString());
  table.Bind(&call, std::move(results));
  return absl::OkStatus();
}

}  // namespace gpu
}  // namespace hloc
