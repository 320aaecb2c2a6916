// Checks shared by the library pattern families: element types, static
// shapes, layouts, and "this value is a vector broadcast along that
// dimension". Each returns a Refusal: nullopt when fine, else the reason.
#ifndef HLOC_PASSES_OUTLINING_LIBRARY_CHECKS_H_
#define HLOC_PASSES_OUTLINING_LIBRARY_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "google/protobuf/repeated_field.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/library_patterns.h"

// Returns the refusal of `expr` if there is one.
#define HLOC_REFUSE_IF(expr)                             \
  do {                                                   \
    ::hloc::Refusal hloc_refusal_ = (expr);              \
    if (hloc_refusal_.has_value()) return hloc_refusal_; \
  } while (false)

namespace hloc {

// f16, bf16, f32 or f64.
bool IsLibraryFloat(PrimitiveType type);
// `i` is a floating-point array of a library type.
Refusal CheckLibraryFloat(const HloInstruction* i);
// No dynamic dimensions in `i`'s shape or its operands'.
Refusal CheckStatic(const HloInstruction* i);
// No layout, or the row-major one.
bool IsRowMajor(const Shape& shape);
// A layout strides can describe: a permutation of the dimensions, no tiles,
// no sub-byte element size, the default memory space.
bool IsDenseStrided(const Shape& shape);
// `i`'s result and operands have layouts the library can address: row-major
// when options.require_row_major_layouts, else dense strided ones.
Refusal CheckLayouts(const HloInstruction* i, const LibraryCheckOptions& options);
// Records `value`'s layout as `key` = array<i64: minor_to_major...> when it
// is not row-major (and removes `key` when it is): see "Layouts" in
// library_patterns.h.
void RecordLayout(CompositeAttributes& attributes, absl::string_view key,
                  const HloInstruction* value);
// `top` (a broadcast chain over `vector`) spreads a rank-1 `vector` of
// `out`'s element type along dimension `dimension` of `out`.
Refusal CheckVectorAlong(const HloInstruction* top, const HloInstruction* vector, int64_t dimension,
                         const Shape& out, absl::string_view what);
// `top` (a broadcast chain over `base`, a reduction of `reduced` over
// `reduce_dims`) broadcasts `base` back along the reduced dimensions.
Refusal CheckBroadcastBack(const HloInstruction* top, const HloInstruction* base,
                           const Shape& reduced, absl::Span<const int64_t> reduce_dims,
                           absl::string_view what);
// `reduce` reduces over exactly the last dimension of its operand.
Refusal CheckReducesLastDimension(const HloInstruction* reduce, absl::string_view what);

std::vector<int64_t> ToVector(const google::protobuf::RepeatedField<int64_t>& field);
std::string DimsToString(absl::Span<const int64_t> dims);  // "{0,1}"

}  // namespace hloc

#endif  // HLOC_PASSES_OUTLINING_LIBRARY_CHECKS_H_
