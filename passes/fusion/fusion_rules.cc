// The default fusion policy: op classification, the edge table, budgets,
// overrides and extra rules (see fusion_rules.h for the picture).
#include "passes/fusion/fusion_rules.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/update_window_reads.h"

namespace hloc {
namespace {

int Index(OpPatternKind kind) { return static_cast<int>(kind); }

OpPatternKind Max(OpPatternKind a, OpPatternKind b) { return Index(a) >= Index(b) ? a : b; }

int64_t ElementsOf(const Shape& shape) {
  if (!shape.IsArray()) return 1;
  std::optional<int64_t> count = shape.CheckedElementCount();
  return count ? *count : INT64_MAX;
}

bool IsTransferOrOrderingOp(HloOpcode opcode) {
  return IsCollective(opcode) || IsAsyncOrCommunication(opcode);
}

}  // namespace

absl::string_view OpPatternKindName(OpPatternKind kind) {
  switch (kind) {
    case OpPatternKind::kElementwise: return "elementwise";
    case OpPatternKind::kBroadcast: return "broadcast";
    case OpPatternKind::kInjective: return "injective";
    case OpPatternKind::kReduction: return "reduction";
    case OpPatternKind::kOutElementwiseFusable: return "out-elementwise-fusable";
    case OpPatternKind::kOpaque: return "opaque";
  }
  return "?";
}

std::string FusionDecision::ToString() const {
  std::string out = absl::StrCat(ok_ ? "fused (" : "refused (", rule_, ")");
  if (!reason_.empty()) absl::StrAppend(&out, ": ", reason_);
  return out;
}

void GroupSummary::Add(const NodeTraits& traits) {
  instructions += traits.size;
  reductions += traits.reductions;
  dots += traits.dots;
  expensive_ops += traits.expensive_ops;
  kind = Max(kind, traits.kind);
}

void GroupSummary::Merge(const GroupSummary& other) {
  instructions += other.instructions;
  reductions += other.reductions;
  dots += other.dots;
  expensive_ops += other.expensive_ops;
  kind = Max(kind, other.kind);
}

bool IsFallbackFusion(const HloInstruction& instruction) {
  return instruction.opcode() == HloOpcode::kFusion &&
         instruction.fusion_kind() == FusionKind::kCustom &&
         instruction.backend_config() == kFallbackBackendConfig;
}

bool UpdatesInPlace(const HloInstruction& kernel) {
  if (kernel.opcode() == HloOpcode::kDynamicUpdateSlice) return true;
  if (kernel.opcode() != HloOpcode::kFusion || kernel.shape().IsTuple()) return false;
  const HloInstruction* root = kernel.fused_computation()->root();
  if (root->opcode() != HloOpcode::kDynamicUpdateSlice) return false;
  return root->operand(0)->opcode() == HloOpcode::kParameter &&
         ReadsUpdatedArrayOnlyInItsWindow(*root);
}

bool IsHorizontalFusion(const HloInstruction& instruction) {
  return instruction.opcode() == HloOpcode::kFusion &&
         instruction.backend_config() == kHorizontalBackendConfig;
}

FusionRules::FusionRules() {
  using K = OpPatternKind;
  const K loop_kinds[] = {K::kElementwise, K::kBroadcast, K::kInjective};
  for (K producer : loop_kinds) {
    for (K consumer : loop_kinds) SetEdge(producer, consumer, true, fusion_rule::kLoop);
    SetEdge(producer, K::kReduction, true, fusion_rule::kReductionPrologue);
    SetEdge(producer, K::kOutElementwiseFusable, false, fusion_rule::kDotPrologue);
  }
  SetEdge(K::kReduction, K::kElementwise, true, fusion_rule::kReductionEpilogue);
  SetEdge(K::kOutElementwiseFusable, K::kElementwise, true, fusion_rule::kDotEpilogue);
}

void FusionRules::SetEdge(OpPatternKind producer, OpPatternKind consumer, bool allowed,
                          absl::string_view rule) {
  EdgeEntry& entry = table_[Index(producer)][Index(consumer)];
  entry.allowed = allowed;
  if (!rule.empty()) entry.rule = std::string(rule);
}

bool FusionRules::EdgeAllowed(OpPatternKind producer, OpPatternKind consumer) const {
  return table_[Index(producer)][Index(consumer)].allowed;
}

void FusionRules::set_fuse_into_dot_prologue(bool on) {
  for (OpPatternKind producer :
       {OpPatternKind::kElementwise, OpPatternKind::kBroadcast, OpPatternKind::kInjective}) {
    SetEdge(producer, OpPatternKind::kOutElementwiseFusable, on, fusion_rule::kDotPrologue);
  }
}

void FusionRules::set_fuse_reduction_epilogue(bool on) {
  SetEdge(OpPatternKind::kReduction, OpPatternKind::kElementwise, on,
          fusion_rule::kReductionEpilogue);
}

void FusionRules::set_fuse_dot_epilogue(bool on) {
  SetEdge(OpPatternKind::kOutElementwiseFusable, OpPatternKind::kElementwise, on,
          fusion_rule::kDotEpilogue);
}

void FusionRules::AddEdgeRule(std::string name, EdgeRule rule) {
  edge_rules_.emplace_back(std::move(name), std::move(rule));
}

void FusionRules::AddInstructionRule(std::string name, InstructionRule rule) {
  instruction_rules_.emplace_back(std::move(name), std::move(rule));
}

OpPatternKind FusionRules::KindOf(const HloInstruction& instruction) const {
  const HloOpcode opcode = instruction.opcode();
  if (opcode == HloOpcode::kBitcastConvert) {
    // Changing the element width changes the dimensions: an index remap.
    return instruction.operand(0)->shape().SameDimensions(instruction.shape())
               ? OpPatternKind::kElementwise
               : OpPatternKind::kInjective;
  }
  if (IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode)) {
    return OpPatternKind::kElementwise;
  }
  switch (opcode) {
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
    case HloOpcode::kMap:
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
      return OpPatternKind::kElementwise;
    case HloOpcode::kBroadcast:
      return OpPatternKind::kBroadcast;
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kGather:
    case HloOpcode::kReduceWindow:
      return OpPatternKind::kInjective;
    case HloOpcode::kReduce:
      return OpPatternKind::kReduction;
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
      return OpPatternKind::kOutElementwiseFusable;
    case HloOpcode::kFusion:
      return DescribeFusion(instruction).kind;
    default:
      return OpPatternKind::kOpaque;
  }
}

