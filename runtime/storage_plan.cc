// Checking a buffer table and grouping its buffers by storage (see
// storage_plan.h).
#include "runtime/storage_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hloc {
namespace runtime {
namespace {

absl::Status CheckBuffer(const std::vector<BufferSpec>& buffers, size_t i) {
  const BufferSpec& b = buffers[i];
  if (b.size < 0) return absl::InvalidArgumentError(absl::StrCat("buffer ", i, " has size < 0"));
  switch (b.kind) {
    case BufferSpec::Kind::kParameter:
      if (b.parameter < 0 || b.parameter > (int64_t{1} << 20)) {
        return absl::InvalidArgumentError(
            absl::StrCat("buffer ", i, " has parameter index ", b.parameter));
      }
      break;
    case BufferSpec::Kind::kConstant:
      if (static_cast<int64_t>(b.data.size()) != b.size) {
        return absl::InvalidArgumentError(
            absl::StrCat("constant buffer ", i, " holds ", b.data.size(), " bytes, not ", b.size));
      }
      break;
    case BufferSpec::Kind::kTemp:
      if (b.live.first_use > b.live.last_use) {
        return absl::InvalidArgumentError(absl::StrCat(
            "buffer ", i, " is live over [", b.live.first_use, ", ", b.live.last_use, "]"));
      }
      break;
  }
  if (b.shares >= 0 &&
      (b.kind != BufferSpec::Kind::kTemp || static_cast<size_t>(b.shares) >= buffers.size() ||
       buffers[b.shares].kind != BufferSpec::Kind::kTemp || buffers[b.shares].size != b.size)) {
    return absl::InvalidArgumentError(absl::StrCat("buffer ", i, " shares buffer ", b.shares,
                                                   ": both must be temporaries of one size"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<StoragePlan> PlanStorage(
    const std::vector<BufferSpec>& buffers, const std::vector<BufferId>& outputs,
    const std::vector<std::pair<int64_t, int64_t>>& output_parameter_aliases) {
  StoragePlan plan;
  const size_t n = buffers.size();
  for (size_t i = 0; i < n; ++i) {
    absl::Status status = CheckBuffer(buffers, i);
    if (!status.ok()) return status;
    if (buffers[i].kind == BufferSpec::Kind::kParameter) {
      plan.num_parameters = std::max(plan.num_parameters, buffers[i].parameter + 1);
    }
  }
  plan.parameter_sizes.assign(plan.num_parameters, 0);
  plan.parameter_buffer.assign(plan.num_parameters, -1);
  for (size_t i = 0; i < n; ++i) {
    const BufferSpec& b = buffers[i];
    if (b.kind != BufferSpec::Kind::kParameter) continue;
    if (plan.parameter_buffer[b.parameter] >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter ", b.parameter, " has two buffers"));
    }
    plan.parameter_buffer[b.parameter] = static_cast<BufferId>(i);
    plan.parameter_sizes[b.parameter] = b.size;
  }
  for (int64_t p = 0; p < plan.num_parameters; ++p) {
    if (plan.parameter_buffer[p] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("parameter ", p, " has no buffer"));
    }
  }
  for (BufferId id : outputs) {
    if (id < 0 || static_cast<size_t>(id) >= n) {
      return absl::InvalidArgumentError(absl::StrCat("output buffer ", id, " out of range"));
    }
  }
  plan.aliased_parameter.assign(outputs.size(), -1);
  std::vector<bool> parameter_aliased(plan.num_parameters, false);
  for (const auto& [j, k] : output_parameter_aliases) {
    if (j < 0 || j >= static_cast<int64_t>(outputs.size()) || k < 0 || k >= plan.num_parameters ||
        plan.aliased_parameter[j] >= 0 || parameter_aliased[k] ||
        plan.parameter_sizes[k] != buffers[outputs[j]].size) {
      return absl::InvalidArgumentError(absl::StrCat("output ", j, " cannot alias parameter ", k));
    }
    plan.aliased_parameter[j] = k;
    parameter_aliased[k] = true;
  }
  plan.storage_root.resize(n);
  for (size_t i = 0; i < n; ++i) {
    BufferId root = static_cast<BufferId>(i);
    for (size_t steps = 0; buffers[root].shares >= 0; ++steps) {
      if (steps == n) {
        return absl::InvalidArgumentError(absl::StrCat("buffer ", i, " shares in a cycle"));
      }
      root = buffers[root].shares;
    }
    plan.storage_root[i] = root;
    if (root != static_cast<BufferId>(i)) plan.shared_bytes += buffers[i].size;
  }
  plan.group_live.resize(n);
  plan.is_temp_root.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    const BufferSpec& b = buffers[i];
    if (b.kind != BufferSpec::Kind::kTemp) continue;
    const BufferId root = plan.storage_root[i];
    BufferInterval& live = plan.group_live[root];
    if (!plan.is_temp_root[root]) {
      live = {buffers[root].size, b.live.first_use, b.live.last_use};
      plan.is_temp_root[root] = true;
    }
    live.first_use = std::min(live.first_use, b.live.first_use);
    live.last_use = std::max(live.last_use, b.live.last_use);
  }
  return plan;
}

}  // namespace runtime
}  // namespace hloc
