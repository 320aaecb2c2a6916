// NVPTX target machine, optimization and PTX emission (see nvptx_compiler.h).
#include "backend/gpu/nvptx_compiler.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace hloc {
namespace gpu {
namespace {

void InitializeNvptxOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateNvptxTargetMachine(
    int compute_capability) {
  if (compute_capability < 50 || compute_capability > 120) {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported compute capability ", compute_capability));
  }
  InitializeNvptxOnce();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kNvptxTriple, error);
  if (target == nullptr) {
    return absl::InternalError(absl::StrCat("LLVM has no NVPTX target: ", error));
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      kNvptxTriple, absl::StrCat("sm_", compute_capability), kPtxFeatures, options,
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (machine == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create an NVPTX target machine for sm_", compute_capability));
  }
  return machine;
}

void PrepareModule(llvm::Module& module, const llvm::TargetMachine& machine) {
  module.setTargetTriple(machine.getTargetTriple().str());
  module.setDataLayout(machine.createDataLayout());
}

void OptimizeNvptxModule(llvm::Module& module, llvm::TargetMachine& machine, int level,
                         bool unroll) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // The builder asks the target machine for its passes: NVPTX adds NVVM
  // reflect and its intrinsic range annotations at the pipeline's start.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = unroll;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes;
  if (level <= 0) {
    passes = builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
  } else {
    llvm::OptimizationLevel opt = llvm::OptimizationLevel::O3;
    if (level == 1) opt = llvm::OptimizationLevel::O1;
    if (level == 2) opt = llvm::OptimizationLevel::O2;
    passes = builder.buildPerModuleDefaultPipeline(opt);
  }
  passes.run(module, mam);
}

absl::StatusOr<std::string> EmitPtx(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::legacy::PassManager passes;
  llvm::Triple triple(module.getTargetTriple());
  llvm::TargetLibraryInfoImpl library_info(triple);
  passes.add(new llvm::TargetLibraryInfoWrapperPass(library_info));
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream stream(ptx);
  if (machine.addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    return absl::InternalError("the NVPTX target cannot emit PTX");
  }
  passes.run(module);
  return std::string(ptx.str());
}

}  // namespace gpu
}  // namespace hloc
