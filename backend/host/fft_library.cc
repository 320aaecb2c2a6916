// fft on the host (see fft_library.h).
#include "backend/host/fft_library.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/thread_pool.h"

namespace hloc {
namespace host {
namespace {

// a b without std::complex's operator*, whose inf/nan recovery (a call to
// __mulsc3) costs more than the product.
template <typename T>
inline std::complex<T> Mul(const std::complex<T>& a, const std::complex<T>& b) {
  return std::complex<T>(a.real() * b.real() - a.imag() * b.imag(),
                         a.real() * b.imag() + a.imag() * b.real());
}

// exp(sign 2 pi i k / n), computed in double.
template <typename T>
std::complex<T> Twiddle(int sign, int64_t k, int64_t n) {
  const double angle = sign * 2 * M_PI * static_cast<double>(k) / static_cast<double>(n);
  return std::complex<T>(static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle)));
}

// kCount lines transformed at once, line v in lane v of every vector: 64
// bytes, one AVX-512 register, two AVX ones or four SSE ones.
template <typename T>
struct Lanes;
template <>
struct Lanes<float> {
  typedef float Vec __attribute__((vector_size(64), aligned(64)));
  typedef int32_t Index __attribute__((vector_size(64), aligned(64)));
  static constexpr int kCount = 16;
};
template <>
struct Lanes<double> {
  typedef double Vec __attribute__((vector_size(64), aligned(64)));
  typedef int64_t Index __attribute__((vector_size(64), aligned(64)));
  static constexpr int kCount = 8;
};

// Element j of Lanes<T>::kCount lines.
template <typename T>
struct LaneComplex {
  typename Lanes<T>::Vec re, im;
};

#define HLOC_FFT_INLINE inline __attribute__((always_inline))

// a *= w, the same w in every lane.
template <typename T>
HLOC_FFT_INLINE void Rotate(LaneComplex<T>& a, const std::complex<T>& w) {
  const typename Lanes<T>::Vec re = a.re * w.real() - a.im * w.imag();
  a.im = a.re * w.imag() + a.im * w.real();
  a.re = re;
}

// The radices of n: 4s, then 2, then odd primes in increasing order.
std::vector<int64_t> Radices(int64_t n) {
  std::vector<int64_t> factors;
  int64_t rest = n;
  while (rest % 4 == 0) factors.push_back(4), rest /= 4;
  while (rest % 2 == 0) factors.push_back(2), rest /= 2;
  for (int64_t p = 3; p * p <= rest; p += 2) {
    while (rest % p == 0) factors.push_back(p), rest /= p;
  }
  if (rest > 1) factors.push_back(rest);
  return factors;
}

// What the lane stages read: the length, the direction and the twiddles
// W_n^(sign j), j < n.
template <typename T>
struct StageTables {
  int64_t n;
  int sign;
  const std::vector<int64_t>* radices;
  const std::complex<T>* twiddles;
};

// One Stockham stage of radix p. Before it, src[k m p + r] (k < l, r < m p)
// is the length-l transform of the samples r, r + m p, r + 2 m p, ... (l is
// the product of the earlier radices, m = n / (l p)). After it,
// dst[(k + l t) m + r] (t < p, r < m) is the length-l p transform of the
// samples r, r + m, ...: sum over q < p of W_p^(q t) W_(l p)^(q k) times
// src[k m p + q m + r]. The last stage (m = 1) leaves the transform in order.
template <typename T>
HLOC_FFT_INLINE void LaneStage(const StageTables<T>& tables, int64_t p, int64_t l,
                               const LaneComplex<T>* src, LaneComplex<T>* dst,
                               LaneComplex<T>* scratch) {
  using LC = LaneComplex<T>;
  using Vec = typename Lanes<T>::Vec;
  const int64_t m = tables.n / (l * p);
  const int64_t stride = l * m;  // between dst's outputs t and t + 1
  const std::complex<T>* w = tables.twiddles;
  for (int64_t k = 0; k < l; ++k) {
    const LC* in = src + k * m * p;
    LC* out = dst + k * m;
    const int64_t tw = k * m;  // W_(l p)^(q k) is twiddle q tw
    if (p == 2) {
      for (int64_t r = 0; r < m; ++r) {
        const LC a = in[r];
        LC b = in[m + r];
        if (k != 0) Rotate(b, w[tw]);
        out[r].re = a.re + b.re;
        out[r].im = a.im + b.im;
        out[stride + r].re = a.re - b.re;
        out[stride + r].im = a.im - b.im;
      }
    } else if (p == 4) {
      for (int64_t r = 0; r < m; ++r) {
        const LC a0 = in[r];
        LC a1 = in[m + r], a2 = in[2 * m + r], a3 = in[3 * m + r];
        if (k != 0) {
          Rotate(a1, w[tw]);
          Rotate(a2, w[2 * tw]);
          Rotate(a3, w[3 * tw]);
        }
        const Vec b0r = a0.re + a2.re, b0i = a0.im + a2.im;
        const Vec b1r = a0.re - a2.re, b1i = a0.im - a2.im;
        const Vec b2r = a1.re + a3.re, b2i = a1.im + a3.im;
        // W_4 (a1 - a3) = sign i (a1 - a3).
        Vec b3r = a1.im - a3.im, b3i = a3.re - a1.re;
        if (tables.sign > 0) b3r = -b3r, b3i = -b3i;
        out[r].re = b0r + b2r;
        out[r].im = b0i + b2i;
        out[stride + r].re = b1r + b3r;
        out[stride + r].im = b1i + b3i;
        out[2 * stride + r].re = b0r - b2r;
        out[2 * stride + r].im = b0i - b2i;
        out[3 * stride + r].re = b1r - b3r;
        out[3 * stride + r].im = b1i - b3i;
      }
    } else if (p == 3) {
      // W_3 = -1/2 + i s, s = sign sin(2 pi / 3).
      const T s = static_cast<T>(tables.sign * 0.86602540378443864676);
      for (int64_t r = 0; r < m; ++r) {
        const LC a0 = in[r];
        LC a1 = in[m + r], a2 = in[2 * m + r];
        if (k != 0) {
          Rotate(a1, w[tw]);
          Rotate(a2, w[2 * tw]);
        }
        const Vec sr = a1.re + a2.re, si = a1.im + a2.im;
        const Vec dr = (a1.re - a2.re) * s, di = (a1.im - a2.im) * s;
        const Vec br = a0.re - sr * static_cast<T>(0.5), bi = a0.im - si * static_cast<T>(0.5);
        out[r].re = a0.re + sr;
        out[r].im = a0.im + si;
        out[stride + r].re = br - di;
        out[stride + r].im = bi + dr;
        out[2 * stride + r].re = br + di;
        out[2 * stride + r].im = bi - dr;
      }
    } else {
      // Any p, O(p) per output: W_p^(q t) is twiddle ((q t) mod p) (n / p).
      const int64_t root = tables.n / p;
      LC* t = scratch;
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t q = 0; q < p; ++q) {
          t[q] = in[q * m + r];
          if (k != 0 && q != 0) Rotate(t[q], w[q * tw]);
        }
        for (int64_t u = 0; u < p; ++u) {
          Vec re = t[0].re, im = t[0].im;
          for (int64_t q = 1; q < p; ++q) {
            const std::complex<T> z = w[((q * u) % p) * root];
            re += t[q].re * z.real() - t[q].im * z.imag();
            im += t[q].re * z.imag() + t[q].im * z.real();
          }
          out[u * stride + r].re = re;
          out[u * stride + r].im = im;
        }
      }
    }
  }
}

