// Builds fusion instructions from planned groups (see fusion_builder.h).
#include "passes/fusion/fusion_builder.h"

#include <algorithm>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

// One value the new fusion returns: a member's value, or element `index` of
// a merged multi-output fusion member.
struct Output {
  HloInstruction* member;
  int64_t index;  // -1: the member's own value.
  HloInstruction* value;  // inside the new fused computation
};

// Builds one group at a time; its scratch maps are reused from group to group.
class GroupBuilder {
 public:
  explicit GroupBuilder(HloComputation& computation) : computation_(computation) {}

  absl::StatusOr<HloInstruction*> Build(const FusionGroup& group,
                                        std::vector<HloComputation*>* dead_computations,
                                        std::vector<HloInstruction*>* duplicated_originals);

 private:
  bool IsMember(const HloInstruction* i) const { return position_.contains(i); }
  bool IsDuplicated(const HloInstruction* i) const {
    auto it = position_.find(i);
    return it != position_.end() && !duplicated_.empty() && duplicated_[it->second];
  }
  // Whether `user` reads a member's value inside the new kernel: a member
  // that is not duplicated, or something already in the fused computation.
  bool ReadsInside(const HloInstruction* user) const {
    return user->parent() == body_ || (IsMember(user) && !IsDuplicated(user));
  }
  absl::StatusOr<HloInstruction*> ValueOf(HloInstruction* operand);
  absl::Status RewireOperands(HloInstruction* instruction,
                              const absl::flat_hash_map<const HloInstruction*, HloInstruction*>*
                                  inner_value);
  absl::Status AddMember(HloInstruction* member);
  absl::Status InlineFusion(HloInstruction* member);
  absl::Status CollectOutputs();
  absl::Status Reroute(HloInstruction* fusion);

  HloComputation& computation_;
  const FusionGroup* group_ = nullptr;
  absl::flat_hash_map<const HloInstruction*, size_t> position_;
  // The group's duplicated flags, less the members whose every reader is in
  // the group: those simply move (their original would be left unread).
  std::vector<bool> duplicated_;
  HloComputation* body_ = nullptr;  // the new fused computation, in the module
  // The computation's root before the group; when it is a member the root is
  // cleared while members move and set to the fusion by Reroute.
  HloInstruction* old_root_ = nullptr;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> value_;
  absl::flat_hash_map<const HloInstruction*, std::vector<HloInstruction*>> tuple_value_;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> parameter_of_;
  std::vector<HloInstruction*> caller_operands_;
  std::vector<Output> outputs_;
  std::vector<HloComputation*> merged_;
};

absl::StatusOr<HloInstruction*> GroupBuilder::ValueOf(HloInstruction* operand) {
  if (IsMember(operand)) {
    auto it = value_.find(operand);
    if (it != value_.end()) return it->second;
    if (tuple_value_.contains(operand)) {
      return absl::InternalError(absl::StrCat("fusion builder: ", operand->name(),
                                              " has several outputs and is read whole"));
    }
    return absl::InternalError(absl::StrCat("fusion builder: member ", operand->name(),
                                            " is used before it is defined"));
  }
  auto it = parameter_of_.find(operand);
  if (it != parameter_of_.end()) return it->second;
  const int64_t number = static_cast<int64_t>(caller_operands_.size());
  HloInstruction* parameter = body_->AddInstruction(
      HloInstruction::CreateParameter(number, operand->shape(), absl::StrCat("param_", number)));
  caller_operands_.push_back(operand);
  parameter_of_[operand] = parameter;
  return parameter;
}

