// The program builder: HloModule -> buffers + thunks for any target. The
// host (backend/host) and the GPU (backend/gpu) compilers are this builder
// plus a TargetLowering (target_lowering.h) each; a new target writes only
// that interface.
//
//                    ProgramBuilder (target-independent)
//   HloModule ──►  buffer table, liveness, buffer sharing     ──► BuiltProgram
//                  parameters, constants, tuples, bitcasts,        buffers, thunks,
//                    copies, while / conditional / call            outputs, output /
//                  per op: kernel | library call | inline |        parameter aliases
//                    interpreter op (op_lowering.h)
//                  in-place updates, input_output_alias
//                          │ emit kernel / library call / copy /
//                          ▼ loop / conditional / interpreter op
//                    TargetLowering: host (ORC JIT, oneDNN)  |  cuda (NVPTX, cuBLASLt, cuDNN)
//
// Buffers. Every array leaf of every value gets a buffer (buffer_table.h).
// Instructions that only regroup or reinterpret data (tuple, get-tuple-
// element, bitcast, same-size reshape, optimization barriers, call results,
// annotation custom calls) reuse their operands' buffers; the rest define
// new temporaries. Only what the root needs, and what has a side effect
// (hlo/live_instructions.h), is emitted, as in the interpreter: a dead op
// (say a pure custom call nothing reads) must neither run nor fail, and a
// side effect nothing reads (jax.debug.print's custom call) still runs.
//
// Choices, per instruction:
//   fusion        a kernel for the fused computation, else its ops one by one
//   call          composite: the target's library call, else the callee inline;
//                 plain: the callee inline
//   other ops     the op table's paths in order (library, kernel), else an
//                 interpreter op (reported, with the reason), else an error
//
// Control flow. While loops copy the initial value into fresh state buffers,
// run the condition and body with their parameters bound to that state, and
// copy the body's result back (through temporaries when one result leaf is
// another leaf's state, so no copy overwrites a value still to be read).
// Conditionals copy the chosen branch's result into their own buffers.
//
// In place (ProgramBuilderOptions::update_in_place). A dynamic-update-slice
// of a buffer (a plain op, or a fusion whose root updates a parameter
// nothing else in it reads) becomes a copy of that buffer into the result
// and a kernel writing only the update (where the target has such kernels).
// When the old value is dead after that step (buffer_sharing.h says when),
// the result shares the operand's bytes and the copy does nothing. A while
// loop's state shares its initial value's bytes in the same way. The
// module's input_output_alias pairs that hold up let an output live in a
// parameter's memory (output_aliasing.cc): one written after the
// parameter's last read, by an update in place of it, or by an elementwise
// kernel reading it only where it writes (elementwise_operands.h).
#ifndef HLOC_BACKEND_COMMON_PROGRAM_BUILDER_H_
#define HLOC_BACKEND_COMMON_PROGRAM_BUILDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backend/common/buffer_table.h"
#include "backend/common/interpreter_ops.h"
#include "backend/common/program_report.h"
#include "backend/common/target_lowering.h"
#include "hlo/collective_groups.h"
#include "hlo/module.h"

namespace hloc {
namespace backend {

struct ProgramBuilderOptions {
  // Dynamic-update-slices write only the update, into their operand's
  // buffer when nothing reads the old value afterwards; while loops take
  // over an initial value nothing else reads. false: every such op writes a
  // fresh buffer and loops copy their initial state, for comparisons.
  bool update_in_place = true;
  // Runs ops no kernel or library covers; unset: they are compile errors.
  InterpreterEvaluator interpreter;
};

struct BuiltProgram {
  std::vector<runtime::BufferSpec> buffers;
  std::unique_ptr<ThunkList> thunks;
  std::vector<BufferId> outputs;  // The entry root's leaves.
  // (output j, parameter leaf i) pairs whose memory may be the same.
  std::vector<std::pair<int64_t, int64_t>> output_parameter_aliases;
  std::vector<Shape> parameter_shapes;
  Shape result_shape;  // Static bounds: a bounded dynamic result comes back at its bounds.
};

// Moves what a runtime's program spec holds (buffers, thunks as `Lowering`'s
// sequence, outputs, output/parameter aliases) from `built` into `spec`.
template <typename Lowering, typename Spec>
void MoveIntoSpec(BuiltProgram* built, Spec* spec) {
  spec->buffers = std::move(built->buffers);
  spec->thunks = Lowering::TakeThunks(std::move(built->thunks));
  spec->outputs = std::move(built->outputs);
  spec->output_parameter_aliases = std::move(built->output_parameter_aliases);
}

// A custom call that only annotates its one operand (sharding, host or
// device placement) and has its shape: on one device it is that operand.
bool IsAnnotationCustomCall(const HloInstruction& hlo);

// InvalidArgument naming `hlo`.
absl::Status InstructionError(const HloInstruction& hlo, absl::string_view message);

class ProgramBuilder {
 public:
  ProgramBuilder(TargetLowering* target, ProgramBuilderOptions options, ProgramReport* report)
      : target_(*target), options_(std::move(options)), report_(*report) {}

