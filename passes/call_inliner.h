// Call inlining: replaces each plain `call` by the body of its callee. Outlined
// library calls (composite calls: is_composite=true with a composite.name) are
// left alone unless their name is listed in `inline_composites` — the way a
// backend that lacks a library op turns it back into plain HLO.
#ifndef HLOC_PASSES_CALL_INLINER_H_
#define HLOC_PASSES_CALL_INLINER_H_

#include <string>

#include "absl/container/flat_hash_set.h"
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

}  // namespace hloc

#endif  // HLOC_PASSES_CALL_INLINER_H_
