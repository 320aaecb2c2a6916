// NCCL collective thunks (see collective_thunk.h).
#include "runtime/cuda/collective_thunk.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cuda/status_util.h"
#include "runtime/ragged_all_to_all.h"

namespace hloc {
namespace cuda {
namespace {

using runtime::CollectiveOp;
using runtime::ElementType;
using runtime::ReductionKind;

std::string Indent(int n) { return std::string(static_cast<size_t>(n) * 2, ' '); }


// NCCL's operation; pred's sum/or are max and product/and are min (XLA's
// add and multiply over pred); none for and/or over other types.
std::optional<ncclRedOp_t> NcclReduction(ElementType type, ReductionKind kind) {
  if (type == ElementType::kPred) {
    switch (kind) {
      case ReductionKind::kSum:
      case ReductionKind::kMax:
      case ReductionKind::kOr: return ncclMax;
      case ReductionKind::kProduct:
      case ReductionKind::kMin:
      case ReductionKind::kAnd: return ncclMin;
    }
  }
  switch (kind) {
    case ReductionKind::kSum: return ncclSum;
    case ReductionKind::kProduct: return ncclProd;
    case ReductionKind::kMin: return ncclMin;
    case ReductionKind::kMax: return ncclMax;
    case ReductionKind::kAnd:
    case ReductionKind::kOr: return std::nullopt;
  }
  return std::nullopt;
}

bool Reduces(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter;
}

bool Repacks(CollectiveOp op) {
  return op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter ||
         op == CollectiveOp::kAllToAll;
}

int64_t GroupSize(const runtime::CollectiveSpec& spec) {
  return spec.groups.empty() ? 1 : static_cast<int64_t>(spec.groups[0].size());
}

void* Pointer(CUdeviceptr p, int64_t offset = 0) {
  return reinterpret_cast<void*>(p + static_cast<CUdeviceptr>(offset));
}

cudaStream_t StreamOf(const GpuExecutionContext& context) {
  return reinterpret_cast<cudaStream_t>(context.device->stream());
}

absl::Status CopyRows(CudaDevice& device, const std::vector<RowCopy>& copies,
                      CUdeviceptr source, CUdeviceptr destination) {
  for (const RowCopy& c : copies) {
    HLOC_CUDA_RETURN_IF_ERROR(device.CopyRowsOnDevice(destination + c.destination,
                                                      c.destination_pitch, source + c.source,
                                                      c.source_pitch, c.row_bytes, c.rows));
  }
  return absl::OkStatus();
}

absl::Status Pack(CudaDevice& device, CUdeviceptr source, CUdeviceptr destination, int64_t outer,
                  int64_t n, int64_t block) {
  return CopyRows(device, PackCopies(outer, n, block), source, destination);
}

absl::Status Unpack(CudaDevice& device, CUdeviceptr source, CUdeviceptr destination,
                    int64_t outer, int64_t n, int64_t block) {
  return CopyRows(device, UnpackCopies(outer, n, block), source, destination);
}

}  // namespace

std::optional<ncclDataType_t> NcclType(ElementType type) {
  switch (type) {
    case ElementType::kPred: return ncclUint8;
    case ElementType::kS8: return ncclInt8;
    case ElementType::kU8: return ncclUint8;
    case ElementType::kS32: return ncclInt32;
    case ElementType::kU32: return ncclUint32;
    case ElementType::kS64: return ncclInt64;
    case ElementType::kU64: return ncclUint64;
    case ElementType::kF16: return ncclFloat16;
    case ElementType::kBF16: return ncclBfloat16;
    case ElementType::kF32: return ncclFloat32;
    case ElementType::kF64: return ncclFloat64;
    case ElementType::kS16:
    case ElementType::kU16: return std::nullopt;
  }
  return std::nullopt;
}

std::vector<RowCopy> PackCopies(int64_t outer, int64_t n, int64_t block) {
  // Block j of every row -> the j-th run of `outer` blocks.
  std::vector<RowCopy> copies;
  for (int64_t j = 0; j < n; ++j) {
    copies.push_back(RowCopy{j * outer * block, block, j * block, n * block, block, outer});
  }
  return copies;
}

std::vector<RowCopy> UnpackCopies(int64_t outer, int64_t n, int64_t block) {
  std::vector<RowCopy> copies;
  for (int64_t j = 0; j < n; ++j) {
    copies.push_back(RowCopy{j * block, n * block, j * outer * block, block, block, outer});
  }
  return copies;
}

absl::Status CheckNcclSupport(const runtime::CollectiveSpec& spec) {
  if (!Reduces(spec.op)) return absl::OkStatus();
  if (!NcclType(spec.type).has_value()) {
    return absl::UnimplementedError(absl::StrCat(
        "NCCL has no reduction over ", runtime::ElementTypeName(spec.type)));
  }
  if (!NcclReduction(spec.type, spec.reduction).has_value()) {
    return absl::UnimplementedError(
        absl::StrCat("NCCL has no ", runtime::ReductionKindName(spec.reduction),
                     " reduction over ", runtime::ElementTypeName(spec.type),
                     " (only sum, product, min and max)"));
  }
  return absl::OkStatus();
}

int64_t CollectiveScratchBytes(const runtime::CollectiveSpec& spec) {
  if (spec.op == CollectiveOp::kRaggedAllToAll) {
    // Headers sent and received, then the verdict (see RunRaggedAllToAll).
    return 2 * spec.ragged.entries * static_cast<int64_t>(sizeof(runtime::RaggedHeader)) +
           2 * static_cast<int64_t>(sizeof(int64_t));
  }
  const int64_t n = GroupSize(spec);
  if (!Repacks(spec.op) || n == 1) return 0;
  int64_t bytes = 0;
  for (const runtime::CollectiveLeaf& leaf : spec.leaves) {
    if (leaf.outer == 1) continue;
    const int64_t whole = n * leaf.outer * leaf.block_bytes;  // n blocks per row.
    // all-to-all packs the input and receives into a second half.
    bytes = std::max(bytes, spec.op == CollectiveOp::kAllToAll ? 2 * whole : whole);
  }
  return bytes;
}

absl::Status CollectiveThunk::Initialize(GpuInitContext& context) {
  if (!UsesNccl()) {
    // The ids need only the rank (0 alone), not NCCL.
    rank_ = context.collectives != nullptr ? context.collectives->rank : 0;
    return absl::OkStatus();
  }
  timeout_ = context.collective_timeout;
  if (context.collectives == nullptr) {
    HLOC_CUDA_ASSIGN_OR_RETURN(std::shared_ptr<NcclClique> alone,
                               NcclClique::Create({context.device->info().ordinal}));
    context.collectives = std::make_shared<NcclRank>(NcclRank{std::move(alone), 0});
  }
  clique_ = context.collectives->clique;
  rank_ = context.collectives->rank;
  if (spec_.op == CollectiveOp::kCollectivePermute) {
    for (const auto& [source, target] : spec_.pairs) {
      if (std::max(source, target) >= clique_->size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            label_, ": source_target_pairs name device ", std::max(source, target),
            " outside the ", clique_->size(), " devices the program runs on"));
      }
    }
    group_.clear();
    for (int64_t d = 0; d < clique_->size(); ++d) group_.push_back(d);
    index_ = rank_;
  } else {
    HLOC_CUDA_ASSIGN_OR_RETURN(runtime::DeviceGroup group,
                               runtime::GroupContaining(spec_, rank_, label_));
    group_.assign(group.begin(), group.end());
    index_ = std::find(group_.begin(), group_.end(), rank_) - group_.begin();
  }
  absl::StatusOr<ncclComm_t> comm = clique_->Communicator(group_, index_, StartWait());
  if (!comm.ok()) {
    return absl::Status(comm.status().code(),
                        absl::StrCat(label_, ": ", comm.status().message()));
  }
  comm_ = *comm;
  // NCCL may leave another GPU's context current.
  return context.device->MakeCurrent();
}

