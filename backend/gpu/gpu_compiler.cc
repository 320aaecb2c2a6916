// HloModule -> GpuExecutable plan (see gpu_compiler.h).
//
// Buffers, liveness and control flow mirror backend/host/host_compiler.cc:
// every array leaf of every value has a buffer id; tuple, get-tuple-element,
// bitcast, same-size reshape and call results reuse their operands' ids;
// steps number instructions in schedule order (nested computations at their
// caller), a temporary lives from its defining step to its last use, and a
// while loop's state stays live to the end of the loop. While loops copy
// the initial value into fresh state buffers and the body's result back
// (through temporaries when a result leaf is another leaf's state);
// conditionals copy the chosen branch's result into their own buffers.
//
// The GpuCompilation class is declared in gpu_compiler_internal.h; its
// library-call methods are in gpu_compiler_library_calls.cc.
#include "backend/gpu/gpu_compiler.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/gpu/gpu_compiler_internal.h"
#include "backend/gpu/host_fallback.h"
#include "backend/llvm/array_leaves.h"
#include "runtime/cuda/alternatives_thunk.h"
#include "hlo/shape_util.h"
#include "hlo/outline.h"
#include "hlo/status_macros.h"
#include "passes/outlining/composite_attributes.h"

namespace hloc {
namespace gpu {
namespace gpu_compiler_internal {

int64_t LeafBytes(const Shape& shape) {
  int64_t n = ByteWidth(shape.element_type());
  for (int64_t d : shape.dimensions()) n *= d;
  return n;
}

absl::Status InstructionError(const HloInstruction& hlo, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("instruction %", hlo.name(), " (", HloOpcodeName(hlo.opcode()), "): ", message));
}

}  // namespace gpu_compiler_internal

namespace {

using cuda::BufferId;
using cuda::ThunkSequence;
using gpu_compiler_internal::InstructionError;
using gpu_compiler_internal::LeafBytes;
using runtime::BufferSpec;

void CollectLiteralLeaves(const Literal& literal, std::vector<const Literal*>* out) {
  if (literal.shape().IsTuple()) {
    for (const Literal& element : literal.tuple_elements()) CollectLiteralLeaves(element, out);
  } else if (literal.shape().IsArray()) {
    out->push_back(&literal);
  }
}
void CollectMutableLeaves(Literal* literal, std::vector<Literal*>* out) {
  if (literal->shape().IsTuple()) {
    for (Literal& element : *literal->mutable_tuple_elements()) CollectMutableLeaves(&element, out);
  } else if (literal->shape().IsArray()) {
    out->push_back(literal);
  }
}


// Ops no GPU kernel emitter or library covers: they run on the host.
// (Sort, topk, the "TopK" custom call and scatter have kernels.)
bool HasNoGpuKernel(const HloInstruction& hlo) {
  switch (hlo.opcode()) {
    case HloOpcode::kCustomCall:
      return hlo.attrs().custom_call_target != "TopK";
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kFft:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kCholesky:
    case HloOpcode::kSelectAndScatter:
      return true;
    default:
      return false;
  }
}

// Ops with no GPU path at all (a single-device program has no peers, and
// the interpreter does not run them either).
bool HasNoGpuPath(HloOpcode op) { return IsAsyncOrCommunication(op); }

absl::Status NoGpuPath(const HloInstruction& hlo, absl::string_view detail = "") {
  return absl::UnimplementedError(
      absl::StrCat("instruction %", hlo.name(), " (", HloOpcodeName(hlo.opcode()),
                   ") has no GPU implementation in hloc", detail.empty() ? "" : ": ", detail));
}

absl::StatusOr<cuda::LaunchConfig> ToLaunchConfig(const GpuKernel& kernel) {
  cuda::LaunchConfig c;
  for (int i = 0; i < 3; ++i) {
    const int64_t limit_grid = i == 0 ? std::numeric_limits<int32_t>::max() : 65535;
    if (kernel.launch.grid[i] < 0 || kernel.launch.grid[i] > limit_grid ||
        kernel.launch.block[i] < 0 || kernel.launch.block[i] > 1024) {
      return absl::InternalError(
          absl::StrCat("kernel ", kernel.name, " has launch dimensions out of range"));
    }
    c.grid[i] = static_cast<uint32_t>(kernel.launch.grid[i]);
    c.block[i] = static_cast<uint32_t>(kernel.launch.block[i]);
  }
  if (kernel.launch.shared_bytes < 0 || kernel.launch.shared_bytes > (int64_t{1} << 30)) {
    return absl::InternalError(absl::StrCat("kernel ", kernel.name, " asks for ",
                                            kernel.launch.shared_bytes, " shared bytes"));
  }
  c.shared_bytes = static_cast<uint32_t>(kernel.launch.shared_bytes);
  return c;
}

}  // namespace

std::string GpuCompileReport::ToString() const {
  std::string out = absl::StrCat(kernels, " kernels (", fused_kernels, " fused), ", unfused_fusions,
                                 " fusions split, ", library_calls, " library calls, ",
                                 inlined_library_calls, " library calls inlined\n");
  for (const std::string& s : strategies) absl::StrAppend(&out, "  kernel ", s, "\n");
  for (const std::string& s : library) absl::StrAppend(&out, "  library ", s, "\n");
  for (const std::string& s : inlined) absl::StrAppend(&out, "  inlined ", s, "\n");
  for (const std::string& s : alternatives) absl::StrAppend(&out, "  alternatives ", s, "\n");
  if (host_fallbacks > 0) absl::StrAppend(&out, host_fallbacks, " ops run on the host\n");
  for (const std::string& s : host) absl::StrAppend(&out, "  host ", s, "\n");
  return out;
}

absl::Status GpuCompilation::Compile() {
  const HloComputation* entry = program_->module_->entry();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  int64_t parameter_leaf = 0;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const HloInstruction* parameter = entry->parameter(i);
    if (parameter == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("entry lacks parameter ", i));
    }
    program_->parameter_shapes_.push_back(parameter->shape());
    std::vector<BufferId> ids;
    for (const ArrayLeaf& leaf : ArrayLeaves(parameter->shape())) {
      BufferSpec spec;
      spec.kind = BufferSpec::Kind::kParameter;
      spec.parameter = parameter_leaf++;
      spec.size = LeafBytes(*leaf.shape);
      spec.name = absl::StrCat("%", parameter->name());
      ids.push_back(AddBuffer(std::move(spec)));
    }
    leaves_[parameter] = std::move(ids);
  }
  cuda::GpuProgramSpec spec;
  HLOC_RETURN_IF_ERROR(EmitComputation(*entry, &spec.thunks));
  ++time_;
  const std::vector<BufferId>& outputs = leaves_.at(entry->root());
  for (BufferId id : outputs) Use(id);
  // A bounded dynamic result comes back at its bounds, as the interpreter's.
  program_->result_shape_ = StaticBounds(entry->root()->shape());
  spec.outputs = outputs;
  spec.buffers = std::move(buffers_);
  HLOC_ASSIGN_OR_RETURN(program_->executable_, cuda::GpuExecutable::Create(std::move(spec)));
  return absl::OkStatus();
}

