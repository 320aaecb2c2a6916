// The program builder's walk over a module: parameters, the schedule,
// structural ops and the per-op choice (see program_builder.h). Control
// flow is in control_flow.cc, updates in place in in_place_updates.cc,
// input_output_alias in output_aliasing.cc.
#include "backend/common/program_builder.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "backend/common/collective_lowering.h"
#include "backend/common/elementwise_operands.h"
#include "backend/common/literal_leaves.h"
#include "backend/common/op_lowering.h"
#include "backend/llvm/array_leaves.h"
#include "hlo/live_instructions.h"
#include "hlo/outline.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace backend {
namespace {

using runtime::BufferSpec;


}  // namespace

bool IsAnnotationCustomCall(const HloInstruction& hlo) {
  static constexpr absl::string_view kAnnotations[] = {
      "Sharding",         "SPMDFullToShardShape",      "SPMDShardToFullShape",
      "MoveToHost",       "MoveToDevice",              "annotate_device_placement",
  };
  const std::string& target = hlo.attrs().custom_call_target;
  return hlo.opcode() == HloOpcode::kCustomCall && hlo.operand_count() == 1 &&
         hlo.shape() == hlo.operand(0)->shape() &&
         std::find(std::begin(kAnnotations), std::end(kAnnotations), target) !=
             std::end(kAnnotations);
}

absl::Status InstructionError(const HloInstruction& hlo, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("instruction %", hlo.name(), " (", HloOpcodeName(hlo.opcode()), "): ", message));
}

absl::StatusOr<BuiltProgram> ProgramBuilder::Build(const HloModule& module) {
  const HloComputation* entry = module.entry();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  // Buffers are static: a bounded dynamic shape must have gone through
  // DynamicPadder (passes/dynamic_padder.h) first, never run at its bound.
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* i : computation->instructions()) {
      if (!i->shape().is_static() || i->opcode() == HloOpcode::kSetDimensionSize ||
          i->opcode() == HloOpcode::kGetDimensionSize) {
        return absl::UnimplementedError(absl::StrCat(
            "instruction %", i->name(), " (", HloOpcodeName(i->opcode()),
            "): dynamic shapes need the dynamic-padder pass before a compiled backend (shape ",
            i->shape().ToString(false), ")"));
      }
    }
  }
  BuiltProgram program;
  mesh_ = DeviceMesh::Of(module.config());
  int64_t parameter_leaf = 0;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const HloInstruction* parameter = entry->parameter(i);
    if (parameter == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("entry lacks parameter ", i));
    }
    program.parameter_shapes.push_back(parameter->shape());
    std::vector<BufferId> ids;
    for (const ArrayLeaf& leaf : ArrayLeaves(parameter->shape())) {
      BufferSpec spec;
      spec.kind = BufferSpec::Kind::kParameter;
      spec.parameter = parameter_leaf++;
      spec.size = LeafBytes(*leaf.shape);
      spec.name = absl::StrCat("%", parameter->name());
      ids.push_back(buffers_.Add(std::move(spec)));
    }
    buffers_.Bind(parameter, std::move(ids));
  }
  program.thunks = target_.NewThunkList();
  HLOC_RETURN_IF_ERROR(EmitComputation(*entry, program.thunks.get()));
  buffers_.Advance();
  program.outputs = buffers_.LeavesOf(entry->root());
  for (BufferId id : program.outputs) {
    buffers_.Use(id);
    // Computed straight into the caller's result when nothing else needs it.
    BufferSpec& spec = buffers_.mutable_spec(id);
    if (spec.kind == BufferSpec::Kind::kTemp) spec.is_output = true;
  }
  const BufferSharing::Decisions shared =
      buffers_.sharing().Resolve(&buffers_.specs(), AliasedOutputs(module, program.outputs));
  report_.updates_in_place = shared.updates;
  report_.loop_states_reused = shared.loop_inits;
  report_.loop_results_in_place = shared.loop_results;
  report_.elementwise_in_place = shared.elementwise;
  report_.shared_bytes = shared.shared_bytes;
  HLOC_RETURN_IF_ERROR(AliasOutputsWithParameters(module, &program));
  program.result_shape = StaticBounds(entry->root()->shape());
  program.buffers = std::move(buffers_.specs());
  return program;
}

