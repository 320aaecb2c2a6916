// Collective thunks: one step of a device's program that talks to the other
// devices through a Communicator (communicator.h), and the thunk that writes
// the device's replica or partition id.
//
// What the compiler decides once (backend/common/collective_lowering.h) is a
// CollectiveSpec: the op, element type and reduction, every device group of
// the op (the thunk takes the one holding its communicator's rank, so one
// compiled program serves every device), and each leaf's geometry.
//
// Communicators move contiguous blocks in rank order. An all-gather,
// reduce-scatter or all-to-all along dimension d of a row-major array whose
// dimensions before d are not all 1 cuts the array into `outer` rows of
// group-size blocks; the thunk repacks [outer][G][block] <-> [G][outer][block]
// through a scratch buffer around the communicator call. ragged-all-to-all,
// whose sizes are only known at run time, is ragged_all_to_all.h's three
// exchanges.
#ifndef HLOC_RUNTIME_COLLECTIVE_THUNKS_H_
#define HLOC_RUNTIME_COLLECTIVE_THUNKS_H_

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/communicator.h"
#include "runtime/ragged_all_to_all.h"
#include "runtime/thunk.h"

namespace hloc {
namespace runtime {

enum class CollectiveOp {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,         // Array form: one leaf split along a dimension.
  kAllToAllTuple,    // Tuple form: operand leaf j goes to rank j.
  kRaggedAllToAll,   // ragged_all_to_all.h; leaves: its six operands.
  kCollectivePermute,
  kBroadcast,        // collective-broadcast: the group's rank 0 sends.
  kReplicaId,
  kPartitionId,
};
absl::string_view CollectiveOpName(CollectiveOp op);

struct CollectiveLeaf {
  int64_t elements = 0;   // Of the operand leaf.
  int64_t outer = 1;      // Rows before the split / gathered dimension.
  int64_t block_bytes = 0;  // One rank's block within one row.
};

struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::kAllReduce;
  ElementType type = ElementType::kF32;
  ReductionKind reduction = ReductionKind::kSum;
  std::vector<std::vector<int64_t>> groups;           // Global device ids, rank order.
  std::vector<std::pair<int64_t, int64_t>> pairs;     // collective-permute.
  int64_t num_partitions = 1;                         // replica-id / partition-id.
  std::vector<CollectiveLeaf> leaves;                 // One per operand leaf.
  RaggedRows ragged;                                  // ragged-all-to-all.
};

// Runs `spec` on operand leaves buffers[0, L) into result leaves
// buffers[L, 2L) (L = spec.leaves.size(); the ids have no operands and one
// u32 result; ragged-all-to-all has one result, buffers[6]). `name` keys the
// op instance with the communicator.
class CollectiveThunk : public Thunk {
 public:
  CollectiveThunk(std::string name, CollectiveSpec spec,
                  std::shared_ptr<Communicator> communicator, std::vector<BufferId> buffers)
      : name_(std::move(name)), spec_(std::move(spec)), communicator_(std::move(communicator)),
        buffers_(std::move(buffers)) {}
  absl::Status Execute(ExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  ThunkKind kind() const override { return ThunkKind::kCollective; }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  CollectiveSpec spec_;
  std::shared_ptr<Communicator> communicator_;
  std::vector<BufferId> buffers_;
  mutable std::atomic<int64_t> runs_{0};
};

// The group of `spec` holding device `rank` (every target's thunk takes its
// own); an error naming `name` when none does.
absl::StatusOr<DeviceGroup> GroupContaining(const CollectiveSpec& spec, int64_t rank,
                                            absl::string_view name);

// [outer][n][block] -> [n][outer][block] and back.
void PackBlocks(const void* source, void* destination, int64_t outer, int64_t n,
                int64_t block_bytes);
void UnpackBlocks(const void* source, void* destination, int64_t outer, int64_t n,
                  int64_t block_bytes);

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_COLLECTIVE_THUNKS_H_
