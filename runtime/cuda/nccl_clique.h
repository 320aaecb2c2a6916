// The GPUs of one program run in one process, one rank per GPU, and the
// NCCL communicators among them, every wait on which has a deadline.
//
// Device (rank) d of the program is GPU `ordinals[d]`. Each device group an
// op names (global device ids, rank order) gets its own communicator, made
// the first time a member's thunk is initialized (GpuExecutable::Load, one
// device after another on one thread): one ncclGetUniqueId, then
// ncclCommInitRankConfig for every member inside one group call, each with
// its GPU made current first (what ncclCommInitAll does, but with a
// config). The communicator is shared by every op with the same group: its
// rank i is the group's member i. Collective-permute uses the group of all
// devices.
//
//   devices 0..3, replica_groups={{0,2},{1,3}}:
//     group {0,2} -> comms[0] on GPU ordinals[0], comms[1] on ordinals[2]
//     group {1,3} -> comms[0] on GPU ordinals[1], comms[1] on ordinals[3]
//
// A program run alone (no clique in GpuLoadOptions) gets a clique of its
// one device. Ranks in several processes (ncclCommInitRank with an id
// passed between them) are not done yet.
//
// The watchdog. NCCL itself never gives up: a rank whose peer never
// arrives (a device that failed before its collective, a process that
// died, a program whose ranks disagree about the groups) waits forever,
// in communicator init, in ncclGroupEnd, or on the device, where the
// collective's kernel spins and everything after it on the stream (the
// final cuStreamSynchronize included) waits with it. So, as the NCCL
// documentation's fault-tolerance section and the large NCCL users do it:
//
//   1. Communicators are made in NCCL's non-blocking mode (ncclConfig_t
//      with blocking = 0): ncclCommInitRankConfig, ncclGroupEnd and the
//      collectives return at once, possibly with ncclInProgress while NCCL
//      finishes in its own thread.
//   2. Every wait is a poll against one deadline (NcclWait: now + the
//      timeout, per op): ncclCommGetAsyncError of the communicator until it
//      leaves ncclInProgress (init, group end, a collective issued outside a
//      group), and, for a collective's completion, cuStreamQuery of the
//      device's stream until its work has run (CollectiveThunk). Polling
//      yields at first and then naps up to a millisecond, so a collective
//      that finishes in microseconds is seen in microseconds.
//   3. At the deadline, or when NCCL reports an asynchronous error (a
//      remote peer gone), the clique is aborted: ncclCommAbort on each of
//      its communicators (and on those of an init in progress). Abort sets
//      the flag NCCL's kernels and proxy threads check, so the kernel
//      spinning on the absent peer exits, the stream drains and the GPU is
//      usable again; the communicators are freed. The waiting op returns
//      DeadlineExceeded naming the op, its device group, the rank and the
//      timeout; other ranks polling the same clique see the abort on their
//      next poll and return its reason (they never touch a communicator
//      once it is aborted: polls and Abort share the clique's lock). The
//      clique stays unusable: the program must be compiled again.
//
// Aborting while another thread is inside NCCL. ncclCommAbort frees the
// communicator, and the abort may come from any thread (the watchdog of
// another rank, the runner when a device fails) while a rank is between
// ncclGroupStart and ncclGroupEnd on it, or inside a collective call. So
// every run of NCCL calls on a communicator is one enqueue (Enqueue: the
// clique counts it in flight), and Abort frees a communicator only when
// none is:
//
//   Abort, no enqueue in flight      ncclCommAbort now
//   Abort, an enqueue in flight,     mark the communicator; the last
//     non-blocking communicator      enqueue to leave calls ncclCommAbort
//                                    (non-blocking calls return at once,
//                                    so Abort never waits for it)
//   Abort, an enqueue in flight,     ncclCommAbort now: the call may be
//     blocking communicator          stuck waiting for the absent peer, and
//     (timeout 0)                    NCCL's abort flag is the only thing
//                                    that makes it return; Abort must not
//                                    wait for it
//   Enqueue after the abort          refused with the abort's reason; no
//                                    NCCL call is made
//
// What the watchdog cannot see: work inside a CUDA graph. A captured
// collective runs when the graph does, and the host can then tell only
// that the whole graph has or has not finished, not which collective is
// stuck (an event recorded in a graph does not say which launch it belongs
// to). So a collective thunk with a timeout synchronizes with the host
// (ReadsBackToHost): it runs directly, outside the CUDA graphs that the
// steps around it replay as (graph_segments.h); a timeout of zero turns
// the watchdog off (blocking-mode communicators, no host waits, the
// collective captured with its neighbours, and NCCL may then wait
// forever). ncclGetUniqueId's bootstrap thread, waiting for ranks
// that never connected, stays behind after an init timeout (NCCL offers no
// way to stop it); it holds a socket, not the GPU.
#ifndef HLOC_RUNTIME_CUDA_NCCL_CLIQUE_H_
#define HLOC_RUNTIME_CUDA_NCCL_CLIQUE_H_

#include <nccl.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "runtime/cuda/nccl_library.h"

