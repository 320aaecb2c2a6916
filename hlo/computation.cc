#include "hlo/computation.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/module.h"

namespace hloc {

std::string ProgramShape::ToString(bool print_layout) const {
  std::string out = "(";
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (i) out += ", ";
    if (i < parameter_names.size() && !parameter_names[i].empty()) {
      absl::StrAppend(&out, parameter_names[i], ": ");
    }
    parameters[i].AppendTo(&out, print_layout);
  }
  out += ") -> ";
  result.AppendTo(&out, print_layout);
  return out;
}

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  HloInstruction* raw = instruction.get();
  raw->parent_ = this;
  raw->index_in_parent_ = static_cast<int64_t>(slots_.size());
  if (parent_) parent_->RegisterInstruction(raw);
  if (raw->opcode() == HloOpcode::kParameter) {
    int64_t number = raw->parameter_number();
    if (number >= static_cast<int64_t>(parameters_.size()) && number < (int64_t{1} << 24)) {
      parameters_.resize(number + 1, nullptr);
    }
    if (number >= 0 && number < static_cast<int64_t>(parameters_.size())) {
      parameters_[number] = raw;
    }
  }
  slots_.push_back(std::move(instruction));
  ++live_count_;
  return raw;
}

absl::Status HloComputation::RemoveInstruction(HloInstruction* instruction) {
  if (instruction->parent_ != this) {
    return absl::InvalidArgumentError(absl::StrCat("instruction ", instruction->name(),
                                                   " is not in computation ", name_));
  }
  if (!instruction->users().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove ", instruction->name(), ": it still has users"));
  }
  if (instruction == root_) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove ", instruction->name(), ": it is the root of ", name_));
  }
  if (instruction->opcode() == HloOpcode::kParameter) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove parameter ", instruction->name()));
  }
  instruction->DetachOperands();
  instruction->DropAllControlDeps();
  if (parent_) parent_->UnregisterInstruction(instruction);
  TakeSlot(instruction);  // The instruction is destroyed here.
  return absl::OkStatus();
}

std::unique_ptr<HloInstruction> HloComputation::TakeSlot(HloInstruction* instruction) {
  std::unique_ptr<HloInstruction> owned = std::move(slots_[instruction->index_in_parent_]);
  instruction->index_in_parent_ = -1;
  --live_count_;
  // Compact once half the slots are holes, keeping insertion order.
  if (live_count_ * 2 < static_cast<int64_t>(slots_.size()) && slots_.size() > 64) {
    std::vector<std::unique_ptr<HloInstruction>> compact;
    compact.reserve(live_count_);
    for (auto& slot : slots_) {
      if (!slot) continue;
      slot->index_in_parent_ = static_cast<int64_t>(compact.size());
      compact.push_back(std::move(slot));
    }
    slots_ = std::move(compact);
  }
  return owned;
}

absl::Status HloComputation::AdoptInstruction(HloInstruction* instruction) {
  HloComputation* source = instruction->parent_;
  if (source == nullptr || source == this || source->parent_ != parent_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot move ", instruction->name(), " into ", name_,
        ": it must come from another computation of the same module"));
  }
  if (instruction->opcode() == HloOpcode::kParameter || instruction == source->root_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot move ", instruction->name(), ": it is a parameter or the root of ",
        source->name()));
  }
  std::unique_ptr<HloInstruction> owned = source->TakeSlot(instruction);
  instruction->parent_ = this;
  instruction->index_in_parent_ = static_cast<int64_t>(slots_.size());
  slots_.push_back(std::move(owned));
  ++live_count_;
  return absl::OkStatus();
}

absl::Status HloComputation::RemoveInstructionAndUnusedOperands(HloInstruction* instruction) {
  std::vector<HloInstruction*> worklist = {instruction};
  absl::flat_hash_set<HloInstruction*> removed;
  while (!worklist.empty()) {
    HloInstruction* current = worklist.back();
    worklist.pop_back();
    if (removed.contains(current) || !current->users().empty() || current == root_ ||
        current->opcode() == HloOpcode::kParameter ||
        (current != instruction && current->HasSideEffect())) {
      continue;
    }
    std::vector<HloInstruction*> operands = current->operands();
    absl::Status status = RemoveInstruction(current);
    if (!status.ok()) return status;
    removed.insert(current);
    for (HloInstruction* operand : operands) worklist.push_back(operand);
  }
  return absl::OkStatus();
}

std::vector<HloInstruction*> HloComputation::instructions() const {
  std::vector<HloInstruction*> result;
  result.reserve(live_count_);
  ForEachInstruction([&](HloInstruction* i) { result.push_back(i); });
  return result;
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  // Iterative DFS; state 0 = unvisited, 1 = on stack, 2 = emitted.
  std::vector<HloInstruction*> order;
  order.reserve(live_count_);
  std::vector<uint8_t> state(slots_.size(), 0);  // Indexed by index_in_parent_.
  std::vector<std::pair<HloInstruction*, size_t>> stack;
  auto visit = [&](HloInstruction* start) {
    if (state[start->index_in_parent_] != 0) return;
    stack.push_back({start, 0});
    state[start->index_in_parent_] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const size_t num_operands = node->operands().size();
      const size_t total = num_operands + node->control_predecessors().size();
      if (next < total) {
        HloInstruction* dep = next < num_operands
                                  ? node->operands()[next]
                                  : node->control_predecessors()[next - num_operands];
        ++next;
        if (dep->parent() != this) continue;
        uint8_t& s = state[dep->index_in_parent_];
        if (s == 0) {
          s = 1;
          stack.push_back({dep, 0});
        }
        continue;
      }
      state[node->index_in_parent_] = 2;
      order.push_back(node);
      stack.pop_back();
    }
  };
  ForEachInstruction([&](HloInstruction* i) { visit(i); });
  return order;
}

std::vector<HloInstruction*> HloComputation::MakeInstructionReversePostOrder() const {
  std::vector<HloInstruction*> order = MakeInstructionPostOrder();
  std::reverse(order.begin(), order.end());
  return order;
}

ProgramShape HloComputation::ComputeProgramShape() const {
  ProgramShape program;
  program.parameters.reserve(parameters_.size());
  program.parameter_names.reserve(parameters_.size());
  for (HloInstruction* p : parameters_) {
    program.parameters.push_back(p ? p->shape() : Shape());
    program.parameter_names.push_back(p ? p->name() : "");
  }
  if (root_) program.result = root_->shape();
  return program;
}

std::unique_ptr<HloComputation> HloComputation::Clone(const std::string& suffix) const {
  auto clone = std::make_unique<HloComputation>(
      suffix.empty() ? name_ : absl::StrCat(name_, ".", suffix));
  clone->execution_thread_ = execution_thread_;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> mapping;
  for (HloInstruction* instruction : MakeInstructionPostOrder()) {
    std::vector<HloInstruction*> operands;
    operands.reserve(instruction->operand_count());
    for (HloInstruction* operand : instruction->operands()) operands.push_back(mapping[operand]);
    HloInstruction* copy = clone->AddInstruction(
        instruction->CloneWithNewOperands(instruction->shape(), operands, suffix));
    mapping[instruction] = copy;
  }
  ForEachInstruction([&](HloInstruction* instruction) {
    for (HloInstruction* successor : instruction->control_successors()) {
      mapping[instruction]->AddControlDependencyTo(mapping[successor]);
    }
  });
  if (root_) clone->root_ = mapping[root_];
  return clone;
}

}  // namespace hloc
