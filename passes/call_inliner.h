// Call inlining: replaces each plain `call` by the body of its callee. Outlined
// library calls (composite calls: is_composite=true with a composite.name) are
// left alone unless their name is listed in `inline_composites` — the way a
// backend that lacks a library op turns it back into plain HLO. Fusion
// inlining does the same for the fusions a module arrives with.
#ifndef HLOC_PASSES_CALL_INLINER_H_
#define HLOC_PASSES_CALL_INLINER_H_

#include <string>

#include "absl/container/flat_hash_set.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/pass.h"

namespace hloc {

class CallInliner : public HloPass {
 public:
  CallInliner() = default;
  // Also inline composite calls whose composite.name is in `names` ("*" = all).
  explicit CallInliner(absl::flat_hash_set<std::string> names)
      : inline_composites_(std::move(names)) {}
  absl::string_view name() const override { return "call-inliner"; }
  absl::StatusOr<bool> Run(HloModule& module) override;

  // Inlines one call instruction; returns the instruction now standing for
  // its value, or null when that was a tuple read only through
  // get-tuple-elements (each then reads its element directly, and the tuple
  // and those get-tuple-elements are gone). Since it frees instructions
  // besides `call`, a caller walking an instruction list picks its calls
  // first, then inlines them.
  static absl::StatusOr<HloInstruction*> InlineCall(HloInstruction* call);

 private:
  bool ShouldInline(const HloInstruction* call) const;
  absl::flat_hash_set<std::string> inline_composites_;
};

// Fusion inlining: replaces each `fusion` by its fused computation's
// instructions, so that a module arriving already fused (XLA's optimized
// modules: its loop and output fusions, XLA:CPU's YNNPACK dot fusions,
// XLA:GPU's custom fusions) is outlined and fused again by hloc's own
// passes for hloc's kernels and libraries. Run kept as XLA fused it, a dot
// inside a fusion would be a loop kernel computing one sum per element
// instead of a library gemm (100x slower on a BERT encoder). The host and
// GPU pipelines run it first; the pipeline "none" keeps a module's fusions.
// Each inlined fusion is a ledger entry (event "inlined", rule its kind).
class FusionInliner : public HloPass {
 public:
  explicit FusionInliner(FusionLedger* ledger = nullptr) : ledger_(ledger) {}
  absl::string_view name() const override { return "fusion-inliner"; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  FusionLedger* ledger_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_CALL_INLINER_H_
