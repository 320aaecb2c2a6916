// What while and conditional thunks decide, the same on the host and the
// GPU (runtime/thunk.h, runtime/cuda/gpu_thunk.h): which branch a selector
// picks, and when a loop stops. The thunks differ only in how they read the
// selector or predicate (host memory, or a copy back from the device) and
// run their nested sequences.
#ifndef HLOC_RUNTIME_CONTROL_FLOW_H_
#define HLOC_RUNTIME_CONTROL_FLOW_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace hloc {
namespace runtime {

// The branch a conditional runs (num_branches > 0): a pred selector (its
// byte nonzero) picks branch 0 when true and 1 when false; an s32 index out
// of range picks the last branch.
inline size_t SelectBranch(int32_t selector, bool selector_is_pred, size_t num_branches) {
  size_t branch;
  if (selector_is_pred) {
    branch = (selector & 0xff) != 0 ? 0 : 1;
  } else {
    branch = selector < 0 || static_cast<size_t>(selector) >= num_branches
                 ? num_branches - 1
                 : static_cast<size_t>(selector);
  }
  return branch < num_branches ? branch : num_branches - 1;
}

// A while loop: `run_condition`, then `read_predicate` (StatusOr<bool>);
// while it is true, `run_body`. More than `max_iterations` iterations (> 0)
// is a ResourceExhausted error naming the loop.
template <typename RunCondition, typename ReadPredicate, typename RunBody>
absl::Status RunWhileLoop(absl::string_view name, int64_t max_iterations,
                          RunCondition run_condition, ReadPredicate read_predicate,
                          RunBody run_body) {
  for (int64_t iteration = 0;; ++iteration) {
    absl::Status status = run_condition();
    if (!status.ok()) return status;
    absl::StatusOr<bool> go = read_predicate();
    if (!go.ok()) return go.status();
    if (!*go) return absl::OkStatus();
    if (max_iterations > 0 && iteration >= max_iterations) {
      return absl::ResourceExhaustedError(
          absl::StrCat("while loop ", name, " ran more than ", max_iterations, " iterations"));
    }
    status = run_body();
    if (!status.ok()) return status;
  }
}

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_CONTROL_FLOW_H_
