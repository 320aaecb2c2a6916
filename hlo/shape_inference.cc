// InferShape: dispatches an instruction to the shape rule of its opcode
// (shape_inference_{elementwise,contractions,reductions}.cc) and holds the
// rules of the ops whose shape is mostly declared (calls, custom calls,
// collectives, async pairs, send/recv, tokens), plus the helpers the rule
// files share.
#include "hlo/shape_inference.h"

#include <algorithm>

#include "hlo/computation.h"
#include "hlo/builder_custom_calls.h"
#include "hlo/dynamic_custom_calls.h"
#include "hlo/linalg_custom_calls.h"
#include "hlo/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hloc {

// ---------------------------------------------------------------- shared helpers

namespace shape_inference_internal {

bool SameDimensions(const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray() || a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!SizesMatch(a.dimensions(i), b.dimensions(i))) return false;
  }
  return true;
}

bool HasUnboundedDimension(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      if (HasUnboundedDimension(s)) return true;
    }
    return false;
  }
  for (int64_t d : shape.dimensions()) {
    if (IsUnbounded(d)) return true;
  }
  return false;
}

absl::Status ExpectArray(const Shape& shape, absl::string_view what) {
  if (!shape.IsArray()) return Invalid(what, " must be an array, got ", Str(shape));
  return absl::OkStatus();
}

absl::Status ExpectScalar(const Shape& shape, absl::string_view what) {
  if (!shape.IsScalar()) return Invalid(what, " must be a scalar, got ", Str(shape));
  return absl::OkStatus();
}

absl::Status CheckDimensionIndex(int64_t dimension, int64_t rank, absl::string_view what) {
  if (dimension < 0 || dimension >= rank) {
    return Invalid(what, " ", dimension, " is out of range for rank ", rank);
  }
  return absl::OkStatus();
}

absl::Status CheckDimensionList(absl::Span<const int64_t> dimensions, int64_t rank,
                                absl::string_view what) {
  for (size_t i = 0; i < dimensions.size(); ++i) {
    if (dimensions[i] < 0 || dimensions[i] >= rank) {
      return Invalid(what, "=", Str(dimensions), ": dimension ", dimensions[i],
                     " is out of range for rank ", rank);
    }
    for (size_t j = 0; j < i; ++j) {
      if (dimensions[j] == dimensions[i]) {
        return Invalid(what, "=", Str(dimensions), " repeats dimension ", dimensions[i]);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSortedDimensionList(absl::Span<const int64_t> dimensions, int64_t rank,
                                      absl::string_view what) {
  HLOC_RETURN_IF_ERROR(CheckDimensionList(dimensions, rank, what));
  for (size_t i = 1; i < dimensions.size(); ++i) {
    if (dimensions[i] < dimensions[i - 1]) {
      return Invalid(what, "=", Str(dimensions), " must be sorted");
    }
  }
  return absl::OkStatus();
}

bool Contains(absl::Span<const int64_t> list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

Shape WithElementType(const Shape& source, PrimitiveType type) {
  return MakeArray(type, source.dimensions(), source.dynamic_dimensions());
}

Shape MakeArray(PrimitiveType type, const std::vector<int64_t>& dims,
                const std::vector<bool>& dynamic) {
  Shape shape(type, dims);
  for (size_t i = 0; i < dynamic.size() && i < dims.size(); ++i) {
    if (dynamic[i]) shape.set_dynamic_dimension(i, true);
  }
  return shape;
}

Shape WithoutLayout(const Shape& shape) {
  Shape result = shape;
  if (result.IsTuple()) {
    for (Shape& element : *result.mutable_tuple_shapes()) element = WithoutLayout(element);
  }
  result.clear_layout();
  return result;
}

absl::StatusOr<PrimitiveType> ContractionResultType(PrimitiveType lhs, PrimitiveType rhs,
                                                    std::optional<PrimitiveType> preferred) {
  auto is_float = [](PrimitiveType t) {
    return IsFloatingPoint(t) || t == xla::F6E3M2FN || t == xla::F6E2M3FN;
  };
  PrimitiveType from = lhs;
  if (lhs != rhs) {
    // Mixed operand types (bf16 x s4 weights, f32 x pred) are allowed when
    // the result type is given; without it only float precisions may mix.
    if (preferred.has_value()) {
      if (!IsArrayType(*preferred)) {
        return Invalid("preferred element type ", TypeName(*preferred), " is not an array type");
      }
      return *preferred;
    }
    if (!is_float(lhs) || !is_float(rhs)) {
      return Invalid("lhs element type ", TypeName(lhs), " and rhs element type ", TypeName(rhs),
                     " differ");
    }
    from = BitWidth(rhs) > BitWidth(lhs) ? rhs : lhs;
  }
  if (!preferred.has_value() || *preferred == from) return from;
  if (!IsArrayType(*preferred)) {
    return Invalid("preferred element type ", TypeName(*preferred), " is not an array type");
  }
  if (IsComplex(from) && !IsComplex(*preferred)) {
    return Invalid("complex operands (", TypeName(from), ") cannot give a ", TypeName(*preferred),
                   " result");
  }
  if (!is_float(from) && !IsComplex(from) && !is_float(*preferred) &&
      BitWidth(*preferred) < BitWidth(from)) {
    return Invalid("preferred element type ", TypeName(*preferred), " is narrower than the ",
                   TypeName(from), " operands");
  }
  return *preferred;
}

}  // namespace shape_inference_internal

using namespace shape_inference_internal;  // NOLINT: helpers of this library.

bool ShapesCompatible(const Shape& a, const Shape& b, bool ignore_fp_precision) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_shapes_size() != b.tuple_shapes_size()) {
      return false;
    }
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!ShapesCompatible(a.tuple_shapes(i), b.tuple_shapes(i), ignore_fp_precision)) {
        return false;
      }
    }
    return true;
  }
  if (a.element_type() != b.element_type()) {
    if (!ignore_fp_precision || !IsFloatingPoint(a.element_type()) ||
        !IsFloatingPoint(b.element_type())) {
      return false;
    }
  }
  if (!a.IsArray()) return true;  // Tokens (and opaque) carry no dimensions.
  return SameDimensions(a, b);
}

