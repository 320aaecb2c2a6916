#include "passes/test_util.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/evaluator/compare.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"

namespace hloc::testing {

absl::StatusOr<std::unique_ptr<HloModule>> ParseAndVerify(const std::string& text) {
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(text));
  HLOC_RETURN_IF_ERROR(VerifyModule(*module));
  return module;
}

std::unique_ptr<HloModule> ParseAndVerifyOrFail(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndVerify(std::string(text));
  if (!module.ok()) {
    ADD_FAILURE() << module.status();
    return nullptr;
  }
  return *std::move(module);
}

absl::StatusOr<bool> RunAndVerify(HloPass& pass, HloModule& module) {
  HLOC_ASSIGN_OR_RETURN(bool changed, pass.Run(module));
  absl::Status status = VerifyModule(module);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("invalid after ", pass.name(), ": ", status.message(),
                                            "\n", PrintModule(module)));
  }
  return changed;
}

absl::StatusOr<bool> RunAndCheckSemantics(HloPass& pass, HloModule& module, uint64_t seed) {
  HLOC_ASSIGN_OR_RETURN(std::vector<Literal> arguments, MakeRandomArguments(module, seed));
  HLOC_ASSIGN_OR_RETURN(Literal before, Evaluate(module, arguments));
  HLOC_ASSIGN_OR_RETURN(bool changed, RunAndVerify(pass, module));
  HLOC_ASSIGN_OR_RETURN(Literal after, Evaluate(module, arguments));
  ComparisonReport report = CompareLiterals(before, after);
  if (!report.ok) {
    return absl::InternalError(absl::StrCat(pass.name(), " changed the results: ", report.ToString()));
  }
  return changed;
}

int64_t CountOpcode(const HloModule& module, HloOpcode opcode) {
  int64_t count = 0;
  module.entry()->ForEachInstruction([&](HloInstruction* i) { count += i->opcode() == opcode; });
  return count;
}

}  // namespace hloc::testing
