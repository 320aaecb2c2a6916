#include "backend/host/gelu_epilogue.h"

#include <cmath>
#include <cstring>

namespace hloc {
namespace host {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;
// exp's argument is clamped here: beyond it exp(-2u) overflows (x < ~-9.5,
// where GELU is below 1e-30 in magnitude) or is 0 to float precision.
constexpr float kExpLimit = 88.0f;

float GeluScalar(float x) {
  const float u = kSqrt2OverPi * (x + kCubic * x * x * x);
  const float t = std::fmin(std::fmax(-2.0f * u, -kExpLimit), kExpLimit);
  return x / (1.0f + std::exp(t));
}

// Unaligned, aliasing float: loads and stores through it are single vmovups
// (a memcpy through a stack temporary made GCC store two halves and load
// the whole, a store-forwarding stall per vector).
typedef float V8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int I8 __attribute__((vector_size(32), aligned(4)));

// exp(t) for t in [-88, 88]: t = n*ln2 + r with |r| <= ln2/2, e^r by its
// Taylor polynomial to degree 7 (error < 2e-8 relative on that interval),
// times 2^n built in the exponent field.
__attribute__((target("avx2,fma"))) inline V8 Exp8(V8 t) {
  const V8 n = __builtin_ia32_roundps256(t * 1.4426950408889634f, 0);  // nearest
  V8 r = t - n * 0.693145751953125f;   // ln2's high bits (exact product)
  r = r - n * 1.428606765330187e-06f;  // and the rest
  V8 p = r * (1.0f / 5040) + (1.0f / 720);
  p = p * r + (1.0f / 120);
  p = p * r + (1.0f / 24);
  p = p * r + (1.0f / 6);
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const I8 bits = (__builtin_convertvector(n, I8) + 127) << 23;
  V8 scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

__attribute__((target("avx2,fma"))) void GeluAvx2(float* data, int64_t count) {
  const V8 lo = V8{} - kExpLimit, hi = V8{} + kExpLimit;
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const V8 x = *reinterpret_cast<const V8*>(data + i);
    const V8 u = kSqrt2OverPi * (x + kCubic * x * x * x);
    V8 t = -2.0f * u;
    t = t < lo ? lo : t;
    t = t > hi ? hi : t;
    const V8 y = x / (1.0f + Exp8(t));
    *reinterpret_cast<V8*>(data + i) = y;
  }
  for (; i < count; ++i) data[i] = GeluScalar(data[i]);
}

}  // namespace

void GeluTanhInPlace(float* data, int64_t count) {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2) {
    GeluAvx2(data, count);
    return;
  }
  for (int64_t i = 0; i < count; ++i) data[i] = GeluScalar(data[i]);
}

}  // namespace host
}  // namespace hloc
