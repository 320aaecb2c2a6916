// Shape rules of elementwise ops (unary, binary, select/clamp, conversions)
// and of data-movement ops (broadcast, reshape, transpose, slices, concat,
// pad, iota, tuples, dimension sizes). See shape_inference.h.
#include <algorithm>

#include "hlo/shape_inference.h"
#include "hlo/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hloc {

using namespace shape_inference_internal;  // NOLINT: helpers of this library.

namespace {

// f6 types are floats too (primitive_type.h's IsFloatingPoint omits them).
bool IsFloat(PrimitiveType t) {
  return IsFloatingPoint(t) || t == xla::F6E3M2FN || t == xla::F6E2M3FN;
}
bool IsIntegral(PrimitiveType t) { return IsInteger(t); }
// XLA's "signed": signed integers and all floating-point types.
bool IsSignedArithmetic(PrimitiveType t) { return IsSignedInteger(t) || IsFloat(t); }

absl::Status TypeError(HloOpcode opcode, absl::string_view expected, const Shape& shape) {
  return Invalid(HloOpcodeName(opcode), " needs ", expected, " operands, got ", Str(shape));
}

std::vector<bool> OrDynamic(const Shape& a, const Shape& b) {
  std::vector<bool> dynamic(a.rank());
  for (int64_t i = 0; i < a.rank(); ++i) {
    dynamic[i] = a.is_dynamic_dimension(i) || (i < b.rank() && b.is_dynamic_dimension(i));
  }
  return dynamic;
}

// Start indices of dynamic-slice / dynamic-update-slice: one integral scalar
// per dimension (or XLA's older single rank-1 vector), all of one type.
absl::Status CheckStartIndices(const Shape& operand, absl::Span<const Shape* const> indices) {
  if (indices.size() == 1 && indices[0]->IsArray() && indices[0]->rank() == 1) {
    const Shape& vector = *indices[0];
    if (!IsIntegral(vector.element_type())) {
      return Invalid("start indices must be integers, got ", Str(vector));
    }
    if (!SizesMatch(vector.dimensions(0), operand.rank())) {
      return Invalid("start index vector ", Str(vector),
                     " must have one element per operand "
                     "dimension (",
                     operand.rank(), ")");
    }
    return absl::OkStatus();
  }
  if (static_cast<int64_t>(indices.size()) != operand.rank()) {
    return Invalid("expected ", operand.rank(), " start indices (one per operand dimension), got ",
                   indices.size());
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    const Shape& index = *indices[i];
    if (!index.IsScalar() || !IsIntegral(index.element_type())) {
      return Invalid("start index ", i, " must be an integer scalar, got ", Str(index));
    }
    if (index.element_type() != indices[0]->element_type()) {
      return Invalid("start index ", i, " has type ", Str(index), " but start index 0 has type ",
                     Str(*indices[0]), "; all start indices must have one type");
    }
  }
  return absl::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------- elementwise

absl::StatusOr<Shape> InferUnaryShape(HloOpcode opcode, const Shape& operand) {
  if (opcode == HloOpcode::kCopy) {
    if (!operand.IsArray() && !operand.IsTuple()) {
      return Invalid("copy needs an array or tuple operand, got ", Str(operand));
    }
    return WithoutLayout(operand);
  }
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  const PrimitiveType t = operand.element_type();
  switch (opcode) {
    case HloOpcode::kAbs:
      if (IsComplex(t)) return WithElementType(operand, ComplexComponentType(t));
      if (!IsSignedArithmetic(t)) {
        return TypeError(opcode, "signed integer, floating-point or complex", operand);
      }
      return WithElementType(operand, t);
    case HloOpcode::kNegate:
      if (!IsIntegral(t) && !IsFloat(t) && !IsComplex(t)) {
        return TypeError(opcode, "integer, floating-point or complex", operand);
      }
      return WithElementType(operand, t);
    case HloOpcode::kSign:
      if (!IsSignedArithmetic(t) && !IsComplex(t)) {
        return TypeError(opcode, "signed integer, floating-point or complex", operand);
      }
      return WithElementType(operand, t);
    case HloOpcode::kFloor:
    case HloOpcode::kCeil:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kErf:
      if (!IsFloat(t)) return TypeError(opcode, "floating-point", operand);
      return WithElementType(operand, t);
    case HloOpcode::kCos:
    case HloOpcode::kSin:
    case HloOpcode::kTan:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSqrt:
    case HloOpcode::kTanh:
      if (!IsFloat(t) && !IsComplex(t)) {
        return TypeError(opcode, "floating-point or complex", operand);
      }
      return WithElementType(operand, t);
    case HloOpcode::kCbrt:
      // The principal complex cube root is not defined by XLA's backends or
      // its evaluator, and nothing here could run it.
      if (!IsFloat(t)) return TypeError(opcode, "floating-point", operand);
      return WithElementType(operand, t);
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      if (IsComplex(t)) return WithElementType(operand, ComplexComponentType(t));
      if (!IsFloat(t)) return TypeError(opcode, "floating-point or complex", operand);
      return WithElementType(operand, t);
    case HloOpcode::kIsFinite:
      if (!IsFloat(t)) return TypeError(opcode, "floating-point", operand);
      return WithElementType(operand, xla::PRED);
    case HloOpcode::kClz:
    case HloOpcode::kPopulationCount:
      if (!IsIntegral(t)) return TypeError(opcode, "integer", operand);
      return WithElementType(operand, t);
    case HloOpcode::kNot:
      if (!IsIntegral(t) && t != xla::PRED) return TypeError(opcode, "pred or integer", operand);
      return WithElementType(operand, t);
    default:
      return Invalid(HloOpcodeName(opcode), " is not a unary elementwise opcode");
  }
}

absl::StatusOr<Shape> InferBinaryShape(HloOpcode opcode, const Shape& lhs, const Shape& rhs) {
  HLOC_RETURN_IF_ERROR(ExpectArray(lhs, "lhs"));
  HLOC_RETURN_IF_ERROR(ExpectArray(rhs, "rhs"));
  if (!SameDimensions(lhs, rhs)) {
    return Invalid("lhs ", Str(lhs), " and rhs ", Str(rhs),
                   " have different dimensions (no implicit broadcasting)");
  }
  if (lhs.element_type() != rhs.element_type()) {
    return Invalid("lhs element type ", TypeName(lhs.element_type()),
                   " differs from rhs element type ", TypeName(rhs.element_type()));
  }
  const PrimitiveType t = lhs.element_type();
  const std::vector<bool> dynamic = OrDynamic(lhs, rhs);
  auto result = [&](PrimitiveType type) { return MakeArray(type, lhs.dimensions(), dynamic); };
  switch (opcode) {
    // XLA accepts pred in arithmetic too (add of preds is "or").
    case HloOpcode::kAdd:
    case HloOpcode::kSubtract:
    case HloOpcode::kMultiply:
    case HloOpcode::kDivide:
    case HloOpcode::kPower:
      return result(t);
    // Complex numbers have no order and no remainder: no backend of XLA's
    // defines these three on them, so a module that asks for them is
    // rejected here rather than failing at run time.
    case HloOpcode::kRemainder:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
      if (IsComplex(t)) return TypeError(opcode, "pred, integer or floating-point", lhs);
      return result(t);
    case HloOpcode::kAtan2:
      if (!IsFloat(t) && !IsComplex(t)) {
        return TypeError(opcode, "floating-point or complex", lhs);
      }
      return result(t);
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      if (!IsIntegral(t) && t != xla::PRED) return TypeError(opcode, "pred or integer", lhs);
      return result(t);
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
      if (!IsIntegral(t)) return TypeError(opcode, "integer", lhs);
      return result(t);
    case HloOpcode::kCompare:
      return result(xla::PRED);
    case HloOpcode::kComplex:
      if (t != xla::F32 && t != xla::F64) return TypeError(opcode, "f32 or f64", lhs);
      return result(t == xla::F64 ? xla::C128 : xla::C64);
    default:
      return Invalid(HloOpcodeName(opcode), " is not a binary elementwise opcode");
  }
}

absl::StatusOr<Shape> InferTernaryShape(HloOpcode opcode, const Shape& a, const Shape& b,
                                        const Shape& c) {
  if (opcode == HloOpcode::kSelect) {
    HLOC_RETURN_IF_ERROR(ExpectArray(a, "predicate"));
    HLOC_RETURN_IF_ERROR(ExpectArray(b, "on_true"));
    HLOC_RETURN_IF_ERROR(ExpectArray(c, "on_false"));
    if (a.element_type() != xla::PRED) {
      return Invalid("predicate must have element type pred, got ", Str(a));
    }
    if (b.element_type() != c.element_type() || !SameDimensions(b, c)) {
      return Invalid("on_true ", Str(b), " and on_false ", Str(c), " must have the same shape");
    }
    if (!SameDimensions(a, b)) {
      return Invalid("predicate ", Str(a), " must have the dimensions of on_true ", Str(b));
    }
    return MakeArray(b.element_type(), b.dimensions(), OrDynamic(b, c));
  }
  if (opcode == HloOpcode::kClamp) {
    HLOC_RETURN_IF_ERROR(ExpectArray(a, "min"));
    HLOC_RETURN_IF_ERROR(ExpectArray(b, "operand"));
    HLOC_RETURN_IF_ERROR(ExpectArray(c, "max"));
    for (const auto& [bound, name] : {std::pair<const Shape*, const char*>{&a, "min"},
                                      std::pair<const Shape*, const char*>{&c, "max"}}) {
      if (bound->element_type() != b.element_type()) {
        return Invalid(name, " ", Str(*bound), " must have the element type of operand ", Str(b));
      }
      if (!bound->IsScalar() && !SameDimensions(*bound, b)) {
        return Invalid(name, " ", Str(*bound),
                       " must be a scalar or have the dimensions of "
                       "operand ",
                       Str(b));
      }
    }
    return WithElementType(b, b.element_type());
  }
  return Invalid(HloOpcodeName(opcode), " is not a ternary elementwise opcode");
}

absl::StatusOr<Shape> InferConvertShape(const Shape& operand, PrimitiveType new_type) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  if (!IsArrayType(new_type)) {
    return Invalid("cannot convert to non-array type ", TypeName(new_type));
  }
  if (IsComplex(operand.element_type()) && !IsComplex(new_type)) {
    return Invalid("conversion from complex ", Str(operand), " to real type ", TypeName(new_type),
                   " is not defined (use real/imag)");
  }
  return WithElementType(operand, new_type);
}

absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand, PrimitiveType new_type) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  if (!IsArrayType(new_type)) {
    return Invalid("cannot bitcast-convert to non-array type ", TypeName(new_type));
  }
  const PrimitiveType old_type = operand.element_type();
  if (IsComplex(old_type) != IsComplex(new_type)) {
    return Invalid("bitcast-convert between complex and real types (", TypeName(old_type), " -> ",
                   TypeName(new_type), ") is not allowed");
  }
  const int old_bits = BitWidth(old_type);
  const int new_bits = BitWidth(new_type);
  if (old_bits == new_bits) return WithElementType(operand, new_type);
  if (old_bits > new_bits) {
    if (old_bits % new_bits != 0) {
      return Invalid("bitcast-convert from ", old_bits, "-bit to ", new_bits,
                     "-bit elements needs a whole ratio");
    }
    Shape result = WithElementType(operand, new_type);
    result.add_dimension(old_bits / new_bits);
    return result;
  }
  if (new_bits % old_bits != 0) {
    return Invalid("bitcast-convert from ", old_bits, "-bit to ", new_bits,
                   "-bit elements needs a whole ratio");
  }
  const int64_t ratio = new_bits / old_bits;
  if (operand.rank() == 0 || !SizesMatch(operand.dimensions(operand.rank() - 1), ratio)) {
    return Invalid("bitcast-convert from ", Str(operand), " to wider ", TypeName(new_type),
                   " needs a minor dimension of size ", ratio);
  }
  std::vector<int64_t> dims(operand.dimensions().begin(), operand.dimensions().end() - 1);
  std::vector<bool> dynamic = operand.dynamic_dimensions();
  dynamic.pop_back();
  return MakeArray(new_type, dims, dynamic);
}

