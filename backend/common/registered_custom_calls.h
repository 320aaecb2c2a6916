// Custom calls to functions the embedder registered (hlo/custom_call_targets.h),
// as every target lowers them: find the function the module was compiled
// with, then call it on host memory.
//
//   host   a library-call thunk over the call's buffers (in place)
//   cuda   a custom-call thunk (runtime/cuda/gpu_thunk.h): operands copied
//          device -> host after the stream's earlier work, this file's
//          HostFunction, results host -> device
//
// Both end in CallCustomCallHandler, so the frame (target, instruction,
// backend_config, operand and result leaves, tuples flattened) and the error
// (naming the instruction and the target) are the same on every target.
#ifndef HLOC_BACKEND_COMMON_REGISTERED_CUSTOM_CALLS_H_
#define HLOC_BACKEND_COMMON_REGISTERED_CUSTOM_CALLS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "hlo/custom_call_targets.h"
#include "hlo/instruction.h"
#include "runtime/thunk.h"

namespace hloc {
namespace backend {

// The handler registered for `hlo`'s target in `targets` (which may be
// null: none registered). Unimplemented naming the instruction when there is
// none: no target and not the interpreter knows another custom call, so it
// fails at compile time, not when run.
absl::StatusOr<std::shared_ptr<const CustomCallHandler>> FindRegisteredCustomCall(
    const CustomCallTargets* targets, const HloInstruction& hlo);

// Calls `handler` for `hlo` on host buffers: the operand leaves (inputs),
// then the result leaves (outputs). It keeps the handler (the executable's
// snapshot) and `hlo`, which must outlive it (the program owns its module).
runtime::HostFunction MakeRegisteredCustomCallFunction(
    std::shared_ptr<const CustomCallHandler> handler, const HloInstruction* hlo);

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_REGISTERED_CUSTOM_CALLS_H_
