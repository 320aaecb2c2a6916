// float -> f16 rounding (nearest, ties to even) with integer bit operations:
// the evaluator's hot-path replacement for hloc::FloatToHalf, which goes
// through double and frexp. Same results; NaN becomes the quiet NaN 0x7e00
// with the input's sign, as FloatToHalf does.
#ifndef HLOC_HLO_EVALUATOR_FAST_HALF_H_
#define HLOC_HLO_EVALUATOR_FAST_HALF_H_

#include <cmath>
#include <cstdint>
#include <cstring>

namespace hloc {
namespace eval {

inline uint16_t FastFloatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00;   // NaN
  if (magnitude >= 0x477ff000u) return sign | 0x7c00;  // >= 65520 (and inf) -> inf
  if (magnitude < 0x38800000u) {
    // Below 2^-14: a subnormal half in units of 2^-24 (exact scaling).
    float a;
    std::memcpy(&a, &magnitude, 4);
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  // Rebias the exponent (127 -> 15) and round 23 mantissa bits to 10.
  const uint32_t rebased = magnitude - 0x38000000u;
  const uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
  return sign | static_cast<uint16_t>(rounded >> 13);
}

}  // namespace eval
}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_FAST_HALF_H_
