#include "passes/expanders/expansion_builder.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/shape_inference.h"

namespace hloc {
namespace expanders {

bool HasLayouts(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      if (HasLayouts(element)) return true;
    }
    return false;
  }
  return shape.IsArray() && shape.has_layout();
}

ExpansionBuilder::ExpansionBuilder(HloComputation* computation, const HloInstruction* origin)
    : computation_(computation), origin_(origin), keep_layouts_(HasLayouts(origin->shape())) {}

void ExpansionBuilder::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

Shape ExpansionBuilder::WithLayouts(Shape shape) const {
  if (!keep_layouts_) return shape;
  if (shape.IsTuple()) {
    for (Shape& element : *shape.mutable_tuple_shapes()) element = WithLayouts(element);
  } else if (shape.IsArray()) {
    shape.set_layout(Layout::RowMajor(shape.rank()));
  }
  return shape;
}

HloInstruction* ExpansionBuilder::Add(std::unique_ptr<HloInstruction> instruction,
                                      absl::string_view suffix) {
  if (!status_.ok()) return nullptr;
  for (HloInstruction* operand : instruction->operands()) {
    if (operand == nullptr) {
      Fail(absl::InternalError(absl::StrCat("expanding %", origin_->name(), ": null operand")));
      return nullptr;
    }
  }
  absl::StatusOr<Shape> shape = InferShape(*instruction);
  if (!shape.ok()) {
    Fail(absl::InternalError(
        absl::StrCat("expanding %", origin_->name(), ": ", shape.status().message())));
    return nullptr;
  }
  instruction->set_shape(WithLayouts(*std::move(shape)));
  if (instruction->name().empty()) {
    instruction->set_name(suffix.empty() ? absl::StrCat(origin_->name(), ".", HloOpcodeName(instruction->opcode()))
                                         : absl::StrCat(origin_->name(), ".", suffix));
  }
  instruction->set_shared_metadata(origin_->shared_metadata());
  return computation_->AddInstruction(std::move(instruction));
}

HloInstruction* ExpansionBuilder::Parameter(int64_t number, const Shape& shape,
                                            absl::string_view name) {
  if (!status_.ok()) return nullptr;
  auto parameter = HloInstruction::CreateParameter(number, shape, std::string(name));
  return computation_->AddInstruction(std::move(parameter));
}

HloInstruction* ExpansionBuilder::Constant(Literal literal) {
  if (keep_layouts_ && literal.shape().IsArray()) {
    literal.set_layout(Layout::RowMajor(literal.shape().rank()));
  }
  return Add(HloInstruction::CreateConstant(std::move(literal)), "constant");
}

HloInstruction* ExpansionBuilder::Scalar(PrimitiveType type, double value) {
  Literal literal(Shape::Scalar(type));
  literal.SetFromDouble(0, value);
  return Constant(std::move(literal));
}

HloInstruction* ExpansionBuilder::IndexScalar(PrimitiveType type, int64_t value) {
  Literal literal(Shape::Scalar(type));
  literal.SetFromInt64(0, value);
  return Constant(std::move(literal));
}

namespace {

// A shape placeholder for ops whose result inference derives on its own.
Shape Unknown() { return Shape(); }

}  // namespace

HloInstruction* ExpansionBuilder::Unary(HloOpcode opcode, HloInstruction* x) {
  return Add(HloInstruction::Create(opcode, Unknown(), {x}));
}

HloInstruction* ExpansionBuilder::Binary(HloOpcode opcode, HloInstruction* a, HloInstruction* b) {
  return Add(HloInstruction::Create(opcode, Unknown(), {a, b}));
}

HloInstruction* ExpansionBuilder::Compare(HloInstruction* a, HloInstruction* b,
                                          ComparisonDirection direction) {
  auto compare = HloInstruction::Create(HloOpcode::kCompare, Unknown(), {a, b});
  compare->mutable_attrs()->comparison_direction = direction;
  return Add(std::move(compare));
}

HloInstruction* ExpansionBuilder::Select(HloInstruction* predicate, HloInstruction* on_true,
                                         HloInstruction* on_false) {
  return Add(HloInstruction::Create(HloOpcode::kSelect, Unknown(), {predicate, on_true, on_false}));
}