absl::Status CollectiveThunk::Execute(GpuExecutionContext& context) const {
  CudaDevice& device = *context.device;
  if (spec_.op == CollectiveOp::kReplicaId || spec_.op == CollectiveOp::kPartitionId) {
    const uint32_t id = static_cast<uint32_t>(
        spec_.op == CollectiveOp::kReplicaId ? rank_ / spec_.num_partitions
                                             : rank_ % spec_.num_partitions);
    // Little-endian bytes, one memset each: nothing on the host to outlive
    // the call, and capturable into a graph.
    for (int b = 0; b < 4; ++b) {
      HLOC_CUDA_RETURN_IF_ERROR(
          device.Memset(context.buffers[buffers_[0]] + b, static_cast<uint8_t>(id >> (8 * b)), 1));
    }
    return absl::OkStatus();
  }
  if (clique_ == nullptr) return absl::FailedPreconditionError(label_ + " not initialized");
  const NcclWait wait = StartWait();
  HLOC_CUDA_RETURN_IF_ERROR(Issue(context, wait));
  return WaitForStream(context, wait);
}

NcclWait CollectiveThunk::StartWait() const {
  return NcclWait::Starting(absl::StrCat(label_, " (", runtime::CollectiveOpName(spec_.op), ")"),
                            group_, rank_, timeout_);
}