absl::StatusOr<Shape> InferStochasticConvertShape(const Shape& operand, const Shape& random,
                                                  PrimitiveType new_type) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  HLOC_RETURN_IF_ERROR(ExpectArray(random, "random bits"));
  if (!IsFloat(operand.element_type())) {
    return Invalid("stochastic-convert needs a floating-point operand, got ", Str(operand));
  }
  if (!IsUnsignedInteger(random.element_type()) ||
      BitWidth(random.element_type()) != BitWidth(operand.element_type())) {
    return Invalid("random bits ", Str(random), " must be unsigned integers as wide as the ",
                   "operand's ", TypeName(operand.element_type()));
  }
  if (!SameDimensions(operand, random)) {
    return Invalid("random bits ", Str(random), " must have the dimensions of operand ",
                   Str(operand));
  }
  if (!IsArrayType(new_type)) return Invalid("cannot convert to ", TypeName(new_type));
  return WithElementType(operand, new_type);
}

absl::StatusOr<Shape> InferReducePrecisionShape(const Shape& operand, int64_t exponent_bits,
                                                int64_t mantissa_bits) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  if (!IsFloat(operand.element_type())) {
    return Invalid("reduce-precision needs a floating-point operand, got ", Str(operand));
  }
  if (exponent_bits < 1) {
    return Invalid("exponent_bits=", exponent_bits, " must be at least 1");
  }
  if (mantissa_bits < 0) {
    return Invalid("mantissa_bits=", mantissa_bits, " must not be negative");
  }
  return WithElementType(operand, operand.element_type());
}

