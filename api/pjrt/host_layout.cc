// Strided copies between PJRT host layouts and hloc's row-major arrays.
#include "api/pjrt/host_layout.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace pjrt {

std::vector<int64_t> RowMajorByteStrides(absl::Span<const int64_t> dims, int64_t element_size) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = element_size;
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

absl::StatusOr<std::vector<int64_t>> ByteStridesForMinorToMajor(
    absl::Span<const int64_t> dims, absl::Span<const int64_t> minor_to_major,
    int64_t element_size) {
  if (minor_to_major.size() != dims.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("layout minor_to_major {", absl::StrJoin(minor_to_major, ","),
                     "} does not match rank ", dims.size()));
  }
  std::vector<int64_t> strides(dims.size(), -1);
  int64_t stride = element_size;
  for (int64_t dim : minor_to_major) {
    if (dim < 0 || dim >= static_cast<int64_t>(dims.size()) || strides[dim] != -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "layout minor_to_major {", absl::StrJoin(minor_to_major, ","), "} is no permutation"));
    }
    strides[dim] = stride;
    stride *= dims[dim];
  }
  return strides;
}

absl::StatusOr<std::vector<int64_t>> ByteStridesForLayout(const PJRT_Buffer_MemoryLayout* layout,
                                                          absl::Span<const int64_t> dims,
                                                          int64_t element_size) {
  if (layout == nullptr) return RowMajorByteStrides(dims, element_size);
  if (layout->type == PJRT_Buffer_MemoryLayout_Type_Tiled) {
    if (layout->tiled.num_tiles != 0) {
      return absl::UnimplementedError("tiled host layouts are not supported by hloc");
    }
    return ByteStridesForMinorToMajor(
        dims, absl::MakeConstSpan(layout->tiled.minor_to_major, layout->tiled.minor_to_major_size),
        element_size);
  }
  if (layout->type == PJRT_Buffer_MemoryLayout_Type_Strides) {
    absl::Span<const int64_t> strides(layout->strides.byte_strides,
                                      layout->strides.num_byte_strides);
    if (strides.size() != dims.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          strides.size(), " byte strides for an array of rank ", dims.size()));
    }
    for (int64_t stride : strides) {
      if (stride < 0) return absl::InvalidArgumentError("negative byte strides are not supported");
    }
    return std::vector<int64_t>(strides.begin(), strides.end());
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown PJRT_Buffer_MemoryLayout type ", static_cast<int>(layout->type)));
}

int64_t SpannedBytes(absl::Span<const int64_t> dims, absl::Span<const int64_t> byte_strides,
                     int64_t element_size) {
  int64_t last = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) return 0;
    last += (dims[i] - 1) * byte_strides[i];
  }
  return last + element_size;
}

namespace {

// Copies dimension `d` and those inside it.
void CopyDimension(const char* src, absl::Span<const int64_t> src_strides, char* dst,
                   absl::Span<const int64_t> dst_strides, absl::Span<const int64_t> dims,
                   int64_t element_size, size_t d) {
  const int64_t n = dims[d];
  const int64_t s = src_strides[d];
  const int64_t t = dst_strides[d];
  if (d + 1 == dims.size()) {
    if (s == element_size && t == element_size) {
      std::memcpy(dst, src, static_cast<size_t>(n * element_size));
      return;
    }
    switch (element_size) {
      case 4:
        for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * t, src + i * s, 4);
        return;
      case 8:
        for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * t, src + i * s, 8);
        return;
      default:
        for (int64_t i = 0; i < n; ++i) {
          std::memcpy(dst + i * t, src + i * s, static_cast<size_t>(element_size));
        }
        return;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    CopyDimension(src + i * s, src_strides, dst + i * t, dst_strides, dims, element_size, d + 1);
  }
}

}  // namespace

void CopyStrided(const void* src, absl::Span<const int64_t> src_strides, void* dst,
                 absl::Span<const int64_t> dst_strides, absl::Span<const int64_t> dims,
                 int64_t element_size) {
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  if (elements == 0) return;
  const std::vector<int64_t> dense = RowMajorByteStrides(dims, element_size);
  const bool src_dense = std::equal(src_strides.begin(), src_strides.end(), dense.begin());
  const bool dst_dense = std::equal(dst_strides.begin(), dst_strides.end(), dense.begin());
  if (dims.empty() || (src_dense && dst_dense)) {
    std::memcpy(dst, src, static_cast<size_t>(elements * element_size));
    return;
  }
  CopyDimension(static_cast<const char*>(src), src_strides, static_cast<char*>(dst), dst_strides,
                dims, element_size, 0);
}

}  // namespace pjrt
}  // namespace hloc