BufferId GpuCompilation::NewTemp(int64_t bytes, std::string name) {
  BufferSpec spec;
  spec.kind = BufferSpec::Kind::kTemp;
  spec.size = bytes;
  spec.live = {spec.size, time_, time_};
  spec.name = std::move(name);
  return AddBuffer(std::move(spec));
}

std::vector<BufferId> GpuCompilation::NewTemps(const HloInstruction& hlo) {
  std::vector<BufferId> ids;
  for (const ArrayLeaf& leaf : ArrayLeaves(hlo.shape())) {
    std::string name = absl::StrCat("%", hlo.name());
    if (!leaf.index.empty()) absl::StrAppend(&name, "{", absl::StrJoin(leaf.index, ","), "}");
    ids.push_back(NewTemp(LeafBytes(*leaf.shape), std::move(name)));
  }
  return ids;
}

std::vector<BufferId> GpuCompilation::ConstantBuffers(const HloInstruction& hlo) {
  std::vector<const Literal*> literal_leaves;
  CollectLiteralLeaves(hlo.literal(), &literal_leaves);
  std::vector<BufferId> ids;
  for (const Literal* leaf : literal_leaves) {
    BufferSpec spec;
    spec.kind = BufferSpec::Kind::kConstant;
    spec.size = leaf->size_bytes();
    spec.data.assign(leaf->raw(), leaf->raw() + leaf->size_bytes());
    spec.name = absl::StrCat("%", hlo.name());
    ids.push_back(AddBuffer(std::move(spec)));
  }
  return ids;
}

