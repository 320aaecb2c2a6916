// hloc compile FILE: run the pass pipeline and print (or write) the code of
// every kernel of the module: LLVM IR, PTX or cubins for CUDA; LLVM IR or
// assembly for the host. For CUDA, one summary line per module says what
// `hloc run --backend=cuda` would build from it (the CUDA pipeline and the
// GPU compiler, kernels assembled by ptxas): kernels, library calls and
// interpreter ops. Needs no GPU.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/kernel_codegen.h"
#include "backend/gpu/kernel_sites.h"
#include "backend/host/kernel_compiler.h"
#include "hlo/status_macros.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "passes/sharding/remove_sharding_annotations.h"
#include "passes/standard_pipelines.h"
#include "tools/command.h"
#include "tools/module_files.h"

namespace hloc::tools {
namespace {

// Host assembly for a module of LLVM IR text (as KernelCompiler::EmitIr
// prints it), for the CPU this runs on.
absl::StatusOr<std::string> HostAssembly(const std::string& ir) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(ir, diagnostic, context);
  if (module == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot parse kernel IR: ", diagnostic.getMessage().str()));
  }
  const std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) return absl::InternalError(absl::StrCat("host target: ", error));
  llvm::SubtargetFeatures features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    features.AddFeature(feature.first(), feature.second);
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(), llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (machine == nullptr) return absl::InternalError("cannot create the host target machine");
  module->setDataLayout(machine->createDataLayout());
  llvm::legacy::PassManager passes;
  llvm::SmallString<0> assembly;
  llvm::raw_svector_ostream stream(assembly);
  if (machine->addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    return absl::InternalError("the host target cannot emit assembly");
  }
  passes.run(*module);
  return std::string(assembly.str());
}

std::string SiteName(const gpu::KernelSite& site) {
  return absl::StrCat("%", site.instruction->name());
}

absl::Status WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// The summary line of `loaded` on the CUDA backend: a copy goes through the
// CUDA pipeline and the GPU compiler in plan mode, the GPU libraries
// assumed present (as on a machine with a GPU), every kernel assembled by
// ptxas when there is one. An error (a kernel ptxas rejects, an op the GPU
// cannot run at all) fails the command, naming the module.
absl::StatusOr<std::string> CudaPlanSummary(const HloModule& loaded, int sm) {
  std::unique_ptr<HloModule> module = loaded.Clone();
  gpu::GpuPipelineOptions pipeline;
  pipeline.cublaslt = gpu::LibraryUse::kAvailable;
  pipeline.cudnn = gpu::LibraryUse::kAvailable;
  absl::Status optimized = gpu::OptimizeForGpu(*module, pipeline).status();
  if (!optimized.ok()) {
    return absl::Status(optimized.code(), absl::StrCat(loaded.name(), ": CUDA pipeline: ",
                                                       optimized.message()));
  }
  gpu::GpuProgramOptions options;
  options.cublaslt = gpu::LibraryUse::kAvailable;
  options.cudnn = gpu::LibraryUse::kAvailable;
  options.codegen.target = gpu::GpuTarget::ForComputeCapability(sm);
  const std::string ptxas = gpu::PtxasPath(options.codegen);
  const bool have_ptxas = access(ptxas.c_str(), X_OK) == 0;
  options.codegen.assemble = have_ptxas;
  absl::StatusOr<std::unique_ptr<gpu::GpuProgram>> program = gpu::CompileForGpu(*module, options);
  if (!program.ok()) {
    return absl::Status(program.status().code(), absl::StrCat(loaded.name(), ": GPU compiler: ",
                                                              program.status().message()));
  }
  const gpu::GpuCompileReport& report = (*program)->report();
  std::string line = absl::StrCat(loaded.name(), ": cuda sm_", sm, ": ", report.kernels,
                                  " kernels (", report.fused_kernels, " fused), ",
                                  report.library_calls, " library calls, interpreter ops: ",
                                  report.interpreter_calls);
  if (!report.interpreter_ops.empty()) {
    // "%fft.2 (fft) runs in the interpreter: no GPU kernel for fft" -> "%fft.2 (fft): no ...".
    std::vector<std::string> ops;
    for (const std::string& op : report.interpreter_ops) {
      ops.push_back(absl::StrReplaceAll(op, {{" runs in the interpreter:", ":"}}));
    }
    absl::StrAppend(&line, " [", absl::StrJoin(ops, "; "), "]");
  }
  if (!have_ptxas) {
    absl::StrAppend(&line, "; ptxas not run (none at ", ptxas, ")");
  } else if (report.kernels > 0) {
    absl::StrAppend(&line, "; ptxas accepted every kernel");
  }
  return line;
}

struct CompileFlags {
  std::string target, emit, output;
  int sm = 90;
  std::string pipeline;
};

