// Random differential testing's shared loop (see differential_driver.h).
#include "tests/random/differential_driver.h"

#include <chrono>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "hlo/text_printer.h"
#include "passes/dead_code_elimination.h"

namespace hloc::random_hlo {

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  int64_t parsed;
  return value != nullptr && absl::SimpleAtoi(value, &parsed) ? parsed : fallback;
}

Tolerance RandomTolerance(PrimitiveType type) {
  switch (type) {
    case xla::F64: return {1e-9, 1e-9};
    case xla::F32: case xla::C64: return {1e-4, 1e-5};
    case xla::F16: return {1e-2, 1e-3};
    case xla::BF16: return {4e-2, 1e-2};
    // f8/f4: the generator builds them only from exact values with ops every
    // backend reproduces bit for bit (random_module.h); one rounding step
    // would be past any tolerance worth having.
    default:
      if (IsNarrowFloat(type)) return {0.0, 0.0};
      return {};  // integers and pred: exact
  }
}

std::string Difference(const Literal& expected, const Literal& actual,
                       const std::function<Tolerance(PrimitiveType)>& tolerance_for) {
  if (expected.shape().IsTuple() && actual.shape().IsTuple() &&
      expected.tuple_elements().size() == actual.tuple_elements().size()) {
    for (size_t i = 0; i < expected.tuple_elements().size(); ++i) {
      std::string d =
          Difference(expected.tuple_elements()[i], actual.tuple_elements()[i], tolerance_for);
      if (!d.empty()) return absl::StrCat("tuple element ", i, ": ", d);
    }
    return "";
  }
  ComparisonReport report =
      CompareLiterals(expected, actual, tolerance_for(expected.shape().element_type()));
  return report.ok ? "" : report.ToString();
}

std::string CountsText(const std::map<std::string, int>& counts) {
  std::string text;
  for (const auto& [name, n] : counts) absl::StrAppend(&text, " ", name, ":", n);
  return text;
}

std::unique_ptr<HloModule> WithRoot(const HloModule& module, const std::string& root_name) {
  std::unique_ptr<HloModule> copy = module.Clone();
  HloComputation* entry = copy->entry();
  for (HloInstruction* instruction : entry->instructions()) {
    if (instruction->name() == root_name) entry->set_root(instruction);
  }
  DeadCodeElimination dce;
  (void)dce.Run(*copy);
  return copy;
}

namespace {

// The earliest instruction of the entry whose prefix module still fails.
std::unique_ptr<HloModule> Shrink(const DifferentialRun& run, const HloModule& module,
                                  uint64_t seed) {
  for (const HloInstruction* instruction : module.entry()->MakeInstructionPostOrder()) {
    if (instruction->opcode() == HloOpcode::kParameter) continue;
    std::unique_ptr<HloModule> prefix = WithRoot(module, instruction->name());
    if (!run.check(*prefix, seed).empty()) return prefix;
  }
  return module.Clone();
}

}  // namespace

std::string DifferentialSummary::ToString() const {
  return absl::StrFormat("seeds %d..%d, %d modules (%d instructions) in %.1fs, %d failing",
                         first_seed, first_seed + count - 1, count, instructions, seconds,
                         failures);
}

DifferentialSummary RunDifferential(const DifferentialRun& run) {
  DifferentialSummary summary;
  summary.first_seed = EnvInt("HLOC_RANDOM_SEED", 1);
  const int64_t seconds = EnvInt("HLOC_RANDOM_SECONDS", run.default_seconds);
  summary.max_count = EnvInt("HLOC_RANDOM_COUNT", run.default_count);
  summary.options.max_instructions =
      static_cast<int>(EnvInt("HLOC_RANDOM_MAX_INSTRUCTIONS", 14));
  summary.options.narrow_types = EnvInt("HLOC_RANDOM_NARROW_TYPES", 1) != 0;
  summary.options.layouts = EnvInt("HLOC_RANDOM_LAYOUTS", 1) != 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t seed = summary.first_seed; summary.count < summary.max_count; ++seed) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(seconds)) break;
    std::unique_ptr<HloModule> module =
        GenerateRandomModule(static_cast<uint64_t>(seed), summary.options);
    ++summary.count;
    for (const HloComputation* computation : module->computations()) {
      for (const HloInstruction* instruction : computation->instructions()) {
        ++summary.opcodes[std::string(HloOpcodeName(instruction->opcode()))];
        ++summary.instructions;
      }
    }
    const std::string failure = run.check(*module, static_cast<uint64_t>(seed));
    if (failure.empty()) continue;
    ++summary.failures;
    std::unique_ptr<HloModule> shrunk = Shrink(run, *module, static_cast<uint64_t>(seed));
    ADD_FAILURE() << "seed " << seed << ": " << failure << "\nreproduce: bazel test "
                  << run.target << " --test_env=HLOC_RANDOM_SEED=" << seed
                  << " --test_env=HLOC_RANDOM_COUNT=1 --test_env=HLOC_RANDOM_MAX_INSTRUCTIONS="
                  << summary.options.max_instructions
                  << " --test_env=HLOC_RANDOM_NARROW_TYPES=" << summary.options.narrow_types
                  << " --test_env=HLOC_RANDOM_LAYOUTS=" << summary.options.layouts
                  << "\nshrunk module ("
                  << run.check(*shrunk, static_cast<uint64_t>(seed)) << "):\n"
                  << PrintModule(*shrunk) << "\nwhole module:\n"
                  << PrintModule(*module);
    if (summary.failures >= 5) break;
  }
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace hloc::random_hlo
