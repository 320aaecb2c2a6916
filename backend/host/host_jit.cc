// KernelCompiler on ORC's LLJIT: each kernel is its own LLVM module, emitted
// by EmitHostKernel, optimized with the O3 pipeline for the host CPU (its
// vector width and features), and added to one JIT dylib that resolves libm
// and other C runtime symbols from the process.
//
// HLOC_PERF_MAP=1 (or `hloc run --perf-map`): every kernel's code is listed
// in /tmp/perf-PID.map ("ADDRESS SIZE NAME", perf's JIT map format) as
// "hloc:%fusion.3 kernel_7", so `perf report` names the time spent in it
// instead of an anonymous [JIT] address. The addresses come from JITLink's
// link graph after fix-ups (PerfMapPlugin below). oneDNN names its own JIT
// kernels in the same file with DNNL_JIT_PROFILE=2 (hloc run --perf-map sets it).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backend/host/build_identity.h"
#include "backend/host/kernel_compiler.h"
#include "backend/host/kernel_emitter.h"
#include "backend/llvm/polynomial_math.h"
#include "hlo/fingerprint.h"
#include "hlo/status_macros.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace hloc {
namespace host {
// The GCC runtime's 128-bit integer division (libgcc.a), which LLVM calls for
// i128 divisions in kernels. Linked into hloc by taking their addresses here
// and given to the JIT by name: a process that loads hloc as a shared object
// (Python's _hloc.so) does not export them, so the JIT's search of the
// process's symbols would not find them ("Symbols not found: __udivti3").
extern "C" {
__int128 __divti3(__int128, __int128);
__int128 __modti3(__int128, __int128);
unsigned __int128 __udivti3(unsigned __int128, unsigned __int128);
unsigned __int128 __umodti3(unsigned __int128, unsigned __int128);
}

namespace {

std::string ErrorText(llvm::Error error) { return llvm::toString(std::move(error)); }

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

// LLVM prints remarks and warnings to stderr by default ("loop not
// vectorized: the optimizer was unable to perform the requested
// transformation", after the vectorize hints the emitters attach). Only hloc
// speaks to the user: kernel contexts drop them; failures reach hloc as
// llvm::Error from the JIT.
class QuietDiagnostics : public llvm::DiagnosticHandler {
 public:
  bool handleDiagnostics(const llvm::DiagnosticInfo&) override { return true; }
};

std::unique_ptr<llvm::LLVMContext> MakeQuietContext() {
  auto context = std::make_unique<llvm::LLVMContext>();
  context->setDiagnosticHandler(std::make_unique<QuietDiagnostics>());
  return context;
}

bool PerfMapRequested() {
  const char* value = std::getenv("HLOC_PERF_MAP");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

// Appends each linked function of a kernel to /tmp/perf-PID.map, named by
// the label Compile registered for its kernel symbol.
class PerfMapPlugin : public llvm::orc::ObjectLinkingLayer::Plugin {
 public:
  PerfMapPlugin() : file_(std::fopen(absl::StrCat("/tmp/perf-", getpid(), ".map").c_str(), "a")) {}
  ~PerfMapPlugin() override {
    if (file_ == nullptr) return;
    // oneDNN's own map (DNNL_JIT_PROFILE=2) opens the file with "w+" and
    // writes at its own offset, over lines written before; ours go again at
    // the end so that every kernel is named when the process is done.
    const char* onednn = std::getenv("DNNL_JIT_PROFILE");
    if (onednn != nullptr && *onednn != '\0' && std::string(onednn) != "0") {
      for (const std::string& line : lines_) std::fputs(line.c_str(), file_);
    }
    std::fclose(file_);
  }
  bool ok() const { return file_ != nullptr; }

  // `label` names kernel symbol `symbol` (and the helpers in its object).
  void Label(const std::string& symbol, std::string label) {
    std::lock_guard<std::mutex> lock(mu_);
    labels_[symbol] = std::move(label);
  }

  void modifyPassConfig(llvm::orc::MaterializationResponsibility&, llvm::jitlink::LinkGraph&,
                        llvm::jitlink::PassConfiguration& config) override {
    config.PostFixupPasses.push_back([this](llvm::jitlink::LinkGraph& graph) {
      Write(graph);
      return llvm::Error::success();
    });
  }
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility&) override {
    return llvm::Error::success();
  }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey,
                                   llvm::orc::ResourceKey) override {}

 private:
  void Write(llvm::jitlink::LinkGraph& graph) {
    std::lock_guard<std::mutex> lock(mu_);
    if (file_ == nullptr) return;
    // The object's kernel label, for its helper functions too.
    std::string object_label;
    for (llvm::jitlink::Symbol* symbol : graph.defined_symbols()) {
      if (!symbol->hasName()) continue;
      auto it = labels_.find(symbol->getName().str());
      if (it != labels_.end()) object_label = it->second;
    }
    for (llvm::jitlink::Symbol* symbol : graph.defined_symbols()) {
      if (!symbol->hasName() || !symbol->isCallable() || symbol->getSize() == 0) continue;
      const std::string name = symbol->getName().str();
      auto it = labels_.find(name);
      std::string label;
      if (it != labels_.end()) {
        label = absl::StrCat(it->second, " ", name);
      } else if (!object_label.empty()) {
        label = absl::StrCat(object_label, " ", name);
      } else {
        label = absl::StrCat("hloc:", name);
      }
      std::string line = absl::StrCat(absl::Hex(symbol->getAddress().getValue()), " ",
                                      absl::Hex(symbol->getSize()), " ", label, "\n");
      std::fputs(line.c_str(), file_);
      lines_.push_back(std::move(line));
    }
    std::fflush(file_);
  }

