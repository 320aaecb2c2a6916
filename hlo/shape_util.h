// Small shape helpers for backends, passes and tests: bounded dynamic
// shapes at their bounds (the shape a backend returns a result in, as the
// interpreter's results have, since a Literal is static), the first array
// element type of a tuple, row-major layouts, and slices that are one
// contiguous run of their operand's bytes.
#ifndef HLOC_HLO_SHAPE_UTIL_H_
#define HLOC_HLO_SHAPE_UTIL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/shape.h"

namespace hloc {

// `shape` with every bounded dynamic dimension made static at its bound,
// tuple elements included.
inline Shape StaticBounds(Shape shape) {
  for (int64_t i = 0; i < shape.rank(); ++i) shape.set_dynamic_dimension(i, false);
  for (Shape& element : *shape.mutable_tuple_shapes()) element = StaticBounds(element);
  return shape;
}

// The element type of the first array leaf of `shape` (depth first), or
// PRIMITIVE_TYPE_INVALID when it has none.
inline PrimitiveType FirstArrayType(const Shape& shape) {
  if (!shape.IsTuple()) return shape.IsArray() ? shape.element_type() : xla::PRIMITIVE_TYPE_INVALID;
  for (const Shape& element : shape.tuple_shapes()) {
    const PrimitiveType type = FirstArrayType(element);
    if (type != xla::PRIMITIVE_TYPE_INVALID) return type;
  }
  return xla::PRIMITIVE_TYPE_INVALID;
}

// True for an array whose elements lie in row-major order: no layout, or the
// descending one.
inline bool IsRowMajorArray(const Shape& shape) {
  return shape.IsArray() && (!shape.has_layout() || shape.layout() == Layout::RowMajor(shape.rank()));
}

// A reshape or bitcast between row-major arrays of one element type: its
// elements keep their operand's linear order (the same bytes).
inline bool KeepsRowMajorOrder(const HloInstruction& hlo) {
  return (hlo.opcode() == HloOpcode::kReshape || hlo.opcode() == HloOpcode::kBitcast) &&
         hlo.operand_count() == 1 && IsRowMajorArray(hlo.shape()) &&
         IsRowMajorArray(hlo.operand(0)->shape()) &&
         hlo.shape().element_type() == hlo.operand(0)->shape().element_type();
}

// When slice(starts, limits, strides) of a static row-major array `operand`
// selects one contiguous run of its elements (the dimensions before some d
// sliced to one index, d itself to a unit-stride range, every dimension after
// d whole), the run's first element as a row-major linear index; otherwise
// (or for malformed bounds) nullopt.
inline std::optional<int64_t> ContiguousSliceStart(const Shape& operand,
                                                   const std::vector<int64_t>& starts,
                                                   const std::vector<int64_t>& limits,
                                                   const std::vector<int64_t>& strides) {
  const int64_t rank = operand.rank();
  for (int64_t i = 0; i < rank; ++i) {
    if (operand.is_dynamic_dimension(i)) return std::nullopt;
  }
  if (!IsRowMajorArray(operand) ||
      static_cast<int64_t>(starts.size()) != rank || static_cast<int64_t>(limits.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank) {
    return std::nullopt;
  }
  // d: the first dimension (from the major end) the slice keeps more than one
  // index of; every later one must be whole.
  int64_t d = rank;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t size = operand.dimensions(i);
    if (starts[i] < 0 || limits[i] > size || starts[i] >= limits[i] || strides[i] < 1) {
      return std::nullopt;
    }
    const int64_t count = (limits[i] - starts[i] + strides[i] - 1) / strides[i];
    if (d == rank) {
      if (count > 1) {
        if (strides[i] != 1) return std::nullopt;
        d = i;
      }
    } else if (starts[i] != 0 || limits[i] != size || strides[i] != 1) {
      return std::nullopt;
    }
  }
  int64_t linear = 0;
  for (int64_t i = 0; i < rank; ++i) linear = linear * operand.dimensions(i) + starts[i];
  return linear;
}

}  // namespace hloc

#endif  // HLOC_HLO_SHAPE_UTIL_H_
