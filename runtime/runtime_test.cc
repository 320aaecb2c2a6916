// Tests of the runtime on hand-written kernels: arena placement and reuse,
// thread-pool coverage, and thunk sequences with copies, loops and branches.
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/buffer_assignment.h"
#include "runtime/executable.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace runtime {
namespace {

TEST(ArenaTest, DisjointIntervalsShareBytes) {
  std::vector<BufferInterval> buffers = {{100, 0, 1}, {100, 2, 3}, {100, 4, 5}};
  ArenaAssignment a = AssignArenaOffsets(buffers);
  EXPECT_EQ(a.arena_size, 128);
  EXPECT_EQ(a.total_size, 3 * 128);
  for (int64_t offset : a.offsets) EXPECT_EQ(offset, 0);
}

TEST(ArenaTest, OverlappingIntervalsDoNotShare) {
  std::vector<BufferInterval> buffers = {{64, 0, 2}, {64, 1, 3}, {200, 2, 2}, {64, 3, 4}};
  ArenaAssignment a = AssignArenaOffsets(buffers);
  for (size_t i = 0; i < buffers.size(); ++i) {
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      bool time_overlap = !(buffers[i].last_use < buffers[j].first_use ||
                            buffers[j].last_use < buffers[i].first_use);
      bool space_overlap = a.offsets[i] < a.offsets[j] + 64 * ((buffers[j].size + 63) / 64) &&
                           a.offsets[j] < a.offsets[i] + 64 * ((buffers[i].size + 63) / 64);
      EXPECT_FALSE(time_overlap && space_overlap) << i << " and " << j;
    }
  }
  EXPECT_GE(a.arena_size, a.peak_live_size);
  EXPECT_LT(a.arena_size, a.total_size);
  EXPECT_EQ(a.offsets[0] % 64, 0);
}

