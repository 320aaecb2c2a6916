// Dynamic-update-slices in place (see program_builder.h, "In place"): the
// result starts as a copy of the updated operand and a kUpdateInPlace
// kernel writes only the update; BufferSharing later lets the result live
// in the operand's bytes when the old value is dead, and the copy then does
// nothing.
#include <algorithm>

#include "backend/common/program_builder.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace backend {

// A dynamic-update-slice of `hlo`'s operand p (UpdateInPlaceParameter):
// copy that operand's buffer into the result (nothing, once the result
// shares its bytes) and write the update. False when it does not apply or
// the target has no such kernel.
absl::StatusOr<bool> ProgramBuilder::EmitUpdateInPlace(const HloInstruction& hlo,
                                                       const HloComputation& computation,
                                                       ThunkList* out) {
  const int64_t p = UpdateInPlaceParameter(computation);
  if (p < 0 || p >= hlo.operand_count() || computation.num_parameters() != hlo.operand_count() ||
      !hlo.shape().IsArray()) {
    return false;
  }
  const std::vector<BufferId>& target = buffers_.LeavesOf(hlo.operand(p));
  const std::vector<BufferId> operands = buffers_.OperandLeaves(hlo);
  // The kernel reads the target only in the window it writes (each element
  // before writing it), so no other input may name the same buffer.
  if (target.size() != 1 || std::count(operands.begin(), operands.end(), target[0]) != 1) {
    return false;
  }
  BufferId result = -1;
  const KernelBinder bind = [&]() -> absl::StatusOr<std::vector<BufferId>> {
    std::vector<BufferId> buffers = buffers_.UseOperands(hlo);
    result = buffers_.NewTemps(hlo).at(0);
    if (buffers_.size(result) != buffers_.size(target[0])) {
      return InstructionError(hlo, "updated operand and result differ in size");
    }
    target_.EmitCopy(target[0], result, buffers_.size(result), out);
    buffers.push_back(result);
    return buffers;
  };
  HLOC_ASSIGN_OR_RETURN(
      KernelEmission emission,
      target_.EmitKernel(*this, hlo, computation, KernelVariant::kUpdateInPlace, bind, out));
  if (!emission.emitted) return false;
  buffers_.sharing().AddCandidate(BufferSharing::Kind::kUpdate, target[0], result, buffers_.step());
  buffers_.Bind(&hlo, {result});
  ++report_.update_kernels;
  RecordKernel(emission);
  return true;
}

}  // namespace backend
}  // namespace hloc
