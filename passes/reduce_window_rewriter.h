// ReduceWindowRewriter: a reduce-window whose windows do not overlap becomes
// a reshape and a reduce.
//
// When every window dimension either has size 1 (any stride: a strided
// slice) or a stride equal to its size (tiles side by side: 2x2 pooling
// with stride 2, or XLA:CPU's partial column sums, `reduce-window` 32x1
// with stride 32), each input element falls in at most one window. The
// same result is then
//   pad(x, init) by the window's padding (padded positions add init, as
//     they do in a reduce-window),
//   slice to the elements some window reads (a tail that no whole window
//     covers is dropped; a size-1 dimension keeps every stride-th element),
//   reshape that splits each tiled dimension of n*w elements into [n, w],
//   reduce over the w dimensions with the same inits and computation,
// which the backends run as reduction kernels instead of a loop walking
// each window. Variadic reduce-windows (select-and-scatter's expansion
// picks a value and its index so) become variadic reduces. Windows that
// overlap, dilate or are reversed are left alone, as are dynamic or empty
// shapes.
#ifndef HLOC_PASSES_REDUCE_WINDOW_REWRITER_H_
#define HLOC_PASSES_REDUCE_WINDOW_REWRITER_H_

#include "passes/pass.h"

namespace hloc {

class ReduceWindowRewriter : public HloPass {
 public:
  absl::string_view name() const override { return "reduce-window-rewriter"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_REDUCE_WINDOW_REWRITER_H_
