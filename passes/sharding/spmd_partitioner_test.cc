// SpmdPartition on hand-written modules: each is partitioned for 4 devices,
// run on the interpreter's 4-device runner, gathered by the result shardings
// and compared with the original module on one device. The collectives the
// partitioner made are counted, so that a partitioner that gathers
// everything (or one that forgets an all-reduce) fails.
#include "passes/sharding/spmd_partitioner.h"

#include <string>

#include "gtest/gtest.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "passes/sharding/spmd_check.h"

namespace hloc {
namespace {

struct Counts {
  int64_t all_gathers = 0, all_reduces = 0, dynamic_slices = 0;
};

absl::StatusOr<SpmdCheck> Check(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  return CheckSpmdPartition(**module, 4, RunOnInterpreterDevices);
}

void ExpectMatches(const SpmdCheck& check, Counts counts) {
  EXPECT_EQ(check.mismatches, "") << PrintModule(*check.partitioned);
  EXPECT_EQ(CountOps(*check.partitioned, HloOpcode::kAllGather), counts.all_gathers)
      << PrintModule(*check.partitioned);
  EXPECT_EQ(CountOps(*check.partitioned, HloOpcode::kAllReduce), counts.all_reduces)
      << PrintModule(*check.partitioned);
  EXPECT_EQ(check.report.dynamic_slices, counts.dynamic_slices) << PrintModule(*check.partitioned);
  EXPECT_EQ(check.report.all_gathers, counts.all_gathers);
  EXPECT_EQ(check.report.all_reduces, counts.all_reduces);
  EXPECT_EQ(check.partitioned->config().num_partitions, 4);
}

TEST(SpmdPartitionTest, DataParallelMlpRunsLocallyWithoutCollectives) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule mlp
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}
  w = f32[4,6] parameter(1), sharding={replicated}
  b = f32[6] parameter(2), sharding={replicated}
  d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,6] broadcast(b), dimensions={1}
  s = f32[8,6] add(d, bb)
  ROOT t = f32[8,6] tanh(s)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {});
  EXPECT_TRUE(check->report.replicated_ops.empty()) << check->report.ToString();
  const HloInstruction* root = check->partitioned->entry()->root();
  EXPECT_EQ(root->shape().ToString(false), "f32[2,6]");
  EXPECT_EQ(check->partitioned->entry()->parameter(0)->shape().ToString(false), "f32[2,4]");
}

TEST(SpmdPartitionTest, WeightShardedOnItsOutputDimension) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule tp_out
ENTRY main {
  x = f32[8,4] parameter(0), sharding={replicated}
  w = f32[4,16] parameter(1), sharding={devices=[1,4]<=[4]}
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[8,16] maximum(d, d), sharding={devices=[1,4]<=[4]}
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {});
  EXPECT_EQ(check->partitioned->entry()->root()->shape().ToString(false), "f32[8,4]");
}

TEST(SpmdPartitionTest, ContractingDimensionShardedIsALocalDotPlusAllReduce) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule tp_contract
ENTRY main {
  x = f32[8,16] parameter(0), sharding={devices=[1,4]<=[4]}
  w = f32[16,6] parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {0, 1, 0});
  EXPECT_EQ(check->partitioned->entry()->root()->sharding().type(), xla::OpSharding::REPLICATED);
}

TEST(SpmdPartitionTest, BatchedDotWithTheBatchSharded) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule bmm
ENTRY main {
  a = f32[4,8,6] parameter(0), sharding={devices=[4,1,1]<=[4]}
  b = f32[4,6,5] parameter(1), sharding={devices=[4,1,1]<=[4]}
  ROOT d = f32[4,8,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {});
}

TEST(SpmdPartitionTest, ReduceOverAShardedDimensionAllReducesWithTheReducer) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule red
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  x = f32[8,12] parameter(0), sharding={devices=[4,1]<=[4]}
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  s = f32[12] reduce(x, zero), dimensions={0}, to_apply=add
  m = f32[12] reduce(x, ninf), dimensions={0}, to_apply=max
  r = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[12], f32[12], f32[8]) tuple(s, m, r)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  // Two all-reduces (sum, max over the sharded rows); the row sums stay local.
  ExpectMatches(*check, {0, 2, 0});
  const xla::OpSharding& r = check->partitioned->entry()->root()->sharding();
  ASSERT_EQ(r.tuple_shardings_size(), 3);
  EXPECT_EQ(r.tuple_shardings(2).type(), xla::OpSharding::OTHER);  // Row sums stay sharded.
}

