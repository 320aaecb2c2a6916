// Helpers shared by the outlining tests: parse HLO text, find instructions and
// library calls, locate the JAX zoo, run the outliner with a ledger.
#ifndef HLOC_PASSES_OUTLINING_OUTLINING_TEST_HELPERS_H_
#define HLOC_PASSES_OUTLINING_OUTLINING_TEST_HELPERS_H_

#include <memory>
#include <string>
#include <vector>

#include "hlo/module.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/outlining/outline_library_calls.h"

namespace hloc::outlining_testing {

// Parses and verifies; fails the current test (returns nullptr) on error.
std::unique_ptr<HloModule> ParseOrDie(absl::string_view text);
// Reads a file of the workspace (runfiles under bazel test).
std::string ReadWorkspaceFile(const std::string& relative_path);
std::string WorkspacePath(const std::string& relative_path);

HloInstruction* FindInstruction(const HloModule& module, absl::string_view name);
// Composite calls in the entry computation, in post order.
std::vector<HloInstruction*> LibraryCalls(const HloModule& module);
std::vector<std::string> LibraryCallNames(const HloModule& module);
// The composite attribute `key` of `call` ("" when absent).
std::string CompositeAttribute(const HloInstruction& call, absl::string_view key);

// Inlines plain calls, runs the outliner with `patterns` and `options`,
// verifies the result (failing the test if invalid) and returns the stats.
LibraryOutliningStats Outline(HloModule& module, FusionLedger* ledger,
                              std::vector<LibraryPattern> patterns = DefaultLibraryPatterns(),
                              LibraryOutliningOptions options = {});

// Ledger entries of the outliner with `event` (and `rule`, when not empty).
std::vector<const LedgerEntry*> Entries(const FusionLedger& ledger, absl::string_view event,
                                        absl::string_view rule = "");

}  // namespace hloc::outlining_testing

#endif  // HLOC_PASSES_OUTLINING_OUTLINING_TEST_HELPERS_H_
