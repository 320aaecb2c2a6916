// Collective thunks (see collective_thunks.h).
#include "runtime/collective_thunks.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace runtime {

absl::string_view CollectiveOpName(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "all-reduce";
    case CollectiveOp::kAllGather: return "all-gather";
    case CollectiveOp::kReduceScatter: return "reduce-scatter";
    case CollectiveOp::kAllToAll: return "all-to-all";
    case CollectiveOp::kAllToAllTuple: return "all-to-all (tuple)";
    case CollectiveOp::kRaggedAllToAll: return "ragged-all-to-all";
    case CollectiveOp::kCollectivePermute: return "collective-permute";
    case CollectiveOp::kBroadcast: return "collective-broadcast";
    case CollectiveOp::kReplicaId: return "replica-id";
    case CollectiveOp::kPartitionId: return "partition-id";
  }
  return "?";
}

void PackBlocks(const void* source, void* destination, int64_t outer, int64_t n,
                int64_t block_bytes) {
  const char* in = static_cast<const char*>(source);
  char* out = static_cast<char*>(destination);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(out + (j * outer + o) * block_bytes, in + (o * n + j) * block_bytes,
                  static_cast<size_t>(block_bytes));
    }
  }
}

void UnpackBlocks(const void* source, void* destination, int64_t outer, int64_t n,
                  int64_t block_bytes) {
  const char* in = static_cast<const char*>(source);
  char* out = static_cast<char*>(destination);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(out + (o * n + j) * block_bytes, in + (j * outer + o) * block_bytes,
                  static_cast<size_t>(block_bytes));
    }
  }
}

absl::StatusOr<DeviceGroup> GroupContaining(const CollectiveSpec& spec, int64_t rank,
                                            absl::string_view name) {
  for (const std::vector<int64_t>& group : spec.groups) {
    for (int64_t d : group) {
      if (d == rank) return DeviceGroup(group);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": device ", rank, " is in none of the op's device groups"));
}

