// Helpers shared by the shape_inference*.cc files (not part of the public
// API): error construction, dimension-list checks and shape builders.
#ifndef HLOC_HLO_SHAPE_INFERENCE_INTERNAL_H_
#define HLOC_HLO_SHAPE_INFERENCE_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "hlo/shape.h"

namespace hloc {
namespace shape_inference_internal {

template <typename... Args>
absl::Status Invalid(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}

// "f32[2,3]": shapes in messages never show layouts.
inline std::string Str(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }
inline std::string Str(absl::Span<const int64_t> dims) {
  return absl::StrCat("{", absl::StrJoin(dims, ","), "}");
}
inline std::string TypeName(PrimitiveType type) { return std::string(PrimitiveTypeName(type)); }

inline bool IsUnbounded(int64_t size) { return size == Shape::kUnboundedSize; }
// Dimension sizes agree; an unbounded size matches any.
inline bool SizesMatch(int64_t a, int64_t b) { return a == b || IsUnbounded(a) || IsUnbounded(b); }
// Arrays with the same rank and matching sizes (element types not compared).
bool SameDimensions(const Shape& a, const Shape& b);
// True when some array in `shape` has an unbounded ("?") dimension. Rules
// that do arithmetic on sizes give up (trust the declared shape) on those.
bool HasUnboundedDimension(const Shape& shape);

// `what` must be an array (not a tuple or token).
absl::Status ExpectArray(const Shape& shape, absl::string_view what);
// `what` must be a scalar array.
absl::Status ExpectScalar(const Shape& shape, absl::string_view what);
// 0 <= dimension < rank.
absl::Status CheckDimensionIndex(int64_t dimension, int64_t rank, absl::string_view what);
// Every entry in [0, rank) and no repeats.
absl::Status CheckDimensionList(absl::Span<const int64_t> dimensions, int64_t rank,
                                absl::string_view what);
// As CheckDimensionList and strictly increasing.
absl::Status CheckSortedDimensionList(absl::Span<const int64_t> dimensions, int64_t rank,
                                      absl::string_view what);
bool Contains(absl::Span<const int64_t> list, int64_t value);

// An array shape of `type` with the sizes and dynamic flags of `source`
// (elementwise results).
Shape WithElementType(const Shape& source, PrimitiveType type);
// An array shape from sizes and per-dimension dynamic flags (empty: static).
Shape MakeArray(PrimitiveType type, const std::vector<int64_t>& dims,
                const std::vector<bool>& dynamic = {});
// `shape` with every layout removed (tuples recursively).
Shape WithoutLayout(const Shape& shape);

// Result element type of a dot/convolution: the operand types must agree (or
// differ only in floating-point precision, or, with a preferred type, both be
// integers), and the preferred type (the instruction's own) may change the
// result as XLA allows.
absl::StatusOr<PrimitiveType> ContractionResultType(PrimitiveType lhs, PrimitiveType rhs,
                                                    std::optional<PrimitiveType> preferred);

}  // namespace shape_inference_internal
}  // namespace hloc

#endif  // HLOC_HLO_SHAPE_INFERENCE_INTERNAL_H_