  std::FILE* file_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, std::string> labels_;
  std::vector<std::string> lines_;  // Everything written, for the destructor.
};

// "hloc:%fusion.3" for a fused computation, else "hloc:computation-name".
std::string PerfLabel(const HloComputation& computation) {
  if (const HloInstruction* fusion = computation.fusion_instruction()) {
    return absl::StrCat("hloc:%", fusion->name());
  }
  return absl::StrCat("hloc:", computation.name());
}

class JitKernelCompiler : public KernelCompiler {
 public:
  JitKernelCompiler(KernelCompilerOptions options, std::unique_ptr<llvm::orc::LLJIT> jit,
                    std::unique_ptr<llvm::TargetMachine> target_machine, PerfMapPlugin* perf_map)
      : options_(options), jit_(std::move(jit)), target_machine_(std::move(target_machine)),
        perf_map_(perf_map) {
    math_ = options_.exact_math ? static_cast<const codegen::MathLowering*>(&libm_math_)
                                : &polynomial_math_;
  }

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
    // Kernels kept on disk get a name that is the same in every process.
    const std::string disk_key =
        key.empty() || options_.disk_cache_dir.empty() ? std::string() : DiskKey(key);
    if (!disk_key.empty()) {
      if (perf_map_ != nullptr) perf_map_->Label(absl::StrCat("hk_", disk_key), PerfLabel(computation));
      if (std::optional<CompiledKernel> loaded = LoadFromDisk(disk_key)) {
        ++stats_.disk_cache_hits;
        cache_[key] = *loaded;
        return *loaded;
      }
    }
    const std::string name =
        disk_key.empty() ? absl::StrCat("kernel_", next_id_++) : absl::StrCat("hk_", disk_key);
    if (perf_map_ != nullptr) perf_map_->Label(name, PerfLabel(computation));
    std::unique_ptr<llvm::LLVMContext> context = MakeQuietContext();
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
    if (!disk_key.empty()) {
      // Code generation here rather than in the JIT, so the object file can
      // be kept.
      llvm::SmallVector<char, 0> object;
      llvm::raw_svector_ostream stream(object);
      llvm::legacy::PassManager codegen;
      if (target_machine_->addPassesToEmitFile(codegen, stream, nullptr,
                                               llvm::CodeGenFileType::ObjectFile)) {
        return absl::InternalError("this target cannot emit object files");
      }
      codegen.run(**module);
      const std::string bytes(object.data(), object.size());
      HLOC_RETURN_IF_ERROR(AddObject(bytes, name, &kernel));
      if (StoreOnDisk(disk_key, kernel, bytes)) ++stats_.disk_cache_writes;
    } else {
      llvm::Error added = jit_->addIRModule(
          llvm::orc::ThreadSafeModule(*std::move(module), std::move(context)));
      if (added) return absl::InternalError(absl::StrCat("JIT: ", ErrorText(std::move(added))));
      HLOC_RETURN_IF_ERROR(LookUp(name, &kernel));
    }
    ++stats_.kernels_compiled;
    stats_.compile_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!key.empty()) cache_[key] = kernel;
    return kernel;
  }

  absl::StatusOr<std::string> EmitIr(const HloComputation& computation, bool optimized,
                                     KernelVariant variant) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<llvm::LLVMContext> context = MakeQuietContext();
    absl::StatusOr<std::unique_ptr<llvm::Module>> module =
        BuildModule(computation, "kernel", *context, optimized, variant);
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
        EmitHostKernel(computation, name, module.get(), math_,
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

  absl::Status LookUp(const std::string& name, CompiledKernel* kernel) {
    llvm::Expected<llvm::orc::ExecutorAddr> address = jit_->lookup(name);
    if (!address) {
      return absl::InternalError(absl::StrCat("JIT lookup of ", name, ": ",
                                              ErrorText(address.takeError())));
    }
    kernel->function = address->toPtr<runtime::KernelFunction>();
    return absl::OkStatus();
  }

  absl::Status AddObject(const std::string& bytes, const std::string& name,
                         CompiledKernel* kernel) {
    llvm::Error added = jit_->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(bytes, name));
    if (added) return absl::InternalError(absl::StrCat("JIT: ", ErrorText(std::move(added))));
    return LookUp(name, kernel);
  }

  // The kernel's text plus everything that changes its machine code.
  std::string DiskKey(const std::string& key) const {
    return FingerprintBuilder()
        .Add("hloc host kernel v2")
        .Add(EmitterBuildIdentity())
        .Add(key)
        .Add(target_machine_->getTargetTriple().str())
        .Add(std::string(target_machine_->getTargetCPU()))
        .Add(std::string(target_machine_->getTargetFeatureString()))
        .Add(options_.optimization_level)
        .Add(options_.tiled_transposes ? 1 : 0)
        .Add(options_.exact_math ? "libm" : "polynomial-math v1")
        .Finish();
  }

  std::string DiskPath(const std::string& disk_key) const {
    return absl::StrCat(options_.disk_cache_dir, "/", disk_key, ".hkernel");
  }

  // File layout: a header line "hloc-host-kernel 1 WORK_ITEMS NUM_BUFFERS
  // COST_PER_ITEM OBJECT_BYTES", the strategy on its own line, then the
  // object file.
  std::optional<CompiledKernel> LoadFromDisk(const std::string& disk_key) {
    std::ifstream in(DiskPath(disk_key), std::ios::binary);
    if (!in) return std::nullopt;
    std::string magic;
    int version = 0;
    CompiledKernel kernel;
    int64_t size = -1;
    in >> magic >> version >> kernel.work_items >> kernel.num_buffers >> kernel.cost_per_item >>
        size;
    if (!in || magic != "hloc-host-kernel" || version != 1 || size <= 0 ||
        size > (int64_t{1} << 30)) {
      return std::nullopt;
    }
    in.ignore(1);
    std::getline(in, kernel.strategy);
    std::string bytes(static_cast<size_t>(size), '\0');
    if (!in.read(bytes.data(), size) || in.peek() != std::char_traits<char>::eof()) {
      return std::nullopt;
    }
    if (!AddObject(bytes, absl::StrCat("hk_", disk_key), &kernel).ok()) return std::nullopt;
    return kernel;
  }

  // Written to a temporary name and renamed, so a reader never sees half a
  // file (several processes may share the folder).
  bool StoreOnDisk(const std::string& disk_key, const CompiledKernel& kernel,
                   const std::string& bytes) const {
    const std::string path = DiskPath(disk_key);
    const std::string temporary = absl::StrCat(path, ".tmp", reinterpret_cast<uintptr_t>(this),
                                               "_", next_id_);
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      if (!out) return false;
      out << "hloc-host-kernel 1 " << kernel.work_items << " " << kernel.num_buffers << " "
          << kernel.cost_per_item << " " << bytes.size() << "\n"
          << kernel.strategy << "\n";
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out) {
        std::remove(temporary.c_str());
        return false;
      }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
      std::remove(temporary.c_str());
      return false;
    }
    return true;
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
  PerfMapPlugin* perf_map_;  // Owned by jit_'s linking layer; null unless HLOC_PERF_MAP.
  codegen::LibmMathLowering libm_math_;
  codegen::PolynomialMathLowering polynomial_math_;
  const codegen::MathLowering* math_ = nullptr;  // One of the two.
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, CompiledKernel> cache_;
  KernelCompilerStats stats_;
  EmittedKernel last_emitted_;
  int64_t next_id_ = 0;
};

}  // namespace

