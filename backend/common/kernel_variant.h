// What a kernel stores: every element of its result, or only the update of
// a dynamic-update-slice whose result buffer already holds the updated
// operand (the program builder's updates in place, program_builder.h).
// Every target's kernel compiler takes a KernelVariant.
#ifndef HLOC_BACKEND_COMMON_KERNEL_VARIANT_H_
#define HLOC_BACKEND_COMMON_KERNEL_VARIANT_H_

#include <cstdint>

#include "hlo/computation.h"

namespace hloc {
namespace backend {

enum class KernelVariant {
  kWhole,  // Every element of every root leaf.
  // For a computation whose root is a dynamic-update-slice of a parameter
  // (see UpdateInPlaceParameter): only the update's elements, into an
  // output buffer that already holds that parameter's bytes (or is them); the
  // parameter is read at most in the update's window, each element before it
  // is written (hlo/update_window_reads.h). Unimplemented for other
  // computations.
  kUpdateInPlace,
};

// The parameter a kUpdateInPlace kernel of `computation` updates: the root
// is a dynamic-update-slice of an array parameter that the computation reads
// elsewhere only inside the update's window (ReadsUpdatedArrayOnlyInItsWindow).
// -1 when there is none.
int64_t UpdateInPlaceParameter(const HloComputation& computation);

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_KERNEL_VARIANT_H_
