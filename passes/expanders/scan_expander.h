// ScanExpander: scan (newer XLA's prefix-scan op; see InferScanShape in
// hlo/shape_inference.h for its operands and result) as a counted while loop
// that the host and GPU backends compile like any other loop. For a scan
// along dimension d of length n with inputs X..., initial carries C... and
// to_apply f:
//
//   state = (carries C..., inputs X..., outputs Y... = zeros)
//   for s in [0, n):                       (BuildCountedLoop, counted_loop.h)
//     i = is_reverse ? n - 1 - s : s
//     x_k = reshape(dynamic-slice(X_k, i along d, size 1))   one step's slices
//     (y..., c...) = f(x..., carries...)                     f's body inlined
//     Y_j = dynamic-update-slice(Y_j, reshape(y_j), i along d)
//     carries = c
//   result = (Y..., carries...)   (bare when the scan's result is)
//
// The inputs ride along in the loop state unchanged, since a while body sees
// only its parameter. f is copied into the body rather than called, so the
// simplifier and fusion see through it; a computation only scans called is
// removed afterwards. A scan of length 0 becomes its zero-sized outputs and
// its initial carries. Scans inside the inlined bodies are expanded on a
// later round of the same run.
//
// is_associative is only a hint (XLA uses it to pick a parallel prefix
// scan); the loop computes in the order the interpreter does, so results
// match it exactly.
#ifndef HLOC_PASSES_EXPANDERS_SCAN_EXPANDER_H_
#define HLOC_PASSES_EXPANDERS_SCAN_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class ScanExpander : public HloPass {
 public:
  absl::string_view name() const override { return "scan-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_SCAN_EXPANDER_H_
