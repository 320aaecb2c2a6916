#include "hlo/opcode.h"

#include "absl/container/flat_hash_map.h"

namespace hloc {
namespace {

struct OpcodeInfo {
  absl::string_view name;
  int arity;
};

constexpr OpcodeInfo kOpcodeInfo[] = {
#define HLOC_OPCODE_INFO(enum_name, text, arity) {text, arity},
    HLOC_OPCODE_LIST(HLOC_OPCODE_INFO)
#undef HLOC_OPCODE_INFO
};

}  // namespace

absl::string_view HloOpcodeName(HloOpcode opcode) {
  return kOpcodeInfo[static_cast<int>(opcode)].name;
}

std::optional<HloOpcode> HloOpcodeFromName(absl::string_view name) {
  static const auto* by_name = [] {
    auto* map = new absl::flat_hash_map<absl::string_view, HloOpcode>();
    for (int i = 0; i < kHloOpcodeCount; ++i) {
      map->emplace(kOpcodeInfo[i].name, static_cast<HloOpcode>(i));
    }
    // Older spellings still found in dumps.
    map->emplace("optimization-barrier", HloOpcode::kOptimizationBarrier);
    return map;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

int HloOpcodeArity(HloOpcode opcode) { return kOpcodeInfo[static_cast<int>(opcode)].arity; }

bool IsElementwiseUnary(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAbs: case HloOpcode::kCbrt: case HloOpcode::kCeil:
    case HloOpcode::kClz: case HloOpcode::kConvert: case HloOpcode::kBitcastConvert:
    case HloOpcode::kCopy: case HloOpcode::kCos: case HloOpcode::kErf:
    case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kFloor:
    case HloOpcode::kImag: case HloOpcode::kIsFinite: case HloOpcode::kLog:
    case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kNegate:
    case HloOpcode::kNot: case HloOpcode::kPopulationCount: case HloOpcode::kReal:
    case HloOpcode::kReducePrecision: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kSign:
    case HloOpcode::kSin: case HloOpcode::kSqrt: case HloOpcode::kTan:
    case HloOpcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseOpcode(HloOpcode opcode) {
  return IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode) ||
         opcode == HloOpcode::kSelect || opcode == HloOpcode::kClamp;
}

bool IsElementwiseBinary(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2:
    case HloOpcode::kCompare: case HloOpcode::kComplex: case HloOpcode::kDivide:
    case HloOpcode::kMaximum: case HloOpcode::kMinimum: case HloOpcode::kMultiply:
    case HloOpcode::kOr: case HloOpcode::kPower: case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical: case HloOpcode::kSubtract: case HloOpcode::kXor:
    case HloOpcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

bool IsCollective(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllToAll: case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

bool IsAsyncOrCommunication(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyStart: case HloOpcode::kCopyDone: case HloOpcode::kSend:
    case HloOpcode::kSendDone: case HloOpcode::kRecv: case HloOpcode::kRecvDone:
    case HloOpcode::kInfeed: case HloOpcode::kOutfeed:
      return true;
    default:
      return IsCollective(opcode);
  }
}

}  // namespace hloc
