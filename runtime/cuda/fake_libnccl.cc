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
//       until it is aborted (a peer that never arrives); a collective on a
//       blocking communicator, outside a group, does not return until then
//   fake_nccl_fail_collectives(result)  collectives leave the communicator
//       in the asynchronous error `result` (ncclRemoteError: a peer died)
//   fake_nccl_calls(destroyed, aborted)  communicators destroyed and aborted
//       so far, to tell which teardown a clique chose
//   fake_nccl_call_time(microseconds)  every collective call (and
//       ncclGroupEnd) spends this long inside the fake, reading its
//       communicator before and after, as NCCL's enqueue does
//   fake_nccl_misuses()  calls that touched a freed communicator: a call
//       made on one, a call that was inside the fake while its communicator
//       was freed, a second free
//
// Freed communicators are kept (marked freed, deleted at exit), so a use
// after free is counted rather than undefined. A collective on a blocking
// communicator that hangs waits, as NCCL's does, until ncclCommAbort sets
// its abort flag from another thread, and then returns ncclSystemError
// (NCCL's sanctioned way out of a stuck blocking call, not a misuse).
#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

constexpr int kPollsToSettle = 3;

struct FakeComm {
  bool blocking = true;
  int polls_left = 0;  // < 0: never settles.
  ncclResult_t error = ncclSuccess;
  bool freed = false;  // By ncclCommAbort or ncclCommDestroy.
};

std::mutex mu;
std::condition_variable aborted_cv;  // A communicator was freed.
bool hang_init = false, hang_collectives = false;
ncclResult_t collective_error = ncclSuccess;
int destroyed = 0, aborted = 0, misuses = 0;
int call_time_us = 0;
// NCCL's group state is per thread.
thread_local int group_depth = 0;
thread_local std::set<FakeComm*> group_comms;  // Touched inside the open group.
std::vector<std::unique_ptr<FakeComm>> comms;  // Every one made, freed or not.

// `handle` as a communicator the fake made and has not freed; null (and a
// misuse when it was freed) otherwise. Under `mu`.
FakeComm* Live(ncclComm_t handle) {
  FakeComm* comm = reinterpret_cast<FakeComm*>(handle);
  for (const auto& made : comms) {
    if (made.get() != comm) continue;
    if (!comm->freed) return comm;
    ++misuses;
    return nullptr;
  }
  return nullptr;
}

// Spends call_time_us inside a call that holds `comm`, then reads it again:
// a free meanwhile is a misuse. Returns false then.
bool StayInside(std::unique_lock<std::mutex>& lock, FakeComm* comm) {
  if (call_time_us <= 0) return true;
  lock.unlock();
  std::this_thread::sleep_for(std::chrono::microseconds(call_time_us));
  lock.lock();
  if (!comm->freed) return true;
  ++misuses;
  return false;
}

// A collective on `comm`: in progress until settled (or forever).
ncclResult_t Collective(ncclComm_t handle) {
  std::unique_lock<std::mutex> lock(mu);
  FakeComm* comm = Live(handle);
  if (comm == nullptr) return ncclInvalidArgument;
  if (!StayInside(lock, comm)) return ncclInvalidArgument;
  if (collective_error != ncclSuccess) comm->error = collective_error;
  if (comm->blocking) {
    if (!hang_collectives || group_depth > 0) return ncclSuccess;
    // Stuck for a peer that never comes, until aborted from elsewhere.
    aborted_cv.wait(lock, [&] { return comm->freed; });
    return ncclSystemError;
  }
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
  comms.push_back(std::make_unique<FakeComm>());
  FakeComm* comm = comms.back().get();
  comm->blocking = config == nullptr || config->blocking != 0;
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
  FakeComm* comm = Live(handle);
  if (comm == nullptr) return ncclInvalidArgument;
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
  FakeComm* comm = Live(handle);
  if (comm == nullptr) return ncclInvalidArgument;
  comm->freed = true;
  ++destroyed;
  aborted_cv.notify_all();
  return ncclSuccess;
}
ncclResult_t ncclCommAbort(ncclComm_t handle) {
  std::lock_guard<std::mutex> lock(mu);
  FakeComm* comm = Live(handle);
  if (comm == nullptr) return ncclInvalidArgument;
  group_comms.erase(comm);
  comm->freed = true;
  ++aborted;
  aborted_cv.notify_all();
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
  std::unique_lock<std::mutex> lock(mu);
  if (group_depth == 0) return ncclInvalidUsage;
  if (--group_depth > 0) return ncclSuccess;
  std::set<FakeComm*> pending;
  pending.swap(group_comms);
  for (FakeComm* comm : pending) {
    if (comm->freed) {
      ++misuses;
      return ncclInvalidArgument;
    }
  }
  for (FakeComm* comm : pending) {
    if (!StayInside(lock, comm)) return ncclInvalidArgument;
  }
  return pending.empty() ? ncclSuccess : ncclInProgress;
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
void fake_nccl_call_time(int microseconds) {
  std::lock_guard<std::mutex> lock(mu);
  call_time_us = microseconds;
}
int fake_nccl_misuses() {
  std::lock_guard<std::mutex> lock(mu);
  return misuses;
}

}  // extern "C"