// ---------------------------------------------------------------- data movement

absl::StatusOr<Shape> InferBroadcastShape(const Shape& operand,
                                          absl::Span<const int64_t> output_dimensions,
                                          absl::Span<const int64_t> broadcast_dimensions) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  const int64_t out_rank = static_cast<int64_t>(output_dimensions.size());
  if (static_cast<int64_t>(broadcast_dimensions.size()) != operand.rank()) {
    return Invalid("dimensions=", Str(broadcast_dimensions), " must map each of the operand's ",
                   operand.rank(), " dimensions (operand ", Str(operand), ")");
  }
  HLOC_RETURN_IF_ERROR(CheckDimensionList(broadcast_dimensions, out_rank, "dimensions"));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t out = broadcast_dimensions[i];
    if (!SizesMatch(output_dimensions[out], operand.dimensions(i))) {
      return Invalid("operand dimension ", i, " has size ", operand.dimensions(i),
                     " but maps to result dimension ", out, " of size ", output_dimensions[out]);
    }
  }
  for (int64_t d : output_dimensions) {
    if (d < 0 && !IsUnbounded(d)) return Invalid("result has negative dimension size ", d);
  }
  return MakeArray(operand.element_type(),
                   std::vector<int64_t>(output_dimensions.begin(), output_dimensions.end()));
}