bool FusionRules::IsExpensive(const HloInstruction& instruction) const {
  switch (instruction.opcode()) {
    case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kLog:
    case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kTanh:
    case HloOpcode::kSin: case HloOpcode::kCos: case HloOpcode::kTan:
    case HloOpcode::kAtan2: case HloOpcode::kErf: case HloOpcode::kPower:
    case HloOpcode::kSqrt: case HloOpcode::kRsqrt: case HloOpcode::kCbrt:
    case HloOpcode::kDivide: case HloOpcode::kRemainder: case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow: case HloOpcode::kDot: case HloOpcode::kConvolution:
    case HloOpcode::kMap:
      return true;
    case HloOpcode::kFusion:
      return DescribeFusion(instruction).expensive;
    default:
      return false;
  }
}

bool FusionRules::ReusesOperand(const HloInstruction& consumer, int64_t operand_index) const {
  if (operand_index < 0 || operand_index >= consumer.operand_count()) return true;
  const HloInstruction& operand = *consumer.operand(operand_index);
  const int64_t out_elements = consumer.shape().IsArray() ? ElementsOf(consumer.shape()) : 1;
  const int64_t in_elements = ElementsOf(operand.shape());
  switch (consumer.opcode()) {
    case HloOpcode::kBroadcast:
      return out_elements > in_elements;
    case HloOpcode::kGather:
      if (operand_index == 1) {
        // Each output element reads its own index vector: an index is read
        // once per element of its slice.
        int64_t slice_elements = 1;
        for (int64_t size : consumer.attrs().gather_slice_sizes) slice_elements *= size;
        return slice_elements > 1;
      }
      return true;
    case HloOpcode::kReduceWindow:
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
      return true;
    case HloOpcode::kReduce:
      // Inputs are read once; init values once per output element.
      return operand_index >= consumer.operand_count() / 2 && out_elements > 1;
    case HloOpcode::kPad:
    case HloOpcode::kDynamicSlice:
      // The padding value and the start indices are read for many elements.
      return operand_index >= 1 && out_elements > 1;
    case HloOpcode::kDynamicUpdateSlice:
      return operand_index >= 2 && out_elements > 1;
    case HloOpcode::kReshape: case HloOpcode::kBitcast: case HloOpcode::kTranspose:
    case HloOpcode::kSlice: case HloOpcode::kConcatenate: case HloOpcode::kReverse:
      return false;
    default:
      break;
  }
  OpPatternKind kind = KindOf(consumer);
  if (kind == OpPatternKind::kElementwise) {
    // Implicitly broadcast scalars (select's predicate, clamp's bounds).
    return in_elements < out_elements;
  }
  return true;
}