TEST(SpmdPartitionTest, ReduceWithANonIdentityInitRunsReplicated) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule red1
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,12] parameter(0), sharding={devices=[4,1]<=[4]}
  one = f32[] constant(1)
  ROOT total = f32[12] reduce(x, one), dimensions={0}, to_apply=add
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {1, 0, 0});
  EXPECT_EQ(check->report.replicated_ops, std::vector<std::string>{"%total (reduce)"});
}

TEST(SpmdPartitionTest, ElementwiseChainReshardsAtConflictsAndConstraints) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule chain
ENTRY main {
  x = f32[8,8] parameter(0), sharding={devices=[4,1]<=[4]}
  y = f32[8,8] parameter(1), sharding={devices=[1,4]<=[4]}
  s = f32[8,8] add(x, y)
  e = f32[8,8] exponential(s)
  c = f32[8,8] custom-call(e), custom_call_target="Sharding", sharding={devices=[1,4]<=[4]}
  two = f32[] constant(2)
  b = f32[8,8] broadcast(two), dimensions={}
  ROOT m = f32[8,8] multiply(c, b)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  // y to rows (gather + slice), e to columns (gather + slice); the
  // broadcast constant is made at its block size.
  ExpectMatches(*check, {2, 0, 2});
  for (const HloInstruction* hlo : check->partitioned->entry()->instructions()) {
    if (hlo->opcode() == HloOpcode::kBroadcast) {
      EXPECT_EQ(hlo->shape().ToString(false), "f32[8,2]");
    }
  }
}

TEST(SpmdPartitionTest, TransposeAndReshapeKeepTheShardedDimension) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule tr
ENTRY main {
  x = f32[8,4,2] parameter(0), sharding={devices=[4,1,1]<=[4]}
  r = f32[8,8] reshape(x)
  t = f32[8,8] transpose(r), dimensions={1,0}
  ROOT n = f32[8,8] negate(t)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {});
  EXPECT_EQ(check->partitioned->entry()->root()->shape().ToString(false), "f32[8,2]");
}

TEST(SpmdPartitionTest, OpsWithoutARuleRunReplicatedAndAreReported) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule fb
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}
  rev = f32[8,4] reverse(x), dimensions={0}
  r = f32[32] reshape(rev)
  ROOT e = f32[32] exponential(r)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->mismatches, "");
  EXPECT_EQ(check->report.replicated_ops, std::vector<std::string>{"%rev (reverse)"});
  EXPECT_EQ(check->report.all_gathers, 1);
}

TEST(SpmdPartitionTest, TwoByTwoMesh) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule mesh2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[2,2]<=[4]}
  w = f32[4,6] parameter(1), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  ROOT s = f32[6] reduce(d, zero), dimensions={0}, to_apply=add
})");
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->mismatches, "") << PrintModule(*check->partitioned);
  EXPECT_TRUE(check->report.replicated_ops.empty()) << check->report.ToString();
}

TEST(SpmdPartitionTest, RefusesUnevenTilesNamingTheInstruction) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule uneven
ENTRY main {
  x = f32[6,4] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT n = f32[6,4] negate(x)
})");
  ASSERT_TRUE(module.ok());
  absl::StatusOr<bool> run = SpmdPartition().Run(**module);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(run.status().message().find("%x"), std::string::npos) << run.status();
}

TEST(SpmdPartitionTest, LeavesModulesWithoutTiledShardingsAlone) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule plain
ENTRY main {
  x = f32[8] parameter(0), sharding={replicated}
  ROOT n = f32[8] negate(x)
})");
  ASSERT_TRUE(module.ok());
  absl::StatusOr<bool> run = SpmdPartition().Run(**module);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(*run);
}

}  // namespace
}  // namespace hloc
