// NCCL loading (with a fake libnccl.so.2 and a missing one), the library
// search path, the clique's watchdog (inits and collectives that never
// finish, against the fake), and what the GPU collective thunk accepts and
// prints. Needs no GPU; running the thunks is gpu_collective_device_test's
// (backend/gpu).
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/collective_thunk.h"
#include "runtime/cuda/nccl_clique.h"
#include "runtime/cuda/nccl_library.h"

namespace hloc {
namespace cuda {
namespace {

using runtime::CollectiveOp;
using runtime::CollectiveSpec;
using runtime::ElementType;
using runtime::ReductionKind;

std::string FakeNcclPath() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return "runtime/cuda/libfake_nccl.so";
  return absl::StrCat(srcdir, "/", workspace, "/runtime/cuda/libfake_nccl.so");
}

TEST(NcclLibraryTest, MissingLibraryIsNcclNotFound) {
  absl::StatusOr<std::unique_ptr<NcclLibrary>> nccl = NcclLibrary::Load({"libnccl_missing.so.2"});
  ASSERT_FALSE(nccl.ok());
  EXPECT_TRUE(IsLibraryMissing(nccl.status()));
  EXPECT_TRUE(absl::StartsWith(nccl.status().message(),
                               "NCCL not found: dlopen libnccl_missing.so.2 failed: "))
      << nccl.status();
}

TEST(NcclLibraryTest, FakeLibraryResolvesEveryFunction) {
  absl::StatusOr<std::unique_ptr<NcclLibrary>> nccl = NcclLibrary::Load({FakeNcclPath()});
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  EXPECT_EQ((*nccl)->version(), 29901);
  EXPECT_TRUE((*nccl)->Check(ncclSuccess, "ncclGroupEnd").ok());
  const absl::Status error = (*nccl)->Check(ncclInternalError, "ncclCommInitAll");
  EXPECT_EQ(error.message(), "ncclCommInitAll: fake internal error (ncclResult_t 3)");
}

// One of the fake's test controls (fake_libnccl.cc), or null when the fake
// is not loaded.
template <typename Fn>
Fn* FakeControl(const char* name) {
  void* handle = dlopen(FakeNcclPath().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  Fn* fn = reinterpret_cast<Fn*>(dlsym(handle, name));
  dlclose(handle);  // The NcclLibrary the test holds keeps it loaded.
  return fn;
}

// The fake's count of destroyed and aborted communicators.
std::pair<int, int> FakeTeardowns() {
  auto* calls = FakeControl<void(int*, int*)>("fake_nccl_calls");
  std::pair<int, int> counts{-1, -1};
  if (calls != nullptr) calls(&counts.first, &counts.second);
  return counts;
}

// Makes the fake's non-blocking inits and/or collectives never finish
// while in scope.
class FakeHang {
 public:
  FakeHang(bool init, bool collectives) { Set(init, collectives); }
  ~FakeHang() { Set(false, false); }

 private:
  static void Set(bool init, bool collectives) {
    auto* hang = FakeControl<void(int, int)>("fake_nccl_hang");
    ASSERT_NE(hang, nullptr);
    hang(init ? 1 : 0, collectives ? 1 : 0);
  }
};

// The fake has no GPUs to select.
absl::Status NoDevice(int) { return absl::OkStatus(); }

TEST(NcclCliqueTest, AbortAbortsEveryCommunicatorOnceAndRefusesNewOnes) {
  absl::StatusOr<std::unique_ptr<NcclLibrary>> nccl = NcclLibrary::Load({FakeNcclPath()});
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  const std::pair<int, int> before = FakeTeardowns();
  ASSERT_GE(before.first, 0) << "the fake's call counter is missing";
  {
    absl::StatusOr<std::shared_ptr<NcclClique>> clique =
        NcclClique::CreateWith(nccl->get(), {0, 1, 2, 3}, NoDevice);
    ASSERT_TRUE(clique.ok()) << clique.status();
    const std::vector<int64_t> pair = {0, 2}, all = {0, 1, 2, 3};
    ASSERT_TRUE((*clique)->Communicator(pair, 1, NcclWait()).ok());
    ASSERT_TRUE((*clique)->Communicator(all, 3, NcclWait()).ok());
    EXPECT_TRUE((*clique)->aborted().ok());
    (*clique)->Abort(absl::InternalError("device 2 failed: boom"));
    (*clique)->Abort(absl::InternalError("device 0 failed: later"));  // Kept: the first.
    EXPECT_EQ(FakeTeardowns().second - before.second, 6);  // 2 + 4 communicators, once each.
    EXPECT_EQ((*clique)->aborted().message(), "device 2 failed: boom");
    const absl::StatusOr<ncclComm_t> after = (*clique)->Communicator(pair, 0, NcclWait());
    ASSERT_FALSE(after.ok());
    EXPECT_TRUE(absl::StrContains(after.status().message(), "aborted: device 2 failed: boom"))
        << after.status();
  }
  // Aborted communicators are never destroyed as well.
  EXPECT_EQ(FakeTeardowns().first, before.first);
  // A clique that was not aborted destroys its communicators.
  {
    absl::StatusOr<std::shared_ptr<NcclClique>> clique =
        NcclClique::CreateWith(nccl->get(), {0, 1}, NoDevice);
    ASSERT_TRUE(clique.ok()) << clique.status();
    ASSERT_TRUE((*clique)->Communicator(std::vector<int64_t>{0, 1}, 0, NcclWait()).ok());
  }
  EXPECT_EQ(FakeTeardowns().first - before.first, 2);
}

TEST(NcclLibraryTest, NotALibraryNamesTheFile) {
  // A library lacking the entry points (the fake CUDA driver has none).
  const std::string driver = absl::StrReplaceAll(FakeNcclPath(), {{"fake_nccl", "fake_cuda"}});
  if (!std::filesystem::exists(driver)) GTEST_SKIP() << "no " << driver;
  absl::StatusOr<std::unique_ptr<NcclLibrary>> nccl = NcclLibrary::Load({driver});
  ASSERT_FALSE(nccl.ok());
  EXPECT_TRUE(absl::StrContains(nccl.status().message(), "lacks functions hloc needs: ncclGetVersion"))
      << nccl.status();
}

TEST(NcclLibraryTest, SearchPathHasExplicitFileFirstAndPipWheels) {
  const std::filesystem::path root =
      std::filesystem::path(std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR")
                                                                  : "/tmp") /
      "nccl_search";
  const std::filesystem::path lib = root / "site" / "nvidia" / "nccl" / "lib";
  std::filesystem::create_directories(lib);
  std::ofstream(lib / "libnccl.so.2") << "not a library";
  setenv("HLOC_NCCL_LIBRARY", "/explicit/libnccl.so.2", 1);
  setenv("PYTHONPATH", (root / "site").c_str(), 1);
  const std::vector<std::string> path = NcclLibrary::SearchPath();
  unsetenv("HLOC_NCCL_LIBRARY");
  unsetenv("PYTHONPATH");
  ASSERT_GE(path.size(), 3u);
  EXPECT_EQ(path[0], "/explicit/libnccl.so.2");
  EXPECT_EQ(path[1], "libnccl.so.2");
  EXPECT_NE(std::find(path.begin(), path.end(), (lib / "libnccl.so.2").string()), path.end());
}

// The machine's own NCCL, where there is one (loading needs no GPU).
TEST(NcclLibraryTest, InstalledLibraryLoads) {
  absl::StatusOr<const NcclLibrary*> nccl = NcclLibrary::Get();
  if (!nccl.ok()) GTEST_SKIP() << nccl.status();
  EXPECT_GE((*nccl)->version(), 20000) << (*nccl)->path();
  std::cout << "NCCL " << (*nccl)->version() << " from " << (*nccl)->path() << "\n";
}

CollectiveSpec Spec(CollectiveOp op, ElementType type, ReductionKind reduction) {
  CollectiveSpec spec;
  spec.op = op;
  spec.type = type;
  spec.reduction = reduction;
  spec.groups = {{0, 1}, {2, 3}};
  spec.leaves = {runtime::CollectiveLeaf{8, 1, 0}};
  return spec;
}

// ---- The watchdog (nccl_clique.h), against the fake's non-blocking mode.

constexpr absl::Duration kShort = absl::Milliseconds(200);

// A clique of two devices over the fake, with the communicator of {0,1}
// made (non-blocking, polled until the fake settles).
struct TwoRanks {
  std::unique_ptr<NcclLibrary> nccl;
  std::shared_ptr<NcclClique> clique;
  ncclComm_t comm = nullptr;  // Rank 0's.
};

TwoRanks MakeTwoRanks() {
  TwoRanks t;
  absl::StatusOr<std::unique_ptr<NcclLibrary>> nccl = NcclLibrary::Load({FakeNcclPath()});
  EXPECT_TRUE(nccl.ok()) << nccl.status();
  if (!nccl.ok()) return t;
  t.nccl = *std::move(nccl);
  t.clique = *NcclClique::CreateWith(t.nccl.get(), {0, 1}, NoDevice);
  absl::StatusOr<ncclComm_t> comm = t.clique->Communicator(
      std::vector<int64_t>{0, 1}, 0,
      NcclWait::Starting("%ar.1 (all-reduce)", {0, 1}, 0, absl::Seconds(10)));
  EXPECT_TRUE(comm.ok()) << comm.status();
  if (comm.ok()) t.comm = *comm;
  return t;
}

TEST(NcclWatchdogTest, NonBlockingInitAndCollectiveSettleOnTheNormalPath) {
  const std::pair<int, int> before = FakeTeardowns();
  TwoRanks t = MakeTwoRanks();
  ASSERT_NE(t.comm, nullptr);
  const NcclLibrary& nccl = *t.nccl;
  const NcclWait wait = NcclWait::Starting("%ar.1 (all-reduce)", {0, 1}, 0, absl::Seconds(10));
  ASSERT_TRUE(wait.bounded());
  // A grouped collective: ncclGroupEnd answers ncclInProgress, and the
  // clique waits for the communicator to settle.
  ASSERT_TRUE(nccl.Check(nccl.ncclGroupStart(), "ncclGroupStart").ok());
  ASSERT_EQ(nccl.ncclAllReduce(nullptr, nullptr, 8, ncclFloat32, ncclSum, t.comm, nullptr),
            ncclSuccess);
  const ncclResult_t end = nccl.ncclGroupEnd();
  EXPECT_EQ(end, ncclInProgress);
  EXPECT_TRUE(nccl.CheckIssued(end, "ncclGroupEnd").ok());
  // The stream is "done" at the third look.
  int looks = 0;
  const absl::Status done = t.clique->Await(
      t.comm, [&]() -> absl::StatusOr<bool> { return ++looks >= 3; }, wait);
  EXPECT_TRUE(done.ok()) << done;
  EXPECT_EQ(looks, 3);
  EXPECT_TRUE(t.clique->aborted().ok());
  EXPECT_EQ(FakeTeardowns().second, before.second);  // Nothing aborted.
  // Without a timeout the wait is unbounded and succeeds the same way.
  EXPECT_FALSE(NcclWait::Starting("x", {0}, 0, absl::ZeroDuration()).bounded());
  EXPECT_TRUE(t.clique->Await(t.comm, nullptr, NcclWait()).ok());
}

TEST(NcclWatchdogTest, InitThatNeverFinishesIsDeadlineExceededAndAborted) {
  absl::StatusOr<std::unique_ptr<NcclLibrary>> nccl = NcclLibrary::Load({FakeNcclPath()});
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  std::shared_ptr<NcclClique> clique = *NcclClique::CreateWith(nccl->get(), {0, 1, 2}, NoDevice);
  // Another group's communicators exist already: the abort takes them too.
  ASSERT_TRUE(clique->Communicator(std::vector<int64_t>{0, 1, 2}, 0, NcclWait()).ok());
  const std::pair<int, int> before = FakeTeardowns();
  FakeHang hang(/*init=*/true, /*collectives=*/false);
  const absl::Time start = absl::Now();
  const absl::StatusOr<ncclComm_t> comm = clique->Communicator(
      std::vector<int64_t>{0, 2}, 1, NcclWait::Starting("%ar.7 (all-reduce)", {0, 2}, 2, kShort));
  const absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kDeadlineExceeded) << comm.status();
  for (const char* part : {"%ar.7 (all-reduce) over device group {0,2} at rank 2",
                           "ncclCommInitRankConfig of 2 of 2 ranks on GPUs {0,2}",
                           "did not finish within 200ms", "aborted"}) {
    EXPECT_TRUE(absl::StrContains(comm.status().message(), part)) << part << ": " << comm.status();
  }
  EXPECT_GE(took, kShort);
  EXPECT_LT(took, absl::Seconds(5));
  // The two half-made communicators and the three of {0,1,2}.
  EXPECT_EQ(FakeTeardowns().second - before.second, 5);
  EXPECT_EQ(clique->aborted().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(NcclWatchdogTest, CollectiveThatNeverFinishesIsDeadlineExceededAndAborted) {
  TwoRanks t = MakeTwoRanks();
  ASSERT_NE(t.comm, nullptr);
  const NcclLibrary& nccl = *t.nccl;
  const std::pair<int, int> before = FakeTeardowns();
  FakeHang hang(/*init=*/false, /*collectives=*/true);
  const NcclWait wait = NcclWait::Starting("%ar.1 (all-reduce)", {0, 1}, 0, kShort);
  // Outside a group the call itself answers ncclInProgress.
  const ncclResult_t issued =
      nccl.ncclAllReduce(nullptr, nullptr, 8, ncclFloat32, ncclSum, t.comm, nullptr);
  EXPECT_EQ(issued, ncclInProgress);
  const absl::Time start = absl::Now();
  const absl::Status status = t.clique->Await(t.comm, nullptr, wait);
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_TRUE(absl::StrContains(
      status.message(),
      "%ar.1 (all-reduce) over device group {0,1} at rank 0: NCCL's calls did not finish "
      "within 200ms"))
      << status;
  EXPECT_LT(took, absl::Seconds(5));
  EXPECT_EQ(FakeTeardowns().second - before.second, 2);  // Both ranks' communicators.
  // The clique refuses to go on, naming the timeout.
  const absl::StatusOr<ncclComm_t> again =
      t.clique->Communicator(std::vector<int64_t>{0, 1}, 0, NcclWait());
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(absl::StrContains(again.status().message(), "did not finish within 200ms"))
      << again.status();
}

TEST(NcclWatchdogTest, StreamThatNeverDrainsIsDeadlineExceededAndAborted) {
  TwoRanks t = MakeTwoRanks();
  ASSERT_NE(t.comm, nullptr);
  const std::pair<int, int> before = FakeTeardowns();
  const NcclWait wait = NcclWait::Starting("%cp.3 (collective-permute)", {0, 1}, 1, kShort);
  int looks = 0;
  const absl::Status status = t.clique->Await(
      t.comm,
      [&]() -> absl::StatusOr<bool> {
        ++looks;
        return false;
      },
      wait);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "%cp.3 (collective-permute) over device group {0,1} at rank 1: "
                                "its work on the GPU did not finish within 200ms"))
      << status;
  EXPECT_GT(looks, 1);  // Polled, not waited on once.
  EXPECT_EQ(FakeTeardowns().second - before.second, 2);
}

TEST(NcclWatchdogTest, AsynchronousErrorAbortsTheClique) {
  TwoRanks t = MakeTwoRanks();
  ASSERT_NE(t.comm, nullptr);
  auto* fail = FakeControl<void(int)>("fake_nccl_fail_collectives");
  ASSERT_NE(fail, nullptr);
  fail(ncclRemoteError);
  const ncclResult_t issued =
      t.nccl->ncclAllReduce(nullptr, nullptr, 8, ncclFloat32, ncclSum, t.comm, nullptr);
  fail(ncclSuccess);
  EXPECT_EQ(issued, ncclInProgress);
  const absl::Status status = t.clique->Await(
      t.comm, nullptr, NcclWait::Starting("%ar.1 (all-reduce)", {0, 1}, 0, absl::Seconds(10)));
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "fake remote error")) << status;
  EXPECT_FALSE(t.clique->aborted().ok());
}

