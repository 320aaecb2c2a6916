// N devices as N threads of one process, exchanging data through each
// other's memory.
//
// Every op instance is one meeting, keyed by (key.name, key.sequence, first
// device of the group). A member arrives with pointers to its input and
// output, waits for the rest, and then reads the other members' memory
// directly. Phases are separated by barriers of the meeting, and nobody
// leaves before everyone is done reading, so no buffer changes under a
// reader.
//
// All-reduce is a reduce-scatter followed by an all-gather over the members'
// own outputs, so each member reduces only its 1/n slice:
//
//   phase 1   member r: out_r[slice r] = in_0[slice r] op in_1[slice r] op ...
//   barrier
//   phase 2   member r: out_r[slice j] = out_j[slice j] for every j != r
//   barrier (leave)
//
// In place (in_r == out_r) is safe: in phase 1 member r writes only slice r
// of its own buffer, which only it reads; in phase 2 everyone reads only
// slice j of member j, which nobody writes any more.
#ifndef HLOC_RUNTIME_SHARED_MEMORY_COMMUNICATOR_H_
#define HLOC_RUNTIME_SHARED_MEMORY_COMMUNICATOR_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "runtime/communicator.h"

namespace hloc {
namespace runtime {

// The meeting place of `size` devices; outlives their communicators.
class SharedMemoryWorld {
 public:
  explicit SharedMemoryWorld(int64_t size, absl::Duration timeout = absl::Seconds(120))
      : size_(size), timeout_(timeout) {}
  int64_t size() const { return size_; }
  // Device `rank`'s communicator (rank < size).
  std::shared_ptr<Communicator> CommunicatorFor(int64_t rank);
  // A device failed: every waiting and later meeting returns `status`.
  void Abort(const absl::Status& status);

 private:
  friend class SharedMemoryCommunicator;
  struct Meeting {
    std::vector<const void*> inputs;
    std::vector<void*> outputs;
    std::vector<int64_t> reached;  // Members through each barrier.
    int64_t left = 0;
  };
  using Key = std::tuple<std::string, int64_t, int64_t>;

  // Member `index` of `group` joins the meeting of `key` and waits for the
  // whole group; the returned meeting stays valid until it calls Leave.
  absl::StatusOr<Meeting*> Join(const CollectiveKey& key, DeviceGroup group, int64_t index,
                                const void* input, void* output);
  // Waits until every member has reached barrier `phase` (1, 2, ...).
  absl::Status Barrier(const CollectiveKey& key, DeviceGroup group, Meeting* meeting,
                       int64_t phase);
  // The last barrier; the last member out removes the meeting.
  absl::Status Leave(const CollectiveKey& key, DeviceGroup group, Meeting* meeting,
                     int64_t phase);
  absl::Status WaitFor(std::unique_lock<std::mutex>& lock, const CollectiveKey& key,
                       DeviceGroup group, const std::function<bool()>& done);

  const int64_t size_;
  const absl::Duration timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, Meeting> meetings_;
  absl::Status aborted_;
};

class SharedMemoryCommunicator : public Communicator {
 public:
  SharedMemoryCommunicator(SharedMemoryWorld* world, int64_t rank) : world_(*world), rank_(rank) {}
  int64_t rank() const override { return rank_; }
  int64_t size() const override { return world_.size(); }
  absl::Status AllReduce(const CollectiveKey& key, DeviceGroup group, ElementType type,
                         ReductionKind kind, const void* input, void* output,
                         int64_t count) override;
  absl::Status AllGather(const CollectiveKey& key, DeviceGroup group, const void* input,
                         void* output, int64_t bytes) override;
  absl::Status ReduceScatter(const CollectiveKey& key, DeviceGroup group, ElementType type,
                             ReductionKind kind, const void* input, void* output,
                             int64_t count) override;
  absl::Status AllToAll(const CollectiveKey& key, DeviceGroup group, const void* input,
                        void* output, int64_t bytes) override;
  absl::Status CollectivePermute(const CollectiveKey& key,
                                 absl::Span<const std::pair<int64_t, int64_t>> pairs,
                                 const void* input, void* output, int64_t bytes) override;
  absl::Status Broadcast(const CollectiveKey& key, DeviceGroup group, int64_t root,
                         const void* input, void* output, int64_t bytes) override;

 private:
  SharedMemoryWorld& world_;
  const int64_t rank_;
};

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_SHARED_MEMORY_COMMUNICATOR_H_
