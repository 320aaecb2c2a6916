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
  int64_t all_gathers = 0, all_reduces = 0, dynamic_slices = 0, all_to_alls = 0;
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
  EXPECT_EQ(CountOps(*check.partitioned, HloOpcode::kAllToAll), counts.all_to_alls)
      << PrintModule(*check.partitioned);
  EXPECT_EQ(check.report.all_to_alls, counts.all_to_alls);
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

TEST(SpmdPartitionTest, AShardingOnAnInnerOpIsKept) {
  // Replicated operands, rows wanted: the lhs is sliced by partition-id and
  // the dot runs on its rows only.
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule inner
ENTRY main {
  x = f32[8,4] parameter(0), sharding={replicated}
  w = f32[4,6] parameter(1), sharding={replicated}
  d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}
  ROOT e = f32[8,6] exponential(d)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {0, 0, 1});
  EXPECT_EQ(check->partitioned->entry()->root()->shape().ToString(false), "f32[2,6]");
}

TEST(SpmdPartitionTest, ContractingSplitWithTheResultWantedSplitIsOneReduceScatter) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule rs
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,16] parameter(0), sharding={devices=[1,4]<=[4]}
  w = f32[16,6] parameter(1), sharding={devices=[4,1]<=[4]}
  d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}
  y = f32[8,12] parameter(2), sharding={devices=[4,1]<=[4]}
  zero = f32[] constant(0)
  s = f32[12] reduce(y, zero), dimensions={0}, to_apply=add, sharding={devices=[4]<=[4]}
  ROOT t = (f32[8,6], f32[12]) tuple(d, s)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {});
  EXPECT_EQ(CountOps(*check->partitioned, HloOpcode::kReduceScatter), 2)
      << PrintModule(*check->partitioned);
  EXPECT_EQ(check->report.reduce_scatters, 2);
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
  // y to rows, e to columns: one all-to-all each (no gather); the
  // broadcast constant is made at its block size.
  ExpectMatches(*check, {0, 0, 0, 2});
  for (const HloInstruction* hlo : check->partitioned->entry()->instructions()) {
    if (hlo->opcode() == HloOpcode::kBroadcast) {
      EXPECT_EQ(hlo->shape().ToString(false), "f32[8,2]");
    }
  }
}

TEST(SpmdPartitionTest, ReshardingBetweenMeshAxesGathersWhenNoAllToAllFits) {
  // Rows split 4 ways to columns split 2 ways (replicated in pairs): not one
  // all-to-all; gathered, then sliced.
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule reshard2
ENTRY main {
  x = f32[8,8,2] parameter(0), sharding={devices=[4,1,1]<=[4]}
  c = f32[8,8,2] custom-call(x), custom_call_target="Sharding", sharding={devices=[1,2,1,2]<=[4] last_tile_dim_replicate}
  ROOT n = f32[8,8,2] negate(c)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {1, 0, 1, 0});
}

TEST(SpmdPartitionTest, ReshardingGathersOrSlicesOnlyTheDimensionsThatChange) {
  // [2,2] -> columns whole (rows kept): one all-gather, no slice; then back
  // to [2,2]: one slice, no gather.
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule partial
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[2,2]<=[4]}
  c = f32[8,6] custom-call(x), custom_call_target="Sharding", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  n = f32[8,6] negate(c)
  ROOT d = f32[8,6] custom-call(n), custom_call_target="Sharding", sharding={devices=[2,2]<=[4]}
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {1, 0, 1, 0});
  for (const HloInstruction* hlo : check->partitioned->entry()->instructions()) {
    if (hlo->opcode() == HloOpcode::kAllGather) {
      EXPECT_EQ(hlo->dimensions(), std::vector<int64_t>{1});
    }
  }
}

TEST(SpmdPartitionTest, AllToAllMovesTheSplitBetweenInnerDimensions) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule a2a
ENTRY main {
  x = f32[2,8,12,3] parameter(0), sharding={devices=[1,1,4,1]<=[4]}
  c = f32[2,8,12,3] custom-call(x), custom_call_target="Sharding", sharding={devices=[1,4,1,1]<=[4]}
  ROOT n = f32[2,8,12,3] negate(c)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {0, 0, 0, 1});
}

TEST(SpmdPartitionTest, ReshapeMovesTheSplitToTheMajorFactor) {
  // Attention heads: the model dimension split in 2 becomes the heads
  // dimension split in 2, and back; no collective.
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule heads
ENTRY main {
  x = f32[2,8,16] parameter(0), sharding={devices=[1,1,2,2]<=[4] last_tile_dim_replicate}
  h = f32[2,8,4,4] reshape(x)
  e = f32[2,8,4,4] exponential(h)
  ROOT m = f32[2,8,16] reshape(e)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {});
  for (const HloInstruction* hlo : check->partitioned->entry()->instructions()) {
    if (hlo->opcode() == HloOpcode::kExp) EXPECT_EQ(hlo->shape().ToString(false), "f32[2,8,2,4]");
  }
}

