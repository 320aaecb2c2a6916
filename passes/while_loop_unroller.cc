#include "passes/while_loop_unroller.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/computation.h"
#include "hlo/module.h"
#include "hlo/primitive_type.h"
#include "hlo/status_macros.h"
#include "passes/call_inliner.h"

namespace hloc {
namespace {

// The value of a constant integer scalar.
std::optional<int64_t> IntegerConstant(const HloInstruction* i) {
  if (i->opcode() != HloOpcode::kConstant || !i->shape().IsScalar() ||
      !IsInteger(i->shape().element_type())) {
    return std::nullopt;
  }
  return i->literal().GetAsInt64(0);
}

// True when `i` is get-tuple-element(parameter 0 of its computation, index).
bool ReadsStateElement(const HloInstruction* i, int64_t index) {
  return i->opcode() == HloOpcode::kGetTupleElement && i->tuple_index() == index &&
         i->operand(0)->opcode() == HloOpcode::kParameter &&
         i->operand(0)->parameter_number() == 0;
}

// +1 or -1 when the body's new counter is the old one plus or minus one.
std::optional<int64_t> CounterStep(const HloInstruction* next, int64_t index) {
  if (next->opcode() == HloOpcode::kAdd) {
    for (int side = 0; side < 2; ++side) {
      std::optional<int64_t> one = IntegerConstant(next->operand(1 - side));
      if (ReadsStateElement(next->operand(side), index) && one == 1) return 1;
    }
  }
  if (next->opcode() == HloOpcode::kSubtract && ReadsStateElement(next->operand(0), index) &&
      IntegerConstant(next->operand(1)) == 1) {
    return -1;
  }
  return std::nullopt;
}

// Instructions in `computation` and everything it calls; nullopt when one of
// them keeps the loop from being copied.
std::optional<int64_t> CopyableSize(const HloComputation& computation,
                                    absl::flat_hash_set<const HloComputation*>& seen) {
  if (!seen.insert(&computation).second) return 0;
  int64_t size = 0;
  bool copyable = true;
  computation.ForEachInstruction([&](const HloInstruction* i) {
    ++size;
    // Copies would share what a fusion, loop or conditional calls; those
    // computations belong to one caller each (plain calls are inlined next,
    // and reduce/sort/scatter combiners are shared freely).
    const HloOpcode opcode = i->opcode();
    if (i->HasSideEffect() || !i->control_successors().empty() ||
        i->attrs().channel_id.has_value() || opcode == HloOpcode::kFusion ||
        opcode == HloOpcode::kWhile || opcode == HloOpcode::kConditional) {
      copyable = false;
    }
    for (const HloComputation* callee : i->called_computations()) {
      std::optional<int64_t> inner = copyable ? CopyableSize(*callee, seen) : std::nullopt;
      if (!inner) {
        copyable = false;
      } else {
        size += *inner;
      }
    }
  });
  if (!copyable) return std::nullopt;
  return size;
}

}  // namespace

std::optional<int64_t> WhileLoopUnroller::KnownTripCount(const HloInstruction& loop) {
  if (loop.opcode() != HloOpcode::kWhile || loop.operand_count() != 1) return std::nullopt;
  const HloInstruction* init = loop.operand(0);
  const HloInstruction* condition = loop.while_condition()->root();
  const HloInstruction* next = loop.while_body()->root();
  if (init->opcode() != HloOpcode::kTuple || next->opcode() != HloOpcode::kTuple ||
      condition->opcode() != HloOpcode::kCompare) {
    return std::nullopt;
  }
  // counter OP bound, with the counter on the left.
  ComparisonDirection direction = condition->attrs().comparison_direction;
  const HloInstruction* counter = condition->operand(0);
  std::optional<int64_t> bound = IntegerConstant(condition->operand(1));
  if (!bound) {
    counter = condition->operand(1);
    bound = IntegerConstant(condition->operand(0));
    switch (direction) {
      case ComparisonDirection::kLt: direction = ComparisonDirection::kGt; break;
      case ComparisonDirection::kLe: direction = ComparisonDirection::kGe; break;
      case ComparisonDirection::kGt: direction = ComparisonDirection::kLt; break;
      case ComparisonDirection::kGe: direction = ComparisonDirection::kLe; break;
      default: return std::nullopt;
    }
  }
  if (!bound || counter->opcode() != HloOpcode::kGetTupleElement ||
      counter->operand(0)->opcode() != HloOpcode::kParameter) {
    return std::nullopt;
  }
  const int64_t index = counter->tuple_index();
  if (index < 0 || index >= init->operand_count() || index >= next->operand_count()) {
    return std::nullopt;
  }
  std::optional<int64_t> start = IntegerConstant(init->operand(index));
  std::optional<int64_t> step = CounterStep(next->operand(index), index);
  if (!start || !step) return std::nullopt;
  // Trips: how many of start, start + step, ... pass the test before one
  // fails. The counter only ever moves towards the bound, so no wrap-around.
  int64_t trips = 0;
  switch (direction) {
    case ComparisonDirection::kLt:
      if (*step != 1) return std::nullopt;
      trips = *bound - *start;
      break;
    case ComparisonDirection::kLe:
      if (*step != 1) return std::nullopt;
      trips = *bound - *start + 1;
      break;
    case ComparisonDirection::kGt:
      if (*step != -1) return std::nullopt;
      trips = *start - *bound;
      break;
    case ComparisonDirection::kGe:
      if (*step != -1) return std::nullopt;
      trips = *start - *bound + 1;
      break;
    default:
      return std::nullopt;
  }
  return trips < 0 ? 0 : trips;
}

absl::StatusOr<bool> WhileLoopUnroller::Run(HloModule& module) {
  bool changed = false;
  // Callees first: an inner loop is unrolled before its outer loop is sized.
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    std::vector<HloInstruction*> loops;
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kWhile) loops.push_back(i);
    }
    for (HloInstruction* loop : loops) {
      std::optional<int64_t> trips = KnownTripCount(*loop);
      if (!trips || *trips > options_.max_trip_count ||
          !loop->control_predecessors().empty() || !loop->control_successors().empty()) {
        continue;
      }
      absl::flat_hash_set<const HloComputation*> seen;
      std::optional<int64_t> size = CopyableSize(*loop->while_body(), seen);
      if (!size || *size * *trips > options_.max_instructions) continue;
      // A chain of calls of the body, each inlined in turn.
      HloInstruction* state = loop->operand(0);
      std::vector<HloInstruction*> trip_calls;
      for (int64_t trip = 0; trip < *trips; ++trip) {
        state = computation->AddInstruction(
            HloInstruction::CreateCall(loop->while_body(), {state}));
        trip_calls.push_back(state);
      }
      HLOC_RETURN_IF_ERROR(loop->ReplaceAllUsesWith(state));
      HLOC_RETURN_IF_ERROR(computation->RemoveInstruction(loop));
      for (HloInstruction* call : trip_calls) {
        HLOC_RETURN_IF_ERROR(CallInliner::InlineCall(call).status());
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
