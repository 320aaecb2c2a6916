// Communicators of a clique and the watchdog's waits (see nccl_clique.h).
#include "runtime/cuda/nccl_clique.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cuda/cuda_driver.h"

namespace hloc {
namespace cuda {
namespace {

// Calls `step` until it says done (true), fails, or `deadline` passes
// (false). Yields for the first polls, then naps, doubling up to 1 ms.
absl::StatusOr<bool> PollUntil(absl::Time deadline,
                               const std::function<absl::StatusOr<bool>()>& step) {
  absl::Duration nap = absl::Microseconds(10);
  for (int polls = 0;; ++polls) {
    absl::StatusOr<bool> done = step();
    if (!done.ok() || *done) return done;
    if (absl::Now() >= deadline) return false;
    if (polls < 100) {
      std::this_thread::yield();
    } else {
      absl::SleepFor(nap);
      nap = std::min(2 * nap, absl::Milliseconds(1));
    }
  }
}

absl::Status TimedOut(const NcclWait& wait, absl::string_view what) {
  return absl::DeadlineExceededError(absl::StrCat(
      wait.Describe(), ": ", what, " did not finish within ", absl::FormatDuration(wait.timeout),
      " (the NCCL watchdog's timeout; a peer never arrived?); the NCCL communicators "
      "were aborted"));
}

}  // namespace

NcclWait NcclWait::Starting(std::string op, std::vector<int64_t> group, int64_t rank,
                            absl::Duration timeout) {
  NcclWait wait;
  wait.op = std::move(op);
  wait.group = std::move(group);
  wait.rank = rank;
  if (timeout > absl::ZeroDuration() && timeout != absl::InfiniteDuration()) {
    wait.timeout = timeout;
    wait.deadline = absl::Now() + timeout;
  }
  return wait;
}

std::string NcclWait::Describe() const {
  return absl::StrCat(op, " over device group {", absl::StrJoin(group, ","), "} at rank ", rank);
}

absl::Status SelectDeviceWithDriver(int ordinal) {
  absl::StatusOr<const CudaDriver*> loaded = CudaDriver::Get();
  if (!loaded.ok()) return loaded.status();
  const CudaDriver& d = **loaded;
  CUdevice device;
  if (absl::Status s = d.Check(d.cuDeviceGet(&device, ordinal), "cuDeviceGet"); !s.ok()) return s;
  CUcontext context;
  if (absl::Status s =
          d.Check(d.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
      !s.ok()) {
    return s;
  }
  absl::Status set = d.Check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  // The device's CudaDevice holds the context; this reference was only ours.
  d.cuDevicePrimaryCtxRelease(device);
  return set;
}

absl::StatusOr<std::vector<ncclComm_t>> InitNcclCommunicators(
    const NcclLibrary& nccl, int nranks, absl::Span<const NcclMember> members,
    const NcclDeviceSelector& select_device, const NcclWait& wait) {
  std::vector<int> ordinals;
  for (const NcclMember& m : members) ordinals.push_back(m.ordinal);
  const std::string call =
      absl::StrCat("ncclCommInitRankConfig of ", members.size(), " of ", nranks, " ranks on GPUs {",
                   absl::StrJoin(ordinals, ","), "}");
  ncclUniqueId id;
  if (absl::Status s = nccl.Check(nccl.ncclGetUniqueId(&id), "ncclGetUniqueId"); !s.ok()) {
    return s;
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = wait.bounded() ? 0 : 1;
  std::vector<ncclComm_t> comms(members.size(), nullptr);
  auto abort_begun = [&] {
    for (ncclComm_t& comm : comms) {
      if (comm != nullptr) nccl.ncclCommAbort(comm);
      comm = nullptr;
    }
  };
  absl::Status status = nccl.Check(nccl.ncclGroupStart(), "ncclGroupStart");
  for (size_t i = 0; i < members.size() && status.ok(); ++i) {
    if (select_device) status = select_device(members[i].ordinal);
    if (status.ok()) {
      status = nccl.CheckIssued(
          nccl.ncclCommInitRankConfig(&comms[i], nranks, id, members[i].rank, &config), call);
    }
  }
  absl::Status end = nccl.CheckIssued(nccl.ncclGroupEnd(), "ncclGroupEnd");
  if (status.ok()) status = end;
  if (status.ok()) {
    absl::StatusOr<bool> ready = PollUntil(wait.deadline, [&]() -> absl::StatusOr<bool> {
      for (ncclComm_t comm : comms) {
        ncclResult_t state = ncclSuccess;
        if (absl::Status s =
                nccl.Check(nccl.ncclCommGetAsyncError(comm, &state), "ncclCommGetAsyncError");
            !s.ok()) {
          return s;
        }
        if (state == ncclInProgress) return false;
        if (absl::Status s = nccl.Check(state, call); !s.ok()) return s;
      }
      return true;
    });
    if (!ready.ok()) {
      status = ready.status();
    } else if (!*ready) {
      status = TimedOut(wait, call);
    }
  }
  if (!status.ok()) {
    abort_begun();
    return absl::Status(status.code(), status.code() == absl::StatusCode::kDeadlineExceeded
                                           ? status.message()
                                           : absl::StrCat(wait.Describe(), ": ", status.message()));
  }
  return comms;
}

absl::StatusOr<std::shared_ptr<NcclClique>> NcclClique::Create(std::vector<int> ordinals) {
  if (ordinals.empty()) return absl::InvalidArgumentError("an NCCL clique of no devices");
  absl::StatusOr<const NcclLibrary*> nccl = NcclLibrary::Get();
  if (!nccl.ok()) return nccl.status();
  return CreateWith(*nccl, std::move(ordinals));
}

absl::StatusOr<std::shared_ptr<NcclClique>> NcclClique::CreateWith(
    const NcclLibrary* nccl, std::vector<int> ordinals, NcclDeviceSelector select_device) {
  if (ordinals.empty()) return absl::InvalidArgumentError("an NCCL clique of no devices");
  if (!select_device) select_device = SelectDeviceWithDriver;
  return std::shared_ptr<NcclClique>(
      new NcclClique(nccl, std::move(ordinals), std::move(select_device)));
}

void NcclClique::Abort(const absl::Status& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!aborted_.ok()) return;
  aborted_ = reason.ok() ? absl::AbortedError("NCCL communicators aborted") : reason;
  for (auto& [comm, state] : states_) {
    // A non-blocking communicator in an enqueue is freed by the enqueue's
    // end (Enqueue); a blocking one now, to release a call stuck in NCCL.
    if (state.in_flight == 0 || state.blocking) FreeLocked(comm, state);
  }
}

void NcclClique::FreeLocked(ncclComm_t comm, CommState& state) {
  if (state.freed) return;
  // An aborted communicator is freed by the abort: never destroyed.
  nccl_->ncclCommAbort(comm);
  state.freed = true;
}

absl::Status NcclClique::Enqueue(ncclComm_t comm, const std::function<absl::Status()>& calls) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Status s = AbortedLocked(); !s.ok()) return s;
    auto it = states_.find(comm);
    if (it == states_.end()) {
      return absl::InvalidArgumentError("an NCCL enqueue on a communicator of another clique");
    }
    ++it->second.in_flight;
  }
  absl::Status status = calls();
  std::lock_guard<std::mutex> lock(mu_);
  CommState& state = states_[comm];
  if (--state.in_flight == 0 && !aborted_.ok()) FreeLocked(comm, state);
  return status;
}

