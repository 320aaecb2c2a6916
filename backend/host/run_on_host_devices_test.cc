// RunOnHostDevices against the multi-device interpreter on hand-written
// modules: every collective the host lowers to communicator thunks, in the
// group modes and shapes the JAX zoo does not reach (replica x partition
// meshes, a gathered inner dimension, the tuple all-to-all, broadcast, a
// permute that leaves a device without data, ids, ragged-all-to-all, f16 /
// bf16 / f8 elements), and no interpreter op.
#include "backend/host/run_on_host_devices.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/evaluator/evaluator_test_util.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

// Runs `text` on the host devices and on the interpreter, device d's
// arguments `args_of(d)`; expects equal results and no interpreter op.
void ExpectHostMatchesInterpreterWithArgs(
    const std::string& text, const std::function<std::vector<Literal>(int)>& args_of) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const int64_t n = (*module)->config().replica_count * (*module)->config().num_partitions;
  std::vector<std::vector<Literal>> args(n);
  for (int64_t d = 0; d < n; ++d) args[d] = args_of(static_cast<int>(d));
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

// The same, device d's one argument `arg(d)`.
void ExpectHostMatchesInterpreter(const std::string& text,
                                  const std::function<Literal(int)>& arg) {
  ExpectHostMatchesInterpreterWithArgs(text, [&](int d) {
    std::vector<Literal> args;
    args.push_back(arg(d));
    return args;
  });
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

constexpr char kHalfReducers[] = R"(
add_f16 {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT s = f16[] add(a, b)
}
add_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
max_f16 {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT m = f16[] maximum(a, b)
}
)";

TEST(RunOnHostDevicesTest, HalfAndNarrowFloatCollectives) {
  // Values 0.013 (100 d + i): sums that f16 and bf16 round at every step.
  ExpectHostMatchesInterpreter(absl::StrCat("HloModule m, replica_count=4\n", kHalfReducers, R"(
ENTRY e {
  p = f32[2,6] parameter(0)
  c = f32[] constant(0.013)
  b = f32[2,6] broadcast(c), dimensions={}
  q = f32[2,6] multiply(p, b)
  h = f16[2,6] convert(q)
  g = bf16[2,6] convert(q)
  arh = f16[2,6] all-reduce(h), replica_groups={}, to_apply=add_f16
  arg = bf16[2,6] all-reduce(g), replica_groups={{3,1,2,0}}, to_apply=add_bf16
  mxh = f16[2,6] all-reduce(h), replica_groups={{0,1},{2,3}}, to_apply=max_f16
  rsh = f16[2,3] reduce-scatter(h), replica_groups={{0,1},{2,3}}, dimensions={1}, to_apply=add_f16
  rsg = bf16[1,6] reduce-scatter(g), replica_groups={{1,0},{3,2}}, dimensions={0}, to_apply=add_bf16
  agh = f16[2,24] all-gather(h), replica_groups={}, dimensions={1}
  a2a = f16[2,6] all-to-all(h), replica_groups={{0,1},{2,3}}, dimensions={1}
  cp = f16[2,6] collective-permute(h), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  f8 = f8e4m3fn[2,6] convert(q)
  ag8 = f8e4m3fn[4,6] all-gather(f8), replica_groups={{0,1},{2,3}}, dimensions={0}
  cp8 = f8e5m2[2,6] convert(cp)
  bc8 = f8e5m2[2,6] collective-broadcast(cp8), replica_groups={{2,3,0,1}}
  ROOT t = (f16[2,6], bf16[2,6], f16[2,6], f16[2,3], bf16[1,6], f16[2,24], f16[2,6], f16[2,6], f8e4m3fn[4,6], f8e5m2[2,6]) tuple(arh, arg, mxh, rsh, rsg, agh, a2a, cp, ag8, bc8)
}
)"),
                               Grid);
}

constexpr char kRaggedModule[] = R"(
HloModule m, num_partitions=3

ENTRY e {
  input = f32[6,2] parameter(0)
  output = f32[8,2] parameter(1)
  input_offsets = s32[3] parameter(2)
  send_sizes = s32[3] parameter(3)
  output_offsets = s32[3] parameter(4)
  recv_sizes = s32[3] parameter(5)
  r = f32[8,2] ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes), channel_id=1, replica_groups={{0,1,2}}
  ROOT n = f32[8,2] negate(r)
}
)";

// Device d's arguments for kRaggedModule: it sends peer p (d + 2 p) % 3 rows
// from row 2 p of its input, to row 2 d + 1 of p's output; `tweak` edits the
// four index arrays (input_offsets, send_sizes, output_offsets, recv_sizes).
std::vector<Literal> RaggedArgs(
    int d, const std::function<void(int, std::vector<std::vector<int64_t>>&)>& tweak = nullptr) {
  auto rows = [](int s, int p) { return (s + 2 * p) % 3; };
  std::vector<std::vector<int64_t>> index(4, std::vector<int64_t>(3));
  for (int p = 0; p < 3; ++p) {
    index[0][p] = 2 * p;
    index[1][p] = rows(d, p);
    index[2][p] = 2 * d + 1;
    index[3][p] = rows(p, d);
  }
  if (tweak) tweak(d, index);
  std::vector<Literal> args;
  std::string input = "{", output = "{";
  for (int r = 0; r < 6; ++r) {
    absl::StrAppend(&input, r ? ", " : "", "{", 10 * d + r, ", ", -10 * d - r, "}");
  }
  for (int r = 0; r < 8; ++r) absl::StrAppend(&output, r ? ", " : "", "{", 0.5 + d, ", 0.25}");
  args.push_back(testing_util::L("f32[6,2]", input + "}"));
  args.push_back(testing_util::L("f32[8,2]", output + "}"));
  for (const std::vector<int64_t>& a : index) {
    args.push_back(testing_util::L("s32[3]", absl::StrCat("{", absl::StrJoin(a, ", "), "}")));
  }
  return args;
}