absl::StatusOr<Shape> InferReshapeShape(const Shape& operand,
                                        absl::Span<const int64_t> new_dimensions) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  Shape result = MakeArray(operand.element_type(),
                           std::vector<int64_t>(new_dimensions.begin(), new_dimensions.end()));
  if (HasUnboundedDimension(operand) || HasUnboundedDimension(result)) return result;
  std::optional<int64_t> old_count = operand.CheckedElementCount();
  std::optional<int64_t> new_count = result.CheckedElementCount();
  if (!new_count) return Invalid("result dimensions ", Str(new_dimensions), " are invalid");
  if (!old_count || *old_count != *new_count) {
    return Invalid("reshape from ", Str(operand), " (", old_count.value_or(-1), " elements) to ",
                   Str(result), " (", *new_count, " elements) changes the element count");
  }
  return result;
}

absl::StatusOr<Shape> InferTransposeShape(const Shape& operand,
                                          absl::Span<const int64_t> permutation) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  if (static_cast<int64_t>(permutation.size()) != operand.rank()) {
    return Invalid("dimensions=", Str(permutation), " is not a permutation of the ", operand.rank(),
                   " dimensions of ", Str(operand));
  }
  HLOC_RETURN_IF_ERROR(CheckDimensionList(permutation, operand.rank(), "dimensions"));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int64_t p : permutation) {
    dims.push_back(operand.dimensions(p));
    dynamic.push_back(operand.is_dynamic_dimension(p));
  }
  return MakeArray(operand.element_type(), dims, dynamic);
}

absl::StatusOr<Shape> InferReverseShape(const Shape& operand,
                                        absl::Span<const int64_t> dimensions) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  HLOC_RETURN_IF_ERROR(CheckDimensionList(dimensions, operand.rank(), "dimensions"));
  return WithElementType(operand, operand.element_type());
}

