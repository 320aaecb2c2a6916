// DevicePlacement: how one global array lies on N devices, whatever said so
// (a shard_map's sharding, an HLO `sharding={...}` attribute, or pmap's
// stacking). Each device holds one block of the global array, of the local
// shape, starting at its offset; devices holding the same block are
// replicas, and the first of them gives the block back when the global
// array is gathered.
//
//   global f32[8,4], sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
//     device 0: rows 0-3 (gathers)   device 1: rows 0-3 (replica)
//     device 2: rows 4-7 (gathers)   device 3: rows 4-7 (replica)
//
// Stacked (pmap's convention, and results with no sharding): the global
// array has one more, leading, dimension of size N; device d holds index d.
#ifndef HLOC_PASSES_SHARDING_DEVICE_PLACEMENT_H_
#define HLOC_PASSES_SHARDING_DEVICE_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/primitive_type.h"
#include "hlo/shape.h"
#include "passes/sharding/shard_map_to_per_device.h"

namespace hloc {

struct DevicePlacement {
  PrimitiveType type = xla::PRIMITIVE_TYPE_INVALID;
  std::vector<int64_t> global_dims;
  // The device's block, with global_dims' rank (stacked: a leading 1).
  std::vector<int64_t> block_dims;
  std::vector<std::vector<int64_t>> offsets;  // [device][dimension]
  std::vector<char> gathers;                  // [device]: first holder of its block
  int64_t device_count() const { return static_cast<int64_t>(offsets.size()); }
  std::string ToString() const;  // "f32[8,4] as 4 blocks of f32[2,4]"
};

// A shard_map input or output (ShardMapToPerDevice's signature).
DevicePlacement PlacementOfShardedValue(const ShardMapSignature& signature,
                                        const ShardedValue& value);
// An array of per-device shape `local` with HLO sharding `sharding` on
// `devices` devices: replicated, maximal, or tiled (device list or iota, with
// replicated last tile dimensions). Manual and other kinds are Unimplemented
// errors; `what` names the value in errors.
absl::StatusOr<DevicePlacement> PlacementOfSharding(const xla::OpSharding& sharding,
                                                    const Shape& local, int64_t devices,
                                                    const std::string& what);
DevicePlacement ReplicatedPlacement(const Shape& local, int64_t devices);
DevicePlacement StackedPlacement(const Shape& local, int64_t devices);

// Copies device's block out of the global array, and back into it.
void CopyBlockToDevice(const DevicePlacement& placement, int64_t device, const void* global,
                       void* block);
void CopyBlockFromDevice(const DevicePlacement& placement, int64_t device, const void* block,
                         void* global);

}  // namespace hloc

#endif  // HLOC_PASSES_SHARDING_DEVICE_PLACEMENT_H_
