// What a computation's root needs: the instructions it reaches through
// operands and control predecessors, itself included. An instruction outside
// this set is dead: neither the interpreter nor a compiled program runs it.
#ifndef HLOC_HLO_LIVE_INSTRUCTIONS_H_
#define HLOC_HLO_LIVE_INSTRUCTIONS_H_

#include "absl/container/flat_hash_set.h"
#include "hlo/computation.h"

namespace hloc {

// Empty when the computation has no root.
absl::flat_hash_set<const HloInstruction*> LiveFromRoot(const HloComputation& computation);

}  // namespace hloc

#endif  // HLOC_HLO_LIVE_INSTRUCTIONS_H_