// A rank waiting with a long timeout returns as soon as another aborts the
// clique (the runner does when a device fails), with that reason.
TEST(NcclWatchdogTest, AWaitingRankReturnsWhenTheCliqueIsAborted) {
  TwoRanks t = MakeTwoRanks();
  ASSERT_NE(t.comm, nullptr);
  absl::Status waited;
  absl::Duration took;
  std::thread rank0([&] {
    const absl::Time start = absl::Now();
    waited = t.clique->Await(
        t.comm, []() -> absl::StatusOr<bool> { return false; },
        NcclWait::Starting("%ar.1 (all-reduce)", {0, 1}, 0, absl::Seconds(60)));
    took = absl::Now() - start;
  });
  absl::SleepFor(absl::Milliseconds(50));
  t.clique->Abort(absl::InternalError("device 1: out of memory"));
  rank0.join();
  EXPECT_EQ(waited.code(), absl::StatusCode::kFailedPrecondition) << waited;
  EXPECT_TRUE(absl::StrContains(waited.message(), "aborted: device 1: out of memory")) << waited;
  EXPECT_LT(took, absl::Seconds(10));
}

// The multi-device runner aborts with Cancelled ("device d failed: ...")
// and names the first device that failed other than Cancelled: the ranks
// the abort released say Cancelled too, so the error names the device that
// failed, not a rank that waited for it.
TEST(NcclWatchdogTest, RanksReleasedByARunnersCancelSayCancelled) {
  TwoRanks t = MakeTwoRanks();
  ASSERT_NE(t.comm, nullptr);
  t.clique->Abort(absl::CancelledError("device 1 failed: bad argument"));
  const absl::Status waited = t.clique->Await(t.comm, nullptr, NcclWait());
  EXPECT_EQ(waited.code(), absl::StatusCode::kCancelled) << waited;
  const absl::Status enqueued = t.clique->Enqueue(t.comm, [] { return absl::OkStatus(); });
  EXPECT_EQ(enqueued.code(), absl::StatusCode::kCancelled) << enqueued;
  EXPECT_TRUE(absl::StrContains(enqueued.message(), "device 1 failed: bad argument")) << enqueued;
}

