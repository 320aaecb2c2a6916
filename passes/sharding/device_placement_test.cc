#include "passes/sharding/device_placement.h"

#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

// The sharding of parameter 0 of a one-parameter module.
xla::OpSharding ShardingOf(const std::string& sharding, const std::string& shape) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(
      "HloModule m, num_partitions=4\nENTRY e { ROOT p = " + shape + " parameter(0), sharding=" +
      sharding + " }\n");
  EXPECT_TRUE(module.ok()) << module.status();
  return (*module)->entry()->parameter(0)->sharding();
}

Shape F32(std::vector<int64_t> dims) { return Shape(xla::F32, dims); }

std::vector<float> Iota(int64_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

// Splits an iota global array and gathers it back; returns each device's block.
std::vector<std::vector<float>> SplitAndGather(const DevicePlacement& p) {
  int64_t global = 1, block = 1;
  for (int64_t d : p.global_dims) global *= d;
  for (int64_t d : p.block_dims) block *= d;
  const std::vector<float> in = Iota(global);
  std::vector<std::vector<float>> blocks(p.device_count(), std::vector<float>(block));
  std::vector<float> back(global, -1.0f);
  for (int64_t d = 0; d < p.device_count(); ++d) {
    CopyBlockToDevice(p, d, in.data(), blocks[d].data());
    if (p.gathers[d]) CopyBlockFromDevice(p, d, blocks[d].data(), back.data());
  }
  EXPECT_EQ(back, in) << p.ToString();
  return blocks;
}

TEST(DevicePlacementTest, TiledIotaTransposedWithReplicatedLastDimension) {
  // Tiles [2,1] x 2 replicas; devices iota [2,2] transposed: tile order 0,2,1,3,
  // so rows 0-1 on devices 0 and 2, rows 2-3 on devices 1 and 3.
  absl::StatusOr<DevicePlacement> p = PlacementOfSharding(
      ShardingOf("{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}", "f32[2,3]"),
      F32({2, 3}), 4, "p");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->ToString(), "f32[4,3] as 4 blocks of f32[2,3]");
  EXPECT_EQ(p->gathers, (std::vector<char>{1, 1, 0, 0}));
  const auto blocks = SplitAndGather(*p);
  EXPECT_EQ(blocks[2], (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(blocks[1], (std::vector<float>{6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(blocks[3], blocks[1]);
}

TEST(DevicePlacementTest, TiledDeviceListOverColumns) {
  absl::StatusOr<DevicePlacement> p =
      PlacementOfSharding(ShardingOf("{devices=[1,4]3,2,1,0}", "f32[2,1]"), F32({2, 1}), 4, "p");
  ASSERT_TRUE(p.ok()) << p.status();
  const auto blocks = SplitAndGather(*p);
  EXPECT_EQ(blocks[3], (std::vector<float>{0, 4}));  // Column 0.
  EXPECT_EQ(blocks[0], (std::vector<float>{3, 7}));  // Column 3.
}

TEST(DevicePlacementTest, ReplicatedMaximalAndStacked) {
  absl::StatusOr<DevicePlacement> r =
      PlacementOfSharding(ShardingOf("{replicated}", "f32[3]"), F32({3}), 4, "p");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(SplitAndGather(*r)[3], (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(r->gathers, (std::vector<char>{1, 0, 0, 0}));
  absl::StatusOr<DevicePlacement> m =
      PlacementOfSharding(ShardingOf("{maximal device=2}", "f32[3]"), F32({3}), 4, "p");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->gathers, (std::vector<char>{0, 0, 1, 0}));
  DevicePlacement s = StackedPlacement(F32({2}), 4);
  EXPECT_EQ(s.ToString(), "f32[4,2] as 4 blocks of f32[1,2]");
  EXPECT_EQ(SplitAndGather(s)[3], (std::vector<float>{6, 7}));
}

TEST(DevicePlacementTest, WrongDeviceCountAndManualAreErrors) {
  absl::StatusOr<DevicePlacement> two =
      PlacementOfSharding(ShardingOf("{devices=[4,1]<=[4]}", "f32[2,3]"), F32({2, 3}), 2, "%p");
  EXPECT_EQ(two.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(two.status().message().find("%p: sharding has 4 tiles for 2 devices"),
            std::string::npos)
      << two.status();
  xla::OpSharding manual;
  manual.set_type(xla::OpSharding::MANUAL);
  absl::StatusOr<DevicePlacement> m = PlacementOfSharding(manual, F32({2}), 4, "%q");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented) << m.status();
}

TEST(DevicePlacementTest, ShardMapValueOnA2x2Mesh) {
  ShardMapSignature signature;
  signature.axis_sizes = {2, 2};
  ShardedValue value;
  value.global_shape = F32({4, 6});
  value.local_shape = F32({4, 3});
  value.dimension_axes = {{}, {1}};  // Columns over axis 1; axis 0 replicates.
  DevicePlacement p = PlacementOfShardedValue(signature, value);
  EXPECT_EQ(p.gathers, (std::vector<char>{1, 1, 0, 0}));
  const auto blocks = SplitAndGather(p);
  EXPECT_EQ(blocks[3], (std::vector<float>{3, 4, 5, 9, 10, 11, 15, 16, 17, 21, 22, 23}));
}

}  // namespace
}  // namespace hloc
