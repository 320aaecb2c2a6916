// Device groups of collectives (see collective_groups.h).
#include "hlo/collective_groups.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/mesh_replica_groups.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

template <typename... Args>
absl::Status Invalid(const HloInstruction& hlo, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(HloOpcodeName(hlo.opcode()), " %", hlo.name(),
                                                 ": ", args...));
}

bool HasUseGlobalDeviceIds(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

std::string GroupsText(const std::vector<std::vector<int64_t>>& groups) {
  std::vector<std::string> parts;
  for (const auto& g : groups) parts.push_back(absl::StrCat("{", absl::StrJoin(g, ","), "}"));
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

// How many ids the mode's groups range over, and how many copies of the
// groups run side by side (one per partition, per replica, or one).
struct ModeExtent {
  int64_t ids;
  const char* id_kind;
};

ModeExtent ExtentOf(CollectiveGroupMode mode, const DeviceMesh& mesh) {
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica:
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      return {mesh.replica_count, "replica"};
    case CollectiveGroupMode::kCrossPartition:
      return {mesh.num_partitions, "partition"};
    case CollectiveGroupMode::kFlattenedId:
      return {mesh.device_count(), "device"};
  }
  return {0, "?"};
}

// Checks `groups` name ids in [0, limit) at most once.
absl::Status CheckIds(const HloInstruction& hlo, const std::vector<std::vector<int64_t>>& groups,
                      int64_t limit, const char* id_kind) {
  std::vector<bool> seen(std::max<int64_t>(limit, 0), false);
  for (const auto& group : groups) {
    for (int64_t id : group) {
      if (id < 0 || id >= limit) {
        return Invalid(hlo, id_kind, " id ", id, " in replica_groups=", GroupsText(groups),
                       " is out of range: the module has ", limit, " ", id_kind, "s");
      }
      if (seen[id]) {
        return Invalid(hlo, id_kind, " id ", id, " appears twice in replica_groups=",
                       GroupsText(groups));
      }
      seen[id] = true;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view CollectiveGroupModeName(CollectiveGroupMode mode) {
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica: return "cross-replica";
    case CollectiveGroupMode::kCrossPartition: return "cross-partition";
    case CollectiveGroupMode::kCrossReplicaAndPartition: return "cross-replica-and-partition";
    case CollectiveGroupMode::kFlattenedId: return "flattened-id";
  }
  return "?";
}

bool HasDeviceGroups(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter: case HloOpcode::kAllToAll: case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectiveBroadcast:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<CollectiveGroupMode> GroupModeOf(const HloInstruction& hlo) {
  const bool channel = hlo.attrs().channel_id.has_value();
  if (!HasUseGlobalDeviceIds(hlo.opcode())) {
    return channel ? CollectiveGroupMode::kCrossPartition : CollectiveGroupMode::kCrossReplica;
  }
  if (hlo.attrs().use_global_device_ids) {
    if (!channel) return Invalid(hlo, "use_global_device_ids=true needs a channel_id");
    return CollectiveGroupMode::kFlattenedId;
  }
  return channel ? CollectiveGroupMode::kCrossReplicaAndPartition
                 : CollectiveGroupMode::kCrossReplica;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandIotaGroups(
    const xla::IotaReplicaGroupListProto& iota) {
  const int64_t groups = iota.num_replica_groups(), size = iota.num_devices_per_group();
  std::vector<int64_t> dims(iota.iota_reshape_dims().begin(), iota.iota_reshape_dims().end());
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d < 0 || d > (int64_t{1} << 24)) {
      return absl::InvalidArgumentError(absl::StrCat("iota replica groups: bad dimension ", d));
    }
    total *= d;
  }
  if (dims.empty()) {
    total = groups * size;
    dims = {total};
  }
  if (groups < 0 || size < 0 || groups * size != total || total > (int64_t{1} << 24)) {
    return absl::InvalidArgumentError(absl::StrCat("iota replica groups: [", groups, ",", size,
                                                   "] does not hold ", total, " ids"));
  }
  std::vector<int64_t> perm(iota.iota_transpose_perm().begin(), iota.iota_transpose_perm().end());
  if (perm.empty()) {
    perm.resize(dims.size());
    std::iota(perm.begin(), perm.end(), 0);
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted.size() != dims.size() || sorted[i] != static_cast<int64_t>(i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "iota replica groups: T(", absl::StrJoin(perm, ","), ") is not a permutation of ",
          dims.size(), " dimensions"));
    }
  }
  // Row-major strides of the reshaped iota, read in transposed order.
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> stride(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * dims[d + 1];
  std::vector<int64_t> index(rank, 0);  // Index into the transposed array.
  std::vector<std::vector<int64_t>> result(groups);
  for (int64_t n = 0; n < total; ++n) {
    int64_t id = 0;
    for (int64_t d = 0; d < rank; ++d) id += index[d] * stride[perm[d]];
    result[n / size].push_back(id);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < dims[perm[d]]) break;
      index[d] = 0;
    }
  }
  return result;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ReplicaGroupsOf(const HloInstruction& hlo) {
  if (hlo.attrs().mesh_replica_groups) {
    absl::StatusOr<std::vector<std::vector<int64_t>>> groups =
        ExpandMeshAxesGroups(*hlo.attrs().mesh_replica_groups);
    if (!groups.ok()) return Invalid(hlo, groups.status().message());
    return groups;
  }
  if (hlo.attrs().iota_replica_groups) {
    absl::StatusOr<std::vector<std::vector<int64_t>>> groups =
        ExpandIotaGroups(*hlo.attrs().iota_replica_groups);
    if (!groups.ok()) return Invalid(hlo, groups.status().message());
    return groups;
  }
  if (!hlo.attrs().replica_groups) return std::vector<std::vector<int64_t>>();
  std::vector<std::vector<int64_t>> groups = *hlo.attrs().replica_groups;
  // {{}} is XLA's spelling of "all" too.
  if (groups.size() == 1 && groups[0].empty()) groups.clear();
  return groups;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> DeviceGroupsOf(const HloInstruction& hlo,
                                                                 const DeviceMesh& mesh) {
  if (mesh.replica_count < 1 || mesh.num_partitions < 1) {
    return Invalid(hlo, "the module has ", mesh.replica_count, " replicas and ",
                   mesh.num_partitions, " partitions");
  }
  HLOC_ASSIGN_OR_RETURN(CollectiveGroupMode mode, GroupModeOf(hlo));
  HLOC_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups, ReplicaGroupsOf(hlo));
  const ModeExtent extent = ExtentOf(mode, mesh);
  if (hlo.attrs().mesh_replica_groups) {
    int64_t listed = 0;
    for (const auto& g : groups) listed += static_cast<int64_t>(g.size());
    if (listed != extent.ids) {
      std::string text;
      AppendMeshAxesGroups(*hlo.attrs().mesh_replica_groups, &text);
      return Invalid(hlo, "replica_groups=", text, " is a mesh of ", listed,
                     " devices; the module has ", extent.ids, " ", extent.id_kind, "s");
    }
  }
  if (groups.empty()) {
    groups.emplace_back(extent.ids);
    std::iota(groups[0].begin(), groups[0].end(), 0);
  }
  HLOC_RETURN_IF_ERROR(CheckIds(hlo, groups, extent.ids, extent.id_kind));
  int64_t listed = 0;
  for (const auto& g : groups) listed += static_cast<int64_t>(g.size());
  if (listed != extent.ids) {
    return Invalid(hlo, "replica_groups=", GroupsText(groups), " name ", listed, " of the ",
                   extent.ids, " ", extent.id_kind, "s; every one must be in a group");
  }
  const int64_t partitions = mesh.num_partitions;
  std::vector<std::vector<int64_t>> devices;
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica:
      for (int64_t p = 0; p < partitions; ++p) {
        for (const auto& g : groups) {
          std::vector<int64_t>& out = devices.emplace_back();
          for (int64_t r : g) out.push_back(r * partitions + p);
        }
      }
      break;
    case CollectiveGroupMode::kCrossPartition:
      for (int64_t r = 0; r < mesh.replica_count; ++r) {
        for (const auto& g : groups) {
          std::vector<int64_t>& out = devices.emplace_back();
          for (int64_t p : g) out.push_back(r * partitions + p);
        }
      }
      break;
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      for (const auto& g : groups) {
        std::vector<int64_t>& out = devices.emplace_back();
        for (int64_t p = 0; p < partitions; ++p) {
          for (int64_t r : g) out.push_back(r * partitions + p);
        }
      }
      break;
    case CollectiveGroupMode::kFlattenedId:
      devices = std::move(groups);
      break;
  }
  return devices;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> DevicePairsOf(const HloInstruction& hlo,
                                                                       const DeviceMesh& mesh) {
  HLOC_ASSIGN_OR_RETURN(CollectiveGroupMode mode, GroupModeOf(hlo));
  const ModeExtent extent = ExtentOf(mode, mesh);
  const auto& pairs = hlo.attrs().source_target_pairs;
  std::vector<bool> source_seen(extent.ids, false), target_seen(extent.ids, false);
  for (const auto& [source, target] : pairs) {
    for (int64_t id : {source, target}) {
      if (id < 0 || id >= extent.ids) {
        return Invalid(hlo, "source_target_pairs names ", extent.id_kind, " ", id,
                       " but the module has ", extent.ids, " ", extent.id_kind, "s");
      }
    }
    if (source_seen[source]) return Invalid(hlo, extent.id_kind, " ", source, " sends twice");
    if (target_seen[target]) return Invalid(hlo, extent.id_kind, " ", target, " receives twice");
    source_seen[source] = target_seen[target] = true;
  }
  // The pairs run within each replica (cross-partition) or each partition.
  const bool cross_partition = mode == CollectiveGroupMode::kCrossPartition;
  const int64_t copies = cross_partition ? mesh.replica_count : mesh.num_partitions;
  std::vector<std::pair<int64_t, int64_t>> result;
  for (int64_t c = 0; c < copies; ++c) {
    auto device = [&](int64_t id) {
      return cross_partition ? c * mesh.num_partitions + id : id * mesh.num_partitions + c;
    };
    for (const auto& [source, target] : pairs) result.push_back({device(source), device(target)});
  }
  return result;
}

absl::Status VerifyCollective(const HloInstruction& hlo, const DeviceMesh& mesh) {
  if (!HasDeviceGroups(hlo.opcode())) return absl::OkStatus();
  HLOC_ASSIGN_OR_RETURN(CollectiveGroupMode mode, GroupModeOf(hlo));
  (void)mode;
  const bool permute = hlo.opcode() == HloOpcode::kCollectivePermute ||
                       hlo.opcode() == HloOpcode::kCollectivePermuteStart;
  // A module whose header names one device is taken as written for any
  // device count (hand-written tests, single-device dumps): only what does
  // not depend on the count is checked. The runner checks the rest.
  const bool sized = mesh.device_count() > 1;
  if (permute) {
    if (!sized) {
      DeviceMesh wide{1, 1};
      for (const auto& [s, t] : hlo.attrs().source_target_pairs) {
        wide.replica_count = std::max({wide.replica_count, s + 1, t + 1});
      }
      wide.num_partitions = wide.replica_count;
      return DevicePairsOf(hlo, wide).status();
    }
    return DevicePairsOf(hlo, mesh).status();
  }
  HLOC_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups, ReplicaGroupsOf(hlo));
  if (sized) {
    HLOC_ASSIGN_OR_RETURN(groups, DeviceGroupsOf(hlo, mesh));
  } else {
    int64_t most = 0;
    for (const auto& g : groups) {
      for (int64_t id : g) most = std::max(most, id + 1);
    }
    HLOC_RETURN_IF_ERROR(CheckIds(hlo, groups, most, "replica"));
  }
  const HloOpcode op = hlo.opcode();
  const bool splits = op == HloOpcode::kAllGather || op == HloOpcode::kAllGatherStart ||
                      op == HloOpcode::kReduceScatter || op == HloOpcode::kAllToAll ||
                      op == HloOpcode::kRaggedAllToAll;
  if (!splits || groups.empty()) return absl::OkStatus();
  const int64_t size = static_cast<int64_t>(groups[0].size());
  for (const auto& g : groups) {
    if (static_cast<int64_t>(g.size()) != size) {
      return Invalid(hlo, "groups of different sizes (", size, " and ", g.size(),
                     ") in replica_groups=", GroupsText(groups));
    }
  }
  if (size == 0) return Invalid(hlo, "empty replica group");
  // ragged-all-to-all: each offset / size array holds k entries per peer.
  if (op == HloOpcode::kRaggedAllToAll) {
    for (int64_t i = 2; i < hlo.operand_count(); ++i) {
      const Shape& index = hlo.operand(i)->shape();
      if (!index.IsArray() || index.rank() < 1) continue;  // Shape inference reports it.
      int64_t entries = 1;
      for (int64_t d = 0; d < index.rank(); ++d) entries *= index.dimensions(d);
      if (entries == 0 || entries % size != 0) {
        return Invalid(hlo, "operand ", i, " ", index.ToString(false), " does not hold the ",
                       "same number of entries for each of the ", size, " group members");
      }
    }
    return absl::OkStatus();
  }
  // all-to-all of an array splits its one dimension into `size` chunks; the
  // tuple form sends operand i to rank i.
  if (op == HloOpcode::kAllToAll) {
    if (hlo.dimensions().empty()) {
      if (hlo.operand_count() != size) {
        return Invalid(hlo, "the tuple form needs one operand per group member (", size,
                       "), got ", hlo.operand_count());
      }
      return absl::OkStatus();
    }
    const int64_t d = hlo.dimensions(0);
    for (const HloInstruction* operand : hlo.operands()) {
      if (!operand->shape().IsArray() || d < 0 || d >= operand->shape().rank()) {
        return Invalid(hlo, "split dimension ", d, " is not a dimension of the operand");
      }
      if (operand->shape().dimensions(d) % size != 0) {
        return Invalid(hlo, "split dimension ", d, " of size ", operand->shape().dimensions(d),
                       " is not divisible by the group size ", size);
      }
    }
    return absl::OkStatus();
  }
  if (hlo.dimensions().empty()) return absl::OkStatus();  // Shape inference reports it.
  const int64_t d = hlo.dimensions(0);
  const bool gather = op != HloOpcode::kReduceScatter;
  for (int64_t i = 0; i < hlo.operand_count(); ++i) {
    const Shape& in = hlo.operand(i)->shape();
    const Shape* out = &hlo.shape();
    if (out->IsTuple()) {
      // all-gather-start: (operands, results); tuple all-gather: one per operand.
      if (op == HloOpcode::kAllGatherStart && out->tuple_shapes_size() == 2) {
        out = &out->tuple_shapes(1);
      }
      if (out->IsTuple()) {
        if (i >= out->tuple_shapes_size()) continue;
        out = &out->tuple_shapes(i);
      }
    }
    if (!in.IsArray() || !out->IsArray() || d < 0 || d >= in.rank() || d >= out->rank()) continue;
    const int64_t small = gather ? in.dimensions(d) : out->dimensions(d);
    const int64_t big = gather ? out->dimensions(d) : in.dimensions(d);
    if (small * size != big) {
      return Invalid(hlo, gather ? "gathering" : "scattering", " dimension ", d, " over ", size,
                     " devices: ", gather ? "operand" : "result", " size ", small, " x ", size,
                     " must be ", big);
    }
  }
  return absl::OkStatus();
}

}  // namespace hloc
