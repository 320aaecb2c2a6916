// NVPTX specifics the GPU kernel emitters build on: thread and block indices
// (PTX special registers), warp shuffles, barriers, shared-memory arrays,
// kernel annotations, and a strided loop for grid- and block-stride loops.
#ifndef HLOC_BACKEND_GPU_NVPTX_IR_H_
#define HLOC_BACKEND_GPU_NVPTX_IR_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "backend/gpu/kernel_codegen.h"
#include "backend/llvm/elemental_ir_emitter.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"

namespace hloc {
namespace gpu {

// LLVM address spaces of the NVPTX target.
inline constexpr unsigned kGlobalAddressSpace = 1;
inline constexpr unsigned kSharedAddressSpace = 3;

enum class SpecialRegister {
  kThreadIdX,
  kThreadIdY,
  kThreadIdZ,
  kBlockIdX,
  kBlockIdY,
  kBlockIdZ,
  kBlockDimX,
  kGridDimX,
};

// The register's value as i32 (llvm.nvvm.read.ptx.sreg.*).
llvm::Value* ReadSpecialRegister(llvm::IRBuilder<>& b, SpecialRegister reg);

// bar.sync 0: every thread of the block waits for the others.
void EmitBarrier(llvm::IRBuilder<>& b);

// The value `offset` lanes down the warp (shfl.sync.down over all 32 lanes);
// lanes past the end get their own value back. Works for any scalar type up
// to 64 bits (split into 32-bit shuffles) and for structs of them.
llvm::Value* EmitShuffleDown(llvm::IRBuilder<>& b, llvm::Value* value, int offset);

// A static shared-memory array of `count` elements of `element_type`.
llvm::GlobalVariable* AddSharedArray(llvm::Module* module, llvm::Type* element_type, int64_t count,
                                     absl::string_view name);

// Marks `kernel` as a kernel entry (nvvm.annotations "kernel") with the
// maximum block dimensions of `launch` (maxntid).
void AnnotateKernel(llvm::Function* kernel, const LaunchDims& launch);

// for (iv = begin; iv < end; iv += step) body(iv), with all values of the
// same integer type. Opens a generator cache scope for the body.
absl::Status EmitStridedLoop(codegen::ElementalIrEmitter& e, absl::string_view name,
                             llvm::Value* begin, llvm::Value* end, llvm::Value* step,
                             const std::function<absl::Status(llvm::Value*)>& body);

// `value` (i32 or i64, known non-negative) as i64.
llvm::Value* ToIndex(llvm::IRBuilder<>& b, llvm::Value* value);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_NVPTX_IR_H_