// ---- Aborting while another thread is inside NCCL (nccl_clique.h's table).

// The fake's count of calls that touched a freed communicator.
int FakeMisuses() {
  auto* misuses = FakeControl<int()>("fake_nccl_misuses");
  return misuses != nullptr ? misuses() : -1;
}

// Makes every fake collective call (and ncclGroupEnd) take `time` while in
// scope.
class FakeCallTime {
 public:
  explicit FakeCallTime(absl::Duration time) { Set(absl::ToInt64Microseconds(time)); }
  ~FakeCallTime() { Set(0); }

 private:
  static void Set(int64_t us) {
    auto* set = FakeControl<void(int)>("fake_nccl_call_time");
    ASSERT_NE(set, nullptr);
    set(static_cast<int>(us));
  }
};

// A rank's group of calls (as CollectiveThunk makes them) on `comm`.
absl::Status GroupedAllReduce(const NcclLibrary& nccl, ncclComm_t comm) {
  if (absl::Status s = nccl.Check(nccl.ncclGroupStart(), "ncclGroupStart"); !s.ok()) return s;
  absl::Status status = nccl.CheckIssued(
      nccl.ncclAllReduce(nullptr, nullptr, 8, ncclFloat32, ncclSum, comm, nullptr),
      "ncclAllReduce");
  absl::Status end = nccl.CheckIssued(nccl.ncclGroupEnd(), "ncclGroupEnd");
  return status.ok() ? end : status;
}

