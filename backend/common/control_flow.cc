// While loops, conditionals and inlined calls (see program_builder.h): the
// buffers of loop state and branch results, their liveness, and the copies
// between them; the target makes the loop and conditional thunks.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backend/common/program_builder.h"
#include "backend/llvm/array_leaves.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace backend {

// Runs `computation` with its parameters bound to `caller`'s operands;
// `caller` takes the root's leaves.
absl::Status ProgramBuilder::EmitInline(const HloComputation& computation,
                                        const HloInstruction& caller, ThunkList* out) {
  if (computation.num_parameters() != caller.operand_count()) {
    return InstructionError(caller, "operand count differs from the callee's parameters");
  }
  for (int64_t i = 0; i < caller.operand_count(); ++i) {
    buffers_.Bind(computation.parameter(i), buffers_.LeavesOf(caller.operand(i)));
  }
  HLOC_RETURN_IF_ERROR(EmitComputation(computation, out));
  buffers_.Bind(&caller, buffers_.LeavesOf(computation.root()));
  return absl::OkStatus();
}

absl::Status ProgramBuilder::EmitWhile(const HloInstruction& hlo, ThunkList* out) {
  const HloComputation* condition = hlo.while_condition();
  const HloComputation* body = hlo.while_body();
  if (condition == nullptr || body == nullptr) return InstructionError(hlo, "missing computations");
  BufferSharing& sharing = buffers_.sharing();
  const std::vector<BufferId> init = buffers_.UseOperands(hlo);
  std::vector<BufferId> state = buffers_.NewTemps(hlo);
  if (state.size() != init.size()) return InstructionError(hlo, "state and init differ");
  for (size_t i = 0; i < state.size(); ++i) {
    target_.EmitCopy(init[i], state[i], buffers_.size(state[i]), out);
    // The state may take over an initial value read nowhere else.
    if (options_.update_in_place && std::count(init.begin(), init.end(), init[i]) == 1) {
      sharing.AddCandidate(BufferSharing::Kind::kLoopInit, init[i], state[i], buffers_.step());
    }
  }
  const int loop = sharing.BeginLoop(buffers_.step() + 1);
  std::unique_ptr<ThunkList> condition_thunks = target_.NewThunkList();
  std::unique_ptr<ThunkList> body_thunks = target_.NewThunkList();
  buffers_.Bind(condition->parameter(0), state);
  sharing.EnterCondition(loop);
  HLOC_RETURN_IF_ERROR(EmitComputation(*condition, condition_thunks.get()));
  sharing.Exit();
  const std::vector<BufferId>& predicate = buffers_.LeavesOf(condition->root());
  if (predicate.size() != 1) return InstructionError(hlo, "condition does not return a pred");
  const BufferId predicate_id = predicate[0];
  buffers_.Use(predicate_id);  // The loop reads it after the condition.
  buffers_.Bind(body->parameter(0), state);
  sharing.EnterBody(loop);
  HLOC_RETURN_IF_ERROR(EmitComputation(*body, body_thunks.get()));
  if (options_.update_in_place) {
    // A result leaf the body computes (not a state leaf passed through or
    // moved, not a leaf it returns twice) may be computed in its state
    // leaf's bytes; Resolve checks when that is safe.
    const std::vector<BufferId>& leaves = buffers_.LeavesOf(body->root());
    for (size_t i = 0; i < leaves.size() && i < state.size(); ++i) {
      const bool computed = std::find(state.begin(), state.end(), leaves[i]) == state.end() &&
                            std::count(leaves.begin(), leaves.end(), leaves[i]) == 1;
      if (computed) {
        sharing.AddCandidate(BufferSharing::Kind::kLoopResult, state[i], leaves[i],
                             buffers_.step());
      }
    }
  }
  sharing.Exit();
  buffers_.Advance();
  const std::vector<BufferId> result = buffers_.LeavesOf(body->root());
  if (result.size() != state.size()) return InstructionError(hlo, "body result and state differ");
  // A result leaf that is another leaf's state goes through a temporary, so
  // no copy below overwrites a state still to be read.
  std::vector<BufferId> sources = result;
  for (size_t i = 0; i < result.size(); ++i) {
    buffers_.Use(result[i]);
    const bool is_other_state =
        result[i] != state[i] && std::find(state.begin(), state.end(), result[i]) != state.end();
    if (is_other_state) {
      sources[i] =
          buffers_.NewTemp(buffers_.size(state[i]), absl::StrCat("%", hlo.name(), ".swap"));
      target_.EmitCopy(result[i], sources[i], buffers_.size(sources[i]), body_thunks.get());
    }
  }
  buffers_.Advance();
  for (size_t i = 0; i < result.size(); ++i) {
    buffers_.Use(sources[i]);
    if (sources[i] != state[i]) {
      target_.EmitCopy(sources[i], state[i], buffers_.size(state[i]), body_thunks.get());
    }
  }
  buffers_.Advance();
  for (BufferId id : state) buffers_.KeepLive(id);
  sharing.EndLoop(loop, buffers_.step(), state, result);
  target_.EmitLoop(absl::StrCat("%", hlo.name()), std::move(condition_thunks), predicate_id,
                   std::move(body_thunks), out);
  buffers_.Bind(&hlo, std::move(state));
  return absl::OkStatus();
}

absl::Status ProgramBuilder::EmitConditional(const HloInstruction& hlo, ThunkList* out) {
  const std::vector<HloComputation*>& branches = hlo.called_computations();
  if (branches.empty() || hlo.operand_count() != static_cast<int64_t>(branches.size()) + 1) {
    return InstructionError(hlo, "operands do not match the branches");
  }
  const std::vector<BufferId>& selector = buffers_.LeavesOf(hlo.operand(0));
  if (selector.size() != 1) return InstructionError(hlo, "selector is not an array");
  const PrimitiveType selector_type = hlo.operand(0)->shape().element_type();
  if (selector_type != xla::PRED && selector_type != xla::S32) {
    return InstructionError(hlo, "selector must be pred or s32");
  }
  buffers_.Use(selector[0]);
  std::vector<BufferId> results = buffers_.NewTemps(hlo);
  std::vector<std::unique_ptr<ThunkList>> branch_thunks;
  for (size_t b = 0; b < branches.size(); ++b) {
    const HloComputation* branch = branches[b];
    if (branch->num_parameters() != 1) return InstructionError(hlo, "branch arity");
    branch_thunks.push_back(target_.NewThunkList());
    buffers_.Bind(branch->parameter(0), buffers_.LeavesOf(hlo.operand(b + 1)));
    buffers_.sharing().EnterBranch();
    HLOC_RETURN_IF_ERROR(EmitComputation(*branch, branch_thunks.back().get()));
    buffers_.Advance();
    const std::vector<BufferId> root = buffers_.LeavesOf(branch->root());
    if (root.size() != results.size()) return InstructionError(hlo, "branch result shape");
    for (size_t i = 0; i < root.size(); ++i) {
      buffers_.Use(root[i]);
      target_.EmitCopy(root[i], results[i], buffers_.size(results[i]), branch_thunks.back().get());
    }
    buffers_.sharing().Exit();
  }
  buffers_.Advance();
  for (BufferId id : results) buffers_.KeepLive(id);
  target_.EmitConditional(absl::StrCat("%", hlo.name()), selector[0], selector_type == xla::PRED,
                          std::move(branch_thunks), out);
  buffers_.Bind(&hlo, std::move(results));
  return absl::OkStatus();
}

}  // namespace backend
}  // namespace hloc
