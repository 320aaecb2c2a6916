// When a dynamic-update-slice may write its result into the array it
// updates although the update itself reads that array.
//
// JAX's accumulation into a slice of a buffer, `buf.at[s:s+k].add(x)`,
// lowers to
//
//   window = dynamic-slice(buf, s)          reads the k rows at s
//   new    = add(window, x)                 elementwise over the window
//   ROOT   = dynamic-update-slice(buf, new, s)
//
// Element i of the update reads buf only at the element it overwrites
// (same start operands, same sizes, so both clamp alike), and only through
// elementwise ops, so a kernel that writes just the update into buf's own
// bytes reads every element before it writes it, and never again. Backends
// run such a kernel in place (backend/common/kernel_variant.h) and fusion
// keeps it as its own kernel (passes/fusion/fusion_rules.h, UpdatesInPlace).
//
//   buf ──► dynamic-slice(s) ──► add ──► DUS(buf, ·, s)   in place
//   buf ──► dynamic-slice(t) ──► add ──► DUS(buf, ·, s)   no (t is not s)
//   buf ──► dynamic-slice(s) ──► reverse ──► DUS(...)     no (other index)
#ifndef HLOC_HLO_UPDATE_WINDOW_READS_H_
#define HLOC_HLO_UPDATE_WINDOW_READS_H_

#include "hlo/instruction.h"

namespace hloc {

// Whether every use of `dus`'s updated operand (operand 0) other than as
// that operand is a dynamic-slice of the update's window as above, whose
// value reaches only the update (operand 1), through elementwise ops of
// the update's dimensions. True when operand 0 has no other use.
bool ReadsUpdatedArrayOnlyInItsWindow(const HloInstruction& dus);

}  // namespace hloc

#endif  // HLOC_HLO_UPDATE_WINDOW_READS_H_
