// Bounded dynamic shapes at their bounds: the shape a backend returns a
// result in (and the interpreter's results have), since a Literal is static.
#ifndef HLOC_HLO_SHAPE_BOUNDS_H_
#define HLOC_HLO_SHAPE_BOUNDS_H_

#include "hlo/shape.h"

namespace hloc {

// `shape` with every bounded dynamic dimension made static at its bound,
// tuple elements included.
inline Shape StaticBounds(Shape shape) {
  for (int64_t i = 0; i < shape.rank(); ++i) shape.set_dynamic_dimension(i, false);
  for (Shape& element : *shape.mutable_tuple_shapes()) element = StaticBounds(element);
  return shape;
}

}  // namespace hloc

#endif  // HLOC_HLO_SHAPE_BOUNDS_H_