TEST(RunOnHostDevicesTest, RaggedAllToAll) {
  ExpectHostMatchesInterpreterWithArgs(kRaggedModule, [](int d) { return RaggedArgs(d); });
  // Two updates per peer in s64, a group that is not in device order, and
  // the result written over its own output operand.
  ExpectHostMatchesInterpreterWithArgs(R"(
HloModule m, replica_count=2

ENTRY e {
  input = bf16[3,2,2] parameter(0)
  output = bf16[5,2,2] parameter(1)
  a = s64[4] parameter(2)
  b = s64[4] parameter(3)
  c = s64[4] parameter(4)
  d = s64[4] parameter(5)
  ROOT r = bf16[5,2,2] ragged-all-to-all(input, output, a, b, c, d), replica_groups={{1,0}}
}
)",
                                       [](int dev) {
    // Rank order {1,0}: device 1 is rank 0. Entry p * 2 + u is update u for
    // rank p. Rank 0 (device 1) sends rank 0 rows [0,1) -> 4 and nothing;
    // rank 1 rows [1,3) -> 0 and [0,1) -> 2. Rank 1 (device 0) sends rank 0
    // rows [2,3) -> 0 and [0,2) -> 1; rank 1 row [1,2) -> 4 and nothing.
    const char* const index[2][4] = {
        {"{0, 0, 1, 0}", "{1, 0, 2, 1}", "{4, 0, 0, 2}", "{1, 0, 1, 2}"},   // Device 1.
        {"{2, 0, 1, 0}", "{1, 2, 1, 0}", "{0, 1, 4, 0}", "{2, 1, 1, 0}"}};  // Device 0.
    std::vector<Literal> args;
    std::string input = "{";
    for (int r = 0; r < 3; ++r) {
      absl::StrAppend(&input, r ? ", " : "", "{{", 10 * dev + r, ", 1}, {2, ", 0.1 * r, "}}");
    }
    args.push_back(testing_util::L("bf16[3,2,2]", input + "}"));
    args.push_back(testing_util::L(
        "bf16[5,2,2]", "{{{-1, -1}, {-1, -1}}, {{-2, -2}, {-2, -2}}, {{-3, -3}, {-3, -3}}, "
                       "{{-4, -4}, {-4, -4}}, {{-5, -5}, {-5, -5}}}"));
    for (const char* v : index[dev == 1 ? 0 : 1]) args.push_back(testing_util::L("s64[4]", v));
    return args;
  });
}

// Runs kRaggedModule on the host with `tweak` applied to the index arrays;
// returns the error (empty when the run succeeds).
std::string RaggedHostError(
    const std::function<void(int, std::vector<std::vector<int64_t>>&)>& tweak) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kRaggedModule);
  if (!module.ok()) return module.status().ToString();
  std::vector<std::vector<Literal>> args;
  for (int d = 0; d < 3; ++d) args.push_back(RaggedArgs(d, tweak));
  RunOnHostDevicesOptions options;
  options.collective_timeout = absl::Seconds(20);  // A hang fails the test, slowly.
  absl::StatusOr<std::vector<Literal>> results = RunOnHostDevices(**module, args, options);
  return results.ok() ? std::string() : std::string(results.status().message());
}

TEST(RunOnHostDevicesTest, RaggedAllToAllBadOffsetsAndSizesAreErrorsOnEveryDevice) {
  // Each case fails on one device only; the others must not wait for it.
  const std::string past_input = RaggedHostError([](int d, auto& index) {
    if (d == 2) index[0][1] = 6;  // Rows [6, 7) of 6 to device 1 (it sends 1).
  });
  EXPECT_NE(past_input.find("device 2 sends rows [6, 7) of an input of 6 rows to device 1"),
            std::string::npos)
      << past_input;
  const std::string past_output = RaggedHostError([](int d, auto& index) {
    if (d == 1) index[2][0] = 7;  // Rows [7, 8) fit, [7, 9) would not; d 1 sends p 0 1 row.
    if (d == 1) index[2][2] = -1;
  });
  EXPECT_NE(past_output.find("device 1 writes rows [-1, "), std::string::npos) << past_output;
  const std::string negative_size = RaggedHostError([](int d, auto& index) {
    if (d == 0) index[1][0] = -1;
  });
  EXPECT_NE(negative_size.find("device 0 sends rows [0, -1)"), std::string::npos)
      << negative_size;
  const std::string recv_mismatch = RaggedHostError([](int d, auto& index) {
    if (d == 0) index[3][1] = 0;  // Device 1 sends device 0 (1 + 0) % 3 = 1 row.
  });
  EXPECT_NE(recv_mismatch.find("device 0 expects 0 rows from device 1"), std::string::npos)
      << recv_mismatch;
  EXPECT_EQ(RaggedHostError(nullptr), "");
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
