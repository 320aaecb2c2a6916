// What a target supplies to the program builder (program_builder.h): how to
// emit a kernel, a library call, a copy, a loop, a conditional and an
// interpreter op as its own runtime's thunks. The builder decides what to
// emit and owns the buffers; the target only makes thunks and compiles code.
//
// Thunk sequences are the target's own type (runtime::ThunkSequence on the
// host, cuda::ThunkSequence on the GPU); the builder holds them as opaque
// ThunkLists. A target derives from TypedTargetLowering<ItsSequence> and
// reads a list's sequence with Thunks(list); one whose runtime has the
// shared thunk vocabulary derives from ThunkVocabularyLowering and gets its
// copies, loops and conditionals for free.
#ifndef HLOC_BACKEND_COMMON_TARGET_LOWERING_H_
#define HLOC_BACKEND_COMMON_TARGET_LOWERING_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "backend/common/kernel_variant.h"
#include "backend/common/op_lowering.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "runtime/collective_thunks.h"
#include "runtime/executable.h"

namespace hloc {
namespace backend {

class ProgramBuilder;

// A target's thunk sequence, opaque to the builder.
class ThunkList {
 public:
  virtual ~ThunkList() = default;
};

// Called by the target once its kernel compiled: reads the instruction's
// operands, defines its results, and returns the kernel's buffers (operand
// leaves, then result leaves).
using KernelBinder = std::function<absl::StatusOr<std::vector<runtime::BufferId>>()>;

struct KernelEmission {
  bool emitted = false;
  // Not emitted: why the target's emitters do not cover the computation.
  std::string refusal;
  // Emitted: one report line per kernel launched ("%fusion.2: row-reduction").
  std::vector<std::string> strategies;
  // Emitted as one launch whose work item writing element k of an output
  // reads element k of each operand that only that output reads, at that
  // index (elementwise_operands.h), before writing it, and no other work
  // item reads that element: such an operand may hold the output, whatever
  // the kernel's other outputs. Without it only a single-output kernel's
  // donated entry parameters may (output_aliasing.cc).
  bool outputs_in_elementwise_operands = false;
};

class TargetLowering {
 public:
  virtual ~TargetLowering() = default;
  // Its row in the op table (op_lowering.h).
  virtual Target target() const = 0;
  virtual std::unique_ptr<ThunkList> NewThunkList() const = 0;

  // A kernel computing `computation` (a fusion's, a callee, or `hlo`
  // wrapped alone) for `hlo`: compiles it, then calls `bind` and appends the
  // launch over the buffers it returns. Not emitted, without calling `bind`,
  // when the emitters do not cover the computation; errors for anything
  // else.
  virtual absl::StatusOr<KernelEmission> EmitKernel(ProgramBuilder& builder,
                                                    const HloInstruction& hlo,
                                                    const HloComputation& computation,
                                                    KernelVariant variant, const KernelBinder& bind,
                                                    ThunkList* out) = 0;

  // A library call for `hlo` (a composite call, or an op the op table gives
  // a library path): true when emitted, `hlo` then bound; false, with the
  // reason in the target's report, when no library routine takes it.
  virtual absl::StatusOr<bool> EmitLibraryCall(ProgramBuilder& builder, const HloInstruction& hlo,
                                               ThunkList* out) = 0;

  virtual void EmitCopy(runtime::BufferId from, runtime::BufferId to, int64_t bytes,
                        ThunkList* out) = 0;
  // Runs `condition`, reads the pred in `predicate`, runs `body` while true.
  virtual void EmitLoop(std::string name, std::unique_ptr<ThunkList> condition,
                        runtime::BufferId predicate, std::unique_ptr<ThunkList> body,
                        ThunkList* out) = 0;
  // Runs one branch chosen by `selector` (runtime/control_flow.h).
  virtual void EmitConditional(std::string name, runtime::BufferId selector, bool selector_is_pred,
                               std::vector<std::unique_ptr<ThunkList>> branches,
                               ThunkList* out) = 0;
  // A communicator thunk running `spec` for `hlo` (collective_lowering.h):
  // true when emitted, `hlo` then bound (ProgramBuilder::BindCall); false
  // when the target has no communicator thunks (a compile error).
  virtual absl::StatusOr<bool> EmitCollective(ProgramBuilder& builder, const HloInstruction& hlo,
                                              runtime::CollectiveSpec spec, ThunkList* out) {
    return false;
  }
  // Runs `function` on host copies of `inputs`, into `outputs`.
  virtual void EmitInterpreterOp(ProgramBuilder& builder, std::string name, std::string reason,
                                 runtime::HostFunction function,
                                 std::vector<runtime::BufferId> inputs,
                                 std::vector<runtime::BufferId> outputs, ThunkList* out) = 0;
};

// A target whose thunk sequences are `Sequence`s.
template <typename Sequence>
class TypedTargetLowering : public TargetLowering {
 public:
  struct List : ThunkList {
    Sequence thunks;
  };
  std::unique_ptr<ThunkList> NewThunkList() const override { return std::make_unique<List>(); }
  static Sequence& Thunks(ThunkList* list) { return static_cast<List*>(list)->thunks; }
  static Sequence TakeThunks(std::unique_ptr<ThunkList> list) {
    return std::move(static_cast<List*>(list.get())->thunks);
  }
};

// A target whose runtime speaks the shared thunk vocabulary (runtime/
// thunk.h, runtime/cuda/gpu_thunk.h): its copy, loop and conditional thunks
// take the same arguments, so their lowering is written once, here.
template <typename Sequence, typename Copy, typename While, typename Conditional>
class ThunkVocabularyLowering : public TypedTargetLowering<Sequence> {
 public:
  using Base = TypedTargetLowering<Sequence>;
  void EmitCopy(runtime::BufferId from, runtime::BufferId to, int64_t bytes,
                ThunkList* out) override {
    Base::Thunks(out).push_back(std::make_unique<Copy>(from, to, bytes));
  }
  void EmitLoop(std::string name, std::unique_ptr<ThunkList> condition, runtime::BufferId predicate,
                std::unique_ptr<ThunkList> body, ThunkList* out) override {
    Base::Thunks(out).push_back(
        std::make_unique<While>(std::move(name), Base::TakeThunks(std::move(condition)), predicate,
                                Base::TakeThunks(std::move(body))));
  }
  void EmitConditional(std::string name, runtime::BufferId selector, bool selector_is_pred,
                       std::vector<std::unique_ptr<ThunkList>> branches, ThunkList* out) override {
    std::vector<Sequence> sequences;
    for (std::unique_ptr<ThunkList>& branch : branches) {
      sequences.push_back(Base::TakeThunks(std::move(branch)));
    }
    Base::Thunks(out).push_back(std::make_unique<Conditional>(
        std::move(name), selector, selector_is_pred, std::move(sequences)));
  }
};

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_TARGET_LOWERING_H_
