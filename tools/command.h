// Subcommand registry and argument parsing shared by the hloc tools.
#ifndef HLOC_TOOLS_COMMAND_H_
#define HLOC_TOOLS_COMMAND_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace hloc::tools {

// Parsed command line of one subcommand: positional arguments and
// --name=value / --name value / --flag options.
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
  bool help = false;

  bool Has(const std::string& name) const { return options.count(name) > 0; }
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  absl::StatusOr<double> GetDouble(const std::string& name, double fallback) const;
  absl::StatusOr<int64_t> GetInt(const std::string& name, int64_t fallback) const;
};

struct Command {
  const char* name;
  const char* summary;
  const char* help;  // Full usage text for --help.
  // Options this command accepts; `boolean` ones take no value.
  std::vector<std::pair<std::string, bool>> options;  // (name, boolean)
  int min_positional;
  int max_positional;
  absl::Status (*run)(const Args& args);
};

const std::vector<Command>& AllCommands();

// Parses argv against `command`'s option list; unknown options and wrong
// positional counts are errors.
absl::StatusOr<Args> ParseArgs(const Command& command, int argc, char** argv);

// Commands, one per file.
Command ConvertCommand();
Command VerifyCommand();
Command PrintCommand();
Command StatsCommand();
Command RunCommand();
Command CompareCommand();
Command OptCommand();
Command ExplainCommand();
Command GraphCommand();
Command CompileCommand();

}  // namespace hloc::tools

#endif  // HLOC_TOOLS_COMMAND_H_