// Every stage over a (clobbered), b as the other buffer; returns the one
// that holds the transform.
template <typename T>
HLOC_FFT_INLINE LaneComplex<T>* LaneStages(const StageTables<T>& tables, LaneComplex<T>* a,
                                           LaneComplex<T>* b, LaneComplex<T>* scratch) {
  int64_t l = 1;
  for (int64_t p : *tables.radices) {
    LaneStage(tables, p, l, a, b, scratch);
    std::swap(a, b);
    l *= p;
  }
  return a;
}

// Transposes the kCount x kCount matrix whose row v is rows[v], one bit of
// the row and column indices at a time: the step for bit `bit` pairs rows
// i and i + 2^bit (i's bit clear) and swaps their off-diagonal halves.
template <typename T>
HLOC_FFT_INLINE void Transpose(typename Lanes<T>::Vec* rows) {
  constexpr int kCount = Lanes<T>::kCount;
#if defined(__clang__)
  for (int i = 0; i < kCount; ++i) {
    for (int j = i + 1; j < kCount; ++j) {
      const T t = rows[i][j];
      rows[i][j] = rows[j][i];
      rows[j][i] = t;
    }
  }
#else
#pragma GCC unroll 4
  for (int bit = 0; (1 << bit) < kCount; ++bit) {
    const int half = 1 << bit;
    // Of the pair (A, B) = (rows[i], rows[i + half]), concatenated:
    // low[c] = A[c] or B[c - half]; high[c] = A[c + half] or B[c].
    typename Lanes<T>::Index low, high;
    for (int c = 0; c < kCount; ++c) {
      const bool set = (c & half) != 0;
      low[c] = set ? kCount + c - half : c;
      high[c] = set ? kCount + c : c + half;
    }
#pragma GCC unroll 16
    for (int i = 0; i < kCount; ++i) {
      if ((i & half) != 0) continue;
      const typename Lanes<T>::Vec a = rows[i], b = rows[i + half];
      rows[i] = __builtin_shuffle(a, b, low);
      rows[i + half] = __builtin_shuffle(a, b, high);
    }
  }
#endif
}

// Element j < count of kCount lines (line v at in + v stride) into lane v
// of a[j]: kCount / 2 elements of every line at once, as one transpose of
// kCount vectors.
template <typename T>
HLOC_FFT_INLINE void IntoLanes(const std::complex<T>* in, int64_t stride, int64_t count,
                               LaneComplex<T>* a) {
  using Vec = typename Lanes<T>::Vec;
  constexpr int kCount = Lanes<T>::kCount;
  constexpr int64_t kStep = kCount / 2;
  const int64_t blocked = count - count % kStep;
  Vec rows[kCount];
  for (int64_t j0 = 0; j0 < blocked; j0 += kStep) {
#pragma GCC unroll 16
    for (int v = 0; v < kCount; ++v) std::memcpy(&rows[v], in + v * stride + j0, sizeof(Vec));
    Transpose<T>(rows);
#pragma GCC unroll 8
    for (int64_t e = 0; e < kStep; ++e) {
      a[j0 + e].re = rows[2 * e];
      a[j0 + e].im = rows[2 * e + 1];
    }
  }
  for (int64_t j = blocked; j < count; ++j) {
    for (int v = 0; v < kCount; ++v) {
      a[j].re[v] = in[v * stride + j].real();
      a[j].im[v] = in[v * stride + j].imag();
    }
  }
}

// The reverse: lane v of y[j], j < count, to out[v stride + j].
template <typename T>
HLOC_FFT_INLINE void OutOfLanes(const LaneComplex<T>* y, int64_t count, std::complex<T>* out,
                                int64_t stride) {
  using Vec = typename Lanes<T>::Vec;
  constexpr int kCount = Lanes<T>::kCount;
  constexpr int64_t kStep = kCount / 2;
  const int64_t blocked = count - count % kStep;
  Vec rows[kCount];
  for (int64_t j0 = 0; j0 < blocked; j0 += kStep) {
#pragma GCC unroll 8
    for (int64_t e = 0; e < kStep; ++e) {
      rows[2 * e] = y[j0 + e].re;
      rows[2 * e + 1] = y[j0 + e].im;
    }
    Transpose<T>(rows);
#pragma GCC unroll 16
    for (int v = 0; v < kCount; ++v) {
      std::memcpy(static_cast<void*>(out + v * stride + j0), &rows[v], sizeof(Vec));
    }
  }
  for (int64_t j = blocked; j < count; ++j) {
    for (int v = 0; v < kCount; ++v) out[v * stride + j] = std::complex<T>(y[j].re[v], y[j].im[v]);
  }
}

// Element j of kCount columns (column v at in + j stride + v, so element j
// of every column is kCount neighbours) into the lanes of a[j]: the real and
// imaginary parts pulled apart; and back.
template <typename T>
HLOC_FFT_INLINE void ColumnsIntoLanes(const std::complex<T>* in, int64_t stride, int64_t count,
                                      LaneComplex<T>* a) {
  using Vec = typename Lanes<T>::Vec;
  constexpr int kCount = Lanes<T>::kCount;
  for (int64_t j = 0; j < count; ++j) {
    const std::complex<T>* x = in + j * stride;
#if defined(__clang__)
    for (int v = 0; v < kCount; ++v) {
      a[j].re[v] = x[v].real();
      a[j].im[v] = x[v].imag();
    }
#else
    Vec low, high;
    std::memcpy(&low, x, sizeof(Vec));
    std::memcpy(&high, x + kCount / 2, sizeof(Vec));
    typename Lanes<T>::Index even, odd;
    for (int v = 0; v < kCount; ++v) even[v] = 2 * v, odd[v] = 2 * v + 1;
    a[j].re = __builtin_shuffle(low, high, even);
    a[j].im = __builtin_shuffle(low, high, odd);
#endif
  }
}

