// Helpers for pass tests: parse HLO text, run a pass, verify, and compare the
// interpreter's results before and after.
#ifndef HLOC_PASSES_TEST_UTIL_H_
#define HLOC_PASSES_TEST_UTIL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hlo/module.h"
#include "passes/pass.h"

namespace hloc::testing {

// Parses and verifies; a failure is a test bug, reported as an error status.
absl::StatusOr<std::unique_ptr<HloModule>> ParseAndVerify(const std::string& text);

// The same for gtest bodies: on error fails the current test and returns
// nullptr. (fusion_test::Parse and outlining_testing::ParseOrDie are this.)
std::unique_ptr<HloModule> ParseAndVerifyOrFail(absl::string_view text);

// Runs `pass` and verifies the result; returns whether it changed the module.
absl::StatusOr<bool> RunAndVerify(HloPass& pass, HloModule& module);

// Evaluates `module` on seeded random arguments, runs `pass`, evaluates again
// and compares (exact for integers, tight tolerance for floats). Returns
// whether the pass changed the module.
absl::StatusOr<bool> RunAndCheckSemantics(HloPass& pass, HloModule& module, uint64_t seed = 1);

// Instructions of the entry computation with `opcode`.
int64_t CountOpcode(const HloModule& module, HloOpcode opcode);

}  // namespace hloc::testing

#endif  // HLOC_PASSES_TEST_UTIL_H_
