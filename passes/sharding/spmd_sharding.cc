// TileSharding (see spmd_sharding.h).
#include "passes/sharding/spmd_sharding.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Calls fn(index) for every row-major index of `dims`.
template <typename Fn>
void ForEachIndex(const std::vector<int64_t>& dims, Fn&& fn) {
  std::vector<int64_t> index(dims.size(), 0);
  const int64_t n = Product(dims);
  for (int64_t e = 0; e < n; ++e) {
    fn(index);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace

TileArray TileArray::Transpose(const std::vector<int64_t>& perm) const {
  TileArray out;
  for (int64_t p : perm) out.dims.push_back(dims[p]);
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  ForEachIndex(out.dims, [&](const std::vector<int64_t>& index) {
    int64_t at = 0;
    for (size_t k = 0; k < perm.size(); ++k) at += index[k] * strides[perm[k]];
    out.devices.push_back(devices[at]);
  });
  return out;
}

std::vector<std::vector<int64_t>> TileArray::CoordinatesByDevice() const {
  std::vector<std::vector<int64_t>> coords(devices.size());
  int64_t e = 0;
  ForEachIndex(dims, [&](const std::vector<int64_t>& index) { coords[devices[e++]] = index; });
  return coords;
}

std::vector<std::vector<int64_t>> TileArray::GroupsAlong(const std::vector<int64_t>& axes) const {
  // Move `axes` last: then each run of their product is one group.
  std::vector<int64_t> perm;
  for (int64_t a = 0; a < static_cast<int64_t>(dims.size()); ++a) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) perm.push_back(a);
  }
  perm.insert(perm.end(), axes.begin(), axes.end());
  const TileArray moved = Transpose(perm);
  int64_t size = 1;
  for (int64_t a : axes) size *= dims[a];
  std::vector<std::vector<int64_t>> groups;
  for (size_t i = 0; i < moved.devices.size(); i += size) {
    groups.emplace_back(moved.devices.begin() + i, moved.devices.begin() + i + size);
  }
  return groups;
}

TileSharding::TileSharding(TileArray array) : array_(std::move(array)) {
  // Canonical order inside each replication group.
  const int64_t r = array_.dims.back();
  for (size_t i = 0; i < array_.devices.size(); i += r) {
    std::sort(array_.devices.begin() + i, array_.devices.begin() + i + r);
  }
}

TileSharding TileSharding::Replicated(int64_t rank, int64_t devices) {
  TileArray array;
  array.dims.assign(rank, 1);
  array.dims.push_back(devices);
  array.devices.resize(devices);
  std::iota(array.devices.begin(), array.devices.end(), 0);
  return TileSharding(std::move(array));
}

TileSharding TileSharding::Project(const TileArray& array, const std::vector<int64_t>& array_axes) {
  std::vector<int64_t> perm = array_axes;
  for (int64_t a = 0; a < static_cast<int64_t>(array.dims.size()); ++a) {
    if (std::find(array_axes.begin(), array_axes.end(), a) == array_axes.end()) perm.push_back(a);
  }
  TileArray moved = array.Transpose(perm);
  int64_t replicas = 1;
  for (size_t k = array_axes.size(); k < moved.dims.size(); ++k) replicas *= moved.dims[k];
  moved.dims.resize(array_axes.size());
  moved.dims.push_back(replicas);
  return TileSharding(std::move(moved));
}

absl::StatusOr<TileSharding> TileSharding::FromOpSharding(const xla::OpSharding& sharding,
                                                          int64_t rank, int64_t devices,
                                                          const std::string& what) {
  if (sharding.type() == xla::OpSharding::REPLICATED) return Replicated(rank, devices);
  if (sharding.type() != xla::OpSharding::OTHER) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": sharding of kind ", xla::OpSharding::Type_Name(sharding.type()),
                     " (the SPMD partitioner takes replicated and tiled shardings)"));
  }
  if (sharding.last_tile_dims_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(what, ": sharding with last_tile_dims"));
  }
  TileArray array;
  array.dims.assign(sharding.tile_assignment_dimensions().begin(),
                    sharding.tile_assignment_dimensions().end());
  if (!sharding.replicate_on_last_tile_dim()) array.dims.push_back(1);
  if (static_cast<int64_t>(array.dims.size()) != rank + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": tiled sharding of rank ", array.dims.size() - 1, " on an array of rank ", rank));
  }
  const int64_t tiles = Product(array.dims);
  if (tiles != devices) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": sharding has ", tiles, " tiles for ", devices, " devices"));
  }
  if (sharding.tile_assignment_devices_size() > 0) {
    array.devices.assign(sharding.tile_assignment_devices().begin(),
                         sharding.tile_assignment_devices().end());
  } else {
    // Iota: iota(N) reshaped to iota_reshape_dims, transposed by the perm.
    TileArray iota;
    iota.dims.assign(sharding.iota_reshape_dims().begin(), sharding.iota_reshape_dims().end());
    if (iota.dims.empty()) iota.dims.push_back(tiles);
    iota.devices.resize(Product(iota.dims));
    std::iota(iota.devices.begin(), iota.devices.end(), 0);
    std::vector<int64_t> perm(sharding.iota_transpose_perm().begin(),
                              sharding.iota_transpose_perm().end());
    if (perm.empty()) {
      perm.resize(iota.dims.size());
      std::iota(perm.begin(), perm.end(), 0);
    }
    if (perm.size() != iota.dims.size()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": iota transpose of rank ", perm.size(),
                                                     " for ", iota.dims.size(),
                                                     " reshape dimensions"));
    }
    array.devices = iota.Transpose(perm).devices;
  }
  std::vector<int64_t> seen(devices, 0);
  if (static_cast<int64_t>(array.devices.size()) != devices) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": sharding lists ", array.devices.size(), " devices for ", devices));
  }
  for (int64_t d : array.devices) {
    if (d < 0 || d >= devices || seen[d]++) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": sharding names device ", d, " twice or out of range"));
    }
  }
  return TileSharding(std::move(array));
}