template <typename T>
HLOC_FFT_INLINE void ColumnsOutOfLanes(const LaneComplex<T>* y, int64_t count,
                                       std::complex<T>* out, int64_t stride) {
  using Vec = typename Lanes<T>::Vec;
  constexpr int kCount = Lanes<T>::kCount;
  for (int64_t j = 0; j < count; ++j) {
    std::complex<T>* x = out + j * stride;
#if defined(__clang__)
    for (int v = 0; v < kCount; ++v) x[v] = std::complex<T>(y[j].re[v], y[j].im[v]);
#else
    typename Lanes<T>::Index first, second;
    for (int v = 0; v < kCount; ++v) {
      first[v] = v / 2 + (v % 2) * kCount;
      second[v] = kCount / 2 + v / 2 + (v % 2) * kCount;
    }
    const Vec low = __builtin_shuffle(y[j].re, y[j].im, first);
    const Vec high = __builtin_shuffle(y[j].re, y[j].im, second);
    std::memcpy(static_cast<void*>(x), &low, sizeof(Vec));
    std::memcpy(static_cast<void*>(x + kCount / 2), &high, sizeof(Vec));
#endif
  }
}

// What a call in the lanes reads besides the lines.
template <typename T>
struct LaneCall {
  StageTables<T> tables;
  // TransformColumnsInLanes: between a column's elements.
  int64_t stride = 0;
  // The real transforms (n = 2 h): W_n^(sign k), k <= h, and IRFFT's scale.
  const std::complex<T>* real_twiddles = nullptr;
  T scale = 1;
};

// Transforms kCount lines of length n in the lanes: line v from in + v n to
// out + v n (in and out may be the same; a is clobbered, b is the other
// buffer).
template <typename T>
HLOC_FFT_INLINE void TransformInLanes(const LaneCall<T>& call, const std::complex<T>* in,
                                      std::complex<T>* out, LaneComplex<T>* a, LaneComplex<T>* b,
                                      LaneComplex<T>* scratch) {
  const int64_t n = call.tables.n;
  IntoLanes(in, n, n, a);
  OutOfLanes(LaneStages(call.tables, a, b, scratch), n, out, n);
}

// RFFT of kCount real lines of length 2 h (the transform is of length h):
// line v read as h complex numbers z at in + v h, its h + 1 values
// X[k] = (Z[k] + conj Z[h-k]) / 2 + W_n^k (Z[k] - conj Z[h-k]) / 2i (indices
// mod h) to out + v (h + 1). a and b hold h + 1.
template <typename T>
HLOC_FFT_INLINE void RealForwardInLanes(const LaneCall<T>& call, const std::complex<T>* in,
                                        std::complex<T>* out, LaneComplex<T>* a,
                                        LaneComplex<T>* b, LaneComplex<T>* scratch) {
  using Vec = typename Lanes<T>::Vec;
  const int64_t h = call.tables.n;
  IntoLanes(in, h, h, a);
  const LaneComplex<T>* z = LaneStages(call.tables, a, b, scratch);
  LaneComplex<T>* x = z == a ? b : a;
  const std::complex<T>* w = call.real_twiddles;
  const T half = static_cast<T>(0.5);
  for (int64_t k = 0; k <= h; ++k) {
    const LaneComplex<T>& p = z[k == h ? 0 : k];
    const LaneComplex<T>& q = z[k == 0 ? 0 : h - k];
    const Vec even_re = (p.re + q.re) * half, even_im = (p.im - q.im) * half;
    const Vec odd_re = (p.im + q.im) * half, odd_im = (q.re - p.re) * half;
    x[k].re = even_re + odd_re * w[k].real() - odd_im * w[k].imag();
    x[k].im = even_im + odd_im * w[k].real() + odd_re * w[k].imag();
  }
  OutOfLanes(x, h + 1, out, h + 1);
}

// IRFFT of kCount lines to real length 2 h: the h + 1 values X of line v at
// in + v (h + 1) packed into E + i O, E = (X[k] + conj X[h-k]) / 2,
// O = (X[k] - conj X[h-k]) W_n^-k / 2 (the imaginary parts of X[0] and X[h]
// count for nothing), times the scale, transformed, written as h complex
// numbers to out + v h. a and b hold h + 1.
template <typename T>
HLOC_FFT_INLINE void RealInverseInLanes(const LaneCall<T>& call, const std::complex<T>* in,
                                        std::complex<T>* out, LaneComplex<T>* a,
                                        LaneComplex<T>* b, LaneComplex<T>* scratch) {
  using Vec = typename Lanes<T>::Vec;
  const int64_t h = call.tables.n;
  IntoLanes(in, h + 1, h + 1, b);
  const std::complex<T>* w = call.real_twiddles;
  const T f = call.scale;
  for (int64_t k = 0; k < h; ++k) {
    const Vec p_re = b[k].re, q_re = b[h - k].re;
    Vec p_im = b[k].im, q_im = b[h - k].im;
    if (k == 0) p_im = q_im = Vec{};
    const Vec d_re = p_re - q_re, d_im = p_im + q_im;
    a[k].re = (p_re + q_re - (d_re * w[k].imag() + d_im * w[k].real())) * f;
    a[k].im = (p_im - q_im + (d_re * w[k].real() - d_im * w[k].imag())) * f;
  }
  OutOfLanes(LaneStages(call.tables, a, b, scratch), h, out, h);
}

// Transforms kCount neighbouring columns of length n in place (column v at
// in + j stride + v; out == in).
template <typename T>
HLOC_FFT_INLINE void TransformColumnsInLanes(const LaneCall<T>& call, const std::complex<T>* in,
                                             std::complex<T>* out, LaneComplex<T>* a,
                                             LaneComplex<T>* b, LaneComplex<T>* scratch) {
  const int64_t n = call.tables.n;
  ColumnsIntoLanes(in, call.stride, n, a);
  ColumnsOutOfLanes(LaneStages(call.tables, a, b, scratch), n, out, call.stride);
}

template <typename T>
using LaneRun = void (*)(const LaneCall<T>&, const std::complex<T>*, std::complex<T>*,
                         LaneComplex<T>*, LaneComplex<T>*, LaneComplex<T>*);

// The four, one set per vector width.
template <typename T>
struct LaneCode {
  LaneRun<T> transform, columns, real_forward, real_inverse;
};

// The lane code compiled for each x86 vector width, picked once by what the
// CPU has. The arithmetic per lane is the same in each (the BUILD rule turns
// off contraction into fused multiply-adds), so the results are too.
#define HLOC_FFT_IN_LANES(name, body, attributes)                                               \
  template <typename T>                                                                         \
  attributes void name(const LaneCall<T>& call, const std::complex<T>* in, std::complex<T>* out, \
                       LaneComplex<T>* a, LaneComplex<T>* b, LaneComplex<T>* scratch) {         \
    body(call, in, out, a, b, scratch);                                                         \
  }
