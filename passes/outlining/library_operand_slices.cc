// LibraryOperandSlices (see library_operand_slices.h).
#include "passes/outlining/library_operand_slices.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "passes/outlining/composite_attributes.h"

namespace hloc {
namespace {

bool IsGemmCall(const HloInstruction& call) {
  if (call.opcode() != HloOpcode::kCall || !call.is_composite() || call.to_apply() == nullptr) {
    return false;
  }
  const std::string* name = call.FindFrontendAttribute(kCompositeName);
  return name != nullptr &&
         (absl::StartsWith(*name, "hloc.gemm") || absl::StartsWith(*name, "hloc.batched_gemm"));
}

// The caller-side chain from a call operand down to a contiguous slice:
// [operand, ..., slice], or empty when the operand is not one.
std::vector<HloInstruction*> SliceChain(HloInstruction* operand) {
  std::vector<HloInstruction*> chain;
  HloInstruction* at = operand;
  while (KeepsRowMajorOrder(*at)) {
    chain.push_back(at);
    at = at->operand(0);
  }
  if (at->opcode() != HloOpcode::kSlice || at->operand_count() != 1) return {};
  const HloAttributes& a = at->attrs();
  if (!IsRowMajorArray(at->shape()) ||
      !ContiguousSliceStart(at->operand(0)->shape(), a.slice_starts, a.slice_limits,
                            a.slice_strides)
           .has_value()) {
    return {};
  }
  chain.push_back(at);
  return chain;
}

}  // namespace

absl::StatusOr<bool> LibraryOperandSlices::Run(HloModule& module) {
  operands_moved_ = 0;
  std::vector<HloInstruction*> calls;
  for (HloComputation* computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* instruction : computation->instructions()) {
      if (IsGemmCall(*instruction)) calls.push_back(instruction);
    }
  }
  for (HloInstruction* call : calls) {
    HloComputation* body = call->to_apply();
    for (int64_t i = 0; i < call->operand_count() && i < body->num_parameters(); ++i) {
      HloInstruction* parameter = body->parameter(i);
      if (parameter->users().size() != 1 || parameter->users()[0]->opcode() != HloOpcode::kDot) {
        continue;
      }
      std::vector<HloInstruction*> chain = SliceChain(call->operand(i));
      if (chain.empty()) continue;
      if (module.CallersOf(body).size() > 1) {
        body = module.AddComputation(body->Clone("sliced"));
        call->set_called_computation(0, body);
        parameter = body->parameter(i);
      }
      HloInstruction* dot = parameter->users()[0];
      HloInstruction* slice = chain.back();
      HloInstruction* array = slice->operand(0);
      parameter->set_shape(array->shape());
      HloInstruction* value = parameter;
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        value = body->AddInstruction((*it)->CloneWithNewOperands((*it)->shape(), {value}));
      }
      for (int64_t k = 0; k < dot->operand_count(); ++k) {
        if (dot->operand(k) == parameter) dot->ReplaceOperandWith(k, value);
      }
      HloInstruction* old_operand = call->operand(i);
      call->ReplaceOperandWith(i, array);
      if (old_operand->users().empty() && old_operand != call->parent()->root()) {
        HLOC_RETURN_IF_ERROR(call->parent()->RemoveInstructionAndUnusedOperands(old_operand));
      }
      ++operands_moved_;
    }
  }
  return operands_moved_ > 0;
}

}  // namespace hloc
