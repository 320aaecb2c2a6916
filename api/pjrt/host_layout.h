// Host layouts of PJRT buffers: a caller's array may be laid out by a
// minor-to-major order (PJRT_Buffer_MemoryLayout_Tiled without tiles) or by
// byte strides, while hloc keeps every array dense and row-major. Both are
// byte strides here, and one copy moves an array between any two of them:
//
//   f32[2,3] row-major      strides {12, 4}   minor_to_major {1,0}
//   f32[2,3] column-major   strides { 4, 8}   minor_to_major {0,1}
//
// torch_xla declares some results column-major (f32[4,16]{0,1}) and reads them
// back with that host layout; the plugin reports row-major layouts and permutes
// here, so the caller always gets the layout it asked for.
#ifndef HLOC_API_PJRT_HOST_LAYOUT_H_
#define HLOC_API_PJRT_HOST_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace hloc {
namespace pjrt {

// Dense row-major byte strides.
std::vector<int64_t> RowMajorByteStrides(absl::Span<const int64_t> dims, int64_t element_size);

// Dense byte strides for `minor_to_major` (a permutation of 0..rank-1).
absl::StatusOr<std::vector<int64_t>> ByteStridesForMinorToMajor(
    absl::Span<const int64_t> dims, absl::Span<const int64_t> minor_to_major,
    int64_t element_size);

// The byte strides a PJRT layout describes (null: row-major). Tiled layouts
// with tiles and negative strides are refused (Unimplemented / InvalidArgument).
absl::StatusOr<std::vector<int64_t>> ByteStridesForLayout(const PJRT_Buffer_MemoryLayout* layout,
                                                          absl::Span<const int64_t> dims,
                                                          int64_t element_size);

// Bytes spanned by an array with these strides (0 for an empty array).
int64_t SpannedBytes(absl::Span<const int64_t> dims, absl::Span<const int64_t> byte_strides,
                     int64_t element_size);

// Copies every element of a `dims` array from `src` (strides `src_strides`)
// to `dst` (strides `dst_strides`); a plain memcpy when both are the same
// dense layout. Strides are non-negative.
void CopyStrided(const void* src, absl::Span<const int64_t> src_strides, void* dst,
                 absl::Span<const int64_t> dst_strides, absl::Span<const int64_t> dims,
                 int64_t element_size);

}  // namespace pjrt
}  // namespace hloc

#endif  // HLOC_API_PJRT_HOST_LAYOUT_H_
