// hloc verify FILE: parse/load and run the verifier on every module in FILE.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "tools/command.h"
#include "tools/module_files.h"

namespace hloc::tools {
namespace {

absl::Status RunVerify(const Args& args) {
  const std::string& path = args.positional[0];
  HLOC_ASSIGN_OR_RETURN(auto modules, LoadModules(path));
  for (const auto& module : modules) HLOC_RETURN_IF_ERROR(VerifyLoadedModule(*module, path));
  std::printf("%s: %zu module(s) OK\n", path.c_str(), modules.size());
  return absl::OkStatus();
}

}  // namespace

Command VerifyCommand() {
  return {"verify", "check that a module is well formed",
          "usage: hloc verify FILE\n"
          "  Loads every module in FILE and runs the verifier (operand counts, shapes,\n"
          "  called-computation signatures, names, ids, cycles). Exit code 1 and the\n"
          "  first violation on failure.\n",
          {}, 1, 1, RunVerify};
}

}  // namespace hloc::tools