TEST(SpmdPartitionTest, ReshapeThatCutsABlockRunsOnWholeArrays) {
  // 8 rows in 4 blocks of 2 are not blocks of [2,16]'s rows.
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule cut
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}
  r = f32[2,16] reshape(x)
  ROOT n = f32[2,16] negate(r)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {1, 0, 0});
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

TEST(SpmdPartitionTest, DimensionWiseOpsKeepTheSplitDimension) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule dimwise
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}
  i = s32[] parameter(1), sharding={replicated}
  zero = f32[] constant(0)
  s = f32[8,4] slice(x), slice={[0:8], [1:5]}
  p = f32[8,6] pad(s, zero), padding=0_0x1_1
  r = f32[8,6] reverse(p), dimensions={1}
  c = f32[8,12] concatenate(r, x), dimensions={1}
  w = f32[8,12] reduce-window(c, zero), window={size=1x3 pad=0_0x2_0}, to_apply=add
  z = s32[] constant(0)
  d = f32[8,5] dynamic-slice(w, z, i), dynamic_slice_sizes={8,5}
  ROOT o = f32[8,5] sort(d), dimensions={1}, to_apply=%lt
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT l = pred[] compare(a, b), direction=LT
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {});
  EXPECT_TRUE(check->report.replicated_ops.empty()) << check->report.ToString();
  EXPECT_EQ(check->partitioned->entry()->root()->shape().ToString(false), "f32[2,5]");
}

TEST(SpmdPartitionTest, SliceAlongTheSplitDimensionGathersIt) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule slice_split
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT s = f32[3,6] slice(x), slice={[2:5], [0:6]}
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {1, 0, 0});
}

TEST(SpmdPartitionTest, ConvolutionWithTheBatchSplit) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule conv
ENTRY main {
  x = f32[8,5,5,3] parameter(0), sharding={devices=[4,1,1,1]<=[4]}
  k = f32[3,3,3,2] parameter(1), sharding={replicated}
  ROOT y = f32[8,5,5,2] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {});
  EXPECT_EQ(check->partitioned->entry()->root()->shape().ToString(false), "f32[2,5,5,2]");
}

TEST(SpmdPartitionTest, EmbeddingGatherWithSplitIndicesIsLocal) {
  // jnp.take(table, ids, axis=0) with ids split by batch.
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule embed
ENTRY main {
  table = f32[10,6] parameter(0), sharding={replicated}
  ids = s32[8,3] parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT g = f32[8,3,6] gather(table, ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,6}
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {});
  EXPECT_TRUE(check->report.replicated_ops.empty()) << check->report.ToString();
  EXPECT_EQ(check->partitioned->entry()->root()->shape().ToString(false), "f32[2,3,6]");
}

TEST(SpmdPartitionTest, OpsWithoutARuleRunReplicatedAndAreReported) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule fb
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}
  y = f32[8,4] parameter(1), sharding={devices=[4,1]<=[4]}
  s = (f32[8,4], f32[8,4]) sort(x, y), dimensions={0}, to_apply=lt
  k = f32[8,4] get-tuple-element(s), index=1
  ROOT e = f32[8,4] exponential(k)
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT l = pred[] compare(a, b), direction=LT
})");
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->mismatches, "");
  // A two-operand sort (a tuple) has no rule: both operands gathered.
  EXPECT_EQ(check->report.replicated_ops, std::vector<std::string>{"%s (sort)"});
  EXPECT_EQ(check->report.all_gathers, 2);
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

