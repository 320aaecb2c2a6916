// Registered custom calls (see registered_custom_calls.h).
#include "backend/common/registered_custom_calls.h"

#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "hlo/custom_call_handlers.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace backend {

absl::StatusOr<std::shared_ptr<const CustomCallHandler>> FindRegisteredCustomCall(
    const CustomCallTargets* targets, const HloInstruction& hlo) {
  HLOC_ASSIGN_OR_RETURN(std::shared_ptr<const CustomCallHandler> handler,
                        FindCustomCallHandler(targets, hlo));
  if (handler == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "instruction %", hlo.name(), " (custom-call): custom-call target \"",
        hlo.attrs().custom_call_target,
        "\" is not built into hloc and no function is registered for it",
        UnknownTargetHint(hlo.attrs().custom_call_target)));
  }
  return handler;
}

runtime::HostFunction MakeRegisteredCustomCallFunction(
    std::shared_ptr<const CustomCallHandler> handler, const HloInstruction* hlo) {
  return [handler = std::move(handler), hlo](absl::Span<const void* const> inputs,
                                             absl::Span<void* const> outputs) {
    absl::InlinedVector<void*, 8> buffers;
    buffers.reserve(inputs.size() + outputs.size());
    // The function reads its operands only (custom_call_targets.h).
    for (const void* input : inputs) buffers.push_back(const_cast<void*>(input));
    buffers.insert(buffers.end(), outputs.begin(), outputs.end());
    return CallCustomCallHandler(*handler, *hlo, buffers);
  };
}

}  // namespace backend
}  // namespace hloc
