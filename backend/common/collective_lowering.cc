// Decoding collectives into runtime specs (see collective_lowering.h).
#include "backend/common/collective_lowering.h"

#include "absl/strings/str_cat.h"
#include "hlo/evaluator/ops.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace backend {
namespace {

absl::Status Error(const HloInstruction& hlo, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("instruction %", hlo.name(), " (",
                                                 HloOpcodeName(hlo.opcode()), "): ", message));
}

// The runtime's type for elements of `t`. Ops that only move data (no
// reduction) take any type of 1, 2, 4 or 8 bytes as the unsigned integer of
// its width: f8 and the other narrow floats, c64.
absl::StatusOr<runtime::ElementType> ElementTypeOf(const HloInstruction& hlo, PrimitiveType t,
                                                   bool reduces) {
  if (!reduces && t != xla::PRED && t != xla::F16 && t != xla::BF16 && !IsInteger(t) &&
      t != xla::F32 && t != xla::F64) {
    switch (ByteWidth(t)) {
      case 1: return runtime::ElementType::kU8;
      case 2: return runtime::ElementType::kU16;
      case 4: return runtime::ElementType::kU32;
      case 8: return runtime::ElementType::kU64;
      default: break;
    }
  }
  switch (t) {
    case xla::PRED: return runtime::ElementType::kPred;
    case xla::S8: return runtime::ElementType::kS8;
    case xla::S16: return runtime::ElementType::kS16;
    case xla::S32: return runtime::ElementType::kS32;
    case xla::S64: return runtime::ElementType::kS64;
    case xla::U8: return runtime::ElementType::kU8;
    case xla::U16: return runtime::ElementType::kU16;
    case xla::U32: return runtime::ElementType::kU32;
    case xla::U64: return runtime::ElementType::kU64;
    case xla::F16: return runtime::ElementType::kF16;
    case xla::BF16: return runtime::ElementType::kBF16;
    case xla::F32: return runtime::ElementType::kF32;
    case xla::F64: return runtime::ElementType::kF64;
    default:
      return Error(hlo, absl::StrCat("element type ", PrimitiveTypeName(t),
                                     " has no host collective implementation"));
  }
}

absl::StatusOr<runtime::ReductionKind> ReductionOf(const HloInstruction& hlo) {
  const HloComputation* reducer = hlo.to_apply();
  if (reducer == nullptr) return Error(hlo, "has no to_apply computation");
  const std::optional<eval::SimpleReducer> simple = eval::MatchSimpleReducer(*reducer);
  if (simple) {
    switch (simple->opcode) {
      case HloOpcode::kAdd: return runtime::ReductionKind::kSum;
      case HloOpcode::kMultiply: return runtime::ReductionKind::kProduct;
      case HloOpcode::kMinimum: return runtime::ReductionKind::kMin;
      case HloOpcode::kMaximum: return runtime::ReductionKind::kMax;
      case HloOpcode::kAnd: return runtime::ReductionKind::kAnd;
      case HloOpcode::kOr: return runtime::ReductionKind::kOr;
      default: break;
    }
  }
  return Error(hlo, absl::StrCat("to_apply %", reducer->name(),
                                 " is not one add/multiply/minimum/maximum/and/or of its "
                                 "parameters; hloc has no other collective reduction"));
}

int64_t Product(const Shape& shape, int64_t from, int64_t to) {
  int64_t n = 1;
  for (int64_t d = from; d < to; ++d) n *= shape.dimensions(d);
  return n;
}

std::vector<const Shape*> OperandLeaves(const HloInstruction& hlo) {
  std::vector<const Shape*> leaves;
  for (const HloInstruction* operand : hlo.operands()) leaves.push_back(&operand->shape());
  return leaves;
}

// The synchronous op an asynchronous -start runs as.
HloOpcode SyncForm(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllReduceStart: return HloOpcode::kAllReduce;
    case HloOpcode::kAllGatherStart: return HloOpcode::kAllGather;
    case HloOpcode::kCollectivePermuteStart: return HloOpcode::kCollectivePermute;
    default: return opcode;
  }
}

