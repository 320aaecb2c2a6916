// The multi-device interpreter: XLA's collective semantics on small modules
// in HLO text, every device's result checked by hand.
#include "hlo/evaluator/multi_device.h"

#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "absl/strings/match.h"
#include "hlo/custom_call_targets.h"
#include "hlo/evaluator/evaluator_test_util.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

using testing_util::L;

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

// Runs `text` on its devices; device d's one argument is `arg(d)`. Returns
// each device's printed result, or the error as the single entry.
std::vector<std::string> RunOnDevices(const std::string& text, const std::function<Literal(int)>& arg,
                             MultiDeviceOptions options = {}) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) return {"PARSE: " + module.status().ToString()};
  const int64_t n = (*module)->config().replica_count * (*module)->config().num_partitions;
  std::vector<std::vector<Literal>> args(n);
  for (int64_t d = 0; d < n; ++d) args[d].push_back(arg(d));
  absl::StatusOr<std::vector<Literal>> results = EvaluateOnDevices(**module, args, options);
  if (!results.ok()) return {"ERROR: " + results.status().ToString()};
  std::vector<std::string> out;
  for (const Literal& r : *results) out.push_back(r.ToString());
  return out;
}

// f32[2] {d, 10 d} on device d.
Literal Ramp(int d) {
  return L("f32[2]", absl::StrCat("{", d, ", ", 10 * d, "}"));
}

std::string Module(const std::string& header, const std::string& body) {
  return absl::StrCat("HloModule m, ", header, "\n", kAdd, "\nENTRY e {\n  p = f32[2] parameter(0)\n",
                      body, "}\n");
}

