// Kernel cache keys shared by every backend that compiles computations into
// kernels (host JIT, NVPTX): two computations with the same fingerprint
// compile to the same kernel. LLVM-free.
#ifndef HLOC_BACKEND_LLVM_KERNEL_FINGERPRINT_H_
#define HLOC_BACKEND_LLVM_KERNEL_FINGERPRINT_H_

#include <string>

#include "hlo/computation.h"

namespace hloc {
namespace codegen {

// The cache key of a computation: its printed text (no metadata) with
// instruction and computation names replaced by positional ones, followed by
// the text of every computation it calls. Empty when the printer produced
// nothing (then nothing is cached).
std::string KernelFingerprint(const HloComputation& computation);

}  // namespace codegen
}  // namespace hloc

#endif  // HLOC_BACKEND_LLVM_KERNEL_FINGERPRINT_H_
