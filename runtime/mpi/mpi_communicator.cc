// The MPI communicator (see mpi_communicator.h).
#include "runtime/mpi/mpi_communicator.h"

#include <mpi.h>

#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace runtime {
namespace {

absl::Status MpiError(const CollectiveKey& key, const char* call, int code) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::InternalError(absl::StrCat(key.name, ": ", call, " failed: ",
                                          std::string(text, static_cast<size_t>(length))));
}

absl::StatusOr<int> Count(const CollectiveKey& key, int64_t count) {
  if (count < 0 || count > INT_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat(key.name, ": ", count, " elements is more than one MPI call takes"));
  }
  return static_cast<int>(count);
}

absl::StatusOr<MPI_Datatype> TypeOf(const CollectiveKey& key, ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kU8: return MPI_UINT8_T;
    case ElementType::kS8: return MPI_INT8_T;
    case ElementType::kS16: return MPI_INT16_T;
    case ElementType::kU16: return MPI_UINT16_T;
    case ElementType::kS32: return MPI_INT32_T;
    case ElementType::kU32: return MPI_UINT32_T;
    case ElementType::kS64: return MPI_INT64_T;
    case ElementType::kU64: return MPI_UINT64_T;
    case ElementType::kF32: return MPI_FLOAT;
    case ElementType::kF64: return MPI_DOUBLE;
    case ElementType::kF16:
    case ElementType::kBF16: break;
  }
  return absl::UnimplementedError(
      absl::StrCat(key.name, ": MPI has no ", ElementTypeName(type), " reductions"));
}

absl::StatusOr<MPI_Op> OpOf(const CollectiveKey& key, ElementType type, ReductionKind kind) {
  if (absl::Status s = CheckReduction(type, kind); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(key.name, ": ", s.message()));
  }
  if (type == ElementType::kPred) {
    // pred is 0/1 in a byte: or is max, and is min (sum and product too).
    const bool any = kind == ReductionKind::kSum || kind == ReductionKind::kMax ||
                     kind == ReductionKind::kOr;
    return any ? MPI_MAX : MPI_MIN;
  }
  switch (kind) {
    case ReductionKind::kSum: return MPI_SUM;
    case ReductionKind::kProduct: return MPI_PROD;
    case ReductionKind::kMin: return MPI_MIN;
    case ReductionKind::kMax: return MPI_MAX;
    case ReductionKind::kAnd: return MPI_BAND;
    case ReductionKind::kOr: return MPI_BOR;
  }
  return MPI_SUM;
}

MPI_Comm AsComm(void* handle) { return reinterpret_cast<MPI_Comm>(handle); }

// MPI has no 16-bit float types: those reductions move the members' bytes
// and reduce here, in rank order (as the interpreter does).
bool ReducesLocally(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16;
}

// output = blocks[0] op blocks[1] op ... (n blocks of `count` elements).
void ReduceBlocks(ElementType type, ReductionKind kind, const std::vector<char>& blocks,
                  int64_t n, void* output, int64_t count) {
  const size_t bytes = static_cast<size_t>(count * ElementBytes(type));
  std::memcpy(output, blocks.data(), bytes);
  for (int64_t r = 1; r < n; ++r) {
    ReduceInto(type, kind, output, blocks.data() + static_cast<size_t>(r) * bytes, count);
  }
}

// A reduction of a type MPI cannot reduce (ReducesLocally): `call`, an
// MPI collective on MPI_BYTE with the signature of MPI_Allgather and
// MPI_Alltoall, brings one block of `count` elements from every member to
// this rank, which reduces them in rank order into `output`.
using ByteExchange = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);
absl::Status ReduceExchangedBlocks(const CollectiveKey& key, MPI_Comm comm, int64_t members,
                                   const char* call_name, ByteExchange call, ElementType type,
                                   ReductionKind kind, const void* input, void* output,
                                   int64_t count) {
  if (absl::Status s = CheckReduction(type, kind); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(key.name, ": ", s.message()));
  }
  const int64_t bytes = count * ElementBytes(type);
  absl::StatusOr<int> n = Count(key, bytes);
  if (!n.ok()) return n.status();
  std::vector<char> blocks(static_cast<size_t>(bytes) * members);
  if (absl::Status s =
          MpiError(key, call_name, call(input, *n, MPI_BYTE, blocks.data(), *n, MPI_BYTE, comm));
      !s.ok()) {
    return s;
  }
  ReduceBlocks(type, kind, blocks, members, output, count);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<MpiSession>> MpiSession::Initialize(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return absl::FailedPreconditionError("MPI is already initialized");
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
    return absl::UnavailableError("MPI_Init_thread failed");
  }
  std::shared_ptr<MpiSession> session(new MpiSession());
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  session->rank_ = rank;
  session->size_ = size;
  return session;
}