OperandUse FusionRules::UseOf(const HloInstruction& consumer, int64_t operand_index) const {
  if (consumer.opcode() == HloOpcode::kFusion) {
    std::vector<OperandUse> uses = OperandUsesOfFusion(consumer);
    if (operand_index >= 0 && operand_index < static_cast<int64_t>(uses.size())) {
      return uses[operand_index];
    }
    return OperandUse{};
  }
  return OperandUse{IsOrderPreservingReshape(consumer) ? OpPatternKind::kElementwise
                                                       : KindOf(consumer),
                    ReusesOperand(consumer, operand_index)};
}

std::vector<OperandUse> FusionRules::OperandUsesOfFusion(const HloInstruction& fusion) const {
  std::vector<OperandUse> result(fusion.operand_count());
  const HloComputation* body = fusion.fused_computation();
  if (body == nullptr) return result;
  // Walk users before operands: what lies downstream of each value and
  // whether the value reaches a reusing read.
  struct Downstream {
    OpPatternKind kind = OpPatternKind::kElementwise;
    bool reuses = false;
  };
  std::vector<HloInstruction*> order = body->MakeInstructionReversePostOrder();
  absl::flat_hash_map<const HloInstruction*, Downstream> down;
  down.reserve(order.size());
  for (HloInstruction* node : order) {
    Downstream d;
    for (HloInstruction* user : node->users()) {
      auto it = down.find(user);
      const Downstream below = it == down.end() ? Downstream{} : it->second;
      const bool plumbing = user->opcode() == HloOpcode::kTuple ||
                            user->opcode() == HloOpcode::kGetTupleElement;
      const bool one_to_one = plumbing || IsOrderPreservingReshape(*user);
      d.kind = Max(d.kind, one_to_one ? OpPatternKind::kElementwise : KindOf(*user));
      d.kind = Max(d.kind, below.kind);
      bool reads_many = false;
      if (!plumbing) {
        for (int64_t i = 0; i < user->operand_count(); ++i) {
          if (user->operand(i) == node && ReusesOperand(*user, i)) reads_many = true;
        }
      }
      d.reuses = d.reuses || reads_many || below.reuses;
    }
    down[node] = d;
  }
  for (int64_t i = 0; i < fusion.operand_count() && i < body->num_parameters(); ++i) {
    const HloInstruction* parameter = body->parameter(i);
    if (parameter == nullptr) continue;
    auto it = down.find(parameter);
    if (it != down.end()) result[i] = OperandUse{it->second.kind, it->second.reuses};
  }
  return result;
}

FusionDecision FusionRules::CheckOverrides(const HloInstruction& instruction) const {
  if (!never_opcodes_.empty() && never_opcodes_.contains(instruction.opcode())) {
    return FusionDecision::Refuse(
        fusion_rule::kOverrideOpcode,
        absl::StrCat("opcode ", HloOpcodeName(instruction.opcode()), " is marked never-fuse"));
  }
  if (!never_names_.empty() && never_names_.contains(instruction.name())) {
    return FusionDecision::Refuse(fusion_rule::kOverrideName,
                                  absl::StrCat(instruction.name(), " is marked never-fuse"));
  }
  const auto& attributes = instruction.frontend_attributes().map();
  auto barrier = attributes.empty() ? attributes.end() : attributes.find(no_fusion_attribute_);
  if (barrier != attributes.end() && barrier->second == "true") {
    return FusionDecision::Refuse(
        fusion_rule::kOverrideAttribute,
        absl::StrCat(instruction.name(), " has ", no_fusion_attribute_, "=\"true\""));
  }
  for (const auto& [name, rule] : instruction_rules_) {
    FusionDecision decision = rule(instruction);
    if (!decision.ok()) return decision;
  }
  return FusionDecision::Allow(fusion_rule::kLoop);
}