TEST(SpmdPartitionTest, DataAndTensorParallelDotOnATwoByTwoMesh) {
  // x rows by mesh axis "a", w columns by "b": each device multiplies its
  // rows by its columns, no collective; the second dot contracts over "b"
  // (one all-reduce in the "b" groups).
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule dp_tp
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  w = f32[4,6] parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  v = f32[6,5] parameter(2), sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  h = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[8,6] tanh(h)
  ROOT y = f32[8,5] dot(t, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {0, 1, 0});
  for (const HloInstruction* hlo : check->partitioned->entry()->instructions()) {
    if (hlo->opcode() == HloOpcode::kTanh) EXPECT_EQ(hlo->shape().ToString(false), "f32[4,3]");
    if (hlo->opcode() == HloOpcode::kAllReduce) {
      EXPECT_EQ(*hlo->attrs().replica_groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
    }
  }
}

TEST(SpmdPartitionTest, CallsReturningTuplesAreInlinedWithoutGathering) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule calls
where {
  m = pred[8,6] parameter(0)
  a = f32[8,6] parameter(1)
  z = f32[] constant(0)
  zb = f32[8,6] broadcast(z), dimensions={}
  s = f32[8,6] select(m, a, zb)
  ROOT t = (f32[8,6], pred[8,6]) tuple(s, m)
}
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}
  zero = f32[] constant(0)
  zx = f32[8,6] broadcast(zero), dimensions={}
  m = pred[8,6] compare(x, zx), direction=GT
  c = (f32[8,6], pred[8,6]) call(m, x), to_apply=where
  s = f32[8,6] get-tuple-element(c), index=0
  ROOT e = f32[8,6] exponential(s)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {});
  EXPECT_TRUE(check->report.replicated_ops.empty()) << check->report.ToString();
}

TEST(SpmdPartitionTest, ABroadcastIsMadeAgainForUsersThatSplitItDifferently) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule rebroadcast
ENTRY main {
  x = f32[8,8] parameter(0), sharding={devices=[4,1]<=[4]}
  y = f32[8,8] parameter(1), sharding={devices=[1,4]<=[4]}
  b = f32[8] parameter(2), sharding={replicated}
  bb = f32[8,8] broadcast(b), dimensions={1}
  p = f32[8,8] add(x, bb)
  q = f32[8,8] multiply(y, bb)
  ROOT t = (f32[8,8], f32[8,8]) tuple(p, q)
})");
  ASSERT_TRUE(check.ok()) << check.status();
  // The bias is sliced (by partition-id) for the column-split use, locally.
  ExpectMatches(*check, {0, 0, 1, 0});
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

// JAX 0.10.2 lowers jax.jit(lambda a: wsc(tanh(a), P("x")).sum(0)) on a
// f32[6,4] (6 rows, 4 devices) to an uneven constraint: the rows stay whole
// on every device (XLA would pad), the values are the same, and the report
// says which dimension was kept whole.
TEST(SpmdPartitionTest, UnevenConstraintKeepsTheDimensionWhole) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule jit__lambda, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=4]>}}
region_0.1 {
  reduce_sum.3 = f32[] parameter(0)
  reduce_sum.4 = f32[] parameter(1)
  ROOT reduce_sum.5 = f32[] add(reduce_sum.3, reduce_sum.4)
}
ENTRY main.2 {
  a.1 = f32[6,4]{1,0} parameter(0)
  tanh.1 = f32[6,4]{1,0} tanh(a.1)
  sharding_constraint.1 = f32[6,4]{1,0} custom-call(tanh.1), custom_call_target="Sharding", sharding={devices=[4,1]<=[4]}
  constant.1 = f32[] constant(0)
  ROOT reduce_sum.7 = f32[4]{0} reduce(sharding_constraint.1, constant.1), dimensions={0}, to_apply=region_0.1
})");
  ASSERT_TRUE(check.ok()) << check.status();
  ExpectMatches(*check, {});
  EXPECT_EQ(check->report.uneven_kept_whole,
            (std::vector<std::string>{"%sharding_constraint.1 dim 0 (6 in 4 tiles)"}));
  EXPECT_NE(check->report.ToString().find("uneven split(s) kept whole: %sharding_constraint.1"),
            std::string::npos)
      << check->report.ToString();
}

// On a 2x2 split only the uneven dimension is kept whole: the columns stay
// split (the rows' two tiles join the replicas), and the dot over the split
// columns still sums across devices.
TEST(SpmdPartitionTest, UnevenDimensionOfATwoDimensionalSplit) {
  absl::StatusOr<SpmdCheck> check = Check(R"(
HloModule uneven2d
ENTRY main {
  x = f32[5,8] parameter(0), sharding={replicated}
  w = f32[8,3] parameter(1), sharding={replicated}
  e = f32[5,8] exponential(x), sharding={devices=[2,2]<=[4]}
  ROOT d = f32[5,3] dot(e, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->mismatches, "") << PrintModule(*check->partitioned);
  EXPECT_EQ(check->report.uneven_kept_whole,
            (std::vector<std::string>{"%e dim 0 (5 in 2 tiles)"}));
  bool columns_split = false;
  for (const HloInstruction* hlo : check->partitioned->entry()->instructions()) {
    if (hlo->opcode() == HloOpcode::kExp) columns_split = hlo->shape().ToString(false) == "f32[5,4]";
  }
  EXPECT_TRUE(columns_split) << PrintModule(*check->partitioned);
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
