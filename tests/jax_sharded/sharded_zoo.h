// Reads one model of the sharded JAX zoo (tests/jax_sharded/zoo, written by
// make_sharded_zoo.py): the per-device module after SPMD partitioning, the
// Shardy module before it, and NAME.io.txt's per-device and global arrays.
#ifndef HLOC_TESTS_JAX_SHARDED_SHARDED_ZOO_H_
#define HLOC_TESTS_JAX_SHARDED_SHARDED_ZOO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/literal.h"

namespace hloc {

struct ShardedZooModel {
  std::string name;
  std::string partitioned_text;  // NAME.partitioned.hlo
  std::string sdy_text;          // NAME.sdy.hlo
  // NAME.partitioned.pb (spmd_* models; XLA's HloProto dump of the
  // partitioned module); empty where the zoo has none.
  std::string partitioned_proto;
  // [device][argument] / [device][result].
  std::vector<std::vector<Literal>> device_inputs, device_outputs;
  std::vector<Literal> global_inputs, global_outputs;
};

// The zoo folder (under TEST_SRCDIR in a Bazel test).
std::string ShardedZooDir();
// The five models' names.
std::vector<std::string> ShardedZooModels();
// The models made by jax.jit over sharded arguments alone (no shard_map):
// NAME.sdy.hlo has global shapes and sharding annotations, for the SPMD
// partitioner (passes/sharding/spmd_partitioner.h).
std::vector<std::string> SpmdZooModels();
absl::StatusOr<ShardedZooModel> ReadShardedZooModel(const std::string& name);

// Compares device `device`'s result (a tuple of outputs, or one array) with
// JAX's outputs for that device: one line per mismatch ("output i: ..."),
// empty when everything matches.
std::string DeviceOutputMismatches(const ShardedZooModel& model, int64_t device,
                                   const Literal& result);

}  // namespace hloc

#endif  // HLOC_TESTS_JAX_SHARDED_SHARDED_ZOO_H_
