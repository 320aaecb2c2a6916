// Host library routines for ops that are not elemental: sort (std::stable_sort
// with the comparator computation JIT-compiled into a kernel), scatter (the
// combiner compiled likewise), top-k (the `topk` op and XLA's "TopK"
// custom call), and f32/f64 dot through the blocked GEMM kernel the
// interpreter uses (hlo/evaluator/gemm_kernel.h; BLAS would plug in here),
// and fft (fft_library.h). Each becomes a runtime library-call thunk over
// the op's operand and result buffers.
#ifndef HLOC_BACKEND_HOST_LIBRARY_CALLS_H_
#define HLOC_BACKEND_HOST_LIBRARY_CALLS_H_

#include <optional>

#include "absl/status/statusor.h"
#include "backend/host/kernel_compiler.h"
#include "hlo/instruction.h"
#include "runtime/thunk.h"

namespace hloc {
namespace host {

// The routine computing `hlo` from buffers (operand leaves, then result
// leaves), or nullopt when no routine covers it (other ops, unsupported
// element types or comparators).
absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeLibraryCall(
    const HloInstruction& hlo, KernelCompiler& compiler);

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_LIBRARY_CALLS_H_
