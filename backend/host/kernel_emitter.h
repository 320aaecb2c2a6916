// Host kernels in LLVM IR. A kernel computes one fused (or one-op)
// computation with the runtime's ABI
//   void kernel(void* const* buffers, int64_t begin, int64_t end)
// where buffers are the parameters' array leaves in parameter order followed
// by the root's array leaves, and [begin, end) is a range of work items the
// runtime may hand to different threads.
//
// Loop kernels (any elemental computation): a work item is one element of
// the largest output; outputs of other sizes take the proportional part of
// the range. Each output is a loop nest over its elements, the innermost loop
// running along the last dimension so LLVM can vectorize it.
// Reduction kernels (roots that are reductions over the same dimensions,
// with elementwise epilogues): a work item is one element of the reduction
// result; row reductions accumulate one output at a time, column reductions
// accumulate a tile of adjacent outputs together so the inner loop walks
// contiguous memory.
// Transpose kernels (outputs elementwise over a transpose that moves the
// minor dimension): a work item is one square tile of the output's minor
// dimension and the one holding the input's minor dimension, read along
// input rows into a buffer on the stack and written along output rows
// (transpose_kernel_emitter.cc); `tiled_transposes` false emits loop
// kernels for them instead.
// Update-in-place kernels (a dynamic-update-slice of a parameter whose buffer
// the output reuses): a work item is one element of the update.
#ifndef HLOC_BACKEND_HOST_KERNEL_EMITTER_H_
#define HLOC_BACKEND_HOST_KERNEL_EMITTER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "backend/llvm/math_lowering.h"
#include "hlo/computation.h"
#include "llvm/IR/Module.h"

namespace hloc {
namespace host {

struct EmittedKernel {
  int64_t work_items = 0;
  int64_t num_buffers = 0;
  const char* strategy = "loop";  // "loop", "row-reduction", "column-reduction", "transpose"
};

// With `update_in_place`, the kernel of a computation whose root is a
// dynamic-update-slice of parameter UpdateInPlaceParameter(computation):
// a work item is one element of the update, stored at its place in the
// output, which the caller has already filled with the parameter's bytes
// (often by giving both the same buffer); Unimplemented for other
// computations.
absl::StatusOr<EmittedKernel> EmitHostKernel(const HloComputation& computation,
                                             const std::string& name, llvm::Module* module,
                                             const codegen::MathLowering* math,
                                             bool update_in_place = false,
                                             bool tiled_transposes = true);

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_KERNEL_EMITTER_H_