absl::StatusOr<CompileFlags> ParseFlags(const Args& args) {
  CompileFlags flags;
  flags.target = args.Get("target", "cuda");
  flags.emit = args.Get("emit", flags.target == "cuda" ? "ptx" : "llvm");
  flags.output = args.Get("output");
  flags.pipeline = args.Get("pipeline", "default");
  // `-o OUT` arrives as two positional arguments.
  for (size_t i = 1; i < args.positional.size(); ++i) {
    if (args.positional[i] == "-o" && i + 1 < args.positional.size()) {
      flags.output = args.positional[i + 1];
      ++i;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", args.positional[i], "'"));
    }
  }
  HLOC_ASSIGN_OR_RETURN(int64_t sm, args.GetInt("sm", 90));
  if (sm != 80 && sm != 86 && sm != 89 && sm != 90) {
    return absl::InvalidArgumentError(absl::StrCat("--sm wants 80, 86, 89 or 90, got ", sm));
  }
  flags.sm = static_cast<int>(sm);
  if (flags.target == "cuda") {
    if (flags.emit == "asm") flags.emit = "ptx";
    if (flags.emit != "llvm" && flags.emit != "ptx" && flags.emit != "cubin") {
      return absl::InvalidArgumentError("--target=cuda emits llvm, ptx, asm (= ptx) or cubin");
    }
    if (flags.emit == "cubin" && flags.output.empty()) {
      return absl::InvalidArgumentError("--emit=cubin writes files: give -o DIR");
    }
  } else if (flags.target == "host") {
    if (flags.emit != "llvm" && flags.emit != "asm") {
      return absl::InvalidArgumentError("--target=host emits llvm or asm");
    }
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --target '", flags.target, "' (cuda or host)"));
  }
  return flags;
}

absl::Status RunCompile(const Args& args) {
  HLOC_ASSIGN_OR_RETURN(CompileFlags flags, ParseFlags(args));
  HLOC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<HloModule>> modules,
                        LoadVerifiedModules(args.positional[0]));
  gpu::GpuCompileOptions gpu_options;
  gpu_options.target = gpu::GpuTarget::ForComputeCapability(flags.sm);
  gpu_options.assemble = flags.emit == "cubin";
  std::shared_ptr<host::KernelCompiler> host_compiler;
  if (flags.target == "host") {
    host::KernelCompilerOptions host_options;
    host_options.cache = false;
    HLOC_ASSIGN_OR_RETURN(host_compiler, host::KernelCompiler::Create(host_options));
  }
  if (flags.emit == "cubin") mkdir(flags.output.c_str(), 0755);  // Exists already: fine.
  std::string text;   // Everything printed (or written to -o FILE).
  std::string index;  // kernels.txt for --emit=cubin.
  int64_t kernels = 0, not_covered = 0;
  std::vector<std::string> summaries;
  for (const std::unique_ptr<HloModule>& module : modules) {
    if (flags.target == "cuda") {
      HLOC_ASSIGN_OR_RETURN(std::string summary, CudaPlanSummary(*module, flags.sm));
      summaries.push_back(std::move(summary));
    }
    if (flags.pipeline == "cuda") {
      // The CUDA backend's own pipeline (gpu_pipeline.h): what `hloc run
      // --backend=cuda` compiles, row-normalization fusions included.
      gpu::GpuPipelineOptions cuda;
      cuda.cublaslt = gpu::LibraryUse::kAvailable;
      cuda.cudnn = gpu::LibraryUse::kAvailable;
      HLOC_RETURN_IF_ERROR(RemoveShardingAnnotations().Run(*module).status());
      HLOC_RETURN_IF_ERROR(gpu::OptimizeForGpu(*module, cuda).status());
    } else {
      HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> pipeline,
                            MakeStandardPipeline(flags.pipeline, PipelineOptions(), nullptr));
      HLOC_RETURN_IF_ERROR(pipeline->Run(*module).status());
    }
    gpu::KernelSites sites = gpu::CollectKernelSites(*module);
    for (size_t s = 0; s < sites.kernels.size(); ++s) {
      const gpu::KernelSite& site = sites.kernels[s];
      const std::string where = absl::StrCat(module->name(), " ", SiteName(site));
      if (flags.target == "host") {
        absl::StatusOr<std::string> ir = host_compiler->EmitIr(*site.computation, true);
        if (!ir.ok() && ir.status().code() == absl::StatusCode::kUnimplemented) {
          absl::StrAppend(&text, flags.emit == "asm" ? "# " : "; ", where, ": no kernel (",
                          ir.status().message(), ")\n");
          ++not_covered;
          continue;
        }
        if (!ir.ok()) return ir.status();
        ++kernels;
        if (flags.emit == "llvm") {
          absl::StrAppend(&text, "; ---- kernel for ", where, "\n", *ir, "\n");
        } else {
          HLOC_ASSIGN_OR_RETURN(std::string assembly, HostAssembly(*ir));
          absl::StrAppend(&text, "# ---- kernel for ", where, "\n", assembly, "\n");
        }
        continue;
      }
      absl::StatusOr<gpu::GpuKernel> kernel = gpu::CompileGpuKernel(*site.computation, gpu_options);
      const char* comment = flags.emit == "llvm" ? "; " : "// ";
      if (!kernel.ok() && kernel.status().code() == absl::StatusCode::kUnimplemented) {
        absl::StrAppend(&text, comment, where, ": no kernel (", kernel.status().message(), ")\n");
        ++not_covered;
        continue;
      }
      if (!kernel.ok()) {
        return absl::Status(kernel.status().code(),
                            absl::StrCat(where, ": ", kernel.status().message()));
      }
      ++kernels;
      const gpu::LaunchDims& l = kernel->launch;
      const std::string summary = absl::StrCat(
          kernel->name, " for ", where, ": ", kernel->strategy, ", grid ", l.grid[0], "x",
          l.grid[1], "x", l.grid[2], ", block ", l.block[0], "x", l.block[1], "x", l.block[2], ", ",
          kernel->num_buffers, " buffers (", kernel->num_inputs, " inputs)");
      if (flags.emit == "llvm") {
        absl::StrAppend(&text, "; ---- ", summary, "\n", kernel->llvm_ir, "\n");
      } else if (flags.emit == "ptx") {
        absl::StrAppend(&text, "// ---- ", summary, "\n", kernel->ptx, "\n");
      } else {
        if (kernel->cubin.empty()) {
          return absl::FailedPreconditionError(absl::StrCat(where, ": ", kernel->note));
        }
        HLOC_RETURN_IF_ERROR(
            WriteFile(absl::StrCat(flags.output, "/", kernel->name, ".cubin"), kernel->cubin));
        absl::StrAppend(&index, summary, "\n");
      }
    }
    for (const HloInstruction* op : sites.library_ops) {
      absl::StrAppend(&text,
                      flags.emit == "llvm"  ? "; "
                      : flags.emit == "asm" ? "# "
                                            : "// ",
                      module->name(), " %", op->name(), " (", HloOpcodeName(op->opcode()),
                      "): library call or fallback, no generated kernel\n");
    }
  }
  // The summaries go to stdout whatever -o says; in printed code they are
  // comments.
  std::string summary_text;
  for (const std::string& summary : summaries) {
    absl::StrAppend(&summary_text, flags.emit == "llvm" ? "; " : "// ", summary, "\n");
  }
  if (flags.emit == "cubin") {
    HLOC_RETURN_IF_ERROR(WriteFile(absl::StrCat(flags.output, "/kernels.txt"), index));
    std::fwrite(summary_text.data(), 1, summary_text.size(), stdout);
    std::fprintf(stdout, "%lld kernels written to %s (%lld not covered by generated kernels)\n",
                 static_cast<long long>(kernels), flags.output.c_str(),
                 static_cast<long long>(not_covered));
    return absl::OkStatus();
  }
  if (!flags.output.empty()) {
    std::fwrite(summary_text.data(), 1, summary_text.size(), stdout);
    return WriteFile(flags.output, text);
  }
  absl::StrAppend(&text, summary_text);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return absl::OkStatus();
}

}  // namespace