// ragged-all-to-all: the data type, the rows of input and output and the
// index arrays' size and width (shape inference checked their agreement).
absl::StatusOr<runtime::CollectiveSpec> DecodeRaggedAllToAll(const HloInstruction& hlo,
                                                             const DeviceMesh& mesh) {
  runtime::CollectiveSpec spec;
  spec.op = runtime::CollectiveOp::kRaggedAllToAll;
  spec.num_partitions = mesh.num_partitions;
  const std::vector<const Shape*> operands = OperandLeaves(hlo);
  if (operands.size() != 6) return Error(hlo, "needs 6 operands");
  for (const Shape* shape : operands) {
    if (!shape->IsArray()) return Error(hlo, "has a non-array operand");
  }
  const Shape& input = *operands[0];
  const Shape& output = *operands[1];
  if (input.rank() < 1 || output.rank() != input.rank()) {
    return Error(hlo, "input and output need one rank of at least 1");
  }
  HLOC_ASSIGN_OR_RETURN(spec.type, ElementTypeOf(hlo, input.element_type(), /*reduces=*/false));
  const PrimitiveType index = operands[2]->element_type();
  if (index != xla::S32 && index != xla::S64) {
    return Error(hlo, "offsets and sizes must be s32 or s64");
  }
  HLOC_ASSIGN_OR_RETURN(spec.groups, DeviceGroupsOf(hlo, mesh));
  const int64_t n = static_cast<int64_t>(spec.groups[0].size());
  for (const std::vector<int64_t>& group : spec.groups) {
    if (static_cast<int64_t>(group.size()) != n) return Error(hlo, "groups of different sizes");
  }
  runtime::RaggedRows& rows = spec.ragged;
  rows.input_rows = input.dimensions(0);
  rows.output_rows = output.dimensions(0);
  rows.row_bytes = Product(input, 1, input.rank()) * ByteWidth(input.element_type());
  if (Product(output, 1, output.rank()) * ByteWidth(output.element_type()) != rows.row_bytes) {
    return Error(hlo, "input and output rows differ");
  }
  rows.entries = Product(*operands[2], 0, operands[2]->rank());
  rows.index_is_64bit = index == xla::S64;
  if (rows.entries == 0 || rows.entries % n != 0) {
    return Error(hlo, absl::StrCat("index arrays of ", rows.entries,
                                   " entries do not split over groups of ", n));
  }
  for (const Shape* shape : operands) {
    spec.leaves.push_back(runtime::CollectiveLeaf{Product(*shape, 0, shape->rank()), 1, 0});
  }
  return spec;
}

}  // namespace