// The watchdog of another rank (or the runner, for a failed device) aborts
// the clique while rank 0 is inside ncclAllReduce / ncclGroupEnd on its
// communicator. The abort returns at once, and the communicator is freed
// only when rank 0's calls are done: the fake sees no call on a freed
// communicator. (Freeing at once, as Abort did before the clique counted
// enqueues, makes the fake count the calls that were inside it.)
TEST(NcclAbortRaceTest, AbortDuringAnEnqueueFreesTheCommunicatorAfterIt) {
  TwoRanks t = MakeTwoRanks();
  ASSERT_NE(t.comm, nullptr);
  const int misuses_before = FakeMisuses();
  ASSERT_GE(misuses_before, 0) << "the fake's misuse counter is missing";
  const std::pair<int, int> before = FakeTeardowns();
  constexpr absl::Duration kCall = absl::Milliseconds(300);
  FakeCallTime slow(kCall);
  absl::Status issued;
  std::atomic<bool> inside{false};
  std::thread rank0([&] {
    issued = t.clique->Enqueue(t.comm, [&] {
      inside = true;
      return GroupedAllReduce(*t.nccl, t.comm);
    });
  });
  while (!inside) std::this_thread::yield();
  absl::SleepFor(absl::Milliseconds(20));  // Inside ncclAllReduce now.
  const absl::Time start = absl::Now();
  t.clique->Abort(absl::DeadlineExceededError("rank 1's watchdog: %ar.1 timed out"));
  const absl::Duration abort_took = absl::Now() - start;
  rank0.join();
  EXPECT_LT(abort_took, kCall / 2) << "Abort waited for the enqueue";
  EXPECT_EQ(FakeMisuses() - misuses_before, 0) << "a communicator was freed under a call";
  EXPECT_TRUE(issued.ok()) << issued;  // Its calls ran on a live communicator.
  // Both communicators were aborted, rank 0's when its enqueue ended.
  EXPECT_EQ(FakeTeardowns().second - before.second, 2);
  // What rank 0 does next touches no communicator: its enqueue is refused
  // and its wait returns the abort's reason.
  bool called = false;
  const absl::Status again = t.clique->Enqueue(t.comm, [&] {
    called = true;
    return absl::OkStatus();
  });
  EXPECT_FALSE(called);
  EXPECT_TRUE(absl::StrContains(again.message(), "aborted: rank 1's watchdog")) << again;
  const absl::Status waited = t.clique->Await(t.comm, nullptr, NcclWait());
  EXPECT_EQ(waited.code(), absl::StatusCode::kFailedPrecondition) << waited;
  EXPECT_EQ(FakeMisuses() - misuses_before, 0);
}

