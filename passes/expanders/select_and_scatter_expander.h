// SelectAndScatterExpander: select-and-scatter (max-pool's gradient) as a
// variadic reduce-window that finds each window's selected position,
// followed by a scatter of the source into those positions. Both are ops the
// host and GPU backends compile (reduce-window as a kernel, scatter as a
// host routine / GPU scatter kernel); before this pass they ran
// select-and-scatter through the interpreter.
//
//   operand X [d...] (N elements), source S [s...], init v, window W
//
//   pos  = reshape(iota(N))                    linear index of each X element
//   (_, sel) = reduce-window((X, pos), (v, -1), W, pick)
//        pick((av, ai), (cv, ci)) = take ? (cv, ci) : (av, ai),
//        take = ai < 0 || (ci >= 0 && !select(av, cv))
//   out  = scatter(broadcast(v, [N]), reshape(sel, [S, 1]), reshape(S, [S]),
//                  scatter-computation)         one scalar update per window
//   result = reshape(out, [d...])
//
// `pick` is the interpreter's rule for select: the first valid position of
// the window (row-major) is the candidate, and each later one replaces it
// when select(candidate, position) is false. The reduce-window reduces its
// window row-major, starting from the -1 index, and skips padding, so the
// same position comes out; a window with no valid position keeps -1, which
// the scatter skips as out of bounds, as the interpreter skips such a
// window. The scatter applies its updates in row-major source order, the
// order the interpreter combines them in. select's body is copied into
// `pick` (no call inside a reducer).
#ifndef HLOC_PASSES_EXPANDERS_SELECT_AND_SCATTER_EXPANDER_H_
#define HLOC_PASSES_EXPANDERS_SELECT_AND_SCATTER_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class SelectAndScatterExpander : public HloPass {
 public:
  absl::string_view name() const override { return "select-and-scatter-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_SELECT_AND_SCATTER_EXPANDER_H_
