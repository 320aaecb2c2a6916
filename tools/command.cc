#include "tools/command.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hloc::tools {

std::string Args::Get(const std::string& name, const std::string& fallback) const {
  auto it = options.find(name);
  return it == options.end() ? fallback : it->second;
}

absl::StatusOr<double> Args::GetDouble(const std::string& name, double fallback) const {
  auto it = options.find(name);
  if (it == options.end()) return fallback;
  double value;
  if (!absl::SimpleAtod(it->second, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, " wants a number, got '",
                                                   it->second, "'"));
  }
  return value;
}

absl::StatusOr<int64_t> Args::GetInt(const std::string& name, int64_t fallback) const {
  auto it = options.find(name);
  if (it == options.end()) return fallback;
  int64_t value;
  if (!absl::SimpleAtoi(it->second, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, " wants an integer, got '",
                                                   it->second, "'"));
  }
  return value;
}

const std::vector<Command>& AllCommands() {
  static const std::vector<Command>* commands = new std::vector<Command>{
      ConvertCommand(), VerifyCommand(), PrintCommand(), StatsCommand(), RunCommand(),
      CompareCommand(), OptCommand(), ExplainCommand(), GraphCommand(), CompileCommand(),
  };
  return *commands;
}

absl::StatusOr<Args> ParseArgs(const Command& command, int argc, char** argv) {
  Args args;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      args.help = true;
      return args;
    }
    if (!absl::StartsWith(arg, "--") || arg == "--") {
      args.positional.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const std::pair<std::string, bool>* spec = nullptr;
    for (const auto& option : command.options) {
      if (option.first == name) spec = &option;
    }
    if (!spec) return absl::InvalidArgumentError(absl::StrCat("unknown option --", name));
    if (spec->second) {
      if (has_value && value != "true" && value != "false") {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " takes no value"));
      }
      args.options[name] = has_value ? value : "true";
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      value = argv[++i];
    }
    args.options[name] = value;
  }
  int n = static_cast<int>(args.positional.size());
  if (n < command.min_positional || n > command.max_positional) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", command.min_positional,
                     command.max_positional != command.min_positional
                         ? absl::StrCat(" to ", command.max_positional)
                         : std::string(),
                     " file argument(s), got ", n, " (see --help)"));
  }
  return args;
}

}  // namespace hloc::tools
