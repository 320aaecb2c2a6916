// hloc opt FILE: run a pass pipeline and print the optimized module;
// hloc explain FILE: run it and print the decision ledger instead.
#include <cstdio>

#include "absl/strings/str_split.h"
#include "hlo/status_macros.h"
#include "hlo/text_printer.h"
#include "passes/standard_pipelines.h"
#include "tools/command.h"
#include "tools/module_files.h"

namespace hloc::tools {
namespace {

absl::StatusOr<PipelineOptions> OptionsFromArgs(const Args& args) {
  PipelineOptions options;
  options.dump_to = args.Get("dump-to");
  for (absl::string_view name : absl::StrSplit(args.Get("disable-pass"), ',', absl::SkipEmpty())) {
    options.disabled_passes.insert(std::string(name));
  }
  HLOC_ASSIGN_OR_RETURN(int64_t level, args.GetInt("O", 1));
  options.optimization_level = static_cast<int>(level);
  return options;
}

// Runs the pipeline on the file's module; the ledger collects decisions.
absl::StatusOr<std::unique_ptr<HloModule>> Optimize(const Args& args, FusionLedger* ledger,
                                                    std::string* timing) {
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, LoadSingleVerifiedModule(args.positional[0]));
  HLOC_ASSIGN_OR_RETURN(PipelineOptions options, OptionsFromArgs(args));
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> pipeline,
                        MakeStandardPipeline(args.Get("pipeline", "default"), options, ledger));
  HLOC_RETURN_IF_ERROR(pipeline->Run(*module).status());
  *timing = pipeline->TimingReport();
  return module;
}

absl::Status RunOpt(const Args& args) {
  FusionLedger ledger(FusionLedger::Detail::kGroups);
  std::string timing;
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, Optimize(args, &ledger, &timing));
  std::string text = PrintModule(*module);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (args.Get("timing") == "true") std::fputs(timing.c_str(), stderr);
  return absl::OkStatus();
}

absl::Status RunExplain(const Args& args) {
  FusionLedger ledger;
  std::string timing;
  HLOC_RETURN_IF_ERROR(Optimize(args, &ledger, &timing).status());
  std::string out = args.Get("json") == "true" ? ledger.ToJson() : ledger.ToText();
  std::fwrite(out.data(), 1, out.size(), stdout);
  return absl::OkStatus();
}

const std::vector<std::pair<std::string, bool>> kPipelineFlags = {
    {"pipeline", false}, {"dump-to", false}, {"disable-pass", false}, {"O", false},
};

}  // namespace

Command OptCommand() {
  std::vector<std::pair<std::string, bool>> flags = kPipelineFlags;
  flags.push_back({"timing", true});
  return {"opt", "run a pass pipeline and print the optimized module",
          "usage: hloc opt FILE [--pipeline=default|simplify|outline|fusion|fallback]\n"
          "                [--dump-to=DIR] [--disable-pass=NAME[,NAME...]] [--O=0|1|2] [--timing]\n"
          "  Runs the pipeline (verifier between passes) and prints the module. --dump-to\n"
          "  writes NNN-PIPELINE-PASS.hlo after every pass that changed the module;\n"
          "  --timing prints per-pass times to stderr.\n",
          flags, 1, 1, RunOpt};
}

Command ExplainCommand() {
  std::vector<std::pair<std::string, bool>> flags = kPipelineFlags;
  flags.push_back({"json", true});
  return {"explain", "print every fusion decision and the rule behind it",
          "usage: hloc explain FILE [--pipeline=NAME] [--json] [pipeline flags as for opt]\n"
          "  Runs the pipeline like `hloc opt` and prints the decision ledger: every edge\n"
          "  and group considered, with the rule that allowed or refused it.\n",
          flags, 1, 1, RunExplain};
}

}  // namespace hloc::tools
