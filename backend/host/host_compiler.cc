// HloModule -> runtime::Executable for the host (see host_compiler.h).
//
// Buffers. Every array leaf of every value gets a buffer id. Instructions
// that only regroup or reinterpret data (tuple, get-tuple-element, bitcast,
// reshape, optimization barriers, call results) reuse their operands' ids;
// the rest define new temporaries. Steps number the instructions in
// schedule order, nested computations included at the point of the
// instruction that runs them; a temporary is live from the step that
// defines it to the last step that uses it, and a while loop's state stays
// live to the end of the loop, since every iteration reads it again.
//
// While loops copy the initial value into fresh state buffers, run the
// condition and body with their parameters bound to that state, and copy the
// body's result back (through temporaries when one result leaf is another
// leaf's state, so no copy overwrites a value still to be read).
// Conditionals copy the chosen branch's result into the conditional's own
// buffers.
//
// In place (HostCompileOptions::update_in_place). A dynamic-update-slice of
// a buffer (a plain op, or a fusion whose root updates a parameter nothing
// else in it reads) becomes a copy of that buffer into the result and a
// kernel writing only the update. When the old value is dead after that step
// (buffer_sharing.h says when), the result shares the operand's bytes and the
// copy does nothing: a scan's carried array is updated one row at a time. A
// while loop's state shares its initial value's bytes in the same way, so
// the loop starts without copying it.
//
// Running the compiled program (HostProgram::Execute*) is in host_program.cc.
#include "backend/host/host_compiler.h"

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/host/buffer_sharing.h"
#include "backend/host/host_compiler_internal.h"
#include "backend/host/library_calls.h"
#include "backend/host/onednn_library.h"
#include "hlo/shape_util.h"
#include "hlo/outline.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace host {
namespace {

using host_compiler_internal::CollectLiteralLeaves;
using host_compiler_internal::CollectMutableLeaves;
using runtime::BufferId;
using runtime::BufferSpec;
using runtime::ThunkSequence;

int64_t LeafBytes(const Shape& shape) {
  int64_t n = ByteWidth(shape.element_type());
  for (int64_t d : shape.dimensions()) n *= d;
  return n;
}

// A literal of `shape` whose array leaves are copied from buffers[*next...].
Literal LiteralFromBuffers(const Shape& shape, absl::Span<void* const> buffers, size_t* next) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& element : shape.tuple_shapes()) {
      elements.push_back(LiteralFromBuffers(element, buffers, next));
    }
    return Literal::Tuple(std::move(elements));
  }
  Literal literal(shape);
  if (shape.IsArray()) {
    if (literal.size_bytes() > 0) std::memcpy(literal.mutable_raw(), buffers[*next], literal.size_bytes());
    ++*next;
  }
  return literal;
}

absl::Status InstructionError(const HloInstruction& hlo, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("instruction %", hlo.name(), " (",
                                                 HloOpcodeName(hlo.opcode()), "): ", message));
}


// Instructions the root reaches through operands and control edges.
absl::flat_hash_set<const HloInstruction*> LiveInstructions(const HloComputation& computation) {
  absl::flat_hash_set<const HloInstruction*> live;
  if (computation.root() == nullptr) return live;
  std::vector<const HloInstruction*> stack = {computation.root()};
  live.insert(computation.root());
  while (!stack.empty()) {
    const HloInstruction* hlo = stack.back();
    stack.pop_back();
    for (const HloInstruction* operand : hlo->operands()) {
      if (live.insert(operand).second) stack.push_back(operand);
    }
    for (const HloInstruction* predecessor : hlo->control_predecessors()) {
      if (live.insert(predecessor).second) stack.push_back(predecessor);
    }
  }
  return live;
}

bool IsUnsupportedSideEffect(HloOpcode op) {
  return IsAsyncOrCommunication(op) || op == HloOpcode::kRngGetAndUpdateState;
}

}  // namespace

