// Strided element copies (see strided_copy.h): an odometer over all but the
// innermost dimension, with a typed inner loop per element width.
#include "hlo/evaluator/strided_copy.h"

namespace hloc {
namespace eval {
namespace {

struct Bytes16 {
  uint64_t lo, hi;
};

template <typename T>
void CopyTyped(const T* src, int64_t src_base, absl::Span<const int64_t> src_strides, T* dst,
               int64_t dst_base, absl::Span<const int64_t> dst_strides,
               absl::Span<const int64_t> dims) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  if (rank == 0) {
    dst[dst_base] = src[src_base];
    return;
  }
  const int64_t inner = dims[rank - 1];
  const int64_t si = src_strides[rank - 1], di = dst_strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t s = src_base, t = dst_base;
  while (true) {
    if (si == 1 && di == 1) {
      std::memcpy(dst + t, src + s, inner * sizeof(T));
    } else {
      const T* sp = src + s;
      T* tp = dst + t;
      for (int64_t i = 0; i < inner; ++i) tp[i * di] = sp[i * si];
    }
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      s += src_strides[d];
      t += dst_strides[d];
      if (++index[d] < dims[d]) break;
      s -= src_strides[d] * dims[d];
      t -= dst_strides[d] * dims[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

template <typename T>
void FillTyped(const uint8_t* value, uint8_t* dst, int64_t count) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  T* p = reinterpret_cast<T*>(dst);
  for (int64_t i = 0; i < count; ++i) p[i] = v;
}

}  // namespace

void StridedCopy(int width, const uint8_t* src, int64_t src_base,
                 absl::Span<const int64_t> src_strides, uint8_t* dst, int64_t dst_base,
                 absl::Span<const int64_t> dst_strides, absl::Span<const int64_t> dims) {
  switch (width) {
    case 1:
      CopyTyped(src, src_base, src_strides, dst, dst_base, dst_strides, dims);
      break;
    case 2:
      CopyTyped(reinterpret_cast<const uint16_t*>(src), src_base, src_strides,
                reinterpret_cast<uint16_t*>(dst), dst_base, dst_strides, dims);
      break;
    case 4:
      CopyTyped(reinterpret_cast<const uint32_t*>(src), src_base, src_strides,
                reinterpret_cast<uint32_t*>(dst), dst_base, dst_strides, dims);
      break;
    case 8:
      CopyTyped(reinterpret_cast<const uint64_t*>(src), src_base, src_strides,
                reinterpret_cast<uint64_t*>(dst), dst_base, dst_strides, dims);
      break;
    case 16:
      CopyTyped(reinterpret_cast<const Bytes16*>(src), src_base, src_strides,
                reinterpret_cast<Bytes16*>(dst), dst_base, dst_strides, dims);
      break;
    default:
      break;
  }
}

void FillElements(int width, const uint8_t* value, uint8_t* dst, int64_t count) {
  switch (width) {
    case 1: std::memset(dst, *value, count); break;
    case 2: FillTyped<uint16_t>(value, dst, count); break;
    case 4: FillTyped<uint32_t>(value, dst, count); break;
    case 8: FillTyped<uint64_t>(value, dst, count); break;
    case 16: FillTyped<Bytes16>(value, dst, count); break;
    default: break;
  }
}

}  // namespace eval
}  // namespace hloc