#define HLOC_FFT_LANE_CODE(suffix, attributes)                                         \
  HLOC_FFT_IN_LANES(Transform##suffix, TransformInLanes, attributes)                   \
  HLOC_FFT_IN_LANES(Columns##suffix, TransformColumnsInLanes, attributes)              \
  HLOC_FFT_IN_LANES(RealForward##suffix, RealForwardInLanes, attributes)               \
  HLOC_FFT_IN_LANES(RealInverse##suffix, RealInverseInLanes, attributes)               \
  template <typename T>                                                                \
  LaneCode<T> LaneCode##suffix() {                                                     \
    return {&Transform##suffix<T>, &Columns##suffix<T>, &RealForward##suffix<T>,       \
            &RealInverse##suffix<T>};                                                  \
  }
HLOC_FFT_LANE_CODE(Baseline, )
#if defined(__x86_64__)
HLOC_FFT_LANE_CODE(Avx2, __attribute__((target("avx2"), flatten)))
HLOC_FFT_LANE_CODE(Avx512, __attribute__((target("avx512f"), flatten)))
#endif
#undef HLOC_FFT_LANE_CODE
#undef HLOC_FFT_IN_LANES

enum class VectorCode { kBaseline, kAvx2, kAvx512 };

bool CpuHas(VectorCode code) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  switch (code) {
    case VectorCode::kAvx512:
      return __builtin_cpu_supports("avx512f");
    case VectorCode::kAvx2:
      return __builtin_cpu_supports("avx2");
    case VectorCode::kBaseline:
      return true;
  }
#endif
  return code == VectorCode::kBaseline;
}

std::atomic<VectorCode>& ChosenCode() {
  static std::atomic<VectorCode> code(CpuHas(VectorCode::kAvx512) ? VectorCode::kAvx512
                                      : CpuHas(VectorCode::kAvx2) ? VectorCode::kAvx2
                                                                  : VectorCode::kBaseline);
  return code;
}

template <typename T>
LaneCode<T> PickLaneCode() {
#if defined(__x86_64__)
  switch (ChosenCode().load()) {
    case VectorCode::kAvx512:
      return LaneCodeAvx512<T>();
    case VectorCode::kAvx2:
      return LaneCodeAvx2<T>();
    case VectorCode::kBaseline:
      break;
  }
#endif
  return LaneCodeBaseline<T>();
}

// The transform of a line of length n in one direction: one line at a time
// (Run), or Lanes<T>::kCount lines at once (RunLanes).
template <typename T>
class LinePlan {
 public:
  using C = std::complex<T>;

  LinePlan(int64_t n, int sign)
      : n_(n), sign_(sign), factors_(Radices(n)), lane_code_(PickLaneCode<T>()) {
    twiddles_.resize(n);
    for (int64_t j = 0; j < n; ++j) twiddles_[j] = Twiddle<T>(sign, j, n);
    for (int64_t p : factors_) largest_ = std::max(largest_, p);
    // A line with a chirp goes by Bluestein's algorithm, never as a matrix.
    if (largest_ > kMaxDirectPrime) {
      MakeChirp();
      return;
    }
    // The split n = n1 n2 nearest a square with both sides a full group.
    constexpr int64_t kCount = Lanes<T>::kCount;
    if (n >= kMinSplit) {
      int64_t best = 0;
      for (int64_t d = kCount; d * kCount <= n; ++d) {
        if (n % d != 0) continue;
        if (best == 0 || std::abs(static_cast<double>(d) - std::sqrt(static_cast<double>(n))) <
                             std::abs(static_cast<double>(best) - std::sqrt(static_cast<double>(n)))) {
          best = d;
        }
      }
      if (best != 0) {
        columns_ = std::make_unique<LinePlan>(best, sign);
        rows_ = std::make_unique<LinePlan>(n / best, sign);
      }
    }
  }

  // Lines with a prime factor above kMaxDirectPrime (kMaxLanesPrime in the
  // lanes), whose butterflies cost O(p) per output, go by Bluestein's
  // algorithm: X[k] = c_k sum_j (x_j c_j) conj(c_(k-j)), c_j = W_2n^(j^2),
  // a cyclic convolution of power-of-two length m >= 2n - 1.
  static constexpr int64_t kMaxDirectPrime = 64;
  static constexpr int64_t kMaxLanesPrime = 1024;
  struct Chirp {
    std::unique_ptr<LinePlan> forward, inverse;  // length m
    std::vector<C> c;                            // c_j, j < n
    std::vector<C> kernel;  // the forward transform of conj(c_l), l in (-n, n) mod m, over m
  };
  const Chirp* chirp() const { return chirp_.get(); }

  // Lines at least this long are transformed as matrices (FourStep) where
  // too few of them fill the lanes.
  static constexpr int64_t kMinSplit = 1024;
  // The plans for a long line as an n1 x n2 matrix (columns: length n1,
  // rows: length n2), or null where n is short or splits no such way.
  const LinePlan* columns() const { return columns_.get(); }
  const LinePlan* rows() const { return rows_.get(); }
  const C* twiddles() const { return twiddles_.data(); }

  int64_t length() const { return n_; }
  // Scratch `Run` needs: 2 * the largest factor; RunLanes: the largest factor.
  int64_t scratch() const { return 2 * largest_; }

  // out[0, n) = the transform of in[0], in[stride], ..., in[(n - 1) stride].
  void Run(const C* in, int64_t stride, C* out, C* scratch) const {
    if (n_ == 0) return;
    Step(in, stride, out, n_, 0, 1, scratch);
  }

  // Transforms Lanes<T>::kCount lines, line v from in + v n to out + v n
  // (in == out is fine); a and b (n each) and scratch (scratch() elements)
  // are work space.
  void RunLanes(const C* in, C* out, LaneComplex<T>* a, LaneComplex<T>* b,
                LaneComplex<T>* scratch) const {
    lane_code_.transform(Call(), in, out, a, b, scratch);
  }
  // Transforms kCount neighbouring columns in place, column v at
  // data + j stride + v.
  void RunColumnLanes(C* data, int64_t stride, LaneComplex<T>* a, LaneComplex<T>* b,
                      LaneComplex<T>* scratch) const {
    LaneCall<T> call = Call();
    call.stride = stride;
    lane_code_.columns(call, data, data, a, b, scratch);
  }
  // The same for the real transforms of length 2 n (RealForwardInLanes,
  // RealInverseInLanes): twiddles W_2n^(sign k), k <= n; a and b hold n + 1.
  void RunRealForwardLanes(const C* twiddles, const C* in, C* out, LaneComplex<T>* a,
                           LaneComplex<T>* b, LaneComplex<T>* scratch) const {
    LaneCall<T> call = Call();
    call.real_twiddles = twiddles;
    lane_code_.real_forward(call, in, out, a, b, scratch);
  }
  void RunRealInverseLanes(const C* twiddles, T scale, const C* in, C* out, LaneComplex<T>* a,
                           LaneComplex<T>* b, LaneComplex<T>* scratch) const {
    LaneCall<T> call = Call();
    call.real_twiddles = twiddles;
    call.scale = scale;
    lane_code_.real_inverse(call, in, out, a, b, scratch);
  }
  // Whether groups of lines go in the lanes (else line by line).
  bool lanes() const { return chirp_ == nullptr || largest_ <= kMaxLanesPrime; }

 private:
  LaneCall<T> Call() const {
    LaneCall<T> call;
    call.tables = StageTables<T>{n_, sign_, &factors_, twiddles_.data()};
    return call;
  }

  // out[0, n) = the length-n transform of in[0], in[s], ...; its twiddles
  // are every `step`-th of the plan's.
  void Step(const C* in, int64_t s, C* out, int64_t n, size_t f, int64_t step, C* scratch) const {
    if (n == 1) {
      out[0] = in[0];
      return;
    }
    const int64_t p = factors_[f];
    const int64_t m = n / p;
    if (m == 1) {
      for (int64_t r = 0; r < p; ++r) out[r] = in[r * s];
    } else {
      for (int64_t r = 0; r < p; ++r) {
        Step(in + r * s, s * p, out + r * m, m, f + 1, step * p, scratch);
      }
    }
    const C* w = twiddles_.data();
    if (p == 2) {
      for (int64_t k = 0; k < m; ++k) {
        const C a = out[k];
        const C b = Mul(out[m + k], w[k * step]);
        out[k] = a + b;
        out[m + k] = a - b;
      }
      return;
    }
    if (p == 4) {
      for (int64_t k = 0; k < m; ++k) {
        const C t0 = out[k];
        const C t1 = Mul(out[m + k], w[k * step]);
        const C t2 = Mul(out[2 * m + k], w[2 * k * step]);
        const C t3 = Mul(out[3 * m + k], w[3 * k * step]);
        const C a = t0 + t2, b = t0 - t2, c = t1 + t3, e = t1 - t3;
        // (sign i) e
        const C d = sign_ > 0 ? C(-e.imag(), e.real()) : C(e.imag(), -e.real());
        out[k] = a + c;
        out[m + k] = b + d;
        out[2 * m + k] = a - c;
        out[3 * m + k] = b - d;
      }
      return;
    }
    // Any p: X[k + m q] = sum_r (Y_r[k] W_n^{r k}) W_p^{r q}.
    C* t = scratch;
    C* x = scratch + p;
    const int64_t root = m * step;  // W_p^1 is twiddle `root`.
    for (int64_t k = 0; k < m; ++k) {
      for (int64_t r = 0; r < p; ++r) t[r] = Mul(out[r * m + k], w[r * k * step]);
      for (int64_t q = 0; q < p; ++q) {
        C acc = t[0];
        for (int64_t r = 1; r < p; ++r) acc += Mul(t[r], w[((r * q) % p) * root]);
        x[q] = acc;
      }
      for (int64_t q = 0; q < p; ++q) out[q * m + k] = x[q];
    }
  }

  int64_t n_;
  int sign_;
  int64_t largest_ = 1;
  std::vector<int64_t> factors_;
  std::vector<C> twiddles_;
  LaneCode<T> lane_code_;
  std::unique_ptr<LinePlan> columns_, rows_;
  std::unique_ptr<Chirp> chirp_;

  void MakeChirp() {
    int64_t m = 1;
    while (m < 2 * n_ - 1) m *= 2;
    auto chirp = std::make_unique<Chirp>();
    chirp->forward = std::make_unique<LinePlan>(m, -1);
    chirp->inverse = std::make_unique<LinePlan>(m, 1);
    chirp->c.resize(n_);
    for (int64_t j = 0; j < n_; ++j) {
      // j^2 mod 2n keeps the angle exact for long lines.
      const int64_t square = static_cast<int64_t>((static_cast<unsigned __int128>(j) * j) %
                                                   static_cast<unsigned __int128>(2 * n_));
      const double angle = sign_ * M_PI * static_cast<double>(square) / static_cast<double>(n_);
      chirp->c[j] = C(static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle)));
    }
    std::vector<C> b(m, C(0, 0)), scratch(chirp->forward->scratch());
    b[0] = std::conj(chirp->c[0]);
    for (int64_t l = 1; l < n_; ++l) b[l] = b[m - l] = std::conj(chirp->c[l]);
    chirp->kernel.resize(m);
    chirp->forward->Run(b.data(), 1, chirp->kernel.data(), scratch.data());
    for (C& k : chirp->kernel) k *= static_cast<T>(1.0 / static_cast<double>(m));
    chirp_ = std::move(chirp);
  }
};

template <typename T>
void TransformAxis(std::complex<T>* data, const std::vector<int64_t>& dims, size_t axis,
                   const LinePlan<T>& plan, runtime::ThreadPool* pool);

// result = the transform of line (clobbered) as an n1 x n2 matrix, x[n2 j1 +
// j2]: its n2 columns transformed (length n1), times W_n^(j2 k1), its n1 rows
// transformed (length n2), read transposed: X[k1 + n1 k2] = Z[k1][k2]. Both
// transforms have enough lines for the lanes.
template <typename T>
void FourStep(const LinePlan<T>& plan, std::complex<T>* line, std::complex<T>* result,
              runtime::ThreadPool* pool);

// Bluestein's two length-m arrays, kept from line to line by a caller that
// transforms many (each would otherwise be allocated, and paged in, anew).
template <typename T>
struct ChirpWork {
  std::vector<std::complex<T>> a, spectrum;
};

// result = the transform of one line (clobbered): by Bluestein's algorithm
// where the plan has a chirp, as a matrix where it splits, else directly.
// pool, where given, spreads the matrix steps; work, where given, holds
// Bluestein's arrays.
template <typename T>
void TransformLine(const LinePlan<T>& plan, std::complex<T>* line, std::complex<T>* result,
                   runtime::ThreadPool* pool, ChirpWork<T>* work = nullptr) {
  using C = std::complex<T>;
  const int64_t n = plan.length();
  if (const typename LinePlan<T>::Chirp* chirp = plan.chirp()) {
    const int64_t m = chirp->forward->length();
    ChirpWork<T> local;
    ChirpWork<T>& w = work != nullptr ? *work : local;
    std::vector<C>& a = w.a;
    std::vector<C>& spectrum = w.spectrum;
    a.assign(m, C(0, 0));
    spectrum.resize(m);
    for (int64_t j = 0; j < n; ++j) a[j] = Mul(line[j], chirp->c[j]);
    TransformLine(*chirp->forward, a.data(), spectrum.data(), pool);
    for (int64_t i = 0; i < m; ++i) spectrum[i] = Mul(spectrum[i], chirp->kernel[i]);
    TransformLine(*chirp->inverse, spectrum.data(), a.data(), pool);
    for (int64_t k = 0; k < n; ++k) result[k] = Mul(a[k], chirp->c[k]);
  } else if (plan.columns() != nullptr) {
    FourStep(plan, line, result, pool);
  } else {
    std::vector<C> scratch(plan.scratch());
    plan.Run(line, 1, result, scratch.data());
  }
}

template <typename T>
void FourStep(const LinePlan<T>& plan, std::complex<T>* line, std::complex<T>* result,
              runtime::ThreadPool* pool) {
  const int64_t n1 = plan.columns()->length(), n2 = plan.rows()->length();
  const std::vector<int64_t> dims = {n1, n2};
  TransformAxis(line, dims, 0, *plan.columns(), pool);
  const std::complex<T>* w = plan.twiddles();
  for (int64_t k1 = 1; k1 < n1; ++k1) {
    for (int64_t j2 = 1; j2 < n2; ++j2) line[k1 * n2 + j2] = Mul(line[k1 * n2 + j2], w[j2 * k1]);
  }
  TransformAxis(line, dims, 1, *plan.rows(), pool);
  for (int64_t k1 = 0; k1 < n1; ++k1) {
    for (int64_t k2 = 0; k2 < n2; ++k2) result[k1 + n1 * k2] = line[k1 * n2 + k2];
  }
}

// One task's work arrays for lane transforms: a and b of `buffer` lane
// complexes, scratch of `scratch_size`, and `staging` complex elements for
// lines copied in or out. Left uninitialized: every element is written
// before it is read.
template <typename T>
struct LaneWork {
  LaneWork(int64_t buffer, int64_t scratch_size, int64_t staging_size)
      : a(new LaneComplex<T>[buffer]), b(new LaneComplex<T>[buffer]),
        scratch(new LaneComplex<T>[scratch_size]),
        staging_storage(new T[2 * std::max<int64_t>(staging_size, 1)]),
        staging(reinterpret_cast<std::complex<T>*>(staging_storage.get())) {}
  std::unique_ptr<LaneComplex<T>[]> a, b, scratch;
  // As T pairs: new std::complex<T>[] would zero every element first.
  std::unique_ptr<T[]> staging_storage;
  std::complex<T>* staging;
};

// Calls body(group, work) for every group in [0, groups), split over the
// pool in tasks of at least 16,384 complex elements (`per_group` each), each
// task with its own LaneWork.
template <typename T, typename Body>
void ForEachLaneGroup(int64_t groups, int64_t per_group, int64_t buffer, int64_t scratch_size,
                      int64_t staging_size, runtime::ThreadPool* pool, const Body& body) {
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, per_group));
  runtime::ParallelForOrInline(pool, groups, grain, [&](int64_t begin, int64_t end) {
    LaneWork<T> work(buffer, scratch_size, staging_size);
    for (int64_t group = begin; group < end; ++group) body(group, work);
  });
}

