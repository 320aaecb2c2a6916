// XLA's mesh-and-axes form of a collective's replica groups, as JAX 0.10.2's
// XLA writes it after SPMD partitioning:
//
//   replica_groups=mesh['x'=2,'y'=1,'z'=2] {'x'}
//   replica_groups=mesh['a'=2,'b'=2], device_ids=(3,2,1,0) {'b','a'}
//   replica_groups=mesh['a'=8] {'a':(2)2}              (a sub-axis)
//   replica_groups=mesh['a'=2,'b'=4], device_ids=([2,4]T(1,0)) {'a'}
//                                       (device order: iota(8) reshaped to
//                                        [2,4], transposed, read row-major)
//
// (HloInstructionProto.mesh_axes_replica_group_list, field 93: a MeshProto
// of named axes (+ a device order: device_ids, field 2, or iota_transform,
// field 3) and AxisRefProtos by axis index; checked against protos JAX
// 0.10.2's XLA writes.)
//
// Meaning. The mesh is an array of device ids of shape [sizes of the axes]
// (iota when device_ids is absent, else device_ids read row-major). The
// listed axes are the ones a group spans; devices that agree on every other
// axis form one group:
//
//   mesh['x'=2,'y'=2] {'y'}        array [[0,1],       groups {0,1},{2,3}
//                                         [2,3]]
//   mesh['x'=2,'y'=2] {'x'}                            groups {0,2},{1,3}
//   mesh['x'=2,'y'=2] {'y','x'}                        group  {0,2,1,3}
//
// Precisely: the array is transposed so that the unlisted axes come first
// (mesh order) and the listed axes last (in the order listed: that order is
// the rank order inside a group, so {'y','x'} differs from {'x','y'}), then
// read row-major in chunks of the group size. A sub-axis 'a':(p)k names the
// middle factor when axis a (size n) is viewed as [p, k, n/(p*k)]; an axis
// with sub-axes is split into its factors first (the unlisted factors stay
// in place, major to minor). This is the same reshape/transpose the iota
// form [G,S]<=[dims]T(perm) spells out.
//
// Checks (errors say which rule failed): at least one mesh axis, unique
// non-empty names, sizes >= 1, device_ids a permutation of iota or an iota
// order that holds the mesh's devices (not both); axis
// indices in range; a sub-axis has pre-size >= 1, size > 1, size < n and
// pre-size*size dividing n; no axis named twice or overlapping itself.
// Whether the groups cover the module's devices is collective_groups.h's
// check (it knows the device count).
#ifndef HLOC_HLO_MESH_REPLICA_GROUPS_H_
#define HLOC_HLO_MESH_REPLICA_GROUPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/hlo.pb.h"

namespace hloc {

// Checks `list` (rules above); InvalidArgument naming the rule otherwise.
absl::Status ValidateMeshAxesGroups(const xla::MeshAxesReplicaGroupListProto& list);

// The device groups `list` names, in rank order (validates first).
absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandMeshAxesGroups(
    const xla::MeshAxesReplicaGroupListProto& list);

// XLA's text form, e.g. `mesh['x'=2,'y'=2] {'y'}`; the text parser reads it
// back.
void AppendMeshAxesGroups(const xla::MeshAxesReplicaGroupListProto& list, std::string* out);

}  // namespace hloc

#endif  // HLOC_HLO_MESH_REPLICA_GROUPS_H_