TEST(ThreadPoolTest, CoversEveryItemOnce) {
  ThreadPool pool(4);
  for (int64_t n : {1, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(n);
    for (auto& h : hits) h = 0;
    pool.ParallelFor(n, 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

// Eight callers at once, each with nested ParallelFor calls inside its
// chunks: every item of every call is covered exactly once and no call waits
// for another's (a serializing pool would still pass, but one that lost or
// repeated chunks across jobs, or deadlocked on nesting, would not).
TEST(ThreadPoolTest, ConcurrentAndNestedCallers) {
  ThreadPool pool(3);
  constexpr int kCallers = 8;
  constexpr int64_t kOuter = 64, kInner = 257;
  std::vector<std::vector<std::atomic<int>>> hits(kCallers);
  for (auto& h : hits) {
    h = std::vector<std::atomic<int>>(kOuter * kInner);
    for (auto& x : h) x = 0;
  }
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 20; ++round) {
        pool.ParallelFor(kOuter, 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            pool.ParallelFor(kInner, 8, [&](int64_t b, int64_t e) {
              for (int64_t j = b; j < e; ++j) hits[c][i * kInner + j]++;
            });
          }
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) {
    for (int64_t k = 0; k < kOuter * kInner; ++k) ASSERT_EQ(hits[c][k].load(), 20) << c << " " << k;
  }
}

// out[i] = in[i] * 2 over floats.
void DoubleKernel(void* const* buffers, int64_t begin, int64_t end) {
  const float* in = static_cast<const float*>(buffers[0]);
  float* out = static_cast<float*>(buffers[1]);
  for (int64_t i = begin; i < end; ++i) out[i] = in[i] * 2;
}

// pred = x[0] < 100.
void LessThan100Kernel(void* const* buffers, int64_t, int64_t) {
  *static_cast<uint8_t*>(buffers[1]) = *static_cast<const float*>(buffers[0]) < 100 ? 1 : 0;
}

BufferSpec Temp(int64_t size, int64_t first, int64_t last, const char* name) {
  BufferSpec b;
  b.kind = BufferSpec::Kind::kTemp;
  b.size = size;
  b.live = {size, first, last};
  b.name = name;
  return b;
}

TEST(ExecutableTest, KernelOverManyThreads) {
  const int64_t n = 1 << 18;
  ProgramSpec spec;
  BufferSpec param;
  param.kind = BufferSpec::Kind::kParameter;
  param.parameter = 0;
  param.size = n * 4;
  spec.buffers.push_back(param);
  spec.buffers.push_back(Temp(n * 4, 0, 1, "t0"));
  spec.buffers.push_back(Temp(n * 4, 1, 2, "t1"));
  spec.thunks.push_back(std::make_unique<KernelThunk>("double", &DoubleKernel,
                                                      std::vector<BufferId>{0, 1}, n, 1));
  spec.thunks.push_back(std::make_unique<KernelThunk>("double", &DoubleKernel,
                                                      std::vector<BufferId>{1, 2}, n, 1));
  spec.outputs = {2};
  auto executable = Executable::Create(std::move(spec));
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<float> in(n), out(n);
  for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>(i);
  ThreadPool pool(3);
  const void* params[] = {in.data()};
  void* outs[] = {out.data()};
  ASSERT_TRUE((*executable)->Execute(params, outs, &pool).ok());
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 4.0f * i);
  EXPECT_NE((*executable)->ThunksToString().find("kernel double(b0, b1)"), std::string::npos);
}

TEST(ExecutableTest, OutputsComputedInPlaceAndArenaReused) {
  // b2 is output 0 only: computed in the caller's memory. b3 is named by two
  // outputs: it stays in the arena and is copied to both.
  const int64_t n = 1000;
  ProgramSpec spec;
  BufferSpec param;
  param.kind = BufferSpec::Kind::kParameter;
  param.parameter = 0;
  param.size = n * 4;
  spec.buffers.push_back(param);
  spec.buffers.push_back(Temp(n * 4, 0, 1, "t1"));
  spec.buffers.push_back(Temp(n * 4, 1, 2, "out"));
  spec.buffers.push_back(Temp(n * 4, 1, 2, "twice"));
  spec.buffers[2].is_output = true;
  spec.buffers[3].is_output = true;
  spec.thunks.push_back(std::make_unique<KernelThunk>("double", &DoubleKernel,
                                                      std::vector<BufferId>{0, 1}, n, 1));
  spec.thunks.push_back(std::make_unique<KernelThunk>("double", &DoubleKernel,
                                                      std::vector<BufferId>{1, 2}, n, 1));
  spec.thunks.push_back(std::make_unique<KernelThunk>("double", &DoubleKernel,
                                                      std::vector<BufferId>{1, 3}, n, 1));
  spec.outputs = {2, 3, 3};
  auto executable = Executable::Create(std::move(spec));
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_NE((*executable)->MemoryReport().find("outputs computed in place 4000 B"),
            std::string::npos)
      << (*executable)->MemoryReport();
  std::vector<float> in(n);
  for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>(i);
  for (int run = 0; run < 3; ++run) {
    std::vector<float> a(n, -1), b(n, -1), c(n, -1);
    const void* params[] = {in.data()};
    void* outs[] = {a.data(), b.data(), c.data()};
    ASSERT_TRUE((*executable)->Execute(params, outs, nullptr).ok());
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(a[i], 4.0f * i);
      ASSERT_EQ(b[i], 4.0f * i);
      ASSERT_EQ(c[i], 4.0f * i);
    }
  }
}

TEST(ExecutableTest, WhileLoopDoublesUntilLimit) {
  ProgramSpec spec;
  BufferSpec constant;
  constant.kind = BufferSpec::Kind::kConstant;
  constant.size = 4;
  constant.data.resize(4);
  float three = 3;
  std::memcpy(constant.data.data(), &three, 4);
  spec.buffers.push_back(constant);                   // b0: init
  spec.buffers.push_back(Temp(4, 0, 3, "state"));     // b1
  spec.buffers.push_back(Temp(1, 1, 1, "pred"));      // b2
  spec.buffers.push_back(Temp(4, 2, 3, "next"));      // b3
  ThunkSequence condition, body;
  condition.push_back(std::make_unique<KernelThunk>("lt", &LessThan100Kernel,
                                                    std::vector<BufferId>{1, 2}, 1, 1));
  body.push_back(std::make_unique<KernelThunk>("double", &DoubleKernel,
                                               std::vector<BufferId>{1, 3}, 1, 1));
  body.push_back(std::make_unique<CopyThunk>(3, 1, 4));
  spec.thunks.push_back(std::make_unique<CopyThunk>(0, 1, 4));
  spec.thunks.push_back(
      std::make_unique<WhileThunk>("loop", std::move(condition), 2, std::move(body)));
  spec.outputs = {1};
  auto executable = Executable::Create(std::move(spec));
  ASSERT_TRUE(executable.ok()) << executable.status();
  float result = 0;
  void* outs[] = {&result};
  ASSERT_TRUE((*executable)->Execute({}, outs, nullptr).ok());
  EXPECT_EQ(result, 192.0f);  // 3 * 2^6
  ExecuteOptions limited;
  limited.max_while_iterations = 3;
  absl::Status status = (*executable)->Execute({}, outs, nullptr, limited);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
}

// The profiler has one entry per thunk, nested ones under their loop with
// their role; counts are per execution (the loop body runs 6 times per run,
// the condition 7); a loop's time covers its children's; the top-level
// thunks' times fit in the runs'. A second executable's profiler is refused.
TEST(ExecutableTest, ProfilerTimesEveryThunkOfEveryRun) {
  auto make = [] {
    ProgramSpec spec;
    BufferSpec constant;
    constant.kind = BufferSpec::Kind::kConstant;
    constant.size = 4;
    constant.data.resize(4);
    float three = 3;
    std::memcpy(constant.data.data(), &three, 4);
    constant.name = "%init";
    spec.buffers.push_back(constant);                   // b0: init
    spec.buffers.push_back(Temp(4, 0, 3, "%state"));    // b1
    spec.buffers.push_back(Temp(1, 1, 1, "%pred"));     // b2
    spec.buffers.push_back(Temp(4, 2, 3, "%next"));     // b3
    ThunkSequence condition, body;
    condition.push_back(std::make_unique<KernelThunk>("%lt", &LessThan100Kernel,
                                                      std::vector<BufferId>{1, 2}, 1, 1));
    body.push_back(std::make_unique<KernelThunk>("%double", &DoubleKernel,
                                                 std::vector<BufferId>{1, 3}, 1, 1));
    body.push_back(std::make_unique<CopyThunk>(3, 1, 4));
    spec.thunks.push_back(std::make_unique<CopyThunk>(0, 1, 4));
    spec.thunks.push_back(
        std::make_unique<WhileThunk>("%loop", std::move(condition), 2, std::move(body)));
    spec.outputs = {1};
    return Executable::Create(std::move(spec));
  };
  auto executable = make();
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::unique_ptr<ThunkProfiler> profiler = (*executable)->MakeProfiler();
  ExecuteOptions options;
  options.profiler = profiler.get();
  float result = 0;
  void* outs[] = {&result};
  for (int run = 0; run < 3; ++run) {
    ASSERT_TRUE((*executable)->Execute({}, outs, nullptr, options).ok());
    EXPECT_EQ(result, 192.0f);
  }
  std::vector<ThunkTiming> t = profiler->timings();
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].name, "copy %init -> %state");
  EXPECT_EQ(t[0].kind, ThunkKind::kCopy);
  EXPECT_EQ(t[0].bytes, 4);
  EXPECT_EQ(t[0].calls, 3);
  EXPECT_EQ(t[1].name, "%loop");
  EXPECT_EQ(t[1].kind, ThunkKind::kWhile);
  EXPECT_EQ(t[1].calls, 3);
  EXPECT_EQ(t[2].name, "%lt");
  EXPECT_EQ(t[2].parent, 1);
  EXPECT_EQ(t[2].role, "condition");
  EXPECT_EQ(t[2].calls, 3 * 7);
  EXPECT_EQ(t[3].name, "%double");
  EXPECT_EQ(t[3].role, "body");
  EXPECT_EQ(t[3].depth, 1);
  EXPECT_EQ(t[3].calls, 3 * 6);
  EXPECT_EQ(t[4].kind, ThunkKind::kCopy);
  EXPECT_EQ(t[4].calls, 3 * 6);
  EXPECT_GE(t[1].seconds, t[2].seconds + t[3].seconds + t[4].seconds);
  std::vector<double> runs = profiler->run_seconds();
  ASSERT_EQ(runs.size(), 3u);
  double total = 0;
  for (double r : runs) total += r;
  EXPECT_GE(total, t[0].seconds + t[1].seconds);
  EXPECT_GT(t[3].seconds, 0);

  // Without the option nothing is recorded; another program's profiler is an error.
  ASSERT_TRUE((*executable)->Execute({}, outs, nullptr).ok());
  EXPECT_EQ(profiler->timings()[1].calls, 3);
  auto other = make();
  ASSERT_TRUE(other.ok());
  absl::Status status = (*other)->Execute({}, outs, nullptr, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  profiler->Clear();
  EXPECT_EQ(profiler->timings()[3].calls, 0);
  EXPECT_TRUE(profiler->run_seconds().empty());
}

