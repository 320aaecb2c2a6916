// RunOnHostDevices against the multi-device interpreter on hand-written
// modules: every collective the host lowers to communicator thunks, in the
// group modes and shapes the JAX zoo does not reach (replica x partition
// meshes, a gathered inner dimension, the tuple all-to-all, broadcast, a
// permute that leaves a device without data, ids), and no interpreter op.
#include "backend/host/run_on_host_devices.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "hlo/evaluator/evaluator_test_util.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

// Runs `text` on the host devices and on the interpreter, device d's one
// argument `arg(d)`; expects equal results and no interpreter op.
void ExpectHostMatchesInterpreter(const std::string& text,
                                  const std::function<Literal(int)>& arg) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const int64_t n = (*module)->config().replica_count * (*module)->config().num_partitions;
  std::vector<std::vector<Literal>> args(n);
  for (int64_t d = 0; d < n; ++d) args[d].push_back(arg(static_cast<int>(d)));
  absl::StatusOr<std::vector<Literal>> expected = EvaluateOnDevices(**module, args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  host::HostCompileReport report;
  RunOnHostDevicesOptions options;
  options.report = &report;
  absl::StatusOr<std::vector<Literal>> actual = RunOnHostDevices(**module, args, options);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(report.interpreter_calls, 0) << report.ToString();
  EXPECT_GT(report.collectives, 0);
  ASSERT_EQ(actual->size(), expected->size());
  for (int64_t d = 0; d < n; ++d) {
    EXPECT_EQ((*actual)[d].ToString(), (*expected)[d].ToString()) << "device " << d;
  }
}

// f32[2,6] with values 100 d + i on device d.
Literal Grid(int d) {
  std::string values = "{";
  for (int r = 0; r < 2; ++r) {
    values += r ? ", {" : "{";
    for (int c = 0; c < 6; ++c) {
      values += absl::StrCat(c ? ", " : "", 100 * d + 6 * r + c);
    }
    values += "}";
  }
  values += "}";
  return testing_util::L("f32[2,6]", values);
}

constexpr char kReducers[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(b, a)
}
)";

TEST(RunOnHostDevicesTest, ReductionsAndGathersOnAReplicaByPartitionMesh) {
  ExpectHostMatchesInterpreter(absl::StrCat("HloModule m, replica_count=2, num_partitions=2\n",
                                            kReducers, R"(
ENTRY e {
  p = f32[2,6] parameter(0)
  ar = f32[2,6] all-reduce(p), replica_groups={}, to_apply=add
  mx = f32[2,6] all-reduce(p), channel_id=1, replica_groups={{0,3},{2,1}}, use_global_device_ids=true, to_apply=max
  ag = f32[2,12] all-gather(p), replica_groups={{0,1}}, dimensions={1}
  rs = f32[2,3] reduce-scatter(p), replica_groups={{1,0}}, dimensions={1}, to_apply=add
  ag4 = f32[2,24] all-gather(p), channel_id=2, replica_groups={{0,1}}, dimensions={1}
  ROOT t = (f32[2,6], f32[2,6], f32[2,12], f32[2,3], f32[2,24]) tuple(ar, mx, ag, rs, ag4)
}
)"),
                               Grid);
}

TEST(RunOnHostDevicesTest, AllToAllPermuteBroadcastAndIds) {
  ExpectHostMatchesInterpreter(R"(
HloModule m, replica_count=1, num_partitions=4

ENTRY e {
  p = f32[2,6] parameter(0)
  a2a = f32[2,6] all-to-all(p), channel_id=1, replica_groups={{0,1},{2,3}}, dimensions={1}
  x = f32[2,3] slice(p), slice={[0:2], [0:3]}
  y = f32[2,3] slice(p), slice={[0:2], [3:6]}
  tup = (f32[2,3], f32[2,3]) all-to-all(x, y), channel_id=2, replica_groups={{3,1},{0,2}}
  cp = f32[2,6] collective-permute(p), channel_id=3, source_target_pairs={{0,1},{1,2},{2,3}}
  bc = f32[2,6] collective-broadcast(p), channel_id=4, replica_groups={{2,0},{1,3}}
  pid = u32[] partition-id()
  rid = u32[] replica-id()
  ROOT t = (f32[2,6], (f32[2,3], f32[2,3]), f32[2,6], f32[2,6], u32[], u32[]) tuple(a2a, tup, cp, bc, pid, rid)
}
)",
                               Grid);
}