namespace {

// Instructions a fused kernel spends no code per element on: a scalar
// constant, and a broadcast of a scalar (the kernel reads the scalar once).
// They do not count against max_instructions, so that a long elementwise
// chain (JAX's unrolled threefry and erf_inv: every constant of theirs is a
// broadcast) is not cut short by its own constants.
bool CostsNoCode(const HloInstruction& instruction) {
  const HloOpcode opcode = instruction.opcode();
  if (opcode == HloOpcode::kConstant) return instruction.shape().IsScalar();
  return opcode == HloOpcode::kBroadcast && instruction.operand_count() == 1 &&
         instruction.operand(0)->shape().IsScalar();
}

}  // namespace

NodeTraits FusionRules::DescribeFusion(const HloInstruction& fusion) const {
  NodeTraits traits;
  traits.is_fusion = true;
  traits.horizontal = IsHorizontalFusion(fusion);
  const HloComputation* body = fusion.fused_computation();
  if (body == nullptr || body->root() == nullptr) {
    traits.why_not_rule = fusion_rule::kOpaque;
    traits.why_not = "fusion without a fused computation";
    return traits;
  }
  traits.multi_output = body->root()->opcode() == HloOpcode::kTuple;
  traits.size = 0;
  traits.kind = OpPatternKind::kElementwise;
  bool opaque_member = false;
  body->ForEachInstruction([&](HloInstruction* member) {
    const HloOpcode opcode = member->opcode();
    if (opcode == HloOpcode::kParameter) return;
    if (opcode == HloOpcode::kTuple && member == body->root()) return;
    if (!CostsNoCode(*member)) ++traits.size;
    OpPatternKind kind = KindOf(*member);
    if (kind == OpPatternKind::kOpaque && opcode != HloOpcode::kGetTupleElement) {
      opaque_member = true;
    }
    if (kind != OpPatternKind::kOpaque) traits.kind = Max(traits.kind, kind);
    if (opcode == HloOpcode::kReduce) ++traits.reductions;
    if (opcode == HloOpcode::kDot || opcode == HloOpcode::kConvolution) ++traits.dots;
    if (IsExpensive(*member)) ++traits.expensive_ops;
  });
  traits.expensive = traits.expensive_ops > 0;
  if (fusion.fusion_kind() == FusionKind::kCustom &&
      !(fallback_fusible_ && IsFallbackFusion(fusion))) {
    traits.kind = OpPatternKind::kOpaque;
    traits.why_not_rule = fusion_rule::kCustomFusion;
    traits.why_not = "a kCustom fusion is a backend's own kernel";
    return traits;
  }
  if (traits.horizontal) {
    traits.kind = OpPatternKind::kOpaque;
    traits.why_not_rule = fusion_rule::kHorizontal;
    traits.why_not = "a horizontal fusion's outputs do not share an index space";
    return traits;
  }
  if (opaque_member) {
    traits.kind = OpPatternKind::kOpaque;
    traits.why_not_rule = fusion_rule::kOpaque;
    traits.why_not = "the fused computation holds an op that never fuses";
    return traits;
  }
  if (traits.multi_output) {
    for (const HloInstruction* user : fusion.users()) {
      if (user->opcode() != HloOpcode::kGetTupleElement) {
        traits.kind = OpPatternKind::kOpaque;
        traits.why_not_rule = fusion_rule::kTupleValue;
        traits.why_not = absl::StrCat("its tuple is used whole by ", user->name());
        return traits;
      }
    }
  }
  traits.fusible = true;
  return traits;
}

