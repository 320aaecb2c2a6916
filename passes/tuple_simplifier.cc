#include "passes/tuple_simplifier.h"

#include "hlo/status_macros.h"

namespace hloc {
namespace {

// x when `tuple` re-packs every element of x in order, else nullptr.
HloInstruction* RepackedSource(const HloInstruction* tuple) {
  HloInstruction* source = nullptr;
  for (int64_t k = 0; k < tuple->operand_count(); ++k) {
    const HloInstruction* element = tuple->operand(k);
    if (element->opcode() != HloOpcode::kGetTupleElement || element->tuple_index() != k) {
      return nullptr;
    }
    if (source == nullptr) source = element->operand(0);
    if (element->operand(0) != source) return nullptr;
  }
  if (source == nullptr || !source->shape().IsTuple() ||
      source->shape().tuple_shapes_size() != tuple->operand_count() ||
      !source->shape().Compatible(tuple->shape())) {
    return nullptr;
  }
  return source;
}

}  // namespace

absl::StatusOr<bool> TupleSimplifier::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      HloInstruction* replacement = nullptr;
      if (i->opcode() == HloOpcode::kGetTupleElement &&
          i->operand(0)->opcode() == HloOpcode::kTuple) {
        replacement = i->operand(0)->operand(i->tuple_index());
      } else if (i->opcode() == HloOpcode::kTuple) {
        replacement = RepackedSource(i);
      }
      if (replacement == nullptr || !replacement->shape().Compatible(i->shape())) continue;
      HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(replacement));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