// The same abort racing many short enqueues of two ranks: whatever the
// interleaving, no call touches a freed communicator, and each is freed
// exactly once.
TEST(NcclAbortRaceTest, AbortRacingManyEnqueuesNeverFreesUnderACall) {
  const int misuses_before = FakeMisuses();
  FakeCallTime slow(absl::Microseconds(200));
  for (int round = 0; round < 20; ++round) {
    TwoRanks t = MakeTwoRanks();
    ASSERT_NE(t.comm, nullptr);
    const ncclComm_t comm1 = *t.clique->Communicator(std::vector<int64_t>{0, 1}, 1, NcclWait());
    const std::pair<int, int> before = FakeTeardowns();
    auto rank = [&](ncclComm_t comm) {
      for (int i = 0; i < 50; ++i) {
        if (!t.clique->Enqueue(comm, [&] { return GroupedAllReduce(*t.nccl, comm); }).ok()) return;
      }
    };
    std::thread rank0(rank, t.comm), rank1(rank, comm1);
    absl::SleepFor(absl::Microseconds(100 * round));
    t.clique->Abort(absl::InternalError("device 1 failed"));
    rank0.join();
    rank1.join();
    EXPECT_EQ(FakeTeardowns().second - before.second, 2) << "round " << round;
  }
  EXPECT_EQ(FakeMisuses() - misuses_before, 0);
}

