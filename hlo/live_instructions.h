// What a computation must run: what its root reaches through operands and
// control predecessors, itself included, and every instruction with a side
// effect (HloInstruction::HasSideEffect: a custom call marked
// custom_call_has_side_effect, say JAX's jax.debug.print, an outfeed, a
// send) with what that reaches in turn. Anything else is dead: neither the
// interpreter nor a compiled program runs it, and it cannot fail a run.
#ifndef HLOC_HLO_LIVE_INSTRUCTIONS_H_
#define HLOC_HLO_LIVE_INSTRUCTIONS_H_

#include "absl/container/flat_hash_set.h"
#include "hlo/computation.h"

namespace hloc {

// Empty when the computation has no root.
absl::flat_hash_set<const HloInstruction*> LiveFromRoot(const HloComputation& computation);

}  // namespace hloc

#endif  // HLOC_HLO_LIVE_INSTRUCTIONS_H_
