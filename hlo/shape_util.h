// Small shape helpers for backends and tests: bounded dynamic shapes at
// their bounds (the shape a backend returns a result in, as the
// interpreter's results have, since a Literal is static), and the first
// array element type of a tuple.
#ifndef HLOC_HLO_SHAPE_UTIL_H_
#define HLOC_HLO_SHAPE_UTIL_H_

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

}  // namespace hloc

#endif  // HLOC_HLO_SHAPE_UTIL_H_
