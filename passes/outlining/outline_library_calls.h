// OutlineLibraryCalls: finds the subgraphs of the library pattern table
// (library_patterns.h) and turns each into a `call` of a new computation that
// carries XLA's composite attributes:
//
//   %gemm_bias_relu = f32[8,64] call(%x, %w, %b), to_apply=%hloc.gemm_bias_relu,
//       is_composite=true, frontend_attributes={composite.name="hloc.gemm_bias_relu",
//       composite.attributes={...}, composite.version="1"}
//
// The identity of the call lives in those attributes, not in any name, so it
// survives renaming and text/proto round trips. Backends map the names they
// implement to library operations; InlineUnsupportedLibraryCalls
// (library_capabilities.h) turns the others back into plain HLO.
//
// Per computation, in three steps:
//   1. match every pattern at every instruction; run each match's check
//      (refusals are recorded);
//   2. order the accepted matches: priority, then size (members), then table
//      order, then program order (post order of the computation);
//   3. take them in that order. A match overlapping one already outlined is
//      superseded (cheap members — constants, iotas, broadcasts and reshapes of
//      values outside the match — may be shared: each call gets its own copy
//      and the original stays for its other users). An intermediate value used
//      outside the match is returned as an extra tuple output or refuses the
//      match, as the pattern's policy says. A match whose outlining would close
//      a cycle is refused. A refused match leaves room for smaller ones.
//
// Every decision goes into the ledger (fusion_ledger.h) under the pass name
// "outline-library-calls"; afterwards every dot and convolution left in place
// gets a "not-outlined" entry that gathers why.
//
// Plain calls should be inlined first (JAX wraps relu and where in calls);
// fusion treats the composite calls as opaque (calls are kOpaque in
// fusion_rules.h).
#ifndef HLOC_PASSES_OUTLINING_OUTLINE_LIBRARY_CALLS_H_
#define HLOC_PASSES_OUTLINING_OUTLINE_LIBRARY_CALLS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/outlining/library_patterns.h"
#include "passes/pass.h"

namespace hloc {

struct LibraryOutliningOptions {
  LibraryCheckOptions check;
  // Pattern names left out of matching.
  absl::flat_hash_set<std::string> disabled_patterns;
};

// What one Run did, for reports (bench/RESULTS.md) and tests.
struct LibraryOutliningStats {
  std::map<std::string, int64_t> outlined;  // pattern name -> calls made
  int64_t dots = 0, dots_outlined = 0;
  int64_t convolutions = 0, convolutions_outlined = 0;
  // Dots and convolutions left in place, with why.
  std::vector<std::pair<std::string, std::string>> not_outlined;
};

class OutlineLibraryCalls : public HloPass {
 public:
  explicit OutlineLibraryCalls(std::vector<LibraryPattern> patterns = DefaultLibraryPatterns(),
                               LibraryOutliningOptions options = {},
                               FusionLedger* ledger = nullptr);
  static constexpr absl::string_view kPassName = "outline-library-calls";
  absl::string_view name() const override { return kPassName; }
  absl::StatusOr<bool> Run(HloModule& module) override;

  const LibraryOutliningStats& stats() const { return stats_; }

 private:
  absl::StatusOr<bool> RunOnComputation(HloComputation* computation);
  void Record(const HloComputation& computation, absl::string_view event,
              std::vector<std::string> subjects, bool accepted, absl::string_view pattern,
              std::string reason, std::string result = "");

  std::vector<LibraryPattern> patterns_;
  LibraryOutliningOptions options_;
  FusionLedger* ledger_;
  LibraryOutliningStats stats_;
};

// The composite.name of a library call, or nullptr for any other instruction.
const std::string* LibraryCallName(const HloInstruction& instruction);

}  // namespace hloc

#endif  // HLOC_PASSES_OUTLINING_OUTLINE_LIBRARY_CALLS_H_