// Without the watchdog (timeout 0) communicators are blocking, and a call
// waiting for a peer that failed returns only when its communicator is
// aborted: Abort aborts it at once, not waiting for the enqueue to end.
TEST(NcclAbortRaceTest, BlockingCallStuckForAPeerIsReleasedByAbort) {
  absl::StatusOr<std::unique_ptr<NcclLibrary>> nccl = NcclLibrary::Load({FakeNcclPath()});
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  std::shared_ptr<NcclClique> clique = *NcclClique::CreateWith(nccl->get(), {0, 1}, NoDevice);
  const absl::StatusOr<ncclComm_t> comm =
      clique->Communicator(std::vector<int64_t>{0, 1}, 0, NcclWait());  // Unbounded: blocking.
  ASSERT_TRUE(comm.ok()) << comm.status();
  const int misuses_before = FakeMisuses();
  FakeHang hang(/*init=*/false, /*collectives=*/true);
  std::promise<absl::Status> returned;
  std::thread rank0([&] {
    returned.set_value(clique->Enqueue(*comm, [&] {
      return (*nccl)->Check(
          (*nccl)->ncclBroadcast(nullptr, nullptr, 8, ncclUint8, 0, *comm, nullptr),
          "ncclBroadcast");
    }));
  });
  std::future<absl::Status> result = returned.get_future();
  EXPECT_EQ(result.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout)
      << "the fake's blocking call did not block";
  const absl::Time start = absl::Now();
  clique->Abort(absl::InternalError("device 1 failed: boom"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  const bool released = result.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  EXPECT_TRUE(released) << "the stuck call was not released";
  if (!released) {
    // Let the thread go rather than hang the test binary.
    auto* hang_control = FakeControl<void(int, int)>("fake_nccl_hang");
    (*nccl)->ncclCommAbort(*comm);
    if (hang_control != nullptr) hang_control(0, 0);
  }
  rank0.join();
  EXPECT_TRUE(absl::StrContains(result.get().message(), "ncclBroadcast"));
  EXPECT_EQ(FakeMisuses() - misuses_before, 0);
}

// Before Initialize an NCCL collective is watched (the default timeout):
// it waits on the host, so its program is not captured into a graph.
TEST(CollectiveThunkTest, WatchedCollectivesReadBackToHost) {
  CollectiveThunk reduce(
      "%ar", Spec(CollectiveOp::kAllReduce, ElementType::kF32, ReductionKind::kSum), {0, 1});
  EXPECT_TRUE(reduce.ReadsBackToHost());
  CollectiveThunk id("%id", Spec(CollectiveOp::kReplicaId, ElementType::kU32, ReductionKind::kSum),
                     {0});
  EXPECT_FALSE(id.ReadsBackToHost());
}

TEST(CollectiveThunkTest, NarrowFloatsReduceAsNcclsOwnTypes) {
  // f16 and bf16 reduce as NCCL's half types, not as 16-bit integers or bytes.
  EXPECT_EQ(NcclType(ElementType::kF16), ncclFloat16);
  EXPECT_EQ(NcclType(ElementType::kBF16), ncclBfloat16);
  EXPECT_EQ(NcclType(ElementType::kF32), ncclFloat32);
  EXPECT_EQ(NcclType(ElementType::kF64), ncclFloat64);
  EXPECT_FALSE(NcclType(ElementType::kU16).has_value());
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kF16,
                                    ReductionKind::kSum)).ok());
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kReduceScatter, ElementType::kF16,
                                    ReductionKind::kMin)).ok());
  EXPECT_FALSE(CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kF16,
                                     ReductionKind::kAnd)).ok());
}

