// DecodeCollective: groups, reductions and leaf geometry read from HLO text,
// and the errors that name the instruction.
#include "backend/common/collective_lowering.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace backend {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kModule[] = R"(
HloModule m, replica_count=2, num_partitions=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

clamped {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  z = f32[] constant(0)
  ROOT m = f32[] maximum(s, z)
}

ENTRY e {
  x = f32[3,8,5] parameter(0)
  ar = f32[3,8,5] all-reduce(x), channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add
  ag = f32[3,16,5] all-gather(x), channel_id=2, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, dimensions={1}
  rs = f32[3,4,5] reduce-scatter(x), channel_id=3, replica_groups={{3,2},{1,0}}, use_global_device_ids=true, dimensions={1}, to_apply=add
  a2a = f32[3,8,5] all-to-all(x), replica_groups={{0,1}}, dimensions={1}
  cp = f32[3,8,5] collective-permute(x), channel_id=4, source_target_pairs={{0,1},{1,0}}
  bad = f32[3,8,5] all-reduce(x), replica_groups={}, to_apply=clamped
  pid = u32[] partition-id()
  ROOT t = (f32[3,8,5], f32[3,16,5], f32[3,4,5], f32[3,8,5], f32[3,8,5], f32[3,8,5], u32[]) tuple(ar, ag, rs, a2a, cp, bad, pid)
}
)";

class CollectiveLoweringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(kModule);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    module_ = *std::move(parsed);
  }
  absl::StatusOr<runtime::CollectiveSpec> Decode(const std::string& name) {
    for (const HloInstruction* hlo : module_->entry()->instructions()) {
      if (hlo->name() == name) return DecodeCollective(*hlo, DeviceMesh::Of(module_->config()));
    }
    return absl::NotFoundError(name);
  }
  std::unique_ptr<HloModule> module_;
};

TEST_F(CollectiveLoweringTest, AllReduceGroupsAndReduction) {
  absl::StatusOr<runtime::CollectiveSpec> spec = Decode("ar");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->op, runtime::CollectiveOp::kAllReduce);
  EXPECT_EQ(spec->reduction, runtime::ReductionKind::kSum);
  EXPECT_EQ(spec->type, runtime::ElementType::kF32);
  EXPECT_THAT(spec->groups, ElementsAre(ElementsAre(0, 2), ElementsAre(1, 3)));
  ASSERT_EQ(spec->leaves.size(), 1u);
  EXPECT_EQ(spec->leaves[0].elements, 3 * 8 * 5);
}

TEST_F(CollectiveLoweringTest, GatherAndScatterGeometry) {
  absl::StatusOr<runtime::CollectiveSpec> ag = Decode("ag");
  ASSERT_TRUE(ag.ok()) << ag.status();
  EXPECT_EQ(ag->leaves[0].outer, 3);
  EXPECT_EQ(ag->leaves[0].block_bytes, 8 * 5 * 4);  // The operand's whole row.
  absl::StatusOr<runtime::CollectiveSpec> rs = Decode("rs");
  ASSERT_TRUE(rs.ok()) << rs.status();
  EXPECT_THAT(rs->groups, ElementsAre(ElementsAre(3, 2), ElementsAre(1, 0)));
  EXPECT_EQ(rs->leaves[0].outer, 3);
  EXPECT_EQ(rs->leaves[0].block_bytes, 4 * 5 * 4);  // Half a row per rank.
  absl::StatusOr<runtime::CollectiveSpec> a2a = Decode("a2a");
  ASSERT_TRUE(a2a.ok()) << a2a.status();
  EXPECT_EQ(a2a->op, runtime::CollectiveOp::kAllToAll);
  // No channel: cross-replica, so {0,1} names replicas: devices {0,2} and {1,3}.
  EXPECT_THAT(a2a->groups, ElementsAre(ElementsAre(0, 2), ElementsAre(1, 3)));
  EXPECT_EQ(a2a->leaves[0].outer, 3);
  EXPECT_EQ(a2a->leaves[0].block_bytes, 4 * 5 * 4);
}

TEST_F(CollectiveLoweringTest, PermutePairsAndIds) {
  absl::StatusOr<runtime::CollectiveSpec> cp = Decode("cp");
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_EQ(cp->op, runtime::CollectiveOp::kCollectivePermute);
  EXPECT_EQ(cp->pairs.size(), 4u);  // {0,1},{1,0} between partitions, once per replica.
  absl::StatusOr<runtime::CollectiveSpec> pid = Decode("pid");
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(pid->op, runtime::CollectiveOp::kPartitionId);
  EXPECT_EQ(pid->num_partitions, 2);
}

TEST_F(CollectiveLoweringTest, OtherReducersAreErrorsNamingTheInstruction) {
  absl::StatusOr<runtime::CollectiveSpec> bad = Decode("bad");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("%bad (all-reduce)"));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("%clamped"));
}

}  // namespace
}  // namespace backend
}  // namespace hloc
