// Literals as compiled programs see them: a list of array leaves, each one
// buffer. Every target's program checks its arguments and passes their leaves'
// bytes as the executable's parameters, and receives its outputs into the
// leaves of a result literal, with these helpers; the interpreter ops
// (interpreter_ops.h) go the other way, from buffers to literals.
#ifndef HLOC_BACKEND_COMMON_LITERAL_LEAVES_H_
#define HLOC_BACKEND_COMMON_LITERAL_LEAVES_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/literal.h"
#include "hlo/shape.h"

namespace hloc {
namespace backend {

// Depth-first array leaves of a literal, matching ArrayLeaves of its shape.
void CollectLiteralLeaves(const Literal& literal, std::vector<const Literal*>* out);
void CollectMutableLeaves(Literal* literal, std::vector<Literal*>* out);

// Bytes of an array shape's data (dense, row-major).
int64_t LeafBytes(const Shape& shape);

// OK when there is one argument per parameter, each of a compatible shape.
absl::Status CheckArguments(absl::Span<const Literal> arguments,
                            absl::Span<const Shape> parameter_shapes);

// The array leaves' bytes of `arguments`, in order: an executable's parameters.
std::vector<const void*> ArgumentLeafData(absl::Span<const Literal> arguments);

// A result literal of `shape` (static bounds) and its leaves' memory, in
// order: an executable's outputs.
struct ResultLiteral {
  Literal literal;
  std::vector<void*> outputs;
};
absl::StatusOr<ResultLiteral> CreateResultLiteral(const Shape& shape);

// The buffers' bytes as literals of `shapes`, one per shape, taking array
// leaves from `buffers` in order (at most buffers.size()).
absl::StatusOr<std::vector<Literal>> LiteralsFromBuffers(absl::Span<const Shape> shapes,
                                                         absl::Span<const void* const> buffers);

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_LITERAL_LEAVES_H_
