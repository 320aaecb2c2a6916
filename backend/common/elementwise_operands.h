// Which operands of a kernel are read only where the kernel writes: the
// element at index i of such an operand is read by the work item that
// writes element i of one output, for that output only, and by no other.
// The operand's buffer may then hold that output: each element is read
// before it is overwritten, and never again. A donated entry parameter
// (input_output_alias, output_aliasing.cc) and a loop's state leaf whose
// new value the kernel computes (buffer_sharing.h, "loop result") use this.
//
//   p ──► negate ──► add ──► ROOT      p is read at the output's index:
//   q ──► broadcast ─┘                 it may share the output's bytes
//
//   p ──► reverse ──► ROOT             p is read at other indices: no
//   p ──► reduce ──► broadcast ──► ... p is read by every work item: no
//
// With several outputs (a tuple root: multi-output and horizontal
// fusions), each output is proved on its own, and an operand that reaches
// two outputs shares neither: a kernel computes its outputs one after
// another, so the second would read what the first has overwritten.
//
//   p ──► add ──► ROOT tuple(_, add, _)      p may hold output 1
//   q ─┘                                     (q may not: it reaches 2 too)
//   q ──► multiply ──────────────────┘ (2)
#ifndef HLOC_BACKEND_COMMON_ELEMENTWISE_OPERANDS_H_
#define HLOC_BACKEND_COMMON_ELEMENTWISE_OPERANDS_H_

#include <cstdint>

#include "hlo/computation.h"

namespace hloc {
namespace backend {

// Whether parameter `number` of `computation` reaches output `output` (the
// root when it is an array, operand `output` of a root tuple of arrays)
// only through elementwise ops of that output's dimensions, reaches no
// other output, and has the output's placement (dimensions, element size,
// layout). Conservative: false for anything else (nested tuples,
// broadcasts, reshapes, reductions, a parameter reaching nothing).
bool ReadOnlyAtOutputIndex(const HloComputation& computation, int64_t number, int64_t output = 0);

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_ELEMENTWISE_OPERANDS_H_