absl::StatusOr<Shape> InferSliceShape(const Shape& operand, absl::Span<const int64_t> starts,
                                      absl::Span<const int64_t> limits,
                                      absl::Span<const int64_t> strides) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  const int64_t rank = operand.rank();
  if (static_cast<int64_t>(starts.size()) != rank || static_cast<int64_t>(limits.size()) != rank ||
      (!strides.empty() && static_cast<int64_t>(strides.size()) != rank)) {
    return Invalid("slice needs one start, limit and stride per dimension of ", Str(operand),
                   ", got ", starts.size(), " starts, ", limits.size(), " limits, ", strides.size(),
                   " strides");
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t start = starts[i], limit = limits[i];
    const int64_t stride = strides.empty() ? 1 : strides[i];
    if (stride <= 0)
      return Invalid("slice stride ", stride, " in dimension ", i, " must be positive");
    if (start < 0) return Invalid("slice start ", start, " in dimension ", i, " is negative");
    if (limit < start) {
      return Invalid("slice limit ", limit, " in dimension ", i, " is below its start ", start);
    }
    if (!IsUnbounded(operand.dimensions(i)) && limit > operand.dimensions(i)) {
      return Invalid("slice limit ", limit, " in dimension ", i, " exceeds the operand size ",
                     operand.dimensions(i));
    }
    dims.push_back((limit - start) / stride + ((limit - start) % stride != 0 ? 1 : 0));
  }
  return MakeArray(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferDynamicSliceShape(const Shape& operand,
                                             absl::Span<const Shape* const> start_indices,
                                             absl::Span<const int64_t> slice_sizes) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  HLOC_RETURN_IF_ERROR(CheckStartIndices(operand, start_indices));
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return Invalid("dynamic_slice_sizes=", Str(slice_sizes),
                   " must have one size per dimension "
                   "of ",
                   Str(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0) return Invalid("slice size ", slice_sizes[i], " is negative");
    if (!IsUnbounded(operand.dimensions(i)) && slice_sizes[i] > operand.dimensions(i)) {
      return Invalid("slice size ", slice_sizes[i], " in dimension ", i,
                     " exceeds the operand size ", operand.dimensions(i));
    }
  }
  return MakeArray(operand.element_type(),
                   std::vector<int64_t>(slice_sizes.begin(), slice_sizes.end()));
}

absl::StatusOr<Shape> InferDynamicUpdateSliceShape(const Shape& operand, const Shape& update,
                                                   absl::Span<const Shape* const> start_indices) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  HLOC_RETURN_IF_ERROR(ExpectArray(update, "update"));
  HLOC_RETURN_IF_ERROR(CheckStartIndices(operand, start_indices));
  if (update.rank() != operand.rank()) {
    return Invalid("update ", Str(update), " must have the rank of operand ", Str(operand));
  }
  if (update.element_type() != operand.element_type()) {
    return Invalid("update ", Str(update), " must have the element type of operand ", Str(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (IsUnbounded(operand.dimensions(i)) || IsUnbounded(update.dimensions(i))) continue;
    if (update.dimensions(i) > operand.dimensions(i)) {
      return Invalid("update dimension ", i, " has size ", update.dimensions(i),
                     ", larger than the operand's ", operand.dimensions(i));
    }
  }
  return WithElementType(operand, operand.element_type());
}

absl::StatusOr<Shape> InferConcatenateShape(absl::Span<const Shape* const> operands,
                                            int64_t dimension) {
  if (operands.empty()) return Invalid("concatenate needs at least one operand");
  const Shape& first = *operands[0];
  HLOC_RETURN_IF_ERROR(ExpectArray(first, "operand 0"));
  HLOC_RETURN_IF_ERROR(CheckDimensionIndex(dimension, first.rank(), "concatenate dimension"));
  std::vector<int64_t> dims = first.dimensions();
  std::vector<bool> dynamic = first.dynamic_dimensions();
  for (size_t i = 1; i < operands.size(); ++i) {
    const Shape& shape = *operands[i];
    HLOC_RETURN_IF_ERROR(ExpectArray(shape, absl::StrCat("operand ", i)));
    if (shape.rank() != first.rank()) {
      return Invalid("operand ", i, " ", Str(shape), " has a different rank than operand 0 ",
                     Str(first));
    }
    if (shape.element_type() != first.element_type()) {
      return Invalid("operand ", i, " ", Str(shape),
                     " has a different element type than "
                     "operand 0 ",
                     Str(first));
    }
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (d == dimension) continue;
      if (!SizesMatch(shape.dimensions(d), first.dimensions(d))) {
        return Invalid("operand ", i, " ", Str(shape), " differs from operand 0 ", Str(first),
                       " in dimension ", d, ", which is not the concatenate dimension ", dimension);
      }
    }
    if (IsUnbounded(dims[dimension]) || IsUnbounded(shape.dimensions(dimension))) {
      dims[dimension] = Shape::kUnboundedSize;
    } else if (__builtin_add_overflow(dims[dimension], shape.dimensions(dimension),
                                      &dims[dimension])) {
      return Invalid("concatenated size overflows");
    }
    dynamic[dimension] = dynamic[dimension] || shape.is_dynamic_dimension(dimension);
  }
  return MakeArray(first.element_type(), dims, dynamic);
}