absl::Status GroupBuilder::AddMember(HloInstruction* member) {
  if (member->opcode() == HloOpcode::kGetTupleElement && IsMember(member->operand(0))) {
    auto it = tuple_value_.find(member->operand(0));
    if (it != tuple_value_.end()) {
      const int64_t index = member->tuple_index();
      if (index < 0 || index >= static_cast<int64_t>(it->second.size())) {
        return absl::InternalError(absl::StrCat("fusion builder: bad tuple index in ",
                                                member->name()));
      }
      value_[member] = it->second[index];
      return absl::OkStatus();
    }
  }
  if (IsDuplicated(member)) {
    // The original stays for its other readers: the kernel gets a copy.
    std::vector<HloInstruction*> operands;
    operands.reserve(member->operand_count());
    for (HloInstruction* operand : member->operands()) {
      HLOC_ASSIGN_OR_RETURN(HloInstruction * value, ValueOf(operand));
      operands.push_back(value);
    }
    value_[member] =
        body_->AddInstruction(member->CloneWithNewOperands(member->shape(), operands));
    return absl::OkStatus();
  }
  // Everyone else moves into the kernel as it is (no copy of its attributes,
  // name or metadata); only its operand edges change.
  HLOC_RETURN_IF_ERROR(RewireOperands(member, nullptr));
  HLOC_RETURN_IF_ERROR(body_->AdoptInstruction(member));
  value_[member] = member;
  return absl::OkStatus();
}

absl::Status GroupBuilder::RewireOperands(
    HloInstruction* instruction,
    const absl::flat_hash_map<const HloInstruction*, HloInstruction*>* inner_value) {
  for (int64_t k = 0; k < instruction->operand_count(); ++k) {
    HloInstruction* operand = instruction->operand(k);
    HloInstruction* value;
    if (inner_value != nullptr) {
      // Inside a merged fusion: parameters map to the kernel's values, the
      // other operands moved along already.
      if (operand->opcode() != HloOpcode::kParameter) continue;
      auto it = inner_value->find(operand);
      if (it == inner_value->end()) {
        return absl::InternalError(absl::StrCat("fusion builder: ", instruction->name(),
                                                " reads an unknown parameter"));
      }
      value = it->second;
    } else {
      HLOC_ASSIGN_OR_RETURN(value, ValueOf(operand));
    }
    if (value != operand) instruction->ReplaceOperandWith(k, value);
  }
  return absl::OkStatus();
}

absl::Status GroupBuilder::InlineFusion(HloInstruction* member) {
  HloComputation* inner = member->fused_computation();
  if (inner == nullptr || inner->root() == nullptr) {
    return absl::InternalError(absl::StrCat("fusion builder: ", member->name(),
                                            " has no fused computation"));
  }
  merged_.push_back(inner);
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> inner_value;
  for (HloInstruction* parameter : inner->parameters()) {
    if (parameter == nullptr) continue;
    const int64_t number = parameter->parameter_number();
    if (number < 0 || number >= member->operand_count()) {
      return absl::InternalError(absl::StrCat("fusion builder: ", member->name(),
                                              " lacks operand ", number));
    }
    HLOC_ASSIGN_OR_RETURN(inner_value[parameter], ValueOf(member->operand(number)));
  }
  // The merged fusion's instructions move into the kernel; its computation,
  // left with parameters (and a detached tuple root), is dropped afterwards.
  HloInstruction* root = inner->root();
  const bool tuple_root = root->opcode() == HloOpcode::kTuple;
  if (tuple_root) {
    std::vector<HloInstruction*> elements;
    for (HloInstruction* element : root->operands()) {
      auto it = inner_value.find(element);
      elements.push_back(it != inner_value.end() ? it->second : element);
    }
    tuple_value_[member] = std::move(elements);
    root->DetachOperands();
  } else {
    auto it = inner_value.find(root);
    value_[member] = it != inner_value.end() ? it->second : root;
  }
  std::vector<HloInstruction*> order = inner->MakeInstructionPostOrder();
  inner->set_root(nullptr);
  for (HloInstruction* x : order) {
    if (x->opcode() == HloOpcode::kParameter || (x == root && tuple_root)) continue;
    // Ordering inside one kernel means nothing once it is merged into another.
    x->DropAllControlDeps();
    HLOC_RETURN_IF_ERROR(RewireOperands(x, &inner_value));
    HLOC_RETURN_IF_ERROR(body_->AdoptInstruction(x));
  }
  return absl::OkStatus();
}

