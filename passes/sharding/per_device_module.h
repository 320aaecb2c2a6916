// A module given to run on N devices -> the module each device runs, and
// where the global arrays it takes and returns lie on the devices. One
// decision, shared by the C++ API (CompileOptions::devices) and
// `hloc run --devices=N`:
//
//   the module holds                     becomes                     global arrays
//   -----------------------------------  --------------------------  ----------------------
//   a shard_map (xla.sdy.* calls)        ShardMapToPerDevice         by the shard_map's
//                                                                    in/out specs
//   sharding annotations only (jax.jit   SpmdPartition (devices=N)   by the partitioned
//   over NamedSharding; see                                          parameters' and root's
//   NeedsSpmdPartitioning)                                           shardings
//   per-device code already (XLA's       as written (its replica_count x num_partitions
//   partitioned dumps, pmap, ...)         devices); shardings place the arrays, else
//                                         replicated in / stacked out (replica_count > 1:
//                                         stacked in and out, pmap's convention)
//   one device, nothing of the above     replica_count = N: N copies, stacked in and out
//
// A one-device module that carries tiled shardings but is none of the kinds
// the partitioner takes (it already holds collectives, say) is refused: run
// as replicas it would be silently wrong.
#ifndef HLOC_PASSES_SHARDING_PER_DEVICE_MODULE_H_
#define HLOC_PASSES_SHARDING_PER_DEVICE_MODULE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "passes/sharding/device_placement.h"
#include "passes/sharding/shard_map_to_per_device.h"
#include "passes/sharding/spmd_partitioner.h"

namespace hloc {

struct PerDeviceModule {
  enum class Kind { kShardMap, kSpmd, kAsWritten, kReplicas };
  Kind kind = Kind::kAsWritten;
  ShardMapSignature shard_map;  // kShardMap
  SpmdReport spmd_report;       // kSpmd
  SpmdMeshShardings spmd_mesh;  // kSpmd: the results described on JAX's mesh
  // Whether the arrays in and out are global ones (kShardMap, kSpmd).
  bool global() const { return kind == Kind::kShardMap || kind == Kind::kSpmd; }
};

// Rewrites `module` in place into the per-device module for `devices`
// devices (0: as many as the module names). The caller checks that the
// result runs on the number of devices it wants
// (replica_count x num_partitions).
absl::StatusOr<PerDeviceModule> MakePerDeviceModule(HloModule& module, int64_t devices);

// Per entry parameter and per result leaf (the root, or each element of a
// root tuple) of the per-device `module`: where its global array lies.
absl::Status PlaceGlobalArrays(const HloModule& module, const PerDeviceModule& made,
                               std::vector<DevicePlacement>* inputs,
                               std::vector<DevicePlacement>* outputs);

// Global arguments -> each device's arguments ([device][parameter]), by the
// `inputs` placements of `module`'s entry parameters.
absl::StatusOr<std::vector<std::vector<Literal>>> SplitGlobalArguments(
    const HloModule& module, absl::Span<const DevicePlacement> inputs,
    absl::Span<const Literal> globals);

// Each device's result (a tuple when the root is one) -> the global results
// (one per result leaf), by the `outputs` placements.
absl::StatusOr<std::vector<Literal>> GatherGlobalResults(const HloModule& module,
                                                         absl::Span<const DevicePlacement> outputs,
                                                         absl::Span<const Literal> per_device);

}  // namespace hloc

#endif  // HLOC_PASSES_SHARDING_PER_DEVICE_MODULE_H_
