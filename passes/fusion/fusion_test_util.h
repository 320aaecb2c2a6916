// Helpers for the fusion tests: parse HLO text, run a pass, verify, and
// describe the fusions that came out (by the opcodes they hold, which do not
// depend on how the builder renamed copies).
#ifndef HLOC_PASSES_FUSION_FUSION_TEST_UTIL_H_
#define HLOC_PASSES_FUSION_FUSION_TEST_UTIL_H_

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "passes/pass.h"
#include "passes/test_util.h"

namespace hloc {
namespace fusion_test {

// Parses and verifies (passes/test_util.h); nullptr and a test failure on error.
inline std::unique_ptr<HloModule> Parse(absl::string_view text) {
  return testing::ParseAndVerifyOrFail(text);
}

// Runs `pass`, checks the module still verifies; returns whether it changed.
inline bool RunAndVerify(HloPass& pass, HloModule& module) {
  absl::StatusOr<bool> changed = testing::RunAndVerify(pass, module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  return changed.ok() && *changed;
}

// Fusion instructions of the entry, in post order.
inline std::vector<const HloInstruction*> EntryFusions(const HloModule& module) {
  std::vector<const HloInstruction*> fusions;
  for (const HloInstruction* i : module.entry()->MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kFusion) fusions.push_back(i);
  }
  return fusions;
}

// "add,broadcast,exponential": sorted opcodes of a fusion's fused
// computation, parameters and a tuple root left out.
inline std::string BodyOpcodes(const HloInstruction& fusion) {
  std::vector<std::string> names;
  const HloComputation* body = fusion.fused_computation();
  body->ForEachInstruction([&](HloInstruction* i) {
    if (i->opcode() == HloOpcode::kParameter) return;
    if (i == body->root() && i->opcode() == HloOpcode::kTuple) return;
    names.emplace_back(HloOpcodeName(i->opcode()));
  });
  std::sort(names.begin(), names.end());
  return absl::StrJoin(names, ",");
}

// Opcodes of the entry outside fusions, sorted (parameters left out).
inline std::string EntryOpcodes(const HloModule& module) {
  std::vector<std::string> names;
  module.entry()->ForEachInstruction([&](HloInstruction* i) {
    if (i->opcode() != HloOpcode::kParameter) names.emplace_back(HloOpcodeName(i->opcode()));
  });
  std::sort(names.begin(), names.end());
  return absl::StrJoin(names, ",");
}

inline int64_t OutputCount(const HloInstruction& fusion) {
  const HloInstruction* root = fusion.fused_computation()->root();
  return root->opcode() == HloOpcode::kTuple ? root->operand_count() : 1;
}

}  // namespace fusion_test
}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_FUSION_TEST_UTIL_H_
