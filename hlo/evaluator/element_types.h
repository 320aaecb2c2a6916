// Compile-time descriptions of the element types the evaluator computes, and
// the one switch that turns a runtime PrimitiveType into a template argument.
// Each type tag says how an element is stored in a Literal (Storage) and in
// which C++ type arithmetic on it happens (Compute): f16, bf16 and the f8/f6/f4
// kinds are stored as raw bits and computed in float, rounding every result
// back (XLA's rule); s4/u4 are stored one per byte (sign-extended for s4) and
// computed in 8 bits, every result wrapped back to 4 bits.
#ifndef HLOC_HLO_EVALUATOR_ELEMENT_TYPES_H_
#define HLOC_HLO_EVALUATOR_ELEMENT_TYPES_H_

#include <complex>
#include <cstdint>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/evaluator/fast_half.h"
#include "hlo/float_formats.h"
#include "hlo/primitive_type.h"

namespace hloc {
namespace eval {

template <typename S, typename C, PrimitiveType kType>
struct DirectType {
  using Storage = S;
  using Compute = C;
  static constexpr PrimitiveType kPrimitiveType = kType;
  static C Load(S v) { return static_cast<C>(v); }
  static S Store(C v) { return static_cast<S>(v); }
};

struct PredType {
  using Storage = uint8_t;
  using Compute = bool;
  static constexpr PrimitiveType kPrimitiveType = xla::PRED;
  static bool Load(uint8_t v) { return v != 0; }
  static uint8_t Store(bool v) { return v ? 1 : 0; }
};

struct F16Type {
  using Storage = uint16_t;
  using Compute = float;
  static constexpr PrimitiveType kPrimitiveType = xla::F16;
  static float Load(uint16_t v) { return HalfToFloat(v); }
  static uint16_t Store(float v) { return FastFloatToHalf(v); }
};

struct BF16Type {
  using Storage = uint16_t;
  using Compute = float;
  static constexpr PrimitiveType kPrimitiveType = xla::BF16;
  static float Load(uint16_t v) { return BFloat16ToFloat(v); }
  static uint16_t Store(float v) { return FloatToBFloat16(v); }
};

// f8/f6/f4 kinds: the format's bits in the low bits of a byte, decoded and
// encoded (round to nearest even, once) by hlo/float_formats.h.
template <PrimitiveType kType>
struct NarrowFloatType {
  using Storage = uint8_t;
  using Compute = float;
  static constexpr PrimitiveType kPrimitiveType = kType;
  static float Load(uint8_t v) { return static_cast<float>(NarrowFloatToDouble(kType, v)); }
  static uint8_t Store(float v) { return DoubleToNarrowFloat(kType, v); }
};

// Sub-byte integers: computed in the 8-bit type of the same signedness and
// wrapped to kBits on every store. Ops whose result depends on the bit width
// itself (clz, popcnt, shift-right-logical) read ValueBits below.
template <typename S, PrimitiveType kType, int kWidth>
struct SubByteIntType {
  using Storage = S;
  using Compute = S;
  static constexpr PrimitiveType kPrimitiveType = kType;
  static constexpr int kBits = kWidth;
  static constexpr S kMin = std::is_signed<S>::value ? -(1 << (kWidth - 1)) : 0;
  static constexpr S kMax = std::is_signed<S>::value ? (1 << (kWidth - 1)) - 1 : (1 << kWidth) - 1;
  static S Load(S v) { return v; }
  static S Store(S v) {
    const uint8_t mask = (1u << kWidth) - 1;
    uint8_t low = static_cast<uint8_t>(v) & mask;
    if (std::is_signed<S>::value && (low >> (kWidth - 1)) != 0) low |= static_cast<uint8_t>(~mask);
    return static_cast<S>(low);
  }
};

using S4Type = SubByteIntType<int8_t, xla::S4, 4>;
using U4Type = SubByteIntType<uint8_t, xla::U4, 4>;

using S8Type = DirectType<int8_t, int8_t, xla::S8>;
using S16Type = DirectType<int16_t, int16_t, xla::S16>;
using S32Type = DirectType<int32_t, int32_t, xla::S32>;
using S64Type = DirectType<int64_t, int64_t, xla::S64>;
using U8Type = DirectType<uint8_t, uint8_t, xla::U8>;
using U16Type = DirectType<uint16_t, uint16_t, xla::U16>;
using U32Type = DirectType<uint32_t, uint32_t, xla::U32>;
using U64Type = DirectType<uint64_t, uint64_t, xla::U64>;
using F32Type = DirectType<float, float, xla::F32>;
using F64Type = DirectType<double, double, xla::F64>;
using C64Type = DirectType<std::complex<float>, std::complex<float>, xla::C64>;
using C128Type = DirectType<std::complex<double>, std::complex<double>, xla::C128>;

template <typename T>
struct IsComplexT : std::false_type {};
template <typename T>
struct IsComplexT<std::complex<T>> : std::true_type {};

template <typename Tag>
constexpr bool kIsPred = std::is_same<Tag, PredType>::value;
template <typename Tag>
constexpr bool kIsComplex = IsComplexT<typename Tag::Compute>::value;
template <typename Tag>
constexpr bool kIsFloat = std::is_floating_point<typename Tag::Compute>::value;
template <typename Tag>
constexpr bool kIsInt = std::is_integral<typename Tag::Compute>::value && !kIsPred<Tag>;
// Bits of an element's value: 4 for s4/u4, else the compute type's width.
template <typename Tag, typename = void>
struct ValueBitsOf {
  static constexpr int value = sizeof(typename Tag::Compute) * 8;
};
template <typename Tag>
struct ValueBitsOf<Tag, std::void_t<decltype(Tag::kBits)>> {
  static constexpr int value = Tag::kBits;
};
template <typename Tag>
constexpr int kValueBits = ValueBitsOf<Tag>::value;
template <typename Tag>
constexpr bool kIsSubByteInt = kValueBits<Tag> < static_cast<int>(sizeof(typename Tag::Compute) * 8);

// Stored in a narrower format than it is computed in (f16, bf16, f8/f6/f4).
template <typename Tag>
constexpr bool kIsRounded = !std::is_same<typename Tag::Storage, typename Tag::Compute>::value &&
                            !kIsPred<Tag>;

// Calls fn(Tag{}) with the tag of `type`. Types the evaluator does not compute
// (s1/s2/u1/u2, tuples, tokens) give an Unimplemented error.
// With kWithComplex=false complex types are also refused (for ops such as
// comparisons of order that XLA defines only on real types).
template <bool kWithComplex = true, typename Fn>
auto DispatchType(PrimitiveType type, Fn&& fn) -> decltype(fn(F32Type{})) {
  switch (type) {
    case xla::PRED: return fn(PredType{});
    case xla::S8: return fn(S8Type{});
    case xla::S16: return fn(S16Type{});
    case xla::S32: return fn(S32Type{});
    case xla::S64: return fn(S64Type{});
    case xla::U8: return fn(U8Type{});
    case xla::U16: return fn(U16Type{});
    case xla::U32: return fn(U32Type{});
    case xla::U64: return fn(U64Type{});
    case xla::F16: return fn(F16Type{});
    case xla::BF16: return fn(BF16Type{});
    case xla::F32: return fn(F32Type{});
    case xla::F64: return fn(F64Type{});
    case xla::S4: return fn(S4Type{});
    case xla::U4: return fn(U4Type{});
    case xla::F8E5M2: return fn(NarrowFloatType<xla::F8E5M2>{});
    case xla::F8E4M3FN: return fn(NarrowFloatType<xla::F8E4M3FN>{});
    case xla::F8E4M3B11FNUZ: return fn(NarrowFloatType<xla::F8E4M3B11FNUZ>{});
    case xla::F8E5M2FNUZ: return fn(NarrowFloatType<xla::F8E5M2FNUZ>{});
    case xla::F8E4M3FNUZ: return fn(NarrowFloatType<xla::F8E4M3FNUZ>{});
    case xla::F8E4M3: return fn(NarrowFloatType<xla::F8E4M3>{});
    case xla::F8E3M4: return fn(NarrowFloatType<xla::F8E3M4>{});
    case xla::F8E8M0FNU: return fn(NarrowFloatType<xla::F8E8M0FNU>{});
    case xla::F6E3M2FN: return fn(NarrowFloatType<xla::F6E3M2FN>{});
    case xla::F6E2M3FN: return fn(NarrowFloatType<xla::F6E2M3FN>{});
    case xla::F4E2M1FN: return fn(NarrowFloatType<xla::F4E2M1FN>{});
    case xla::C64:
      if constexpr (kWithComplex) return fn(C64Type{});
      break;
    case xla::C128:
      if constexpr (kWithComplex) return fn(C128Type{});
      break;
    default:
      break;
  }
  return absl::UnimplementedError(
      absl::StrCat("the evaluator does not compute element type ", PrimitiveTypeName(type)));
}

}  // namespace eval
}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_ELEMENT_TYPES_H_
