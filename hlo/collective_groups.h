// XLA's meaning of a collective's device groups, decoded once for the
// verifier, the interpreter and the backends.
//
// Devices: a module runs on replica_count x num_partitions devices; device
// d = replica * num_partitions + partition (XLA's default assignment, the
// "flattened id").
//
// What the ids in replica_groups name depends on the group mode, fixed by
// channel_id and use_global_device_ids (XLA's CollectiveOpGroupMode):
//
//   op has use_global_device_ids?  channel_id  use_global  mode: ids are
//   yes (all-reduce, all-gather,   absent      false       replicas        (kCrossReplica)
//        reduce-scatter)           present     false       replicas, every partition
//                                                                          (kCrossReplicaAndPartition)
//                                  present     true        flattened ids   (kFlattenedId)
//   no (all-to-all, collective-    absent      -           replicas        (kCrossReplica)
//       permute, -broadcast)       present     -           partitions      (kCrossPartition)
//
// kCrossReplica repeats each group once per partition (devices of the same
// partition talk); kCrossPartition once per replica. An empty replica_groups
// means one group of every id. The iota form [G,S]<=[d0,d1,..]T(perm) lists
// iota(d0*d1*..) reshaped to [d0,d1,..], transposed by perm, read row-major
// into G groups of S. The mesh form mesh['x'=2,'y'=2] {'y'} is expanded by
// hlo/mesh_replica_groups.h.
//
// The order inside a device group is the rank order: all-gather concatenates
// and reduce-scatter / all-to-all split in that order.
#ifndef HLOC_HLO_COLLECTIVE_GROUPS_H_
#define HLOC_HLO_COLLECTIVE_GROUPS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/instruction.h"
#include "hlo/module.h"

namespace hloc {

enum class CollectiveGroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition,
                                 kFlattenedId };
absl::string_view CollectiveGroupModeName(CollectiveGroupMode mode);

// How many devices a module runs on and how they are numbered.
struct DeviceMesh {
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  int64_t device_count() const { return replica_count * num_partitions; }
  static DeviceMesh Of(const HloModuleConfig& config) {
    return {config.replica_count, config.num_partitions};
  }
};

// True for the opcodes whose groups this file decodes: all-reduce,
// all-gather, reduce-scatter, all-to-all, collective-permute,
// collective-broadcast and their -start forms.
bool HasDeviceGroups(HloOpcode opcode);

absl::StatusOr<CollectiveGroupMode> GroupModeOf(const HloInstruction& hlo);

// The replica_groups attribute as written (explicit or iota expanded); empty
// when the attribute is absent or {}.
absl::StatusOr<std::vector<std::vector<int64_t>>> ReplicaGroupsOf(const HloInstruction& hlo);

// Expands an iota replica group list; errors when its sizes disagree.
absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandIotaGroups(
    const xla::IotaReplicaGroupListProto& iota);

// The device groups (flattened device ids, in rank order) of `hlo` on
// `mesh`. Checks ids in range and no device twice; every device appears in
// exactly one group (groups that leave devices out are an error).
absl::StatusOr<std::vector<std::vector<int64_t>>> DeviceGroupsOf(const HloInstruction& hlo,
                                                                 const DeviceMesh& mesh);

// collective-permute's (source device, target device) pairs on `mesh`.
// Checks ids in range, and no source or target twice within a group.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> DevicePairsOf(const HloInstruction& hlo,
                                                                       const DeviceMesh& mesh);

// Verifier rule for one collective on `mesh`: groups as DeviceGroupsOf
// checks them, equal group sizes where the op splits or concatenates, and
// the split / gathered dimensions divisible by the group size.
absl::Status VerifyCollective(const HloInstruction& hlo, const DeviceMesh& mesh);

}  // namespace hloc

#endif  // HLOC_HLO_COLLECTIVE_GROUPS_H_
