// TileSharding: decoding XLA's sharding forms, projections and device groups.
#include "passes/sharding/spmd_sharding.h"

#include "gtest/gtest.h"

namespace hloc {
namespace {

xla::OpSharding Tiled(std::vector<int64_t> dims, std::vector<int64_t> reshape = {},
                      std::vector<int64_t> perm = {}, bool replicate_last = false) {
  xla::OpSharding s;
  s.set_type(xla::OpSharding::OTHER);
  for (int64_t d : dims) s.add_tile_assignment_dimensions(d);
  for (int64_t d : reshape) s.add_iota_reshape_dims(d);
  for (int64_t p : perm) s.add_iota_transpose_perm(p);
  s.set_replicate_on_last_tile_dim(replicate_last);
  return s;
}

TEST(TileShardingTest, DecodesTransposedIotaWithReplication) {
  // JAX's P(None, "b") on a 2x2 mesh ("a", "b"): {devices=[1,2,2]<=[2,2]T(1,0)
  // last_tile_dim_replicate}. Device a*2+b holds column block b.
  absl::StatusOr<TileSharding> s =
      TileSharding::FromOpSharding(Tiled({1, 2, 2}, {2, 2}, {1, 0}, true), 2, 4, "x");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->tiles(0), 1);
  EXPECT_EQ(s->tiles(1), 2);
  EXPECT_EQ(s->replicas(), 2);
  EXPECT_EQ(s->OffsetsAlong(1, 3), (std::vector<int64_t>{0, 3, 0, 3}));
  EXPECT_EQ(s->ToString(), "{devices=[1,2,2] 0,2,1,3 last_tile_dim_replicate}");
}

TEST(TileShardingTest, GroupsAlongAnAxisAreTheDevicesThatDifferOnlyThere) {
  absl::StatusOr<TileSharding> s = TileSharding::FromOpSharding(Tiled({2, 2}), 2, 4, "x");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->array().GroupsAlong({0}), (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(s->array().GroupsAlong({1}), (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
}

TEST(TileShardingTest, ProjectFoldsDroppedAxesIntoReplication) {
  absl::StatusOr<TileSharding> s = TileSharding::FromOpSharding(Tiled({2, 2}), 2, 4, "x");
  ASSERT_TRUE(s.ok()) << s.status();
  // Keep dimension 1 only: column blocks, each on two devices.
  TileSharding p = TileSharding::Project(s->array(), {1});
  EXPECT_EQ(p.rank(), 1);
  EXPECT_EQ(p.tiles(0), 2);
  EXPECT_EQ(p.replicas(), 2);
  EXPECT_EQ(p.OffsetsAlong(0, 5), (std::vector<int64_t>{0, 5, 0, 5}));
  // Keep nothing: replicated.
  EXPECT_TRUE(TileSharding::Project(s->array(), {}).IsReplicated());
  // Transpose: [2,2] with dims swapped lists devices 0,2,1,3.
  EXPECT_EQ(TileSharding::Project(s->array(), {1, 0}).ToString(), "{devices=[2,2] 0,2,1,3}");
}

TEST(TileShardingTest, RoundTripsThroughOpSharding) {
  absl::StatusOr<TileSharding> s =
      TileSharding::FromOpSharding(Tiled({1, 2, 2}, {2, 2}, {1, 0}, true), 2, 4, "x");
  ASSERT_TRUE(s.ok());
  absl::StatusOr<TileSharding> back = TileSharding::FromOpSharding(s->ToOpSharding(), 2, 4, "x");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *s);
}

TEST(TileShardingTest, RefusesWrongTileCountsAndUnevenBlocks) {
  EXPECT_FALSE(TileSharding::FromOpSharding(Tiled({2, 1}), 2, 4, "x").ok());
  absl::StatusOr<TileSharding> s = TileSharding::FromOpSharding(Tiled({4, 1}), 2, 4, "x");
  ASSERT_TRUE(s.ok());
  absl::StatusOr<Shape> local = s->LocalShape(Shape(xla::F32, {6, 4}), "%x");
  ASSERT_FALSE(local.ok());
  EXPECT_EQ(local.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(local.status().message().find("%x"), std::string::npos);
}

TEST(TileShardingTest, UntileFoldsADimensionIntoReplication) {
  absl::StatusOr<TileSharding> s = TileSharding::FromOpSharding(Tiled({2, 2}), 2, 4, "x");
  ASSERT_TRUE(s.ok());
  // Columns whole: rows split by the major device bit, devices {0,1} and {2,3}.
  TileSharding rows = s->Untile({1});
  EXPECT_EQ(rows.ToString(), "{devices=[2,1,2] 0,1,2,3 last_tile_dim_replicate}");
  // Rows whole: column blocks on {0,2} and {1,3}.
  EXPECT_EQ(s->Untile({0}).ToString(), "{devices=[1,2,2] 0,2,1,3 last_tile_dim_replicate}");
  EXPECT_TRUE(s->Untile({0, 1}).IsReplicated());
}

TEST(TileShardingTest, MeshAxesAreJaxPartitionSpecs) {
  // P(None, "b") on mesh ("a"=2, "b"=2).
  absl::StatusOr<TileSharding> s =
      TileSharding::FromOpSharding(Tiled({1, 2, 2}, {2, 2}, {1, 0}, true), 2, 4, "x");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(MeshAxesOf(*s, {2, 2}), (std::vector<std::vector<int64_t>>{{}, {1}}));
  // P(("a", "b"), None) on the same mesh is [4,1] in device order.
  absl::StatusOr<TileSharding> rows = TileSharding::FromOpSharding(Tiled({4, 1}), 2, 4, "x");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(MeshAxesOf(*rows, {2, 2}), (std::vector<std::vector<int64_t>>{{0, 1}, {}}));
  EXPECT_EQ(MeshAxesOf(TileSharding::Replicated(1, 4), {4}),
            (std::vector<std::vector<int64_t>>{{}}));
  // Rows in the order 0,2,1,3 are not a mesh-order split of a 4-device axis.
  xla::OpSharding odd = Tiled({4, 1});
  for (int64_t d : {0, 2, 1, 3}) odd.add_tile_assignment_devices(d);
  absl::StatusOr<TileSharding> o = TileSharding::FromOpSharding(odd, 2, 4, "x");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(MeshAxesOf(*o, {4}), std::nullopt);
}

}  // namespace
}  // namespace hloc
