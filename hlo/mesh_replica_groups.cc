// Mesh-and-axes replica groups: checks, expansion, text (see the header).
#include "hlo/mesh_replica_groups.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

constexpr int64_t kMaxDevices = int64_t{1} << 24;

template <typename... Args>
absl::Status Invalid(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat("mesh replica groups: ", args...));
}

std::string AxisText(const xla::MeshAxesReplicaGroupListProto& list, const xla::AxisRefProto& a) {
  std::string out;
  const int64_t i = a.mesh_axis_index();
  if (i >= 0 && i < list.mesh().axes_size()) {
    absl::StrAppend(&out, "'", list.mesh().axes(i).name(), "'");
  } else {
    absl::StrAppend(&out, "axis #", i);
  }
  if (a.has_sub_axis_info()) {
    absl::StrAppend(&out, ":(", a.sub_axis_info().pre_size(), ")", a.sub_axis_info().size());
  }
  return out;
}

// The row-major positions of an array of shape `dims`, read in the order of
// its transpose by `perm` (result axis k is axis perm[k]).
std::vector<int64_t> TransposedRead(const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& perm) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::vector<int64_t> stride(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * dims[d + 1];
  std::vector<int64_t> index(rank, 0);  // Index into the transposed array.
  std::vector<int64_t> out;
  out.reserve(total);
  for (int64_t n = 0; n < total; ++n) {
    int64_t position = 0;
    for (int64_t d = 0; d < rank; ++d) position += index[d] * stride[perm[d]];
    out.push_back(position);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < dims[perm[d]]) break;
      index[d] = 0;
    }
  }
  return out;
}

// [begin, end) of a reference in the axis's major-to-minor factor space:
// a sub-axis (p)k covers [p, p*k); the full axis [1, n).
std::pair<int64_t, int64_t> Extent(const xla::AxisRefProto& a, int64_t n) {
  if (!a.has_sub_axis_info()) return {1, n};
  return {a.sub_axis_info().pre_size(), a.sub_axis_info().pre_size() * a.sub_axis_info().size()};
}

// iota(n) reshaped to the transform's dimensions, transposed by its
// permutation and read row-major: the mesh's device list.
std::vector<int64_t> IotaDeviceOrder(const xla::MeshProto::IotaTransform& iota) {
  const std::vector<int64_t> dims(iota.reshape_dims().begin(), iota.reshape_dims().end());
  std::vector<int64_t> perm(iota.transpose_perm().begin(), iota.transpose_perm().end());
  if (perm.empty()) {
    perm.resize(dims.size());
    std::iota(perm.begin(), perm.end(), 0);
  }
  return TransposedRead(dims, perm);
}

}  // namespace

