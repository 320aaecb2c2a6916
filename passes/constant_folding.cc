#include "passes/constant_folding.h"

#include "hlo/evaluator/evaluator.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

bool Foldable(const HloInstruction* i, int64_t max_bytes) {
  switch (i->opcode()) {
    case HloOpcode::kConstant: case HloOpcode::kParameter: case HloOpcode::kBroadcast:
    case HloOpcode::kIota: case HloOpcode::kRng: case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState: case HloOpcode::kCustomCall:
    case HloOpcode::kWhile: case HloOpcode::kConditional: case HloOpcode::kTuple:
    case HloOpcode::kAfterAll: case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kGetDimensionSize: case HloOpcode::kSetDimensionSize:
      return false;
    default:
      break;
  }
  if (i->HasSideEffect() || IsAsyncOrCommunication(i->opcode())) return false;
  if (!i->shape().IsArray() || !i->shape().is_static()) return false;
  if (i->operand_count() == 0) return false;
  std::optional<int64_t> bytes = i->shape().CheckedByteSize();
  if (!bytes || *bytes > max_bytes) return false;
  for (const HloInstruction* operand : i->operands()) {
    if (operand->opcode() != HloOpcode::kConstant) return false;
  }
  // Outlined library calls stay as they are; outlining decides about them.
  return !(i->opcode() == HloOpcode::kCall && i->is_composite());
}

// Evaluates `i` on its constant operands in a scratch computation.
absl::StatusOr<Literal> EvaluateOnConstants(const HloInstruction* i) {
  HloComputation scratch("constant_folding_scratch");
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* operand : i->operands()) {
    operands.push_back(scratch.AddInstruction(HloInstruction::CreateConstant(operand->literal())));
  }
  HloInstruction* copy = scratch.AddInstruction(i->CloneWithNewOperands(i->shape(), operands));
  scratch.set_root(copy);
  EvaluatorOptions options;
  options.num_threads = 1;
  options.max_while_iterations = 1000;
  return EvaluateComputation(scratch, {}, options);
}

}  // namespace

absl::StatusOr<bool> ConstantFolding::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (!Foldable(i, max_result_bytes_)) continue;
      absl::StatusOr<Literal> value = EvaluateOnConstants(i);
      // An op the interpreter cannot evaluate simply stays unfolded.
      if (!value.ok()) continue;
      Literal literal = *std::move(value);
      if (i->shape().has_layout()) literal.set_layout(i->shape().layout());
      HloInstruction* constant =
          computation->AddInstruction(HloInstruction::CreateConstant(std::move(literal)));
      *constant->mutable_metadata() = i->metadata();
      HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(constant));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
