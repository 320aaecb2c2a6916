// hloc print FILE: the canonical text of every module in FILE.
#include <cstdio>

#include "hlo/status_macros.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "tools/command.h"
#include "tools/module_files.h"

namespace hloc::tools {
namespace {

absl::Status RunPrint(const Args& args) {
  HLOC_ASSIGN_OR_RETURN(auto modules, LoadModules(args.positional[0]));
  PrintOptions options;
  options.print_metadata = args.Get("no-metadata") != "true";
  for (size_t i = 0; i < modules.size(); ++i) {
    if (args.Get("verify") == "true") HLOC_RETURN_IF_ERROR(VerifyModule(*modules[i]));
    if (i) std::fputs("\n// -----\n\n", stdout);
    std::string text = PrintModule(*modules[i], options);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return absl::OkStatus();
}

}  // namespace

Command PrintCommand() {
  return {"print", "print a module as canonical HLO text",
          "usage: hloc print FILE [--no-metadata] [--verify]\n"
          "  Prints every module in FILE (text or proto) in hloc's canonical HLO text.\n"
          "  --no-metadata  omit metadata={...}\n"
          "  --verify       run the verifier first\n",
          {{"no-metadata", true}, {"verify", true}}, 1, 1, RunPrint};
}

}  // namespace hloc::tools
