#include "hlo/outline.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

// True when some instruction outside `members` is reachable from a member
// (through users) and also feeds a member: outlining would close a cycle.
// Users of members that stay in place (`kept`) do not read the new call.
bool WouldCreateCycle(const absl::flat_hash_set<HloInstruction*>& members,
                      const absl::flat_hash_set<const HloInstruction*>& kept) {
  absl::flat_hash_set<HloInstruction*> feeds_members;
  for (HloInstruction* m : members) {
    for (HloInstruction* operand : m->operands()) {
      if (!members.contains(operand)) feeds_members.insert(operand);
    }
  }
  std::vector<HloInstruction*> worklist;
  absl::flat_hash_set<HloInstruction*> seen;
  for (HloInstruction* m : members) {
    if (kept.contains(m)) continue;
    for (HloInstruction* user : m->users()) {
      if (!members.contains(user) && seen.insert(user).second) worklist.push_back(user);
    }
  }
  while (!worklist.empty()) {
    HloInstruction* current = worklist.back();
    worklist.pop_back();
    if (feeds_members.contains(current)) return true;
    for (HloInstruction* user : current->users()) {
      if (!members.contains(user) && seen.insert(user).second) worklist.push_back(user);
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<OutlineResult> OutlineInstructions(HloComputation* computation,
                                                  absl::Span<HloInstruction* const> instructions,
                                                  const OutlineOptions& options) {
  HloModule* module = computation->parent();
  if (module == nullptr) {
    return absl::FailedPreconditionError("outlining needs a computation inside a module");
  }
  if (instructions.empty()) return absl::InvalidArgumentError("nothing to outline");
  if (options.opcode != HloOpcode::kCall && options.opcode != HloOpcode::kFusion) {
    return absl::InvalidArgumentError("outlining makes only call or fusion instructions");
  }
  absl::flat_hash_set<HloInstruction*> members(instructions.begin(), instructions.end());
  for (HloInstruction* m : members) {
    if (m->parent() != computation) {
      return absl::InvalidArgumentError(
          absl::StrCat(m->name(), " is not in computation ", computation->name()));
    }
    if (m->opcode() == HloOpcode::kParameter) {
      return absl::InvalidArgumentError(absl::StrCat("cannot outline parameter ", m->name()));
    }
    if (!m->control_predecessors().empty() || !m->control_successors().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot outline ", m->name(), ": it has control dependencies"));
    }
  }
  // Duplicable members used outside stay for those users, and so do the
  // members they read, which must be duplicable as well.
  absl::flat_hash_set<const HloInstruction*> kept;
  std::vector<HloInstruction*> stack;
  for (HloInstruction* m : members) {
    if (!options.duplicable.contains(m)) continue;
    bool used_outside = m == computation->root();
    for (HloInstruction* user : m->users()) used_outside |= !members.contains(user);
    if (used_outside && kept.insert(m).second) stack.push_back(m);
  }
  while (!stack.empty()) {
    HloInstruction* m = stack.back();
    stack.pop_back();
    for (HloInstruction* operand : m->operands()) {
      if (!members.contains(operand) || kept.contains(operand)) continue;
      if (!options.duplicable.contains(operand)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot duplicate ", m->name(), ": its operand ", operand->name(),
            " is outlined and not duplicable"));
      }
      kept.insert(operand);
      stack.push_back(operand);
    }
  }
  if (WouldCreateCycle(members, kept)) {
    return absl::FailedPreconditionError(
        "outlining would create a cycle: an instruction outside the set both uses and feeds it");
  }

  // Members in the computation's post order, so operands come first.
  std::vector<HloInstruction*> ordered;
  ordered.reserve(members.size());
  for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
    if (members.contains(i)) ordered.push_back(i);
  }

  OutlineResult result;
  std::vector<HloInstruction*> outputs;
  for (HloInstruction* m : ordered) {
    if (kept.contains(m)) continue;
    bool used_outside = m == computation->root();
    for (HloInstruction* user : m->users()) used_outside |= !members.contains(user);
    if (used_outside) outputs.push_back(m);
  }
  if (outputs.empty()) {
    if (!kept.empty() && kept.size() == members.size()) {
      return absl::InvalidArgumentError("nothing to outline: every member stays in place");
    }
    // No value leaves the set: return its last non-kept member.
    for (auto it = ordered.rbegin(); it != ordered.rend(); ++it) {
      if (!kept.contains(*it)) {
        outputs.push_back(*it);
        break;
      }
    }
  }
  if (outputs.size() > 1 && !options.allow_multiple_outputs) {
    return absl::FailedPreconditionError(
        absl::StrCat("outlining would need ", outputs.size(), " outputs (",
                     outputs[0]->name(), " and ", outputs[1]->name(),
                     " are used outside) and multiple outputs are not allowed"));
  }

  // Build the callee: parameters for outside operands, clones of members.
  auto callee = std::make_unique<HloComputation>(options.computation_name);
  absl::flat_hash_map<HloInstruction*, HloInstruction*> inside;
  std::vector<HloInstruction*> caller_operands;
  // Leading slots first: each gets its own parameter.
  absl::flat_hash_map<std::pair<const HloInstruction*, int64_t>, HloInstruction*> slot_parameters;
  for (const auto& [member, index] : options.leading_operands) {
    if (!members.contains(const_cast<HloInstruction*>(member)) || index < 0 ||
        index >= member->operand_count()) {
      continue;
    }
    HloInstruction* value = member->operand(index);
    if (members.contains(value) || slot_parameters.contains({member, index})) continue;
    int64_t number = static_cast<int64_t>(caller_operands.size());
    HloInstruction* parameter = callee->AddInstruction(HloInstruction::CreateParameter(
        number, value->shape(), absl::StrCat("param_", number)));
    caller_operands.push_back(value);
    slot_parameters[{member, index}] = parameter;
    inside.emplace(value, parameter);  // other reads of the value use the first one
  }
  for (HloInstruction* m : ordered) {
    std::vector<HloInstruction*> new_operands;
    new_operands.reserve(m->operand_count());
    for (int64_t k = 0; k < m->operand_count(); ++k) {
      HloInstruction* operand = m->operand(k);
      auto slot = slot_parameters.find({m, k});
      if (slot != slot_parameters.end()) {
        new_operands.push_back(slot->second);
        continue;
      }
      auto it = inside.find(operand);
      if (it == inside.end()) {
        int64_t number = static_cast<int64_t>(caller_operands.size());
        HloInstruction* parameter = callee->AddInstruction(HloInstruction::CreateParameter(
            number, operand->shape(), absl::StrCat("param_", number)));
        caller_operands.push_back(operand);
        it = inside.emplace(operand, parameter).first;
      }
      new_operands.push_back(it->second);
    }
    inside[m] = callee->AddInstruction(m->CloneWithNewOperands(m->shape(), new_operands));
  }
  if (outputs.size() == 1) {
    callee->set_root(inside[outputs[0]]);
  } else {
    std::vector<HloInstruction*> elements;
    for (HloInstruction* o : outputs) elements.push_back(inside[o]);
    callee->set_root(callee->AddInstruction(HloInstruction::CreateTuple(elements)));
  }
  HloComputation* added = module->AddComputation(std::move(callee));

  std::unique_ptr<HloInstruction> caller =
      options.opcode == HloOpcode::kFusion
          ? HloInstruction::CreateFusion(added, options.fusion_kind, caller_operands)
          : HloInstruction::CreateCall(added, caller_operands);
  caller->set_name(options.opcode == HloOpcode::kFusion ? "fusion" : "call");
  HloInstruction* call = computation->AddInstruction(std::move(caller));
  if (options.opcode == HloOpcode::kFusion) added->set_fusion_instruction(call);

  // Reroute outside uses, then drop the members (users before operands).
  if (outputs.size() == 1) {
    HLOC_RETURN_IF_ERROR(outputs[0]->ReplaceAllUsesWith(call));
  } else {
    for (size_t k = 0; k < outputs.size(); ++k) {
      HloInstruction* gte = computation->AddInstruction(
          HloInstruction::CreateGetTupleElement(call, static_cast<int64_t>(k)));
      for (HloInstruction* user : std::vector<HloInstruction*>(outputs[k]->users())) {
        if (!members.contains(user)) outputs[k]->ReplaceUseWith(user, gte);
      }
      if (computation->root() == outputs[k]) computation->set_root(gte);
    }
  }
  for (auto it = ordered.rbegin(); it != ordered.rend(); ++it) {
    if (kept.contains(*it)) continue;
    HLOC_RETURN_IF_ERROR(computation->RemoveInstruction(*it));
  }
  result.caller = call;
  result.callee = added;
  result.outputs.assign(outputs.begin(), outputs.end());
  return result;
}

std::unique_ptr<HloComputation> WrapInstruction(const HloInstruction& hlo) {
  auto wrapper = std::make_unique<HloComputation>(absl::StrCat("wrapped_", hlo.name()));
  std::vector<HloInstruction*> parameters;
  for (int64_t i = 0; i < hlo.operand_count(); ++i) {
    parameters.push_back(wrapper->AddInstruction(
        HloInstruction::CreateParameter(i, hlo.operand(i)->shape(), absl::StrCat("p", i))));
  }
  HloInstruction* op = wrapper->AddInstruction(hlo.CloneWithNewOperands(hlo.shape(), parameters));
  op->set_name(hlo.name());
  wrapper->set_root(op);
  return wrapper;
}

}  // namespace hloc