TEST(MultiDeviceTest, ReplicatedAllReduceAndReplicaId) {
  const auto r = RunOnDevices(Module("replica_count=4", R"(
  s = f32[2] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
  id = u32[] replica-id()
  ROOT t = (f32[2], u32[]) tuple(s, id)
)"), Ramp);
  ASSERT_EQ(r.size(), 4u) << r[0];
  EXPECT_EQ(r[0], "(f32[2] {1, 10}, u32[] 0)");
  EXPECT_EQ(r[1], "(f32[2] {1, 10}, u32[] 1)");
  EXPECT_EQ(r[3], "(f32[2] {5, 50}, u32[] 3)");
}

TEST(MultiDeviceTest, EmptyGroupsMeanEveryone) {
  const auto r = RunOnDevices(Module("replica_count=3", R"(
  ROOT s = f32[2] all-reduce(p), replica_groups={}, to_apply=add
)"), Ramp);
  ASSERT_EQ(r.size(), 3u) << r[0];
  for (const auto& s : r) EXPECT_EQ(s, "f32[2] {3, 30}");
}

TEST(MultiDeviceTest, AllGatherWithIotaGroups) {
  // [2,2]<=[2,2]T(1,0) = {{0,2},{1,3}}.
  const auto r = RunOnDevices(Module("num_partitions=4", R"(
  ROOT g = f32[4] all-gather(p), channel_id=1, replica_groups=[2,2]<=[2,2]T(1,0),
      use_global_device_ids=true, dimensions={0}
)"), Ramp);
  ASSERT_EQ(r.size(), 4u) << r[0];
  EXPECT_EQ(r[0], "f32[4] {0, 0, 2, 20}");
  EXPECT_EQ(r[2], "f32[4] {0, 0, 2, 20}");
  EXPECT_EQ(r[3], "f32[4] {1, 10, 3, 30}");
}

TEST(MultiDeviceTest, ReduceScatterGivesEachRankItsShard) {
  const auto r = RunOnDevices(Module("num_partitions=2", R"(
  ROOT rs = f32[1] reduce-scatter(p), channel_id=1, replica_groups={{1,0}},
      use_global_device_ids=true, dimensions={0}, to_apply=add
)"), [](int d) { return L("f32[2]", d == 0 ? "{1, 2}" : "{10, 20}"); });
  ASSERT_EQ(r.size(), 2u) << r[0];
  // Group order {1,0}: device 1 is rank 0 and keeps the first half.
  EXPECT_EQ(r[1], "f32[1] {11}");
  EXPECT_EQ(r[0], "f32[1] {22}");
}

TEST(MultiDeviceTest, AllToAllArrayAndTupleForms) {
  const auto array = RunOnDevices(Module("num_partitions=2", R"(
  ROOT a = f32[2] all-to-all(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}
)"), [](int d) { return L("f32[2]", d == 0 ? "{1, 2}" : "{3, 4}"); });
  ASSERT_EQ(array.size(), 2u) << array[0];
  EXPECT_EQ(array[0], "f32[2] {1, 3}");
  EXPECT_EQ(array[1], "f32[2] {2, 4}");
  const auto tuple = RunOnDevices(Module("replica_count=2", R"(
  x = f32[1] slice(p), slice={[0:1]}
  y = f32[1] slice(p), slice={[1:2]}
  ROOT a = (f32[1], f32[1]) all-to-all(x, y), replica_groups={{0,1}}
)"), [](int d) { return L("f32[2]", d == 0 ? "{1, 2}" : "{3, 4}"); });
  ASSERT_EQ(tuple.size(), 2u) << tuple[0];
  EXPECT_EQ(tuple[0], "(f32[1] {1}, f32[1] {3})");
  EXPECT_EQ(tuple[1], "(f32[1] {2}, f32[1] {4})");
}

TEST(MultiDeviceTest, CollectivePermuteLeavesUnreachedDevicesZero) {
  const auto r = RunOnDevices(Module("num_partitions=3", R"(
  ROOT c = f32[2] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,2}}
)"), [](int d) { return Ramp(d + 1); });
  ASSERT_EQ(r.size(), 3u) << r[0];
  EXPECT_EQ(r[0], "f32[2] {0, 0}");
  EXPECT_EQ(r[1], "f32[2] {1, 10}");
  EXPECT_EQ(r[2], "f32[2] {2, 20}");
}

TEST(MultiDeviceTest, CrossReplicaAndPartitionModes) {
  // 2 replicas x 2 partitions. Channel without global ids: replica group
  // {0,1} spans every partition, so all four devices sum.
  const auto both = RunOnDevices(Module("replica_count=2, num_partitions=2", R"(
  ROOT s = f32[2] all-reduce(p), channel_id=1, replica_groups={{0,1}}, to_apply=add
)"), Ramp);
  ASSERT_EQ(both.size(), 4u) << both[0];
  for (const auto& s : both) EXPECT_EQ(s, "f32[2] {6, 60}");
  // No channel: replicas of the same partition (devices 0+2 and 1+3).
  const auto replicas = RunOnDevices(Module("replica_count=2, num_partitions=2", R"(
  ROOT s = f32[2] all-reduce(p), replica_groups={{0,1}}, to_apply=add
)"), Ramp);
  ASSERT_EQ(replicas.size(), 4u) << replicas[0];
  EXPECT_EQ(replicas[0], "f32[2] {2, 20}");
  EXPECT_EQ(replicas[1], "f32[2] {4, 40}");
  // all-to-all with a channel: partitions of the same replica, and
  // partition-id / replica-id per device.
  const auto ids = RunOnDevices(Module("replica_count=2, num_partitions=2", R"(
  r = u32[] replica-id()
  q = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, q)
)"), Ramp);
  ASSERT_EQ(ids.size(), 4u) << ids[0];
  EXPECT_EQ(ids[2], "(u32[] 1, u32[] 0)");
  EXPECT_EQ(ids[3], "(u32[] 1, u32[] 1)");
}

TEST(MultiDeviceTest, BroadcastFromRankZero) {
  const auto r = RunOnDevices(Module("replica_count=4", R"(
  ROOT b = f32[2] collective-broadcast(p), replica_groups={{2,0},{1,3}}
)"), Ramp);
  ASSERT_EQ(r.size(), 4u) << r[0];
  EXPECT_EQ(r[0], "f32[2] {2, 20}");
  EXPECT_EQ(r[3], "f32[2] {1, 10}");
}

TEST(MultiDeviceTest, AsyncForms) {
  const std::string text = absl::StrCat("HloModule m, replica_count=2\n", kAdd, R"(
wrapped {
  x = f32[2] parameter(0)
  ROOT s = f32[2] all-reduce(x), replica_groups={}, to_apply=add
}

ENTRY e {
  p = f32[2] parameter(0)
  ars = f32[2] all-reduce-start(p), replica_groups={}, to_apply=add
  ard = f32[2] all-reduce-done(ars)
  ags = (f32[2], f32[4]) all-gather-start(p), replica_groups={}, dimensions={0}
  agd = f32[4] all-gather-done(ags)
  cps = (f32[2], f32[2], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,1},{1,0}}
  cpd = f32[2] collective-permute-done(cps)
  as = ((f32[2]), f32[2], s32[]) async-start(p), calls=wrapped
  ad = f32[2] async-done(as), calls=wrapped
  ROOT t = (f32[2], f32[4], f32[2], f32[2]) tuple(ard, agd, cpd, ad)
}
)");
  const auto r = RunOnDevices(text, [](int d) { return Ramp(d + 1); });
  ASSERT_EQ(r.size(), 2u) << r[0];
  EXPECT_EQ(r[0], "(f32[2] {3, 30}, f32[4] {1, 10, 2, 20}, f32[2] {2, 20}, f32[2] {3, 30})");
  EXPECT_EQ(r[1], "(f32[2] {3, 30}, f32[4] {1, 10, 2, 20}, f32[2] {1, 10}, f32[2] {3, 30})");
}

TEST(MultiDeviceTest, CollectivesInsideALoopMatchByRun) {
  // Three trips round a ring of 3: every value comes home.
  const std::string text = R"(HloModule m, num_partitions=3

cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}

body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[2] collective-permute(v), channel_id=1, source_target_pairs={{0,1},{1,2},{2,0}}
  ROOT t = (s32[], f32[2]) tuple(j, w)
}

ENTRY e {
  p = f32[2] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[2]) tuple(zero, p)
  loop = (s32[], f32[2]) while(init), condition=cond, body=body
  ROOT v = f32[2] get-tuple-element(loop), index=1
}
)";
  const auto r = RunOnDevices(text, Ramp);
  ASSERT_EQ(r.size(), 3u) << r[0];
  for (int d = 0; d < 3; ++d) EXPECT_EQ(r[d], Ramp(d).ToString());
}

TEST(MultiDeviceTest, ErrorsNameTheDeviceAndNeverHang) {
  // Device 1 fails before the all-reduce; the others must not wait forever.
  const std::string failing = absl::StrCat("HloModule m, replica_count=3\n", kAdd, R"(
ok {
  x = f32[2] parameter(0)
  ROOT y = f32[2] negate(x)
}

bad {
  x = f32[2] parameter(0)
  ROOT y = f32[2] custom-call(x), custom_call_target="no_such_kernel"
}

ENTRY e {
  p = f32[2] parameter(0)
  id = u32[] replica-id()
  one = u32[] constant(1)
  is_one = pred[] compare(id, one), direction=EQ
  c = f32[2] conditional(is_one, p, p), true_computation=bad, false_computation=ok
  ROOT s = f32[2] all-reduce(c), replica_groups={}, to_apply=add
}
)");
  const auto r = RunOnDevices(failing, Ramp);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("device 1"), std::string::npos) << r[0];
  EXPECT_NE(r[0].find("no_such_kernel"), std::string::npos) << r[0];

  // Devices that reach different all-reduces time out with a message.
  const std::string split = absl::StrCat("HloModule m, replica_count=2\n", kAdd, R"(
left {
  x = f32[2] parameter(0)
  ROOT y = f32[2] all-reduce(x), replica_groups={}, to_apply=add
}

right {
  x = f32[2] parameter(0)
  ROOT y = f32[2] all-reduce(x), replica_groups={}, to_apply=add
}

ENTRY e {
  p = f32[2] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[2] conditional(first, p, p), true_computation=left, false_computation=right
}
)");
  MultiDeviceOptions quick;
  quick.collective_timeout = absl::Milliseconds(300);
  const auto t = RunOnDevices(split, Ramp, quick);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_NE(t[0].find("waited"), std::string::npos) << t[0];

  // Wrong number of per-device argument lists.
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseHloModule(Module("replica_count=2", "  ROOT n = f32[2] negate(p)\n"));
  ASSERT_TRUE(module.ok());
  std::vector<std::vector<Literal>> one(1);
  one[0].push_back(Ramp(0));
  const absl::Status status = EvaluateOnDevices(**module, one).status();
  EXPECT_NE(status.message().find("runs on 2 devices"), std::string::npos) << status;
}

// Runs `text` on its devices; device d's arguments are `args(d)`.
std::vector<std::string> RunWithArgs(const std::string& text,
                                     const std::function<std::vector<Literal>(int)>& args) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) return {"PARSE: " + module.status().ToString()};
  const int64_t n = (*module)->config().replica_count * (*module)->config().num_partitions;
  std::vector<std::vector<Literal>> all(n);
  for (int64_t d = 0; d < n; ++d) all[d] = args(d);
  MultiDeviceOptions quick;
  quick.collective_timeout = absl::Seconds(5);
  absl::StatusOr<std::vector<Literal>> results = EvaluateOnDevices(**module, all, quick);
  if (!results.ok()) return {"ERROR: " + results.status().ToString()};
  std::vector<std::string> out;
  for (const Literal& r : *results) out.push_back(r.ToString());
  return out;
}