absl::Status ValidateMeshAxesGroups(const xla::MeshAxesReplicaGroupListProto& list) {
  const xla::MeshProto& mesh = list.mesh();
  if (mesh.axes_size() == 0) return Invalid("the mesh has no axes");
  absl::flat_hash_set<std::string> names;
  int64_t devices = 1;
  for (const auto& axis : mesh.axes()) {
    if (axis.name().empty()) return Invalid("a mesh axis has no name");
    if (!names.insert(axis.name()).second) {
      return Invalid("mesh axis '", axis.name(), "' is named twice");
    }
    if (axis.size() < 1 || axis.size() > kMaxDevices) {
      return Invalid("mesh axis '", axis.name(), "' has size ", axis.size());
    }
    devices *= axis.size();
    if (devices > kMaxDevices) return Invalid("the mesh has too many devices");
  }
  if (mesh.has_iota_transform()) {
    const auto& iota = mesh.iota_transform();
    if (mesh.device_ids_size() > 0) return Invalid("the mesh has device_ids and an iota order");
    int64_t reshaped = 1;
    for (int64_t d : iota.reshape_dims()) {
      if (d < 1 || d > kMaxDevices) return Invalid("iota device order dimension ", d);
      reshaped *= d;
      if (reshaped > kMaxDevices) return Invalid("iota device order too large");
    }
    if (reshaped != devices || iota.reshape_dims_size() == 0) {
      return Invalid("iota device order [", absl::StrJoin(iota.reshape_dims(), ","),
                     "] does not hold the mesh's ", devices, " devices");
    }
    std::vector<int64_t> perm(iota.transpose_perm().begin(), iota.transpose_perm().end());
    std::sort(perm.begin(), perm.end());
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm.size() != static_cast<size_t>(iota.reshape_dims_size()) ||
          perm[i] != static_cast<int64_t>(i)) {
        return Invalid("iota device order T(", absl::StrJoin(iota.transpose_perm(), ","),
                       ") is not a permutation of its ", iota.reshape_dims_size(),
                       " dimensions");
      }
    }
  }
  if (mesh.device_ids_size() > 0) {
    if (mesh.device_ids_size() != devices) {
      return Invalid("device_ids lists ", mesh.device_ids_size(), " devices; the mesh has ",
                     devices);
    }
    std::vector<int64_t> sorted(mesh.device_ids().begin(), mesh.device_ids().end());
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < devices; ++i) {
      if (sorted[i] != i) {
        return Invalid("device_ids must be a permutation of 0..", devices - 1);
      }
    }
  }
  for (int i = 0; i < list.axes_size(); ++i) {
    const xla::AxisRefProto& a = list.axes(i);
    if (a.mesh_axis_index() < 0 || a.mesh_axis_index() >= mesh.axes_size()) {
      return Invalid("axis index ", a.mesh_axis_index(), " is not one of the mesh's ",
                     mesh.axes_size(), " axes");
    }
    const int64_t n = mesh.axes(a.mesh_axis_index()).size();
    if (a.has_sub_axis_info()) {
      const int64_t pre = a.sub_axis_info().pre_size(), size = a.sub_axis_info().size();
      if (pre < 1 || size < 2 || size >= n || pre > n || n % pre != 0 || (n / pre) % size != 0) {
        return Invalid("sub-axis ", AxisText(list, a), " does not split an axis of size ", n,
                       " (needs pre-size >= 1, 1 < size < ", n, ", pre-size*size dividing ", n,
                       ")");
      }
    }
    for (int j = 0; j < i; ++j) {
      const xla::AxisRefProto& b = list.axes(j);
      if (b.mesh_axis_index() != a.mesh_axis_index()) continue;
      auto [a0, a1] = Extent(a, n);
      auto [b0, b1] = Extent(b, n);
      // Sub-axes are factors of n: they coexist when they do not overlap
      // and the outer one starts on a multiple of where the inner one ends.
      const bool overlap = a0 < b1 && b0 < a1;
      const bool aligned = std::max(a0, b0) % std::min(a1, b1) == 0;
      if (!a.has_sub_axis_info() || !b.has_sub_axis_info() || overlap || !aligned) {
        return Invalid(AxisText(list, b), " and ", AxisText(list, a), " overlap");
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandMeshAxesGroups(
    const xla::MeshAxesReplicaGroupListProto& list) {
  HLOC_RETURN_IF_ERROR(ValidateMeshAxesGroups(list));
  const xla::MeshProto& mesh = list.mesh();
  // Each mesh axis becomes its factors, major to minor; a factor is listed
  // (position in list.axes()) or not (-1).
  std::vector<int64_t> dims, listed_at;
  for (int i = 0; i < mesh.axes_size(); ++i) {
    const int64_t n = mesh.axes(i).size();
    std::vector<std::pair<int64_t, int>> refs;  // (pre-size, position); full axis: (0, pos).
    for (int k = 0; k < list.axes_size(); ++k) {
      const xla::AxisRefProto& a = list.axes(k);
      if (a.mesh_axis_index() != i) continue;
      refs.emplace_back(a.has_sub_axis_info() ? a.sub_axis_info().pre_size() : 0, k);
    }
    std::sort(refs.begin(), refs.end());
    if (refs.empty() || refs[0].first == 0) {
      dims.push_back(n);
      listed_at.push_back(refs.empty() ? -1 : refs[0].second);
      continue;
    }
    int64_t covered = 1;
    for (const auto& [pre, k] : refs) {
      if (pre % covered != 0) return Invalid("sub-axes of '", mesh.axes(i).name(), "' overlap");
      if (pre != covered) {
        dims.push_back(pre / covered);
        listed_at.push_back(-1);
      }
      const int64_t size = list.axes(k).sub_axis_info().size();
      dims.push_back(size);
      listed_at.push_back(k);
      covered = pre * size;
    }
    if (covered != n) {
      dims.push_back(n / covered);
      listed_at.push_back(-1);
    }
  }
  // Unlisted factors first (in place), then the listed ones in list order.
  std::vector<int64_t> perm;
  int64_t group_size = 1, total = 1;
  for (size_t f = 0; f < dims.size(); ++f) {
    total *= dims[f];
    if (listed_at[f] < 0) perm.push_back(static_cast<int64_t>(f));
  }
  for (int k = 0; k < list.axes_size(); ++k) {
    for (size_t f = 0; f < dims.size(); ++f) {
      if (listed_at[f] == k) {
        perm.push_back(static_cast<int64_t>(f));
        group_size *= dims[f];
      }
    }
  }
  // Read the factor array transposed by `perm`, row-major, in groups.
  const std::vector<int64_t> read = TransposedRead(dims, perm);
  std::vector<std::vector<int64_t>> groups(total / group_size);
  for (int64_t n = 0; n < total; ++n) groups[n / group_size].push_back(read[n]);
  if (mesh.device_ids_size() > 0) {
    for (auto& group : groups) {
      for (int64_t& position : group) position = mesh.device_ids(static_cast<int>(position));
    }
  } else if (mesh.has_iota_transform()) {
    const std::vector<int64_t> order = IotaDeviceOrder(mesh.iota_transform());
    for (auto& group : groups) {
      for (int64_t& position : group) position = order[position];
    }
  }
  return groups;
}

void AppendMeshAxesGroups(const xla::MeshAxesReplicaGroupListProto& list, std::string* out) {
  auto quoted = [out](const std::string& name) {
    out->push_back('\'');
    for (char c : name) {
      if (c == '\'' || c == '\\') out->push_back('\\');
      out->push_back(c);
    }
    out->push_back('\'');
  };
  out->append("mesh[");
  for (int i = 0; i < list.mesh().axes_size(); ++i) {
    if (i) out->push_back(',');
    quoted(list.mesh().axes(i).name());
    absl::StrAppend(out, "=", list.mesh().axes(i).size());
  }
  out->push_back(']');
  if (list.mesh().device_ids_size() > 0) {
    out->append(", device_ids=(");
    for (int i = 0; i < list.mesh().device_ids_size(); ++i) {
      absl::StrAppend(out, i ? "," : "", list.mesh().device_ids(i));
    }
    out->push_back(')');
  } else if (list.mesh().has_iota_transform()) {
    const auto& iota = list.mesh().iota_transform();
    std::vector<int64_t> perm(iota.transpose_perm().begin(), iota.transpose_perm().end());
    if (perm.empty()) {
      perm.resize(iota.reshape_dims_size());
      std::iota(perm.begin(), perm.end(), 0);
    }
    absl::StrAppend(out, ", device_ids=([", absl::StrJoin(iota.reshape_dims(), ","), "]T(",
                    absl::StrJoin(perm, ","), "))");
  }
  out->append(" {");
  for (int k = 0; k < list.axes_size(); ++k) {
    const xla::AxisRefProto& a = list.axes(k);
    if (k) out->push_back(',');
    const int64_t i = a.mesh_axis_index();
    if (i >= 0 && i < list.mesh().axes_size()) {
      quoted(list.mesh().axes(i).name());
    } else {
      quoted(std::to_string(i));  // Invalid; printed so it can be seen.
    }
    if (a.has_sub_axis_info()) {
      absl::StrAppend(out, ":(", a.sub_axis_info().pre_size(), ")", a.sub_axis_info().size());
    }
  }
  out->push_back('}');
}

}  // namespace hloc