namespace hloc {
namespace cuda {

// One op's wait: what a timeout names, and the deadline of every poll the
// op makes (one deadline for the whole op, however many NCCL calls).
struct NcclWait {
  std::string op;              // "%all-reduce.1 (all-reduce)"
  std::vector<int64_t> group;  // The devices of the op's communicator.
  int64_t rank = 0;            // This device's place in the program.
  absl::Duration timeout = absl::InfiniteDuration();
  absl::Time deadline = absl::InfiniteFuture();

  // A wait starting now; `timeout` <= 0 or infinite: no deadline.
  static NcclWait Starting(std::string op, std::vector<int64_t> group, int64_t rank,
                           absl::Duration timeout);
  bool bounded() const { return deadline != absl::InfiniteFuture(); }
  // "<op> over device group {0,1} at rank 0".
  std::string Describe() const;
};

// Makes the GPU with this ordinal current on the calling thread (NCCL
// makes a rank's communicator on the current device).
using NcclDeviceSelector = std::function<absl::Status(int ordinal)>;

// One communicator member made by this process: its rank and GPU.
struct NcclMember {
  int rank = 0;
  int ordinal = 0;
};

// The communicators of `members` of an `nranks`-rank communicator (a fresh
// ncclGetUniqueId), made in one group call, non-blocking when `wait` is
// bounded, and polled until all are ready. Members absent from `members`
// must join from elsewhere; when they do not before the deadline, every
// communicator begun is aborted and the result is DeadlineExceeded.
absl::StatusOr<std::vector<ncclComm_t>> InitNcclCommunicators(
    const NcclLibrary& nccl, int nranks, absl::Span<const NcclMember> members,
    const NcclDeviceSelector& select_device, const NcclWait& wait);

// The selector through the CUDA driver: the device's primary context.
absl::Status SelectDeviceWithDriver(int ordinal);

class NcclClique {
 public:
  // Loads NCCL (NotFound "NCCL not found: ..." without it).
  static absl::StatusOr<std::shared_ptr<NcclClique>> Create(std::vector<int> ordinals);
  // Over a library the caller keeps alive (tests pass a fake) and a device
  // selector (null: SelectDeviceWithDriver).
  static absl::StatusOr<std::shared_ptr<NcclClique>> CreateWith(
      const NcclLibrary* nccl, std::vector<int> ordinals, NcclDeviceSelector select_device = {});
  ~NcclClique();
  NcclClique(const NcclClique&) = delete;
  NcclClique& operator=(const NcclClique&) = delete;

  int64_t size() const { return static_cast<int64_t>(ordinals_.size()); }
  const NcclLibrary& nccl() const { return *nccl_; }
  // The communicator of `group`'s member at `index`, made on first use
  // within `wait`'s deadline (InitNcclCommunicators; a timeout aborts the
  // clique).
  absl::StatusOr<ncclComm_t> Communicator(absl::Span<const int64_t> group, int64_t index,
                                          const NcclWait& wait);

  // Waits, within `wait`'s deadline, until NCCL has finished the calls
  // issued on `comm` (ncclCommGetAsyncError leaves ncclInProgress) and then
  // `done` (may be null) returns true. NCCL's asynchronous error, or the
  // deadline, aborts the clique and is returned (DeadlineExceeded: "<op>
  // over device group {..} at rank r: NCCL did not finish within 5s; ...").
  // A clique aborted meanwhile (by another rank) returns the abort's reason.
  absl::Status Await(ncclComm_t comm, const std::function<absl::StatusOr<bool>()>& done,
                     const NcclWait& wait);

  // Runs `calls` (one collective, or a group's calls from ncclGroupStart to
  // ncclGroupEnd, on `comm`) as one enqueue: an abort meanwhile does not
  // free `comm` under them (see the table above). Refused with the abort's
  // reason, without calling, once the clique is aborted.
  absl::Status Enqueue(ncclComm_t comm, const std::function<absl::Status()>& calls);

  // One device failed: aborts every communicator (ncclCommAbort), which
  // makes ranks blocked in a collective waiting for it return instead of
  // hanging. The clique is unusable afterwards: Communicator returns
  // `reason`, and the programs that hold its communicators must not run
  // again. The first reason is kept; later calls do nothing.
  void Abort(const absl::Status& reason);
  // OK, or the reason the clique was aborted.
  absl::Status aborted() const;

 private:
  NcclClique(const NcclLibrary* nccl, std::vector<int> ordinals, NcclDeviceSelector select)
      : nccl_(nccl), ordinals_(std::move(ordinals)), select_device_(std::move(select)) {}
  // What the clique knows of one communicator it made.
  struct CommState {
    bool blocking = false;  // Made without the watchdog (NcclWait unbounded).
    int in_flight = 0;      // Enqueues inside NCCL calls on it.
    bool freed = false;     // ncclCommAbort called: never touched again.
  };
  absl::Status AbortedLocked() const;
  // ncclCommAbort of `comm` unless already done.
  void FreeLocked(ncclComm_t comm, CommState& state);
  const NcclLibrary* nccl_;
  std::vector<int> ordinals_;
  NcclDeviceSelector select_device_;
  mutable std::mutex mu_;
  std::map<std::vector<int64_t>, std::vector<ncclComm_t>> comms_;
  std::map<ncclComm_t, CommState> states_;  // Every communicator of comms_.
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