constexpr char kRagged1D[] = R"(HloModule m, replica_count=2

ENTRY e {
  input = f32[4] parameter(0)
  output = f32[4] parameter(1)
  input_offsets = s32[2] parameter(2)
  send_sizes = s32[2] parameter(3)
  output_offsets = s32[2] parameter(4)
  recv_sizes = s32[2] parameter(5)
  ROOT r = f32[4] ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes), replica_groups={{0,1}}
}
)";

// Per device: input, output, input_offsets, send_sizes, output_offsets,
// recv_sizes (the offsets and sizes in s32 text).
std::vector<Literal> RaggedArgs(const std::string& input, const std::string& in_off,
                                const std::string& send, const std::string& out_off,
                                const std::string& recv) {
  std::vector<Literal> args;
  args.push_back(L("f32[4]", input));
  args.push_back(L("f32[4]", "{-1, -1, -1, -1}"));
  for (const std::string* v : {&in_off, &send, &out_off, &recv}) args.push_back(L("s32[2]", *v));
  return args;
}

TEST(MultiDeviceTest, RaggedAllToAllPlacesEachChunkAtTheSendersOutputOffset) {
  // Device 0 sends row 0 to itself and rows 1..3 to device 1; device 1 sends
  // rows 0..1 to device 0 (at its offset 1) and row 2 to itself (at 3).
  // output_offsets are the sender's: where in the receiver's output its
  // chunk lands. Rows nobody writes keep the output operand's values.
  const auto r = RunWithArgs(kRagged1D, [](int d) {
    return d == 0 ? RaggedArgs("{1, 2, 3, 4}", "{0, 1}", "{1, 3}", "{0, 0}", "{1, 2}")
                  : RaggedArgs("{5, 6, 7, 8}", "{0, 2}", "{2, 1}", "{1, 3}", "{3, 1}");
  });
  ASSERT_EQ(r.size(), 2u) << r[0];
  EXPECT_EQ(r[0], "f32[4] {1, 5, 6, -1}");
  EXPECT_EQ(r[1], "f32[4] {2, 3, 4, 7}");
}

