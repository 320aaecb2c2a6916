// The outputs a kernel stores: one per array leaf of its computation's root,
// in the buffer order every backend's kernel ABI uses (after the parameter
// leaves). Shared by the host and GPU kernel emitters.
#ifndef HLOC_BACKEND_LLVM_KERNEL_OUTPUTS_H_
#define HLOC_BACKEND_LLVM_KERNEL_OUTPUTS_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "backend/llvm/elemental_ir_emitter.h"
#include "backend/llvm/fused_ir_emitter.h"
#include "hlo/instruction.h"
#include "llvm/IR/IRBuilder.h"

namespace hloc {
namespace codegen {

// One array leaf of the root: the instruction producing it (with the leaf's
// position when that instruction yields a struct), its shape and buffer.
struct KernelOutput {
  const HloInstruction* producer;
  std::optional<unsigned> struct_field;  // Set when `producer` is tuple-shaped.
  const Shape* shape;
  llvm::Value* buffer;  // Set by the kernel emitter once the function exists.
};

// The root's array leaves in order (looking through tuple instructions);
// buffers are left null. Tokens produce no output; nested tuples produced by
// one instruction are Unimplemented.
absl::Status CollectKernelOutputs(const HloInstruction& root, std::vector<KernelOutput>* outputs);

// The generator of one output leaf.
absl::StatusOr<ElementGenerator> KernelOutputGenerator(FusedIrEmitter& fused, llvm::IRBuilder<>* b,
                                                       const KernelOutput& output);

}  // namespace codegen
}  // namespace hloc

#endif  // HLOC_BACKEND_LLVM_KERNEL_OUTPUTS_H_