absl::Status ProgramBuilder::EmitComputation(const HloComputation& computation, ThunkList* out) {
  const absl::flat_hash_set<const HloInstruction*> live = LiveFromRoot(computation);
  for (const HloInstruction* hlo : computation.MakeInstructionPostOrder()) {
    if (!live.contains(hlo)) continue;
    buffers_.Advance();
    HLOC_RETURN_IF_ERROR(EmitInstruction(*hlo, out));
  }
  if (!buffers_.IsBound(computation.root())) {
    return absl::InternalError(absl::StrCat("root of ", computation.name(), " was not emitted"));
  }
  return absl::OkStatus();
}

absl::Status ProgramBuilder::EmitInstruction(const HloInstruction& hlo, ThunkList* out) {
  HLOC_ASSIGN_OR_RETURN(bool structural, EmitStructural(hlo, out));
  if (structural) return absl::OkStatus();
  switch (hlo.opcode()) {
    case HloOpcode::kWhile:
      return EmitWhile(hlo, out);
    case HloOpcode::kConditional:
      return EmitConditional(hlo, out);
    case HloOpcode::kCall: {
      // A library call where the target has one; the body otherwise (and
      // for plain calls).
      if (hlo.is_composite()) {
        HLOC_ASSIGN_OR_RETURN(bool done, target_.EmitLibraryCall(*this, hlo, out));
        if (done) return absl::OkStatus();
      }
      return EmitInline(*hlo.to_apply(), hlo, out);
    }
    case HloOpcode::kFusion: {
      HLOC_ASSIGN_OR_RETURN(bool compiled, EmitKernel(hlo, *hlo.fused_computation(), out));
      if (compiled) {
        ++report_.fused_kernels;
        return absl::OkStatus();
      }
      // No fused kernel: run the fused computation op by op.
      ++report_.unfused_fusions;
      return EmitInline(*hlo.fused_computation(), hlo, out);
    }
    default:
      return EmitOp(hlo, out);
  }
}

absl::StatusOr<bool> ProgramBuilder::EmitStructural(const HloInstruction& hlo, ThunkList* out) {
  switch (hlo.opcode()) {
    case HloOpcode::kParameter:
      if (!buffers_.IsBound(&hlo)) return InstructionError(hlo, "parameter not bound");
      return true;
    case HloOpcode::kConstant:
      buffers_.Bind(&hlo, buffers_.NewConstants(hlo));
      return true;
    case HloOpcode::kTuple:
      buffers_.Bind(&hlo, buffers_.OperandLeaves(hlo));
      return true;
    case HloOpcode::kGetTupleElement: {
      const Shape& tuple = hlo.operand(0)->shape();
      const int64_t index = hlo.tuple_index();
      if (!tuple.IsTuple() || index < 0 || index >= tuple.tuple_shapes_size()) {
        return InstructionError(hlo, "tuple index out of range");
      }
      size_t first = 0;
      for (int64_t i = 0; i < index; ++i) first += ArrayLeaves(tuple.tuple_shapes(i)).size();
      const size_t count = ArrayLeaves(tuple.tuple_shapes(index)).size();
      const std::vector<BufferId>& all = buffers_.LeavesOf(hlo.operand(0));
      if (first + count > all.size()) return InstructionError(hlo, "tuple leaves missing");
      buffers_.Bind(&hlo, std::vector<BufferId>(all.begin() + first, all.begin() + first + count));
      return true;
    }
    case HloOpcode::kBitcast:
    case HloOpcode::kReshape:
      // Row-major data reinterpreted in place; a bitcast whose layouts move
      // elements is a kernel (the elemental emitter reads through them).
      if (hlo.shape().IsArray() && hlo.operand(0)->shape().IsArray() &&
          LeafBytes(hlo.shape()) == LeafBytes(hlo.operand(0)->shape()) &&
          (hlo.opcode() == HloOpcode::kReshape ||
           BitcastIsRowMajorReshape(hlo.operand(0)->shape(), hlo.shape()))) {
        buffers_.Bind(&hlo, buffers_.LeavesOf(hlo.operand(0)));
        return true;
      }
      return false;
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
    case HloOpcode::kAddDependency:
    case HloOpcode::kAllReduceDone:  // all-reduce-start ran synchronously: its value.
      buffers_.Bind(&hlo, buffers_.LeavesOf(hlo.operand(0)));
      return true;
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone: {
      // The -start ran synchronously: its results element.
      const Shape& start = hlo.operand(0)->shape();
      if (!start.IsTuple() || start.tuple_shapes_size() < 2) {
        return InstructionError(hlo, "operand is not the tuple of a -start");
      }
      const size_t first = ArrayLeaves(start.tuple_shapes(0)).size();
      const size_t count = ArrayLeaves(start.tuple_shapes(1)).size();
      const std::vector<BufferId>& all = buffers_.LeavesOf(hlo.operand(0));
      if (first + count > all.size()) return InstructionError(hlo, "-start leaves missing");
      buffers_.Bind(&hlo, std::vector<BufferId>(all.begin() + first, all.begin() + first + count));
      return true;
    }
    case HloOpcode::kCustomCall:
      // Annotations a single-device program runs as their operand.
      if (IsAnnotationCustomCall(hlo)) {
        buffers_.Bind(&hlo, buffers_.LeavesOf(hlo.operand(0)));
        return true;
      }
      return false;
    case HloOpcode::kAfterAll:
      buffers_.Bind(&hlo, {});
      return true;
    case HloOpcode::kCopy: {
      const std::vector<BufferId> sources = buffers_.UseOperands(hlo);
      std::vector<BufferId> ids = buffers_.NewTemps(hlo);
      for (size_t i = 0; i < ids.size() && i < sources.size(); ++i) {
        target_.EmitCopy(sources[i], ids[i], buffers_.size(ids[i]), out);
      }
      buffers_.Bind(&hlo, std::move(ids));
      return true;
    }
    default:
      return false;
  }
}