TEST(MultiDeviceTest, RaggedAllToAllRowsOfSeveralElementsAndTwoUpdatesPerPeer) {
  // s64 offsets of 4 entries for 2 devices: entry p * 2 + u is update u for
  // peer p. Input 3 rows, output 4 rows of 2 elements.
  const std::string text = R"(HloModule m, num_partitions=2

ENTRY e {
  input = f32[3,2] parameter(0)
  output = f32[4,2] parameter(1)
  a = s64[4] parameter(2)
  b = s64[4] parameter(3)
  c = s64[4] parameter(4)
  d = s64[4] parameter(5)
  ROOT r = f32[4,2] ragged-all-to-all(input, output, a, b, c, d), channel_id=1, replica_groups={{0,1}}
}
)";
  const auto r = RunWithArgs(text, [](int dev) {
    std::vector<Literal> args;
    args.push_back(L("f32[3,2]", dev == 0 ? "{{1, 2}, {3, 4}, {5, 6}}"
                                          : "{{7, 8}, {9, 10}, {11, 12}}"));
    args.push_back(L("f32[4,2]", "{{0, 0}, {0, 0}, {0, 0}, {0, 0}}"));
    const char* const mine[2][4] = {{"{0, 0, 1, 0}", "{1, 0, 2, 1}", "{0, 0, 0, 3}", "{1, 0, 1, 1}"},
                                    {"{2, 0, 0, 1}", "{1, 1, 0, 1}", "{3, 1, 0, 2}", "{2, 1, 0, 1}"}};
    for (const char* v : mine[dev]) args.push_back(L("s64[4]", v));
    return args;
  });
  ASSERT_EQ(r.size(), 2u) << r[0];
  EXPECT_EQ(r[0], L("f32[4,2]", "{{1, 2}, {7, 8}, {0, 0}, {11, 12}}").ToString());
  EXPECT_EQ(r[1], L("f32[4,2]", "{{3, 4}, {5, 6}, {9, 10}, {1, 2}}").ToString());
}

