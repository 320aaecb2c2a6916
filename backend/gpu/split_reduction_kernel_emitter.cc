// Split reductions (see gpu_kernel_emitter.h): two kernel functions in one
// module, `name` (the partials kernel, the one launched first) and
// `name`_combine, both over the kernel's buffers plus a scratch pointer.
// The reduction emitter (reduction_kernel_emitter.cc, ReductionPhase)
// decides whether splitting pays and emits each body; this file sets up
// the two functions around it.
#include <memory>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_kernel_emitter.h"
#include "backend/gpu/nvptx_ir.h"
#include "backend/llvm/array_leaves.h"
#include "hlo/status_macros.h"
#include "llvm/IR/Function.h"

namespace hloc {
namespace gpu {
namespace {

// One kernel function with its parameters bound: what a reduction phase
// emits into.
struct PhaseFunction {
  llvm::Function* function = nullptr;
  std::unique_ptr<llvm::IRBuilder<>> b;
  std::unique_ptr<codegen::ElementalIrEmitter> elemental;
  std::unique_ptr<codegen::FusedIrEmitter> fused;
  GpuKernelState state;
  int64_t num_buffers = 0;

  ~PhaseFunction() {
    // The emitters must go before the function they point into.
    fused.reset();
    elemental.reset();
    b.reset();
  }
  void Erase() {
    if (function == nullptr) return;
    fused.reset();
    elemental.reset();
    b.reset();
    function->dropAllReferences();
    function->eraseFromParent();
    function = nullptr;
  }
};

absl::Status SetUp(const HloComputation& computation, const std::string& name,
                   llvm::Module* module, const codegen::MathLowering* math,
                   const GpuTarget& target, PhaseFunction* out) {
  GpuKernelState& state = out->state;
  KernelBuffers buffers;
  HLOC_RETURN_IF_ERROR(CollectKernelBuffers(computation, &state.outputs, &buffers));
  const int64_t num_inputs = buffers.num_inputs;
  out->num_buffers = static_cast<int64_t>(buffers.shapes.size()) + 1;
  out->function = CreateKernelFunction(module, name, buffers.shapes, num_inputs,
                                       /*outputs_read=*/false, /*scratch=*/true);
  out->b = std::make_unique<llvm::IRBuilder<>>(
      llvm::BasicBlock::Create(module->getContext(), "entry", out->function));
  out->elemental = std::make_unique<codegen::ElementalIrEmitter>(out->b.get(), module, math);
  out->fused = std::make_unique<codegen::FusedIrEmitter>(out->elemental.get());
  BindKernelBuffers(out->function, buffers, out->fused.get(), &state.outputs);
  state.b = out->b.get();
  state.elemental = out->elemental.get();
  state.fused = out->fused.get();
  state.target = &target;
  state.num_inputs = num_inputs;
  return absl::OkStatus();
}

// Emits `phase` into a new function `name`; false (function removed) when
// the emitter declines.
absl::StatusOr<bool> EmitPhase(const HloComputation& computation, const std::string& name,
                               llvm::Module* module, const codegen::MathLowering* math,
                               const GpuTarget& target, ReductionPhase phase,
                               PhaseFunction* out) {
  absl::Status set_up = SetUp(computation, name, module, math, target, out);
  if (!set_up.ok()) {
    out->Erase();
    return set_up;
  }
  llvm::Value* scratch = out->function->getArg(static_cast<unsigned>(out->num_buffers - 1));
  absl::StatusOr<bool> done = TryEmitReductionPhase(out->state, phase, scratch);
  if (!done.ok() || !*done) {
    out->Erase();
    return done;
  }
  out->b->CreateRetVoid();
  AnnotateKernel(out->function, out->state.result.launch);
  return true;
}

}  // namespace

absl::StatusOr<std::optional<EmittedGpuKernel>> TryEmitSplitReductionKernel(
    const HloComputation& computation, const std::string& name, llvm::Module* module,
    const codegen::MathLowering* math, const GpuTarget& target) {
  if (computation.root() == nullptr) return std::nullopt;
  // Only computations with a reduce in them are candidates.
  bool any_reduce = false;
  for (const HloInstruction* hlo : computation.instructions()) {
    any_reduce = any_reduce || hlo->opcode() == HloOpcode::kReduce;
  }
  if (!any_reduce) return std::nullopt;
  PhaseFunction partials;
  absl::StatusOr<bool> done =
      EmitPhase(computation, name, module, math, target, ReductionPhase::kPartials, &partials);
  if (!done.ok()) return done.status();
  if (!*done) return std::nullopt;
  PhaseFunction combine;
  const std::string combine_name = absl::StrCat(name, "_combine");
  done = EmitPhase(computation, combine_name, module, math, target, ReductionPhase::kCombine,
                   &combine);
  if (!done.ok() || !*done) {
    partials.Erase();
    if (!done.ok()) return done.status();
    return absl::InternalError(
        absl::StrCat(computation.name(), ": split reduction without a combine kernel"));
  }
  EmittedGpuKernel result = partials.state.result;
  if (result.scratch_bytes != combine.state.result.scratch_bytes) {
    partials.Erase();
    combine.Erase();
    return absl::InternalError(
        absl::StrCat(computation.name(), ": split reduction phases disagree on scratch"));
  }
  result.num_buffers = partials.num_buffers;
  result.num_inputs = partials.state.num_inputs;
  result.second_name = combine_name;
  result.second_launch = combine.state.result.launch;
  return result;
}

}  // namespace gpu
}  // namespace hloc
