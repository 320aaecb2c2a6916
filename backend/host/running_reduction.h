// Running reductions on the host: a reduce-window whose window spans a whole
// dimension with all but one element of padding on one side is a prefix (or
// suffix) reduction, how JAX lowers cumsum, cumprod, cummax, cummin and
// logcumsumexp's parts on the CPU. A kernel computes each output from its
// whole window, O(n^2) per line; this routine keeps one accumulator per line
// and walks it once, O(n).
//
// Matched (IsRunningReduction): one input; to_apply a single add, multiply,
// maximum, minimum, and, or or xor of its two parameters; every window
// dimension size 1, stride 1, no padding or dilation except one dimension d
// of length n whose window is n long with padding (n - 1, 0) (output i
// reduces inputs 0..i) or (0, n - 1) (inputs i..n-1); the element type one
// the interpreter computes directly (pred, 8- to 64-bit integers, f16, bf16,
// f32, f64). Padding positions then add nothing whatever the init value is
// where the op is idempotent (maximum, minimum, and, or); for add and xor the
// init must be a constant 0 and for multiply a constant 1.
//
// The fold is the interpreter's: acc = init, then acc = op(acc, x) in the
// element type's compute type (f32 for f16/bf16), each output stored from
// acc. Prefix outputs are bit for bit the interpreter's; suffix outputs fold
// from the far end, which reorders rounding for float add and multiply.
#ifndef HLOC_BACKEND_HOST_RUNNING_REDUCTION_H_
#define HLOC_BACKEND_HOST_RUNNING_REDUCTION_H_

#include <optional>

#include "absl/status/statusor.h"
#include "hlo/instruction.h"
#include "runtime/thunk.h"

namespace hloc {
namespace host {

bool IsRunningReduction(const HloInstruction& hlo);

// The routine for a running reduction (input, init and result buffers), or
// nullopt for any other instruction.
absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeRunningReduction(
    const HloInstruction& hlo);

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_RUNNING_REDUCTION_H_