absl::StatusOr<std::shared_ptr<KernelCompiler>> KernelCompiler::Create(
    const KernelCompilerOptions& requested) {
  InitializeLlvmOnce();
  KernelCompilerOptions options = requested;
  if (const char* exact = std::getenv("HLOC_HOST_EXACT_MATH");
      exact != nullptr && std::string(exact) == "1") {
    options.exact_math = true;
  }
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
  {
    llvm::orc::MangleAndInterner mangle((*jit)->getExecutionSession(), (*jit)->getDataLayout());
    llvm::orc::SymbolMap runtime;
    auto add = [&](const char* name, void* address) {
      runtime[mangle(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                               llvm::JITSymbolFlags::Exported};
    };
    add("__divti3", reinterpret_cast<void*>(&__divti3));
    add("__modti3", reinterpret_cast<void*>(&__modti3));
    add("__udivti3", reinterpret_cast<void*>(&__udivti3));
    add("__umodti3", reinterpret_cast<void*>(&__umodti3));
    if (llvm::Error error = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(runtime))) {
      return absl::InternalError(ErrorText(std::move(error)));
    }
  }
  PerfMapPlugin* perf_map = nullptr;
  if (PerfMapRequested()) {
    auto* linker = llvm::dyn_cast<llvm::orc::ObjectLinkingLayer>(&(*jit)->getObjLinkingLayer());
    auto plugin = std::make_unique<PerfMapPlugin>();
    if (linker == nullptr || !plugin->ok()) {
      std::fprintf(stderr, "HLOC_PERF_MAP: %s; no perf map written\n",
                   linker == nullptr ? "the JIT does not link with JITLink"
                                     : "cannot open /tmp/perf-PID.map");
    } else {
      perf_map = plugin.get();
      linker->addPlugin(std::move(plugin));
    }
  }
  return std::shared_ptr<KernelCompiler>(new JitKernelCompiler(
      options, std::move(*jit), std::move(*target_machine), perf_map));
}

}  // namespace host
}  // namespace hloc