std::string HostCompileReport::ToString() const {
  std::string out = absl::StrCat(kernels, " kernels (", fused_kernels, " fused), ",
                                 unfused_fusions, " fusions split, ", library_calls,
                                 " library calls, ", interpreter_calls, " interpreter calls\n");
  for (const std::string& s : strategies) absl::StrAppend(&out, "  kernel ", s, "\n");
  for (const std::string& s : fallback_ops) absl::StrAppend(&out, "  fallback ", s, "\n");
  for (const std::string& s : onednn_calls) absl::StrAppend(&out, "  onednn ", s, "\n");
  for (const std::string& s : library_refusals) absl::StrAppend(&out, "  not onednn ", s, "\n");
  for (const std::string& s : aliased_outputs) absl::StrAppend(&out, "  aliased ", s, "\n");
  for (const std::string& s : alias_refusals) absl::StrAppend(&out, "  not aliased ", s, "\n");
  if (update_kernels > 0 || loop_states_reused > 0) {
    absl::StrAppend(&out, "  in place: ", updates_in_place, " of ", update_kernels,
                    " update kernels, ", loop_states_reused, " loop states (", shared_bytes,
                    " B shared)\n");
  }
  return out;
}

class HostCompilation {
 public:
  HostCompilation(const HostCompileOptions& options, HostProgram* program)
      : options_(options), program_(program) {}

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
    runtime::ProgramSpec spec;
    HLOC_RETURN_IF_ERROR(EmitComputation(*entry, &spec.thunks));
    ++time_;
    const std::vector<BufferId>& outputs = leaves_.at(entry->root());
    for (BufferId id : outputs) {
      Use(id);
      // Computed straight into the caller's result when nothing else needs it.
      if (buffers_[id].kind == BufferSpec::Kind::kTemp) buffers_[id].is_output = true;
    }
    const BufferSharing::Decisions shared = sharing_.Resolve(&buffers_);
    program_->report_.updates_in_place = shared.updates;
    program_->report_.loop_states_reused = shared.loop_inits;
    program_->report_.shared_bytes = shared.shared_bytes;
    HLOC_RETURN_IF_ERROR(AliasOutputsWithParameters(*entry, outputs, &spec));
    // A bounded dynamic result comes back at its bounds, as the interpreter's.
    program_->result_shape_ = StaticBounds(entry->root()->shape());
    spec.outputs = outputs;
    spec.buffers = std::move(buffers_);
    spec.code_owner = program_->compiler_;
    HLOC_ASSIGN_OR_RETURN(program_->executable_, runtime::Executable::Create(std::move(spec)));
    return absl::OkStatus();
  }

 private:
  // The module's input_output_alias pairs that hold up: output leaf j may be
  // computed in the memory of a donated parameter (HostProgram::
  // ExecuteDonating). The others are listed in the report and run without
  // sharing memory.
  absl::Status AliasOutputsWithParameters(const HloComputation& entry,
                                          const std::vector<BufferId>& outputs,
                                          runtime::ProgramSpec* spec) {
    const std::vector<ArrayLeaf> output_leaves = ArrayLeaves(entry.root()->shape());
    std::vector<bool> output_taken(outputs.size(), false);
    std::vector<BufferId> parameters_taken;
    for (const auto& alias : program_->module_->config().input_output_alias.entries()) {
      const ShapeIndex output_index(alias.output_shape_index().begin(),
                                    alias.output_shape_index().end());
      const ShapeIndex parameter_index(alias.parameter_shape_index().begin(),
                                       alias.parameter_shape_index().end());
      const std::string what =
          absl::StrCat("output {", absl::StrJoin(output_index, ","), "} / parameter ",
                       alias.parameter_number(), " {", absl::StrJoin(parameter_index, ","), "}");
      auto j = std::find_if(output_leaves.begin(), output_leaves.end(),
                            [&](const ArrayLeaf& leaf) { return leaf.index == output_index; });
      if (j == output_leaves.end() || output_leaves.size() != outputs.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input_output_alias ", what, ": no such array in the entry's result"));
      }
      const int64_t number = alias.parameter_number();
      if (number < 0 || number >= entry.num_parameters()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input_output_alias ", what, ": no such parameter"));
      }
      const std::vector<ArrayLeaf> parameter_leaves = ArrayLeaves(entry.parameter(number)->shape());
      auto p = std::find_if(parameter_leaves.begin(), parameter_leaves.end(),
                            [&](const ArrayLeaf& leaf) { return leaf.index == parameter_index; });
      if (p == parameter_leaves.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input_output_alias ", what, ": no such array in the parameter"));
      }
      if (!j->shape->Compatible(*p->shape)) {
        return absl::InvalidArgumentError(
            absl::StrCat("input_output_alias ", what, ": the arrays differ in shape"));
      }
      const size_t output = j - output_leaves.begin();
      const BufferId parameter =
          leaves_.at(entry.parameter(number)).at(p - parameter_leaves.begin());
      std::string refusal;
      if (output_taken[output] ||
          std::count(parameters_taken.begin(), parameters_taken.end(), parameter) > 0) {
        refusal = "aliased twice";
      } else if (!sharing_.OutputMayReuseParameter(buffers_, outputs, outputs[output], parameter)) {
        refusal = "the output is written before the parameter's last read";
      }
      if (!refusal.empty()) {
        program_->report_.alias_refusals.push_back(absl::StrCat(what, ": ", refusal));
        continue;
      }
      output_taken[output] = true;
      parameters_taken.push_back(parameter);
      spec->output_parameter_aliases.push_back(
          {static_cast<int64_t>(output), buffers_[parameter].parameter});
      program_->report_.aliased_outputs.push_back(what);
    }
    return absl::OkStatus();
  }

  BufferId AddBuffer(BufferSpec spec) {
    buffers_.push_back(std::move(spec));
    return static_cast<BufferId>(buffers_.size() - 1);
  }
  BufferId NewTemp(const Shape& shape, std::string name) {
    BufferSpec spec;
    spec.kind = BufferSpec::Kind::kTemp;
    spec.size = LeafBytes(shape);
    spec.live = {spec.size, time_, time_};
    spec.name = std::move(name);
    return AddBuffer(std::move(spec));
  }
  std::vector<BufferId> NewTemps(const HloInstruction& hlo) {
    std::vector<BufferId> ids;
    for (const ArrayLeaf& leaf : ArrayLeaves(hlo.shape())) {
      std::string name = absl::StrCat("%", hlo.name());
      if (!leaf.index.empty()) absl::StrAppend(&name, "{", absl::StrJoin(leaf.index, ","), "}");
      ids.push_back(NewTemp(*leaf.shape, std::move(name)));
    }
    return ids;
  }
  // `id` is read at this step.
  void Use(BufferId id) {
    KeepLive(id);
    sharing_.Read(id, time_);
  }
  // `id` keeps its bytes to this step (a loop state, a conditional's result).
  void KeepLive(BufferId id) {
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

  absl::Status EmitComputation(const HloComputation& computation, ThunkSequence* out) {
    // Only what the root needs runs, as in the interpreter: a dead op (say a
    // custom call nothing reads) must neither run nor fail.
    const absl::flat_hash_set<const HloInstruction*> live = LiveInstructions(computation);
    for (const HloInstruction* hlo : computation.MakeInstructionPostOrder()) {
      if (!live.contains(hlo)) continue;
      ++time_;
      HLOC_RETURN_IF_ERROR(EmitInstruction(*hlo, out));
    }
    if (!leaves_.contains(computation.root())) {
      return absl::InternalError(absl::StrCat("root of ", computation.name(), " was not emitted"));
    }
    return absl::OkStatus();
  }

  absl::Status EmitInstruction(const HloInstruction& hlo, ThunkSequence* out) {
    switch (hlo.opcode()) {
      case HloOpcode::kParameter:
        if (!leaves_.contains(&hlo)) return InstructionError(hlo, "parameter not bound");
        return absl::OkStatus();
      case HloOpcode::kConstant: {
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
        leaves_[&hlo] = std::move(ids);
        return absl::OkStatus();
      }
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
        leaves_[&hlo] = std::vector<BufferId>(all.begin() + first, all.begin() + first + count);
        return absl::OkStatus();
      }
      case HloOpcode::kBitcast:
      case HloOpcode::kReshape:
        // Row-major data reinterpreted in place.
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
          out->push_back(std::make_unique<runtime::CopyThunk>(sources[i], ids[i], buffers_[ids[i]].size));
        }
        leaves_[&hlo] = std::move(ids);
        return absl::OkStatus();
      }
      case HloOpcode::kWhile: return EmitWhile(hlo, out);
      case HloOpcode::kConditional: return EmitConditional(hlo, out);
      case HloOpcode::kCall: {
        // A named library call the host implements runs as one; the others
        // (and refused variants) run their bodies.
        if (hlo.is_composite()) {
          HLOC_ASSIGN_OR_RETURN(bool done, EmitOneDnnCall(hlo, out));
          if (done) return absl::OkStatus();
        }
        return EmitInline(*hlo.to_apply(), hlo, out);
      }
      case HloOpcode::kFusion: {
        HLOC_ASSIGN_OR_RETURN(bool compiled, EmitKernel(hlo, *hlo.fused_computation(), out));
        if (compiled) {
          ++program_->report_.fused_kernels;
          return absl::OkStatus();
        }
        // No fused kernel: run the fused computation op by op.
        ++program_->report_.unfused_fusions;
        return EmitInline(*hlo.fused_computation(), hlo, out);
      }
      default:
        break;
    }
    if (IsUnsupportedSideEffect(hlo.opcode())) {
      return absl::UnimplementedError(absl::StrCat("instruction %", hlo.name(), " (",
                                                   HloOpcodeName(hlo.opcode()),
                                                   ") is not supported on the host"));
    }
    if (hlo.opcode() == HloOpcode::kDot || hlo.opcode() == HloOpcode::kConvolution) {
      HLOC_ASSIGN_OR_RETURN(bool done, EmitOneDnnCall(hlo, out));
      if (done) return absl::OkStatus();
    }
    HLOC_ASSIGN_OR_RETURN(std::optional<runtime::LibraryCallThunk::Function> library,
                          MakeLibraryCall(hlo, *program_->compiler_));
    if (library.has_value()) return EmitLibraryCall(hlo, *std::move(library), out);
    if (hlo.opcode() != HloOpcode::kCustomCall && hlo.opcode() != HloOpcode::kRng &&
        hlo.opcode() != HloOpcode::kRngBitGenerator && hlo.opcode() != HloOpcode::kSort &&
        hlo.opcode() != HloOpcode::kTopK && hlo.opcode() != HloOpcode::kScatter) {
      std::unique_ptr<HloComputation> wrapper = WrapInstruction(hlo);
      HLOC_ASSIGN_OR_RETURN(bool compiled, EmitKernel(hlo, *wrapper, out));
      if (compiled) return absl::OkStatus();
    }
    return EmitFallback(hlo, out);
  }

  // A kernel for `computation` applied to `hlo`'s operands, defining `hlo`'s
  // leaves. False when the kernel emitters do not cover the computation.
  absl::StatusOr<bool> EmitKernel(const HloInstruction& hlo, const HloComputation& computation,
                                  ThunkSequence* out) {
    if (options_.update_in_place) {
      HLOC_ASSIGN_OR_RETURN(bool updated, EmitUpdateInPlace(hlo, computation, out));
      if (updated) return true;
    }
    absl::StatusOr<CompiledKernel> kernel = program_->compiler_->Compile(computation);
    if (!kernel.ok()) {
      if (kernel.status().code() == absl::StatusCode::kUnimplemented) return false;
      return kernel.status();
    }
    std::vector<BufferId> args = OperandLeaves(hlo);
    for (BufferId id : args) Use(id);
    std::vector<BufferId> results = NewTemps(hlo);
    args.insert(args.end(), results.begin(), results.end());
    if (static_cast<int64_t>(args.size()) != kernel->num_buffers) {
      return InstructionError(hlo, absl::StrCat("kernel takes ", kernel->num_buffers,
                                                " buffers, the instruction has ", args.size()));
    }
    out->push_back(std::make_unique<runtime::KernelThunk>(absl::StrCat("%", hlo.name()),
                                                          kernel->function, std::move(args),
                                                          kernel->work_items,
                                                          kernel->cost_per_item));
    leaves_[&hlo] = std::move(results);
    ++program_->report_.kernels;
    program_->report_.strategies.push_back(absl::StrCat("%", hlo.name(), ": ", kernel->strategy));
    return true;
  }

  // A dynamic-update-slice of `hlo`'s operand p (UpdateInPlaceParameter):
  // copy that operand's buffer into the result (nothing, once the result
  // shares its bytes) and write the update. False when it does not apply.
  absl::StatusOr<bool> EmitUpdateInPlace(const HloInstruction& hlo,
                                         const HloComputation& computation, ThunkSequence* out) {
    const int64_t p = UpdateInPlaceParameter(computation);
    if (p < 0 || p >= hlo.operand_count() || computation.num_parameters() != hlo.operand_count() ||
        !hlo.shape().IsArray()) {
      return false;
    }
    const std::vector<BufferId>& target = leaves_.at(hlo.operand(p));
    std::vector<BufferId> args = OperandLeaves(hlo);
    // The kernel does not read the target, so no other input may be it.
    if (target.size() != 1 || std::count(args.begin(), args.end(), target[0]) != 1) return false;
    absl::StatusOr<CompiledKernel> kernel =
        program_->compiler_->Compile(computation, KernelVariant::kUpdateInPlace);
    if (!kernel.ok()) {
      if (kernel.status().code() == absl::StatusCode::kUnimplemented) return false;
      return kernel.status();
    }
    for (BufferId id : args) Use(id);
    const BufferId result = NewTemps(hlo).at(0);
    if (buffers_[result].size != buffers_[target[0]].size) {
      return InstructionError(hlo, "updated operand and result differ in size");
    }
    args.push_back(result);
    if (static_cast<int64_t>(args.size()) != kernel->num_buffers) {
      return InstructionError(hlo, absl::StrCat("kernel takes ", kernel->num_buffers,
                                                " buffers, the instruction has ", args.size()));
    }
    out->push_back(
        std::make_unique<runtime::CopyThunk>(target[0], result, buffers_[result].size));
    out->push_back(std::make_unique<runtime::KernelThunk>(absl::StrCat("%", hlo.name()),
                                                          kernel->function, std::move(args),
                                                          kernel->work_items,
                                                          kernel->cost_per_item));
    sharing_.AddCandidate(BufferSharing::Kind::kUpdate, target[0], result, time_);
    leaves_[&hlo] = {result};
    ++program_->report_.kernels;
    ++program_->report_.update_kernels;
    program_->report_.strategies.push_back(absl::StrCat("%", hlo.name(), ": ", kernel->strategy));
    return true;
  }

  // Runs `computation` with its parameters bound to `caller`'s operands;
  // `caller` takes the root's leaves.
  absl::Status EmitInline(const HloComputation& computation, const HloInstruction& caller,
                          ThunkSequence* out) {
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

  absl::Status EmitWhile(const HloInstruction& hlo, ThunkSequence* out) {
    const HloComputation* condition = hlo.while_condition();
    const HloComputation* body = hlo.while_body();
    if (condition == nullptr || body == nullptr) return InstructionError(hlo, "missing computations");
    const std::vector<BufferId> init = leaves_.at(hlo.operand(0));
    for (BufferId id : init) Use(id);
    std::vector<BufferId> state = NewTemps(hlo);
    if (state.size() != init.size()) return InstructionError(hlo, "state and init differ");
    for (size_t i = 0; i < state.size(); ++i) {
      out->push_back(std::make_unique<runtime::CopyThunk>(init[i], state[i], buffers_[state[i]].size));
      // The state may take over an initial value read nowhere else.
      if (options_.update_in_place && std::count(init.begin(), init.end(), init[i]) == 1) {
        sharing_.AddCandidate(BufferSharing::Kind::kLoopInit, init[i], state[i], time_);
      }
    }
    const int loop = sharing_.BeginLoop(time_ + 1);
    ThunkSequence condition_thunks, body_thunks;
    leaves_[condition->parameter(0)] = state;
    sharing_.EnterCondition(loop);
    HLOC_RETURN_IF_ERROR(EmitComputation(*condition, &condition_thunks));
    sharing_.Exit();
    const std::vector<BufferId>& predicate = leaves_.at(condition->root());
    if (predicate.size() != 1) return InstructionError(hlo, "condition does not return a pred");
    const BufferId predicate_id = predicate[0];
    Use(predicate_id);  // The loop reads it after the condition.
    leaves_[body->parameter(0)] = state;
    sharing_.EnterBody(loop);
    HLOC_RETURN_IF_ERROR(EmitComputation(*body, &body_thunks));
    sharing_.Exit();
    ++time_;
    const std::vector<BufferId> result = leaves_.at(body->root());
    if (result.size() != state.size()) return InstructionError(hlo, "body result and state differ");
    std::vector<BufferId> sources = result;
    for (size_t i = 0; i < result.size(); ++i) {
      Use(result[i]);
      const bool is_other_state = result[i] != state[i] &&
                                  std::find(state.begin(), state.end(), result[i]) != state.end();
      if (is_other_state) {
        sources[i] = NewTemp(hlo.shape().IsTuple() ? *ArrayLeaves(hlo.shape())[i].shape : hlo.shape(),
                             absl::StrCat("%", hlo.name(), ".swap"));
        body_thunks.push_back(
            std::make_unique<runtime::CopyThunk>(result[i], sources[i], buffers_[sources[i]].size));
      }
    }
    ++time_;
    for (size_t i = 0; i < result.size(); ++i) {
      Use(sources[i]);
      if (sources[i] != state[i]) {
        body_thunks.push_back(
            std::make_unique<runtime::CopyThunk>(sources[i], state[i], buffers_[state[i]].size));
      }
    }
    ++time_;
    for (BufferId id : state) KeepLive(id);
    sharing_.EndLoop(loop, time_, state, result);
    out->push_back(std::make_unique<runtime::WhileThunk>(absl::StrCat("%", hlo.name()),
                                                         std::move(condition_thunks), predicate_id,
                                                         std::move(body_thunks)));
    leaves_[&hlo] = std::move(state);
    return absl::OkStatus();
  }

  absl::Status EmitConditional(const HloInstruction& hlo, ThunkSequence* out) {
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
      sharing_.EnterBranch();
      HLOC_RETURN_IF_ERROR(EmitComputation(*branch, &branch_thunks[b]));
      ++time_;
      const std::vector<BufferId> root = leaves_.at(branch->root());
      if (root.size() != results.size()) return InstructionError(hlo, "branch result shape");
      for (size_t i = 0; i < root.size(); ++i) {
        Use(root[i]);
        branch_thunks[b].push_back(
            std::make_unique<runtime::CopyThunk>(root[i], results[i], buffers_[results[i]].size));
      }
      sharing_.Exit();
    }
    ++time_;
    for (BufferId id : results) KeepLive(id);
    out->push_back(std::make_unique<runtime::ConditionalThunk>(
        absl::StrCat("%", hlo.name()), selector[0], selector_type == xla::PRED,
        std::move(branch_thunks)));
    leaves_[&hlo] = std::move(results);
    return absl::OkStatus();
  }

  // A oneDNN library call for a composite call, dot or convolution (see
  // onednn_library.h); false, with the reason in the report, when oneDNN
  // does not take it.
  absl::StatusOr<bool> EmitOneDnnCall(const HloInstruction& hlo, ThunkSequence* out) {
    if (!options_.use_onednn) return false;
    if (onednn_ == nullptr) {
      HLOC_ASSIGN_OR_RETURN(onednn_, OneDnnContext::Create());
    }
    HLOC_ASSIGN_OR_RETURN(OneDnnLowering lowering, LowerToOneDnn(hlo, onednn_));
    const std::string* composite = hlo.FindFrontendAttribute("composite.name");
    const std::string what = hlo.opcode() == HloOpcode::kCall && composite != nullptr
                                 ? *composite
                                 : std::string(HloOpcodeName(hlo.opcode()));
    if (!lowering.function.has_value()) {
      program_->report_.library_refusals.push_back(
          absl::StrCat("%", hlo.name(), " (", what, "): ", lowering.refusal));
      return false;
    }
    program_->report_.onednn_calls.push_back(
        absl::StrCat("%", hlo.name(), " (", what, "): ", lowering.description));
    HLOC_RETURN_IF_ERROR(
        EmitLibraryCall(hlo, *std::move(lowering.function), out, absl::StrCat("onednn:", what)));
    return true;
  }

  // A library-call thunk running a host routine for `hlo`.
  absl::Status EmitLibraryCall(const HloInstruction& hlo, runtime::LibraryCallThunk::Function function,
                               ThunkSequence* out, absl::string_view label = "") {
    std::vector<BufferId> args = OperandLeaves(hlo);
    for (BufferId id : args) Use(id);
    std::vector<BufferId> results = NewTemps(hlo);
    args.insert(args.end(), results.begin(), results.end());
    out->push_back(std::make_unique<runtime::LibraryCallThunk>(
        absl::StrCat(label.empty() ? HloOpcodeName(hlo.opcode()) : label, " %", hlo.name()),
        std::move(function), std::move(args)));
    leaves_[&hlo] = std::move(results);
    ++program_->report_.library_calls;
    return absl::OkStatus();
  }

  // A library-call thunk that evaluates `hlo` with the fallback evaluator.
  absl::Status EmitFallback(const HloInstruction& hlo, ThunkSequence* out) {
    if (!options_.fallback) {
      return absl::UnimplementedError(absl::StrCat("instruction %", hlo.name(), " (",
                                                   HloOpcodeName(hlo.opcode()),
                                                   ") has no host kernel and no fallback was given"));
    }
    auto module = std::make_shared<HloModule>(absl::StrCat("fallback_", hlo.name()));
    module->AddEntryComputation(WrapInstruction(hlo));
    std::vector<Shape> operand_shapes;
    for (const HloInstruction* operand : hlo.operands()) operand_shapes.push_back(operand->shape());
    const Shape result_shape = hlo.shape();
    const size_t num_inputs = OperandLeaves(hlo).size();
    FallbackEvaluator evaluate = options_.fallback;
    const std::string name = hlo.name();
    auto function = [module, operand_shapes, result_shape, num_inputs, evaluate,
                     name](absl::Span<void* const> buffers, runtime::ThreadPool*) -> absl::Status {
      std::vector<Literal> args;
      size_t next = 0;
      for (const Shape& shape : operand_shapes) args.push_back(LiteralFromBuffers(shape, buffers, &next));
      absl::StatusOr<Literal> result = evaluate(*module, args);
      if (!result.ok()) return result.status();
      std::vector<const Literal*> leaves;
      CollectLiteralLeaves(*result, &leaves);
      if (num_inputs + leaves.size() != buffers.size()) {
        return absl::InternalError(absl::StrCat("fallback for %", name, " returned ",
                                                leaves.size(), " leaves"));
      }
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (leaves[i]->size_bytes() > 0) {
          std::memcpy(buffers[num_inputs + i], leaves[i]->raw(), leaves[i]->size_bytes());
        }
      }
      return absl::OkStatus();
    };
    std::vector<BufferId> args = OperandLeaves(hlo);
    for (BufferId id : args) Use(id);
    std::vector<BufferId> results = NewTemps(hlo);
    args.insert(args.end(), results.begin(), results.end());
    out->push_back(std::make_unique<runtime::LibraryCallThunk>(
        absl::StrCat("interpreter:", HloOpcodeName(hlo.opcode()), " %", hlo.name()),
        std::move(function), std::move(args)));
    leaves_[&hlo] = std::move(results);
    ++program_->report_.interpreter_calls;
    program_->report_.fallback_ops.push_back(
        absl::StrCat(HloOpcodeName(hlo.opcode()), " (%", hlo.name(), ")"));
    return absl::OkStatus();
  }

  const HostCompileOptions& options_;
  HostProgram* program_;
  std::shared_ptr<OneDnnContext> onednn_;  // Created with the first oneDNN call.
  std::vector<BufferSpec> buffers_;
  BufferSharing sharing_;
  absl::node_hash_map<const HloInstruction*, std::vector<BufferId>> leaves_;  // Stable references.
  int64_t time_ = 0;
};

absl::StatusOr<std::unique_ptr<HostProgram>> CompileForHost(const HloModule& module,
                                                            const HostCompileOptions& options) {
  std::unique_ptr<HostProgram> program(new HostProgram());
  program->module_ = module.Clone();
  program->compiler_ = options.compiler;
  if (program->compiler_ == nullptr) {
    HLOC_ASSIGN_OR_RETURN(program->compiler_, KernelCompiler::Create(options.kernel));
  }
  HostCompilation compilation(options, program.get());
  HLOC_RETURN_IF_ERROR(compilation.Compile());
  return program;
}

}  // namespace host
}  // namespace hloc
