#include "api/pjrt/host_layout.h"

#include <cstring>
#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hloc {
namespace pjrt {
namespace {

using ::testing::ElementsAre;

TEST(HostLayoutTest, StridesForMinorToMajor) {
  EXPECT_THAT(RowMajorByteStrides({2, 3}, 4), ElementsAre(12, 4));
  EXPECT_THAT(*ByteStridesForMinorToMajor({2, 3}, {1, 0}, 4), ElementsAre(12, 4));
  EXPECT_THAT(*ByteStridesForMinorToMajor({2, 3}, {0, 1}, 4), ElementsAre(4, 8));
  EXPECT_THAT(*ByteStridesForMinorToMajor({2, 3, 5}, {1, 2, 0}, 2), ElementsAre(30, 2, 6));
  EXPECT_FALSE(ByteStridesForMinorToMajor({2, 3}, {0, 0}, 4).ok());
  EXPECT_FALSE(ByteStridesForMinorToMajor({2, 3}, {0}, 4).ok());
  EXPECT_FALSE(ByteStridesForMinorToMajor({2, 3}, {0, 2}, 4).ok());
}

TEST(HostLayoutTest, LayoutStructs) {
  PJRT_Buffer_MemoryLayout layout;
  std::memset(&layout, 0, sizeof(layout));
  layout.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  std::vector<int64_t> strides = {4, 8};
  layout.strides.byte_strides = strides.data();
  layout.strides.num_byte_strides = 2;
  EXPECT_THAT(*ByteStridesForLayout(&layout, {2, 3}, 4), ElementsAre(4, 8));
  strides[0] = -4;
  EXPECT_FALSE(ByteStridesForLayout(&layout, {2, 3}, 4).ok());
  EXPECT_THAT(*ByteStridesForLayout(nullptr, {2, 3}, 4), ElementsAre(12, 4));

  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  std::vector<int64_t> tile = {8, 128};
  size_t tile_sizes[] = {2};
  std::vector<int64_t> minor_to_major = {1, 0};
  layout.tiled.minor_to_major = minor_to_major.data();
  layout.tiled.minor_to_major_size = 2;
  layout.tiled.tile_dims = tile.data();
  layout.tiled.tile_dim_sizes = tile_sizes;
  layout.tiled.num_tiles = 1;
  EXPECT_EQ(ByteStridesForLayout(&layout, {2, 3}, 4).status().code(),
            absl::StatusCode::kUnimplemented);
}

TEST(HostLayoutTest, TransposesBetweenLayouts) {
  // [[0,1,2],[3,4,5]] row-major -> column-major and back.
  std::vector<float> row_major(6);
  std::iota(row_major.begin(), row_major.end(), 0.0f);
  std::vector<float> column_major(6, -1);
  CopyStrided(row_major.data(), {12, 4}, column_major.data(), {4, 8}, {2, 3}, 4);
  EXPECT_THAT(column_major, ElementsAre(0, 3, 1, 4, 2, 5));
  std::vector<float> back(6, -1);
  CopyStrided(column_major.data(), {4, 8}, back.data(), {12, 4}, {2, 3}, 4);
  EXPECT_EQ(back, row_major);
}

TEST(HostLayoutTest, PaddedStridesAndEdgeShapes) {
  // Rows padded to 4 elements in the source.
  std::vector<int32_t> padded = {1, 2, 3, -1, 4, 5, 6, -1};
  std::vector<int32_t> dense(6);
  CopyStrided(padded.data(), {16, 4}, dense.data(), {12, 4}, {2, 3}, 4);
  EXPECT_THAT(dense, ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(SpannedBytes({2, 3}, {16, 4}, 4), 28);
  EXPECT_EQ(SpannedBytes({2, 0}, {16, 4}, 4), 0);

  double scalar = 2.5, out = 0;
  CopyStrided(&scalar, {}, &out, {}, {}, 8);
  EXPECT_EQ(out, 2.5);
  CopyStrided(nullptr, {4}, nullptr, {4}, {0}, 4);  // Empty: touches nothing.

  // Odd element sizes (complex128 = 16 bytes), transposed.
  std::vector<double> c(8);
  std::iota(c.begin(), c.end(), 0.0);  // 2x2 of (re, im)
  std::vector<double> t(8);
  CopyStrided(c.data(), {32, 16}, t.data(), {16, 32}, {2, 2}, 16);
  EXPECT_THAT(t, ElementsAre(0, 1, 4, 5, 2, 3, 6, 7));
}

}  // namespace
}  // namespace pjrt
}  // namespace hloc