absl::StatusOr<runtime::CollectiveSpec> DecodeCollective(const HloInstruction& hlo,
                                                         const DeviceMesh& mesh) {
  runtime::CollectiveSpec spec;
  const HloOpcode op = SyncForm(hlo.opcode());
  spec.num_partitions = mesh.num_partitions;
  switch (op) {
    case HloOpcode::kReplicaId:
      spec.op = runtime::CollectiveOp::kReplicaId;
      spec.type = runtime::ElementType::kU32;
      return spec;
    case HloOpcode::kPartitionId:
      spec.op = runtime::CollectiveOp::kPartitionId;
      spec.type = runtime::ElementType::kU32;
      return spec;
    default:
      break;
  }
  if (!HasCollectiveThunk(hlo.opcode())) return Error(hlo, "is not a lowered collective");
  if (op == HloOpcode::kRaggedAllToAll) return DecodeRaggedAllToAll(hlo, mesh);
  const std::vector<const Shape*> operands = OperandLeaves(hlo);
  if (operands.empty()) return Error(hlo, "has no operands");
  // Buffers hold arrays row-major whatever layout the shape names (as every
  // kernel and literal of the program builder reads them).
  for (const Shape* shape : operands) {
    if (!shape->IsArray()) return Error(hlo, "has a non-array operand");
    if (shape->element_type() != operands[0]->element_type()) {
      return Error(hlo, "operands of several element types");
    }
  }
  const bool reduces = op == HloOpcode::kAllReduce || op == HloOpcode::kReduceScatter;
  HLOC_ASSIGN_OR_RETURN(spec.type, ElementTypeOf(hlo, operands[0]->element_type(), reduces));
  if (op == HloOpcode::kCollectivePermute) {
    spec.op = runtime::CollectiveOp::kCollectivePermute;
    HLOC_ASSIGN_OR_RETURN(spec.pairs, DevicePairsOf(hlo, mesh));
  } else {
    HLOC_ASSIGN_OR_RETURN(spec.groups, DeviceGroupsOf(hlo, mesh));
  }
  const int64_t n = spec.groups.empty() ? 1 : static_cast<int64_t>(spec.groups[0].size());
  for (const std::vector<int64_t>& group : spec.groups) {
    if (static_cast<int64_t>(group.size()) != n) return Error(hlo, "groups of different sizes");
  }
  const int64_t width = ByteWidth(operands[0]->element_type());
  const bool dimensional = op == HloOpcode::kAllGather || op == HloOpcode::kReduceScatter ||
                           (op == HloOpcode::kAllToAll && operands.size() == 1);
  if (dimensional && hlo.dimensions().size() != 1) {
    return Error(hlo, "needs exactly one dimension");
  }
  for (const Shape* shape : operands) {
    runtime::CollectiveLeaf leaf;
    leaf.elements = Product(*shape, 0, shape->rank());
    if (dimensional) {
      const int64_t dim = hlo.dimensions(0);
      if (dim < 0 || dim >= shape->rank()) return Error(hlo, "dimension out of range");
      leaf.outer = Product(*shape, 0, dim);
      const int64_t row = Product(*shape, dim, shape->rank()) * width;
      // all-gather: the operand's row is one rank's block; reduce-scatter and
      // all-to-all: the operand's row holds n blocks.
      if (op != HloOpcode::kAllGather && (shape->dimensions(dim) % n != 0)) {
        return Error(hlo, absl::StrCat("dimension ", dim, " of size ", shape->dimensions(dim),
                                       " does not split into ", n, " blocks"));
      }
      leaf.block_bytes = op == HloOpcode::kAllGather ? row : row / n;
    }
    spec.leaves.push_back(leaf);
  }
  if (hlo.opcode() == HloOpcode::kAllGatherStart &&
      (!hlo.shape().IsTuple() || hlo.shape().tuple_shapes_size() != 2)) {
    return Error(hlo, "all-gather-start must return (operands, results)");
  }
  if (hlo.opcode() == HloOpcode::kCollectivePermuteStart &&
      (!hlo.shape().IsTuple() || hlo.shape().tuple_shapes_size() < 2)) {
    return Error(hlo, "collective-permute-start must return (operand, result, ...)");
  }
  switch (hlo.opcode()) {
    case HloOpcode::kAllReduceStart:
      if (hlo.shape().IsTuple() &&
          hlo.shape().tuple_shapes_size() == 2 * static_cast<int64_t>(operands.size())) {
        return Error(hlo, "the older (operands..., results...) all-reduce-start form is not "
                          "lowered on the host");
      }
      [[fallthrough]];
    case HloOpcode::kAllReduce: {
      spec.op = runtime::CollectiveOp::kAllReduce;
      HLOC_ASSIGN_OR_RETURN(spec.reduction, ReductionOf(hlo));
      break;
    }
    case HloOpcode::kReduceScatter: {
      spec.op = runtime::CollectiveOp::kReduceScatter;
      HLOC_ASSIGN_OR_RETURN(spec.reduction, ReductionOf(hlo));
      break;
    }
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
      spec.op = runtime::CollectiveOp::kAllGather;
      break;
    case HloOpcode::kAllToAll:
      spec.op = operands.size() == 1 ? runtime::CollectiveOp::kAllToAll
                                     : runtime::CollectiveOp::kAllToAllTuple;
      if (spec.op == runtime::CollectiveOp::kAllToAllTuple) {
        if (static_cast<int64_t>(operands.size()) != n) {
          return Error(hlo, absl::StrCat(operands.size(), " operands for groups of ", n));
        }
        for (const runtime::CollectiveLeaf& leaf : spec.leaves) {
          if (leaf.elements != spec.leaves[0].elements) {
            return Error(hlo, "tuple operands of different sizes");
          }
        }
      }
      break;
    case HloOpcode::kCollectiveBroadcast:
      spec.op = runtime::CollectiveOp::kBroadcast;
      break;
    default:
      break;
  }
  if (spec.op == runtime::CollectiveOp::kAllReduce ||
      spec.op == runtime::CollectiveOp::kReduceScatter) {
    if (absl::Status s = runtime::CheckReduction(spec.type, spec.reduction); !s.ok()) {
      return Error(hlo, s.message());
    }
  }
  return spec;
}

}  // namespace backend
}  // namespace hloc
