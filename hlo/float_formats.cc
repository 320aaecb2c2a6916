#include "hlo/float_formats.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace hloc {
namespace {

// A binary floating-point format described by its fields. `ieee` formats have
// inf and NaN at the top exponent; `fn` formats have no inf and only the
// all-ones pattern as NaN; `fnuz` formats have no inf, no -0, and 0x80 is NaN;
// `finite only` formats (f4/f6) have neither inf nor NaN.
struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  enum Kind { kIeee, kFiniteAllOnesNan, kFnuz, kFiniteOnly, kE8M0 } kind;
};

FloatFormat FormatOf(PrimitiveType type) {
  switch (type) {
    case xla::F16: return {5, 10, 15, FloatFormat::kIeee};
    case xla::BF16: return {8, 7, 127, FloatFormat::kIeee};
    case xla::F8E5M2: return {5, 2, 15, FloatFormat::kIeee};
    case xla::F8E4M3: return {4, 3, 7, FloatFormat::kIeee};
    case xla::F8E3M4: return {3, 4, 3, FloatFormat::kIeee};
    case xla::F8E4M3FN: return {4, 3, 7, FloatFormat::kFiniteAllOnesNan};
    case xla::F8E4M3FNUZ: return {4, 3, 8, FloatFormat::kFnuz};
    case xla::F8E5M2FNUZ: return {5, 2, 16, FloatFormat::kFnuz};
    case xla::F8E4M3B11FNUZ: return {4, 3, 11, FloatFormat::kFnuz};
    case xla::F4E2M1FN: return {2, 1, 1, FloatFormat::kFiniteOnly};
    case xla::F8E8M0FNU: return {8, 0, 127, FloatFormat::kE8M0};
    case xla::F6E3M2FN: return {3, 2, 3, FloatFormat::kFiniteOnly};
    case xla::F6E2M3FN: return {2, 3, 1, FloatFormat::kFiniteOnly};
    default: return {8, 23, 127, FloatFormat::kIeee};
  }
}

int TotalBits(const FloatFormat& f) {
  return (f.kind == FloatFormat::kE8M0 ? 0 : 1) + f.exponent_bits + f.mantissa_bits;
}

double Decode(const FloatFormat& f, uint32_t bits) {
  const int total = TotalBits(f);
  const uint32_t mantissa = bits & ((1u << f.mantissa_bits) - 1);
  const uint32_t exponent = (bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  const bool has_sign = f.kind != FloatFormat::kE8M0;
  const bool negative = has_sign && ((bits >> (total - 1)) & 1);
  const uint32_t max_exponent = (1u << f.exponent_bits) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.kind) {
    case FloatFormat::kIeee:
      if (exponent == max_exponent) {
        if (mantissa != 0) return negative ? -nan : nan;
        return negative ? -INFINITY : INFINITY;
      }
      break;
    case FloatFormat::kFiniteAllOnesNan:
      if (exponent == max_exponent && mantissa == (1u << f.mantissa_bits) - 1) {
        return negative ? -nan : nan;
      }
      break;
    case FloatFormat::kFnuz:
      if (negative && exponent == 0 && mantissa == 0) return nan;
      break;
    case FloatFormat::kE8M0:
      if (bits == 0xff) return nan;
      return std::ldexp(1.0, static_cast<int>(exponent) - f.bias);
    case FloatFormat::kFiniteOnly:
      break;
  }
  double magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa + (1u << f.mantissa_bits)),
                           static_cast<int>(exponent) - f.bias - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

