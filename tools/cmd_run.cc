// hloc run FILE: evaluate a module on arguments from a snapshot or drawn from
// a seed, print a summary of each output, optionally save the result.
#include <cstdio>

#include "absl/strings/str_cat.h"
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

absl::Status RunRun(const Args& args) {
  std::string backend = args.Get("backend", "auto");
  if (backend == "auto") backend = "interpreter";  // The only backend built so far.
  if (backend != "interpreter") {
    return absl::UnimplementedError(
        absl::StrCat("backend '", backend, "' is not available in this build (have: interpreter)"));
  }
  HLOC_ASSIGN_OR_RETURN(LoadedSnapshot run, LoadModuleAndArguments(args));
  HLOC_ASSIGN_OR_RETURN(Literal result, Evaluate(*run.module, run.arguments));
  std::fputs(SummarizeLiteral(result).c_str(), stdout);
  if (args.Get("print") == "true") std::printf("%s\n", result.ToString().c_str());
  if (args.Has("output")) {
    run.result = std::move(result);
    run.execution_platform = "hloc-interpreter";
    HLOC_RETURN_IF_ERROR(WriteSnapshot(run, args.Get("output")));
  }
  return absl::OkStatus();
}

}  // namespace

Command RunCommand() {
  return {"run", "evaluate a module and summarize its outputs",
          "usage: hloc run FILE [--backend=interpreter|auto] [--inputs=SNAPSHOT.pb | --seed=N]\n"
          "                [--output=OUT.pb] [--print]\n"
          "  Arguments come from --inputs (an HloSnapshot), from FILE itself when it is a\n"
          "  snapshot with arguments, or are drawn deterministically from --seed (default 0;\n"
          "  type-appropriate ranges, index operands kept in range). Prints shape, min, max,\n"
          "  mean, NaN count and checksum per output. --output writes an HloSnapshot with the\n"
          "  module, arguments and result; --print prints the result literal.\n",
          {{"backend", false}, {"inputs", false}, {"seed", false}, {"output", false},
           {"print", true}},
          1, 1, RunRun};
}

}  // namespace hloc::tools