absl::Status CollectiveThunk::Settle(const std::function<absl::Status()>& calls,
                                     const NcclWait& wait) const {
  if (absl::Status issued = clique_->Enqueue(comm_, calls); !issued.ok()) return issued;
  return clique_->Await(comm_, nullptr, wait);
}

absl::Status CollectiveThunk::WaitForStream(GpuExecutionContext& context,
                                            const NcclWait& wait) const {
  if (!Watched()) return absl::OkStatus();
  CudaDevice* device = context.device;
  return clique_->Await(
      comm_, [device] { return device->StreamDone(); }, wait);
}

// Queues the op's NCCL calls (and repacking copies) on the stream.
absl::Status CollectiveThunk::Issue(GpuExecutionContext& context, const NcclWait& wait) const {
  const size_t leaves = spec_.leaves.size();
  auto in = [&](size_t k) { return context.buffers[buffers_[k]]; };
  auto out = [&](size_t k) { return context.buffers[buffers_[leaves + k]]; };
  const NcclLibrary& nccl = clique_->nccl();
  const cudaStream_t stream = StreamOf(context);
  const int64_t width = runtime::ElementBytes(spec_.type);
  switch (spec_.op) {
    case CollectiveOp::kAllReduce: {
      const ncclDataType_t type = *NcclType(spec_.type);
      const ncclRedOp_t op = *NcclReduction(spec_.type, spec_.reduction);
      return Settle(
          [&]() -> absl::Status {
            HLOC_CUDA_RETURN_IF_ERROR(nccl.Check(nccl.ncclGroupStart(), "ncclGroupStart"));
            absl::Status status;
            for (size_t k = 0; k < leaves && status.ok(); ++k) {
              status = nccl.CheckIssued(
                  nccl.ncclAllReduce(Pointer(in(k)), Pointer(out(k)),
                                     static_cast<size_t>(spec_.leaves[k].elements), type, op,
                                     comm_, stream),
                  absl::StrCat("ncclAllReduce ", label_));
            }
            absl::Status end = nccl.CheckIssued(nccl.ncclGroupEnd(), "ncclGroupEnd");
            return status.ok() ? end : status;
          },
          wait);
    }
    case CollectiveOp::kAllGather:
      for (size_t k = 0; k < leaves; ++k) HLOC_CUDA_RETURN_IF_ERROR(RunAllGather(context, k, wait));
      return absl::OkStatus();
    case CollectiveOp::kReduceScatter:
      for (size_t k = 0; k < leaves; ++k) {
        HLOC_CUDA_RETURN_IF_ERROR(RunReduceScatter(context, k, wait));
      }
      return absl::OkStatus();
    case CollectiveOp::kAllToAll:
      for (size_t k = 0; k < leaves; ++k) HLOC_CUDA_RETURN_IF_ERROR(RunAllToAll(context, k, wait));
      return absl::OkStatus();
    case CollectiveOp::kAllToAllTuple: {
      // Operand j goes to member j; result i comes from member i.
      const size_t bytes = static_cast<size_t>(spec_.leaves[0].elements * width);
      return Settle(
          [&]() -> absl::Status {
            HLOC_CUDA_RETURN_IF_ERROR(nccl.Check(nccl.ncclGroupStart(), "ncclGroupStart"));
            absl::Status status;
            for (size_t j = 0; j < leaves && status.ok(); ++j) {
              status = nccl.CheckIssued(nccl.ncclSend(Pointer(in(j)), bytes, ncclUint8,
                                                      static_cast<int>(j), comm_, stream),
                                        absl::StrCat("ncclSend ", label_));
              if (status.ok()) {
                status = nccl.CheckIssued(nccl.ncclRecv(Pointer(out(j)), bytes, ncclUint8,
                                                        static_cast<int>(j), comm_, stream),
                                          absl::StrCat("ncclRecv ", label_));
              }
            }
            absl::Status end = nccl.CheckIssued(nccl.ncclGroupEnd(), "ncclGroupEnd");
            return status.ok() ? end : status;
          },
          wait);
    }
    case CollectiveOp::kCollectivePermute:
      return RunPermute(context, wait);
    case CollectiveOp::kBroadcast:
      for (size_t k = 0; k < leaves; ++k) {
        HLOC_CUDA_RETURN_IF_ERROR(Settle(
            [&] {
              return nccl.CheckIssued(
                  nccl.ncclBroadcast(Pointer(in(k)), Pointer(out(k)),
                                     static_cast<size_t>(spec_.leaves[k].elements * width),
                                     ncclUint8, /*root=*/0, comm_, stream),
                  absl::StrCat("ncclBroadcast ", label_));
            },
            wait));
      }
      return absl::OkStatus();
    case CollectiveOp::kRaggedAllToAll:
      return RunRaggedAllToAll(context, wait);
    case CollectiveOp::kReplicaId:
    case CollectiveOp::kPartitionId:
      break;
  }
  return absl::OkStatus();
}

