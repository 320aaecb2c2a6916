// Host fallbacks of the CUDA backend: the routine a InterpreterThunk runs
// for an instruction no GPU kernel or library covers (rng, fft, cholesky,
// triangular-solve, select-and-scatter, custom calls other than TopK, ops on
// types the emitters lack such as complex). The reference interpreter
// evaluates a one-op computation wrapping the instruction on host copies of
// its operands. Slow (two synchronizations and copies per run) and visible:
// the compiler reports each such op as "runs on host: <reason>".
#ifndef HLOC_BACKEND_GPU_HOST_FALLBACK_H_
#define HLOC_BACKEND_GPU_HOST_FALLBACK_H_

#include "absl/status/statusor.h"
#include "hlo/instruction.h"
#include "runtime/cuda/gpu_thunk.h"

namespace hloc {
namespace gpu {

// The function computing `hlo` from its operand leaves (in operand order)
// into its result leaves. `hlo`'s called computations must outlive the
// function. rng draws from a seed that advances with every call.
absl::StatusOr<cuda::InterpreterThunk::Function> MakeHostFallback(const HloInstruction& hlo);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_HOST_FALLBACK_H_
