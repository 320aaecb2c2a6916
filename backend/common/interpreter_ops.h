// Interpreter ops: an instruction that no kernel or library routine of a
// target covers (rng, fft on the GPU, custom calls, ops on types the kernel
// emitters lack) runs in the reference interpreter, on host copies of its
// operands, as one step of the compiled program. Never silently: the
// program builder reports each one with its reason (ProgramReport::
// interpreter_ops), and the runtimes run it as an InterpreterThunk (on the
// GPU: copy down, interpret, copy up, so a program with one is not captured
// into a CUDA graph). "Fallback" is another thing: fallback fusion
// (passes/fusion) groups ops before any backend sees them.
#ifndef HLOC_BACKEND_COMMON_INTERPRETER_OPS_H_
#define HLOC_BACKEND_COMMON_INTERPRETER_OPS_H_

#include <functional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/instruction.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "runtime/thunk.h"

namespace hloc {
namespace backend {

// Evaluates a module on literals.
using InterpreterEvaluator =
    std::function<absl::StatusOr<Literal>(const HloModule&, absl::Span<const Literal>)>;

// hloc's interpreter, one thread per call, with an rng seed that advances
// with every call (so rng ops draw new numbers each run).
InterpreterEvaluator ReferenceInterpreter();

// The host function computing `hlo` from its operand leaves (in operand
// order) into its result leaves with `evaluate`, on a module wrapping `hlo`
// alone. `hlo`'s called computations must outlive the function.
absl::StatusOr<runtime::HostFunction> MakeInterpreterFunction(const HloInstruction& hlo,
                                                              InterpreterEvaluator evaluate);

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_INTERPRETER_OPS_H_