  // Builds `module`'s entry computation. Once per builder.
  absl::StatusOr<BuiltProgram> Build(const HloModule& module);

  // ---- For targets, while they lower an instruction.
  BufferTable& buffers() { return buffers_; }
  ProgramReport& report() { return report_; }
  // A kernel for `computation` over `hlo`'s operands, defining `hlo` (an
  // update in place where that applies). False when the target's emitters
  // do not cover it; kernel_refusal() then says why.
  absl::StatusOr<bool> EmitKernel(const HloInstruction& hlo, const HloComputation& computation,
                                  ThunkList* out);
  const std::string& kernel_refusal() const { return kernel_refusal_; }
  // Reads `hlo`'s operands, defines and binds its results: the buffers of a
  // call that reads and writes them all (operand leaves, then result leaves).
  std::vector<BufferId> BindCall(const HloInstruction& hlo);
  // BindCall for a collective thunk (TargetLowering::EmitCollective): the
  // operand leaves, then the leaves the collective writes. For the
  // all-gather-start and collective-permute-start tuples (operands,
  // results[, contexts]) those are the results element's (the -done's
  // value); the tuple's other leaves are buffers nothing writes.
  std::vector<BufferId> BindCollective(const HloInstruction& hlo);

 private:
  absl::Status EmitComputation(const HloComputation& computation, ThunkList* out);
  absl::Status EmitInstruction(const HloInstruction& hlo, ThunkList* out);
  // Parameters, constants, tuples, ...: true when `hlo` was one.
  absl::StatusOr<bool> EmitStructural(const HloInstruction& hlo, ThunkList* out);
  absl::Status EmitOp(const HloInstruction& hlo, ThunkList* out);
  absl::Status EmitInterpreterOp(const HloInstruction& hlo, absl::string_view reason,
                                 ThunkList* out);
  void RecordKernel(const KernelEmission& emission);
  void NoteElementwiseOperands(const HloInstruction& hlo, const HloComputation& computation,
                               const std::vector<BufferId>& results, bool any_operand_and_result);

  // control_flow.cc
  absl::Status EmitInline(const HloComputation& computation, const HloInstruction& caller,
                          ThunkList* out);
  absl::Status EmitWhile(const HloInstruction& hlo, ThunkList* out);
  absl::Status EmitConditional(const HloInstruction& hlo, ThunkList* out);

  // in_place_updates.cc
  absl::StatusOr<bool> EmitUpdateInPlace(const HloInstruction& hlo,
                                         const HloComputation& computation, ThunkList* out);

  // output_aliasing.cc
  absl::Status AliasOutputsWithParameters(const HloModule& module, BuiltProgram* program);
  // The buffers of `outputs` (the entry root's leaves) that the module's
  // input_output_alias names; entries naming no leaf are skipped here and
  // reported by AliasOutputsWithParameters.
  std::vector<BufferId> AliasedOutputs(const HloModule& module,
                                       const std::vector<BufferId>& outputs) const;

  TargetLowering& target_;
  const ProgramBuilderOptions options_;
  ProgramReport& report_;
  BufferTable buffers_;
  std::string kernel_refusal_;
  DeviceMesh mesh_;  // The module's devices, for collectives.
};

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_PROGRAM_BUILDER_H_