MpiSession::~MpiSession() { MPI_Finalize(); }

absl::Status MpiSession::GatherBytes(const void* input, void* output, int64_t bytes) {
  const CollectiveKey key{"gathering results", 0};
  absl::StatusOr<int> n = Count(key, bytes);
  if (!n.ok()) return n.status();
  return MpiError(key, "MPI_Allgather",
                  MPI_Allgather(input, *n, MPI_BYTE, output, *n, MPI_BYTE, MPI_COMM_WORLD));
}

MpiCommunicator::MpiCommunicator(std::shared_ptr<MpiSession> session)
    : session_(std::move(session)) {}

MpiCommunicator::~MpiCommunicator() {
  for (auto& [group, handle] : comms_) {
    MPI_Comm comm = AsComm(handle);
    MPI_Comm_free(&comm);
  }
}

absl::StatusOr<void*> MpiCommunicator::CommOf(const CollectiveKey& key, DeviceGroup group) {
  int64_t index;
  if (absl::Status s = CheckGroup(key, group, rank(), size(), &index); !s.ok()) return s;
  std::vector<int64_t> members(group.begin(), group.end());
  auto it = comms_.find(members);
  if (it != comms_.end()) return it->second;
  MPI_Group world_group, sub_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  std::vector<int> ranks(members.begin(), members.end());
  MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &sub_group);
  MPI_Comm comm;
  // The tag tells apart groups being made at once; the first member is unique per group.
  const int code = MPI_Comm_create_group(MPI_COMM_WORLD, sub_group, ranks[0], &comm);
  MPI_Group_free(&sub_group);
  MPI_Group_free(&world_group);
  if (absl::Status s = MpiError(key, "MPI_Comm_create_group", code); !s.ok()) return s;
  void* handle = reinterpret_cast<void*>(comm);
  comms_[members] = handle;
  return handle;
}

absl::Status MpiCommunicator::AllReduce(const CollectiveKey& key, DeviceGroup group,
                                        ElementType type, ReductionKind kind, const void* input,
                                        void* output, int64_t count) {
  absl::StatusOr<void*> comm = CommOf(key, group);
  if (!comm.ok()) return comm.status();
  if (ReducesLocally(type)) {
    return ReduceExchangedBlocks(key, AsComm(*comm), static_cast<int64_t>(group.size()),
                                 "MPI_Allgather", &MPI_Allgather, type, kind, input, output,
                                 count);
  }
  absl::StatusOr<MPI_Datatype> datatype = TypeOf(key, type);
  if (!datatype.ok()) return datatype.status();
  absl::StatusOr<MPI_Op> op = OpOf(key, type, kind);
  if (!op.ok()) return op.status();
  absl::StatusOr<int> n = Count(key, count);
  if (!n.ok()) return n.status();
  return MpiError(key, "MPI_Allreduce",
                  MPI_Allreduce(input == output ? MPI_IN_PLACE : input, output, *n, *datatype,
                                *op, AsComm(*comm)));
}

absl::Status MpiCommunicator::AllGather(const CollectiveKey& key, DeviceGroup group,
                                        const void* input, void* output, int64_t bytes) {
  absl::StatusOr<void*> comm = CommOf(key, group);
  if (!comm.ok()) return comm.status();
  absl::StatusOr<int> n = Count(key, bytes);
  if (!n.ok()) return n.status();
  return MpiError(key, "MPI_Allgather",
                  MPI_Allgather(input, *n, MPI_BYTE, output, *n, MPI_BYTE, AsComm(*comm)));
}

