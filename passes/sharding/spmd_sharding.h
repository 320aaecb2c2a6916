// TileSharding: the SPMD partitioner's value type for how one array lies on
// N devices (spmd_partitioner.h), decoded once from HLO's xla::OpSharding.
//
// An array of rank r is cut into tiles[0] x ... x tiles[r-1] equal blocks;
// each block is held by `replicas` devices. The tile array has r + 1 axes,
// [tiles..., replicas], and lists its devices row-major:
//
//   f32[8,4] sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
//     tile array dims [2,1,2], devices 0 1 2 3:
//       rows 0-3 on devices 0,1   rows 4-7 on devices 2,3
//
// Every transformation the partitioner needs is a permutation of the tile
// array's axes followed by reading some axes as array dimensions and folding
// the rest into the replication axis (Project). Transposes, broadcasts, dots
// and reductions are all that. Devices within one replication group are kept
// sorted, so two shardings that place every block on the same devices
// compare equal.
#ifndef HLOC_PASSES_SHARDING_SPMD_SHARDING_H_
#define HLOC_PASSES_SHARDING_SPMD_SHARDING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/hlo.pb.h"
#include "hlo/shape.h"

namespace hloc {

// N devices laid out on an array of axes (row-major device list).
struct TileArray {
  std::vector<int64_t> dims;
  std::vector<int64_t> devices;
  // The array with its axes reordered: result axis k is axis perm[k].
  TileArray Transpose(const std::vector<int64_t>& perm) const;
  // Per device id, its coordinate along each axis.
  std::vector<std::vector<int64_t>> CoordinatesByDevice() const;
  // Groups of devices that differ only in their coordinates along `axes`,
  // each ordered row-major over those axes (the rank order of a collective).
  std::vector<std::vector<int64_t>> GroupsAlong(const std::vector<int64_t>& axes) const;
};

class TileSharding {
 public:
  TileSharding() = default;  // Empty: no devices (a placeholder).
  // `array`'s last axis is the replication axis.
  static TileSharding Of(TileArray array) { return TileSharding(std::move(array)); }
  static TileSharding Replicated(int64_t rank, int64_t devices);
  // Reads axes `array_axes` of `array` (in that order) as the array's
  // dimensions; every other axis folds into replication.
  static TileSharding Project(const TileArray& array, const std::vector<int64_t>& array_axes);
  // Replicated, or tiled (device list or iota, with a replicated last tile
  // dimension); other kinds, and tile counts that are not `devices`, are
  // errors naming `what`.
  static absl::StatusOr<TileSharding> FromOpSharding(const xla::OpSharding& sharding, int64_t rank,
                                                     int64_t devices, const std::string& what);
  xla::OpSharding ToOpSharding() const;
  // This sharding with dimensions `dims` no longer tiled: their tiles fold
  // into replication (each device then holds those dimensions whole).
  TileSharding Untile(const std::vector<int64_t>& dims) const;

  int64_t rank() const { return static_cast<int64_t>(array_.dims.size()) - 1; }
  int64_t tiles(int64_t dim) const { return array_.dims[dim]; }
  int64_t replicas() const { return array_.dims.back(); }
  int64_t device_count() const { return static_cast<int64_t>(array_.devices.size()); }
  bool IsReplicated() const { return replicas() == device_count(); }
  int64_t TileCount() const { return device_count() / replicas(); }
  // Axes [0, rank) are the array's dimensions, axis rank the replicas.
  const TileArray& array() const { return array_; }

  // This sharding with every dimension of `global` that its tile count does
  // not divide no longer tiled (those dimensions then lie whole on each
  // device); `uneven` (may be null) receives those dimensions.
  TileSharding EvenFor(const Shape& global, std::vector<int64_t>* uneven) const;
  // The block one device holds; an error naming `what` where a dimension
  // does not divide evenly.
  absl::StatusOr<Shape> LocalShape(const Shape& global, const std::string& what) const;
  // offsets[device] of the device's block along `dim`, for a block of
  // `block_size` elements.
  std::vector<int64_t> OffsetsAlong(int64_t dim, int64_t block_size) const;

  bool operator==(const TileSharding& other) const {
    return array_.dims == other.array_.dims && array_.devices == other.array_.devices;
  }
  bool operator!=(const TileSharding& other) const { return !(*this == other); }
  std::string ToString() const;  // "{devices=[4,1] 0,1,2,3}", "{replicated}"

 private:
  explicit TileSharding(TileArray array);
  TileArray array_;
};

// The mesh axes (indices, major first per dimension) that give `sharding`
// on an iota mesh of `axis_sizes` (JAX's PartitionSpec), or nullopt where no
// assignment of axes in mesh order does.
std::optional<std::vector<std::vector<int64_t>>> MeshAxesOf(const TileSharding& sharding,
                                                            const std::vector<int64_t>& axis_sizes);

}  // namespace hloc

#endif  // HLOC_PASSES_SHARDING_SPMD_SHARDING_H_
