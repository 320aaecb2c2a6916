// Which ops get a kernel on which target: one table, read by the program
// builder (program_builder.h) for every op that is not structural (tuples,
// bitcasts, copies), control flow or a call or fusion, and by the tests.
//
//   op                                         host                cuda
//   dot, convolution                           library, kernel     kernel
//   sort, topk, custom-call "TopK", scatter    library             kernel
//   fft                                        library, kernel     interpreter
//   reduce-window                              library, kernel     kernel
//   cholesky, triangular-solve,
//     select-and-scatter                       kernel              interpreter
//   other custom calls                         library*            library*
//   rng, rng-bit-generator                     interpreter         interpreter
//   all-reduce, all-gather, collective-
//     permute (and their -start forms),
//     reduce-scatter, all-to-all, ragged-
//     all-to-all, collective-broadcast         collective          collective (NCCL)
//   replica-id, partition-id                   collective          collective
//   rng-get-and-update-state, send/recv,
//     async-start/-done
//     wrappers, infeed, ...                    unsupported         unsupported
//   every other op                             kernel              kernel
//
// (The standard pipelines expand cholesky, triangular-solve, select-and-
// scatter, rng, rng-bit-generator and, on the GPU, fft first, passes/
// expanders/: those rows serve modules compiled with the "none" pipeline.)
// "library": the target's library routines (oneDNN, the host's sort/top-k/
// scatter/gemm routines, functions an embedder registered for custom-call
// targets: hlo/custom_call_targets.h) first; "kernel": a generated kernel for the op
// alone. An op whose paths all decline it runs in the interpreter (an
// interpreter op, reported with the reason), or is a compile error where the
// target has no interpreter. "collective": a communicator thunk
// (backend/common/collective_lowering.h, runtime/collective_thunks.h), a
// compile error when the target has none. "unsupported" is always a compile error
// naming the instruction: a single-device program has no peers, and the
// interpreter does not keep rng state between runs either. *: the function
// the embedder registered for the target (registered_custom_calls.h), a
// compile error when there is none; never the interpreter.
#ifndef HLOC_BACKEND_COMMON_OP_LOWERING_H_
#define HLOC_BACKEND_COMMON_OP_LOWERING_H_

#include <string>

#include "absl/strings/string_view.h"
#include "hlo/instruction.h"

namespace hloc {
namespace backend {

enum class Target { kHost, kCuda };
// "host", "GPU": as messages name the target.
absl::string_view TargetName(Target target);

struct OpLowering {
  bool supported = true;  // false: a compile error.
  bool library = false;   // Try the target's library routines first.
  bool kernel = true;     // Then a generated kernel for the op alone.
  bool collective = false;  // A communicator thunk (TargetLowering::EmitCollective).
  // Why the op has no kernel (it runs in the interpreter), or why it is
  // unsupported; empty for ops with a kernel path.
  std::string reason;
};

OpLowering LowerOp(const HloInstruction& hlo, Target target);

// The ops that lower to communicator thunks where a target has them: the
// six collectives, all-reduce-start, all-gather-start and
// collective-permute-start (run at the start; the -done is then the start's
// value, or its results element), replica-id, partition-id.
bool HasCollectiveThunk(HloOpcode opcode);

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_OP_LOWERING_H_
