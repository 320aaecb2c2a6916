// NCCL loaded with dlopen, as the driver and cuBLASLt are (one hloc binary
// runs with or without NCCL): a table of the entry points hloc's collective
// thunks use (collective_thunk.h), each call's result turned into an
// absl::Status naming the call and NCCL's description. Communicators are
// made in NCCL's non-blocking mode (ncclCommInitRankConfig, NCCL 2.14 and
// later; see nccl_clique.h), so an older NCCL is refused as lacking it.
//
// Where libnccl.so.2 is looked for, in order:
//   $HLOC_NCCL_LIBRARY                  a file named explicitly
//   libnccl.so.2                        dlopen's own search (LD_LIBRARY_PATH,
//                                       the ld cache, the binary's RUNPATH)
//   /usr/local/cuda{,-*}/lib{64,}        CUDA toolkit installs
//   <python>/site-packages/nvidia/nccl/lib   the pip wheel (nvidia-nccl-cu1x),
//       for every entry of $PYTHONPATH and every python3.* under $VIRTUAL_ENV,
//       $CONDA_PREFIX, ~/.local, /usr/local, /usr and /opt/conda
//   python3 -c 'import nvidia.nccl'     last, only when all the above fail:
//                                       the wheel where PATH's python3 has it
// A library found nowhere is "NCCL not found: dlopen ... failed: ..." with
// IsLibraryMissing true.
#ifndef HLOC_RUNTIME_CUDA_NCCL_LIBRARY_H_
#define HLOC_RUNTIME_CUDA_NCCL_LIBRARY_H_

#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/dynamic_library.h"

namespace hloc {
namespace cuda {

#define HLOC_NCCL_FUNCTIONS(X) \
  X(ncclGetVersion)            \
  X(ncclGetErrorString)        \
  X(ncclGetUniqueId)           \
  X(ncclCommInitRank)          \
  X(ncclCommInitRankConfig)    \
  X(ncclCommGetAsyncError)     \
  X(ncclCommDestroy)           \
  X(ncclCommAbort)             \
  X(ncclAllReduce)             \
  X(ncclAllGather)             \
  X(ncclReduceScatter)         \
  X(ncclBroadcast)             \
  X(ncclSend)                  \
  X(ncclRecv)                  \
  X(ncclGroupStart)            \
  X(ncclGroupEnd)

class NcclLibrary {
 public:
  // The process-wide library, loaded once from the places above.
  static absl::StatusOr<const NcclLibrary*> Get();
  // A library from `names` (tests point it at a fake or a missing file).
  static absl::StatusOr<std::unique_ptr<NcclLibrary>> Load(const std::vector<std::string>& names);
  // The places Get tries, in order (existing files and bare names).
  static std::vector<std::string> SearchPath();

  // OK for ncclSuccess, else "<call>: <NCCL's error string> (ncclResult_t N)".
  absl::Status Check(ncclResult_t result, absl::string_view call) const;
  // The same, where ncclInProgress is OK too: a call on a non-blocking
  // communicator that NCCL finishes in the background (the caller then
  // waits for the communicator to settle, NcclClique::Await).
  absl::Status CheckIssued(ncclResult_t result, absl::string_view call) const {
    return Check(result == ncclInProgress ? ncclSuccess : result, call);
  }
  // NCCL's version code (22809 for 2.28.9), 0 when the query fails.
  int version() const;
  const std::string& path() const { return library_->name(); }

#define HLOC_NCCL_DECLARE_MEMBER(fn) decltype(&::fn) fn = nullptr;
  HLOC_NCCL_FUNCTIONS(HLOC_NCCL_DECLARE_MEMBER)
#undef HLOC_NCCL_DECLARE_MEMBER

 private:
  NcclLibrary() = default;
  std::shared_ptr<DynamicLibrary> library_;
};

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_NCCL_LIBRARY_H_
