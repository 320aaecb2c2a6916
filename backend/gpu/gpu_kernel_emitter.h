// GPU kernels in LLVM IR (NVPTX). One kernel computes one fused (or one-op)
// computation with the ABI of kernel_codegen.h. A computation whose root is
// a sort, topk ("TopK" custom call too) or scatter of its parameters gets
// that op's kernel (sort_kernel_emitter.cc: bitonic sort of positions, a
// block per row; scatter_kernel_emitter.cc: atomic, ordered or serial
// updates in place). Otherwise the strategy is chosen from the
// computation's outputs, first match wins:
//
//   row-normalization reductions of the same trailing (row) dimensions whose
//                     results are broadcast back along the row (softmax,
//                     layer norm; see row_normalization.h): a warp or block
//                     per row runs every reduction and writes each output
//                     once (row_normalization_kernel_emitter.cc).
//   row-reduction-split, column-reduction-split
//                     the two below when they would launch fewer blocks
//                     than the device has SMs and the reduced extent is
//                     long: blocks reduce chunks of it into scratch, then a
//                     second kernel folds each output's chunk partials.
//   row-reduction     outputs are reductions of the input's minor dimension
//                     (plus elementwise epilogues): a warp (small rows) or a
//                     block (long rows) per output; lanes stride the row,
//                     combine with warp shuffles, warps through shared memory.
//   column-reduction  reductions keeping the input's minor dimensions: a
//                     block per tile of 32 adjacent outputs; each warp sums a
//                     stripe of rows with coalesced reads, then the stripes'
//                     partials meet in shared memory.
//   transpose         outputs are elementwise over one transpose that moves
//                     the minor dimension: 32x32 tiles go through shared
//                     memory so reads and writes are both coalesced.
//   loop              everything else elemental: one thread per element (or
//                     per 2-8 adjacent elements, so loads and stores become
//                     16-byte vector accesses), exact grid or grid-stride.
//
// Reductions apply the init value once per output and combine partial
// results with the reducer (associative, as HLO requires); float sums
// accumulate in double like the elemental emitter and the interpreter.
#ifndef HLOC_BACKEND_GPU_GPU_KERNEL_EMITTER_H_
#define HLOC_BACKEND_GPU_GPU_KERNEL_EMITTER_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "backend/common/kernel_variant.h"
#include "backend/gpu/kernel_codegen.h"
#include "backend/llvm/array_leaves.h"
#include "backend/llvm/elemental_ir_emitter.h"
#include "backend/llvm/fused_ir_emitter.h"
#include "backend/llvm/kernel_outputs.h"
#include "backend/llvm/math_lowering.h"
#include "hlo/computation.h"
#include "llvm/IR/Module.h"

