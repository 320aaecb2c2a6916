#include "hlo/instruction.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace {

template <typename Enum, size_t N>
std::optional<Enum> FindByName(const std::pair<Enum, absl::string_view> (&table)[N],
                               absl::string_view name) {
  for (const auto& [value, text] : table) {
    if (text == name) return value;
  }
  return std::nullopt;
}

template <typename Enum, size_t N>
absl::string_view NameOf(const std::pair<Enum, absl::string_view> (&table)[N], Enum value) {
  for (const auto& [v, text] : table) {
    if (v == value) return text;
  }
  return "?";
}

const std::pair<FusionKind, absl::string_view> kFusionKinds[] = {
    {FusionKind::kLoop, "kLoop"},
    {FusionKind::kInput, "kInput"},
    {FusionKind::kOutput, "kOutput"},
    {FusionKind::kCustom, "kCustom"},
};

const std::pair<ComparisonDirection, absl::string_view> kDirections[] = {
    {ComparisonDirection::kEq, "EQ"}, {ComparisonDirection::kNe, "NE"},
    {ComparisonDirection::kGe, "GE"}, {ComparisonDirection::kGt, "GT"},
    {ComparisonDirection::kLe, "LE"}, {ComparisonDirection::kLt, "LT"},
};

const std::pair<ComparisonType, absl::string_view> kComparisonTypes[] = {
    {ComparisonType::kDefault, ""},
    {ComparisonType::kFloat, "FLOAT"},
    {ComparisonType::kTotalOrder, "TOTALORDER"},
    {ComparisonType::kSigned, "SIGNED"},
    {ComparisonType::kUnsigned, "UNSIGNED"},
};

void RemoveFirst(std::vector<HloInstruction*>* list, const HloInstruction* item) {
  auto it = std::find(list->begin(), list->end(), item);
  if (it != list->end()) list->erase(it);
}

}  // namespace

absl::string_view FusionKindName(FusionKind kind) { return NameOf(kFusionKinds, kind); }
std::optional<FusionKind> FusionKindFromName(absl::string_view name) {
  return FindByName(kFusionKinds, name);
}
absl::string_view ComparisonDirectionName(ComparisonDirection d) { return NameOf(kDirections, d); }
std::optional<ComparisonDirection> ComparisonDirectionFromName(absl::string_view name) {
  return FindByName(kDirections, name);
}
absl::string_view ComparisonTypeName(ComparisonType t) { return NameOf(kComparisonTypes, t); }
std::optional<ComparisonType> ComparisonTypeFromName(absl::string_view name) {
  if (name.empty()) return std::nullopt;
  return FindByName(kComparisonTypes, name);
}

