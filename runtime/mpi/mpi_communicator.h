// The Communicator (runtime/communicator.h) of one device per MPI process:
// rank = MPI_COMM_WORLD rank = global device id. Each device group becomes an
// MPI communicator (MPI_Comm_create_group over the group's ranks in rank
// order, made on first use and kept), and the ops are the MPI collectives
// on it: MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block,
// MPI_Alltoall, MPI_Bcast; collective-permute is MPI_Isend / MPI_Irecv pairs
// on MPI_COMM_WORLD. MPI matches calls by order, so the key is not sent.
//
// MPI picks the reduction order, so float results may differ from the
// interpreter's rank order in the last bits. f16 and bf16 have no MPI type:
// their reductions gather the members' bytes (MPI_Allgather, or
// MPI_Alltoall for reduce-scatter) and reduce here in rank order, so they
// match the interpreter bit for bit.
//
// Debian's Open MPI, linked from its own directory (runtime/mpi/BUILD);
// tools/setup.sh installs it.
#ifndef HLOC_RUNTIME_MPI_MPI_COMMUNICATOR_H_
#define HLOC_RUNTIME_MPI_MPI_COMMUNICATOR_H_

#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/communicator.h"

namespace hloc {
namespace runtime {

// MPI for this process: MPI_Init_thread on creation, MPI_Finalize when the
// last reference goes. One per process.
class MpiSession {
 public:
  static absl::StatusOr<std::shared_ptr<MpiSession>> Initialize(int* argc, char*** argv);
  ~MpiSession();
  int64_t rank() const { return rank_; }
  int64_t size() const { return size_; }
  // Every rank's `bytes` bytes at `input`, in rank order, into `output` (all ranks).
  absl::Status GatherBytes(const void* input, void* output, int64_t bytes);

 private:
  MpiSession() = default;
  int64_t rank_ = 0;
  int64_t size_ = 1;
};

class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(std::shared_ptr<MpiSession> session);
  ~MpiCommunicator() override;
  int64_t rank() const override { return session_->rank(); }
  int64_t size() const override { return session_->size(); }
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
  // The MPI communicator of `group` (made on first use).
  absl::StatusOr<void*> CommOf(const CollectiveKey& key, DeviceGroup group);

  std::shared_ptr<MpiSession> session_;
  std::map<std::vector<int64_t>, void*> comms_;  // MPI_Comm handles, by group.
};

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_MPI_MPI_COMMUNICATOR_H_
