// Helpers shared by the outlining tests (see outlining_test_helpers.h).
#include "passes/outlining/outlining_test_helpers.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "passes/call_inliner.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/test_util.h"

namespace hloc::outlining_testing {

std::unique_ptr<HloModule> ParseOrDie(absl::string_view text) {
  return testing::ParseAndVerifyOrFail(text);
}

std::string WorkspacePath(const std::string& relative_path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return relative_path;
  return std::string(srcdir) + "/" + workspace + "/" + relative_path;
}

std::string ReadWorkspaceFile(const std::string& relative_path) {
  std::ifstream in(WorkspacePath(relative_path), std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << WorkspacePath(relative_path);
    return "";
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

HloInstruction* FindInstruction(const HloModule& module, absl::string_view name) {
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* i : c->instructions()) {
      if (i->name() == name) return i;
    }
  }
  return nullptr;
}

std::vector<HloInstruction*> LibraryCalls(const HloModule& module) {
  std::vector<HloInstruction*> calls;
  for (HloInstruction* i : module.entry()->MakeInstructionPostOrder()) {
    if (LibraryCallName(*i) != nullptr) calls.push_back(i);
  }
  return calls;
}

std::vector<std::string> LibraryCallNames(const HloModule& module) {
  std::vector<std::string> names;
  for (HloInstruction* call : LibraryCalls(module)) names.push_back(*LibraryCallName(*call));
  return names;
}

std::string CompositeAttribute(const HloInstruction& call, absl::string_view key) {
  const std::string* value = call.FindFrontendAttribute(key);
  return value == nullptr ? "" : *value;
}

LibraryOutliningStats Outline(HloModule& module, FusionLedger* ledger,
                              std::vector<LibraryPattern> patterns,
                              LibraryOutliningOptions options) {
  CallInliner inliner;
  absl::StatusOr<bool> inlined = inliner.Run(module);
  EXPECT_TRUE(inlined.ok()) << inlined.status();
  OutlineLibraryCalls pass(std::move(patterns), std::move(options), ledger);
  absl::StatusOr<bool> changed = pass.Run(module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  absl::Status valid = VerifyModule(module);
  EXPECT_TRUE(valid.ok()) << valid << "\n" << PrintModule(module);
  return pass.stats();
}

std::vector<const LedgerEntry*> Entries(const FusionLedger& ledger, absl::string_view event,
                                        absl::string_view rule) {
  std::vector<const LedgerEntry*> found;
  for (const LedgerEntry& e : ledger.entries()) {
    if (e.pass == OutlineLibraryCalls::kPassName && e.event == event &&
        (rule.empty() || e.rule == rule)) {
      found.push_back(&e);
    }
  }
  return found;
}

}  // namespace hloc::outlining_testing
