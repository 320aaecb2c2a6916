// The host function a custom call runs, wherever it runs (the interpreter,
// the host backend's library-call thunk, the GPU through the host): the
// embedder's function registered for its target when there is one
// (custom_call_targets.h), else hloc's own implementation of the target
// (JAX's LAPACK calls, lapack/lapack_calls.h).
#ifndef HLOC_HLO_CUSTOM_CALL_HANDLERS_H_
#define HLOC_HLO_CUSTOM_CALL_HANDLERS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "hlo/custom_call_targets.h"
#include "hlo/instruction.h"

namespace hloc {

// The handler for custom call `hlo`; `registered` may be null (nothing
// registered). Null when neither the embedder nor hloc knows the target; an
// error naming the instruction when hloc implements the target but `hlo`
// does not fit it (wrong shapes or attributes).
absl::StatusOr<std::shared_ptr<const CustomCallHandler>> FindCustomCallHandler(
    const CustomCallTargets* registered, const HloInstruction& hlo);

}  // namespace hloc

#endif  // HLOC_HLO_CUSTOM_CALL_HANDLERS_H_