// Transforms `lines` lines with `plan`: load(l, x) fills x[0, n) with line
// l's input, store(l, y) takes its transform y[0, n). Where the inputs lie
// side by side at `source` (line l at source + l n), full groups read them
// there instead of through load; where the transforms go side by side to
// `target`, full groups write them there instead of through store. Groups of
// Lanes<T>::kCount lines run in the vector lanes; a handful of lines runs
// one at a time. Lines are split over the pool with enough work per task to
// be worth a thread.
template <typename T>
void ForEachLine(int64_t lines, const LinePlan<T>& plan, runtime::ThreadPool* pool,
                 const std::function<void(int64_t, std::complex<T>*)>& load,
                 const std::function<void(int64_t, const std::complex<T>*)>& store,
                 const std::complex<T>* source = nullptr, std::complex<T>* target = nullptr) {
  using C = std::complex<T>;
  constexpr int kCount = Lanes<T>::kCount;
  const int64_t n = plan.length();
  if (lines <= 0 || n <= 0) return;
  const bool chirp = plan.chirp() != nullptr;
  const bool in_lanes = lines >= kCount / 2 && plan.lanes();
  if (!in_lanes && (chirp || plan.columns() != nullptr)) {
    // Line by line (Bluestein or four steps): many lines split over the
    // pool, a few one after another, each spread over the pool.
    auto task = [&](int64_t begin, int64_t end, runtime::ThreadPool* inner) {
      std::vector<C> line(n), result(n);
      ChirpWork<T> work;
      for (int64_t l = begin; l < end; ++l) {
        load(l, line.data());
        TransformLine(plan, line.data(), result.data(), inner, &work);
        store(l, result.data());
      }
    };
    if (pool != nullptr && lines >= kCount / 2) {
      pool->ParallelFor(lines, 1, [&](int64_t begin, int64_t end) { task(begin, end, nullptr); });
    } else {
      task(0, lines, pool);
    }
    return;
  }
  if (!in_lanes) {
    runtime::ParallelForOrInline(pool, lines, std::max<int64_t>(1, 16384 / n),
                                 [&](int64_t begin, int64_t end) {
      std::vector<C> line(n), result(n), scratch(plan.scratch());
      for (int64_t l = begin; l < end; ++l) {
        load(l, line.data());
        plan.Run(line.data(), 1, result.data(), scratch.data());
        store(l, result.data());
      }
    });
    return;
  }
  // A group's lines are staged side by side, line v at v n; the unused
  // lines of a partial group are zeros.
  ForEachLaneGroup<T>((lines + kCount - 1) / kCount, n * kCount, n, plan.scratch(), n * kCount,
                      pool, [&](int64_t group, LaneWork<T>& work) {
    const int64_t first = group * kCount;
    const int active = static_cast<int>(std::min<int64_t>(kCount, lines - first));
    const bool full = active == kCount;
    C* group_lines = work.staging;
    const C* in = group_lines;
    if (full && source != nullptr) {
      in = source + first * n;
    } else {
      for (int v = 0; v < active; ++v) load(first + v, group_lines + v * n);
      std::fill(group_lines + active * n, group_lines + kCount * n, C(0, 0));
    }
    if (full && target != nullptr) {
      plan.RunLanes(in, target + first * n, work.a.get(), work.b.get(), work.scratch.get());
      return;
    }
    plan.RunLanes(in, group_lines, work.a.get(), work.b.get(), work.scratch.get());
    for (int v = 0; v < active; ++v) store(first + v, group_lines + v * n);
  });
}