absl::Status CollectiveThunk::Execute(ExecutionContext& context) const {
  const int64_t sequence = runs_.fetch_add(1);
  const size_t leaves = spec_.leaves.size();
  auto in = [&](size_t k) -> const void* { return context.buffers[buffers_[k]]; };
  auto out = [&](size_t k) -> void* { return context.buffers[buffers_[leaves + k]]; };
  const int64_t rank = communicator_->rank();
  if (spec_.op == CollectiveOp::kReplicaId || spec_.op == CollectiveOp::kPartitionId) {
    const uint32_t id = static_cast<uint32_t>(spec_.op == CollectiveOp::kReplicaId
                                                  ? rank / spec_.num_partitions
                                                  : rank % spec_.num_partitions);
    std::memcpy(context.buffers[buffers_[0]], &id, sizeof(id));
    return absl::OkStatus();
  }
  Communicator& comm = *communicator_;
  if (spec_.op == CollectiveOp::kCollectivePermute) {
    for (size_t k = 0; k < leaves; ++k) {
      const CollectiveKey key{name_, sequence * static_cast<int64_t>(leaves) +
                                         static_cast<int64_t>(k)};
      const int64_t bytes = spec_.leaves[k].elements * ElementBytes(spec_.type);
      if (absl::Status s = comm.CollectivePermute(key, spec_.pairs, in(k), out(k), bytes);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }
  absl::StatusOr<DeviceGroup> group = GroupContaining(spec_, rank, name_);
  if (!group.ok()) return group.status();
  const int64_t n = static_cast<int64_t>(group->size());
  const int64_t width = ElementBytes(spec_.type);
  if (spec_.op == CollectiveOp::kRaggedAllToAll) {
    if (leaves != 6 || buffers_.size() != 7) {
      return absl::InternalError(absl::StrCat(name_, ": ragged-all-to-all needs 7 buffers"));
    }
    const RaggedBuffers ragged{in(0), in(1), in(2), in(3), in(4), in(5), out(0)};
    return RaggedAllToAll(comm, {name_, sequence}, *group, spec_.ragged, ragged);
  }
  if (spec_.op == CollectiveOp::kAllToAllTuple) {
    // Operand j is the block for rank j; result i the block from rank i.
    if (static_cast<int64_t>(leaves) != n) {
      return absl::InvalidArgumentError(absl::StrCat(name_, ": ", leaves,
                                                     " operands for a group of ", n));
    }
    const int64_t bytes = spec_.leaves[0].elements * width;
    std::vector<char> send(static_cast<size_t>(n * bytes)), receive(send.size());
    for (int64_t j = 0; j < n; ++j) std::memcpy(send.data() + j * bytes, in(j), bytes);
    if (absl::Status s = comm.AllToAll({name_, sequence}, *group, send.data(), receive.data(),
                                       bytes);
        !s.ok()) {
      return s;
    }
    for (int64_t j = 0; j < n; ++j) std::memcpy(out(j), receive.data() + j * bytes, bytes);
    return absl::OkStatus();
  }
  for (size_t k = 0; k < leaves; ++k) {
    const CollectiveLeaf& leaf = spec_.leaves[k];
    const CollectiveKey key{name_, sequence * static_cast<int64_t>(leaves) +
                                       static_cast<int64_t>(k)};
    absl::Status status;
    switch (spec_.op) {
      case CollectiveOp::kAllReduce:
        status = comm.AllReduce(key, *group, spec_.type, spec_.reduction, in(k), out(k),
                                leaf.elements);
        break;
      case CollectiveOp::kBroadcast:
        status = comm.Broadcast(key, *group, 0, in(k), out(k), leaf.elements * width);
        break;
      case CollectiveOp::kAllGather: {
        const int64_t bytes = leaf.elements * width;
        if (leaf.outer == 1) {
          status = comm.AllGather(key, *group, in(k), out(k), bytes);
          break;
        }
        std::vector<char> gathered(static_cast<size_t>(n * bytes));
        status = comm.AllGather(key, *group, in(k), gathered.data(), bytes);
        if (status.ok()) UnpackBlocks(gathered.data(), out(k), leaf.outer, n, leaf.block_bytes);
        break;
      }
      case CollectiveOp::kReduceScatter: {
        const int64_t count = leaf.elements / n;
        if (leaf.outer == 1) {
          status = comm.ReduceScatter(key, *group, spec_.type, spec_.reduction, in(k), out(k),
                                      count);
          break;
        }
        std::vector<char> packed(static_cast<size_t>(leaf.elements * width));
        PackBlocks(in(k), packed.data(), leaf.outer, n, leaf.block_bytes);
        status = comm.ReduceScatter(key, *group, spec_.type, spec_.reduction, packed.data(),
                                    out(k), count);
        break;
      }
      case CollectiveOp::kAllToAll: {
        const int64_t bytes = leaf.elements * width / n;
        if (leaf.outer == 1) {
          status = comm.AllToAll(key, *group, in(k), out(k), bytes);
          break;
        }
        std::vector<char> packed(static_cast<size_t>(leaf.elements * width)),
            received(packed.size());
        PackBlocks(in(k), packed.data(), leaf.outer, n, leaf.block_bytes);
        status = comm.AllToAll(key, *group, packed.data(), received.data(), bytes);
        if (status.ok()) UnpackBlocks(received.data(), out(k), leaf.outer, n, leaf.block_bytes);
        break;
      }
      default:
        status = absl::InternalError(absl::StrCat(name_, ": unexpected op"));
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

void CollectiveThunk::AppendTo(std::string* out, int indent) const {
  absl::StrAppend(out, std::string(static_cast<size_t>(indent), ' '), "collective ", name_, " ",
                  CollectiveOpName(spec_.op));
  if (spec_.op == CollectiveOp::kAllReduce || spec_.op == CollectiveOp::kReduceScatter) {
    absl::StrAppend(out, " ", ReductionKindName(spec_.reduction));
  }
  absl::StrAppend(out, " ", ElementTypeName(spec_.type), " buffers ",
                  absl::StrJoin(buffers_, ","), "\n");
}

}  // namespace runtime
}  // namespace hloc
