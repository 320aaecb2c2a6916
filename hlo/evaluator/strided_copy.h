// Strided element copies: the kernel behind broadcast, transpose, reverse,
// slice, pad, concatenate, gather and friends. Elements are moved as opaque
// fixed-width values; only the element width matters.
#ifndef HLOC_HLO_EVALUATOR_STRIDED_COPY_H_
#define HLOC_HLO_EVALUATOR_STRIDED_COPY_H_

#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/types/span.h"

namespace hloc {
namespace eval {

// Copies the box `dims`: element at index I goes from
// src[src_base + sum(I[d] * src_strides[d])] to dst[dst_base + sum(I[d] *
// dst_strides[d])]. Offsets and strides count elements of `width` bytes.
void StridedCopy(int width, const uint8_t* src, int64_t src_base,
                 absl::Span<const int64_t> src_strides, uint8_t* dst, int64_t dst_base,
                 absl::Span<const int64_t> dst_strides, absl::Span<const int64_t> dims);

// Fills `count` elements of `width` bytes at dst with the element at value.
void FillElements(int width, const uint8_t* value, uint8_t* dst, int64_t count);

}  // namespace eval
}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_STRIDED_COPY_H_