absl::Status CollectiveThunk::RunAllGather(GpuExecutionContext& context, size_t k,
                                           const NcclWait& wait) const {
  const NcclLibrary& nccl = clique_->nccl();
  const runtime::CollectiveLeaf& leaf = spec_.leaves[k];
  const int64_t n = static_cast<int64_t>(group_.size());
  const int64_t bytes = leaf.outer * leaf.block_bytes;  // This device's operand.
  const CUdeviceptr input = context.buffers[buffers_[k]];
  const CUdeviceptr output = context.buffers[buffers_[spec_.leaves.size() + k]];
  const bool repack = leaf.outer > 1 && n > 1;
  const CUdeviceptr gathered = repack ? context.buffers[buffers_.back()] : output;
  HLOC_CUDA_RETURN_IF_ERROR(
      Settle(
          [&] {
            return nccl.CheckIssued(
                nccl.ncclAllGather(Pointer(input), Pointer(gathered), static_cast<size_t>(bytes),
                                   ncclUint8, comm_, StreamOf(context)),
                absl::StrCat("ncclAllGather ", label_));
          },
          wait));
  if (!repack) return absl::OkStatus();
  return Unpack(*context.device, gathered, output, leaf.outer, n, leaf.block_bytes);
}

absl::Status CollectiveThunk::RunReduceScatter(GpuExecutionContext& context, size_t k,
                                               const NcclWait& wait) const {
  const NcclLibrary& nccl = clique_->nccl();
  const runtime::CollectiveLeaf& leaf = spec_.leaves[k];
  const int64_t n = static_cast<int64_t>(group_.size());
  const CUdeviceptr input = context.buffers[buffers_[k]];
  const CUdeviceptr output = context.buffers[buffers_[spec_.leaves.size() + k]];
  const bool repack = leaf.outer > 1 && n > 1;
  const CUdeviceptr packed = repack ? context.buffers[buffers_.back()] : input;
  if (repack) {
    HLOC_CUDA_RETURN_IF_ERROR(
        Pack(*context.device, input, packed, leaf.outer, n, leaf.block_bytes));
  }
  const int64_t count = leaf.outer * leaf.block_bytes / runtime::ElementBytes(spec_.type);
  return Settle(
      [&] {
        return nccl.CheckIssued(
            nccl.ncclReduceScatter(Pointer(packed), Pointer(output), static_cast<size_t>(count),
                                   *NcclType(spec_.type),
                                   *NcclReduction(spec_.type, spec_.reduction), comm_,
                                   StreamOf(context)),
            absl::StrCat("ncclReduceScatter ", label_));
      },
      wait);
}

