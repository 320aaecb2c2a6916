// libdevice math (see libdevice.h).
#include "backend/gpu/libdevice.h"

#include <cstdlib>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Function.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"

namespace hloc {
namespace gpu {

absl::StatusOr<llvm::Value*> LibdeviceMathLowering::Emit(
    llvm::IRBuilder<>& b, codegen::MathFunction function,
    absl::Span<llvm::Value* const> args) const {
  // libdevice names: __nv_exp (double), __nv_expf (float).
  absl::StatusOr<llvm::FunctionCallee> callee =
      codegen::DeclareMathFunction(b, function, args, "__nv_", "libdevice");
  if (!callee.ok()) return callee.status();
  return b.CreateCall(*callee, std::vector<llvm::Value*>(args.begin(), args.end()));
}

bool NeedsLibdevice(const llvm::Module& module) {
  for (const llvm::Function& f : module) {
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) return true;
  }
  return false;
}

std::string LibdevicePath(const std::string& configured) {
  if (!configured.empty()) return configured;
  const char* env = std::getenv("HLOC_LIBDEVICE");
  if (env != nullptr && *env != '\0') return env;
  return "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
}

absl::Status LinkLibdevice(llvm::Module* module, const std::string& path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    return absl::NotFoundError(absl::StrCat("libdevice ", path, ": ", buffer.getError().message(),
                                            " (set HLOC_LIBDEVICE or the libdevice path option)"));
  }
  // Lazy: the linker materializes only the functions the kernel reaches.
  llvm::Expected<std::unique_ptr<llvm::Module>> library =
      llvm::getOwningLazyBitcodeModule(std::move(*buffer), module->getContext());
  if (!library) {
    return absl::InternalError(
        absl::StrCat("libdevice ", path, ": ", llvm::toString(library.takeError())));
  }
  (*library)->setTargetTriple(module->getTargetTriple());
  (*library)->setDataLayout(module->getDataLayout());
  if (llvm::Linker::linkModules(*module, std::move(*library),
                                llvm::Linker::Flags::LinkOnlyNeeded)) {
    return absl::InternalError(absl::StrCat("linking libdevice from ", path, " failed"));
  }
  // libdevice asks __nvvm_reflect("__CUDA_FTZ"): keep denormals, like the
  // host and the interpreter.
  module->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  return absl::OkStatus();
}

}  // namespace gpu
}  // namespace hloc