xla::OpSharding TileSharding::ToOpSharding() const {
  xla::OpSharding out;
  if (IsReplicated()) {
    out.set_type(xla::OpSharding::REPLICATED);
    return out;
  }
  out.set_type(xla::OpSharding::OTHER);
  for (int64_t d = 0; d < rank(); ++d) out.add_tile_assignment_dimensions(tiles(d));
  if (replicas() > 1) {
    out.add_tile_assignment_dimensions(replicas());
    out.set_replicate_on_last_tile_dim(true);
  }
  for (int64_t d : array_.devices) out.add_tile_assignment_devices(d);
  return out;
}

TileSharding TileSharding::Untile(const std::vector<int64_t>& dims) const {
  auto untiled = [&](int64_t d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); };
  std::vector<int64_t> perm, moved;
  for (int64_t d = 0; d < rank(); ++d) (untiled(d) ? moved : perm).push_back(d);
  perm.insert(perm.end(), moved.begin(), moved.end());
  perm.push_back(rank());
  TileArray array;
  array.devices = array_.Transpose(perm).devices;
  int64_t replicas = this->replicas();
  for (int64_t d = 0; d < rank(); ++d) {
    array.dims.push_back(untiled(d) ? 1 : tiles(d));
    if (untiled(d)) replicas *= tiles(d);
  }
  array.dims.push_back(replicas);
  return TileSharding(std::move(array));
}

TileSharding TileSharding::EvenFor(const Shape& global, std::vector<int64_t>* uneven) const {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank() && d < global.rank(); ++d) {
    if (global.dimensions(d) % tiles(d) != 0) dims.push_back(d);
  }
  if (uneven != nullptr) *uneven = dims;
  return dims.empty() ? *this : Untile(dims);
}

absl::StatusOr<Shape> TileSharding::LocalShape(const Shape& global, const std::string& what) const {
  Shape local = global;
  for (int64_t d = 0; d < rank(); ++d) {
    if (global.dimensions(d) % tiles(d) != 0) {
      return absl::UnimplementedError(
          absl::StrCat(what, ": dimension ", d, " of ", global.ToString(false), " in ", tiles(d),
                       " tiles is uneven (the SPMD partitioner does not pad)"));
    }
    local.set_dimension(d, global.dimensions(d) / tiles(d));
  }
  return local;
}

std::vector<int64_t> TileSharding::OffsetsAlong(int64_t dim, int64_t block_size) const {
  const std::vector<std::vector<int64_t>> coords = array_.CoordinatesByDevice();
  std::vector<int64_t> offsets;
  for (const auto& c : coords) offsets.push_back(c[dim] * block_size);
  return offsets;
}

std::string TileSharding::ToString() const {
  if (IsReplicated()) return "{replicated}";
  std::vector<int64_t> dims(array_.dims.begin(), array_.dims.end() - (replicas() > 1 ? 0 : 1));
  return absl::StrCat("{devices=[", absl::StrJoin(dims, ","), "] ",
                      absl::StrJoin(array_.devices, ","),
                      replicas() > 1 ? " last_tile_dim_replicate}" : "}");
}

std::optional<std::vector<std::vector<int64_t>>> MeshAxesOf(
    const TileSharding& sharding, const std::vector<int64_t>& axis_sizes) {
  const int64_t k = static_cast<int64_t>(axis_sizes.size());
  if (Product(axis_sizes) != sharding.device_count()) return std::nullopt;
  TileArray mesh;
  mesh.dims = axis_sizes;
  mesh.devices.resize(sharding.device_count());
  std::iota(mesh.devices.begin(), mesh.devices.end(), 0);
  // Each axis goes to a dimension or to replication (value rank); try all.
  const int64_t choices = sharding.rank() + 1;
  std::vector<int64_t> where(k, 0);
  for (int64_t tries = 0, n = static_cast<int64_t>(std::pow(choices, k)); tries < n; ++tries) {
    std::vector<std::vector<int64_t>> dims(sharding.rank());
    std::vector<int64_t> unused;
    for (int64_t a = 0; a < k; ++a) {
      (where[a] < sharding.rank() ? dims[where[a]] : unused).push_back(a);
    }
    std::vector<int64_t> perm;
    TileArray array;
    for (const auto& axes : dims) {
      perm.insert(perm.end(), axes.begin(), axes.end());
      int64_t t = 1;
      for (int64_t a : axes) t *= axis_sizes[a];
      array.dims.push_back(t);
    }
    perm.insert(perm.end(), unused.begin(), unused.end());
    int64_t r = 1;
    for (int64_t a : unused) r *= axis_sizes[a];
    array.dims.push_back(r);
    array.devices = mesh.Transpose(perm).devices;
    if (TileSharding::Of(std::move(array)) == sharding) return dims;
    for (int64_t a = 0; a < k; ++a) {
      if (++where[a] < choices) break;
      where[a] = 0;
    }
  }
  return std::nullopt;
}

}  // namespace hloc
