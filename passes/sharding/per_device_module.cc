// The per-device module and its global arrays (see the header).
#include "passes/sharding/per_device_module.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"

namespace hloc {

absl::StatusOr<PerDeviceModule> MakePerDeviceModule(HloModule& module, int64_t devices) {
  PerDeviceModule made;
  HLOC_ASSIGN_OR_RETURN(const bool shard_map, ShardMapToPerDevice(&made.shard_map).Run(module));
  if (shard_map) {
    made.kind = PerDeviceModule::Kind::kShardMap;
    return made;
  }
  // jax.jit over sharded arguments (sharding annotations on global shapes):
  // the partitioner makes the per-device module, its parameters and root
  // carrying the shardings that split and gather the global arrays.
  if (NeedsSpmdPartitioning(module)) {
    SpmdPartitionOptions options;
    options.devices = devices > 1 ? devices : 0;
    options.report = &made.spmd_report;
    options.mesh_shardings = &made.spmd_mesh;
    HLOC_ASSIGN_OR_RETURN(const bool spmd, SpmdPartition(options).Run(module));
    if (spmd) {
      made.kind = PerDeviceModule::Kind::kSpmd;
      return made;
    }
  }
  HloModuleConfig& config = *module.mutable_config();
  if (devices <= 1 || config.replica_count * config.num_partitions != 1) return made;
  // Shardings on a module that names one device describe global arrays
  // that only a partitioner could split; as replicas they would be wrong.
  for (const HloInstruction* hlo : module.entry()->instructions()) {
    if (hlo->has_sharding() && hlo->sharding().type() != xla::OpSharding::REPLICATED) {
      return absl::UnimplementedError(absl::StrCat(
          "%", hlo->name(), " carries a sharding but module ", module.name(),
          " names one device and is not one the SPMD partitioner takes (it holds "
          "collectives, device ids or a shard_map): use shard_map, or a module after XLA's "
          "spmd-partitioning pass"));
    }
  }
  config.replica_count = devices;
  made.kind = PerDeviceModule::Kind::kReplicas;
  return made;
}

absl::Status PlaceGlobalArrays(const HloModule& module, const PerDeviceModule& made,
                               std::vector<DevicePlacement>* inputs,
                               std::vector<DevicePlacement>* outputs) {
  const HloComputation& entry = *module.entry();
  const HloModuleConfig& config = module.config();
  const int64_t n = config.replica_count * config.num_partitions;
  const bool shard_map = made.kind == PerDeviceModule::Kind::kShardMap;
  if (!shard_map && config.replica_count > 1 && config.num_partitions > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "module ", module.name(), ": replica_count=", config.replica_count,
        " x num_partitions=", config.num_partitions,
        " (global arrays are split for replicas or for partitions, not both)"));
  }
  const bool stacked = !shard_map && config.replica_count > 1;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    const HloInstruction& parameter = *entry.parameter(i);
    if (!parameter.shape().IsArray()) {
      return absl::UnimplementedError(absl::StrCat(
          "%", parameter.name(), ": a tuple parameter on ", n,
          " devices (only array parameters are split)"));
    }
    if (shard_map) {
      inputs->push_back(PlacementOfShardedValue(made.shard_map, made.shard_map.inputs[i]));
    } else if (stacked) {
      inputs->push_back(StackedPlacement(parameter.shape(), n));
    } else if (parameter.has_sharding()) {
      HLOC_ASSIGN_OR_RETURN(DevicePlacement placement,
                            PlacementOfSharding(parameter.sharding(), parameter.shape(), n,
                                                absl::StrCat("%", parameter.name())));
      inputs->push_back(std::move(placement));
    } else {
      inputs->push_back(ReplicatedPlacement(parameter.shape(), n));
    }
  }
  const HloInstruction& root = *entry.root();
  std::vector<Shape> leaves;
  if (root.shape().IsTuple()) {
    for (const Shape& element : root.shape().tuple_shapes()) leaves.push_back(element);
  } else {
    leaves.push_back(root.shape());
  }
  for (size_t j = 0; j < leaves.size(); ++j) {
    if (!leaves[j].IsArray()) {
      return absl::UnimplementedError(absl::StrCat(
          "%", root.name(), ": result ", j, " is not an array (a root that is an array or a ",
          "tuple of arrays is gathered from ", n, " devices)"));
    }
    if (shard_map) {
      outputs->push_back(PlacementOfShardedValue(made.shard_map, made.shard_map.outputs[j]));
      continue;
    }
    const xla::OpSharding* sharding = nullptr;
    if (!stacked && root.has_sharding()) {
      sharding = &root.sharding();
      if (sharding->type() == xla::OpSharding::TUPLE) {
        sharding = j < static_cast<size_t>(sharding->tuple_shardings_size())
                       ? &sharding->tuple_shardings(static_cast<int>(j))
                       : nullptr;
      }
    }
    if (sharding == nullptr) {
      outputs->push_back(StackedPlacement(leaves[j], n));
      continue;
    }
    HLOC_ASSIGN_OR_RETURN(DevicePlacement placement,
                          PlacementOfSharding(*sharding, leaves[j], n,
                                              absl::StrCat("%", root.name(), " result ", j)));
    outputs->push_back(std::move(placement));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<Literal>>> SplitGlobalArguments(
    const HloModule& module, absl::Span<const DevicePlacement> inputs,
    absl::Span<const Literal> globals) {
  const HloComputation& entry = *module.entry();
  if (globals.size() != inputs.size() ||
      static_cast<int64_t>(inputs.size()) != entry.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), " takes ",
                                                   entry.num_parameters(), " arguments, got ",
                                                   globals.size()));
  }
  const int64_t n = inputs.empty() ? module.config().replica_count * module.config().num_partitions
                                   : inputs[0].device_count();
  std::vector<std::vector<Literal>> per_device(n);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DevicePlacement& placement = inputs[i];
    const Shape& global = globals[i].shape();
    if (!global.IsArray() || global.element_type() != placement.type ||
        global.dimensions() != placement.global_dims) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " is ", global.ToString(), "; %", entry.parameter(i)->name(),
          " takes ", placement.ToString()));
    }
    for (int64_t d = 0; d < n; ++d) {
      HLOC_ASSIGN_OR_RETURN(Literal block, Literal::Create(entry.parameter(i)->shape()));
      CopyBlockToDevice(placement, d, globals[i].raw(), block.mutable_raw());
      per_device[d].push_back(std::move(block));
    }
  }
  return per_device;
}

absl::StatusOr<std::vector<Literal>> GatherGlobalResults(const HloModule& module,
                                                         absl::Span<const DevicePlacement> outputs,
                                                         absl::Span<const Literal> per_device) {
  const bool tuple = module.entry()->root()->shape().IsTuple();
  std::vector<Literal> globals;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const DevicePlacement& placement = outputs[j];
    if (static_cast<int64_t>(per_device.size()) != placement.device_count()) {
      return absl::InvalidArgumentError(absl::StrCat("results from ", per_device.size(),
                                                     " devices; the module runs on ",
                                                     placement.device_count()));
    }
    HLOC_ASSIGN_OR_RETURN(Literal global,
                          Literal::Create(Shape(placement.type, placement.global_dims)));
    for (int64_t d = 0; d < placement.device_count(); ++d) {
      if (!placement.gathers[d]) continue;
      const Literal& block = tuple ? per_device[d].tuple_elements()[j] : per_device[d];
      CopyBlockFromDevice(placement, d, block.raw(), global.mutable_raw());
    }
    globals.push_back(std::move(global));
  }
  return globals;
}

}  // namespace hloc