absl::Status CollectiveThunk::RunAllToAll(GpuExecutionContext& context, size_t k,
                                          const NcclWait& wait) const {
  const NcclLibrary& nccl = clique_->nccl();
  const runtime::CollectiveLeaf& leaf = spec_.leaves[k];
  const int64_t n = static_cast<int64_t>(group_.size());
  const int64_t chunk = leaf.outer * leaf.block_bytes;  // What goes to one member.
  CUdeviceptr input = context.buffers[buffers_[k]];
  CUdeviceptr output = context.buffers[buffers_[spec_.leaves.size() + k]];
  const bool repack = leaf.outer > 1 && n > 1;
  const CUdeviceptr final_output = output;
  if (repack) {
    const CUdeviceptr scratch = context.buffers[buffers_.back()];
    HLOC_CUDA_RETURN_IF_ERROR(Pack(*context.device, input, scratch, leaf.outer, n,
                                   leaf.block_bytes));
    input = scratch;
    output = scratch + n * chunk;
  }
  HLOC_CUDA_RETURN_IF_ERROR(Settle(
      [&]() -> absl::Status {
        HLOC_CUDA_RETURN_IF_ERROR(nccl.Check(nccl.ncclGroupStart(), "ncclGroupStart"));
        absl::Status status;
        for (int64_t j = 0; j < n && status.ok(); ++j) {
          status = nccl.CheckIssued(
              nccl.ncclSend(Pointer(input, j * chunk), static_cast<size_t>(chunk), ncclUint8,
                            static_cast<int>(j), comm_, StreamOf(context)),
              absl::StrCat("ncclSend ", label_));
          if (status.ok()) {
            status = nccl.CheckIssued(
                nccl.ncclRecv(Pointer(output, j * chunk), static_cast<size_t>(chunk), ncclUint8,
                              static_cast<int>(j), comm_, StreamOf(context)),
                absl::StrCat("ncclRecv ", label_));
          }
        }
        absl::Status end = nccl.CheckIssued(nccl.ncclGroupEnd(), "ncclGroupEnd");
        return status.ok() ? end : status;
      },
      wait));
  if (!repack) return absl::OkStatus();
  return Unpack(*context.device, output, final_output, leaf.outer, n, leaf.block_bytes);
}

