// Registered custom-call targets (see custom_call_targets.h).
#include "hlo/custom_call_targets.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace hloc {
namespace {

// Registrations are numbered across the process, so two registries (two
// clients) never produce the same fingerprint for different functions.
uint64_t NextRegistration() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

std::string UnknownTargetHint(absl::string_view target) {
  if (!absl::StartsWith(target, "xla_ffi_python") && !absl::StartsWith(target, "xla_python")) {
    return "";
  }
  return " (a JAX host callback: jax.debug.print, pure_callback or io_callback; run the "
         "function through hloc.jax.jit, which supplies its callbacks)";
}

int64_t CustomCallArray::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t CustomCallArray::byte_size() const { return element_count() * ByteWidth(type); }

void AppendArrayLeafShapes(const Shape& shape, std::vector<const Shape*>* leaves) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) AppendArrayLeafShapes(element, leaves);
  } else if (shape.IsArray()) {
    leaves->push_back(&shape);
  }
}

absl::Status CallCustomCallHandler(const CustomCallHandler& handler, const HloInstruction& hlo,
                                   absl::Span<void* const> buffers,
                                   const ParallelRanges* parallel) {
  std::vector<const Shape*> operand_leaves, result_leaves;
  for (const HloInstruction* operand : hlo.operands()) {
    AppendArrayLeafShapes(operand->shape(), &operand_leaves);
  }
  AppendArrayLeafShapes(hlo.shape(), &result_leaves);
  if (buffers.size() != operand_leaves.size() + result_leaves.size()) {
    return absl::InternalError(absl::StrCat("custom-call %", hlo.name(), ": ", buffers.size(),
                                            " buffers for ", operand_leaves.size(),
                                            " operand and ", result_leaves.size(),
                                            " result arrays"));
  }
  absl::InlinedVector<CustomCallArray, 8> arrays;
  arrays.reserve(buffers.size());
  size_t next = 0;
  for (const auto* leaves : {&operand_leaves, &result_leaves}) {
    for (const Shape* leaf : *leaves) {
      arrays.push_back(CustomCallArray{leaf->element_type(), leaf->dimensions(), buffers[next++]});
    }
  }
  CustomCallFrame frame;
  frame.target = handler.target;
  frame.instruction = hlo.name();
  frame.backend_config = hlo.backend_config();
  frame.operands = absl::MakeConstSpan(arrays).subspan(0, operand_leaves.size());
  frame.results = absl::MakeConstSpan(arrays).subspan(operand_leaves.size());
  frame.parallel = parallel;
  absl::Status status = handler.function(frame);
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("custom-call %", hlo.name(), " (target \"",
                                                  handler.target, "\"): ", status.message()));
}

std::shared_ptr<const CustomCallHandler> CustomCallTargets::Find(absl::string_view target) const {
  auto it = handlers_.find(target);
  return it == handlers_.end() ? nullptr : it->second;
}

std::shared_ptr<const CustomCallHandler> CustomCallTargets::FindFor(
    const HloInstruction& hlo) const {
  if (hlo.opcode() != HloOpcode::kCustomCall) return nullptr;
  return Find(hlo.attrs().custom_call_target);
}

absl::StatusOr<std::shared_ptr<const CustomCallTargets>> CustomCallTargets::With(
    std::string target, CustomCallFunction function) const {
  if (target.empty()) {
    return absl::InvalidArgumentError("a custom-call target needs a name");
  }
  if (!function) {
    return absl::InvalidArgumentError(
        absl::StrCat("custom-call target \"", target, "\": no function given"));
  }
  if (target == "TopK") {
    return absl::InvalidArgumentError(
        "custom-call target \"TopK\" is implemented by hloc and cannot be registered");
  }
  auto handler = std::make_shared<CustomCallHandler>();
  handler->target = target;
  handler->function = std::move(function);
  handler->registration = NextRegistration();

  auto next = std::make_shared<CustomCallTargets>(*this);
  next->handlers_[target] = std::move(handler);
  std::vector<std::pair<std::string, uint64_t>> entries;
  for (const auto& [name, h] : next->handlers_) entries.emplace_back(name, h->registration);
  std::sort(entries.begin(), entries.end());
  next->fingerprint_.clear();
  for (const auto& [name, registration] : entries) {
    absl::StrAppend(&next->fingerprint_, name.size(), ":", name, "=", registration, ";");
  }
  return std::shared_ptr<const CustomCallTargets>(std::move(next));
}

CustomCallRegistry::CustomCallRegistry() : current_(std::make_shared<CustomCallTargets>()) {}

absl::Status CustomCallRegistry::Register(std::string target, CustomCallFunction function) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<std::shared_ptr<const CustomCallTargets>> next =
      current_->With(std::move(target), std::move(function));
  if (!next.ok()) return next.status();
  current_ = *std::move(next);
  return absl::OkStatus();
}

std::shared_ptr<const CustomCallTargets> CustomCallRegistry::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

}  // namespace hloc
