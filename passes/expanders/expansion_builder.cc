#include "passes/expanders/expansion_builder.h"

#include <functional>
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

HloInstruction* ExpansionBuilder::MissingOperand() {
  Fail(absl::InternalError(absl::StrCat("expanding %", origin_->name(), ": null operand")));
  return nullptr;
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

HloInstruction* ExpansionBuilder::Build(HloOpcode opcode,
                                        absl::Span<HloInstruction* const> operands,
                                        const std::function<void(HloInstruction&)>& configure,
                                        Shape declared, absl::string_view suffix) {
  if (!status_.ok()) return nullptr;
  for (HloInstruction* operand : operands) {
    if (operand == nullptr) return MissingOperand();
  }
  std::unique_ptr<HloInstruction> instruction =
      HloInstruction::Create(opcode, std::move(declared), operands);
  if (configure) configure(*instruction);
  return Add(std::move(instruction), suffix);
}

HloInstruction* ExpansionBuilder::Add(std::unique_ptr<HloInstruction> instruction,
                                      absl::string_view suffix) {
  absl::StatusOr<Shape> shape = InferShape(*instruction);
  if (!shape.ok()) {
    instruction->DetachOperands();  // Not added: leave no user edge behind.
    Fail(absl::InternalError(
        absl::StrCat("expanding %", origin_->name(), ": ", shape.status().message())));
    return nullptr;
  }
  instruction->set_shape(WithLayouts(*std::move(shape)));
  if (instruction->name().empty()) {
    instruction->set_name(absl::StrCat(
        origin_->name(), ".", suffix.empty() ? HloOpcodeName(instruction->opcode()) : suffix));
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
  if (!status_.ok()) return nullptr;
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

HloInstruction* ExpansionBuilder::Unary(HloOpcode opcode, HloInstruction* x) {
  return Build(opcode, {x});
}

HloInstruction* ExpansionBuilder::Binary(HloOpcode opcode, HloInstruction* a, HloInstruction* b) {
  return Build(opcode, {a, b});
}

HloInstruction* ExpansionBuilder::Compare(HloInstruction* a, HloInstruction* b,
                                          ComparisonDirection direction) {
  return Build(HloOpcode::kCompare, {a, b}, [&](HloInstruction& compare) {
    compare.mutable_attrs()->comparison_direction = direction;
  });
}

HloInstruction* ExpansionBuilder::Select(HloInstruction* predicate, HloInstruction* on_true,
                                         HloInstruction* on_false) {
  return Build(HloOpcode::kSelect, {predicate, on_true, on_false});
}

namespace {

// x's element type (invalid for a missing x, which Build then reports).
PrimitiveType TypeOf(const HloInstruction* x) {
  return x == nullptr ? xla::PRIMITIVE_TYPE_INVALID : x->shape().element_type();
}

}  // namespace

HloInstruction* ExpansionBuilder::Convert(HloInstruction* x, PrimitiveType type) {
  Shape shape = x == nullptr ? Shape() : x->shape();
  shape.set_element_type(type);
  return Build(HloOpcode::kConvert, {x}, nullptr, std::move(shape));
}

HloInstruction* ExpansionBuilder::ConvertIfNeeded(HloInstruction* x, PrimitiveType type) {
  if (x != nullptr && x->shape().element_type() == type) return x;
  return Convert(x, type);
}

HloInstruction* ExpansionBuilder::Broadcast(HloInstruction* x,
                                            const std::vector<int64_t>& dimensions,
                                            std::vector<int64_t> mapping) {
  return Build(
      HloOpcode::kBroadcast, {x},
      [&](HloInstruction& broadcast) { broadcast.mutable_attrs()->dimensions = mapping; },
      Shape(TypeOf(x), dimensions));
}

HloInstruction* ExpansionBuilder::Splat(HloInstruction* scalar,
                                        const std::vector<int64_t>& dimensions) {
  return Broadcast(scalar, dimensions, {});
}

HloInstruction* ExpansionBuilder::Reshape(HloInstruction* x,
                                          const std::vector<int64_t>& dimensions) {
  return Build(HloOpcode::kReshape, {x}, nullptr, Shape(TypeOf(x), dimensions));
}

HloInstruction* ExpansionBuilder::Transpose(HloInstruction* x, std::vector<int64_t> permutation) {
  return Build(HloOpcode::kTranspose, {x}, [&](HloInstruction& transpose) {
    transpose.mutable_attrs()->dimensions = permutation;
  });
}

HloInstruction* ExpansionBuilder::Slice(HloInstruction* x, std::vector<int64_t> starts,
                                        std::vector<int64_t> limits) {
  return Build(HloOpcode::kSlice, {x}, [&](HloInstruction& slice) {
    slice.mutable_attrs()->slice_strides.assign(starts.size(), 1);
    slice.mutable_attrs()->slice_starts = starts;
    slice.mutable_attrs()->slice_limits = limits;
  });
}

HloInstruction* ExpansionBuilder::Concatenate(absl::Span<HloInstruction* const> parts,
                                              int64_t dimension) {
  return Build(HloOpcode::kConcatenate, parts, [&](HloInstruction& concatenate) {
    concatenate.mutable_attrs()->dimensions = {dimension};
  });
}

HloInstruction* ExpansionBuilder::Iota(PrimitiveType type, const std::vector<int64_t>& dimensions,
                                       int64_t iota_dimension) {
  return Build(
      HloOpcode::kIota, {},
      [&](HloInstruction& iota) { iota.mutable_attrs()->iota_dimension = iota_dimension; },
      Shape(type, dimensions));
}

HloInstruction* ExpansionBuilder::Reduce(HloInstruction* x, HloInstruction* init,
                                         std::vector<int64_t> dimensions,
                                         HloComputation* reducer) {
  return Build(HloOpcode::kReduce, {x, init}, [&](HloInstruction& reduce) {
    reduce.mutable_attrs()->dimensions = dimensions;
    reduce.AppendCalledComputation(reducer);
  });
}

HloInstruction* ExpansionBuilder::DynamicSlice(HloInstruction* x,
                                               absl::Span<HloInstruction* const> starts,
                                               std::vector<int64_t> sizes) {
  std::vector<HloInstruction*> operands = {x};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return Build(HloOpcode::kDynamicSlice, operands, [&](HloInstruction& slice) {
    slice.mutable_attrs()->dynamic_slice_sizes = sizes;
  });
}

HloInstruction* ExpansionBuilder::DynamicUpdateSlice(HloInstruction* x, HloInstruction* update,
                                                     absl::Span<HloInstruction* const> starts) {
  std::vector<HloInstruction*> operands = {x, update};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return Build(HloOpcode::kDynamicUpdateSlice, operands);
}

HloInstruction* ExpansionBuilder::Dot(HloInstruction* lhs, HloInstruction* rhs,
                                      const xla::DotDimensionNumbers& dimension_numbers) {
  // Dot's inference takes the declared element type as the preferred one.
  return Build(
      HloOpcode::kDot, {lhs, rhs},
      [&](HloInstruction& dot) {
        *dot.mutable_attrs()->dot_dimension_numbers.mutable_value() = dimension_numbers;
      },
      Shape::Scalar(TypeOf(lhs)));
}

HloInstruction* ExpansionBuilder::Tuple(absl::Span<HloInstruction* const> elements) {
  return Build(HloOpcode::kTuple, elements);
}

HloInstruction* ExpansionBuilder::GetTupleElement(HloInstruction* tuple, int64_t index) {
  return Build(HloOpcode::kGetTupleElement, {tuple},
               [&](HloInstruction& gte) { gte.mutable_attrs()->tuple_index = index; });
}

HloInstruction* ExpansionBuilder::While(HloInstruction* init, HloComputation* condition,
                                        HloComputation* body) {
  return Build(
      HloOpcode::kWhile, {init},
      [&](HloInstruction& loop) {
        loop.AppendCalledComputation(condition);
        loop.AppendCalledComputation(body);
      },
      Shape(), "loop");
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
      if (argument == nullptr) return MissingOperand();
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