absl::StatusOr<Shape> InferPadShape(const Shape& operand, const Shape& padding_value,
                                    const xla::PaddingConfig& padding_config) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  HLOC_RETURN_IF_ERROR(ExpectScalar(padding_value, "padding value"));
  if (padding_value.element_type() != operand.element_type()) {
    return Invalid("padding value ", Str(padding_value),
                   " must have the element type of "
                   "operand ",
                   Str(operand));
  }
  if (padding_config.dimensions_size() != operand.rank()) {
    return Invalid("padding config has ", padding_config.dimensions_size(), " dimensions, operand ",
                   Str(operand), " has ", operand.rank());
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const xla::PaddingConfig::PaddingConfigDimension& p = padding_config.dimensions(i);
    if (p.interior_padding() < 0) {
      return Invalid("interior padding ", p.interior_padding(), " in dimension ", i,
                     " is negative");
    }
    const int64_t size = operand.dimensions(i);
    if (IsUnbounded(size)) {
      dims.push_back(size);
      continue;
    }
    int64_t total = 0;
    int64_t interior = 0;
    if (__builtin_mul_overflow(std::max<int64_t>(size - 1, 0), p.interior_padding(), &interior) ||
        __builtin_add_overflow(size, interior, &total) ||
        __builtin_add_overflow(total, p.edge_padding_low(), &total) ||
        __builtin_add_overflow(total, p.edge_padding_high(), &total)) {
      return Invalid("padded size of dimension ", i, " overflows");
    }
    if (total < 0) {
      return Invalid("padding dimension ", i, " (size ", size, ", low ", p.edge_padding_low(),
                     ", high ", p.edge_padding_high(), ", interior ", p.interior_padding(),
                     ") gives negative size ", total);
    }
    dims.push_back(total);
  }
  return MakeArray(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferIotaShape(const Shape& shape, int64_t iota_dimension) {
  HLOC_RETURN_IF_ERROR(ExpectArray(shape, "iota result"));
  if (shape.rank() == 0) return Invalid("iota result must not be a scalar");
  HLOC_RETURN_IF_ERROR(CheckDimensionIndex(iota_dimension, shape.rank(), "iota_dimension"));
  return WithoutLayout(shape);
}

absl::StatusOr<Shape> InferTupleShape(absl::Span<const Shape* const> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Shape* element : elements) shapes.push_back(WithoutLayout(*element));
  return Shape::Tuple(std::move(shapes));
}

absl::StatusOr<Shape> InferGetTupleElementShape(const Shape& tuple, int64_t index) {
  if (!tuple.IsTuple()) return Invalid("operand ", Str(tuple), " is not a tuple");
  if (index < 0 || index >= tuple.tuple_shapes_size()) {
    return Invalid("index=", index, " is out of range for a tuple of ", tuple.tuple_shapes_size(),
                   " elements");
  }
  return WithoutLayout(tuple.tuple_shapes(index));
}

absl::StatusOr<Shape> InferGetDimensionSizeShape(const Shape& operand, int64_t dimension) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  HLOC_RETURN_IF_ERROR(CheckDimensionIndex(dimension, operand.rank(), "dimension"));
  return Shape::Scalar(xla::S32);
}

absl::StatusOr<Shape> InferSetDimensionSizeShape(const Shape& operand, const Shape& size,
                                                 int64_t dimension) {
  HLOC_RETURN_IF_ERROR(ExpectArray(operand, "operand"));
  HLOC_RETURN_IF_ERROR(CheckDimensionIndex(dimension, operand.rank(), "dimension"));
  if (!size.IsScalar() || size.element_type() != xla::S32) {
    return Invalid("size operand must be s32[], got ", Str(size));
  }
  Shape result = WithElementType(operand, operand.element_type());
  result.set_dynamic_dimension(dimension, true);
  return result;
}

}  // namespace hloc