HloInstruction* ExpansionBuilder::Convert(HloInstruction* x, PrimitiveType type) {
  if (x == nullptr) return Add(HloInstruction::Create(HloOpcode::kConvert, Unknown(), {x}));
  Shape shape = x->shape();
  shape.set_element_type(type);
  return Add(HloInstruction::Create(HloOpcode::kConvert, std::move(shape), {x}));
}

HloInstruction* ExpansionBuilder::ConvertIfNeeded(HloInstruction* x, PrimitiveType type) {
  if (x != nullptr && x->shape().element_type() == type) return x;
  return Convert(x, type);
}

HloInstruction* ExpansionBuilder::Broadcast(HloInstruction* x,
                                            const std::vector<int64_t>& dimensions,
                                            std::vector<int64_t> mapping) {
  const PrimitiveType type =
      x == nullptr ? xla::PRIMITIVE_TYPE_INVALID : x->shape().element_type();
  return Add(HloInstruction::CreateBroadcast(Shape(type, dimensions), x, std::move(mapping)));
}

HloInstruction* ExpansionBuilder::Splat(HloInstruction* scalar,
                                        const std::vector<int64_t>& dimensions) {
  return Broadcast(scalar, dimensions, {});
}

HloInstruction* ExpansionBuilder::Reshape(HloInstruction* x,
                                          const std::vector<int64_t>& dimensions) {
  const PrimitiveType type =
      x == nullptr ? xla::PRIMITIVE_TYPE_INVALID : x->shape().element_type();
  return Add(HloInstruction::Create(HloOpcode::kReshape, Shape(type, dimensions), {x}));
}

HloInstruction* ExpansionBuilder::Transpose(HloInstruction* x, std::vector<int64_t> permutation) {
  auto transpose = HloInstruction::Create(HloOpcode::kTranspose, Unknown(), {x});
  transpose->mutable_attrs()->dimensions = std::move(permutation);
  return Add(std::move(transpose));
}

HloInstruction* ExpansionBuilder::Slice(HloInstruction* x, std::vector<int64_t> starts,
                                        std::vector<int64_t> limits) {
  auto slice = HloInstruction::Create(HloOpcode::kSlice, Unknown(), {x});
  slice->mutable_attrs()->slice_strides.assign(starts.size(), 1);
  slice->mutable_attrs()->slice_starts = std::move(starts);
  slice->mutable_attrs()->slice_limits = std::move(limits);
  return Add(std::move(slice));
}

HloInstruction* ExpansionBuilder::Concatenate(absl::Span<HloInstruction* const> parts,
                                              int64_t dimension) {
  auto concatenate = HloInstruction::Create(HloOpcode::kConcatenate, Unknown(), parts);
  concatenate->mutable_attrs()->dimensions = {dimension};
  return Add(std::move(concatenate));
}

HloInstruction* ExpansionBuilder::Iota(PrimitiveType type, const std::vector<int64_t>& dimensions,
                                       int64_t iota_dimension) {
  auto iota = HloInstruction::Create(HloOpcode::kIota, Shape(type, dimensions));
  iota->mutable_attrs()->iota_dimension = iota_dimension;
  return Add(std::move(iota));
}

HloInstruction* ExpansionBuilder::Reduce(HloInstruction* x, HloInstruction* init,
                                         std::vector<int64_t> dimensions,
                                         HloComputation* reducer) {
  auto reduce = HloInstruction::Create(HloOpcode::kReduce, Unknown(), {x, init});
  reduce->mutable_attrs()->dimensions = std::move(dimensions);
  reduce->AppendCalledComputation(reducer);
  return Add(std::move(reduce));
}

HloInstruction* ExpansionBuilder::DynamicSlice(HloInstruction* x,
                                               absl::Span<HloInstruction* const> starts,
                                               std::vector<int64_t> sizes) {
  std::vector<HloInstruction*> operands = {x};
  operands.insert(operands.end(), starts.begin(), starts.end());
  auto slice = HloInstruction::Create(HloOpcode::kDynamicSlice, Unknown(), operands);
  slice->mutable_attrs()->dynamic_slice_sizes = std::move(sizes);
  return Add(std::move(slice));
}

HloInstruction* ExpansionBuilder::DynamicUpdateSlice(HloInstruction* x, HloInstruction* update,
                                                     absl::Span<HloInstruction* const> starts) {
  std::vector<HloInstruction*> operands = {x, update};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return Add(HloInstruction::Create(HloOpcode::kDynamicUpdateSlice, Unknown(), operands));
}

