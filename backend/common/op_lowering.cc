// The op table (see op_lowering.h).
#include "backend/common/op_lowering.h"

#include "absl/strings/str_cat.h"

namespace hloc {
namespace backend {
namespace {

enum class Path { kKernel, kLibraryThenKernel, kLibrary, kCollective, kInterpreter, kUnsupported };

struct Row {
  HloOpcode op;
  Path host, cuda;
};

// Ops whose paths differ from "a kernel on every target".
constexpr Row kRows[] = {
    {HloOpcode::kDot, Path::kLibraryThenKernel, Path::kKernel},
    {HloOpcode::kConvolution, Path::kLibraryThenKernel, Path::kKernel},
    {HloOpcode::kSort, Path::kLibrary, Path::kKernel},
    {HloOpcode::kTopK, Path::kLibrary, Path::kKernel},
    {HloOpcode::kScatter, Path::kLibrary, Path::kKernel},
    {HloOpcode::kFft, Path::kLibraryThenKernel, Path::kInterpreter},
    {HloOpcode::kReduceWindow, Path::kLibraryThenKernel, Path::kKernel},
    {HloOpcode::kCholesky, Path::kKernel, Path::kInterpreter},
    {HloOpcode::kTriangularSolve, Path::kKernel, Path::kInterpreter},
    {HloOpcode::kSelectAndScatter, Path::kKernel, Path::kInterpreter},
    {HloOpcode::kRng, Path::kInterpreter, Path::kInterpreter},
    {HloOpcode::kRngBitGenerator, Path::kInterpreter, Path::kInterpreter},
    {HloOpcode::kRngGetAndUpdateState, Path::kUnsupported, Path::kUnsupported},
    // The device's ids: a thunk writing the device's rank.
    {HloOpcode::kReplicaId, Path::kCollective, Path::kCollective},
    {HloOpcode::kPartitionId, Path::kCollective, Path::kCollective},
};

Path PathOf(const HloInstruction& hlo, Target target) {
  // Collectives are communicator thunks on both targets (collective_
  // lowering.h; NCCL on the GPU); the async-start/-done wrappers stay
  // unsupported.
  if (IsCollective(hlo.opcode()) && HasCollectiveThunk(hlo.opcode())) {
    return Path::kCollective;
  }
  if (IsAsyncOrCommunication(hlo.opcode())) return Path::kUnsupported;
  if (hlo.opcode() == HloOpcode::kCustomCall) {
    // On the host every target is a library call: TopK's routine or a
    // function the embedder registered (hlo/custom_call_targets.h). On the
    // GPU TopK is a kernel, every other target a registered function.
    if (target == Target::kHost) return Path::kLibrary;
    return hlo.attrs().custom_call_target == "TopK" ? Path::kKernel : Path::kLibrary;
  }
  for (const Row& row : kRows) {
    if (row.op == hlo.opcode()) return target == Target::kHost ? row.host : row.cuda;
  }
  return Path::kKernel;
}

}  // namespace

bool HasCollectiveThunk(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:  // Run at the start; the -done is its value.
    case HloOpcode::kAllGatherStart:  // Likewise; the -done is its results element.
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kAllGather:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId:
      return true;
    default:
      return false;
  }
}

absl::string_view TargetName(Target target) {
  return target == Target::kHost ? "host" : "GPU";
}

OpLowering LowerOp(const HloInstruction& hlo, Target target) {
  OpLowering lowering;
  const Path path = PathOf(hlo, target);
  lowering.supported = path != Path::kUnsupported;
  lowering.library = path == Path::kLibrary || path == Path::kLibraryThenKernel;
  lowering.kernel = path == Path::kKernel || path == Path::kLibraryThenKernel;
  lowering.collective = path == Path::kCollective;
  if (!lowering.supported) {
    lowering.reason = absl::StrCat("has no ", TargetName(target), " implementation in hloc");
  } else if (lowering.collective) {
    lowering.reason = absl::StrCat("a ", TargetName(target), " collective thunk");
  } else if (!lowering.kernel) {
    lowering.reason =
        hlo.opcode() == HloOpcode::kCustomCall
            ? absl::StrCat("no ", TargetName(target), " kernel for custom-call target \"",
                           hlo.attrs().custom_call_target, "\"")
            : absl::StrCat("no ", TargetName(target), " kernel for ", HloOpcodeName(hlo.opcode()));
  }
  return lowering;
}

}  // namespace backend
}  // namespace hloc