TEST(ExecutableTest, ConditionalPicksBranch) {
  for (int32_t selector : {0, 1, 7, -1}) {
    ProgramSpec spec;
    BufferSpec param;
    param.kind = BufferSpec::Kind::kParameter;
    param.parameter = 0;
    param.size = 4;
    spec.buffers.push_back(param);               // b0: selector
    BufferSpec value = param;
    value.parameter = 1;
    spec.buffers.push_back(value);               // b1: x
    spec.buffers.push_back(Temp(4, 0, 1, "out"));  // b2
    std::vector<ThunkSequence> branches(2);
    branches[0].push_back(std::make_unique<KernelThunk>("double", &DoubleKernel,
                                                        std::vector<BufferId>{1, 2}, 1, 1));
    branches[1].push_back(std::make_unique<CopyThunk>(1, 2, 4));
    spec.thunks.push_back(
        std::make_unique<ConditionalThunk>("cond", 0, false, std::move(branches)));
    spec.outputs = {2};
    auto executable = Executable::Create(std::move(spec));
    ASSERT_TRUE(executable.ok());
    float x = 5, result = 0;
    const void* params[] = {&selector, &x};
    void* outs[] = {&result};
    ASSERT_TRUE((*executable)->Execute(params, outs, nullptr).ok());
    EXPECT_EQ(result, selector == 0 ? 10.0f : 5.0f) << selector;
  }
}

