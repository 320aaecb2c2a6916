// BuilderCallExpander: custom calls "xla_builder.*" that carry their own
// decomposition (hlo/builder_custom_calls.h) inlined, so every backend runs
// the decomposition as ordinary HLO. Decompositions nothing calls any more
// are removed. Runs first in the expand stage: what a decomposition holds
// (a scan, a select-and-scatter) is then expanded by the passes after it.
#ifndef HLOC_PASSES_EXPANDERS_BUILDER_CALL_EXPANDER_H_
#define HLOC_PASSES_EXPANDERS_BUILDER_CALL_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class BuilderCallExpander : public HloPass {
 public:
  absl::string_view name() const override { return "builder-call-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_BUILDER_CALL_EXPANDER_H_