HloInstruction* ExpansionBuilder::Dot(HloInstruction* lhs, HloInstruction* rhs,
                                      const xla::DotDimensionNumbers& dimension_numbers) {
  // Dot's inference takes the declared element type as the preferred one.
  const PrimitiveType type =
      lhs == nullptr ? xla::PRIMITIVE_TYPE_INVALID : lhs->shape().element_type();
  auto dot = HloInstruction::Create(HloOpcode::kDot, Shape::Scalar(type), {lhs, rhs});
  *dot->mutable_attrs()->dot_dimension_numbers.mutable_value() = dimension_numbers;
  return Add(std::move(dot));
}

HloInstruction* ExpansionBuilder::Tuple(absl::Span<HloInstruction* const> elements) {
  for (HloInstruction* element : elements) {
    if (element == nullptr) return Add(HloInstruction::Create(HloOpcode::kTuple, Unknown(), {element}));
  }
  return Add(HloInstruction::CreateTuple(elements));
}

HloInstruction* ExpansionBuilder::GetTupleElement(HloInstruction* tuple, int64_t index) {
  auto gte = HloInstruction::Create(HloOpcode::kGetTupleElement, Unknown(), {tuple});
  gte->mutable_attrs()->tuple_index = index;
  return Add(std::move(gte));
}

HloInstruction* ExpansionBuilder::While(HloInstruction* init, HloComputation* condition,
                                        HloComputation* body) {
  auto loop = HloInstruction::Create(HloOpcode::kWhile, Unknown(), {init});
  loop->AppendCalledComputation(condition);
  loop->AppendCalledComputation(body);
  return Add(std::move(loop), "loop");
}

HloInstruction* ExpansionBuilder::Inline(const HloComputation& callee,
                                         absl::Span<HloInstruction* const> arguments) {
  if (!status_.ok()) return nullptr;
  if (static_cast<int64_t>(arguments.size()) != callee.num_parameters()) {
    Fail(absl::InternalError(absl::StrCat("expanding %", origin_->name(), ": ", callee.name(),
                                          " takes ", callee.num_parameters(), " arguments, not ",
                                          arguments.size())));
    return nullptr;
  }
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> copies;
  for (HloInstruction* instruction : callee.MakeInstructionPostOrder()) {
    if (instruction->opcode() == HloOpcode::kParameter) {
      HloInstruction* argument = arguments[instruction->parameter_number()];
      if (argument == nullptr) return Add(HloInstruction::Create(HloOpcode::kTuple, Unknown(), {argument}));
      copies[instruction] = argument;
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (HloInstruction* operand : instruction->operands()) operands.push_back(copies.at(operand));
    std::unique_ptr<HloInstruction> copy =
        instruction->CloneWithNewOperands(instruction->shape(), operands);
    copy->set_name(absl::StrCat(origin_->name(), ".", instruction->name()));
    copies[instruction] = computation_->AddInstruction(std::move(copy));
  }
  return copies.at(callee.root());
}

HloComputation* ExpansionBuilder::NewComputation(absl::string_view suffix) {
  return module()->AddComputation(
      std::make_unique<HloComputation>(absl::StrCat(origin_->name(), ".", suffix)));
}

HloComputation* ExpansionBuilder::ScalarBinaryComputation(HloOpcode opcode, PrimitiveType type) {
  HloComputation* computation =
      NewComputation(absl::StrCat(HloOpcodeName(opcode), "_", PrimitiveTypeName(type)));
  ExpansionBuilder b(computation, origin_);
  b.keep_layouts_ = false;
  const Shape scalar = Shape::Scalar(type);
  HloInstruction* root =
      b.Binary(opcode, b.Parameter(0, scalar, "lhs"), b.Parameter(1, scalar, "rhs"));
  if (!b.status().ok()) {
    Fail(b.status());
    return computation;
  }
  computation->set_root(root);
  return computation;
}

absl::Status ReplaceInstruction(HloInstruction* old_instruction, HloInstruction* replacement) {
  if (replacement->shape().Compatible(old_instruction->shape())) {
    replacement->set_shape(old_instruction->shape());
  }
  absl::Status status = old_instruction->ReplaceAllUsesWith(replacement);
  if (!status.ok()) return status;
  return old_instruction->parent()->RemoveInstruction(old_instruction);
}

}  // namespace expanders
}  // namespace hloc
