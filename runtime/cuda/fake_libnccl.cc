// A stand-in for libnccl.so.2 for nccl_collectives_test: every entry point
// NcclLibrary resolves, with NCCL's signatures (nccl.h), none of which moves
// any data. Communicators are made, polled, destroyed and aborted; the
// version and error strings are the fake's own, so a test can tell that the
// loader called into this file.
//
// Non-blocking mode as NCCL has it: a communicator made with
// config->blocking = 0 answers ncclInProgress from ncclCommGetAsyncError
// for a few polls before ncclSuccess, and a collective on it returns
// ncclInProgress (outside a group; ncclGroupEnd does so for a group) until
// the communicator settles again. Controls that are not NCCL's, for tests
// (through dlsym):
//   fake_nccl_hang(init, collectives)  from now on, non-blocking inits, or
//       collectives, never settle: the communicator stays ncclInProgress
//       until it is aborted (a peer that never arrives)
//   fake_nccl_fail_collectives(result)  collectives leave the communicator
//       in the asynchronous error `result` (ncclRemoteError: a peer died)
//   fake_nccl_calls(destroyed, aborted)  communicators destroyed and aborted
//       so far, to tell which teardown a clique chose
#include <nccl.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <set>

namespace {

constexpr int kPollsToSettle = 3;

struct FakeComm {
  bool blocking = true;
  int polls_left = 0;  // < 0: never settles.
  ncclResult_t error = ncclSuccess;
};

std::mutex mu;
bool hang_init = false, hang_collectives = false;
ncclResult_t collective_error = ncclSuccess;
int destroyed = 0, aborted = 0;
int group_depth = 0;
std::set<FakeComm*> group_comms;  // Touched inside the open group.
std::set<FakeComm*> live;         // To tell a freed communicator (a test bug) from a live one.

// A collective on `comm`: in progress until settled (or forever).
ncclResult_t Collective(ncclComm_t handle) {
  std::lock_guard<std::mutex> lock(mu);
  FakeComm* comm = reinterpret_cast<FakeComm*>(handle);
  if (live.count(comm) == 0) return ncclInvalidArgument;
  if (collective_error != ncclSuccess) comm->error = collective_error;
  if (comm->blocking) return ncclSuccess;
  comm->polls_left = hang_collectives ? -1 : kPollsToSettle;
  if (group_depth > 0) {
    group_comms.insert(comm);
    return ncclSuccess;
  }
  return ncclInProgress;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  *version = 29901;
  return ncclSuccess;
}
const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclInternalError:
      return "fake internal error";
    case ncclRemoteError:
      return "fake remote error";
    default:
      return "fake error";
  }
}
ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::memset(id, 7, sizeof(*id));
  return ncclSuccess;
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t* handle, int nranks, ncclUniqueId, int rank,
                                    ncclConfig_t* config) {
  if (nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  std::lock_guard<std::mutex> lock(mu);
  FakeComm* comm = new FakeComm();
  comm->blocking = config == nullptr || config->blocking != 0;
  live.insert(comm);
  *handle = reinterpret_cast<ncclComm_t>(comm);
  if (comm->blocking) return ncclSuccess;
  comm->polls_left = hang_init ? -1 : kPollsToSettle;
  if (group_depth > 0) {
    group_comms.insert(comm);
    return ncclSuccess;
  }
  return ncclInProgress;
}
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  return ncclCommInitRankConfig(comm, nranks, id, rank, nullptr);
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t handle, ncclResult_t* result) {
  std::lock_guard<std::mutex> lock(mu);
  FakeComm* comm = reinterpret_cast<FakeComm*>(handle);
  if (live.count(comm) == 0) return ncclInvalidArgument;
  if (comm->polls_left != 0) {
    if (comm->polls_left > 0) --comm->polls_left;
    *result = ncclInProgress;
  } else {
    *result = comm->error;
  }
  return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t handle) {
  std::lock_guard<std::mutex> lock(mu);
  FakeComm* comm = reinterpret_cast<FakeComm*>(handle);
  if (live.erase(comm) == 0) return ncclInvalidArgument;
  delete comm;
  ++destroyed;
  return ncclSuccess;
}
ncclResult_t ncclCommAbort(ncclComm_t handle) {
  std::lock_guard<std::mutex> lock(mu);
  FakeComm* comm = reinterpret_cast<FakeComm*>(handle);
  if (live.erase(comm) == 0) return ncclInvalidArgument;
  group_comms.erase(comm);
  delete comm;
  ++aborted;
  return ncclSuccess;
}
ncclResult_t ncclAllReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t comm,
                           cudaStream_t) {
  return Collective(comm);
}
ncclResult_t ncclAllGather(const void*, void*, size_t, ncclDataType_t, ncclComm_t comm,
                           cudaStream_t) {
  return Collective(comm);
}
ncclResult_t ncclReduceScatter(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                               ncclComm_t comm, cudaStream_t) {
  return Collective(comm);
}
ncclResult_t ncclBroadcast(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t comm,
                           cudaStream_t) {
  return Collective(comm);
}
ncclResult_t ncclSend(const void*, size_t, ncclDataType_t, int, ncclComm_t comm, cudaStream_t) {
  return Collective(comm);
}
ncclResult_t ncclRecv(void*, size_t, ncclDataType_t, int, ncclComm_t comm, cudaStream_t) {
  return Collective(comm);
}
ncclResult_t ncclGroupStart() {
  std::lock_guard<std::mutex> lock(mu);
  ++group_depth;
  return ncclSuccess;
}
ncclResult_t ncclGroupEnd() {
  std::lock_guard<std::mutex> lock(mu);
  if (group_depth == 0) return ncclInvalidUsage;
  if (--group_depth > 0) return ncclSuccess;
  const bool pending = !group_comms.empty();
  group_comms.clear();
  return pending ? ncclInProgress : ncclSuccess;
}

// Not NCCL's: the test controls (see the top of the file).
void fake_nccl_hang(int init, int collectives) {
  std::lock_guard<std::mutex> lock(mu);
  hang_init = init != 0;
  hang_collectives = collectives != 0;
}
void fake_nccl_fail_collectives(int result) {
  std::lock_guard<std::mutex> lock(mu);
  collective_error = static_cast<ncclResult_t>(result);
}
void fake_nccl_calls(int* destroyed_count, int* aborted_count) {
  std::lock_guard<std::mutex> lock(mu);
  *destroyed_count = destroyed;
  *aborted_count = aborted;
}

}  // extern "C"
