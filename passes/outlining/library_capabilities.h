// What a backend's libraries implement, and the pass that turns every other
// library call back into plain HLO. A backend declares the composite names it
// maps to library operations ("hloc.gemm", "hloc.conv_bias_relu", ...);
// InlineUnsupportedLibraryCalls inlines each composite call whose name is not
// among them (also composites the frontend made, e.g. JAX's), so the backend
// compiles their bodies like any other HLO.
#ifndef HLOC_PASSES_OUTLINING_LIBRARY_CAPABILITIES_H_
#define HLOC_PASSES_OUTLINING_LIBRARY_CAPABILITIES_H_

#include <string>

#include "absl/container/flat_hash_set.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/pass.h"

namespace hloc {

struct LibraryCapabilities {
  absl::flat_hash_set<std::string> names;
  bool Implements(absl::string_view name) const { return names.contains(name); }
  // Every name of the default pattern table and of the epilogue registry
  // (library_epilogues.h).
  static LibraryCapabilities AllDefaultPatterns();
};

class InlineUnsupportedLibraryCalls : public HloPass {
 public:
  explicit InlineUnsupportedLibraryCalls(LibraryCapabilities capabilities,
                                         FusionLedger* ledger = nullptr)
      : capabilities_(std::move(capabilities)), ledger_(ledger) {}
  static constexpr absl::string_view kPassName = "inline-unsupported-library-calls";
  absl::string_view name() const override { return kPassName; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  LibraryCapabilities capabilities_;
  FusionLedger* ledger_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_OUTLINING_LIBRARY_CAPABILITIES_H_