absl::Status ProgramBuilder::EmitOp(const HloInstruction& hlo, ThunkList* out) {
  const OpLowering lowering = LowerOp(hlo, target_.target());
  if (!lowering.supported) {
    return absl::UnimplementedError(absl::StrCat(
        "instruction %", hlo.name(), " (", HloOpcodeName(hlo.opcode()), ") ", lowering.reason));
  }
  if (lowering.collective) {
    HLOC_ASSIGN_OR_RETURN(runtime::CollectiveSpec spec, DecodeCollective(hlo, mesh_));
    HLOC_ASSIGN_OR_RETURN(bool done, target_.EmitCollective(*this, hlo, std::move(spec), out));
    if (!done) {
      return absl::UnimplementedError(absl::StrCat("instruction %", hlo.name(), " (",
                                                   HloOpcodeName(hlo.opcode()), ") has no ",
                                                   TargetName(target_.target()),
                                                   " communicator thunk"));
    }
    ++report_.collectives;
    return absl::OkStatus();
  }
  if (lowering.library) {
    HLOC_ASSIGN_OR_RETURN(bool done, target_.EmitLibraryCall(*this, hlo, out));
    if (done) return absl::OkStatus();
  }
  std::string reason = lowering.reason;
  if (lowering.kernel) {
    std::unique_ptr<HloComputation> wrapper = WrapInstruction(hlo);
    HLOC_ASSIGN_OR_RETURN(bool compiled, EmitKernel(hlo, *wrapper, out));
    if (compiled) return absl::OkStatus();
    reason = kernel_refusal_;
  }
  if (reason.empty()) {
    reason = absl::StrCat("no ", TargetName(target_.target()), " kernel or library routine");
  }
  return EmitInterpreterOp(hlo, reason, out);
}

absl::StatusOr<bool> ProgramBuilder::EmitKernel(const HloInstruction& hlo,
                                                const HloComputation& computation, ThunkList* out) {
  if (options_.update_in_place) {
    HLOC_ASSIGN_OR_RETURN(bool updated, EmitUpdateInPlace(hlo, computation, out));
    if (updated) return true;
  }
  std::vector<BufferId> results;
  const KernelBinder bind = [&]() -> absl::StatusOr<std::vector<BufferId>> {
    std::vector<BufferId> buffers = buffers_.UseOperands(hlo);
    results = buffers_.NewTemps(hlo);
    buffers.insert(buffers.end(), results.begin(), results.end());
    return buffers;
  };
  HLOC_ASSIGN_OR_RETURN(
      KernelEmission emission,
      target_.EmitKernel(*this, hlo, computation, KernelVariant::kWhole, bind, out));
  if (!emission.emitted) {
    kernel_refusal_ = emission.refusal;
    return false;
  }
  NoteElementwiseOperands(hlo, computation, results, emission.outputs_in_elementwise_operands);
  buffers_.Bind(&hlo, std::move(results));
  RecordKernel(emission);
  return true;
}