TEST(MultiDeviceTest, RaggedAllToAllIntoAnEmptyOutput) {
  // Nothing to send into 0 rows: the result is the empty output.
  const std::string text = R"(HloModule m, replica_count=2

ENTRY e {
  input = f32[3,2] parameter(0)
  output = f32[0,2] parameter(1)
  i = s32[2] parameter(2)
  ROOT r = f32[0,2] ragged-all-to-all(input, output, i, i, i, i), replica_groups={{0,1}}
}
)";
  const auto r = RunWithArgs(text, [](int) {
    std::vector<Literal> args;
    args.push_back(L("f32[3,2]", "{{1, 2}, {3, 4}, {5, 6}}"));
    args.push_back(Literal(Shape(xla::F32, {0, 2})));
    args.push_back(L("s32[2]", "{0, 0}"));
    return args;
  });
  ASSERT_EQ(r.size(), 2u) << r[0];
  EXPECT_EQ(r[0], Literal(Shape(xla::F32, {0, 2})).ToString());
}

TEST(MultiDeviceTest, RaggedAllToAllRejectsChunksOutsideTheBuffers) {
  // Device 0 sends rows [3, 5) of its 4-row input.
  const auto past_input = RunWithArgs(kRagged1D, [](int d) {
    return d == 0 ? RaggedArgs("{1, 2, 3, 4}", "{0, 3}", "{1, 2}", "{0, 0}", "{1, 2}")
                  : RaggedArgs("{5, 6, 7, 8}", "{0, 2}", "{2, 2}", "{1, 2}", "{2, 2}");
  });
  ASSERT_EQ(past_input.size(), 1u);
  EXPECT_NE(past_input[0].find("sends rows [3, 5) of an input of 4 rows"), std::string::npos)
      << past_input[0];
  // Device 1 writes rows [3, 5) of device 0's output.
  const auto past_output = RunWithArgs(kRagged1D, [](int d) {
    return d == 0 ? RaggedArgs("{1, 2, 3, 4}", "{0, 1}", "{1, 1}", "{0, 0}", "{1, 2}")
                  : RaggedArgs("{5, 6, 7, 8}", "{0, 2}", "{2, 1}", "{3, 1}", "{1, 1}");
  });
  ASSERT_EQ(past_output.size(), 1u);
  EXPECT_NE(past_output[0].find("writes rows [3, 5)"), std::string::npos) << past_output[0];
  // Negative offset.
  const auto negative = RunWithArgs(kRagged1D, [](int d) {
    return d == 0 ? RaggedArgs("{1, 2, 3, 4}", "{-1, 1}", "{1, 1}", "{0, 0}", "{1, 1}")
                  : RaggedArgs("{5, 6, 7, 8}", "{0, 2}", "{1, 1}", "{1, 1}", "{1, 1}");
  });
  ASSERT_EQ(negative.size(), 1u);
  EXPECT_NE(negative[0].find("sends rows [-1, 0)"), std::string::npos) << negative[0];
  // recv_sizes that disagree with what the peer sends.
  const auto mismatch = RunWithArgs(kRagged1D, [](int d) {
    return d == 0 ? RaggedArgs("{1, 2, 3, 4}", "{0, 1}", "{1, 3}", "{0, 0}", "{1, 1}")
                  : RaggedArgs("{5, 6, 7, 8}", "{0, 2}", "{2, 1}", "{1, 3}", "{3, 1}");
  });
  ASSERT_EQ(mismatch.size(), 1u);
  EXPECT_NE(mismatch[0].find("rank 0 expects 1 rows from rank 1"), std::string::npos)
      << mismatch[0];
}

