// DevicePlacement (see device_placement.h).
#include "passes/sharding/device_placement.h"

#include <cstring>
#include <map>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace {

std::string ArrayText(PrimitiveType type, const std::vector<int64_t>& dims) {
  return absl::StrCat(PrimitiveTypeName(type), "[", absl::StrJoin(dims, ","), "]");
}

// Marks the first device of each distinct block as the one that gathers.
void MarkGatherers(DevicePlacement* placement) {
  std::map<std::vector<int64_t>, int64_t> first;
  placement->gathers.assign(placement->offsets.size(), 0);
  for (size_t d = 0; d < placement->offsets.size(); ++d) {
    if (first.emplace(placement->offsets[d], d).second) placement->gathers[d] = 1;
  }
}

// Copies the block at `offset` between the global array and the block,
// one contiguous innermost run at a time.
void CopyBlock(const DevicePlacement& p, const std::vector<int64_t>& offset, char* global,
               char* block, bool to_block) {
  const int64_t rank = static_cast<int64_t>(p.block_dims.size());
  const int64_t w = ByteWidth(p.type);
  int64_t count = 1;
  for (int64_t d : p.block_dims) count *= d;
  if (count == 0 || w == 0) return;
  if (rank == 0) {
    to_block ? std::memcpy(block, global, w) : std::memcpy(global, block, w);
    return;
  }
  const int64_t run = p.block_dims[rank - 1];
  const int64_t rows = count / run;
  std::vector<int64_t> index(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t g = 0;
    for (int64_t d = 0; d < rank; ++d) g = g * p.global_dims[d] + offset[d] + index[d];
    char* at_global = global + g * w;
    char* at_block = block + r * run * w;
    to_block ? std::memcpy(at_block, at_global, run * w) : std::memcpy(at_global, at_block, run * w);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < p.block_dims[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace

std::string DevicePlacement::ToString() const {
  return absl::StrCat(ArrayText(type, global_dims), " as ", device_count(), " blocks of ",
                      ArrayText(type, block_dims));
}

DevicePlacement PlacementOfShardedValue(const ShardMapSignature& signature,
                                        const ShardedValue& value) {
  DevicePlacement p;
  p.type = value.global_shape.element_type();
  p.global_dims = value.global_shape.dimensions();
  p.block_dims = value.local_shape.dimensions();
  const int64_t n = signature.device_count();
  const int64_t axes = static_cast<int64_t>(signature.axis_sizes.size());
  for (int64_t device = 0; device < n; ++device) {
    // Row-major coordinates of the device over the mesh axes.
    std::vector<int64_t> coords(axes);
    for (int64_t a = axes - 1, rest = device; a >= 0; --a) {
      coords[a] = rest % signature.axis_sizes[a];
      rest /= signature.axis_sizes[a];
    }
    std::vector<int64_t> offset(p.global_dims.size(), 0);
    for (size_t d = 0; d < offset.size(); ++d) {
      int64_t index = 0;
      for (int64_t a : value.dimension_axes[d]) index = index * signature.axis_sizes[a] + coords[a];
      offset[d] = index * p.block_dims[d];
    }
    p.offsets.push_back(std::move(offset));
  }
  MarkGatherers(&p);
  return p;
}

DevicePlacement ReplicatedPlacement(const Shape& local, int64_t devices) {
  DevicePlacement p;
  p.type = local.element_type();
  p.global_dims = local.dimensions();
  p.block_dims = local.dimensions();
  p.offsets.assign(devices, std::vector<int64_t>(p.global_dims.size(), 0));
  MarkGatherers(&p);
  return p;
}

DevicePlacement StackedPlacement(const Shape& local, int64_t devices) {
  DevicePlacement p;
  p.type = local.element_type();
  p.global_dims.push_back(devices);
  p.block_dims.push_back(1);
  for (int64_t d : local.dimensions()) {
    p.global_dims.push_back(d);
    p.block_dims.push_back(d);
  }
  for (int64_t device = 0; device < devices; ++device) {
    std::vector<int64_t> offset(p.global_dims.size(), 0);
    offset[0] = device;
    p.offsets.push_back(std::move(offset));
  }
  MarkGatherers(&p);
  return p;
}

absl::StatusOr<DevicePlacement> PlacementOfSharding(const xla::OpSharding& sharding,
                                                    const Shape& local, int64_t devices,
                                                    const std::string& what) {
  switch (sharding.type()) {
    case xla::OpSharding::REPLICATED:
      return ReplicatedPlacement(local, devices);
    case xla::OpSharding::MAXIMAL: {
      DevicePlacement p = ReplicatedPlacement(local, devices);
      const int64_t owner =
          sharding.tile_assignment_devices_size() == 1 ? sharding.tile_assignment_devices(0) : -1;
      if (owner < 0 || owner >= devices) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": maximal sharding names no device below ", devices));
      }
      p.gathers.assign(devices, 0);
      p.gathers[owner] = 1;
      return p;
    }
    case xla::OpSharding::OTHER:
      break;
    default:
      return absl::UnimplementedError(absl::StrCat(
          what, ": sharding of kind ", xla::OpSharding::Type_Name(sharding.type()),
          " (the API takes replicated, maximal and tiled shardings)"));
  }
  const int64_t rank = local.rank();
  const int64_t tile_rank = sharding.tile_assignment_dimensions_size();
  const int64_t trailing =
      (sharding.replicate_on_last_tile_dim() ? 1 : 0) + sharding.last_tile_dims_size();
  for (int t : sharding.last_tile_dims()) {
    if (t != xla::OpSharding::REPLICATED) {
      return absl::UnimplementedError(absl::StrCat(
          what, ": last_tile_dims of kind ", xla::OpSharding::Type_Name(
              static_cast<xla::OpSharding::Type>(t)), " (only replicated ones)"));
    }
  }
  if (tile_rank != rank + trailing) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": tiled sharding of rank ", tile_rank,
                                                   " on an array of rank ", rank));
  }
  int64_t tiles = 1;
  for (int64_t t : sharding.tile_assignment_dimensions()) tiles *= t;
  if (tiles != devices) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": sharding has ", tiles,
                                                   " tiles for ", devices, " devices"));
  }
  // The device of each tile, row-major over the tile dimensions.
  std::vector<int64_t> device_of_tile;
  if (sharding.tile_assignment_devices_size() > 0) {
    device_of_tile.assign(sharding.tile_assignment_devices().begin(),
                          sharding.tile_assignment_devices().end());
  } else {
    // Iota: iota(N) reshaped to iota_reshape_dims, transposed by the perm.
    std::vector<int64_t> dims(sharding.iota_reshape_dims().begin(),
                              sharding.iota_reshape_dims().end());
    if (dims.empty()) dims.push_back(tiles);
    std::vector<int64_t> perm(sharding.iota_transpose_perm().begin(),
                              sharding.iota_transpose_perm().end());
    if (perm.empty()) {
      perm.resize(dims.size());
      std::iota(perm.begin(), perm.end(), 0);
    }
    const int64_t k = static_cast<int64_t>(dims.size());
    std::vector<int64_t> strides(k, 1);
    for (int64_t i = k - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
    std::vector<int64_t> index(k, 0);  // Over the transposed dimensions.
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t device = 0;
      for (int64_t i = 0; i < k; ++i) device += index[i] * strides[perm[i]];
      device_of_tile.push_back(device);
      for (int64_t i = k - 1; i >= 0; --i) {
        if (++index[i] < dims[perm[i]]) break;
        index[i] = 0;
      }
    }
  }
  if (static_cast<int64_t>(device_of_tile.size()) != tiles) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": sharding lists ",
                                                   device_of_tile.size(), " devices for ", tiles,
                                                   " tiles"));
  }
  DevicePlacement p;
  p.type = local.element_type();
  p.block_dims = local.dimensions();
  for (int64_t d = 0; d < rank; ++d) {
    p.global_dims.push_back(local.dimensions(d) * sharding.tile_assignment_dimensions(d));
  }
  p.offsets.assign(devices, {});
  std::vector<int64_t> coords(tile_rank, 0);
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t device = device_of_tile[t];
    if (device < 0 || device >= devices || !p.offsets[device].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": sharding names device ", device,
                                                     " twice or out of range"));
    }
    for (int64_t d = 0; d < rank; ++d) {
      p.offsets[device].push_back(coords[d] * local.dimensions(d));
    }
    for (int64_t i = tile_rank - 1; i >= 0; --i) {
      if (++coords[i] < sharding.tile_assignment_dimensions(i)) break;
      coords[i] = 0;
    }
  }
  MarkGatherers(&p);
  return p;
}

void CopyBlockToDevice(const DevicePlacement& placement, int64_t device, const void* global,
                       void* block) {
  CopyBlock(placement, placement.offsets[device], const_cast<char*>(static_cast<const char*>(global)),
            static_cast<char*>(block), /*to_block=*/true);
}

void CopyBlockFromDevice(const DevicePlacement& placement, int64_t device, const void* block,
                         void* global) {
  CopyBlock(placement, placement.offsets[device], static_cast<char*>(global),
            const_cast<char*>(static_cast<const char*>(block)), /*to_block=*/false);
}

}  // namespace hloc
