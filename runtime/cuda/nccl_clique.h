// The GPUs of one program run in one process, one rank per GPU, and the
// NCCL communicators among them.
//
// Device (rank) d of the program is GPU `ordinals[d]`. Each device group an
// op names (global device ids, rank order) gets its own communicator, made
// with ncclCommInitAll over the group's GPUs the first time a member's
// thunk is initialized (GpuExecutable::Load, one device after another on
// one thread, so no rank waits for another), and shared by every op with
// the same group: its rank i is the group's member i. Collective-permute
// uses the group of all devices.
//
//   devices 0..3, replica_groups={{0,2},{1,3}}:
//     group {0,2} -> comms[0] on GPU ordinals[0], comms[1] on ordinals[2]
//     group {1,3} -> comms[0] on GPU ordinals[1], comms[1] on ordinals[3]
//
// A program run alone (no clique in GpuLoadOptions) gets a clique of its
// one device. When one device of a run fails, the runner aborts the clique
// (Abort): NCCL has no timeout, so ranks already waiting in a collective for
// the failed one would otherwise never return. Ranks in several processes (ncclCommInitRank with an id
// passed between them) are not done yet.
#ifndef HLOC_RUNTIME_CUDA_NCCL_CLIQUE_H_
#define HLOC_RUNTIME_CUDA_NCCL_CLIQUE_H_

#include <nccl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/cuda/nccl_library.h"

namespace hloc {
namespace cuda {

class NcclClique {
 public:
  // Loads NCCL (NotFound "NCCL not found: ..." without it).
  static absl::StatusOr<std::shared_ptr<NcclClique>> Create(std::vector<int> ordinals);
  // Over a library the caller keeps alive (tests pass a fake).
  static absl::StatusOr<std::shared_ptr<NcclClique>> CreateWith(const NcclLibrary* nccl,
                                                               std::vector<int> ordinals);
  ~NcclClique();
  NcclClique(const NcclClique&) = delete;
  NcclClique& operator=(const NcclClique&) = delete;

  int64_t size() const { return static_cast<int64_t>(ordinals_.size()); }
  const NcclLibrary& nccl() const { return *nccl_; }
  // The communicator of `group`'s member at `index`, made on first use.
  absl::StatusOr<ncclComm_t> Communicator(absl::Span<const int64_t> group, int64_t index);
  // One device failed: aborts every communicator (ncclCommAbort), which
  // makes ranks blocked in a collective waiting for it return instead of
  // hanging. The clique is unusable afterwards: Communicator returns
  // `reason`, and the programs that hold its communicators must not run
  // again. The first reason is kept; later calls do nothing.
  void Abort(const absl::Status& reason);
  // OK, or the reason the clique was aborted.
  absl::Status aborted() const;

 private:
  NcclClique(const NcclLibrary* nccl, std::vector<int> ordinals)
      : nccl_(nccl), ordinals_(std::move(ordinals)) {}
  const NcclLibrary* nccl_;
  std::vector<int> ordinals_;
  mutable std::mutex mu_;
  std::map<std::vector<int64_t>, std::vector<ncclComm_t>> comms_;
  absl::Status aborted_;
};

// One device's place in a clique (what GpuLoadOptions and GpuInitContext
// carry).
struct NcclRank {
  std::shared_ptr<NcclClique> clique;
  int64_t rank = 0;
};

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_NCCL_CLIQUE_H_