Command CompileCommand() {
  return {
      "compile",
      "print the LLVM IR, PTX or assembly of every kernel, or write cubins",
      "usage: hloc compile FILE [--target=cuda|host] [--emit=llvm|ptx|asm|cubin] [--sm=80|90]\n"
      "                    [--pipeline=NAME] [-o OUT | --output=OUT]\n"
      "  Runs the pipeline (default: 'default'; 'cuda': the CUDA backend's own, with\n"
      "  library calls assumed available and row-normalization fusions) and generates\n"
      "  every kernel of the module: each fusion, and each unfused elemental op as a\n"
      "  one-op kernel.\n"
      "  Ops that run in libraries or fallbacks (sort, scatter, custom calls, ...)\n"
      "  are listed as comments. Needs no GPU.\n"
      "  --target=cuda (default): --emit=llvm (optimized NVPTX IR, libdevice\n"
      "    linked), --emit=ptx or asm (PTX, the default), --emit=cubin (ptxas;\n"
      "    -o DIR gets one NAME.cubin per kernel and kernels.txt listing each\n"
      "    kernel's name, instruction, strategy, launch dims and buffers).\n"
      "    --sm picks the compute capability (default 90).\n"
      "  --target=host: --emit=llvm (optimized IR, the default) or --emit=asm\n"
      "    (assembly for this machine's CPU).\n"
      "  Text goes to stdout, or to the file -o names.\n"
      "  For CUDA, stdout also gets one summary line per module: what `hloc run\n"
      "  --backend=cuda` builds from it (the CUDA pipeline, then the GPU compiler with\n"
      "  the GPU libraries assumed present), as kernels, library calls and\n"
      "  'interpreter ops: N' (ops the GPU runs in the interpreter on the host,\n"
      "  listed), every kernel assembled by ptxas when there is one.\n",
      {{"target", false}, {"emit", false}, {"sm", false}, {"pipeline", false}, {"output", false}},
      1,
      3,
      RunCompile};
}

}  // namespace hloc::tools
