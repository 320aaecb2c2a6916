// SpmdPartition: turns a module with sharding annotations only (what
// `jax.jit(f)` over NamedSharding arguments lowers to) into the module one
// device runs, with per-device shapes and the collectives that move data
// between devices.
//
// What JAX 0.10.2 lowers (jax.jit(f).lower(*args).compiler_ir("hlo"), a mesh
// of 4 forced host devices; checked by hand, see spmd_partitioner_test.cc):
//   * Shapes are global. num_partitions is 1 in what lower() gives (not
//     printed) and 4 in XLA's before_optimizations dump of the same module:
//     the device count comes from the options, num_partitions, or the
//     shardings (a tiled sharding lists every device). The mesh is in the
//     module's frontend attribute xla.sdy.meshes={mesh = #sdy.mesh<["d"=4]>}.
//   * jax.nn functions (relu, ...) and custom_jvp bodies (jnp.where, tril in
//     gradients) are `call`s, some returning tuples: inlined first, and
//     gte(tuple(x)) read as x.
//   * Entry parameters carry HLO shardings (`sharding={devices=[4,1]<=[4]}`,
//     `sharding={replicated}`, for a 2x2 mesh `{devices=[2,2]<=[4]}` or
//     `{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}`) next to the
//     Shardy form in frontend_attributes (xla.sdy.sharding); we read the HLO
//     form only.
//   * jax.lax.with_sharding_constraint is `custom-call(x),
//     custom_call_target="Sharding", sharding={...}` (meshes whose axes are
//     Explicit, jax.make_mesh's default, put one after every op).
//   * out_shardings: the result goes through `custom-call(x),
//     custom_call_target="xla.sdy.FuncResultSharding"` (an identity) and
//     `ROOT gte(tuple(x)), index=0, sharding={devices=[4]<=[4]}`; without
//     out_shardings the root has no sharding (we keep what propagation gave).
//
// The pass, in three steps over the entry computation:
//   1. Propagation (one TileSharding per array value, spmd_sharding.h):
//      fixed at parameters, Sharding custom calls and any other op that
//      carries a `sharding=`; forward in post order by the per-op rules
//      below (a value none of whose operands is known, e.g. a constant, or
//      whose rule gives only "replicated", stays open); backward in reverse
//      post order, an open value takes what its first user wants of it
//      (elementwise: the user's sharding; broadcast, transpose, reshape,
//      dimension-wise ops: mapped back; Sharding: its sharding; else
//      replicated).
//   2. Per op, a plan: the sharding each operand must have, the result's,
//      and the all-reduce the op needs. Rules:
//        elementwise     operands brought to one sharding (the given result's,
//                        or the most tiled operand's)
//        broadcast       operand = result with the broadcast dims replicated
//        transpose       tile axes permuted
//        reshape         each split dimension survives (same size, same
//                        product of the dimensions before it) or is the
//                        major-most of a group it splits into or merges
//                        with, the tile count dividing it (head reshapes)
//        dot             a tile array over [output dims, contracting dims]
//                        taken from the lhs, the rhs, the result, or both
//                        operands merged (2-D meshes), the one that moves
//                        the fewest elements; contracting dims
//                        tiled -> local dot (bf16/f16: into f32, rounded
//                        after the sum) + all-reduce(add), or one
//                        reduce-scatter where the result is wanted split
//                        across the same groups (also for reduce)
//        reduce          reduced dims tiled -> local reduce + all-reduce with
//                        the reducer (add/mul/max/min/and/or with its
//                        identity as init), else local
//        convolution     batch dimension split, kernel replicated
//        gather          indices split (not index_vector_dim), operand
//                        replicated (embedding lookups): local gathers
//        slice, pad, reverse, concatenate, sort (one operand), reduce-window,
//        dynamic-slice, dynamic-update-slice
//                        the dimensions they change are made whole; the
//                        others keep their split (slice limits and
//                        dynamic-slice sizes become the block's)
//        constant, iota  replicated (sliced by partition-id where a user
//                        wants them tiled)
//      Any other op: operands gathered to replicated, runs on global shapes,
//      and its name goes into SpmdReport::replicated_ops (never silent).
//   3. Rewrite into a new entry: per-device shapes; where a value's
//      sharding is not the one its user needs, a broadcast is made again in
//      the wanted sharding, anything else resharded by SpmdBuilder
//      (spmd_builder.h: one all-to-all where one split dimension becomes
//      another, else all-gather only the dimensions no longer split and
//      dynamic-slice by partition-id only the newly split ones); a partial
//      sum wanted split across its own groups is one reduce-scatter.
//      num_partitions becomes N; parameters and root carry their shardings
//      (as in XLA's partitioned modules), so the API and tests split and
//      gather global arrays with PlacementOfSharding.
//
// Uneven splits (a dimension its tile count does not divide; JAX allows
// them in with_sharding_constraint, not in device_put): XLA pads the last
// tile and masks. hloc keeps such a dimension whole on every device instead
// (the constraint's other dimensions stay split), which gives the same
// values with less parallelism, and lists it in SpmdReport::uneven_kept_whole.
// Parameters and results split unevenly are refused: their global arrays are
// placed in even blocks.
//
// Refused (Unimplemented naming the instruction): uneven parameter and
// result tiles, collectives or shard_map custom calls already in the module,
// tuple parameters, Sharding custom calls outside the entry.
#ifndef HLOC_PASSES_SHARDING_SPMD_PARTITIONER_H_
#define HLOC_PASSES_SHARDING_SPMD_PARTITIONER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace hloc {

