// Runs the fusion passes on one HLO text file and prints the result: a
// developer's tool for looking at fusion decisions.
//
//   bazel run //passes/fusion:fuse_file -- [flags] FILE.hlo
//     --post-dominator   group with post-dominator fusion (default: producer-consumer)
//     --fallback         make fallback fusions only
//     --no-multi-output --no-horizontal
//     --ledger=text|json print the decision ledger instead of the module
//     --twice            run the pipeline again and report whether it changed anything
//     --module=N         the N-th module of a file split by "// -----" (default 0)
//     --generated=N      instead of a file, a generated module of about N
//                        instructions (generated_graphs.h)
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "passes/fusion/fusion_pipeline.h"
#include "passes/fusion/generated_graphs.h"

int main(int argc, char** argv) {
  hloc::FusionPipelineOptions options;
  std::string ledger_format, path;
  bool twice = false;
  int64_t module_index = 0;
  int64_t generated = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--post-dominator") {
      options.grouping = hloc::FusionGrouping::kPostDominator;
    } else if (arg == "--fallback") {
      options.fallback = true;
    } else if (arg == "--no-multi-output") {
      options.multi_output = false;
    } else if (arg == "--no-horizontal") {
      options.horizontal = false;
    } else if (absl::StartsWith(arg, "--ledger=")) {
      ledger_format = arg.substr(9);
    } else if (arg == "--twice") {
      twice = true;
    } else if (absl::StartsWith(arg, "--module=")) {
      if (!absl::SimpleAtoi(arg.substr(9), &module_index)) module_index = -1;
    } else if (absl::StartsWith(arg, "--generated=")) {
      if (!absl::SimpleAtoi(arg.substr(12), &generated)) generated = -1;
    } else if (!absl::StartsWith(arg, "--")) {
      path = arg;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", arg.c_str());
      return 2;
    }
  }
  if ((path.empty() && generated <= 0) || module_index < 0) {
    std::fprintf(stderr, "usage: fuse_file [flags] FILE.hlo\n");
    return 2;
  }
  std::vector<std::unique_ptr<hloc::HloModule>> modules;
  if (generated > 0) {
    modules.push_back(hloc::MakeLayeredModule(generated));
  } else {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    hloc::ParseOptions parse_options;
    parse_options.filename = path;
    auto parsed = hloc::ParseHloModules(text.str(), parse_options);
    if (!parsed.ok()) {
      std::fprintf(stderr, "%s\n", std::string(parsed.status().message()).c_str());
      return 1;
    }
    modules = std::move(*parsed);
  }
  if (module_index >= static_cast<int64_t>(modules.size())) {
    std::fprintf(stderr, "%s has %zu modules\n", path.c_str(), modules.size());
    return 1;
  }
  hloc::HloModule& module = *modules[module_index];
  hloc::FusionLedger ledger;
  options.ledger = &ledger;
  hloc::HloPassPipeline pipeline("fusion");
  hloc::AddFusionPasses(pipeline, options);
  absl::StatusOr<bool> changed = pipeline.Run(module);
  if (!changed.ok()) {
    std::fprintf(stderr, "%s\n", std::string(changed.status().message()).c_str());
    return 1;
  }
  std::string once = hloc::PrintModule(module);
  if (ledger_format == "text") {
    std::cout << ledger.ToText();
  } else if (ledger_format == "json") {
    std::cout << ledger.ToJson();
  } else {
    std::cout << once;
  }
  std::cerr << pipeline.TimingReport();
  if (twice) {
    hloc::HloPassPipeline again("fusion-again");
    hloc::FusionPipelineOptions quiet = options;
    quiet.ledger = nullptr;
    hloc::AddFusionPasses(again, quiet);
    absl::StatusOr<bool> changed_again = again.Run(module);
    if (!changed_again.ok()) {
      std::fprintf(stderr, "%s\n", std::string(changed_again.status().message()).c_str());
      return 1;
    }
    if (*changed_again) {
      std::cerr << "second run CHANGED the module:\n" << hloc::PrintModule(module);
      return 3;
    }
    std::cerr << "second run changed nothing\n";
  }
  return 0;
}
