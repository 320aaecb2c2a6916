// Bit-level conversions between float/double and the narrow floating-point
// formats HLO carries (f16, bf16, the f8 family, f4e2m1fn). All conversions to
// a narrow format round to nearest, ties to even.
#ifndef HLOC_HLO_FLOAT_FORMATS_H_
#define HLOC_HLO_FLOAT_FORMATS_H_

#include <cstdint>

#include "hlo/primitive_type.h"

namespace hloc {

float HalfToFloat(uint16_t bits);
uint16_t FloatToHalf(float value);
float BFloat16ToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);
// Rounds a double to f16/bf16 directly (no double rounding through float).
uint16_t DoubleToHalf(double value);
uint16_t DoubleToBFloat16(double value);

// The f8 and f4 types (IsNarrowFloat): decode and encode one element held in
// the low bits of a byte.
double NarrowFloatToDouble(PrimitiveType type, uint8_t bits);
uint8_t DoubleToNarrowFloat(PrimitiveType type, double value);

}  // namespace hloc

#endif  // HLOC_HLO_FLOAT_FORMATS_H_
