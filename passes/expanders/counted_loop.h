// BuildCountedLoop: `for (s = 0; s < trip_count; ++s) state = body(s, state)`
// as an HLO while loop, for expanders whose rewrite walks rows or columns
// (cholesky, triangular-solve). The loop state is the tuple
// (s32 counter, state...); the condition compares the counter with
// trip_count; the body is built by a callback into a fresh computation:
//
//   init (outer)          condition                  body
//   tuple(0, x0, x1) ->   s = gte(p, 0)              s = gte(p, 0), xk = gte(p, k)
//                         ROOT s < trip_count        new = callback(b, s, {x0, x1})
//                                                    ROOT tuple(s + 1, new...)
//
// and the loop's results come back as get-tuple-elements of the while.
// An optional `keep_going` callback adds a data-dependent exit: the
// condition becomes `s < trip_count && keep_going(state)` (a convergence
// test such as Jacobi's off-diagonal norm), built into the condition
// computation from the state before each trip.
#ifndef HLOC_PASSES_EXPANDERS_COUNTED_LOOP_H_
#define HLOC_PASSES_EXPANDERS_COUNTED_LOOP_H_

#include <functional>
#include <vector>

#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace expanders {

// Builds the body's new state from the counter and the current state (the
// same number of values, of the same shapes).
using LoopBody = std::function<std::vector<HloInstruction*>(
    ExpansionBuilder& body, HloInstruction* counter, const std::vector<HloInstruction*>& state)>;

// Builds a pred scalar from the state before a trip: true to run it.
using LoopCondition = std::function<HloInstruction*(
    ExpansionBuilder& condition, const std::vector<HloInstruction*>& state)>;

// The state after the loop, one value per element of `init`; empty on
// failure (recorded in `b`).
std::vector<HloInstruction*> BuildCountedLoop(ExpansionBuilder& b, int64_t trip_count,
                                              const std::vector<HloInstruction*>& init,
                                              const LoopBody& body,
                                              const LoopCondition& keep_going = nullptr);

}  // namespace expanders
}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_COUNTED_LOOP_H_
