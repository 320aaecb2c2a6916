// The shared-memory communicator (see shared_memory_communicator.h).
#include "runtime/shared_memory_communicator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace runtime {
namespace {

// [begin, end) of slice `i` of `count` elements cut into `n`.
std::pair<int64_t, int64_t> Slice(int64_t count, int64_t n, int64_t i) {
  return {count * i / n, count * (i + 1) / n};
}

char* At(void* p, int64_t offset) { return static_cast<char*>(p) + offset; }
const char* At(const void* p, int64_t offset) { return static_cast<const char*>(p) + offset; }

}  // namespace

std::shared_ptr<Communicator> SharedMemoryWorld::CommunicatorFor(int64_t rank) {
  return std::make_shared<SharedMemoryCommunicator>(this, rank);
}

void SharedMemoryWorld::Abort(const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_.ok()) aborted_ = status;
  cv_.notify_all();
}

absl::Status SharedMemoryWorld::WaitFor(std::unique_lock<std::mutex>& lock,
                                        const CollectiveKey& key, DeviceGroup group,
                                        const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::microseconds(absl::ToInt64Microseconds(timeout_));
  while (!done() && aborted_.ok()) {
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && !done() && aborted_.ok()) {
      return absl::DeadlineExceededError(
          absl::StrCat(key.name, " (run ", key.sequence, "): group {", absl::StrJoin(group, ","),
                       "} did not all arrive within ", absl::FormatDuration(timeout_)));
    }
  }
  return aborted_;
}

absl::StatusOr<SharedMemoryWorld::Meeting*> SharedMemoryWorld::Join(const CollectiveKey& key,
                                                                    DeviceGroup group,
                                                                    int64_t index,
                                                                    const void* input,
                                                                    void* output) {
  const int64_t n = static_cast<int64_t>(group.size());
  std::unique_lock<std::mutex> lock(mu_);
  if (!aborted_.ok()) return aborted_;
  Meeting& meeting = meetings_[Key{key.name, key.sequence, group[0]}];
  if (meeting.inputs.empty()) {
    meeting.inputs.assign(n, nullptr);
    meeting.outputs.assign(n, nullptr);
  }
  meeting.inputs[index] = input;
  meeting.outputs[index] = output;
  if (meeting.reached.empty()) meeting.reached.assign(4, 0);
  ++meeting.reached[0];
  cv_.notify_all();
  if (absl::Status s = WaitFor(lock, key, group, [&] { return meeting.reached[0] == n; });
      !s.ok()) {
    return s;
  }
  return &meeting;
}

absl::Status SharedMemoryWorld::Barrier(const CollectiveKey& key, DeviceGroup group,
                                        Meeting* meeting, int64_t phase) {
  const int64_t n = static_cast<int64_t>(group.size());
  std::unique_lock<std::mutex> lock(mu_);
  ++meeting->reached[phase];
  cv_.notify_all();
  return WaitFor(lock, key, group, [&] { return meeting->reached[phase] == n; });
}

absl::Status SharedMemoryWorld::Leave(const CollectiveKey& key, DeviceGroup group,
                                      Meeting* meeting, int64_t phase) {
  absl::Status status = Barrier(key, group, meeting, phase);
  std::lock_guard<std::mutex> lock(mu_);
  // After an abort others may never come; the meeting then stays (the run is over).
  if (status.ok() && ++meeting->left == static_cast<int64_t>(group.size())) {
    meetings_.erase(Key{key.name, key.sequence, group[0]});
  }
  return status;
}

absl::Status SharedMemoryCommunicator::AllReduce(const CollectiveKey& key, DeviceGroup group,
                                                 ElementType type, ReductionKind kind,
                                                 const void* input, void* output,
                                                 int64_t count) {
  int64_t me;
  if (absl::Status s = CheckGroup(key, group, rank_, size(), &me); !s.ok()) return s;
  if (absl::Status s = CheckReduction(type, kind); !s.ok()) return s;
  const int64_t n = static_cast<int64_t>(group.size());
  const int64_t width = ElementBytes(type);
  absl::StatusOr<SharedMemoryWorld::Meeting*> meeting = world_.Join(key, group, me, input, output);
  if (!meeting.ok()) return meeting.status();
  // Phase 1: reduce my slice over every member, in rank order.
  const auto [begin, end] = Slice(count, n, me);
  const int64_t bytes = (end - begin) * width;
  if (bytes > 0) {
    // Member 0's slice first, unless it is my own output (in place, me == 0).
    std::vector<char> first;
    const char* first_in = At((*meeting)->inputs[0], begin * width);
    char* mine = At(output, begin * width);
    if (first_in != mine) {
      if (me != 0 && input == output) {
        // My own slice of input is needed later in the fold: keep a copy.
        first.assign(At(input, begin * width), At(input, begin * width) + bytes);
      }
      std::memmove(mine, first_in, static_cast<size_t>(bytes));
    }
    for (int64_t j = 1; j < n; ++j) {
      const char* in = j == me && !first.empty() ? first.data()
                                                 : At((*meeting)->inputs[j], begin * width);
      ReduceInto(type, kind, mine, in, end - begin);
    }
  }
  if (absl::Status s = world_.Barrier(key, group, *meeting, 1); !s.ok()) return s;
  // Phase 2: gather the other members' reduced slices.
  for (int64_t j = 0; j < n; ++j) {
    if (j == me) continue;
    const auto [b, e] = Slice(count, n, j);
    if (e > b) {
      std::memcpy(At(output, b * width), At((*meeting)->outputs[j], b * width),
                  static_cast<size_t>((e - b) * width));
    }
  }
  return world_.Leave(key, group, *meeting, 2);
}