TEST(RunOnHostDevicesTest, PermuteRingInsideAWhileLoop) {
  ExpectHostMatchesInterpreter(R"(
HloModule m, replica_count=4

cond {
  s = (s32[], f32[2,6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}

body {
  s = (s32[], f32[2,6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[2,6] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[2,6] collective-permute(v), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  u = f32[2,6] add(w, v)
  ROOT r = (s32[], f32[2,6]) tuple(j, u)
}

ENTRY e {
  p = f32[2,6] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[2,6]) tuple(z, p)
  loop = (s32[], f32[2,6]) while(init), condition=cond, body=body
  ROOT out = f32[2,6] get-tuple-element(loop), index=1
}
)",
                               Grid);
}

TEST(RunOnHostDevicesTest, AllReduceStartAndDone) {
  ExpectHostMatchesInterpreter(absl::StrCat("HloModule m, replica_count=4\n", kReducers, R"(
ENTRY e {
  p = f32[2,6] parameter(0)
  s = f32[2,6] all-reduce-start(p), replica_groups={{0,1},{2,3}}, to_apply=add
  d = f32[2,6] all-reduce-done(s)
  n = f32[2,6] negate(p)
  s2 = (f32[2,6], f32[2,6]) all-reduce-start(p, n), replica_groups={}, to_apply=max
  d2 = (f32[2,6], f32[2,6]) all-reduce-done(s2)
  ROOT t = (f32[2,6], (f32[2,6], f32[2,6])) tuple(d, d2)
}
)"),
                               Grid);
}

TEST(RunOnHostDevicesTest, AllGatherStartAndCollectivePermuteStart) {
  ExpectHostMatchesInterpreter(R"(
HloModule m, replica_count=4

ENTRY e {
  p = f32[2,6] parameter(0)
  s = (f32[2,6], f32[2,24]) all-gather-start(p), replica_groups={}, dimensions={1}
  d = f32[2,24] all-gather-done(s)
  c = (f32[2,6], f32[2,6], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,1},{1,2},{2,0}}
  e = f32[2,6] collective-permute-done(c)
  n = f32[2,6] negate(e)
  ROOT t = (f32[2,24], f32[2,6]) tuple(d, n)
}
)",
                               Grid);
}

TEST(RunOnHostDevicesTest, OtherReducerIsACompileErrorNamingTheInstruction) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m, replica_count=2

clamp_add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  z = f32[] constant(0)
  ROOT m = f32[] maximum(s, z)
}

ENTRY e {
  p = f32[2,6] parameter(0)
  ROOT ar = f32[2,6] all-reduce(p), replica_groups={}, to_apply=clamp_add
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<std::vector<Literal>> args(2);
  for (int d = 0; d < 2; ++d) args[d].push_back(Grid(d));
  absl::StatusOr<std::vector<Literal>> results = RunOnHostDevices(**module, args);
  ASSERT_FALSE(results.ok());
  EXPECT_NE(results.status().message().find("%ar (all-reduce)"), std::string::npos)
      << results.status();
}

// A program compiled once runs again after a run in which one device failed
// before its all-reduce while the others waited in it: the next run's
// collectives still meet (they are matched per run, not over the program's
// life), and give the right sums.
TEST(HostDevicesProgramTest, RunsAgainAfterAFailedRun) {
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseHloModule(absl::StrCat("HloModule m, replica_count=2\n", kReducers, R"(
ENTRY e {
  p = f32[2,6] parameter(0)
  ROOT ar = f32[2,6] all-reduce(p), replica_groups={}, to_apply=add
}
)"));
  ASSERT_TRUE(module.ok()) << module.status();
  RunOnHostDevicesOptions options;
  options.collective_timeout = absl::Seconds(10);
  absl::StatusOr<std::unique_ptr<HostDevicesProgram>> program =
      HostDevicesProgram::Compile(**module, options);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ((*program)->device_count(), 2);
  std::vector<std::vector<Literal>> good(2), bad(2);
  for (int d = 0; d < 2; ++d) good[d].push_back(Grid(d));
  bad[0].push_back(Grid(0));  // Device 1 gets no argument: it fails at once.
  absl::StatusOr<std::vector<Literal>> failed = (*program)->Execute(bad);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("device 1"), std::string::npos) << failed.status();
  for (int run = 0; run < 3; ++run) {
    absl::StatusOr<std::vector<Literal>> sums = (*program)->Execute(good);
    ASSERT_TRUE(sums.ok()) << "run " << run << ": " << sums.status();
    // 100 * 0 + k + 100 * 1 + k at position k.
    EXPECT_EQ((*sums)[1].data<float>()[11], 100.0f + 2 * 11) << (*sums)[1].ToString();
    EXPECT_EQ((*sums)[0].ToString(), (*sums)[1].ToString());
  }
  absl::StatusOr<std::vector<Literal>> wrong_count =
      (*program)->Execute(absl::MakeConstSpan(good).subspan(0, 1));
  EXPECT_FALSE(wrong_count.ok());
}

}  // namespace
}  // namespace hloc