namespace hloc {
namespace gpu {

struct EmittedGpuKernel {
  LaunchDims launch;
  int64_t num_buffers = 0;
  int64_t num_inputs = 0;
  std::string strategy;
  int64_t vector_width = 1;
  std::vector<std::pair<int64_t, int64_t>> copy_before;  // See GpuKernel.
  int64_t scratch_bytes = 0;                             // See GpuKernel.
  std::string second_name;                               // See GpuKernel.
  LaunchDims second_launch;                              // See GpuKernel.
};

// Adds kernel `name` computing `computation` to `module` (whose target is
// NVPTX). Math functions go through `math`. kUpdateInPlace: only a
// dynamic-update-slice root's update (update_in_place_kernel_emitter.cc).
absl::StatusOr<EmittedGpuKernel> EmitGpuKernel(
    const HloComputation& computation, const std::string& name, llvm::Module* module,
    const codegen::MathLowering* math, const GpuTarget& target,
    backend::KernelVariant variant = backend::KernelVariant::kWhole);

// ---- Shared by the strategy emitters (one file each).

struct GpuKernelState {
  llvm::IRBuilder<>* b;
  codegen::ElementalIrEmitter* elemental;
  codegen::FusedIrEmitter* fused;
  const GpuTarget* target;
  std::vector<codegen::KernelOutput> outputs;
  int64_t num_inputs = 0;  // Buffers before the outputs'.
  // Set by the strategy emitter.
  EmittedGpuKernel result;
};

// Each returns false, having emitted nothing, when its strategy does not
// apply.
absl::StatusOr<bool> TryEmitRowNormalizationKernel(const HloComputation& computation,
                                                   GpuKernelState& state);
absl::StatusOr<bool> TryEmitReductionKernel(GpuKernelState& state);

// Reductions split across blocks (split_reduction_kernel_emitter.cc): a
// partials kernel and a combine kernel (`second_name`), when the reduction
// kernel alone would leave most SMs idle (few outputs with long reduced
// extents, column reductions with few kept columns). nullopt, having
// emitted nothing, when the computation is not such a reduction.
absl::StatusOr<std::optional<EmittedGpuKernel>> TryEmitSplitReductionKernel(
    const HloComputation& computation, const std::string& name, llvm::Module* module,
    const codegen::MathLowering* math, const GpuTarget& target);
// The reduction emitter's passes (reduction_kernel_emitter.cc): kWhole is
// TryEmitReductionKernel; kPartials stores per-chunk partials in `scratch`
// and kCombine folds them into the outputs. The split phases return false,
// having emitted nothing, when splitting does not pay.
enum class ReductionPhase { kWhole, kPartials, kCombine };
absl::StatusOr<bool> TryEmitReductionPhase(GpuKernelState& state, ReductionPhase phase,
                                           llvm::Value* scratch);
absl::StatusOr<bool> TryEmitTransposeKernel(GpuKernelState& state);
absl::Status EmitLoopKernel(GpuKernelState& state);
absl::Status EmitUpdateInPlaceKernel(GpuKernelState& state, const HloComputation& computation);

// Sort and topk (sort_kernel_emitter.cc) and scatter
// (scatter_kernel_emitter.cc) kernels: each builds its own function (their
// outputs are read back, some take scratch). nullopt, having emitted
// nothing, when the computation's root is not their op.
absl::StatusOr<std::optional<EmittedGpuKernel>> TryEmitSortKernel(
    const HloComputation& computation, const std::string& name, llvm::Module* module,
    const codegen::MathLowering* math, const GpuTarget& target);
absl::StatusOr<std::optional<EmittedGpuKernel>> TryEmitScatterKernel(
    const HloComputation& computation, const std::string& name, llvm::Module* module,
    const codegen::MathLowering* math, const GpuTarget& target);

// The kernel function over `buffer_shapes` (inputs first, `num_inputs` of
// them, then outputs, then a scratch pointer when `scratch`): noalias,
// 16-byte aligned global pointers; inputs readonly, outputs writeonly unless
// `outputs_read`.
llvm::Function* CreateKernelFunction(llvm::Module* module, const std::string& name,
                                     const std::vector<const Shape*>& buffer_shapes,
                                     int64_t num_inputs, bool outputs_read, bool scratch);

// A kernel's buffers in ABI order: each parameter's array leaves, then the
// outputs (KernelOutput, from the computation's root).
struct KernelBuffers {
  std::vector<std::vector<ArrayLeaf>> parameter_leaves;
  std::vector<const Shape*> shapes;  // Inputs, then outputs.
  int64_t num_inputs = 0;
};

// `computation`'s buffers; `outputs` receives its kernel outputs.
absl::Status CollectKernelBuffers(const HloComputation& computation,
                                  std::vector<codegen::KernelOutput>* outputs,
                                  KernelBuffers* buffers);

// Binds `kernel`'s arguments (laid out as `buffers`): each parameter's
// leaves in `fused`, then each output's buffer.
void BindKernelBuffers(llvm::Function* kernel, const KernelBuffers& buffers,
                       codegen::FusedIrEmitter* fused,
                       std::vector<codegen::KernelOutput>* outputs);

// Blocks for `work` items of `per_block` each, capped so that huge shapes
// use a grid-stride loop instead of an enormous grid.
int64_t GridBlocks(const GpuTarget& target, int64_t work, int64_t per_block);

int64_t ElementCount(const Shape& shape);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_KERNEL_EMITTER_H_