TEST(CollectiveThunkTest, NcclTakesArithmeticReductionsAndPredLogic) {
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kF32,
                                    ReductionKind::kSum)).ok());
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kReduceScatter, ElementType::kBF16,
                                    ReductionKind::kMax)).ok());
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kPred,
                                    ReductionKind::kAnd)).ok());
  const absl::Status bitwise =
      CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kS32, ReductionKind::kOr));
  EXPECT_EQ(bitwise.code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(bitwise.message(), "NCCL has no or reduction over s32"))
      << bitwise;
  EXPECT_FALSE(CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kS16,
                                     ReductionKind::kSum)).ok());
  // Moving bytes needs no NCCL type.
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kAllGather, ElementType::kS16,
                                    ReductionKind::kSum)).ok());
}

TEST(CollectiveThunkTest, ScratchOnlyForInnerDimensionsOfSeveralDevices) {
  CollectiveSpec gather = Spec(CollectiveOp::kAllGather, ElementType::kF32, ReductionKind::kSum);
  gather.leaves = {runtime::CollectiveLeaf{12, 3, 16}};
  EXPECT_EQ(CollectiveScratchBytes(gather), 2 * 3 * 16);
  CollectiveSpec to_all = gather;
  to_all.op = CollectiveOp::kAllToAll;
  EXPECT_EQ(CollectiveScratchBytes(to_all), 2 * 2 * 3 * 16);
  gather.leaves[0].outer = 1;
  EXPECT_EQ(CollectiveScratchBytes(gather), 0);
  CollectiveSpec alone = to_all;
  alone.groups = {{0}};
  EXPECT_EQ(CollectiveScratchBytes(alone), 0);
  EXPECT_EQ(CollectiveScratchBytes(
                Spec(CollectiveOp::kAllReduce, ElementType::kF32, ReductionKind::kSum)),
            0);
}

