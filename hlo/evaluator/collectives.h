// The interpreter's collectives: what one device of a multi-device run
// (multi_device.h) computes for all-reduce, all-gather, reduce-scatter,
// all-to-all, ragged-all-to-all, collective-permute, collective-broadcast,
// their -start/-done forms, replica-id and partition-id.
//
// Every collective is one exchange: each member of the device group hands
// its operands to a Rendezvous and, once the whole group has arrived, reads
// every member's operands in rank order and computes its own result from
// them. That is slow (each device reduces all contributions itself) but has
// no order of arrival in it, so it defines the right answer: reductions run
// in rank order, r0 + r1 + r2 + ...
//
// An exchange is keyed by (instruction name, how many times this device has
// run it, first device of the group), so collectives inside while loops and
// groups of different sizes match up without any global clock. Names, not
// pointers: devices may run separately compiled copies of the module (the
// host backend's interpreter ops wrap each instruction per device).
#ifndef HLOC_HLO_EVALUATOR_COLLECTIVES_H_
#define HLOC_HLO_EVALUATOR_COLLECTIVES_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hlo/collective_groups.h"
#include "hlo/evaluator/ops.h"

namespace hloc {
namespace eval {

// Meeting point of the devices of one run.
class Rendezvous {
 public:
  using Contribution = std::shared_ptr<const std::vector<Literal>>;
  explicit Rendezvous(absl::Duration timeout) : timeout_(timeout) {}

  // Device at `rank` of `group` (device ids in rank order) hands in `values`
  // for the `count`-th run of `hlo`; returns every member's values in rank
  // order once all have arrived. Errors after the timeout, or as soon as
  // another device has failed (Abort).
  absl::StatusOr<std::vector<Contribution>> Exchange(const HloInstruction& hlo, int64_t count,
                                                     const std::vector<int64_t>& group,
                                                     int64_t rank, std::vector<Literal> values);
  // A device failed: every waiting and later exchange returns `status`.
  void Abort(const absl::Status& status);

 private:
  using Key = std::tuple<std::string, int64_t, int64_t>;
  struct Slot {
    std::vector<Contribution> values;
    int64_t arrived = 0;
    int64_t left = 0;
  };
  absl::Duration timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, Slot> slots_;
  absl::Status aborted_;
};

// One device of a multi-device run, as its evaluator sees it.
struct DeviceSlot {
  DeviceMesh mesh;
  int64_t device = 0;  // replica * num_partitions + partition
  Rendezvous* rendezvous = nullptr;
  // How many times this device has run each collective (owned by its thread).
  absl::flat_hash_map<const HloInstruction*, int64_t> runs;
  int64_t replica() const { return device / mesh.num_partitions; }
  int64_t partition() const { return device % mesh.num_partitions; }
};

// The value of collective `hlo` (IsCollective, not a -done form) on
// `device`, with array operands `ops`. Tuple results come back as tuple
// literals.
absl::StatusOr<Literal> EvalCollective(const HloInstruction& hlo, Operands ops,
                                       EvalContext& ctx, DeviceSlot& device);

}  // namespace eval
}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_COLLECTIVES_H_