// Encodes by scanning the format's finite codes for the nearest value; ties go
// to the even code. Fine for formats of up to 16 bits used at parse time; the
// f16/bf16 hot paths below use bit tricks instead.
uint32_t EncodeBySearch(const FloatFormat& f, double value) {
  const int total = TotalBits(f);
  const uint32_t count = 1u << total;
  if (std::isnan(value)) {
    for (uint32_t code = 0; code < count; ++code) {
      if (std::isnan(Decode(f, code))) return code;
    }
    return 0;
  }
  uint32_t best = 0;
  double best_error = INFINITY;
  double max_finite = 0;
  uint32_t max_code = 0;
  for (uint32_t code = 0; code < count; ++code) {
    double v = Decode(f, code);
    if (std::isnan(v)) continue;
    if (std::isinf(v)) {
      if (v == value) return code;
      continue;
    }
    if (v > max_finite) {
      max_finite = v;
      max_code = code;
    }
    double error = std::fabs(v - value);
    if (error < best_error || (error == best_error && (code & 1) == 0 && (best & 1) == 1)) {
      // Keep the sign of zero.
      if (v == 0 && value == 0 && std::signbit(v) != std::signbit(value) &&
          f.kind != FloatFormat::kFnuz) {
        continue;
      }
      best_error = error;
      best = code;
    }
  }
  (void)max_code;
  // Out of range: IEEE formats overflow to inf (past half an ulp); others saturate
  // to NaN as XLA's conversion does for formats without inf.
  if (std::fabs(value) > max_finite) {
    if (f.kind == FloatFormat::kIeee) {
      double ulp = std::ldexp(1.0, (1 << f.exponent_bits) - 2 - f.bias - f.mantissa_bits);
      if (std::fabs(value) >= max_finite + ulp / 2) {
        uint32_t inf = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
        return value < 0 ? inf | (1u << (total - 1)) : inf;
      }
    } else if (f.kind != FloatFormat::kFiniteOnly && std::isinf(value)) {
      return EncodeBySearch(f, std::numeric_limits<double>::quiet_NaN());
    }
  }
  return best;
}

uint32_t FloatBits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

float BitsToFloat(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

}  // namespace

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = (bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1f;
  const uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return BitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return BitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t FloatToHalf(float value) { return DoubleToHalf(value); }

uint16_t DoubleToHalf(double value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value)) return sign | 0x7e00;
  double a = std::fabs(value);
  if (a >= 65520.0) return sign | 0x7c00;  // Rounds to inf.
  if (a < std::ldexp(1.0, -14)) {
    // Subnormal: units of 2^-24, round half to even.
    double units = std::nearbyint(a * 16777216.0);
    return sign | static_cast<uint16_t>(units);
  }
  int exp;
  double frac = std::frexp(a, &exp);  // a = frac * 2^exp, frac in [0.5, 1)
  double m = std::nearbyint(frac * 2048.0);  // 11 significant bits
  if (m == 2048.0) {
    m = 1024.0;
    ++exp;
  }
  uint32_t biased = static_cast<uint32_t>(exp - 1 + 15);
  if (biased >= 31) return sign | 0x7c00;
  return sign | static_cast<uint16_t>((biased << 10) | (static_cast<uint32_t>(m) - 1024));
}

float BFloat16ToFloat(uint16_t bits) { return BitsToFloat(static_cast<uint32_t>(bits) << 16); }

uint16_t FloatToBFloat16(float value) {
  uint32_t bits = FloatBits(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

uint16_t DoubleToBFloat16(double value) {
  if (std::isnan(value)) return std::signbit(value) ? 0xffc0 : 0x7fc0;
  float f = static_cast<float>(value);
  // Undo a float rounding that would make the bf16 rounding a double rounding.
  double residue = value - static_cast<double>(f);
  uint32_t bits = FloatBits(f);
  if ((bits & 0xffff) == 0x8000 && residue != 0 && std::isfinite(f)) {
    bits = (residue > 0) == (f > 0) ? bits + 1 : bits - 1;
    f = BitsToFloat(bits);
  }
  return FloatToBFloat16(f);
}

double NarrowFloatToDouble(PrimitiveType type, uint8_t bits) {
  return Decode(FormatOf(type), bits);
}

uint8_t DoubleToNarrowFloat(PrimitiveType type, double value) {
  return static_cast<uint8_t>(EncodeBySearch(FormatOf(type), value));
}

}  // namespace hloc