absl::Status GroupBuilder::CollectOutputs() {
  for (HloInstruction* member : group_->members) {
    if (IsDuplicated(member)) continue;
    const bool is_root = old_root_ == member;
    auto tuple = tuple_value_.find(member);
    if (tuple != tuple_value_.end()) {
      if (is_root) {
        return absl::InternalError(absl::StrCat("fusion builder: merged multi-output fusion ",
                                                member->name(), " is the root"));
      }
      std::vector<int64_t> indices;
      for (HloInstruction* user : member->users()) {
        if (IsMember(user) && !IsDuplicated(user)) continue;
        if (user->opcode() != HloOpcode::kGetTupleElement) {
          return absl::InternalError(absl::StrCat("fusion builder: ", user->name(),
                                                  " reads multi-output fusion ", member->name(),
                                                  " whole"));
        }
        indices.push_back(user->tuple_index());
      }
      std::sort(indices.begin(), indices.end());
      indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
      for (int64_t index : indices) {
        if (index < 0 || index >= static_cast<int64_t>(tuple->second.size())) {
          return absl::InternalError(absl::StrCat("fusion builder: bad tuple index reading ",
                                                  member->name()));
        }
        outputs_.push_back(Output{member, index, tuple->second[index]});
      }
      continue;
    }
    bool used_outside = is_root;
    for (HloInstruction* user : member->users()) {
      if (!ReadsInside(user)) used_outside = true;
    }
    if (used_outside) outputs_.push_back(Output{member, -1, value_.at(member)});
  }
  if (outputs_.empty()) {
    return absl::InternalError(absl::StrCat("fusion builder: the group of ",
                                            group_->members.back()->name(), " has no output"));
  }
  if (outputs_.size() > 1) {
    for (const Output& output : outputs_) {
      if (output.value->shape().IsTuple()) {
        return absl::InternalError(absl::StrCat("fusion builder: tuple-valued ",
                                                output.member->name(),
                                                " cannot be one of several outputs"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status GroupBuilder::Reroute(HloInstruction* fusion) {
  for (size_t k = 0; k < outputs_.size(); ++k) {
    const Output& output = outputs_[k];
    HloInstruction* replacement = fusion;
    if (outputs_.size() > 1) {
      replacement = computation_.AddInstruction(
          HloInstruction::CreateGetTupleElement(fusion, static_cast<int64_t>(k)));
    }
    if (output.index < 0) {
      std::vector<HloInstruction*> users = output.member->users();
      for (HloInstruction* user : users) {
        if (!ReadsInside(user)) output.member->ReplaceUseWith(user, replacement);
      }
      if (old_root_ == output.member) computation_.set_root(replacement);
      continue;
    }
    // A reader of element `index` of a merged multi-output fusion.
    std::vector<HloInstruction*> users = output.member->users();
    for (HloInstruction* user : users) {
      if (IsMember(user) && !IsDuplicated(user)) continue;
      if (user->tuple_index() != output.index) continue;
      HLOC_RETURN_IF_ERROR(user->ReplaceAllUsesWith(replacement));
      HLOC_RETURN_IF_ERROR(computation_.RemoveInstruction(user));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<HloInstruction*> GroupBuilder::Build(
    const FusionGroup& group, std::vector<HloComputation*>* dead_computations,
    std::vector<HloInstruction*>* duplicated_originals) {
  group_ = &group;
  position_.clear();
  value_.clear();
  tuple_value_.clear();
  parameter_of_.clear();
  caller_operands_.clear();
  outputs_.clear();
  merged_.clear();
  if (group_->members.empty()) return absl::InternalError("fusion builder: empty group");
  if (!group_->duplicated.empty() && group_->duplicated.size() != group_->members.size()) {
    return absl::InternalError("fusion builder: duplicated flags do not match the members");
  }
  HloModule* module = computation_.parent();
  if (module == nullptr) return absl::InternalError("fusion builder: computation has no module");
  for (size_t k = 0; k < group_->members.size(); ++k) {
    HloInstruction* member = group_->members[k];
    if (member->parent() != &computation_) {
      return absl::InternalError(absl::StrCat("fusion builder: ", member->name(), " is not in ",
                                              computation_.name()));
    }
    if (member->opcode() == HloOpcode::kParameter || !member->control_predecessors().empty() ||
        !member->control_successors().empty()) {
      return absl::InternalError(absl::StrCat("fusion builder: cannot fuse ", member->name()));
    }
    if (!position_.emplace(member, k).second) {
      return absl::InternalError(absl::StrCat("fusion builder: ", member->name(), " twice"));
    }
  }
  duplicated_ = group_->duplicated;
  if (!duplicated_.empty()) {
    // Users come after their operands, so walk backwards.
    for (size_t k = group_->members.size(); k-- > 0;) {
      HloInstruction* member = group_->members[k];
      if (!duplicated_[k] || member == computation_.root()) continue;
      bool all_inside = true;
      for (const HloInstruction* user : member->users()) {
        auto it = position_.find(user);
        if (it == position_.end() || duplicated_[it->second]) all_inside = false;
      }
      if (all_inside) duplicated_[k] = false;
    }
  }

  // The kernel's computation joins the module first, so members can move in.
  old_root_ = computation_.root();
  if (old_root_ != nullptr && IsMember(old_root_) && !IsDuplicated(old_root_)) {
    computation_.set_root(nullptr);
  }
  body_ = module->AddComputation(std::make_unique<HloComputation>(group_->computation_name));
  for (HloInstruction* member : group_->members) {
    if (member->opcode() == HloOpcode::kFusion) {
      if (IsDuplicated(member)) {
        return absl::InternalError(absl::StrCat("fusion builder: fusion ", member->name(),
                                                " cannot be duplicated"));
      }
      HLOC_RETURN_IF_ERROR(InlineFusion(member));
    } else {
      HLOC_RETURN_IF_ERROR(AddMember(member));
    }
  }
  HLOC_RETURN_IF_ERROR(CollectOutputs());
  if (outputs_.size() == 1) {
    body_->set_root(outputs_[0].value);
  } else {
    std::vector<HloInstruction*> elements;
    elements.reserve(outputs_.size());
    for (const Output& output : outputs_) elements.push_back(output.value);
    body_->set_root(body_->AddInstruction(HloInstruction::CreateTuple(elements)));
  }

  std::unique_ptr<HloInstruction> fusion =
      HloInstruction::CreateFusion(body_, group_->kind, caller_operands_);
  fusion->set_name(group_->instruction_name);
  fusion->set_backend_config(group_->backend_config);
  // The fusion stands for its last output: keep that op's source location.
  *fusion->mutable_metadata() = outputs_.back().member->metadata();
  HloInstruction* added = computation_.AddInstruction(std::move(fusion));
  HLOC_RETURN_IF_ERROR(Reroute(added));

  // Members that did not move (merged fusions, readers of their outputs)
  // leave users-first; duplicated originals stay for their other readers.
  for (auto it = group_->members.rbegin(); it != group_->members.rend(); ++it) {
    if ((*it)->parent() == body_) continue;
    if (IsDuplicated(*it)) {
      duplicated_originals->push_back(*it);
      continue;
    }
    HLOC_RETURN_IF_ERROR(computation_.RemoveInstruction(*it));
  }
  dead_computations->insert(dead_computations->end(), merged_.begin(), merged_.end());
  return added;
}

}  // namespace

FusionDecision CheckGroupBuildable(const HloComputation& computation, const FusionGroup& group) {
  absl::flat_hash_map<const HloInstruction*, bool> duplicated;  // member -> flag
  for (size_t k = 0; k < group.members.size(); ++k) {
    duplicated[group.members[k]] = !group.duplicated.empty() && group.duplicated[k];
  }
  auto reads_inside = [&](const HloInstruction* user) {
    auto it = duplicated.find(user);
    return it != duplicated.end() && !it->second;
  };
  int64_t outputs = 0;
  const HloInstruction* tuple_valued = nullptr;
  for (const HloInstruction* member : group.members) {
    if (duplicated[member]) continue;
    const bool is_root = computation.root() == member;
    const bool tuple_root = member->opcode() == HloOpcode::kFusion &&
                            member->fused_computation() != nullptr &&
                            member->fused_computation()->root() != nullptr &&
                            member->fused_computation()->root()->opcode() == HloOpcode::kTuple;
    if (tuple_root) {
      // A merged multi-output fusion: its readers outside take element outputs.
      for (const HloInstruction* user : member->users()) {
        if (reads_inside(user)) continue;
        if (user->opcode() != HloOpcode::kGetTupleElement) {
          return FusionDecision::Refuse(
              fusion_rule::kTupleValue,
              absl::StrCat(user->name(), " reads multi-output fusion ", member->name(), " whole"));
        }
        ++outputs;
      }
      if (is_root) {
        return FusionDecision::Refuse(
            fusion_rule::kTupleValue,
            absl::StrCat("multi-output fusion ", member->name(), " is the root"));
      }
      continue;
    }
    bool used_outside = is_root;
    for (const HloInstruction* user : member->users()) used_outside |= !reads_inside(user);
    if (!used_outside) continue;
    ++outputs;
    if (member->shape().IsTuple()) tuple_valued = member;
  }
  if (outputs == 0 && !group.members.empty()) {
    // Dead code a pass left behind (DCE runs after fusion): no kernel.
    return FusionDecision::Refuse(
        fusion_rule::kUnused,
        absl::StrCat("nothing reads the group of ", group.members.back()->name()));
  }
  if (outputs > 1 && tuple_valued != nullptr) {
    return FusionDecision::Refuse(
        fusion_rule::kTupleValue,
        absl::StrCat("tuple-valued ", tuple_valued->name(), " cannot be one of ", outputs,
                     " outputs of one kernel"));
  }
  return FusionDecision::Allow(fusion_rule::kCommitted);
}

absl::StatusOr<BuildResult> BuildFusions(HloComputation& computation,
                                         const std::vector<FusionGroup>& groups) {
  BuildResult result;
  std::vector<HloInstruction*> duplicated_originals;
  GroupBuilder builder(computation);
  for (const FusionGroup& group : groups) {
    HLOC_ASSIGN_OR_RETURN(HloInstruction * fusion, builder.Build(group, &result.dead_computations,
                                                                 &duplicated_originals));
    result.fusions.push_back(fusion);
  }
  // Originals that every reader replaced by a copy are dead now; so may be
  // their duplicated operands in turn.
  absl::flat_hash_set<HloInstruction*> pending(duplicated_originals.begin(),
                                               duplicated_originals.end());
  std::vector<HloInstruction*> worklist(duplicated_originals.rbegin(),
                                        duplicated_originals.rend());
  while (!worklist.empty()) {
    HloInstruction* instruction = worklist.back();
    worklist.pop_back();
    if (!pending.contains(instruction)) continue;
    if (!instruction->users().empty() || computation.root() == instruction) continue;
    pending.erase(instruction);
    std::vector<HloInstruction*> operands = instruction->operands();
    HLOC_RETURN_IF_ERROR(computation.RemoveInstruction(instruction));
    for (HloInstruction* operand : operands) {
      if (pending.contains(operand)) worklist.push_back(operand);
    }
  }
  return result;
}

}  // namespace hloc
