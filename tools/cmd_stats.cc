// hloc stats FILE: instructions by opcode, computations, parameter and
// constant bytes of each module.
#include <algorithm>
#include <cstdio>
#include <map>

#include "hlo/status_macros.h"
#include "tools/command.h"
#include "tools/module_files.h"

namespace hloc::tools {
namespace {

void PrintStats(const HloModule& module) {
  std::map<std::string, int64_t> by_opcode;
  int64_t instructions = 0;
  int64_t constant_bytes = 0;
  int64_t fusions = 0;
  for (HloComputation* computation : module.computations()) {
    computation->ForEachInstruction([&](HloInstruction* i) {
      ++instructions;
      ++by_opcode[std::string(HloOpcodeName(i->opcode()))];
      if (i->opcode() == HloOpcode::kConstant) {
        constant_bytes += i->shape().CheckedByteSize().value_or(0);
      }
      if (i->opcode() == HloOpcode::kFusion) ++fusions;
    });
  }
  int64_t parameter_bytes = 0;
  if (module.entry()) {
    for (HloInstruction* p : module.entry()->parameters()) {
      if (p) parameter_bytes += p->shape().CheckedByteSize().value_or(0);
    }
  }
  std::printf("module %s\n", module.name().c_str());
  std::printf("  computations:      %lld\n", static_cast<long long>(module.computation_count()));
  std::printf("  instructions:      %lld\n", static_cast<long long>(instructions));
  std::printf("  fusions:           %lld\n", static_cast<long long>(fusions));
  std::printf("  entry parameters:  %lld (%lld bytes)\n",
              static_cast<long long>(module.entry() ? module.entry()->num_parameters() : 0),
              static_cast<long long>(parameter_bytes));
  std::printf("  constant bytes:    %lld\n", static_cast<long long>(constant_bytes));
  std::vector<std::pair<std::string, int64_t>> sorted(by_opcode.begin(), by_opcode.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::printf("  by opcode:\n");
  for (const auto& [name, count] : sorted) {
    std::printf("    %-28s %lld\n", name.c_str(), static_cast<long long>(count));
  }
}

absl::Status RunStats(const Args& args) {
  HLOC_ASSIGN_OR_RETURN(auto modules, LoadVerifiedModules(args.positional[0]));
  for (const auto& module : modules) PrintStats(*module);
  return absl::OkStatus();
}

}  // namespace

Command StatsCommand() {
  return {"stats", "count instructions by opcode, computations and bytes",
          "usage: hloc stats FILE\n"
          "  For every module in FILE: computations, instructions, fusions, entry\n"
          "  parameter bytes, constant bytes, and instructions by opcode.\n",
          {}, 1, 1, RunStats};
}

}  // namespace hloc::tools