// ---------------------------------------------------------------- InferShape

namespace {

absl::Status CheckOperandCount(const HloInstruction& instruction, int64_t min, int64_t max) {
  const int64_t count = instruction.operand_count();
  if (count >= min && count <= max) return absl::OkStatus();
  if (min == max) return Invalid("takes ", min, " operands, got ", count);
  if (max == INT64_MAX) return Invalid("takes at least ", min, " operands, got ", count);
  return Invalid("takes ", min, " to ", max, " operands, got ", count);
}

absl::Status CheckCalledCount(const HloInstruction& instruction, size_t count) {
  if (instruction.called_computations().size() != count) {
    return Invalid("calls ", instruction.called_computations().size(), " computations, expected ",
                   count);
  }
  return absl::OkStatus();
}

// The signature of called computation `index`, checked to be well-formed.
absl::StatusOr<ProgramShape> CalleeShape(const HloInstruction& instruction, size_t index) {
  if (index >= instruction.called_computations().size() ||
      instruction.called_computations()[index] == nullptr) {
    return Invalid("called computation ", index, " is missing");
  }
  const HloComputation* callee = instruction.called_computations()[index];
  if (callee->root() == nullptr)
    return Invalid("called computation ", callee->name(), " has no root");
  for (int64_t i = 0; i < callee->num_parameters(); ++i) {
    if (callee->parameter(i) == nullptr) {
      return Invalid("called computation ", callee->name(), " has no parameter ", i);
    }
  }
  return callee->ComputeProgramShape();
}

absl::Status CheckComparisonType(ComparisonType type, PrimitiveType t) {
  const bool is_float = IsFloatingPoint(t) || IsComplex(t);
  bool ok = true;
  switch (type) {
    case ComparisonType::kDefault:
      return absl::OkStatus();
    case ComparisonType::kFloat:
    case ComparisonType::kTotalOrder:
      ok = is_float;
      break;
    case ComparisonType::kSigned:
      ok = IsSignedInteger(t);
      break;
    case ComparisonType::kUnsigned:
      ok = IsUnsignedInteger(t) || t == xla::PRED;
      break;
  }
  if (ok) return absl::OkStatus();
  return Invalid("comparison type ", ComparisonTypeName(type), " does not apply to ", TypeName(t),
                 " operands");
}

absl::StatusOr<int64_t> SingleDimension(const HloAttributes& attrs) {
  if (attrs.dimensions.size() != 1) {
    return Invalid("dimensions=", Str(attrs.dimensions), " must name exactly one dimension");
  }
  return attrs.dimensions[0];
}

Shape TupleOrSingle(absl::Span<const Shape* const> shapes) {
  if (shapes.size() == 1) return WithoutLayout(*shapes[0]);
  std::vector<Shape> elements;
  for (const Shape* s : shapes) elements.push_back(WithoutLayout(*s));
  return Shape::Tuple(std::move(elements));
}

// Checks `shape` has (at least `min_size`) tuple elements.
absl::Status ExpectTuple(const Shape& shape, int64_t min_size, absl::string_view what) {
  if (!shape.IsTuple() || shape.tuple_shapes_size() < min_size) {
    return Invalid(what, " must be a tuple of at least ", min_size, " elements, got ", Str(shape));
  }
  return absl::OkStatus();
}

absl::Status ExpectToken(const Shape& shape, absl::string_view what) {
  if (!shape.IsToken()) return Invalid(what, " must be a token, got ", Str(shape));
  return absl::OkStatus();
}

// all-reduce's to_apply: a binary reducer over scalars.
absl::Status CheckCollectiveReducer(const HloInstruction& instruction) {
  HLOC_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
  HLOC_ASSIGN_OR_RETURN(ProgramShape reducer, CalleeShape(instruction, 0));
  const Shape& result = reducer.result.IsTuple() && reducer.result.tuple_shapes_size() == 1
                            ? reducer.result.tuple_shapes(0)
                            : reducer.result;
  if (reducer.parameters.size() != 2 || !reducer.parameters[0].IsScalar() ||
      !reducer.parameters[1].IsScalar() || !result.IsScalar()) {
    return Invalid("to_apply must map two scalars to a scalar, got ", reducer.ToString(false));
  }
  return absl::OkStatus();
}

// ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets,
// recv_sizes): input and output are arrays of one element type and rank
// (at least 1) that may differ only in dimension 0, the rows the offsets and
// sizes count; the four index arrays share one s32 or s64 shape. The result
// is the output's shape.
absl::Status CheckRaggedAllToAll(const HloInstruction& instruction,
                                 absl::Span<const Shape* const> ops) {
  HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 6, 6));
  const Shape& input = *ops[0];
  const Shape& output = *ops[1];
  HLOC_RETURN_IF_ERROR(ExpectArray(input, "input"));
  HLOC_RETURN_IF_ERROR(ExpectArray(output, "output"));
  if (input.rank() < 1 || input.rank() != output.rank() ||
      input.element_type() != output.element_type()) {
    return Invalid("input ", Str(input), " and output ", Str(output),
                   " must be arrays of one type and rank (at least 1)");
  }
  for (int64_t d = 1; d < input.rank(); ++d) {
    if (!SizesMatch(input.dimensions(d), output.dimensions(d))) {
      return Invalid("input ", Str(input), " and output ", Str(output),
                     " differ in dimension ", d, "; only dimension 0 may differ");
    }
  }
  static constexpr const char* kNames[] = {"input_offsets", "send_sizes", "output_offsets",
                                           "recv_sizes"};
  for (int i = 2; i < 6; ++i) {
    HLOC_RETURN_IF_ERROR(ExpectArray(*ops[i], kNames[i - 2]));
    const PrimitiveType t = ops[i]->element_type();
    if (t != xla::S32 && t != xla::S64) {
      return Invalid(kNames[i - 2], " ", Str(*ops[i]), " must be s32 or s64");
    }
    if (!ops[i]->Compatible(*ops[2]) || ops[i]->element_type() != ops[2]->element_type()) {
      return Invalid(kNames[i - 2], " ", Str(*ops[i]), " differs from input_offsets ",
                     Str(*ops[2]));
    }
  }
  return absl::OkStatus();
}

