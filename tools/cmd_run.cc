// hloc run FILE: evaluate a module on arguments from a snapshot or drawn from
// a seed, print a summary of each output, optionally save the result.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/run_on_gpu.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/run_on_host.h"
#include "passes/standard_pipelines.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/loader.h"
#include "hlo/status_macros.h"
#include "hlo/text_printer.h"
#include "tools/command.h"
#include "tools/literal_files.h"
#include "tools/module_files.h"

namespace hloc::tools {
namespace {

// The module, and arguments: from --inputs, from FILE itself when it is a
// snapshot, else random from --seed (default 0).
absl::StatusOr<LoadedSnapshot> LoadModuleAndArguments(const Args& args) {
  const std::string& path = args.positional[0];
  LoadedSnapshot run;
  bool have_arguments = false;
  if (FormatFromPath(path) == FileFormat::kProto && !args.Has("seed")) {
    absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
    if (snapshot.ok() && !snapshot->arguments.empty()) {
      run = *std::move(snapshot);
      have_arguments = true;
    }
  }
  if (!run.module) {
    HLOC_ASSIGN_OR_RETURN(run.module, LoadSingleModule(path));
  }
  // Before arguments are drawn for it or any backend looks at it.
  HLOC_RETURN_IF_ERROR(VerifyLoadedModule(*run.module, path));
  if (args.Has("inputs")) {
    HLOC_ASSIGN_OR_RETURN(LoadedSnapshot inputs, LoadSnapshotFromFile(args.Get("inputs")));
    run.arguments = std::move(inputs.arguments);
    have_arguments = true;
  }
  if (!have_arguments) {
    HLOC_ASSIGN_OR_RETURN(int64_t seed, args.GetInt("seed", 0));
    HLOC_ASSIGN_OR_RETURN(run.arguments,
                          MakeRandomArguments(*run.module, static_cast<uint64_t>(seed)));
  }
  run.result.reset();
  return run;
}

// Compiles with the host pipeline (outlining, inlining of composites the host
// has no library for, fusion) and runs on the host backend; the module in
// `run` stays as loaded.
absl::StatusOr<Literal> RunWithHostBackend(const LoadedSnapshot& run, const Args& args) {
  std::unique_ptr<HloModule> optimized = run.module->Clone();
  if (args.Get("no-opt") != "true") {
    HLOC_RETURN_IF_ERROR(host::OptimizeForHost(*optimized).status());
  }
  return RunOnHost(*optimized, run.arguments);
}

// Compiles with the CUDA pipeline (library calls, fusion) and runs on GPU 0.
absl::StatusOr<Literal> RunWithCudaBackend(const LoadedSnapshot& run, const Args& args) {
  const std::string reason = gpu::GpuUnavailableReason();
  if (!reason.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--backend=cuda: no usable GPU here: ", reason));
  }
  std::unique_ptr<HloModule> optimized = run.module->Clone();
  if (args.Get("no-opt") != "true") {
    HLOC_RETURN_IF_ERROR(gpu::OptimizeForGpu(*optimized).status());
  }
  return gpu::RunOnGpu(*optimized, run.arguments);
}

absl::Status RunRun(const Args& args) {
  std::string backend = args.Get("backend", "auto");
  // auto: the CUDA backend when a driver loads and a device exists.
  if (backend == "auto") backend = gpu::GpuUnavailableReason().empty() ? "cuda" : "host";
  if (backend != "interpreter" && backend != "host" && backend != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown backend '", backend, "' (have: auto, cuda, host, interpreter)"));
  }
  HLOC_ASSIGN_OR_RETURN(LoadedSnapshot run, LoadModuleAndArguments(args));
  HLOC_ASSIGN_OR_RETURN(Literal result, backend == "host"   ? RunWithHostBackend(run, args)
                                        : backend == "cuda" ? RunWithCudaBackend(run, args)
                                                            : Evaluate(*run.module, run.arguments));
  std::fputs(SummarizeLiteral(result).c_str(), stdout);
  if (args.Get("print") == "true") std::printf("%s\n", result.ToString().c_str());
  if (args.Has("output")) {
    run.result = std::move(result);
    run.execution_platform = absl::StrCat("hloc-", backend);
    HLOC_RETURN_IF_ERROR(WriteSnapshot(run, args.Get("output")));
  }
  return absl::OkStatus();
}

}  // namespace

Command RunCommand() {
  return {"run", "evaluate a module and summarize its outputs",
          "usage: hloc run FILE [--backend=auto|cuda|host|interpreter] [--inputs=SNAPSHOT.pb | --seed=N]\n"
          "                [--output=OUT.pb] [--print] [--no-opt]\n"
          "  --backend=host compiles with the host pipeline (library outlining, fusion;\n"
          "  --no-opt skips it) and runs LLVM-JIT kernels on the CPU; cuda compiles with the\n"
          "  CUDA pipeline and runs NVPTX kernels and cuBLASLt/cuDNN calls on GPU 0 (an error\n"
          "  saying why when no driver or device is usable); auto is cuda when a CUDA driver\n"
          "  loads and a device exists, else host; interpreter is the reference interpreter.\n"
          "  Arguments come from --inputs (an HloSnapshot), from FILE itself when it is a\n"
          "  snapshot with arguments, or are drawn deterministically from --seed (default 0;\n"
          "  type-appropriate ranges, index operands kept in range). Prints shape, min, max,\n"
          "  mean, NaN count and checksum per output. --output writes an HloSnapshot with the\n"
          "  module, arguments and result; --print prints the result literal.\n",
          {{"backend", false}, {"inputs", false}, {"seed", false}, {"output", false},
           {"print", true}, {"no-opt", true}},
          1, 1, RunRun};
}

}  // namespace hloc::tools
