// The GPU's collective thunk: one collective, replica-id or partition-id of
// a device's program, run with NCCL on the device's stream. The compiler's
// CollectiveSpec (runtime/collective_thunks.h) is the host's; only the
// transport differs:
//
//   op                    NCCL calls (on the group's communicator, nccl_clique.h)
//   all-reduce            ncclAllReduce per leaf, in one group call
//   all-gather            ncclAllGather of bytes
//   reduce-scatter        ncclReduceScatter
//   all-to-all            ncclSend/ncclRecv of each block, in one group call
//   ragged-all-to-all     offsets and sizes read back to the host, headers
//                         and a verdict exchanged (runtime/ragged_all_to_all.h),
//                         then ncclSend/ncclRecv of each run in one group call
//   collective-permute    ncclSend/ncclRecv per pair on the all-devices
//                         communicator; a device no pair targets gets zeros
//   collective-broadcast  ncclBroadcast from the group's rank 0
//   replica-id, partition-id   the device's id written with memsets
//
// Blocks along a dimension that is not the outermost (outer > 1, see
// collective_thunks.h) are repacked [outer][n][block] <-> [n][outer][block]
// with 2-D device copies through the thunk's scratch buffer.
//
// The watchdog (nccl_clique.h): every NCCL call's ncclInProgress is waited
// out (non-blocking communicators), and with a timeout the thunk then polls
// the stream until the collective has run, all within one deadline per
// execution; a collective whose peers never come fails with
// DeadlineExceeded naming the instruction, op, group and rank, after the
// clique is aborted. Waiting on the host makes such a thunk
// ReadsBackToHost (no CUDA graph). Each collective call, or each group of
// calls, is one of the clique's enqueues (NcclClique::Enqueue), so an abort
// from another thread never frees the communicator under it.
//
// Reductions: NCCL has sum, product, min and max over s8, u8, s32, u32, s64,
// u64, f16, bf16, f32 and f64; and/or over pred are min/max over bytes. Anything
// else (and/or over integers, s16/u16) is refused when compiling
// (CheckNcclSupport).
#ifndef HLOC_RUNTIME_CUDA_COLLECTIVE_THUNK_H_
#define HLOC_RUNTIME_CUDA_COLLECTIVE_THUNK_H_

#include <nccl.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/collective_thunks.h"
#include "runtime/cuda/gpu_thunk.h"
#include "runtime/cuda/nccl_clique.h"

namespace hloc {
namespace cuda {

// NCCL's type for a reduction over `type`; none for s16/u16 (NCCL has no
// 16-bit integers). Data movement sends bytes whatever the type.
std::optional<ncclDataType_t> NcclType(runtime::ElementType type);

// OK when NCCL can run `spec`; else why not (for a compile error).
absl::Status CheckNcclSupport(const runtime::CollectiveSpec& spec);

// One 2-D device copy of the repacking: `rows` rows of `row_bytes`.
struct RowCopy {
  int64_t destination = 0, destination_pitch = 0;  // Byte offsets from the buffers' starts.
  int64_t source = 0, source_pitch = 0;
  int64_t row_bytes = 0, rows = 0;
};
// [outer][n][block] -> [n][outer][block] (runtime::PackBlocks) and back
// (runtime::UnpackBlocks), as n row copies each.
std::vector<RowCopy> PackCopies(int64_t outer, int64_t n, int64_t block_bytes);
std::vector<RowCopy> UnpackCopies(int64_t outer, int64_t n, int64_t block_bytes);

// Bytes of scratch `spec` needs for repacking (0: none).
int64_t CollectiveScratchBytes(const runtime::CollectiveSpec& spec);

// Buffers: operand leaves [0, L), result leaves [L, 2L) (L = leaves; the ids
// and ragged-all-to-all have one result), then the scratch buffer when
// CollectiveScratchBytes > 0.
class CollectiveThunk : public Thunk {
 public:
  CollectiveThunk(std::string label, runtime::CollectiveSpec spec, std::vector<BufferId> buffers)
      : label_(std::move(label)), spec_(std::move(spec)), buffers_(std::move(buffers)) {}
  // Finds the device's group and its communicator (a clique of the device
  // alone when the context has none; replica-id and partition-id need no
  // NCCL).
  absl::Status Initialize(GpuInitContext& context) override;
  absl::Status Execute(GpuExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  const runtime::CollectiveSpec& spec() const { return spec_; }
  // ragged-all-to-all reads its offsets and sizes back to the host; a
  // watched collective waits on the host for its stream.
  bool ReadsBackToHost() const override {
    return spec_.op == runtime::CollectiveOp::kRaggedAllToAll || Watched();
  }

 private:
  bool UsesNccl() const {
    return spec_.op != runtime::CollectiveOp::kReplicaId &&
           spec_.op != runtime::CollectiveOp::kPartitionId;
  }
  bool Watched() const {
    return UsesNccl() && timeout_ > absl::ZeroDuration() &&
           timeout_ != absl::InfiniteDuration();
  }
  // One execution's wait (deadline from now).
  NcclWait StartWait() const;
  // Makes `calls` (NCCL calls on the communicator: one collective, or one
  // group) as one of the clique's enqueues (NcclClique::Enqueue: an abort
  // meanwhile does not free the communicator under them), then waits until
  // NCCL has taken them (non-blocking mode's ncclInProgress).
  absl::Status Settle(const std::function<absl::Status()>& calls, const NcclWait& wait) const;
  // When watched: waits until the stream has run everything queued.
  absl::Status WaitForStream(GpuExecutionContext& context, const NcclWait& wait) const;
  absl::Status Issue(GpuExecutionContext& context, const NcclWait& wait) const;
  absl::Status RunAllGather(GpuExecutionContext& context, size_t leaf,
                            const NcclWait& wait) const;
  absl::Status RunReduceScatter(GpuExecutionContext& context, size_t leaf,
                                const NcclWait& wait) const;
  absl::Status RunAllToAll(GpuExecutionContext& context, size_t leaf, const NcclWait& wait) const;
  absl::Status RunPermute(GpuExecutionContext& context, const NcclWait& wait) const;
  absl::Status RunRaggedAllToAll(GpuExecutionContext& context, const NcclWait& wait) const;

  std::string label_;
  runtime::CollectiveSpec spec_;
  std::vector<BufferId> buffers_;
  // Set by Initialize.
  std::shared_ptr<NcclClique> clique_;
  int64_t rank_ = 0;
  std::vector<int64_t> group_;  // This device's group (all devices for a permute).
  int64_t index_ = 0;           // Its rank in the group.
  ncclComm_t comm_ = nullptr;
  absl::Duration timeout_ = kDefaultCollectiveTimeout;
};

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_COLLECTIVE_THUNK_H_
