// ShardMapToPerDevice: turns a JAX shard_map module as JAX 0.10 lowers it
// with Shardy into the module one device runs, plus the description of how
// global arguments split into per-device ones and per-device results gather
// back.
//
// What JAX gives (global shapes outside, per-device shapes inside):
//
//   HloModule m, num_partitions=4, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["d"=4]>}}
//   ENTRY main {
//     x = f32[16,8] parameter(0)                          global
//     l = (f32[4,8]) custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape",
//           frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{"d"}, {}]>]>"}
//     b = f32[4,8] call(gte(l)), to_apply=xla.sdy.manual_computation_body   per device, collectives
//     ROOT g = f32[16,8] custom-call(b), custom_call_target="xla.sdy.LocalToGlobalShape",
//           frontend_attributes={xla.sdy.out_shardings="..."}
//   }
//
// What the pass makes: calls inlined, each GlobalToLocalShape's operand (an
// entry parameter) retyped to its local shape and the custom call dropped,
// each LocalToGlobalShape replaced by its operands, so the entry takes and
// returns per-device arrays. The ShardMapSignature it fills says, per entry
// parameter and per result, which mesh axes split which dimension.
//
// Supported: one mesh with iota device order, dimension shardings that list
// whole axes ({"x","y"}: major to minor), every entry parameter used only by
// GlobalToLocalShape and every result coming straight from
// LocalToGlobalShape (computation on global arrays outside shard_map needs
// an SPMD partitioner). Anything else is an Unimplemented error naming the
// instruction.
#ifndef HLOC_PASSES_SHARDING_SHARD_MAP_TO_PER_DEVICE_H_
#define HLOC_PASSES_SHARDING_SHARD_MAP_TO_PER_DEVICE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/literal.h"
#include "passes/pass.h"

namespace hloc {

// How one global array is laid out over the mesh.
struct ShardedValue {
  Shape global_shape;
  Shape local_shape;
  // Per dimension, the mesh axes (indices) that split it, major first.
  std::vector<std::vector<int64_t>> dimension_axes;
};

struct ShardMapSignature {
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
  std::vector<ShardedValue> inputs;   // Per entry parameter.
  std::vector<ShardedValue> outputs;  // Per result (tuple element, or the one array).
  bool tuple_result = false;
  int64_t device_count() const;
};

class ShardMapToPerDevice : public HloPass {
 public:
  // `signature` (not owned) receives the description; may be null.
  explicit ShardMapToPerDevice(ShardMapSignature* signature = nullptr) : signature_(signature) {}
  absl::string_view name() const override { return "shard-map-to-per-device"; }
  // False (module unchanged) when the module has no GlobalToLocalShape.
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  ShardMapSignature* signature_;
};

// Whether `module` holds a shard_map (an xla.sdy.GlobalToLocalShape).
bool HasShardMap(const HloModule& module);

// Device d's piece of `global` (devices in mesh order: d is the row-major
// index of its coordinates over the axes).
absl::StatusOr<Literal> ShardOf(const ShardMapSignature& signature, const ShardedValue& value,
                                const Literal& global, int64_t device);
// The global array from every device's piece (replicated dimensions read
// from the devices at coordinate 0 of the axes the value does not use).
absl::StatusOr<Literal> Unshard(const ShardMapSignature& signature, const ShardedValue& value,
                                absl::Span<const Literal> per_device);

}  // namespace hloc

#endif  // HLOC_PASSES_SHARDING_SHARD_MAP_TO_PER_DEVICE_H_
