// Array leaves of a shape: the dense buffers a value of that shape occupies.
// Kernels and the host runtime see tuples only as lists of these (tokens take
// no buffer). LLVM-free, shared by the code generators and the host compiler.
#ifndef HLOC_BACKEND_LLVM_ARRAY_LEAVES_H_
#define HLOC_BACKEND_LLVM_ARRAY_LEAVES_H_

#include <vector>

#include "hlo/instruction.h"
#include "hlo/shape.h"

namespace hloc {

struct ArrayLeaf {
  ShapeIndex index;     // Path of tuple indices from the root shape.
  const Shape* shape;   // The array shape at that path.
};

// Depth-first, in tuple element order.
inline void AppendArrayLeaves(const Shape& shape, ShapeIndex* prefix, std::vector<ArrayLeaf>* out) {
  if (shape.IsTuple()) {
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      prefix->push_back(i);
      AppendArrayLeaves(shape.tuple_shapes(i), prefix, out);
      prefix->pop_back();
    }
  } else if (shape.IsArray()) {
    out->push_back({*prefix, &shape});
  }
}

inline std::vector<ArrayLeaf> ArrayLeaves(const Shape& shape) {
  std::vector<ArrayLeaf> leaves;
  ShapeIndex prefix;
  AppendArrayLeaves(shape, &prefix, &leaves);
  return leaves;
}

}  // namespace hloc

#endif  // HLOC_BACKEND_LLVM_ARRAY_LEAVES_H_