struct SpmdReport {
  int64_t devices = 0;
  // Ops that ran on global shapes because no rule partitions them: "%name (opcode)".
  std::vector<std::string> replicated_ops;
  // Splits that do not divide a dimension, asked for by a sharding
  // constraint or an op's sharding= (not a parameter or result): that
  // dimension is kept whole instead ("%name dim 0 (6 in 4 tiles)").
  std::vector<std::string> uneven_kept_whole;
  int64_t all_gathers = 0, all_reduces = 0, reduce_scatters = 0, all_to_alls = 0,
          dynamic_slices = 0;
  std::string ToString() const;
};

// The module's Shardy mesh (xla.sdy.meshes, JAX's) and, per entry parameter
// and result, the mesh axes that split each dimension (major first): what
// JAX needs to place results as NamedShardings. Empty axis_names where the
// module names no single mesh with axes in iota order, or a parameter's or
// result's sharding is not an assignment of its axes.
struct SpmdMeshShardings {
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
  std::vector<std::vector<std::vector<int64_t>>> parameters, results;
};

struct SpmdPartitionOptions {
  // 0: the module's num_partitions when above 1, else the size of the first
  // tiled sharding's tile assignment. (JAX's jax.jit(f).lower() proto says
  // num_partitions=1; its before-optimizations dump says 4.)
  int64_t devices = 0;
  SpmdReport* report = nullptr;                 // Not owned; may be null.
  SpmdMeshShardings* mesh_shardings = nullptr;  // Not owned; may be null.
};

class SpmdPartition : public HloPass {
 public:
  explicit SpmdPartition(SpmdPartitionOptions options = {}) : options_(options) {}
  absl::string_view name() const override { return "spmd-partition"; }
  // False (unchanged) when nothing in the entry carries a sharding.
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  SpmdPartitionOptions options_;
};

// Whether the entry has tiled shardings (or Sharding custom calls), no
// shard_map and no collective, on global shapes: num_partitions is 1, or the
// module has JAX's xla.sdy.meshes attribute (XLA's partitioned dumps drop
// it). What SpmdPartition is for.
bool NeedsSpmdPartitioning(const HloModule& module);

}  // namespace hloc

#endif  // HLOC_PASSES_SHARDING_SPMD_PARTITIONER_H_