NodeTraits FusionRules::Describe(const HloInstruction& instruction) const {
  NodeTraits traits;
  FusionDecision override_decision = CheckOverrides(instruction);
  if (instruction.opcode() == HloOpcode::kFusion) {
    traits = DescribeFusion(instruction);
  } else {
    traits.kind = KindOf(instruction);
    traits.size = CostsNoCode(instruction) ? 0 : 1;
    traits.expensive = IsExpensive(instruction);
    traits.expensive_ops = traits.expensive ? 1 : 0;
    traits.reductions = instruction.opcode() == HloOpcode::kReduce ? 1 : 0;
    traits.dots = traits.kind == OpPatternKind::kOutElementwiseFusable ? 1 : 0;
    traits.fusible = true;
    if (traits.kind == OpPatternKind::kOpaque) {
      traits.fusible = false;
      traits.why_not_rule = fusion_rule::kOpaque;
      traits.why_not = absl::StrCat(HloOpcodeName(instruction.opcode()), " never fuses");
    } else if (instruction.shape().IsTuple() && instruction.opcode() != HloOpcode::kReduce) {
      traits.fusible = false;
      traits.why_not_rule = fusion_rule::kTupleValue;
      traits.why_not = "a tuple-valued instruction";
    }
    const HloOpcode opcode = instruction.opcode();
    if (opcode == HloOpcode::kIota ||
        (opcode == HloOpcode::kConstant && instruction.shape().IsArray() &&
         ElementsOf(instruction.shape()) <= budgets_.max_duplicated_constant_elements)) {
      traits.free_leaf = true;
    }
    const bool cheap_kind = traits.kind == OpPatternKind::kElementwise ||
                            traits.kind == OpPatternKind::kBroadcast ||
                            traits.kind == OpPatternKind::kInjective;
    const bool heavy_op = opcode == HloOpcode::kGather || opcode == HloOpcode::kConcatenate ||
                          opcode == HloOpcode::kDynamicUpdateSlice ||
                          opcode == HloOpcode::kReduceWindow || opcode == HloOpcode::kMap ||
                          opcode == HloOpcode::kPad || opcode == HloOpcode::kConstant;
    traits.duplicable = traits.free_leaf || (cheap_kind && !traits.expensive && !heavy_op);
  }
  if (traits.fusible && IsTransferOrOrderingOp(instruction.opcode())) {
    traits.fusible = false;
    traits.why_not_rule = fusion_rule::kSideEffect;
    traits.why_not = "communication or asynchronous op";
  }
  if (traits.fusible && instruction.HasSideEffect()) {
    traits.fusible = false;
    traits.why_not_rule = fusion_rule::kSideEffect;
    traits.why_not = "it has side effects";
  }
  if (traits.fusible &&
      (!instruction.control_predecessors().empty() || !instruction.control_successors().empty())) {
    traits.fusible = false;
    traits.why_not_rule = fusion_rule::kControlDependency;
    traits.why_not = "it has control dependencies";
  }
  if (traits.fusible && !override_decision.ok()) {
    traits.fusible = false;
    traits.why_not_rule = override_decision.rule() == fusion_rule::kOverrideOpcode
                              ? fusion_rule::kOverrideOpcode
                          : override_decision.rule() == fusion_rule::kOverrideName
                              ? fusion_rule::kOverrideName
                          : override_decision.rule() == fusion_rule::kOverrideAttribute
                              ? fusion_rule::kOverrideAttribute
                              : fusion_rule::kExtraRule;
    traits.why_not = override_decision.reason();
  }
  if (!traits.fusible) {
    traits.free_leaf = false;
    traits.duplicable = false;
  }
  return traits;
}

