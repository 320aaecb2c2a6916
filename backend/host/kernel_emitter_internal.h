// Pieces shared by the loop, reduction and transpose kernel emitters: the kernel's
// function and buffers, and the outputs it must store.
#ifndef HLOC_BACKEND_HOST_KERNEL_EMITTER_INTERNAL_H_
#define HLOC_BACKEND_HOST_KERNEL_EMITTER_INTERNAL_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "backend/llvm/elemental_ir_emitter.h"
#include "backend/llvm/fused_ir_emitter.h"
#include "backend/llvm/kernel_outputs.h"
#include "hlo/computation.h"
#include "llvm/IR/IRBuilder.h"

namespace hloc {
namespace host {

using codegen::KernelOutput;  // backend/llvm/kernel_outputs.h

struct KernelState {
  llvm::IRBuilder<>* b;
  codegen::ElementalIrEmitter* elemental;
  codegen::FusedIrEmitter* fused;
  llvm::Value* begin;
  llvm::Value* end;
  std::vector<KernelOutput> outputs;
};

// The generator of one output leaf.
absl::StatusOr<codegen::ElementGenerator> OutputGenerator(KernelState& state,
                                                          const KernelOutput& output);

// Emits a reduction kernel when the computation's outputs are reductions it
// handles (see kernel_emitter.h); nullopt when it does not apply, so the
// caller falls back to a loop kernel. Returns the work item count and
// strategy name.
absl::StatusOr<std::optional<std::pair<int64_t, const char*>>> TryEmitReductionKernel(
    KernelState& state);

// Emits a tiled transpose kernel (transpose_kernel_emitter.cc) when every
// output reads a transpose that moves the minor dimension through
// elementwise ops at its own index; nullopt when it does not apply. Returns
// the work item (tile) count.
absl::StatusOr<std::optional<int64_t>> TryEmitTransposeKernel(KernelState& state);

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_KERNEL_EMITTER_INTERNAL_H_