// The row copies, applied with memcpy, move bytes as the host's packing does.
std::vector<char> ApplyRowCopies(const std::vector<RowCopy>& copies, const std::vector<char>& in) {
  std::vector<char> out(in.size(), 0);
  for (const RowCopy& c : copies) {
    for (int64_t r = 0; r < c.rows; ++r) {
      std::memcpy(out.data() + c.destination + r * c.destination_pitch,
                  in.data() + c.source + r * c.source_pitch, static_cast<size_t>(c.row_bytes));
    }
  }
  return out;
}

TEST(CollectiveThunkTest, RowCopiesRepackAsTheHostDoes) {
  for (const auto& [outer, n, block] : {std::tuple<int64_t, int64_t, int64_t>{3, 4, 8},
                                        {2, 2, 4}, {5, 1, 12}, {1, 3, 4}}) {
    std::vector<char> input(static_cast<size_t>(outer * n * block));
    for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<char>(i * 7 + 1);
    std::vector<char> packed(input.size()), unpacked(input.size());
    runtime::PackBlocks(input.data(), packed.data(), outer, n, block);
    EXPECT_EQ(ApplyRowCopies(PackCopies(outer, n, block), input), packed)
        << outer << "x" << n << "x" << block;
    runtime::UnpackBlocks(packed.data(), unpacked.data(), outer, n, block);
    EXPECT_EQ(ApplyRowCopies(UnpackCopies(outer, n, block), packed), unpacked);
    EXPECT_EQ(unpacked, input);
  }
}

TEST(CollectiveThunkTest, PrintsOpGroupsAndBuffers) {
  CollectiveThunk thunk("%all-reduce.1",
                        Spec(CollectiveOp::kAllReduce, ElementType::kF32, ReductionKind::kSum),
                        {3, 4});
  std::string text;
  thunk.AppendTo(&text, 1);
  EXPECT_EQ(text, "  nccl all-reduce %all-reduce.1 sum f32 groups={{0,1},{2,3}} buffers=3,4\n");
}

}  // namespace
}  // namespace cuda
}  // namespace hloc