FusionDecision FusionRules::CheckEdge(const HloInstruction& producer,
                                      const NodeTraits& producer_traits,
                                      const HloInstruction& consumer,
                                      const NodeTraits& consumer_traits,
                                      const OperandUse& use) const {
  if (!producer_traits.fusible) {
    return FusionDecision::Refuse(producer_traits.why_not_rule,
                                  absl::StrCat(producer.name(), ": ", producer_traits.why_not));
  }
  if (!consumer_traits.fusible) {
    return FusionDecision::Refuse(consumer_traits.why_not_rule,
                                  absl::StrCat(consumer.name(), ": ", consumer_traits.why_not));
  }
  if (producer_traits.multi_output) {
    return FusionDecision::Refuse(
        fusion_rule::kMultiOutputProducer,
        absl::StrCat(producer.name(), " has several outputs, read through get-tuple-element"));
  }
  if (producer.shape().IsTuple()) {
    return FusionDecision::Refuse(fusion_rule::kTupleValue,
                                  absl::StrCat(producer.name(), " produces a tuple"));
  }
  // A dynamic-update-slice, or a kernel that ends in one (so that a second
  // run decides as the first did).
  const HloInstruction* update =
      producer.opcode() == HloOpcode::kFusion && !producer.shape().IsTuple()
          ? producer.fused_computation()->root()
          : &producer;
  if (update->opcode() == HloOpcode::kDynamicUpdateSlice && update->operand_count() >= 2 &&
      ElementsOf(update->operand(1)->shape()) * budgets_.min_in_place_update_ratio <=
          ElementsOf(update->shape())) {
    return FusionDecision::Refuse(
        fusion_rule::kInPlaceUpdate,
        absl::StrCat(producer.name(), " writes ", ElementsOf(update->operand(1)->shape()),
                     " of its ", ElementsOf(update->shape()),
                     " elements: alone it updates them in place; fused into ", consumer.name(),
                     " every element would be recomputed through it"));
  }
  const EdgeEntry& entry = table_[Index(producer_traits.kind)][Index(use.kind)];
  if (!entry.allowed) {
    return FusionDecision::Refuse(
        entry.rule.empty() ? fusion_rule::kKindTable : absl::string_view(entry.rule),
        absl::StrCat(OpPatternKindName(producer_traits.kind), " ", producer.name(),
                     " may not fuse into ", OpPatternKindName(use.kind), " ", consumer.name()));
  }
  for (const auto& [name, rule] : edge_rules_) {
    FusionDecision decision = rule(producer, consumer);
    if (!decision.ok()) {
      return FusionDecision::Refuse(name, absl::StrCat(decision.rule(), ": ", decision.reason()));
    }
  }
  return FusionDecision::Allow(entry.rule);
}

FusionDecision FusionRules::CheckGroup(const GroupSummary& group) const {
  if (group.instructions > budgets_.max_instructions) {
    return FusionDecision::Refuse(fusion_rule::kBudgetInstructions,
                                  absl::StrCat(group.instructions, " instructions > ",
                                               budgets_.max_instructions));
  }
  if (group.operands > budgets_.max_operands) {
    return FusionDecision::Refuse(
        fusion_rule::kBudgetOperands,
        absl::StrCat(group.operands, " operands > ", budgets_.max_operands));
  }
  if (group.outputs > budgets_.max_outputs) {
    return FusionDecision::Refuse(
        fusion_rule::kBudgetOutputs,
        absl::StrCat(group.outputs, " outputs > ", budgets_.max_outputs));
  }
  const bool sibling_reductions = group.reductions > 1 && group.dots == 0 &&
                                  group.reductions_share_space;
  if (group.reductions + group.dots > 1 && !sibling_reductions) {
    return FusionDecision::Refuse(
        fusion_rule::kOneHero, absl::StrCat("would hold ", group.reductions, " reductions and ",
                                            group.dots, " dots/convolutions"));
  }
  return FusionDecision::Allow(fusion_rule::kCommitted);
}

FusionKind FusionRules::KindForGroup(const GroupSummary& group, bool has_transpose_output) {
  if (group.dots > 0) return FusionKind::kOutput;
  if (group.reductions > 0 || has_transpose_output) return FusionKind::kInput;
  return FusionKind::kLoop;
}

bool FusionRules::IsOrderPreservingReshape(const HloInstruction& instruction) {
  return (instruction.opcode() == HloOpcode::kReshape ||
          instruction.opcode() == HloOpcode::kBitcast) &&
         instruction.operand_count() == 1 && instruction.shape().IsArray() &&
         instruction.operand(0)->shape().IsArray() &&
         ElementsOf(instruction.shape()) == ElementsOf(instruction.operand(0)->shape());
}

bool FusionRules::IsRealTranspose(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kTranspose) return false;
  // Dimensions of size 1 can move freely; the rest must keep their order for
  // the transpose to be a relabelling.
  const Shape& operand = instruction.operand(0)->shape();
  int64_t last = -1;
  for (int64_t d : instruction.dimensions()) {
    if (d < 0 || d >= operand.rank()) return false;
    if (operand.dimensions(d) == 1) continue;
    if (d < last) return true;
    last = d;
  }
  return false;
}

}  // namespace hloc
