// LayoutBitcastExpander: every bitcast whose layouts move elements becomes
// the transposes and reshape it stands for.
//
// hloc keeps arrays row-major in memory and treats layouts as metadata,
// except on a bitcast, which reinterprets memory the way its operand's and
// its own layout arrange it. XLA's optimized modules are full of such
// bitcasts (`f32[3,3,2,4]{3,1,0,2} bitcast(f32[2,3,3,4]{3,2,1,0})` is a
// transpose). After this pass every bitcast left is a row-major reshape
// (BitcastIsRowMajorReshape), which is how the simplifier, fusion rules,
// outlining and the backends' kernel planners read one; the elemental
// emitter and the program builder also handle the others directly, for
// modules compiled without a pipeline.
//
// The rewrite of `to = bitcast(from)`:
//   transpose(from) into its memory order (row-major layout),
//   a row-major bitcast to the result's dimensions in its memory order
//     (it may change the element type, at the same width),
//   transpose back to the result's logical order, with the bitcast's layout.
// A transpose that would be the identity is left out. Fused computations
// are rewritten too.
#ifndef HLOC_PASSES_LAYOUT_BITCAST_EXPANDER_H_
#define HLOC_PASSES_LAYOUT_BITCAST_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class LayoutBitcastExpander : public HloPass {
 public:
  absl::string_view name() const override { return "layout-bitcast-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_LAYOUT_BITCAST_EXPANDER_H_