// ragged_all_to_all.h's three exchanges with NCCL: the index arrays are read
// back to the host, the headers and the verdict go through the scratch
// buffer, and the rows move with one grouped ncclSend / ncclRecv per
// non-empty run straight between input and result (a receiver knows each
// run's size and place from its header; NCCL matches a pair's sends and
// receives in the order they are issued).
absl::Status CollectiveThunk::RunRaggedAllToAll(GpuExecutionContext& context,
                                                const NcclWait& wait) const {
  CudaDevice& device = *context.device;
  const NcclLibrary& nccl = clique_->nccl();
  const cudaStream_t stream = StreamOf(context);
  const runtime::RaggedRows& shape = spec_.ragged;
  auto buffer = [&](size_t k) { return context.buffers[buffers_[k]]; };
  const CUdeviceptr input = buffer(0), output = buffer(1), result = buffer(6);
  const CUdeviceptr scratch = context.buffers[buffers_.back()];
  const int64_t index_bytes = shape.entries * (shape.index_is_64bit ? 8 : 4);
  std::vector<std::vector<char>> index(4, std::vector<char>(static_cast<size_t>(index_bytes)));
  for (size_t i = 0; i < 4; ++i) {
    HLOC_CUDA_RETURN_IF_ERROR(device.CopyToHost(index[i].data(), buffer(2 + i), index_bytes));
  }
  HLOC_CUDA_RETURN_IF_ERROR(device.Synchronize());
  const runtime::RaggedBuffers host{nullptr,          nullptr,          index[0].data(),
                                    index[1].data(), index[2].data(), index[3].data(),
                                    nullptr};
  const runtime::CollectiveKey key{label_, 0};
  const int64_t n = static_cast<int64_t>(group_.size());
  std::vector<runtime::RaggedHeader> sent;
  int64_t longest = 0;
  absl::Status problem =
      runtime::PlanRaggedSends(key, group_, index_, shape, host, &sent, &longest);
  if (sent.empty()) return problem;
  const int64_t k = shape.entries / n;
  const int64_t headers = shape.entries * static_cast<int64_t>(sizeof(runtime::RaggedHeader));
  const int64_t per_peer = k * static_cast<int64_t>(sizeof(runtime::RaggedHeader));

  // A member that found a problem reports it even when an exchange fails
  // (another member, told of the problem, may have aborted the clique).
#define HLOC_RAGGED_RETURN_IF_ERROR(expr)                  \
  do {                                                     \
    if (absl::Status s_ = (expr); !s_.ok()) {              \
      return problem.ok() ? s_ : problem;                  \
    }                                                      \
  } while (false)
  // 1. Headers.
  HLOC_RAGGED_RETURN_IF_ERROR(device.CopyToDevice(scratch, sent.data(), headers));
  HLOC_RAGGED_RETURN_IF_ERROR(Settle(
      [&]() -> absl::Status {
        HLOC_CUDA_RETURN_IF_ERROR(nccl.Check(nccl.ncclGroupStart(), "ncclGroupStart"));
        absl::Status status;
        for (int64_t j = 0; j < n && status.ok(); ++j) {
          status = nccl.CheckIssued(
              nccl.ncclSend(Pointer(scratch, j * per_peer), static_cast<size_t>(per_peer),
                            ncclUint8, static_cast<int>(j), comm_, stream),
              absl::StrCat("ncclSend ", label_));
          if (status.ok()) {
            status = nccl.CheckIssued(
                nccl.ncclRecv(Pointer(scratch, headers + j * per_peer),
                              static_cast<size_t>(per_peer), ncclUint8, static_cast<int>(j), comm_,
                              stream),
                absl::StrCat("ncclRecv ", label_));
          }
        }
        absl::Status end = nccl.CheckIssued(nccl.ncclGroupEnd(), "ncclGroupEnd");
        return status.ok() ? end : status;
      },
      wait));
  std::vector<runtime::RaggedHeader> received(sent.size());
  HLOC_RAGGED_RETURN_IF_ERROR(device.CopyToHost(received.data(), scratch + headers, headers));
  HLOC_RAGGED_RETURN_IF_ERROR(WaitForStream(context, wait));
  HLOC_RAGGED_RETURN_IF_ERROR(device.Synchronize());
  if (problem.ok()) {
    problem = runtime::CheckRaggedReceives(key, group_, index_, shape, index[3].data(), received);
  }

  // 2. The verdict: whether any member failed (the block size the host's
  // exchange needs is not needed here).
  int64_t verdict[2] = {problem.ok() ? 0 : 1, longest};
  const CUdeviceptr verdict_on_device = scratch + 2 * headers;
  HLOC_RAGGED_RETURN_IF_ERROR(device.CopyToDevice(verdict_on_device, verdict, sizeof(verdict)));
  HLOC_RAGGED_RETURN_IF_ERROR(Settle(
      [&] {
        return nccl.CheckIssued(nccl.ncclAllReduce(Pointer(verdict_on_device),
                                                   Pointer(verdict_on_device), 2, ncclInt64,
                                                   ncclMax, comm_, stream),
                                absl::StrCat("ncclAllReduce ", label_));
      },
      wait));
  HLOC_RAGGED_RETURN_IF_ERROR(device.CopyToHost(verdict, verdict_on_device, sizeof(verdict)));
  HLOC_RAGGED_RETURN_IF_ERROR(WaitForStream(context, wait));
  HLOC_RAGGED_RETURN_IF_ERROR(device.Synchronize());
#undef HLOC_RAGGED_RETURN_IF_ERROR
  if (!problem.ok()) return problem;
  if (verdict[0] != 0) return runtime::RaggedPeerFailed(key, group_);

  // 3. Rows.
  if (result != output) {
    HLOC_CUDA_RETURN_IF_ERROR(
        device.CopyOnDevice(result, output, shape.output_rows * shape.row_bytes));
  }
  return Settle(
      [&]() -> absl::Status {
        HLOC_CUDA_RETURN_IF_ERROR(nccl.Check(nccl.ncclGroupStart(), "ncclGroupStart"));
        absl::Status status;
        for (int64_t j = 0; j < n && status.ok(); ++j) {
          for (int64_t u = 0; u < k && status.ok(); ++u) {
            const int64_t i = j * k + u;
            const runtime::RaggedHeader& out = sent[static_cast<size_t>(i)];
            if (out.rows > 0) {
              const int64_t from = runtime::ReadRaggedIndex(shape, host.input_offsets, i);
              status = nccl.CheckIssued(
                  nccl.ncclSend(Pointer(input, from * shape.row_bytes),
                                static_cast<size_t>(out.rows * shape.row_bytes), ncclUint8,
                                static_cast<int>(j), comm_, stream),
                  absl::StrCat("ncclSend ", label_));
            }
            const runtime::RaggedHeader& in = received[static_cast<size_t>(i)];
            if (status.ok() && in.rows > 0) {
              status = nccl.CheckIssued(
                  nccl.ncclRecv(Pointer(result, in.output_offset * shape.row_bytes),
                                static_cast<size_t>(in.rows * shape.row_bytes), ncclUint8,
                                static_cast<int>(j), comm_, stream),
                  absl::StrCat("ncclRecv ", label_));
            }
          }
        }
        absl::Status end = nccl.CheckIssued(nccl.ncclGroupEnd(), "ncclGroupEnd");
        return status.ok() ? end : status;
      },
      wait);
}