absl::Status MpiCommunicator::ReduceScatter(const CollectiveKey& key, DeviceGroup group,
                                            ElementType type, ReductionKind kind,
                                            const void* input, void* output, int64_t count) {
  absl::StatusOr<void*> comm = CommOf(key, group);
  if (!comm.ok()) return comm.status();
  if (ReducesLocally(type)) {
    // Block i of every member's input goes to member i, which reduces them.
    return ReduceExchangedBlocks(key, AsComm(*comm), static_cast<int64_t>(group.size()),
                                 "MPI_Alltoall", &MPI_Alltoall, type, kind, input, output, count);
  }
  absl::StatusOr<MPI_Datatype> datatype = TypeOf(key, type);
  if (!datatype.ok()) return datatype.status();
  absl::StatusOr<MPI_Op> op = OpOf(key, type, kind);
  if (!op.ok()) return op.status();
  absl::StatusOr<int> n = Count(key, count);
  if (!n.ok()) return n.status();
  return MpiError(key, "MPI_Reduce_scatter_block",
                  MPI_Reduce_scatter_block(input, output, *n, *datatype, *op, AsComm(*comm)));
}

absl::Status MpiCommunicator::AllToAll(const CollectiveKey& key, DeviceGroup group,
                                       const void* input, void* output, int64_t bytes) {
  absl::StatusOr<void*> comm = CommOf(key, group);
  if (!comm.ok()) return comm.status();
  absl::StatusOr<int> n = Count(key, bytes);
  if (!n.ok()) return n.status();
  return MpiError(key, "MPI_Alltoall",
                  MPI_Alltoall(input, *n, MPI_BYTE, output, *n, MPI_BYTE, AsComm(*comm)));
}

absl::Status MpiCommunicator::CollectivePermute(
    const CollectiveKey& key, absl::Span<const std::pair<int64_t, int64_t>> pairs,
    const void* input, void* output, int64_t bytes) {
  absl::StatusOr<int> n = Count(key, bytes);
  if (!n.ok()) return n.status();
  std::vector<MPI_Request> requests;
  // Received into a copy: the input may be the output and still being sent.
  std::vector<char> received;
  bool receives = false;
  for (const auto& [source, target] : pairs) {
    if (source < 0 || source >= size() || target < 0 || target >= size()) {
      return absl::InvalidArgumentError(absl::StrCat(key.name, ": pair {", source, ",", target,
                                                     "} out of range"));
    }
    if (target == rank()) {
      receives = true;
      received.resize(static_cast<size_t>(bytes));
      requests.emplace_back();
      MPI_Irecv(received.data(), *n, MPI_BYTE, static_cast<int>(source), 0, MPI_COMM_WORLD,
                &requests.back());
    }
  }
  for (const auto& [source, target] : pairs) {
    if (source == rank()) {
      requests.emplace_back();
      MPI_Isend(input, *n, MPI_BYTE, static_cast<int>(target), 0, MPI_COMM_WORLD,
                &requests.back());
    }
  }
  const int code =
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  if (absl::Status s = MpiError(key, "MPI_Waitall", code); !s.ok()) return s;
  if (receives) {
    std::memcpy(output, received.data(), static_cast<size_t>(bytes));
  } else {
    std::memset(output, 0, static_cast<size_t>(bytes));
  }
  return absl::OkStatus();
}

absl::Status MpiCommunicator::Broadcast(const CollectiveKey& key, DeviceGroup group,
                                        int64_t root, const void* input, void* output,
                                        int64_t bytes) {
  absl::StatusOr<void*> comm = CommOf(key, group);
  if (!comm.ok()) return comm.status();
  if (root < 0 || root >= static_cast<int64_t>(group.size())) {
    return absl::InvalidArgumentError(absl::StrCat(key.name, ": root ", root, " out of range"));
  }
  absl::StatusOr<int> n = Count(key, bytes);
  if (!n.ok()) return n.status();
  if (group[root] == rank() && input != output) {
    std::memcpy(output, input, static_cast<size_t>(bytes));
  }
  return MpiError(key, "MPI_Bcast",
                  MPI_Bcast(output, *n, MPI_BYTE, static_cast<int>(root), AsComm(*comm)));
}

}  // namespace runtime
}  // namespace hloc