// all-gather / reduce-scatter: each result equals its operand except in the
// gathered or scattered dimension, whose size depends on the replica groups.
absl::Status CheckCollectiveResizing(const HloInstruction& instruction,
                                     absl::Span<const Shape* const> operands, bool gather) {
  HLOC_ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(instruction.attrs()));
  const Shape& declared = instruction.shape();
  for (size_t i = 0; i < operands.size(); ++i) {
    const Shape& operand = *operands[i];
    const Shape* result = &declared;
    if (operands.size() > 1 || declared.IsTuple()) {
      if (!declared.IsTuple() ||
          declared.tuple_shapes_size() != static_cast<int64_t>(operands.size())) {
        return Invalid("result ", Str(declared), " must be a tuple of ", operands.size(),
                       " arrays, one per operand");
      }
      result = &declared.tuple_shapes(i);
    }
    HLOC_RETURN_IF_ERROR(ExpectArray(operand, absl::StrCat("operand ", i)));
    HLOC_RETURN_IF_ERROR(ExpectArray(*result, absl::StrCat("result ", i)));
    HLOC_RETURN_IF_ERROR(CheckDimensionIndex(dimension, operand.rank(), "dimension"));
    if (result->rank() != operand.rank() || result->element_type() != operand.element_type()) {
      return Invalid("result ", Str(*result), " must have the rank and type of operand ",
                     Str(operand));
    }
    for (int64_t d = 0; d < operand.rank(); ++d) {
      const int64_t in = operand.dimensions(d), out = result->dimensions(d);
      if (d != dimension) {
        if (!SizesMatch(in, out)) {
          return Invalid("result ", Str(*result), " differs from operand ", Str(operand),
                         " in dimension ", d, ", which is not the collective's dimension ",
                         dimension);
        }
        continue;
      }
      if (IsUnbounded(in) || IsUnbounded(out)) continue;
      const int64_t big = gather ? out : in, small = gather ? in : out;
      if ((small == 0 && big != 0) || (small != 0 && big % small != 0)) {
        return Invalid("dimension ", d, " of size ", in, " cannot become ", out, " by ",
                       gather ? "gathering" : "scattering", " over whole shards");
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferCustomCallShape(const HloInstruction& instruction,
                                           absl::Span<const Shape* const> operands) {
  const HloAttributes& attrs = instruction.attrs();
  if (attrs.operand_layout_constraints.has_value()) {
    const std::vector<Shape>& constraints = *attrs.operand_layout_constraints;
    if (constraints.size() != operands.size()) {
      return Invalid("operand_layout_constraints has ", constraints.size(), " shapes for ",
                     operands.size(), " operands");
    }
    for (size_t i = 0; i < operands.size(); ++i) {
      if (!ShapesCompatible(constraints[i], *operands[i])) {
        return Invalid("operand_layout_constraints shape ", i, " ", Str(constraints[i]),
                       " differs from operand ", Str(*operands[i]));
      }
    }
  }
  for (const OutputOperandAlias& alias : attrs.output_to_operand_aliasing) {
    if (alias.operand_number < 0 || alias.operand_number >= static_cast<int64_t>(operands.size())) {
      return Invalid("output_to_operand_aliasing names operand ", alias.operand_number, " of ",
                     operands.size());
    }
    auto output = GetSubshape(instruction.shape(), alias.output);
    if (!output.ok())
      return Invalid("output_to_operand_aliasing output: ", output.status().message());
    auto input = GetSubshape(*operands[alias.operand_number], alias.operand_index);
    if (!input.ok())
      return Invalid("output_to_operand_aliasing operand: ", input.status().message());
    if (!ShapesCompatible(**output, **input)) {
      return Invalid("output_to_operand_aliasing pairs output ", Str(**output), " with operand ",
                     alias.operand_number, " ", Str(**input), " of another shape");
    }
  }
  // The linear-algebra calls XLA expands itself have result shapes of their own.
  if (std::optional<LinalgCustomCall> linalg = LinalgCustomCallOf(instruction)) {
    return InferLinalgCustomCallShape(*linalg, instruction, operands);
  }
  if (BuilderDecomposition(instruction) != nullptr) {
    HLOC_ASSIGN_OR_RETURN(ProgramShape callee, CalleeShape(instruction, 0));
    return InferCallShape(operands, callee);
  }
  if (std::optional<DynamicCustomCall> dynamic = DynamicCustomCallOf(instruction)) {
    return InferDynamicCustomCallShape(*dynamic, instruction, operands);
  }
  return WithoutLayout(instruction.shape());
}

absl::StatusOr<Shape> InferAsyncStartShape(const HloInstruction& instruction,
                                           absl::Span<const Shape* const> operands) {
  const Shape& declared = instruction.shape();
  HLOC_RETURN_IF_ERROR(ExpectTuple(declared, 2, "async-start result"));
  std::vector<Shape> operand_shapes;
  for (const Shape* s : operands) operand_shapes.push_back(*s);
  if (!ShapesCompatible(declared.tuple_shapes(0), Shape::Tuple(operand_shapes))) {
    return Invalid("result element 0 ", Str(declared.tuple_shapes(0)),
                   " must be the tuple of the operand shapes");
  }
  if (!instruction.called_computations().empty()) {
    HLOC_ASSIGN_OR_RETURN(ProgramShape callee, CalleeShape(instruction, 0));
    HLOC_ASSIGN_OR_RETURN(Shape result, InferCallShape(operands, callee));
    if (!ShapesCompatible(result, declared.tuple_shapes(1))) {
      return Invalid("result element 1 ", Str(declared.tuple_shapes(1)),
                     " differs from the wrapped computation's result ", Str(result));
    }
  }
  return WithoutLayout(declared);
}

absl::StatusOr<Shape> InferFromInstruction(const HloInstruction& instruction) {
  const HloOpcode opcode = instruction.opcode();
  std::vector<const Shape*> ops;
  ops.reserve(instruction.operand_count());
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    if (instruction.operand(i) == nullptr) return Invalid("operand ", i, " is null");
    ops.push_back(&instruction.operand(i)->shape());
  }
  const int arity = HloOpcodeArity(opcode);
  if (arity >= 0) HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, arity, arity));
  const HloAttributes& attrs = instruction.attrs();
  const Shape& declared = instruction.shape();
  const std::optional<PrimitiveType> own_type =
      declared.IsArray() ? std::optional<PrimitiveType>(declared.element_type()) : std::nullopt;

  switch (opcode) {
    case HloOpcode::kConvert:
      HLOC_RETURN_IF_ERROR(ExpectArray(declared, "result"));
      return InferConvertShape(*ops[0], declared.element_type());
    case HloOpcode::kBitcastConvert:
      HLOC_RETURN_IF_ERROR(ExpectArray(declared, "result"));
      return InferBitcastConvertShape(*ops[0], declared.element_type());
    case HloOpcode::kReducePrecision:
      return InferReducePrecisionShape(*ops[0], attrs.exponent_bits, attrs.mantissa_bits);
    case HloOpcode::kStochasticConvert:
      HLOC_RETURN_IF_ERROR(ExpectArray(declared, "result"));
      return InferStochasticConvertShape(*ops[0], *ops[1], declared.element_type());
    case HloOpcode::kCompare:
      HLOC_RETURN_IF_ERROR(ExpectArray(*ops[0], "lhs"));
      HLOC_RETURN_IF_ERROR(CheckComparisonType(attrs.comparison_type, ops[0]->element_type()));
      if (IsComplex(ops[0]->element_type()) &&
          attrs.comparison_direction != ComparisonDirection::kEq &&
          attrs.comparison_direction != ComparisonDirection::kNe) {
        return Invalid("complex operands (", Str(*ops[0]), ") compare only for EQ and NE, not ",
                       ComparisonDirectionName(attrs.comparison_direction));
      }
      return InferBinaryShape(opcode, *ops[0], *ops[1]);
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
      return InferTernaryShape(opcode, *ops[0], *ops[1], *ops[2]);
    default:
      break;
  }
  if (IsElementwiseUnary(opcode)) return InferUnaryShape(opcode, *ops[0]);
  if (IsElementwiseBinary(opcode)) return InferBinaryShape(opcode, *ops[0], *ops[1]);

  switch (opcode) {
    case HloOpcode::kParameter:
      return WithoutLayout(declared);
    case HloOpcode::kConstant:
      if (!attrs.literal.has_value()) return Invalid("constant has no literal");
      return WithoutLayout(attrs.literal->shape());
    case HloOpcode::kIota:
      return InferIotaShape(declared, attrs.iota_dimension);
    case HloOpcode::kBroadcast:
      HLOC_RETURN_IF_ERROR(ExpectArray(declared, "result"));
      return InferBroadcastShape(*ops[0], declared.dimensions(), attrs.dimensions);
    case HloOpcode::kReshape:
      HLOC_RETURN_IF_ERROR(ExpectArray(declared, "result"));
      return InferReshapeShape(*ops[0], declared.dimensions());
    case HloOpcode::kDynamicReshape: {
      HLOC_RETURN_IF_ERROR(ExpectArray(declared, "result"));
      HLOC_RETURN_IF_ERROR(
          CheckOperandCount(instruction, declared.rank() + 1, declared.rank() + 1));
      HLOC_RETURN_IF_ERROR(ExpectArray(*ops[0], "operand"));
      for (size_t i = 1; i < ops.size(); ++i) {
        if (!ops[i]->IsScalar() || !IsInteger(ops[i]->element_type())) {
          return Invalid("size operand ", i, " must be an integer scalar, got ", Str(*ops[i]));
        }
      }
      return WithElementType(declared, ops[0]->element_type());
    }
    case HloOpcode::kTranspose:
      return InferTransposeShape(*ops[0], attrs.dimensions);
    case HloOpcode::kReverse:
      return InferReverseShape(*ops[0], attrs.dimensions);
    case HloOpcode::kSlice:
      return InferSliceShape(*ops[0], attrs.slice_starts, attrs.slice_limits, attrs.slice_strides);
    case HloOpcode::kDynamicSlice:
      HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 2, INT64_MAX));
      return InferDynamicSliceShape(*ops[0], absl::MakeConstSpan(ops).subspan(1),
                                    attrs.dynamic_slice_sizes);
    case HloOpcode::kDynamicUpdateSlice:
      HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 3, INT64_MAX));
      return InferDynamicUpdateSliceShape(*ops[0], *ops[1], absl::MakeConstSpan(ops).subspan(2));
    case HloOpcode::kConcatenate: {
      HLOC_ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(attrs));
      return InferConcatenateShape(ops, dimension);
    }
    case HloOpcode::kPad:
      return InferPadShape(*ops[0], *ops[1], attrs.padding_config);
    case HloOpcode::kTuple:
      return InferTupleShape(ops);
    case HloOpcode::kGetTupleElement:
      return InferGetTupleElementShape(*ops[0], attrs.tuple_index);
    case HloOpcode::kGetDimensionSize: {
      HLOC_ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(attrs));
      return InferGetDimensionSizeShape(*ops[0], dimension);
    }
    case HloOpcode::kSetDimensionSize: {
      HLOC_ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(attrs));
      return InferSetDimensionSizeShape(*ops[0], *ops[1], dimension);
    }
    case HloOpcode::kBitcast: {
      const Shape& operand = *ops[0];
      if (operand.IsArray() && declared.IsArray() && !HasUnboundedDimension(operand) &&
          !HasUnboundedDimension(declared)) {
        const std::optional<int64_t> in = operand.CheckedElementCount();
        const std::optional<int64_t> out = declared.CheckedElementCount();
        if (in && out &&
            static_cast<__int128>(*in) * BitWidth(operand.element_type()) !=
                static_cast<__int128>(*out) * BitWidth(declared.element_type())) {
          return Invalid("bitcast from ", Str(operand), " to ", Str(declared),
                         " changes the size in bits");
        }
      }
      return WithoutLayout(declared);
    }

    case HloOpcode::kReduce: {
      HLOC_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
      HLOC_ASSIGN_OR_RETURN(ProgramShape to_apply, CalleeShape(instruction, 0));
      return InferReduceShape(ops, attrs.dimensions, to_apply);
    }
    case HloOpcode::kReduceWindow: {
      HLOC_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
      HLOC_ASSIGN_OR_RETURN(ProgramShape to_apply, CalleeShape(instruction, 0));
      return InferReduceWindowShape(ops, attrs.window, to_apply);
    }
    case HloOpcode::kSelectAndScatter: {
      HLOC_RETURN_IF_ERROR(CheckCalledCount(instruction, 2));
      HLOC_ASSIGN_OR_RETURN(ProgramShape select, CalleeShape(instruction, 0));
      HLOC_ASSIGN_OR_RETURN(ProgramShape scatter, CalleeShape(instruction, 1));
      return InferSelectAndScatterShape(*ops[0], select, attrs.window, *ops[1], *ops[2], scatter);
    }
    case HloOpcode::kDot:
      HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 2, INT64_MAX));
      // Sparse dots carry metadata operands and a compressed lhs: trusted.
      if (ops.size() > 2) return WithoutLayout(declared);
      return InferDotShape(*ops[0], *ops[1], attrs.dot_dimension_numbers, own_type);
    case HloOpcode::kRaggedDot:
      return InferRaggedDotShape(*ops[0], *ops[1], *ops[2], attrs.ragged_dot_dimension_numbers,
                                 own_type);
    case HloOpcode::kConvolution:
      if (HasUnboundedDimension(*ops[0]) || HasUnboundedDimension(*ops[1])) {
        return WithoutLayout(declared);
      }
      return InferConvolutionShape(*ops[0], *ops[1], attrs.feature_group_count,
                                   attrs.batch_group_count, attrs.window,
                                   attrs.convolution_dimension_numbers, own_type);
    case HloOpcode::kGather:
      return InferGatherShape(*ops[0], *ops[1], attrs.gather_dimension_numbers,
                              attrs.gather_slice_sizes);
    case HloOpcode::kScatter: {
      HLOC_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
      HLOC_ASSIGN_OR_RETURN(ProgramShape to_apply, CalleeShape(instruction, 0));
      return InferScatterShape(ops, to_apply, attrs.scatter_dimension_numbers);
    }
    case HloOpcode::kSort: {
      HLOC_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
      HLOC_ASSIGN_OR_RETURN(ProgramShape comparator, CalleeShape(instruction, 0));
      HLOC_ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(attrs));
      return InferSortShape(ops, dimension, comparator);
    }
    case HloOpcode::kScan: {
      HLOC_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
      HLOC_ASSIGN_OR_RETURN(ProgramShape to_apply, CalleeShape(instruction, 0));
      HLOC_ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(attrs));
      return InferScanShape(ops, dimension, attrs.num_carries, to_apply);
    }
    case HloOpcode::kTopK:
      return InferTopKShape(*ops[0], attrs.k);
    case HloOpcode::kMap: {
      HLOC_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
      HLOC_ASSIGN_OR_RETURN(ProgramShape to_apply, CalleeShape(instruction, 0));
      return InferMapShape(ops, to_apply, attrs.dimensions);
    }

    case HloOpcode::kWhile: {
      HLOC_RETURN_IF_ERROR(CheckCalledCount(instruction, 2));
      HLOC_ASSIGN_OR_RETURN(ProgramShape condition, CalleeShape(instruction, 0));
      HLOC_ASSIGN_OR_RETURN(ProgramShape body, CalleeShape(instruction, 1));
      return InferWhileShape(condition, body, *ops[0]);
    }
    case HloOpcode::kConditional: {
      HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 2, INT64_MAX));
      std::vector<ProgramShape> branches;
      for (size_t i = 0; i < instruction.called_computations().size(); ++i) {
        HLOC_ASSIGN_OR_RETURN(ProgramShape branch, CalleeShape(instruction, i));
        branches.push_back(std::move(branch));
      }
      return InferConditionalShape(*ops[0], branches, absl::MakeConstSpan(ops).subspan(1));
    }
    case HloOpcode::kCall:
    case HloOpcode::kFusion: {
      HLOC_RETURN_IF_ERROR(CheckCalledCount(instruction, 1));
      HLOC_ASSIGN_OR_RETURN(ProgramShape callee, CalleeShape(instruction, 0));
      return InferCallShape(ops, callee);
    }
    case HloOpcode::kCustomCall:
      return InferCustomCallShape(instruction, ops);

    case HloOpcode::kCholesky:
      return InferCholeskyShape(*ops[0]);
    case HloOpcode::kTriangularSolve:
      return InferTriangularSolveShape(*ops[0], *ops[1], attrs.triangular_solve_options);
    case HloOpcode::kFft:
      return InferFftShape(*ops[0], attrs.fft_type, attrs.fft_length);
    case HloOpcode::kRng:
      HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 2, 2));
      return InferRngShape(*ops[0], *ops[1], attrs.distribution, declared);
    case HloOpcode::kRngBitGenerator:
      // XLA also accepts the bits alone, without the new state.
      if (declared.IsArray()) {
        HLOC_ASSIGN_OR_RETURN(Shape pair, InferRngBitGeneratorShape(*ops[0], declared));
        return pair.tuple_shapes(1);
      }
      HLOC_RETURN_IF_ERROR(ExpectTuple(declared, 2, "rng-bit-generator result"));
      if (declared.tuple_shapes_size() != 2) {
        return Invalid("rng-bit-generator result must be (state, bits), got ", Str(declared));
      }
      return InferRngBitGeneratorShape(*ops[0], declared.tuple_shapes(1));
    case HloOpcode::kRngGetAndUpdateState:
      return Shape(xla::U64, {2});
    case HloOpcode::kBatchNormTraining:
      return InferBatchNormTrainingShape(*ops[0], *ops[1], *ops[2], attrs.feature_index);
    case HloOpcode::kBatchNormInference:
      return InferBatchNormInferenceShape(*ops[0], *ops[1], *ops[2], *ops[3], *ops[4],
                                          attrs.feature_index);
    case HloOpcode::kBatchNormGrad:
      return InferBatchNormGradShape(*ops[0], *ops[1], *ops[2], *ops[3], *ops[4],
                                     attrs.feature_index);

    // Tokens, side effects and carried ops.
    case HloOpcode::kAfterAll:
      for (size_t i = 0; i < ops.size(); ++i) {
        HLOC_RETURN_IF_ERROR(ExpectToken(*ops[i], absl::StrCat("operand ", i)));
      }
      return Shape::Token();
    case HloOpcode::kAddDependency:
      HLOC_RETURN_IF_ERROR(ExpectToken(*ops[1], "operand 1"));
      return WithoutLayout(*ops[0]);
    case HloOpcode::kDomain:
    case HloOpcode::kOptimizationBarrier:
      return WithoutLayout(*ops[0]);
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
      return Shape::Scalar(xla::U32);
    case HloOpcode::kInfeed:
      HLOC_RETURN_IF_ERROR(ExpectToken(*ops[0], "operand"));
      HLOC_RETURN_IF_ERROR(ExpectTuple(declared, 2, "infeed result"));
      return Shape::Tuple({WithoutLayout(declared.tuple_shapes(0)), Shape::Token()});
    case HloOpcode::kOutfeed:
      HLOC_RETURN_IF_ERROR(ExpectToken(*ops[1], "operand 1"));
      if (attrs.outfeed_shape.has_value() && !ShapesCompatible(*attrs.outfeed_shape, *ops[0])) {
        return Invalid("outfeed_shape ", Str(*attrs.outfeed_shape), " differs from the data ",
                       Str(*ops[0]));
      }
      return Shape::Token();
    case HloOpcode::kSend:
      HLOC_RETURN_IF_ERROR(ExpectToken(*ops[1], "operand 1"));
      return Shape::Tuple({WithoutLayout(*ops[0]), Shape::Scalar(xla::U32), Shape::Token()});
    case HloOpcode::kSendDone:
      HLOC_RETURN_IF_ERROR(ExpectTuple(*ops[0], 3, "operand"));
      return Shape::Token();
    case HloOpcode::kRecv:
      HLOC_RETURN_IF_ERROR(ExpectToken(*ops[0], "operand"));
      HLOC_RETURN_IF_ERROR(ExpectTuple(declared, 3, "recv result"));
      return Shape::Tuple(
          {WithoutLayout(declared.tuple_shapes(0)), Shape::Scalar(xla::U32), Shape::Token()});
    case HloOpcode::kRecvDone:
      HLOC_RETURN_IF_ERROR(ExpectTuple(*ops[0], 3, "operand"));
      return Shape::Tuple({WithoutLayout(ops[0]->tuple_shapes(0)), Shape::Token()});
    case HloOpcode::kCopyStart:
      return Shape::Tuple(
          {WithoutLayout(*ops[0]), WithoutLayout(*ops[0]), Shape::Scalar(xla::U32)});
    case HloOpcode::kCopyDone:
      HLOC_RETURN_IF_ERROR(ExpectTuple(*ops[0], 2, "operand"));
      return WithoutLayout(ops[0]->tuple_shapes(0));

    case HloOpcode::kAsyncStart:
      return InferAsyncStartShape(instruction, ops);
    case HloOpcode::kAsyncUpdate:
      HLOC_RETURN_IF_ERROR(ExpectTuple(*ops[0], 2, "operand"));
      return WithoutLayout(*ops[0]);
    case HloOpcode::kAsyncDone:
      HLOC_RETURN_IF_ERROR(ExpectTuple(*ops[0], 2, "operand"));
      return WithoutLayout(ops[0]->tuple_shapes(1));

    // Collectives: shapes that do not depend on the device assignment are
    // inferred; the others are trusted after the checks that do not.
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: {
      HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 1, INT64_MAX));
      HLOC_RETURN_IF_ERROR(CheckCollectiveReducer(instruction));
      Shape result = TupleOrSingle(ops);
      if (opcode == HloOpcode::kAllReduceStart && declared.IsTuple() &&
          declared.tuple_shapes_size() == 2 * instruction.operand_count()) {
        // Older all-reduce-start form: (operands..., results...).
        std::vector<Shape> pairs;
        for (int pass = 0; pass < 2; ++pass) {
          for (const Shape* s : ops) pairs.push_back(WithoutLayout(*s));
        }
        return Shape::Tuple(std::move(pairs));
      }
      return result;
    }
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kAllGatherDone:
      return WithoutLayout(declared);
    case HloOpcode::kAllGather:
    case HloOpcode::kReduceScatter:
      HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 1, INT64_MAX));
      if (opcode == HloOpcode::kReduceScatter) {
        HLOC_RETURN_IF_ERROR(CheckCollectiveReducer(instruction));
      }
      HLOC_RETURN_IF_ERROR(
          CheckCollectiveResizing(instruction, ops, opcode == HloOpcode::kAllGather));
      return WithoutLayout(declared);
    case HloOpcode::kAllGatherStart:
      HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 1, INT64_MAX));
      return WithoutLayout(declared);
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast:
      HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 1, INT64_MAX));
      return TupleOrSingle(ops);
    case HloOpcode::kCollectivePermute:
      HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 1, INT64_MAX));
      // The one-operand form keeps the shape; the in-place form is trusted.
      if (ops.size() == 1) return WithoutLayout(*ops[0]);
      return WithoutLayout(declared);
    case HloOpcode::kCollectivePermuteStart:
      HLOC_RETURN_IF_ERROR(CheckOperandCount(instruction, 1, INT64_MAX));
      return WithoutLayout(declared);
    case HloOpcode::kRaggedAllToAll:
      HLOC_RETURN_IF_ERROR(CheckRaggedAllToAll(instruction, ops));
      return WithoutLayout(*ops[1]);
    default:
      return Invalid("no shape rule for opcode ", HloOpcodeName(opcode));
  }
}

}  // namespace

absl::StatusOr<Shape> InferShape(const HloInstruction& instruction) {
  absl::StatusOr<Shape> result = InferFromInstruction(instruction);
  if (result.ok()) return result;
  return absl::Status(result.status().code(),
                      absl::StrCat(HloOpcodeName(instruction.opcode()), " %", instruction.name(),
                                   ": ", result.status().message()));
}

}  // namespace hloc