// Operands the kernel reads only where it writes one of its results:
// candidates for holding that result, as a donated entry parameter
// (output_aliasing.cc) or a loop state leaf (BufferSharing, kLoopResult).
// Single-output kernels name their entry parameters on every target; other
// operands and results only where the target vouches for its kernel
// (KernelEmission::outputs_in_elementwise_operands).
void ProgramBuilder::NoteElementwiseOperands(const HloInstruction& hlo,
                                             const HloComputation& computation,
                                             const std::vector<BufferId>& results,
                                             bool any_operand_and_result) {
  if (computation.num_parameters() != hlo.operand_count()) return;
  if (results.size() != 1 && !any_operand_and_result) return;
  std::vector<BufferId> operands;
  for (const HloInstruction* operand : hlo.operands()) {
    const std::vector<BufferId>& leaves = buffers_.LeavesOf(operand);
    operands.push_back(leaves.size() == 1 ? leaves[0] : -1);
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    const BufferId buffer = operands[i];
    if (buffer < 0 ||
        std::find(operands.begin(), operands.begin() + i, buffer) != operands.begin() + i) {
      continue;
    }
    const runtime::BufferSpec::Kind kind = buffers_.spec(buffer).kind;
    const bool parameter = kind == runtime::BufferSpec::Kind::kParameter;
    if (!parameter && !(kind == runtime::BufferSpec::Kind::kTemp && any_operand_and_result)) {
      continue;
    }
    for (size_t output = 0; output < results.size(); ++output) {
      // Every operand position naming the buffer is read at this output's
      // index only.
      bool elementwise = true;
      for (size_t j = i; j < operands.size() && elementwise; ++j) {
        if (operands[j] == buffer) {
          elementwise = ReadOnlyAtOutputIndex(computation, static_cast<int64_t>(j),
                                              static_cast<int64_t>(output));
        }
      }
      if (elementwise) {
        buffers_.sharing().AddCandidate(BufferSharing::Kind::kElementwise, buffer,
                                        results[output], buffers_.step());
      }
    }
  }
}

void ProgramBuilder::RecordKernel(const KernelEmission& emission) {
  report_.kernels += static_cast<int64_t>(emission.strategies.size());
  report_.strategies.insert(report_.strategies.end(), emission.strategies.begin(),
                            emission.strategies.end());
}

std::vector<BufferId> ProgramBuilder::BindCall(const HloInstruction& hlo) {
  std::vector<BufferId> buffers = buffers_.UseOperands(hlo);
  std::vector<BufferId> results = buffers_.NewTemps(hlo);
  buffers.insert(buffers.end(), results.begin(), results.end());
  buffers_.Bind(&hlo, std::move(results));
  return buffers;
}

std::vector<BufferId> ProgramBuilder::BindCollective(const HloInstruction& hlo) {
  if (hlo.opcode() != HloOpcode::kAllGatherStart &&
      hlo.opcode() != HloOpcode::kCollectivePermuteStart) {
    return BindCall(hlo);
  }
  std::vector<BufferId> buffers = buffers_.UseOperands(hlo);
  std::vector<BufferId> leaves = buffers_.NewTemps(hlo);
  const size_t first = ArrayLeaves(hlo.shape().tuple_shapes(0)).size();
  const size_t count = ArrayLeaves(hlo.shape().tuple_shapes(1)).size();
  buffers.insert(buffers.end(), leaves.begin() + first, leaves.begin() + first + count);
  buffers_.Bind(&hlo, std::move(leaves));
  return buffers;
}

absl::Status ProgramBuilder::EmitInterpreterOp(const HloInstruction& hlo, absl::string_view reason,
                                               ThunkList* out) {
  const std::string what = absl::StrCat("%", hlo.name(), " (", HloOpcodeName(hlo.opcode()), ")");
  if (!options_.interpreter) {
    return absl::UnimplementedError(absl::StrCat("instruction ", what, " has no ",
                                                 TargetName(target_.target()), " kernel (", reason,
                                                 ") and no interpreter was given"));
  }
  HLOC_ASSIGN_OR_RETURN(runtime::HostFunction function,
                        MakeInterpreterFunction(hlo, options_.interpreter));
  std::vector<BufferId> inputs = buffers_.UseOperands(hlo);
  std::vector<BufferId> outputs = buffers_.NewTemps(hlo);
  buffers_.Bind(&hlo, outputs);
  target_.EmitInterpreterOp(*this, absl::StrCat("%", hlo.name()), std::string(reason),
                            std::move(function), std::move(inputs), std::move(outputs), out);
  ++report_.interpreter_calls;
  report_.interpreter_ops.push_back(absl::StrCat(what, " runs in the interpreter: ", reason));
  report_.interpreter_opcodes.emplace_back(HloOpcodeName(hlo.opcode()), hlo.name());
  return absl::OkStatus();
}

}  // namespace backend
}  // namespace hloc