void GpuCompilation::Use(BufferId id) {
  BufferSpec& b = buffers_[id];
  if (b.kind == BufferSpec::Kind::kTemp) b.live.last_use = std::max(b.live.last_use, time_);
}

std::vector<BufferId> GpuCompilation::OperandLeaves(const HloInstruction& hlo) {
  std::vector<BufferId> ids;
  for (const HloInstruction* operand : hlo.operands()) {
    const std::vector<BufferId>& leaves = leaves_.at(operand);
    ids.insert(ids.end(), leaves.begin(), leaves.end());
  }
  return ids;
}

absl::Status GpuCompilation::EmitComputation(const HloComputation& computation,
                                             ThunkSequence* out) {
  for (const HloInstruction* hlo : computation.MakeInstructionPostOrder()) {
    ++time_;
    HLOC_RETURN_IF_ERROR(EmitInstruction(*hlo, out));
  }
  if (!leaves_.contains(computation.root())) {
    return absl::InternalError(absl::StrCat("root of ", computation.name(), " was not emitted"));
  }
  return absl::OkStatus();
}

absl::Status GpuCompilation::EmitInstruction(const HloInstruction& hlo, ThunkSequence* out) {
  switch (hlo.opcode()) {
    case HloOpcode::kParameter:
      if (!leaves_.contains(&hlo)) return InstructionError(hlo, "parameter not bound");
      return absl::OkStatus();
    case HloOpcode::kConstant:
      leaves_[&hlo] = ConstantBuffers(hlo);
      return absl::OkStatus();
    case HloOpcode::kTuple:
      leaves_[&hlo] = OperandLeaves(hlo);
      return absl::OkStatus();
    case HloOpcode::kGetTupleElement: {
      const Shape& tuple = hlo.operand(0)->shape();
      const int64_t index = hlo.tuple_index();
      if (!tuple.IsTuple() || index < 0 || index >= tuple.tuple_shapes_size()) {
        return InstructionError(hlo, "tuple index out of range");
      }
      size_t first = 0;
      for (int64_t i = 0; i < index; ++i) first += ArrayLeaves(tuple.tuple_shapes(i)).size();
      const size_t count = ArrayLeaves(tuple.tuple_shapes(index)).size();
      const std::vector<BufferId>& all = leaves_.at(hlo.operand(0));
      if (first + count > all.size()) return InstructionError(hlo, "tuple leaves missing");
      leaves_[&hlo] = std::vector<BufferId>(all.begin() + first, all.begin() + first + count);
      return absl::OkStatus();
    }
    case HloOpcode::kBitcast:
    case HloOpcode::kReshape:
      if (hlo.shape().IsArray() && hlo.operand(0)->shape().IsArray() &&
          LeafBytes(hlo.shape()) == LeafBytes(hlo.operand(0)->shape())) {
        leaves_[&hlo] = leaves_.at(hlo.operand(0));
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
    case HloOpcode::kAddDependency:
      leaves_[&hlo] = leaves_.at(hlo.operand(0));
      return absl::OkStatus();
    case HloOpcode::kAfterAll:
      leaves_[&hlo] = {};
      return absl::OkStatus();
    case HloOpcode::kCopy: {
      const std::vector<BufferId> sources = leaves_.at(hlo.operand(0));
      for (BufferId id : sources) Use(id);
      std::vector<BufferId> ids = NewTemps(hlo);
      for (size_t i = 0; i < ids.size() && i < sources.size(); ++i) {
        out->push_back(
            std::make_unique<cuda::CopyThunk>(sources[i], ids[i], buffers_[ids[i]].size));
      }
      leaves_[&hlo] = std::move(ids);
      return absl::OkStatus();
    }
    case HloOpcode::kWhile:
      return EmitWhile(hlo, out);
    case HloOpcode::kConditional:
      return EmitConditional(hlo, out);
    case HloOpcode::kCall:
      if (GpuLibraryFamily(hlo).has_value()) return EmitLibraryComposite(hlo, out);
      return EmitInline(*hlo.to_apply(), hlo, out);
    case HloOpcode::kFusion: {
      HLOC_ASSIGN_OR_RETURN(bool compiled, EmitKernel(hlo, *hlo.fused_computation(), out));
      if (compiled) {
        ++report().fused_kernels;
        return absl::OkStatus();
      }
      ++report().unfused_fusions;
      return EmitInline(*hlo.fused_computation(), hlo, out);
    }
    default:
      break;
  }
  if (HasNoGpuPath(hlo.opcode())) return NoGpuPath(hlo);
  if (HasNoGpuKernel(hlo)) {
    return EmitHostFallback(
        hlo,
        hlo.opcode() == HloOpcode::kCustomCall
            ? absl::StrCat("no GPU kernel for custom-call target \"",
                           hlo.attrs().custom_call_target, "\"")
            : absl::StrCat("no GPU kernel for ", HloOpcodeName(hlo.opcode())),
        out);
  }
  std::unique_ptr<HloComputation> wrapper = hloc::WrapInstruction(hlo);
  absl::StatusOr<bool> compiled = EmitKernel(hlo, *wrapper, out);
  if (!compiled.ok()) return compiled.status();
  if (!*compiled) return EmitHostFallback(hlo, unimplemented_reason_, out);
  return absl::OkStatus();
}

// `hlo` computed on the host by the interpreter (host_fallback.h): its
// operands copied down, its results copied back up.
absl::Status GpuCompilation::EmitHostFallback(const HloInstruction& hlo, absl::string_view reason,
                                              ThunkSequence* out) {
  HLOC_ASSIGN_OR_RETURN(cuda::InterpreterThunk::Function function, MakeHostFallback(hlo));
  std::vector<BufferId> inputs = OperandLeaves(hlo);
  std::vector<int64_t> input_bytes;
  for (BufferId id : inputs) {
    Use(id);
    input_bytes.push_back(buffers_[id].size);
  }
  std::vector<BufferId> results = NewTemps(hlo);
  std::vector<int64_t> result_bytes;
  for (BufferId id : results) result_bytes.push_back(buffers_[id].size);
  const std::string label = absl::StrCat("%", hlo.name());
  out->push_back(std::make_unique<cuda::InterpreterThunk>(
      label, std::string(reason), std::move(inputs), std::move(input_bytes), results,
      std::move(result_bytes), std::move(function)));
  ++report().host_fallbacks;
  report().host.push_back(absl::StrCat(label, " (", HloOpcodeName(hlo.opcode()),
                                       ") runs on host: ", reason));
  leaves_[&hlo] = std::move(results);
  return absl::OkStatus();
}

// A kernel for `computation` applied to `hlo`'s operands, defining `hlo`'s
// leaves. False when the kernel emitters do not cover the computation
// (unimplemented_reason_ says why).
absl::StatusOr<bool> GpuCompilation::EmitKernel(const HloInstruction& hlo,
                                                const HloComputation& computation,
                                                ThunkSequence* out) {
  absl::StatusOr<std::shared_ptr<const GpuKernel>> kernel = cache_->GetOrCompile(computation);
  if (!kernel.ok()) {
    if (kernel.status().code() == absl::StatusCode::kUnimplemented) {
      unimplemented_reason_ = std::string(kernel.status().message());
      return false;
    }
    return absl::Status(kernel.status().code(),
                        absl::StrCat("compiling %", hlo.name(), ": ", kernel.status().message()));
  }
  std::vector<BufferId> args = OperandLeaves(hlo);
  for (BufferId id : args) Use(id);
  std::vector<BufferId> results = NewTemps(hlo);
  HLOC_RETURN_IF_ERROR(AddKernelThunk(hlo, **kernel, std::move(args), results, out));
  leaves_[&hlo] = std::move(results);
  return true;
}

absl::Status GpuCompilation::AddKernelThunk(const HloInstruction& hlo, const GpuKernel& kernel,
                                            std::vector<BufferId> args,
                                            const std::vector<BufferId>& results,
                                            ThunkSequence* out, absl::string_view label,
                                            bool count) {
  const std::string name = label.empty() ? absl::StrCat("%", hlo.name()) : std::string(label);
  args.insert(args.end(), results.begin(), results.end());
  // Outputs the kernel updates in place start as copies of inputs.
  for (const auto& [input, output] : kernel.copy_before) {
    if (input < 0 || output < 0 || input >= static_cast<int64_t>(args.size()) ||
        output >= static_cast<int64_t>(args.size())) {
      return InstructionError(hlo, "kernel copy_before out of range");
    }
    out->push_back(std::make_unique<cuda::CopyThunk>(args[input], args[output],
                                                           buffers_[args[output]].size));
  }
  if (kernel.scratch_bytes > 0) {
    args.push_back(NewTemp(kernel.scratch_bytes, absl::StrCat(name, ".scratch")));
  }
  if (static_cast<int64_t>(args.size()) != kernel.num_buffers) {
    return InstructionError(hlo, absl::StrCat("kernel takes ", kernel.num_buffers,
                                              " buffers, the instruction has ", args.size()));
  }
  HLOC_ASSIGN_OR_RETURN(cuda::LaunchConfig launch, ToLaunchConfig(kernel));
  std::shared_ptr<const cuda::KernelImage>& image = images_[&kernel];
  if (image == nullptr) {
    image = std::make_shared<cuda::KernelImage>(
        cuda::KernelImage{kernel.name, kernel.ptx, kernel.cubin});
  }
  // Split reductions: a combine kernel runs next, over the same buffers.
  std::vector<BufferId> second_args;
  if (!kernel.second_name.empty()) second_args = args;
  out->push_back(std::make_unique<cuda::KernelThunk>(name, image, launch, std::move(args),
                                                           kernel.strategy));
  if (!kernel.second_name.empty()) {
    GpuKernel second;
    second.name = kernel.second_name;
    second.launch = kernel.second_launch;
    HLOC_ASSIGN_OR_RETURN(cuda::LaunchConfig second_launch, ToLaunchConfig(second));
    out->push_back(std::make_unique<cuda::KernelThunk>(
        absl::StrCat(name, ".combine"),
        std::make_shared<cuda::KernelImage>(
            cuda::KernelImage{kernel.second_name, image->ptx, image->cubin}),
        second_launch, std::move(second_args), "reduction-combine"));
    if (count) {
      ++report().kernels;
      report().strategies.push_back(absl::StrCat(
          name, ".combine: reduction-combine ", kernel.second_name, " (grid ",
          kernel.second_launch.grid[0], ", block ", kernel.second_launch.block[0], ")"));
    }
  }
  if (!count) return absl::OkStatus();
  ++report().kernels;
  report().strategies.push_back(absl::StrCat(name, ": ", kernel.strategy, " ", kernel.name,
                                             " (grid ", kernel.launch.grid[0], ", block ",
                                             kernel.launch.block[0], ")"));
  return absl::OkStatus();
}

// Runs `computation` with its parameters bound to `caller`'s operands.
absl::Status GpuCompilation::EmitInline(const HloComputation& computation,
                                        const HloInstruction& caller, ThunkSequence* out) {
  if (computation.num_parameters() != caller.operand_count()) {
    return InstructionError(caller, "operand count differs from the callee's parameters");
  }
  for (int64_t i = 0; i < caller.operand_count(); ++i) {
    leaves_[computation.parameter(i)] = leaves_.at(caller.operand(i));
  }
  HLOC_RETURN_IF_ERROR(EmitComputation(computation, out));
  leaves_[&caller] = leaves_.at(computation.root());
  return absl::OkStatus();
}

absl::Status GpuCompilation::EmitWhile(const HloInstruction& hlo, ThunkSequence* out) {
  const HloComputation* condition = hlo.while_condition();
  const HloComputation* body = hlo.while_body();
  if (condition == nullptr || body == nullptr)
    return InstructionError(hlo, "missing computations");
  const std::vector<BufferId> init = leaves_.at(hlo.operand(0));
  for (BufferId id : init) Use(id);
  std::vector<BufferId> state = NewTemps(hlo);
  if (state.size() != init.size()) return InstructionError(hlo, "state and init differ");
  for (size_t i = 0; i < state.size(); ++i) {
    out->push_back(
        std::make_unique<cuda::CopyThunk>(init[i], state[i], buffers_[state[i]].size));
  }
  ThunkSequence condition_thunks, body_thunks;
  leaves_[condition->parameter(0)] = state;
  HLOC_RETURN_IF_ERROR(EmitComputation(*condition, &condition_thunks));
  const std::vector<BufferId>& predicate = leaves_.at(condition->root());
  if (predicate.size() != 1) return InstructionError(hlo, "condition does not return a pred");
  const BufferId predicate_id = predicate[0];
  leaves_[body->parameter(0)] = state;
  HLOC_RETURN_IF_ERROR(EmitComputation(*body, &body_thunks));
  ++time_;
  const std::vector<BufferId> result = leaves_.at(body->root());
  if (result.size() != state.size()) return InstructionError(hlo, "body result and state differ");
  std::vector<BufferId> sources = result;
  for (size_t i = 0; i < result.size(); ++i) {
    Use(result[i]);
    const bool is_other_state =
        result[i] != state[i] && std::find(state.begin(), state.end(), result[i]) != state.end();
    if (is_other_state) {
      sources[i] = NewTemp(buffers_[state[i]].size, absl::StrCat("%", hlo.name(), ".swap"));
      body_thunks.push_back(std::make_unique<cuda::CopyThunk>(result[i], sources[i],
                                                                    buffers_[sources[i]].size));
    }
  }
  ++time_;
  for (size_t i = 0; i < result.size(); ++i) {
    Use(sources[i]);
    if (sources[i] != state[i]) {
      body_thunks.push_back(
          std::make_unique<cuda::CopyThunk>(sources[i], state[i], buffers_[state[i]].size));
    }
  }
  ++time_;
  for (BufferId id : state) Use(id);
  // The predicate is read after the condition runs, every iteration.
  Use(predicate_id);
  out->push_back(std::make_unique<cuda::WhileThunk>(absl::StrCat("%", hlo.name()),
                                                       std::move(condition_thunks), predicate_id,
                                                       std::move(body_thunks)));
  leaves_[&hlo] = std::move(state);
  return absl::OkStatus();
}

absl::Status GpuCompilation::EmitConditional(const HloInstruction& hlo, ThunkSequence* out) {
  const std::vector<HloComputation*>& branches = hlo.called_computations();
  if (branches.empty() || hlo.operand_count() != static_cast<int64_t>(branches.size()) + 1) {
    return InstructionError(hlo, "operands do not match the branches");
  }
  const std::vector<BufferId>& selector = leaves_.at(hlo.operand(0));
  if (selector.size() != 1) return InstructionError(hlo, "selector is not an array");
  const PrimitiveType selector_type = hlo.operand(0)->shape().element_type();
  if (selector_type != xla::PRED && selector_type != xla::S32) {
    return InstructionError(hlo, "selector must be pred or s32");
  }
  Use(selector[0]);
  std::vector<BufferId> results = NewTemps(hlo);
  std::vector<ThunkSequence> branch_thunks(branches.size());
  for (size_t b = 0; b < branches.size(); ++b) {
    const HloComputation* branch = branches[b];
    if (branch->num_parameters() != 1) return InstructionError(hlo, "branch arity");
    leaves_[branch->parameter(0)] = leaves_.at(hlo.operand(b + 1));
    HLOC_RETURN_IF_ERROR(EmitComputation(*branch, &branch_thunks[b]));
    ++time_;
    const std::vector<BufferId> root = leaves_.at(branch->root());
    if (root.size() != results.size()) return InstructionError(hlo, "branch result shape");
    for (size_t i = 0; i < root.size(); ++i) {
      Use(root[i]);
      branch_thunks[b].push_back(std::make_unique<cuda::CopyThunk>(
          root[i], results[i], buffers_[results[i]].size));
    }
  }
  ++time_;
  for (BufferId id : results) Use(id);
  out->push_back(std::make_unique<cuda::ConditionalThunk>(
      absl::StrCat("%", hlo.name()), selector[0], selector_type == xla::PRED,
      std::move(branch_thunks)));
  leaves_[&hlo] = std::move(results);
  return absl::OkStatus();
}

GpuProgram::~GpuProgram() = default;

absl::StatusOr<std::unique_ptr<GpuProgram>> CompileForGpu(const HloModule& module,
                                                          const GpuProgramOptions& options) {
  std::unique_ptr<GpuProgram> program(new GpuProgram());
  program->module_ = module.Clone();
  GpuCompilation compilation(options, program.get());
  HLOC_RETURN_IF_ERROR(compilation.Compile());
  return program;
}

absl::Status GpuProgram::Load(cuda::CudaDevice* device, const cuda::GpuLoadOptions& options) {
  return executable_->Load(device, options);
}

absl::StatusOr<Literal> GpuProgram::Execute(absl::Span<const Literal> arguments,
                                            const cuda::GpuExecuteOptions& options) {
  if (arguments.size() != parameter_shapes_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the entry computation takes ",
                                                   parameter_shapes_.size(), " arguments, got ",
                                                   arguments.size()));
  }
  std::vector<const void*> parameters;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!arguments[i].shape().Compatible(parameter_shapes_[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("argument ", i, " has shape ", arguments[i].shape().ToString(false),
                       ", the parameter is ", parameter_shapes_[i].ToString(false)));
    }
    std::vector<const Literal*> leaves;
    CollectLiteralLeaves(arguments[i], &leaves);
    for (const Literal* leaf : leaves) parameters.push_back(leaf->raw());
  }
  HLOC_ASSIGN_OR_RETURN(Literal result, Literal::Create(result_shape_));
  std::vector<Literal*> leaves;
  CollectMutableLeaves(&result, &leaves);
  std::vector<void*> outputs;
  for (Literal* leaf : leaves) outputs.push_back(leaf->mutable_raw());
  HLOC_RETURN_IF_ERROR(executable_->Execute(parameters, outputs, options));
  return result;
}

std::string GpuProgram::PlanToString() const {
  return absl::StrCat(report_.ToString(), "thunks:\n", executable_->ThunksToString(),
                      executable_->MemoryReport());
}

GpuTarget TargetForDevice(const cuda::DeviceInfo& info) {
  GpuTarget target = GpuTarget::ForComputeCapability(info.compute_major * 10 + info.compute_minor);
  target.sm_count = info.sm_count;
  target.max_threads_per_block = info.max_threads_per_block;
  target.warp_size = info.warp_size;
  return target;
}

}  // namespace gpu
}  // namespace hloc