absl::Status CollectiveThunk::RunPermute(GpuExecutionContext& context, const NcclWait& wait) const {
  const NcclLibrary& nccl = clique_->nccl();
  const size_t leaves = spec_.leaves.size();
  const int64_t width = runtime::ElementBytes(spec_.type);
  bool targeted = false;
  for (const auto& [source, target] : spec_.pairs) targeted |= target == rank_;
  if (!targeted) {
    // XLA: a device no pair sends to gets zeros.
    for (size_t k = 0; k < leaves; ++k) {
      HLOC_CUDA_RETURN_IF_ERROR(context.device->Memset(context.buffers[buffers_[leaves + k]], 0,
                                                       spec_.leaves[k].elements * width));
    }
  }
  return Settle(
      [&]() -> absl::Status {
        HLOC_CUDA_RETURN_IF_ERROR(nccl.Check(nccl.ncclGroupStart(), "ncclGroupStart"));
        absl::Status status;
        for (size_t k = 0; k < leaves && status.ok(); ++k) {
          const size_t bytes = static_cast<size_t>(spec_.leaves[k].elements * width);
          for (const auto& [source, target] : spec_.pairs) {
            if (!status.ok()) break;
            if (source == rank_) {
              status = nccl.CheckIssued(
                  nccl.ncclSend(Pointer(context.buffers[buffers_[k]]), bytes, ncclUint8,
                                static_cast<int>(target), comm_, StreamOf(context)),
                  absl::StrCat("ncclSend ", label_));
            }
            if (status.ok() && target == rank_) {
              status = nccl.CheckIssued(
                  nccl.ncclRecv(Pointer(context.buffers[buffers_[leaves + k]]), bytes, ncclUint8,
                                static_cast<int>(source), comm_, StreamOf(context)),
                  absl::StrCat("ncclRecv ", label_));
            }
          }
        }
        absl::Status end = nccl.CheckIssued(nccl.ncclGroupEnd(), "ncclGroupEnd");
        return status.ok() ? end : status;
      },
      wait);
}

void CollectiveThunk::AppendTo(std::string* out, int indent) const {
  absl::StrAppend(out, Indent(indent), "nccl ", runtime::CollectiveOpName(spec_.op), " ", label_);
  if (Reduces(spec_.op)) {
    absl::StrAppend(out, " ", runtime::ReductionKindName(spec_.reduction), " ",
                    runtime::ElementTypeName(spec_.type));
  }
  if (!spec_.groups.empty()) {
    absl::StrAppend(out, " groups={",
                    absl::StrJoin(spec_.groups, ",",
                                  [](std::string* s, const std::vector<int64_t>& g) {
                                    absl::StrAppend(s, "{", absl::StrJoin(g, ","), "}");
                                  }),
                    "}");
  }
  if (!spec_.pairs.empty()) {
    absl::StrAppend(out, " pairs={",
                    absl::StrJoin(spec_.pairs, ",",
                                  [](std::string* s, const std::pair<int64_t, int64_t>& p) {
                                    absl::StrAppend(s, "{", p.first, ",", p.second, "}");
                                  }),
                    "}");
  }
  absl::StrAppend(out, " buffers=", absl::StrJoin(buffers_, ","), "\n");
}

}  // namespace cuda
}  // namespace hloc