std::unique_ptr<HloInstruction> HloInstruction::Create(HloOpcode opcode, Shape shape,
                                                       absl::Span<HloInstruction* const> operands) {
  std::unique_ptr<HloInstruction> instruction(new HloInstruction(opcode, std::move(shape)));
  instruction->operands_.reserve(operands.size());
  for (HloInstruction* operand : operands) instruction->AppendOperand(operand);
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateParameter(int64_t number, Shape shape,
                                                                std::string name) {
  auto instruction = Create(HloOpcode::kParameter, std::move(shape));
  instruction->mutable_attrs()->parameter_number = number;
  instruction->name_ = std::move(name);
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateConstant(Literal literal) {
  auto instruction = Create(HloOpcode::kConstant, literal.shape());
  instruction->mutable_attrs()->literal = std::move(literal);
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateGetTupleElement(HloInstruction* tuple,
                                                                      int64_t index) {
  auto instruction =
      Create(HloOpcode::kGetTupleElement, tuple->shape().tuple_shapes(index), {tuple});
  instruction->mutable_attrs()->tuple_index = index;
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateTuple(
    absl::Span<HloInstruction* const> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (HloInstruction* e : elements) shapes.push_back(e->shape());
  return Create(HloOpcode::kTuple, Shape::Tuple(std::move(shapes)), elements);
}

std::unique_ptr<HloInstruction> HloInstruction::CreateBroadcast(Shape shape,
                                                                HloInstruction* operand,
                                                                std::vector<int64_t> dimensions) {
  auto instruction = Create(HloOpcode::kBroadcast, std::move(shape), {operand});
  instruction->mutable_attrs()->dimensions = std::move(dimensions);
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateCall(
    HloComputation* computation, absl::Span<HloInstruction* const> operands) {
  auto instruction = Create(HloOpcode::kCall, computation->root()->shape(), operands);
  instruction->called_computations_.push_back(computation);
  return instruction;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateFusion(
    HloComputation* fused, FusionKind kind, absl::Span<HloInstruction* const> operands) {
  auto instruction = Create(HloOpcode::kFusion, fused->root()->shape(), operands);
  instruction->called_computations_.push_back(fused);
  instruction->mutable_attrs()->fusion_kind = kind;
  fused->set_fusion_instruction(instruction.get());
  return instruction;
}

const HloAttributes& HloInstruction::attrs() const {
  static const HloAttributes* const kDefaults = new HloAttributes();
  return attrs_ ? *attrs_ : *kDefaults;
}

HloAttributes* HloInstruction::mutable_attrs() {
  if (!attrs_) attrs_ = std::make_unique<HloAttributes>();
  return attrs_.get();
}

xla::OpMetadata* HloInstruction::mutable_metadata() {
  // Shared metadata is never written in place: the writer gets its own copy.
  if (metadata_ == nullptr || metadata_.use_count() > 1) {
    metadata_ = metadata_ ? std::make_shared<xla::OpMetadata>(*metadata_)
                          : std::make_shared<xla::OpMetadata>();
  }
  // Every metadata_ was made as a mutable xla::OpMetadata (make_shared above
  // or by the reader that shared it), so writing through it is allowed.
  return const_cast<xla::OpMetadata*>(metadata_.get());
}

xla::HloInstructionProto* HloInstruction::mutable_carried_proto_fields() {
  if (!carried_) carried_ = std::make_unique<xla::HloInstructionProto>();
  return carried_.get();
}

void HloInstruction::AddUser(HloInstruction* user) {
  if (std::find(users_.begin(), users_.end(), user) == users_.end()) users_.push_back(user);
}

void HloInstruction::RemoveUser(HloInstruction* user) { RemoveFirst(&users_, user); }

void HloInstruction::AppendOperand(HloInstruction* operand) {
  operands_.push_back(operand);
  operand->AddUser(this);
}

void HloInstruction::ReplaceOperandWith(int64_t i, HloInstruction* new_operand) {
  HloInstruction* old = operands_[i];
  if (old == new_operand) return;
  operands_[i] = new_operand;
  if (std::find(operands_.begin(), operands_.end(), old) == operands_.end()) {
    old->RemoveUser(this);
  }
  new_operand->AddUser(this);
}

void HloInstruction::ReplaceUseWith(HloInstruction* user, HloInstruction* replacement) {
  for (int64_t i = 0; i < user->operand_count(); ++i) {
    if (user->operands_[i] == this) user->operands_[i] = replacement;
  }
  RemoveUser(user);
  replacement->AddUser(user);
}

absl::Status HloInstruction::ReplaceAllUsesWith(HloInstruction* replacement) {
  if (replacement == this) return absl::OkStatus();
  std::vector<HloInstruction*> users = users_;
  for (HloInstruction* user : users) ReplaceUseWith(user, replacement);
  if (parent_ && parent_->root() == this) parent_->set_root(replacement);
  return absl::OkStatus();
}

void HloInstruction::DetachOperands() {
  for (HloInstruction* operand : operands_) operand->RemoveUser(this);
  operands_.clear();
}

int64_t HloInstruction::OperandIndex(const HloInstruction* operand) const {
  for (int64_t i = 0; i < operand_count(); ++i) {
    if (operands_[i] == operand) return i;
  }
  return -1;
}

void HloInstruction::AddControlDependencyTo(HloInstruction* successor) {
  if (std::find(control_successors_.begin(), control_successors_.end(), successor) !=
      control_successors_.end()) {
    return;
  }
  control_successors_.push_back(successor);
  successor->control_predecessors_.push_back(this);
}

void HloInstruction::RemoveControlDependencyTo(HloInstruction* successor) {
  RemoveFirst(&control_successors_, successor);
  RemoveFirst(&successor->control_predecessors_, this);
}

void HloInstruction::DropAllControlDeps() {
  for (HloInstruction* p : control_predecessors_) RemoveFirst(&p->control_successors_, this);
  for (HloInstruction* s : control_successors_) RemoveFirst(&s->control_predecessors_, this);
  control_predecessors_.clear();
  control_successors_.clear();
}

HloComputation* HloInstruction::to_apply() const {
  return called_computations_.empty() ? nullptr : called_computations_[0];
}
HloComputation* HloInstruction::fused_computation() const {
  return opcode_ == HloOpcode::kFusion && !called_computations_.empty() ? called_computations_[0]
                                                                         : nullptr;
}
HloComputation* HloInstruction::while_condition() const {
  return opcode_ == HloOpcode::kWhile && called_computations_.size() == 2
             ? called_computations_[0]
             : nullptr;
}
HloComputation* HloInstruction::while_body() const {
  return opcode_ == HloOpcode::kWhile && called_computations_.size() == 2
             ? called_computations_[1]
             : nullptr;
}

const std::string* HloInstruction::FindFrontendAttribute(absl::string_view key) const {
  const auto& map = frontend_attributes_.map();
  auto it = map.find(std::string(key));
  return it == map.end() ? nullptr : &it->second;
}

void HloInstruction::SetFrontendAttribute(std::string key, std::string value) {
  (*frontend_attributes_.mutable_map())[std::move(key)] = std::move(value);
}

bool HloInstruction::IsElementwise() const {
  if (!IsElementwiseOpcode(opcode_)) return false;
  return opcode_ != HloOpcode::kBitcastConvert || operands_.empty() ||
         operands_[0]->shape().SameDimensions(shape_);
}

bool HloInstruction::HasSideEffect() const {
  switch (opcode_) {
    case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kRecv:
    case HloOpcode::kRecvDone: case HloOpcode::kInfeed: case HloOpcode::kOutfeed:
    case HloOpcode::kRng: case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kAfterAll: case HloOpcode::kAddDependency:
    case HloOpcode::kAllReduceStart: case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGatherStart: case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteStart: case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncDone:
      return true;
    case HloOpcode::kCustomCall:
      return attrs().custom_call_has_side_effect;
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllGather:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute:
      return attrs().channel_id.has_value() || attrs().constrain_layout;
    default:
      return false;
  }
}

std::unique_ptr<HloInstruction> HloInstruction::CloneWithNewOperands(
    const Shape& shape, absl::Span<HloInstruction* const> new_operands,
    const std::string& suffix) const {
  auto clone = Create(opcode_, shape, new_operands);
  clone->name_ = suffix.empty() ? name_ : absl::StrCat(name_, ".", suffix);
  clone->called_computations_ = called_computations_;
  if (attrs_) clone->attrs_ = std::make_unique<HloAttributes>(*attrs_);
  if (carried_) clone->carried_ = std::make_unique<xla::HloInstructionProto>(*carried_);
  clone->metadata_ = metadata_;
  clone->frontend_attributes_ = frontend_attributes_;
  clone->backend_config_ = backend_config_;
  if (sharding_) clone->sharding_ = std::make_unique<xla::OpSharding>(*sharding_);
  clone->is_composite_ = is_composite_;
  return clone;
}

std::string HloInstruction::ToString() const { return PrintInstruction(*this); }

}  // namespace hloc