// Runs `run` (a LinePlan lane call: in, out, a, b, scratch) over the
// groups of `rows` rows, row r's input at in + r in_row and its output at
// out + r out_row (complex elements); a and b hold `buffer`. A partial last
// group goes through zero-padded copies.
template <typename T>
void ForEachGroup(int64_t rows, int64_t in_row, int64_t out_row, int64_t buffer,
                  int64_t scratch_size, const std::complex<T>* in, std::complex<T>* out,
                  runtime::ThreadPool* pool,
                  const std::function<void(const std::complex<T>*, std::complex<T>*,
                                           LaneComplex<T>*, LaneComplex<T>*, LaneComplex<T>*)>& run) {
  using C = std::complex<T>;
  constexpr int kCount = Lanes<T>::kCount;
  const int64_t groups = (rows + kCount - 1) / kCount;
  // A partial last group goes through zero-padded copies in the staging.
  const int64_t staged_in = kCount * in_row, staged_out = kCount * out_row;
  ForEachLaneGroup<T>(groups, std::max(in_row, out_row) * kCount, buffer, scratch_size,
                      staged_in + staged_out, pool, [&](int64_t group, LaneWork<T>& work) {
    const int64_t first = group * kCount;
    const int64_t active = std::min<int64_t>(kCount, rows - first);
    if (active == kCount) {
      run(in + first * in_row, out + first * out_row, work.a.get(), work.b.get(),
          work.scratch.get());
      return;
    }
    C* staged = work.staging;
    std::fill(staged, staged + staged_in, C(0, 0));
    std::copy(in + first * in_row, in + (first + active) * in_row, staged);
    run(staged, staged + staged_in, work.a.get(), work.b.get(), work.scratch.get());
    std::copy(staged + staged_in, staged + staged_in + active * out_row, out + first * out_row);
  });
}