// buffers[1][0] += 1: an update in place when buffers[1] shares buffers[0]'s
// bytes (buffers[0] is not read).
void BumpFirstKernel(void* const* buffers, int64_t, int64_t) {
  static_cast<float*>(buffers[1])[0] += 1;
}

TEST(ExecutableTest, SharedStorageUpdatesLoopStateInPlace) {
  // state (b1, 256 floats) counts to 100 in its first element; the body's
  // result b3 shares the state's bytes, so the copy back does nothing and
  // the rest of the state is never rewritten.
  const int64_t n = 256;
  ProgramSpec spec;
  BufferSpec param;
  param.kind = BufferSpec::Kind::kParameter;
  param.parameter = 0;
  param.size = n * 4;
  spec.buffers.push_back(param);                       // b0: init
  spec.buffers.push_back(Temp(n * 4, 0, 3, "state"));  // b1
  spec.buffers.push_back(Temp(1, 1, 1, "pred"));       // b2
  spec.buffers.push_back(Temp(n * 4, 2, 3, "next"));   // b3
  spec.buffers.push_back(Temp(n * 4, 4, 4, "twice"));  // b4
  spec.buffers[3].shares = 1;
  ThunkSequence condition, body;
  condition.push_back(std::make_unique<KernelThunk>("lt", &LessThan100Kernel,
                                                    std::vector<BufferId>{1, 2}, 1, 1));
  body.push_back(std::make_unique<KernelThunk>("bump", &BumpFirstKernel,
                                               std::vector<BufferId>{1, 3}, 1, 1));
  body.push_back(std::make_unique<CopyThunk>(3, 1, n * 4));
  spec.thunks.push_back(std::make_unique<CopyThunk>(0, 1, n * 4));
  spec.thunks.push_back(
      std::make_unique<WhileThunk>("loop", std::move(condition), 2, std::move(body)));
  spec.thunks.push_back(std::make_unique<KernelThunk>("double", &DoubleKernel,
                                                      std::vector<BufferId>{1, 4}, n, 1));
  spec.outputs = {4};
  auto executable = Executable::Create(std::move(spec));
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_EQ((*executable)->storage_of(3), 1);
  EXPECT_EQ((*executable)->shared_bytes(), n * 4);
  // state+next and pred; without sharing, next would need its own 1 KiB.
  EXPECT_EQ((*executable)->arena().arena_size, n * 4 + 64);
  const std::string report = (*executable)->MemoryReport();
  EXPECT_NE(report.find("state = next"), std::string::npos) << report;
  EXPECT_NE(report.find("1 buffers in another's bytes (1024 B)"), std::string::npos) << report;
  std::vector<float> in(n), out(n);
  for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>(i);
  const void* params[] = {in.data()};
  void* outs[] = {out.data()};
  ASSERT_TRUE((*executable)->Execute(params, outs, nullptr).ok());
  EXPECT_EQ(out[0], 200.0f);
  for (int64_t i = 1; i < n; ++i) ASSERT_EQ(out[i], 2.0f * i);
}

