// Which operands of a kernel are read only where the kernel writes: the
// element at index i of such an operand is read by the work item that
// writes element i of the result, and by no other. A donated entry
// parameter passed as such an operand may then hold the result itself
// (input_output_alias, output_aliasing.cc): each element is read before it
// is overwritten, and never again.
//
//   p ──► negate ──► add ──► ROOT      p is read at the output's index:
//   q ──► broadcast ─┘                 it may share the output's bytes
//
//   p ──► reverse ──► ROOT             p is read at other indices: no
//   p ──► reduce ──► broadcast ──► ... p is read by every work item: no
#ifndef HLOC_BACKEND_COMMON_ELEMENTWISE_OPERANDS_H_
#define HLOC_BACKEND_COMMON_ELEMENTWISE_OPERANDS_H_

#include <cstdint>

#include "hlo/computation.h"

namespace hloc {
namespace backend {

// Whether parameter `number` of `computation` reaches the root only
// through elementwise ops of the root's dimensions, the parameter and the
// root being arrays of one placement (dimensions, element size, layout).
// Conservative: false for anything else (tuples, broadcasts, reshapes,
// reductions, multi-output roots).
bool ReadOnlyAtOutputIndex(const HloComputation& computation, int64_t number);

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_ELEMENTWISE_OPERANDS_H_