// Transforms `data` (dims, row-major) along `axis` in place.
template <typename T>
void TransformAxis(std::complex<T>* data, const std::vector<int64_t>& dims, size_t axis,
                   const LinePlan<T>& plan, runtime::ThreadPool* pool) {
  using C = std::complex<T>;
  const int64_t n = dims[axis];
  int64_t inner = 1, outer = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  for (size_t d = 0; d < axis; ++d) outer *= dims[d];
  if (n <= 1) return;
  constexpr int kCount = Lanes<T>::kCount;
  if (inner % kCount == 0 && plan.lanes()) {
    // Columns kCount at a time, each group's elements neighbours in memory.
    const int64_t per_block = inner / kCount;
    ForEachLaneGroup<T>(outer * per_block, n * kCount, n, plan.scratch(), 0, pool,
                        [&](int64_t g, LaneWork<T>& work) {
      C* first = data + (g / per_block) * n * inner + (g % per_block) * kCount;
      plan.RunColumnLanes(first, inner, work.a.get(), work.b.get(), work.scratch.get());
    });
    return;
  }
  auto base = [&](int64_t l) { return data + (l / inner) * n * inner + (l % inner); };
  ForEachLine<T>(
      outer * inner, plan, pool,
      [&](int64_t l, C* x) {
        const C* line = base(l);
        for (int64_t j = 0; j < n; ++j) x[j] = line[j * inner];
      },
      [&](int64_t l, const C* y) {
        C* line = base(l);
        for (int64_t j = 0; j < n; ++j) line[j * inner] = y[j];
      },
      inner == 1 ? data : nullptr, inner == 1 ? data : nullptr);
}

template <typename T>
void Scale(std::complex<T>* data, int64_t count, double factor) {
  const T f = static_cast<T>(factor);
  for (int64_t i = 0; i < count; ++i) data[i] *= f;
}

// An even-length real transform as a complex one of half the length:
// z[j] = x[2j] + i x[2j+1] and Z = FFT_h(z) give the even and odd samples'
// spectra E[k] = (Z[k] + conj Z[h-k]) / 2 and O[k] = (Z[k] - conj Z[h-k]) / 2i,
// and X[k] = E[k] + W_n^k O[k] for k = 0..h. The inverse runs it backwards:
// E[k] = (X[k] + conj X[h-k]) / 2, O[k] = (X[k] - conj X[h-k]) W_n^-k / 2,
// z = IFFT_h(E + i O) (unscaled: times 2 / n).
template <typename T>
struct HalfLength {
  HalfLength(int64_t n, int sign) : plan(n / 2, sign), twiddles(n / 2 + 1) {
    for (int64_t k = 0; k <= n / 2; ++k) twiddles[k] = Twiddle<T>(sign, k, n);
  }
  LinePlan<T> plan;
  std::vector<std::complex<T>> twiddles;  // W_n^(sign k), k = 0..h
};

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

template <typename T>
absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeTyped(
    xla::FftType type, const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
    const std::vector<int64_t>& lengths) {
  using C = std::complex<T>;
  using Plans = std::vector<std::shared_ptr<const LinePlan<T>>>;
  const size_t rank = in_dims.size();
  const size_t first = rank - lengths.size();
  const int sign = type == xla::FFT || type == xla::RFFT ? -1 : 1;
  Plans plans;
  for (int64_t n : lengths) plans.push_back(std::make_shared<LinePlan<T>>(n, sign));
  double count = 1;
  for (int64_t n : lengths) count *= static_cast<double>(n);
  const double scale = count > 0 ? 1 / count : 1;
  const int64_t in_count = Product(in_dims), out_count = Product(out_dims);
  using Function = runtime::LibraryCallThunk::Function;
  // RFFT and IRFFT of an even length go through a half-length transform.
  std::shared_ptr<const HalfLength<T>> halved;
  if ((type == xla::RFFT || type == xla::IRFFT) && lengths.back() >= 2 && lengths.back() % 2 == 0) {
    halved = std::make_shared<HalfLength<T>>(lengths.back(), sign);
  }

  if (type == xla::FFT || type == xla::IFFT) {
    return std::optional<Function>(
        [=](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
          C* out = static_cast<C*>(buffers[1]);
          if (buffers[0] != buffers[1] && in_count > 0) {
            std::memcpy(out, buffers[0], in_count * sizeof(C));
          }
          for (size_t k = 0; k < plans.size(); ++k)
            TransformAxis(out, out_dims, first + k, *plans[k], pool);
          if (type == xla::IFFT) Scale(out, out_count, scale);
          return absl::OkStatus();
        });
  }
  if (type == xla::RFFT) {
    return std::optional<Function>(
        [=](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
          const T* in = static_cast<const T*>(buffers[0]);
          C* out = static_cast<C*>(buffers[1]);
          const LinePlan<T>& last = *plans.back();
          const int64_t n = last.length(), half = out_dims.back();
          const int64_t rows = n == 0 ? 0 : in_count / n;
          if (halved == nullptr) {
            ForEachLine<T>(
                rows, last, pool,
                [&](int64_t r, C* x) {
                  for (int64_t j = 0; j < n; ++j) x[j] = C(in[r * n + j], 0);
                },
                [&](int64_t r, const C* y) { std::memcpy(out + r * half, y, half * sizeof(C)); });
          } else if (rows >= Lanes<T>::kCount / 2 && halved->plan.lanes()) {
            const int64_t h = n / 2;
            const LinePlan<T>& plan = halved->plan;
            ForEachGroup<T>(rows, h, half, h + 1, plan.scratch(), reinterpret_cast<const C*>(in),
                            out, pool,
                            [&](const C* z, C* x, LaneComplex<T>* a, LaneComplex<T>* b,
                                LaneComplex<T>* scratch) {
                              plan.RunRealForwardLanes(halved->twiddles.data(), z, x, a, b,
                                                       scratch);
                            });
          } else {
            const int64_t h = n / 2;
            ForEachLine<T>(
                rows, halved->plan, pool,
                [&](int64_t r, C* z) {
                  for (int64_t j = 0; j < h; ++j) z[j] = C(in[r * n + 2 * j], in[r * n + 2 * j + 1]);
                },
                [&](int64_t r, const C* z) {
                  // X[k] = (a + b) / 2 + W_n^k (a - b) / 2i, a = Z[k], b = conj Z[h - k]
                  // (indices mod h).
                  C* x = out + r * half;
                  const C* w = halved->twiddles.data();
                  for (int64_t k = 0; k <= h; ++k) {
                    const C a = z[k == h ? 0 : k], b = z[k == 0 ? 0 : h - k];
                    const T even_re = (a.real() + b.real()) * static_cast<T>(0.5);
                    const T even_im = (a.imag() - b.imag()) * static_cast<T>(0.5);
                    const T odd_re = (a.imag() + b.imag()) * static_cast<T>(0.5);
                    const T odd_im = (b.real() - a.real()) * static_cast<T>(0.5);
                    x[k] = C(even_re + w[k].real() * odd_re - w[k].imag() * odd_im,
                             even_im + w[k].real() * odd_im + w[k].imag() * odd_re);
                  }
                },
                // Row r read as h complex numbers is z.
                reinterpret_cast<const C*>(in));
          }
          for (size_t k = 0; k + 1 < plans.size(); ++k) {
            TransformAxis(out, out_dims, first + k, *plans[k], pool);
          }
          return absl::OkStatus();
        });
  }
  // IRFFT.
  return std::optional<Function>(
      [=](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
        // The leading fft dimensions are inverted on a copy.
        const C* spectrum = static_cast<const C*>(buffers[0]);
        std::vector<C> copy;
        if (plans.size() > 1) {
          copy.assign(spectrum, spectrum + in_count);
          for (size_t k = 0; k + 1 < plans.size(); ++k) {
            TransformAxis(copy.data(), in_dims, first + k, *plans[k], pool);
          }
          spectrum = copy.data();
        }
        T* out = static_cast<T*>(buffers[1]);
        const LinePlan<T>& last = *plans.back();
        const int64_t n = last.length(), half = in_dims.back();
        const int64_t rows = half == 0 ? 0 : in_count / half;
        if (halved == nullptr) {
          ForEachLine<T>(
              rows, last, pool,
              [&](int64_t r, C* full) {
                const C* x = spectrum + r * half;
                for (int64_t k = 0; k < n; ++k) full[k] = k < half ? x[k] : std::conj(x[n - k]);
              },
              [&](int64_t r, const C* y) {
                for (int64_t j = 0; j < n; ++j) out[r * n + j] = static_cast<T>(y[j].real() * scale);
              });
        } else if (rows >= Lanes<T>::kCount / 2 && halved->plan.lanes()) {
          const int64_t h = n / 2;
          const LinePlan<T>& plan = halved->plan;
          ForEachGroup<T>(rows, half, h, h + 1, plan.scratch(), spectrum, reinterpret_cast<C*>(out),
                          pool,
                          [&](const C* x, C* z, LaneComplex<T>* a, LaneComplex<T>* b,
                              LaneComplex<T>* scratch) {
                            plan.RunRealInverseLanes(halved->twiddles.data(),
                                                     static_cast<T>(scale), x, z, a, b, scratch);
                          });
        } else {
          const int64_t h = n / 2;
          const T factor = static_cast<T>(scale);
          ForEachLine<T>(
              rows, halved->plan, pool,
              [&](int64_t r, C* packed) {
                // E + i O with E = (a + conj b) / 2, O = (a - conj b) W_n^-k / 2,
                // a = X[k], b = X[h - k], times 2 / n (the inverse's scale):
                // the imaginary parts of X[0] and X[h] count for nothing.
                const C* x = spectrum + r * half;
                const C* w = halved->twiddles.data();
                for (int64_t k = 0; k < h; ++k) {
                  const T a_re = x[k].real(), a_im = k == 0 ? 0 : x[k].imag();
                  const T b_re = x[h - k].real(), b_im = k == 0 ? 0 : x[h - k].imag();
                  const T d_re = a_re - b_re, d_im = a_im + b_im;
                  packed[k] = C((a_re + b_re - (d_re * w[k].imag() + d_im * w[k].real())) * factor,
                                (a_im - b_im + (d_re * w[k].real() - d_im * w[k].imag())) * factor);
                }
              },
              [&](int64_t r, const C* z) {
                std::memcpy(static_cast<void*>(out + r * n), z, h * sizeof(C));
              },
              nullptr,
              // Row r of the output read as h complex numbers is z.
              reinterpret_cast<C*>(out));
        }
        return absl::OkStatus();
      });
}

}  // namespace

