// Custom-call handlers: registered, then hloc's own (see custom_call_handlers.h).
#include "hlo/custom_call_handlers.h"

#include "hlo/lapack/lapack_calls.h"

namespace hloc {

absl::StatusOr<std::shared_ptr<const CustomCallHandler>> FindCustomCallHandler(
    const CustomCallTargets* registered, const HloInstruction& hlo) {
  if (hlo.opcode() != HloOpcode::kCustomCall) return nullptr;
  if (registered != nullptr) {
    if (std::shared_ptr<const CustomCallHandler> handler = registered->FindFor(hlo)) {
      return handler;
    }
  }
  if (lapack::IsLapackTarget(hlo.attrs().custom_call_target)) {
    return lapack::MakeLapackHandler(hlo);
  }
  return nullptr;
}

}  // namespace hloc
