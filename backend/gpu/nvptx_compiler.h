// LLVM's NVPTX backend: the target machine for a compute capability, the
// optimization pipeline (which also runs NVVM reflect), and PTX emission.
#ifndef HLOC_BACKEND_GPU_NVPTX_COMPILER_H_
#define HLOC_BACKEND_GPU_NVPTX_COMPILER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace hloc {
namespace gpu {

inline constexpr const char kNvptxTriple[] = "nvptx64-nvidia-cuda";

// The PTX ISA version the kernels declare: 8.0 (CUDA 12.0), enough for
// sm_90 and accepted by every ptxas since; LLVM 19 knows up to 8.5.
inline constexpr const char kPtxFeatures[] = "+ptx80";

// A target machine for sm_`compute_capability` (initializes the NVPTX
// target once per process).
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateNvptxTargetMachine(
    int compute_capability);

// Sets the module's triple and data layout for `machine`.
void PrepareModule(llvm::Module& module, const llvm::TargetMachine& machine);

// LLVM's default per-module pipeline at `level` (0..3) with the NVPTX
// target's own passes (NVVM reflect, address-space inference).
// With `unroll` false, loops are only unrolled where metadata asks for it
// (kernels with long inner loops, such as naive dot and convolution
// kernels, otherwise spend seconds in the unroller for little gain).
void OptimizeNvptxModule(llvm::Module& module, llvm::TargetMachine& machine, int level,
                         bool unroll = true);

// The module as PTX text.
absl::StatusOr<std::string> EmitPtx(llvm::Module& module, llvm::TargetMachine& machine);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_NVPTX_COMPILER_H_