TEST(ExecutableTest, SharedOutputGroupComputedInCallerMemory) {
  // t1 shares out's bytes; out is the only output, so both live in it.
  ProgramSpec spec;
  BufferSpec param;
  param.kind = BufferSpec::Kind::kParameter;
  param.parameter = 0;
  param.size = 16;
  spec.buffers.push_back(param);
  spec.buffers.push_back(Temp(16, 1, 2, "t1"));
  spec.buffers.push_back(Temp(16, 2, 3, "out"));
  spec.buffers[1].shares = 2;
  spec.buffers[2].is_output = true;
  spec.thunks.push_back(std::make_unique<KernelThunk>("double", &DoubleKernel,
                                                      std::vector<BufferId>{0, 1}, 4, 1));
  spec.thunks.push_back(std::make_unique<KernelThunk>("bump", &BumpFirstKernel,
                                                      std::vector<BufferId>{1, 2}, 1, 1));
  spec.outputs = {2};
  auto executable = Executable::Create(std::move(spec));
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_EQ((*executable)->arena().arena_size, 0);
  float in[4] = {1, 2, 3, 4}, out[4] = {};
  const void* params[] = {in};
  void* outs[] = {out};
  ASSERT_TRUE((*executable)->Execute(params, outs, nullptr).ok());
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[3], 8.0f);
}

TEST(ExecutableTest, BigCopySplitOverThreads) {
  // 2 MiB + a ragged tail: copied in chunks over the pool.
  const int64_t n = (int64_t{1} << 19) + 37;
  ProgramSpec spec;
  BufferSpec param;
  param.kind = BufferSpec::Kind::kParameter;
  param.parameter = 0;
  param.size = n * 4;
  spec.buffers.push_back(param);
  spec.buffers.push_back(Temp(n * 4, 0, 1, "copy"));
  spec.buffers.push_back(Temp(n * 4, 1, 2, "out"));
  spec.thunks.push_back(std::make_unique<CopyThunk>(0, 1, n * 4));
  spec.thunks.push_back(std::make_unique<KernelThunk>("double", &DoubleKernel,
                                                      std::vector<BufferId>{1, 2}, n, 1));
  spec.outputs = {2};
  auto executable = Executable::Create(std::move(spec));
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<float> in(n), out(n);
  for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>(i);
  ThreadPool pool(3);
  const void* params[] = {in.data()};
  void* outs[] = {out.data()};
  ASSERT_TRUE((*executable)->Execute(params, outs, &pool).ok());
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * i) << i;
}

TEST(ExecutableTest, RejectsBadSharing) {
  for (int variant = 0; variant < 3; ++variant) {
    ProgramSpec spec;
    BufferSpec param;
    param.kind = BufferSpec::Kind::kParameter;
    param.parameter = 0;
    param.size = 16;
    spec.buffers.push_back(param);
    spec.buffers.push_back(Temp(16, 0, 1, "a"));
    spec.buffers.push_back(Temp(variant == 2 ? 32 : 16, 1, 2, "b"));
    if (variant == 0) spec.buffers[1].shares = 0;  // A parameter's bytes.
    if (variant == 1) {                            // A cycle.
      spec.buffers[1].shares = 2;
      spec.buffers[2].shares = 1;
    }
    if (variant == 2) spec.buffers[1].shares = 2;  // Sizes differ.
    EXPECT_FALSE(Executable::Create(std::move(spec)).ok()) << variant;
  }
}

TEST(ExecutableTest, RejectsBadSpecs) {
  ProgramSpec spec;
  BufferSpec constant;
  constant.kind = BufferSpec::Kind::kConstant;
  constant.size = 8;  // but no data
  spec.buffers.push_back(constant);
  EXPECT_FALSE(Executable::Create(std::move(spec)).ok());
  ProgramSpec spec2;
  spec2.outputs = {3};
  EXPECT_FALSE(Executable::Create(std::move(spec2)).ok());
}

}  // namespace
}  // namespace runtime
}  // namespace hloc