absl::Status NcclClique::aborted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return aborted_;
}

absl::Status NcclClique::AbortedLocked() const {
  if (aborted_.ok()) return absl::OkStatus();
  // Cancelled (the runner's "device d failed") stays Cancelled, so the
  // runner names the device that failed, not a rank it released.
  return absl::Status(absl::IsCancelled(aborted_) ? absl::StatusCode::kCancelled
                                                  : absl::StatusCode::kFailedPrecondition,
                      absl::StrCat("the NCCL communicators were aborted: ", aborted_.message()));
}

NcclClique::~NcclClique() {
  for (auto& [comm, state] : states_) {
    if (!state.freed) nccl_->ncclCommDestroy(comm);
  }
}

absl::StatusOr<ncclComm_t> NcclClique::Communicator(absl::Span<const int64_t> group, int64_t index,
                                                    const NcclWait& wait) {
  if (index < 0 || index >= static_cast<int64_t>(group.size())) {
    return absl::InvalidArgumentError(absl::StrCat("member ", index, " of a group of ",
                                                   group.size()));
  }
  absl::Status timed_out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Status s = AbortedLocked(); !s.ok()) return s;
    std::vector<int64_t> key(group.begin(), group.end());
    auto it = comms_.find(key);
    if (it != comms_.end()) return it->second[index];
    std::vector<NcclMember> members;
    for (int64_t d : group) {
      if (d < 0 || d >= size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "device group {", absl::StrJoin(group, ","), "} names a device outside the ",
            size(), " devices of the program"));
      }
      members.push_back(NcclMember{static_cast<int>(members.size()), ordinals_[d]});
    }
    absl::StatusOr<std::vector<ncclComm_t>> comms = InitNcclCommunicators(
        *nccl_, static_cast<int>(members.size()), members, select_device_, wait);
    if (comms.ok()) {
      for (ncclComm_t comm : *comms) states_[comm].blocking = !wait.bounded();
      return comms_.emplace(std::move(key), *std::move(comms)).first->second[index];
    }
    if (comms.status().code() != absl::StatusCode::kDeadlineExceeded) return comms.status();
    timed_out = comms.status();
  }
  // Peers may already wait in communicators of other groups.
  Abort(timed_out);
  return timed_out;
}

absl::Status NcclClique::Await(ncclComm_t comm, const std::function<absl::StatusOr<bool>()>& done,
                               const NcclWait& wait) {
  bool settled = false;  // NCCL has taken the calls (left ncclInProgress).
  absl::Status failed;   // NCCL's asynchronous error: aborts the clique.
  absl::StatusOr<bool> finished = PollUntil(wait.deadline, [&]() -> absl::StatusOr<bool> {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (absl::Status s = AbortedLocked(); !s.ok()) return s;
      ncclResult_t state = ncclSuccess;
      if (absl::Status s =
              nccl_->Check(nccl_->ncclCommGetAsyncError(comm, &state), "ncclCommGetAsyncError");
          !s.ok()) {
        failed = s;
        return s;
      }
      if (state == ncclInProgress) return false;
      if (state != ncclSuccess) {
        failed = nccl_->Check(state, absl::StrCat(wait.Describe(), ": NCCL"));
        return failed;
      }
    }
    settled = true;
    return done ? done() : true;
  });
  if (!finished.ok()) {
    if (!failed.ok()) Abort(failed);
    return finished.status();
  }
  if (*finished) return absl::OkStatus();
  const absl::Status status = TimedOut(wait, settled ? "its work on the GPU" : "NCCL's calls");
  Abort(status);
  return status;
}

}  // namespace cuda
}  // namespace hloc