// Every run puts each device on its own thread, all at once (the devices
// meet in a barrier no run could pass otherwise), and device d keeps its
// thread from run to run (device 0 the caller's).
TEST(DeviceThreadsTest, EachDeviceHasItsOwnThreadKeptAcrossRuns) {
  constexpr int64_t kDevices = 4;
  DeviceThreads threads(kDevices);
  std::vector<std::thread::id> first(kDevices);
  for (int run = 0; run < 50; ++run) {
    std::vector<std::thread::id> ids(kDevices);
    std::atomic<int> arrived{0};
    threads.Run([&](int64_t d) {
      ids[d] = std::this_thread::get_id();
      arrived.fetch_add(1);
      while (arrived.load() < kDevices) std::this_thread::yield();  // All four at once.
    });
    EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), size_t{kDevices});
    EXPECT_EQ(ids[0], std::this_thread::get_id());
    if (run == 0) first = ids;
    EXPECT_EQ(ids, first) << "run " << run;
  }
}

TEST(DeviceThreadsTest, RunOnDeviceThreadsUsesThemAndReportsTheFailingDevice) {
  DeviceThreads threads(3);
  std::atomic<int> aborts{0};
  absl::StatusOr<std::vector<Literal>> out = RunOnDeviceThreads(
      3,
      [](int64_t d) -> absl::StatusOr<Literal> {
        if (d == 2) return absl::InvalidArgumentError("bad input");
        return Literal::Scalar(xla::F32, static_cast<float>(d));
      },
      [&](const absl::Status&) { aborts.fetch_add(1); }, &threads);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "device 2: bad input");
  EXPECT_EQ(aborts.load(), 1);
  out = RunOnDeviceThreads(
      3,
      [](int64_t d) -> absl::StatusOr<Literal> {
        return Literal::Scalar(xla::F32, static_cast<float>(d));
      },
      [](const absl::Status&) {}, &threads);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->size(), 3u);
}

// The interpreter's runner on threads kept across runs
// (MultiDeviceOptions::threads): each device's custom call sees the same
// thread every run (device 0 the caller's), and a device that fails is the
// error named, after which the same threads run again.
TEST(DeviceThreadsTest, InterpreterRunsEachDeviceOnItsKeptThread) {
  constexpr int64_t kDevices = 3;
  std::mutex mu;
  std::vector<std::thread::id> ids(kDevices);
  std::atomic<int64_t> failing{-1};
  CustomCallRegistry registry;
  ASSERT_TRUE(registry
                  .Register("record_thread",
                            [&](const CustomCallFrame& frame) -> absl::Status {
                              const uint32_t d = *static_cast<const uint32_t*>(
                                  frame.operands[0].data);
                              if (static_cast<int64_t>(d) == failing.load()) {
                                return absl::InternalError("the kernel broke");
                              }
                              std::lock_guard<std::mutex> lock(mu);
                              ids[d] = std::this_thread::get_id();
                              *static_cast<uint32_t*>(frame.results[0].data) = d;
                              return absl::OkStatus();
                            })
                  .ok());
  const std::shared_ptr<const CustomCallTargets> targets = registry.Snapshot();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m, replica_count=3
ENTRY e {
  p = f32[2] parameter(0)
  id = u32[] replica-id()
  ROOT r = u32[] custom-call(id), custom_call_target="record_thread"
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<std::vector<Literal>> args(kDevices);
  for (int64_t d = 0; d < kDevices; ++d) args[d].push_back(Ramp(static_cast<int>(d)));
  DeviceThreads threads(kDevices);
  MultiDeviceOptions options;
  options.evaluator.custom_calls = targets.get();
  options.threads = &threads;
  const std::vector<std::thread::id> expected = {std::this_thread::get_id(), threads.id(1),
                                                 threads.id(2)};
  ASSERT_EQ(std::set<std::thread::id>(expected.begin(), expected.end()).size(), 3u);
  for (int run = 0; run < 3; ++run) {
    if (run == 1) failing = 2;
    if (run == 2) failing = -1;
    absl::StatusOr<std::vector<Literal>> out = EvaluateOnDevices(**module, args, options);
    if (run == 1) {
      ASSERT_FALSE(out.ok());
      EXPECT_TRUE(absl::StartsWith(out.status().message(), "device 2: ")) << out.status();
      EXPECT_TRUE(absl::StrContains(out.status().message(), "the kernel broke")) << out.status();
      continue;
    }
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[2].ToString(), "u32[] 2");
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(ids, expected) << "run " << run;
  }
  EXPECT_EQ(threads.runs(), 3u);
}

}  // namespace
}  // namespace hloc
