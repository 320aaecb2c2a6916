// KernelCompiler on ORC's LLJIT: each kernel is its own LLVM module, emitted
// by EmitHostKernel, optimized with the O3 pipeline for the host CPU (its
// vector width and features), and added to one JIT dylib that resolves libm
// and other C runtime symbols from the process.
#include <algorithm>
#include <chrono>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backend/host/kernel_compiler.h"
#include "backend/host/kernel_emitter.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace hloc {
namespace host {
namespace {

std::string ErrorText(llvm::Error error) { return llvm::toString(std::move(error)); }

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

class JitKernelCompiler : public KernelCompiler {
 public:
  JitKernelCompiler(KernelCompilerOptions options, std::unique_ptr<llvm::orc::LLJIT> jit,
                    std::unique_ptr<llvm::TargetMachine> target_machine)
      : options_(options), jit_(std::move(jit)), target_machine_(std::move(target_machine)) {}

  absl::StatusOr<CompiledKernel> Compile(const HloComputation& computation,
                                         KernelVariant variant) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string key = options_.cache ? KernelFingerprint(computation) : std::string();
    if (!key.empty() && variant == KernelVariant::kUpdateInPlace) {
      absl::StrAppend(&key, "\n#in-place");
    }
    if (!key.empty()) {
      auto it = cache_.find(key);
      if (it != cache_.end()) {
        ++stats_.cache_hits;
        return it->second;
      }
    }
    const auto start = std::chrono::steady_clock::now();
    const std::string name = absl::StrCat("kernel_", next_id_++);
    auto context = std::make_unique<llvm::LLVMContext>();
    absl::StatusOr<std::unique_ptr<llvm::Module>> module =
        BuildModule(computation, name, *context, true, variant);
    if (!module.ok()) return module.status();
    CompiledKernel kernel;
    kernel.work_items = last_emitted_.work_items;
    kernel.num_buffers = last_emitted_.num_buffers;
    kernel.strategy = last_emitted_.strategy;
    // An update in place does a root element's work per item, not all of it.
    int64_t per = kernel.work_items;
    if (variant == KernelVariant::kUpdateInPlace) {
      per = 1;
      for (int64_t d : computation.root()->shape().dimensions()) per *= d;
    }
    const double cost = EstimateCost(computation) / std::max<int64_t>(1, per);
    kernel.cost_per_item = std::max<int64_t>(1, static_cast<int64_t>(std::min(cost, 1e12)));
    llvm::Error added = jit_->addIRModule(
        llvm::orc::ThreadSafeModule(*std::move(module), std::move(context)));
    if (added) return absl::InternalError(absl::StrCat("JIT: ", ErrorText(std::move(added))));
    llvm::Expected<llvm::orc::ExecutorAddr> address = jit_->lookup(name);
    if (!address) {
      return absl::InternalError(absl::StrCat("JIT lookup of ", name, ": ",
                                              ErrorText(address.takeError())));
    }
    kernel.function = address->toPtr<runtime::KernelFunction>();
    ++stats_.kernels_compiled;
    stats_.compile_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!key.empty()) cache_[key] = kernel;
    return kernel;
  }

  absl::StatusOr<std::string> EmitIr(const HloComputation& computation, bool optimized,
                                     KernelVariant variant) override {
    std::lock_guard<std::mutex> lock(mu_);
    llvm::LLVMContext context;
    absl::StatusOr<std::unique_ptr<llvm::Module>> module =
        BuildModule(computation, "kernel", context, optimized, variant);
    if (!module.ok()) return module.status();
    std::string text;
    llvm::raw_string_ostream stream(text);
    (*module)->print(stream, nullptr);
    stream.flush();
    return text;
  }

  KernelCompilerStats stats() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  absl::StatusOr<std::unique_ptr<llvm::Module>> BuildModule(const HloComputation& computation,
                                                            const std::string& name,
                                                            llvm::LLVMContext& context,
                                                            bool optimize,
                                                            KernelVariant variant) {
    auto module = std::make_unique<llvm::Module>(name, context);
    module->setDataLayout(target_machine_->createDataLayout());
    module->setTargetTriple(target_machine_->getTargetTriple().str());
    absl::StatusOr<EmittedKernel> emitted =
        EmitHostKernel(computation, name, module.get(), &math_,
                       variant == KernelVariant::kUpdateInPlace, options_.tiled_transposes);
    if (!emitted.ok()) return emitted.status();
    last_emitted_ = *emitted;
    for (llvm::Function& f : *module) {
      if (f.isDeclaration()) continue;
      f.addFnAttr("target-cpu", target_machine_->getTargetCPU());
      f.addFnAttr("target-features", target_machine_->getTargetFeatureString());
    }
    std::string verify_errors;
    llvm::raw_string_ostream verify_stream(verify_errors);
    if (llvm::verifyModule(*module, &verify_stream)) {
      verify_stream.flush();
      return absl::InternalError(absl::StrCat("kernel for ", computation.name(),
                                              " is invalid LLVM IR: ", verify_errors));
    }
    if (optimize && options_.optimization_level > 0) Optimize(*module);
    return module;
  }

  void Optimize(llvm::Module& module) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder builder(target_machine_.get());
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel level = llvm::OptimizationLevel::O3;
    if (options_.optimization_level == 1) level = llvm::OptimizationLevel::O1;
    if (options_.optimization_level == 2) level = llvm::OptimizationLevel::O2;
    llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(level);
    passes.run(module, mam);
  }

  const KernelCompilerOptions options_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::unique_ptr<llvm::TargetMachine> target_machine_;
  codegen::LibmMathLowering math_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, CompiledKernel> cache_;
  KernelCompilerStats stats_;
  EmittedKernel last_emitted_;
  int64_t next_id_ = 0;
};

}  // namespace

absl::StatusOr<std::shared_ptr<KernelCompiler>> KernelCompiler::Create(
    const KernelCompilerOptions& options) {
  InitializeLlvmOnce();
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> machine =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machine) return absl::InternalError(ErrorText(machine.takeError()));
  machine->setCodeGenOptLevel(options.optimization_level > 0 ? llvm::CodeGenOptLevel::Aggressive
                                                             : llvm::CodeGenOptLevel::None);
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> target_machine =
      machine->createTargetMachine();
  if (!target_machine) return absl::InternalError(ErrorText(target_machine.takeError()));
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*machine).create();
  if (!jit) return absl::InternalError(ErrorText(jit.takeError()));
  llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>> process_symbols =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          (*jit)->getDataLayout().getGlobalPrefix());
  if (!process_symbols) return absl::InternalError(ErrorText(process_symbols.takeError()));
  (*jit)->getMainJITDylib().addGenerator(std::move(*process_symbols));
  return std::shared_ptr<KernelCompiler>(new JitKernelCompiler(
      options, std::move(*jit), std::move(*target_machine)));
}

}  // namespace host
}  // namespace hloc
