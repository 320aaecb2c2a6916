// Math functions on the GPU through libdevice, NVIDIA's bitcode math
// library: the elemental emitter's MathLowering calls __nv_expf, __nv_log1p
// and so on, and LinkLibdevice pulls in just the functions a kernel calls.
#ifndef HLOC_BACKEND_GPU_LIBDEVICE_H_
#define HLOC_BACKEND_GPU_LIBDEVICE_H_

#include <string>

#include "absl/status/status.h"
#include "backend/llvm/math_lowering.h"
#include "llvm/IR/Module.h"

namespace hloc {
namespace gpu {

class LibdeviceMathLowering : public codegen::MathLowering {
 public:
  absl::StatusOr<llvm::Value*> Emit(llvm::IRBuilder<>& b, codegen::MathFunction function,
                                    absl::Span<llvm::Value* const> args) const override;
};

// Whether `module` declares any libdevice function.
bool NeedsLibdevice(const llvm::Module& module);

// Links the libdevice functions `module` calls from the bitcode at `path`
// (only those, and what they call) and sets the NVVM reflect parameters
// libdevice branches on (no flush-to-zero). NotFound when the file is
// missing.
absl::Status LinkLibdevice(llvm::Module* module, const std::string& path);

// The libdevice file for an explicit path ("" means $HLOC_LIBDEVICE, else
// the CUDA install's).
std::string LibdevicePath(const std::string& configured);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_LIBDEVICE_H_
