// The per-computation text report of library outlining decisions.
#include "passes/outlining/outlining_report.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/outlining/library_capabilities.h"
#include "passes/outlining/library_epilogue_fusion.h"
#include "passes/outlining/outline_library_calls.h"

namespace hloc {

std::string RenderLibraryOutliningReport(const FusionLedger& ledger) {
  // Computations in order of first appearance.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const LedgerEntry*>> by_computation;
  for (const LedgerEntry& e : ledger.entries()) {
    if (e.pass != OutlineLibraryCalls::kPassName &&
        e.pass != LibraryEpilogueFusion::kPassName &&
        e.pass != InlineUnsupportedLibraryCalls::kPassName) {
      continue;
    }
    auto& entries = by_computation[e.computation];
    if (entries.empty()) order.push_back(e.computation);
    entries.push_back(&e);
  }
  std::string out;
  for (const std::string& computation : order) {
    absl::StrAppend(&out, "computation ", computation, "\n");
    for (const LedgerEntry* e : by_computation[computation]) {
      const std::string root = e->subjects.empty() ? "?" : e->subjects[0];
      if (e->event == "outlined") {
        // The reason holds "numerics; attributes".
        size_t split = e->reason.rfind("; {");
        absl::StrAppend(&out, "  outlined      ", e->result, "  ", e->rule, " at ", root, " (",
                        e->subjects.size(), " instructions)\n");
        if (split != std::string::npos) {
          absl::StrAppend(&out, "                numerics: ", e->reason.substr(0, split), "\n",
                          "                attributes: ", e->reason.substr(split + 2), "\n");
        } else {
          absl::StrAppend(&out, "                ", e->reason, "\n");
        }
      } else if (e->event == "absorbed") {
        absl::StrAppend(&out, "  absorbed      ", e->result, "  now ", e->rule, ": ", e->reason,
                        "\n");
      } else if (e->pass == LibraryEpilogueFusion::kPassName) {
        absl::StrAppend(&out, "  kept out      ", e->rule, " ", root, ": ", e->reason, "\n");
      } else if (e->event == "not-outlined") {
        absl::StrAppend(&out, "  not outlined  ", root, ": ", e->reason, "\n");
      } else if (e->event == "inlined") {
        absl::StrAppend(&out, "  inlined       ", root, " (", e->rule, "): ", e->reason, "\n");
      } else {
        absl::StrAppend(&out, "  refused       ", e->rule, " at ", root, " [", e->event,
                        "]: ", e->reason, "\n");
      }
    }
  }
  return out;
}

}  // namespace hloc
