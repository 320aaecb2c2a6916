// The `hloc` command line: one binary, one subcommand per job. Each subcommand
// lives in its own file (tools/cmd_*.cc) and registers itself in kCommands.
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "tools/command.h"

namespace hloc::tools {
namespace {

void PrintUsage(FILE* out) {
  std::fprintf(out, "usage: hloc COMMAND [ARGS...]\n\ncommands:\n");
  for (const Command& command : AllCommands()) {
    std::fprintf(out, "  %-10s %s\n", command.name, command.summary);
  }
  std::fprintf(out, "\n'hloc COMMAND --help' describes one command.\n");
}

}  // namespace
}  // namespace hloc::tools

int main(int argc, char** argv) {
  using namespace hloc::tools;
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(stdout);
    return 0;
  }
  for (const Command& command : AllCommands()) {
    if (name != command.name) continue;
    absl::StatusOr<Args> args = ParseArgs(command, argc - 2, argv + 2);
    if (!args.ok()) {
      std::fprintf(stderr, "hloc %s: %s\n", command.name,
                   std::string(args.status().message()).c_str());
      return 2;
    }
    if (args->help) {
      std::fprintf(stdout, "%s", command.help);
      return 0;
    }
    absl::Status status;
    try {
      status = command.run(*args);
    } catch (const std::bad_alloc&) {  // memory a library allocates without a Status
      status = absl::ResourceExhaustedError("out of memory");
    }
    if (!status.ok()) {
      std::fprintf(stderr, "hloc %s: error: %s\n", command.name,
                   std::string(status.message()).c_str());
      return 1;
    }
    return 0;
  }
  std::fprintf(stderr, "hloc: unknown command '%s'\n\n", name.c_str());
  PrintUsage(stderr);
  return 2;
}