bool SetFftVectorCodeForTesting(const std::string& kind) {
  VectorCode code;
  if (kind == "avx512") {
    code = VectorCode::kAvx512;
  } else if (kind == "avx2") {
    code = VectorCode::kAvx2;
  } else if (kind == "baseline") {
    code = VectorCode::kBaseline;
  } else {
    return false;
  }
  if (!CpuHas(code)) return false;
  ChosenCode().store(code);
  return true;
}

absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeFft(
    const HloInstruction& hlo) {
  using Result = std::optional<runtime::LibraryCallThunk::Function>;
  if (hlo.opcode() != HloOpcode::kFft || hlo.operand_count() != 1 || !hlo.shape().IsArray() ||
      !hlo.operand(0)->shape().IsArray()) {
    return Result();
  }
  const Shape& in = hlo.operand(0)->shape();
  const Shape& out = hlo.shape();
  const std::vector<int64_t>& lengths = hlo.attrs().fft_length;
  if (!in.is_static() || !out.is_static() || lengths.empty() ||
      lengths.size() > in.dimensions().size() ||
      in.dimensions().size() != out.dimensions().size()) {
    return Result();
  }
  const xla::FftType type = hlo.attrs().fft_type;
  const size_t first = in.dimensions().size() - lengths.size();
  for (size_t k = 0; k < lengths.size(); ++k) {
    const int64_t d = first + k;
    const bool last = k + 1 == lengths.size();
    const int64_t in_n = in.dimensions(d), out_n = out.dimensions(d);
    const bool fits = !last || type == xla::FFT || type == xla::IFFT
                          ? in_n == lengths[k] && out_n == lengths[k]
                      : type == xla::RFFT ? in_n == lengths[k] && out_n == lengths[k] / 2 + 1
                                          : out_n == lengths[k] && in_n == lengths[k] / 2 + 1;
    if (!fits) return Result();
  }
  const PrimitiveType from = in.element_type(), to = out.element_type();
  const bool complex_to_complex = type == xla::FFT || type == xla::IFFT;
  if (complex_to_complex && from == xla::C64 && to == xla::C64) {
    return MakeTyped<float>(type, in.dimensions(), out.dimensions(), lengths);
  }
  if (complex_to_complex && from == xla::C128 && to == xla::C128) {
    return MakeTyped<double>(type, in.dimensions(), out.dimensions(), lengths);
  }
  if (type == xla::RFFT && from == xla::F32 && to == xla::C64) {
    return MakeTyped<float>(type, in.dimensions(), out.dimensions(), lengths);
  }
  if (type == xla::RFFT && from == xla::F64 && to == xla::C128) {
    return MakeTyped<double>(type, in.dimensions(), out.dimensions(), lengths);
  }
  if (type == xla::IRFFT && from == xla::C64 && to == xla::F32) {
    return MakeTyped<float>(type, in.dimensions(), out.dimensions(), lengths);
  }
  if (type == xla::IRFFT && from == xla::C128 && to == xla::F64) {
    return MakeTyped<double>(type, in.dimensions(), out.dimensions(), lengths);
  }
  return Result();
}

}  // namespace host
}  // namespace hloc