absl::Status SharedMemoryCommunicator::AllGather(const CollectiveKey& key, DeviceGroup group,
                                                 const void* input, void* output,
                                                 int64_t bytes) {
  int64_t me;
  if (absl::Status s = CheckGroup(key, group, rank_, size(), &me); !s.ok()) return s;
  absl::StatusOr<SharedMemoryWorld::Meeting*> meeting = world_.Join(key, group, me, input, output);
  if (!meeting.ok()) return meeting.status();
  for (size_t j = 0; j < group.size(); ++j) {
    std::memcpy(At(output, static_cast<int64_t>(j) * bytes), (*meeting)->inputs[j],
                static_cast<size_t>(bytes));
  }
  return world_.Leave(key, group, *meeting, 1);
}

absl::Status SharedMemoryCommunicator::ReduceScatter(const CollectiveKey& key,
                                                     DeviceGroup group, ElementType type,
                                                     ReductionKind kind, const void* input,
                                                     void* output, int64_t count) {
  int64_t me;
  if (absl::Status s = CheckGroup(key, group, rank_, size(), &me); !s.ok()) return s;
  if (absl::Status s = CheckReduction(type, kind); !s.ok()) return s;
  absl::StatusOr<SharedMemoryWorld::Meeting*> meeting = world_.Join(key, group, me, input, output);
  if (!meeting.ok()) return meeting.status();
  const int64_t bytes = count * ElementBytes(type);
  std::memcpy(output, At((*meeting)->inputs[0], me * bytes), static_cast<size_t>(bytes));
  for (size_t j = 1; j < group.size(); ++j) {
    ReduceInto(type, kind, output, At((*meeting)->inputs[j], me * bytes), count);
  }
  return world_.Leave(key, group, *meeting, 1);
}

absl::Status SharedMemoryCommunicator::AllToAll(const CollectiveKey& key, DeviceGroup group,
                                                const void* input, void* output,
                                                int64_t bytes) {
  int64_t me;
  if (absl::Status s = CheckGroup(key, group, rank_, size(), &me); !s.ok()) return s;
  absl::StatusOr<SharedMemoryWorld::Meeting*> meeting = world_.Join(key, group, me, input, output);
  if (!meeting.ok()) return meeting.status();
  for (size_t j = 0; j < group.size(); ++j) {
    std::memcpy(At(output, static_cast<int64_t>(j) * bytes),
                At((*meeting)->inputs[j], me * bytes), static_cast<size_t>(bytes));
  }
  return world_.Leave(key, group, *meeting, 1);
}

absl::Status SharedMemoryCommunicator::CollectivePermute(
    const CollectiveKey& key, absl::Span<const std::pair<int64_t, int64_t>> pairs,
    const void* input, void* output, int64_t bytes) {
  std::set<int64_t> members;
  int64_t source = -1;
  for (const auto& [s, t] : pairs) {
    members.insert(s);
    members.insert(t);
    if (t == rank_) source = s;
  }
  if (members.count(rank_) == 0) {
    std::memset(output, 0, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  const std::vector<int64_t> group(members.begin(), members.end());
  int64_t me;
  if (absl::Status s = CheckGroup(key, group, rank_, size(), &me); !s.ok()) return s;
  absl::StatusOr<SharedMemoryWorld::Meeting*> meeting = world_.Join(key, group, me, input, output);
  if (!meeting.ok()) return meeting.status();
  // Another member may read my input while I write my output: when they are
  // the same buffer, read my source's data into a copy first.
  std::vector<char> received;
  if (source >= 0) {
    const int64_t from = std::lower_bound(group.begin(), group.end(), source) - group.begin();
    const char* data = static_cast<const char*>((*meeting)->inputs[from]);
    received.assign(data, data + bytes);
  }
  if (absl::Status s = world_.Barrier(key, group, *meeting, 1); !s.ok()) return s;
  if (source >= 0) {
    std::memcpy(output, received.data(), static_cast<size_t>(bytes));
  } else {
    std::memset(output, 0, static_cast<size_t>(bytes));
  }
  return world_.Leave(key, group, *meeting, 2);
}

absl::Status SharedMemoryCommunicator::Broadcast(const CollectiveKey& key, DeviceGroup group,
                                                 int64_t root, const void* input, void* output,
                                                 int64_t bytes) {
  int64_t me;
  if (absl::Status s = CheckGroup(key, group, rank_, size(), &me); !s.ok()) return s;
  if (root < 0 || root >= static_cast<int64_t>(group.size())) {
    return absl::InvalidArgumentError(absl::StrCat(key.name, ": root ", root, " out of range"));
  }
  absl::StatusOr<SharedMemoryWorld::Meeting*> meeting = world_.Join(key, group, me, input, output);
  if (!meeting.ok()) return meeting.status();
  if (me != root) {
    std::memcpy(output, (*meeting)->inputs[root], static_cast<size_t>(bytes));
  } else if (input != output) {
    std::memcpy(output, input, static_cast<size_t>(bytes));
  }
  return world_.Leave(key, group, *meeting, 1);
}

}  // namespace runtime
}  // namespace hloc
