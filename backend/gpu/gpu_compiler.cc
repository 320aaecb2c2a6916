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
#include "backend/gpu/gpu_compiler.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/gpu/host_fallback.h"
#include "backend/llvm/array_leaves.h"
#include "runtime/cuda/alternatives_thunk.h"
#include "hlo/shape_util.h"
#include "hlo/outline.h"
#include "hlo/status_macros.h"
#include "passes/outlining/composite_attributes.h"

namespace hloc {
namespace gpu {
namespace {

using cuda::BufferId;
using cuda::GpuThunkSequence;
using runtime::BufferSpec;

int64_t LeafBytes(const Shape& shape) {
  int64_t n = ByteWidth(shape.element_type());
  for (int64_t d : shape.dimensions()) n *= d;
  return n;
}

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

absl::Status InstructionError(const HloInstruction& hlo, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("instruction %", hlo.name(), " (", HloOpcodeName(hlo.opcode()), "): ", message));
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

class GpuCompilation {
 public:
  GpuCompilation(const GpuProgramOptions& options, GpuProgram* program)
      : options_(options), program_(program), cache_(options.kernel_cache) {
    if (cache_ == nullptr) cache_ = std::make_shared<GpuKernelCache>(options.codegen);
  }

  absl::Status Compile() {
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

 private:
  GpuCompileReport& report() { return program_->report_; }

  BufferId AddBuffer(BufferSpec spec) {
    buffers_.push_back(std::move(spec));
    return static_cast<BufferId>(buffers_.size() - 1);
  }
  BufferId NewTemp(int64_t bytes, std::string name) {
    BufferSpec spec;
    spec.kind = BufferSpec::Kind::kTemp;
    spec.size = bytes;
    spec.live = {spec.size, time_, time_};
    spec.name = std::move(name);
    return AddBuffer(std::move(spec));
  }
  std::vector<BufferId> NewTemps(const HloInstruction& hlo) {
    std::vector<BufferId> ids;
    for (const ArrayLeaf& leaf : ArrayLeaves(hlo.shape())) {
      std::string name = absl::StrCat("%", hlo.name());
      if (!leaf.index.empty()) absl::StrAppend(&name, "{", absl::StrJoin(leaf.index, ","), "}");
      ids.push_back(NewTemp(LeafBytes(*leaf.shape), std::move(name)));
    }
    return ids;
  }
  std::vector<BufferId> ConstantBuffers(const HloInstruction& hlo) {
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
  void Use(BufferId id) {
    BufferSpec& b = buffers_[id];
    if (b.kind == BufferSpec::Kind::kTemp) b.live.last_use = std::max(b.live.last_use, time_);
  }
  std::vector<BufferId> OperandLeaves(const HloInstruction& hlo) {
    std::vector<BufferId> ids;
    for (const HloInstruction* operand : hlo.operands()) {
      const std::vector<BufferId>& leaves = leaves_.at(operand);
      ids.insert(ids.end(), leaves.begin(), leaves.end());
    }
    return ids;
  }

  absl::Status EmitComputation(const HloComputation& computation, GpuThunkSequence* out) {
    for (const HloInstruction* hlo : computation.MakeInstructionPostOrder()) {
      ++time_;
      HLOC_RETURN_IF_ERROR(EmitInstruction(*hlo, out));
    }
    if (!leaves_.contains(computation.root())) {
      return absl::InternalError(absl::StrCat("root of ", computation.name(), " was not emitted"));
    }
    return absl::OkStatus();
  }

  absl::Status EmitInstruction(const HloInstruction& hlo, GpuThunkSequence* out) {
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
              std::make_unique<cuda::DeviceCopyThunk>(sources[i], ids[i], buffers_[ids[i]].size));
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
  absl::Status EmitHostFallback(const HloInstruction& hlo, absl::string_view reason,
                                GpuThunkSequence* out) {
    HLOC_ASSIGN_OR_RETURN(cuda::HostCallbackThunk::Function function, MakeHostFallback(hlo));
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
    out->push_back(std::make_unique<cuda::HostCallbackThunk>(
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
  absl::StatusOr<bool> EmitKernel(const HloInstruction& hlo, const HloComputation& computation,
                                  GpuThunkSequence* out) {
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

  absl::Status AddKernelThunk(const HloInstruction& hlo, const GpuKernel& kernel,
                              std::vector<BufferId> args, const std::vector<BufferId>& results,
                              GpuThunkSequence* out, absl::string_view label = "",
                              bool count = true) {
    const std::string name = label.empty() ? absl::StrCat("%", hlo.name()) : std::string(label);
    args.insert(args.end(), results.begin(), results.end());
    // Outputs the kernel updates in place start as copies of inputs.
    for (const auto& [input, output] : kernel.copy_before) {
      if (input < 0 || output < 0 || input >= static_cast<int64_t>(args.size()) ||
          output >= static_cast<int64_t>(args.size())) {
        return InstructionError(hlo, "kernel copy_before out of range");
      }
      out->push_back(std::make_unique<cuda::DeviceCopyThunk>(args[input], args[output],
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
    out->push_back(std::make_unique<cuda::KernelLaunchThunk>(name, image, launch, std::move(args),
                                                             kernel.strategy));
    if (!kernel.second_name.empty()) {
      GpuKernel second;
      second.name = kernel.second_name;
      second.launch = kernel.second_launch;
      HLOC_ASSIGN_OR_RETURN(cuda::LaunchConfig second_launch, ToLaunchConfig(second));
      out->push_back(std::make_unique<cuda::KernelLaunchThunk>(
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
  absl::Status EmitInline(const HloComputation& computation, const HloInstruction& caller,
                          GpuThunkSequence* out) {
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

  void Ledger(const HloInstruction& call, bool accepted, absl::string_view rule,
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

  absl::Status EmitLibraryComposite(const HloInstruction& call, GpuThunkSequence* out) {
    const std::string* name_attr = call.FindFrontendAttribute(kCompositeName);
    const std::string composite = name_attr != nullptr ? *name_attr : "?";
    absl::StatusOr<LibraryCallPlan> plan = PlanLibraryCall(call, options_.library);
    std::string reason;
    if (!plan.ok()) {
      if (plan.status().code() != absl::StatusCode::kFailedPrecondition) return plan.status();
      reason = std::string(plan.status().message());
    } else {
      absl::Status available = GpuLibraryAvailable(
          plan->library == GpuLibrary::kCublasLt ? options_.cublaslt : options_.cudnn,
          plan->library);
      if (!available.ok()) reason = std::string(available.message());
    }
    if (!reason.empty()) {
      ++report().inlined_library_calls;
      report().inlined.push_back(absl::StrCat("%", call.name(), " ", composite, ": ", reason));
      Ledger(call, false, "no-gpu-library", reason, "");
      // The callee as one kernel when the emitters cover it, else op by op.
      HLOC_ASSIGN_OR_RETURN(bool compiled, EmitKernel(call, *call.to_apply(), out));
      if (compiled) return absl::OkStatus();
      return EmitInline(*call.to_apply(), call, out);
    }
    if (options_.library.try_generated &&
        LibraryCallFlops(*plan) <= options_.library.try_generated_max_flops) {
      return EmitLibraryOrGenerated(call, composite, *plan, out);
    }
    return EmitLibraryThunk(call, composite, *plan, out);
  }

  // The library call and, when the callee compiles to one kernel, that
  // kernel as the other alternative of the same step: it reads the call's
  // operands and writes the library call's result buffer; its scratch (if
  // any) is a temporary live only at this step, like the library's
  // workspace, so the two never share memory with each other or with
  // anything live across the step.
  absl::Status EmitLibraryOrGenerated(const HloInstruction& call, absl::string_view composite,
                                      const LibraryCallPlan& plan, GpuThunkSequence* out) {
    absl::StatusOr<std::shared_ptr<const GpuKernel>> kernel =
        cache_->GetOrCompile(*call.to_apply());
    if (!kernel.ok()) {
      if (kernel.status().code() != absl::StatusCode::kUnimplemented) {
        return absl::Status(kernel.status().code(),
                            absl::StrCat("compiling %", call.name(),
                                         " as generated code: ", kernel.status().message()));
      }
      return EmitLibraryThunk(call, composite, plan, out);
    }
    GpuThunkSequence library, generated;
    HLOC_RETURN_IF_ERROR(EmitLibraryThunk(call, composite, plan, &library));
    std::vector<BufferId> args = OperandLeaves(call);
    for (BufferId id : args) Use(id);
    const std::string label = absl::StrCat("%", call.name());
    HLOC_RETURN_IF_ERROR(AddKernelThunk(call, **kernel, std::move(args), leaves_.at(&call),
                                        &generated, label, /*count=*/false));
    const int64_t workspace = plan.library == GpuLibrary::kCublasLt
                                  ? options_.gemm_workspace_bytes
                                  : options_.conv_workspace_bytes;
    // With the device name, the autotune cache key: what the library runs
    // and which kernel was generated.
    std::string fingerprint = absl::StrCat(composite, " ", plan.ToString(), " workspace=", workspace,
                                           " | generated ", (*kernel)->name, " ",
                                           (*kernel)->strategy, " grid=", (*kernel)->launch.grid[0],
                                           " block=", (*kernel)->launch.block[0]);
    out->push_back(std::make_unique<cuda::LibraryOrGeneratedThunk>(
        label, std::move(fingerprint), std::move(library), std::move(generated)));
    const std::string line = absl::StrCat(
        label, " ", composite, ": ", GpuLibraryName(plan.library), " or generated ",
        (*kernel)->strategy, " ", (*kernel)->name, " (grid ", (*kernel)->launch.grid[0],
        ", block ", (*kernel)->launch.block[0], ")");
    report().alternatives.push_back(line);
    Ledger(call, true, "library-or-generated", "timed at load, the faster runs", line);
    return absl::OkStatus();
  }

  // The buffer holding a value a library call reads.
  absl::StatusOr<BufferId> ValueBuffer(const HloInstruction& call, const CalleeValue& value) {
    if (value.parameter >= 0) {
      if (value.parameter >= call.operand_count()) {
        return InstructionError(call, "library operand out of range");
      }
      const std::vector<BufferId>& leaves = leaves_.at(call.operand(value.parameter));
      if (leaves.size() != 1) return InstructionError(call, "library operand is not an array");
      return leaves[0];
    }
    std::vector<BufferId> ids = ConstantBuffers(*value.constant);
    if (ids.size() != 1) return InstructionError(call, "library constant is not an array");
    return ids[0];
  }
  const Shape& ValueShape(const HloInstruction& call, const CalleeValue& value) {
    return value.parameter >= 0 ? call.operand(value.parameter)->shape() : value.constant->shape();
  }

  // A generated kernel computing `computation` from `inputs` into a new
  // temporary (the preparation steps of a library call), one step.
  absl::StatusOr<BufferId> EmitPrepKernel(const HloInstruction& call,
                                          const HloComputation& computation,
                                          const std::vector<BufferId>& inputs,
                                          GpuThunkSequence* out) {
    absl::StatusOr<std::shared_ptr<const GpuKernel>> kernel = cache_->GetOrCompile(computation);
    if (!kernel.ok()) {
      return absl::Status(kernel.status().code(),
                          absl::StrCat("compiling ", computation.name(), " for %", call.name(),
                                       ": ", kernel.status().message()));
    }
    ++time_;
    for (BufferId id : inputs) Use(id);
    const BufferId result =
        NewTemp(LeafBytes(computation.root()->shape()), absl::StrCat("%", computation.name()));
    HLOC_RETURN_IF_ERROR(AddKernelThunk(call, **kernel, inputs, {result}, out,
                                        absl::StrCat("%", computation.name())));
    return result;
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

  absl::Status EmitLibraryThunk(const HloInstruction& call, absl::string_view composite,
                                const LibraryCallPlan& plan, GpuThunkSequence* out) {
    std::vector<BufferId> args;
    for (const CalleeValue& value : plan.operands) {
      HLOC_ASSIGN_OR_RETURN(BufferId id, ValueBuffer(call, value));
      args.push_back(id);
    }
    const std::string label = absl::StrCat("%", call.name());
    const bool gemm = plan.library == GpuLibrary::kCublasLt;
    if (!gemm) {
      const HloInstruction* conv = nullptr;
      for (const HloInstruction* i : call.to_apply()->MakeInstructionPostOrder()) {
        if (i->opcode() == HloOpcode::kConvolution) conv = i;
      }
      if (conv == nullptr) return InstructionError(call, "no convolution in the callee");
      if (!plan.input_pad_low.empty()) {
        std::unique_ptr<HloComputation> pad =
            PadComputation(call, ValueShape(call, plan.operands[0]), plan, *conv);
        HLOC_ASSIGN_OR_RETURN(args[0], EmitPrepKernel(call, *pad, {args[0]}, out));
      }
      std::optional<BufferId> scale;
      if (plan.scale) {
        HLOC_ASSIGN_OR_RETURN(BufferId id, ValueBuffer(call, *plan.scale));
        scale = id;
      }
      if (!plan.filter_permutation.empty() || scale.has_value()) {
        const Shape* scale_shape = plan.scale ? &ValueShape(call, *plan.scale) : nullptr;
        std::unique_ptr<HloComputation> filter =
            FilterComputation(call, ValueShape(call, plan.operands[1]), plan, scale_shape);
        std::vector<BufferId> inputs = {args[1]};
        if (scale) inputs.push_back(*scale);
        HLOC_ASSIGN_OR_RETURN(args[1], EmitPrepKernel(call, *filter, inputs, out));
      }
      if (plan.conv.epilogue != cuda::ConvEpilogue::kNone) {
        std::optional<BufferId> bias;
        if (plan.bias) {
          HLOC_ASSIGN_OR_RETURN(BufferId id, ValueBuffer(call, *plan.bias));
          bias = id;
        }
        if (plan.sub) {
          HLOC_ASSIGN_OR_RETURN(BufferId sub, ValueBuffer(call, *plan.sub));
          std::vector<BufferId> inputs;
          if (bias) inputs.push_back(*bias);
          inputs.push_back(sub);
          if (scale) inputs.push_back(*scale);
          std::unique_ptr<HloComputation> computation =
              BiasComputation(call, ValueShape(call, *plan.sub), plan);
          HLOC_ASSIGN_OR_RETURN(BufferId folded, EmitPrepKernel(call, *computation, inputs, out));
          bias = folded;
        }
        if (!bias) {
          // A relu with nothing to add: cuDNN's fused call still reads a bias.
          BufferSpec zeros;
          zeros.kind = BufferSpec::Kind::kConstant;
          zeros.size = plan.conv.bias_bytes();
          zeros.data.assign(zeros.size, 0);
          zeros.name = absl::StrCat(label, ".zero_bias");
          bias = AddBuffer(std::move(zeros));
        }
        args.push_back(*bias);
      }
    }
    ++time_;
    for (BufferId id : args) Use(id);
    std::vector<BufferId> results = NewTemps(call);
    if (results.size() != 1) return InstructionError(call, "library call result is not an array");
    const int64_t workspace_bytes =
        gemm ? options_.gemm_workspace_bytes : options_.conv_workspace_bytes;
    const BufferId workspace = NewTemp(workspace_bytes, absl::StrCat(label, ".workspace"));
    args.push_back(results[0]);
    args.push_back(workspace);
    if (gemm) {
      out->push_back(std::make_unique<cuda::GemmThunk>(label, plan.gemm, args, workspace_bytes));
      report().gemms.emplace_back(call.name(), plan.gemm);
    } else {
      out->push_back(std::make_unique<cuda::ConvThunk>(label, plan.conv, args, workspace_bytes));
      report().convs.emplace_back(call.name(), plan.conv);
    }
    ++report().library_calls;
    const std::string line = absl::StrCat(label, " ", composite, " -> ",
                                          GpuLibraryName(plan.library), " ", plan.ToString());
    report().library.push_back(line);
    Ledger(call, true, "gpu-library", absl::StrCat("runs in ", GpuLibraryName(plan.library)),
           plan.ToString());
    leaves_[&call] = std::move(results);
    return absl::OkStatus();
  }

  absl::Status EmitWhile(const HloInstruction& hlo, GpuThunkSequence* out) {
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
          std::make_unique<cuda::DeviceCopyThunk>(init[i], state[i], buffers_[state[i]].size));
    }
    GpuThunkSequence condition_thunks, body_thunks;
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
        body_thunks.push_back(std::make_unique<cuda::DeviceCopyThunk>(result[i], sources[i],
                                                                      buffers_[sources[i]].size));
      }
    }
    ++time_;
    for (size_t i = 0; i < result.size(); ++i) {
      Use(sources[i]);
      if (sources[i] != state[i]) {
        body_thunks.push_back(
            std::make_unique<cuda::DeviceCopyThunk>(sources[i], state[i], buffers_[state[i]].size));
      }
    }
    ++time_;
    for (BufferId id : state) Use(id);
    // The predicate is read after the condition runs, every iteration.
    Use(predicate_id);
    out->push_back(std::make_unique<cuda::GpuWhileThunk>(absl::StrCat("%", hlo.name()),
                                                         std::move(condition_thunks), predicate_id,
                                                         std::move(body_thunks)));
    leaves_[&hlo] = std::move(state);
    return absl::OkStatus();
  }

  absl::Status EmitConditional(const HloInstruction& hlo, GpuThunkSequence* out) {
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
    std::vector<GpuThunkSequence> branch_thunks(branches.size());
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
        branch_thunks[b].push_back(std::make_unique<cuda::DeviceCopyThunk>(
            root[i], results[i], buffers_[results[i]].size));
      }
    }
    ++time_;
    for (BufferId id : results) Use(id);
    out->push_back(std::make_unique<cuda::GpuConditionalThunk>(
        absl::StrCat("%", hlo.name()), selector[0], selector_type == xla::PRED,
        std::move(branch_thunks)));
    leaves_[&hlo] = std::move(results);
    return absl::OkStatus();
  }

  const GpuProgramOptions& options_;
  GpuProgram* program_;
  std::shared_ptr<GpuKernelCache> cache_;
  std::vector<BufferSpec> buffers_;
  absl::node_hash_map<const HloInstruction*, std::vector<BufferId>> leaves_;
  absl::flat_hash_map<const GpuKernel*, std::shared_ptr<const cuda::KernelImage>> images_;
  std::string unimplemented_reason_;
  int64_t time_ = 0;
};

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
