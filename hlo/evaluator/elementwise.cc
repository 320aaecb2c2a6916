// Elementwise opcodes: unary math, binary arithmetic, compare, select and
// clamp. Each op is a typed loop over the flat (row-major) element arrays;
// the switch on opcode and element type happens once per instruction.
//
// XLA's integer rules: arithmetic wraps; x / 0 = -1 (all ones for unsigned),
// INT_MIN / -1 = INT_MIN; x % 0 = x, INT_MIN % -1 = 0; shifts by an amount
// >= the bit width (as unsigned) give 0, or the sign fill for arithmetic
// right shift; s4/u4 wrap to 4 bits. Floats: maximum/minimum propagate NaN;
// f16/bf16 and the f8/f6/f4 kinds are computed in float and every result is
// rounded back to the narrow type.
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/ops.h"
#include "hlo/evaluator/parallel.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

template <typename InTag, typename OutTag, typename F>
void MapUnary(const Literal& x, Literal* out, int threads, int64_t cost, F f) {
  const auto* src = reinterpret_cast<const typename InTag::Storage*>(x.raw());
  auto* dst = reinterpret_cast<typename OutTag::Storage*>(out->mutable_raw());
  ParallelFor(threads, out->element_count(), cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = OutTag::Store(f(InTag::Load(src[i])));
  });
}

// Operands of one elementwise op may be scalars broadcast implicitly (select
// and clamp allow it); `step` is 0 for such an operand and 1 otherwise.
template <typename InTag, typename OutTag, typename F>
void MapBinary(const Literal& a, const Literal& b, Literal* out, int threads, int64_t cost, F f) {
  const auto* pa = reinterpret_cast<const typename InTag::Storage*>(a.raw());
  const auto* pb = reinterpret_cast<const typename InTag::Storage*>(b.raw());
  auto* dst = reinterpret_cast<typename OutTag::Storage*>(out->mutable_raw());
  const int64_t n = out->element_count();
  const bool a_scalar = a.element_count() == 1 && n != 1;
  const bool b_scalar = b.element_count() == 1 && n != 1;
  ParallelFor(threads, n, cost, [&](int64_t begin, int64_t end) {
    if (!a_scalar && !b_scalar) {
      for (int64_t i = begin; i < end; ++i) {
        dst[i] = OutTag::Store(f(InTag::Load(pa[i]), InTag::Load(pb[i])));
      }
    } else {
      const int64_t sa = a_scalar ? 0 : 1, sb = b_scalar ? 0 : 1;
      for (int64_t i = begin; i < end; ++i) {
        dst[i] = OutTag::Store(f(InTag::Load(pa[i * sa]), InTag::Load(pb[i * sb])));
      }
    }
  });
}

template <typename T>
T WrapAdd(T a, T b) {
  if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
T WrapSub(T a, T b) {
  if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <typename T>
T WrapMul(T a, T b) {
  if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
    // Promote to a wide unsigned type: uint16*uint16 would overflow int.
    using W = std::conditional_t<(sizeof(T) < 8), uint32_t, uint64_t>;
    return static_cast<T>(static_cast<W>(static_cast<std::make_unsigned_t<T>>(a)) *
                          static_cast<W>(static_cast<std::make_unsigned_t<T>>(b)));
  } else {
    return a * b;
  }
}

template <typename T>
T IntDivide(T a, T b) {
  if (b == 0) return static_cast<T>(-1);
  if constexpr (std::is_signed<T>::value) {
    if (b == -1 && a == std::numeric_limits<T>::min()) return a;
  }
  return static_cast<T>(a / b);
}
template <typename T>
T IntRemainder(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed<T>::value) {
    if (b == -1 && a == std::numeric_limits<T>::min()) return 0;
  }
  return static_cast<T>(a % b);
}
template <typename T>
T IntPower(T base, T exponent) {
  if (base == 1 || exponent == 0) return 1;
  if constexpr (std::is_signed<T>::value) {
    if (exponent < 0) return 0;
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, b = static_cast<U>(base);
  U e = static_cast<U>(exponent);
  while (e) {
    if (e & 1) result = static_cast<U>(WrapMul<U>(result, b));
    b = WrapMul<U>(b, b);
    e >>= 1;
  }
  return static_cast<T>(result);
}

template <typename T>
bool ShiftOutOfRange(T amount) {
  using U = std::make_unsigned_t<T>;
  return static_cast<U>(amount) >= sizeof(T) * 8;
}
template <typename T>
T ShiftLeft(T a, T amount) {
  using U = std::make_unsigned_t<T>;
  if (ShiftOutOfRange(amount)) return 0;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<U>(amount)));
}
template <typename T>
T ShiftRightLogical(T a, T amount) {
  using U = std::make_unsigned_t<T>;
  if (ShiftOutOfRange(amount)) return 0;
  return static_cast<T>(static_cast<U>(a) >> static_cast<U>(amount));
}
template <typename T>
T ShiftRightArithmetic(T a, T amount) {
  using S = std::make_signed_t<T>;
  const S sa = static_cast<S>(a);
  if (ShiftOutOfRange(amount)) return static_cast<T>(sa < 0 ? S(-1) : S(0));
  return static_cast<T>(static_cast<S>(sa >> static_cast<int>(amount)));
}

template <typename T>
T Maximum(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? b : a;
}
template <typename T>
T Minimum(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return b < a ? b : a;
}

template <typename T>
int CountLeadingZeros(T v) {
  using U = std::make_unsigned_t<T>;
  U u = static_cast<U>(v);
  const int bits = sizeof(T) * 8;
  if (u == 0) return bits;
  int n = 0;
  for (int i = bits - 1; i >= 0 && !((u >> i) & 1); --i) ++n;
  return n;
}
template <typename T>
int PopCount(T v) {
  using U = std::make_unsigned_t<T>;
  return __builtin_popcountll(static_cast<uint64_t>(static_cast<U>(v)));
}

// The value's own bits, zero-extended: s4 -1 (held as int8 -1) becomes 15,
// so clz, popcnt and shift-right-logical see 4 bits, not 8.
template <typename Tag>
typename Tag::Compute LowBits(typename Tag::Compute v) {
  using C = typename Tag::Compute;
  if constexpr (kIsSubByteInt<Tag>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(v) & static_cast<U>((1u << kValueBits<Tag>) - 1));
  } else {
    return v;
  }
}

template <typename Tag>
absl::StatusOr<Literal> UnaryTyped(const HloInstruction& hlo, const Literal& x,
                                   EvalContext& ctx) {
  using C = typename Tag::Compute;
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  const int t = ctx.num_threads();
  const HloOpcode op = hlo.opcode();
  auto same = [&](auto f) -> absl::StatusOr<Literal> {
    MapUnary<Tag, Tag>(x, &out, t, 8, f);
    return std::move(out);
  };
  auto bad = [&]() -> absl::Status {
    return InstructionError(hlo, "not defined on element type ",
                            PrimitiveTypeName(x.shape().element_type()));
  };
  if constexpr (kIsPred<Tag>) {
    if (op == HloOpcode::kNot) return same([](bool v) { return !v; });
    return bad();
  } else if constexpr (kIsInt<Tag>) {
    switch (op) {
      case HloOpcode::kNegate: return same([](C v) { return WrapSub<C>(0, v); });
      case HloOpcode::kAbs: return same([](C v) { return v < 0 ? WrapSub<C>(0, v) : v; });
      case HloOpcode::kNot: return same([](C v) { return static_cast<C>(~v); });
      case HloOpcode::kSign:
        return same([](C v) { return static_cast<C>((C(0) < v) - (v < C(0))); });
      case HloOpcode::kClz:
        return same([](C v) {
          return static_cast<C>(CountLeadingZeros(LowBits<Tag>(v)) -
                                (static_cast<int>(sizeof(C)) * 8 - kValueBits<Tag>));
        });
      case HloOpcode::kPopulationCount:
        return same([](C v) { return static_cast<C>(PopCount(LowBits<Tag>(v))); });
      case HloOpcode::kCopy: return same([](C v) { return v; });
      default: return bad();
    }
  } else if constexpr (kIsFloat<Tag>) {
    switch (op) {
      case HloOpcode::kNegate: return same([](C v) { return -v; });
      case HloOpcode::kAbs: return same([](C v) { return std::fabs(v); });
      case HloOpcode::kSign:
        return same([](C v) { return std::isnan(v) ? v : std::copysign(C(v != 0), v); });
      case HloOpcode::kCeil: return same([](C v) { return std::ceil(v); });
      case HloOpcode::kFloor: return same([](C v) { return std::floor(v); });
      case HloOpcode::kRoundNearestAfz: return same([](C v) { return std::round(v); });
      case HloOpcode::kRoundNearestEven: return same([](C v) { return std::nearbyint(v); });
      case HloOpcode::kExp: return same([](C v) { return std::exp(v); });
      case HloOpcode::kExpm1: return same([](C v) { return std::expm1(v); });
      case HloOpcode::kLog: return same([](C v) { return std::log(v); });
      case HloOpcode::kLog1p: return same([](C v) { return std::log1p(v); });
      case HloOpcode::kLogistic: return same([](C v) { return C(1) / (C(1) + std::exp(-v)); });
      case HloOpcode::kSqrt: return same([](C v) { return std::sqrt(v); });
      case HloOpcode::kRsqrt: return same([](C v) { return C(1) / std::sqrt(v); });
      case HloOpcode::kCbrt: return same([](C v) { return std::cbrt(v); });
      case HloOpcode::kSin: return same([](C v) { return std::sin(v); });
      case HloOpcode::kCos: return same([](C v) { return std::cos(v); });
      case HloOpcode::kTan: return same([](C v) { return std::tan(v); });
      case HloOpcode::kTanh: return same([](C v) { return std::tanh(v); });
      case HloOpcode::kErf: return same([](C v) { return std::erf(v); });
      case HloOpcode::kCopy: return same([](C v) { return v; });
      case HloOpcode::kIsFinite:
        MapUnary<Tag, PredType>(x, &out, t, 2, [](C v) { return static_cast<bool>(std::isfinite(v)); });
        return std::move(out);
      case HloOpcode::kReal: return same([](C v) { return v; });
      case HloOpcode::kImag: return same([](C) { return C(0); });
      default: return bad();
    }
  } else {  // complex
    using R = typename C::value_type;
    using RealTag = std::conditional_t<std::is_same<R, float>::value, F32Type, F64Type>;
    switch (op) {
      case HloOpcode::kNegate: return same([](C v) { return -v; });
      case HloOpcode::kSign:
        return same([](C v) {
          R a = std::abs(v);
          return a == 0 ? C(0) : v / a;
        });
      case HloOpcode::kExp: return same([](C v) { return std::exp(v); });
      case HloOpcode::kExpm1: return same([](C v) { return std::exp(v) - C(1); });
      case HloOpcode::kLog: return same([](C v) { return std::log(v); });
      case HloOpcode::kLog1p: return same([](C v) { return std::log(v + C(1)); });
      case HloOpcode::kLogistic: return same([](C v) { return C(1) / (C(1) + std::exp(-v)); });
      case HloOpcode::kSqrt: return same([](C v) { return std::sqrt(v); });
      case HloOpcode::kRsqrt: return same([](C v) { return C(1) / std::sqrt(v); });
      case HloOpcode::kSin: return same([](C v) { return std::sin(v); });
      case HloOpcode::kCos: return same([](C v) { return std::cos(v); });
      case HloOpcode::kTan: return same([](C v) { return std::tan(v); });
      case HloOpcode::kTanh: return same([](C v) { return std::tanh(v); });
      case HloOpcode::kCopy: return same([](C v) { return v; });
      case HloOpcode::kAbs:
        MapUnary<Tag, RealTag>(x, &out, t, 8, [](C v) { return std::abs(v); });
        return std::move(out);
      case HloOpcode::kReal:
        MapUnary<Tag, RealTag>(x, &out, t, 1, [](C v) { return v.real(); });
        return std::move(out);
      case HloOpcode::kImag:
        MapUnary<Tag, RealTag>(x, &out, t, 1, [](C v) { return v.imag(); });
        return std::move(out);
      case HloOpcode::kIsFinite:
        MapUnary<Tag, PredType>(x, &out, t, 2, [](C v) {
          return static_cast<bool>(std::isfinite(v.real()) && std::isfinite(v.imag()));
        });
        return std::move(out);
      default: return bad();
    }
  }
}

template <typename Tag>
absl::StatusOr<Literal> BinaryTyped(const HloInstruction& hlo, const Literal& a,
                                    const Literal& b, EvalContext& ctx) {
  using C = typename Tag::Compute;
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  const int t = ctx.num_threads();
  const HloOpcode op = hlo.opcode();
  auto same = [&](auto f) -> absl::StatusOr<Literal> {
    MapBinary<Tag, Tag>(a, b, &out, t, 4, f);
    return std::move(out);
  };
  auto bad = [&]() -> absl::Status {
    return InstructionError(hlo, "not defined on element type ",
                            PrimitiveTypeName(a.shape().element_type()));
  };
  if constexpr (kIsPred<Tag>) {
    switch (op) {
      case HloOpcode::kAnd:
      case HloOpcode::kMultiply:
      case HloOpcode::kMinimum: return same([](bool x, bool y) { return x && y; });
      case HloOpcode::kOr:
      case HloOpcode::kAdd:
      case HloOpcode::kMaximum: return same([](bool x, bool y) { return x || y; });
      case HloOpcode::kXor:
      case HloOpcode::kSubtract: return same([](bool x, bool y) { return x != y; });
      // As one-bit unsigned integers under the integer rules above: x / 0 is
      // all ones, x / 1 = x; x % 0 = x, x % 1 = 0. power(x, y) = x || !y.
      case HloOpcode::kDivide:
      case HloOpcode::kPower: return same([](bool x, bool y) { return x || !y; });
      case HloOpcode::kRemainder: return same([](bool x, bool y) { return x && !y; });
      default: return bad();
    }
  } else if constexpr (kIsInt<Tag>) {
    switch (op) {
      case HloOpcode::kAdd: return same([](C x, C y) { return WrapAdd(x, y); });
      case HloOpcode::kSubtract: return same([](C x, C y) { return WrapSub(x, y); });
      case HloOpcode::kMultiply: return same([](C x, C y) { return WrapMul(x, y); });
      case HloOpcode::kDivide: return same([](C x, C y) { return IntDivide(x, y); });
      case HloOpcode::kRemainder: return same([](C x, C y) { return IntRemainder(x, y); });
      case HloOpcode::kMaximum: return same([](C x, C y) { return Maximum(x, y); });
      case HloOpcode::kMinimum: return same([](C x, C y) { return Minimum(x, y); });
      case HloOpcode::kPower: return same([](C x, C y) { return IntPower(x, y); });
      case HloOpcode::kAnd: return same([](C x, C y) { return static_cast<C>(x & y); });
      case HloOpcode::kOr: return same([](C x, C y) { return static_cast<C>(x | y); });
      case HloOpcode::kXor: return same([](C x, C y) { return static_cast<C>(x ^ y); });
      case HloOpcode::kShiftLeft: return same([](C x, C y) { return ShiftLeft(x, y); });
      case HloOpcode::kShiftRightLogical:
        return same([](C x, C y) { return ShiftRightLogical(LowBits<Tag>(x), y); });
      case HloOpcode::kShiftRightArithmetic:
        return same([](C x, C y) { return ShiftRightArithmetic(x, y); });
      default: return bad();
    }
  } else if constexpr (kIsFloat<Tag>) {
    switch (op) {
      case HloOpcode::kAdd: return same([](C x, C y) { return x + y; });
      case HloOpcode::kSubtract: return same([](C x, C y) { return x - y; });
      case HloOpcode::kMultiply: return same([](C x, C y) { return x * y; });
      case HloOpcode::kDivide: return same([](C x, C y) { return x / y; });
      case HloOpcode::kRemainder: return same([](C x, C y) { return std::fmod(x, y); });
      case HloOpcode::kMaximum: return same([](C x, C y) { return Maximum(x, y); });
      case HloOpcode::kMinimum: return same([](C x, C y) { return Minimum(x, y); });
      case HloOpcode::kPower:
        return same([](C x, C y) { return (x == C(1) || y == C(0)) ? C(1) : std::pow(x, y); });
      case HloOpcode::kAtan2: return same([](C x, C y) { return std::atan2(x, y); });
      case HloOpcode::kComplex: {
        if (hlo.shape().element_type() == xla::C64) {
          MapBinary<Tag, C64Type>(a, b, &out, t, 2, [](C x, C y) {
            return std::complex<float>(static_cast<float>(x), static_cast<float>(y));
          });
        } else {
          MapBinary<Tag, C128Type>(a, b, &out, t, 2, [](C x, C y) {
            return std::complex<double>(static_cast<double>(x), static_cast<double>(y));
          });
        }
        return std::move(out);
      }
      default: return bad();
    }
  } else {  // complex
    switch (op) {
      case HloOpcode::kAdd: return same([](C x, C y) { return x + y; });
      case HloOpcode::kSubtract: return same([](C x, C y) { return x - y; });
      case HloOpcode::kMultiply: return same([](C x, C y) { return x * y; });
      case HloOpcode::kDivide: return same([](C x, C y) { return x / y; });
      case HloOpcode::kPower:
        return same([](C x, C y) { return (x == C(1) || y == C(0)) ? C(1) : std::pow(x, y); });
      case HloOpcode::kAtan2:
        return same([](C y, C x) {
          const C i(0, 1);
          return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
        });
      default: return bad();
    }
  }
}

// Float bits as an integer whose signed order is IEEE total order:
// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
template <typename T>
int64_t TotalOrderKey(T v) {
  if constexpr (std::is_same<T, float>::value) {
    int32_t bits;
    std::memcpy(&bits, &v, 4);
    if (bits < 0) bits ^= 0x7fffffff;
    return bits;
  } else {
    int64_t bits;
    std::memcpy(&bits, &v, 8);
    if (bits < 0) bits ^= INT64_C(0x7fffffffffffffff);
    return bits;
  }
}

template <typename Tag, typename Key>
void CompareLoop(const Literal& a, const Literal& b, Literal* out, int t, ComparisonDirection d,
                 Key key) {
  using C = typename Tag::Compute;
  switch (d) {
    case ComparisonDirection::kEq:
      MapBinary<Tag, PredType>(a, b, out, t, 2, [&](C x, C y) { return key(x) == key(y); });
      break;
    case ComparisonDirection::kNe:
      MapBinary<Tag, PredType>(a, b, out, t, 2, [&](C x, C y) { return key(x) != key(y); });
      break;
    case ComparisonDirection::kLt:
      MapBinary<Tag, PredType>(a, b, out, t, 2, [&](C x, C y) { return key(x) < key(y); });
      break;
    case ComparisonDirection::kLe:
      MapBinary<Tag, PredType>(a, b, out, t, 2, [&](C x, C y) { return key(x) <= key(y); });
      break;
    case ComparisonDirection::kGt:
      MapBinary<Tag, PredType>(a, b, out, t, 2, [&](C x, C y) { return key(x) > key(y); });
      break;
    case ComparisonDirection::kGe:
      MapBinary<Tag, PredType>(a, b, out, t, 2, [&](C x, C y) { return key(x) >= key(y); });
      break;
  }
}

template <typename Tag>
absl::StatusOr<Literal> CompareTyped(const HloInstruction& hlo, const Literal& a,
                                     const Literal& b, EvalContext& ctx) {
  using C = typename Tag::Compute;
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  const ComparisonDirection d = hlo.attrs().comparison_direction;
  const int t = ctx.num_threads();
  if constexpr (kIsComplex<Tag>) {
    if (d != ComparisonDirection::kEq && d != ComparisonDirection::kNe) {
      return InstructionError(hlo, "complex numbers compare only for EQ and NE");
    }
    if (d == ComparisonDirection::kEq) {
      MapBinary<Tag, PredType>(a, b, &out, t, 2, [](C x, C y) { return x == y; });
    } else {
      MapBinary<Tag, PredType>(a, b, &out, t, 2, [](C x, C y) { return x != y; });
    }
  } else if constexpr (kIsFloat<Tag>) {
    if (hlo.attrs().comparison_type == ComparisonType::kTotalOrder) {
      CompareLoop<Tag>(a, b, &out, t, d, [](C v) { return TotalOrderKey<C>(v); });
    } else {
      CompareLoop<Tag>(a, b, &out, t, d, [](C v) { return v; });
    }
  } else {
    CompareLoop<Tag>(a, b, &out, t, d, [](C v) { return v; });
  }
  return std::move(out);
}

absl::Status CheckArrayOperands(const HloInstruction& hlo, Operands ops) {
  for (const Literal* op : ops) {
    if (!op->shape().IsArray()) {
      return InstructionError(hlo, "operand of shape ", op->shape().ToString(),
                              " is not an array");
    }
  }
  if (!hlo.shape().IsArray()) return InstructionError(hlo, "result is not an array");
  const int64_t n = hlo.shape().element_count();
  for (const Literal* op : ops) {
    if (op->element_count() != n && op->element_count() != 1) {
      return InstructionError(hlo, "operand shape ", op->shape().ToString(),
                              " does not match result shape ", hlo.shape().ToString());
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvalUnary(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  HLOC_RETURN_IF_ERROR(CheckArrayOperands(hlo, ops));
  if (ops[0]->element_count() != hlo.shape().element_count()) {
    return InstructionError(hlo, "operand and result element counts differ");
  }
  return DispatchType(ops[0]->shape().element_type(),
                      [&](auto tag) { return UnaryTyped<decltype(tag)>(hlo, *ops[0], ctx); });
}

absl::StatusOr<Literal> EvalBinary(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  HLOC_RETURN_IF_ERROR(CheckArrayOperands(hlo, ops));
  if (ops[0]->shape().element_type() != ops[1]->shape().element_type()) {
    return InstructionError(hlo, "operand element types differ");
  }
  return DispatchType(ops[0]->shape().element_type(), [&](auto tag) {
    return BinaryTyped<decltype(tag)>(hlo, *ops[0], *ops[1], ctx);
  });
}

absl::StatusOr<Literal> EvalCompare(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  HLOC_RETURN_IF_ERROR(CheckArrayOperands(hlo, ops));
  if (ops[0]->shape().element_type() != ops[1]->shape().element_type()) {
    return InstructionError(hlo, "operand element types differ");
  }
  return DispatchType(ops[0]->shape().element_type(), [&](auto tag) {
    return CompareTyped<decltype(tag)>(hlo, *ops[0], *ops[1], ctx);
  });
}

absl::StatusOr<Literal> EvalSelect(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  HLOC_RETURN_IF_ERROR(CheckArrayOperands(hlo, ops));
  if (ops[0]->shape().element_type() != xla::PRED) {
    return InstructionError(hlo, "predicate is not pred");
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  const int width = ByteWidth(hlo.shape().element_type());
  const int64_t n = out.element_count();
  const uint8_t* pred = ops[0]->raw();
  const int64_t ps = ops[0]->element_count() == 1 ? 0 : 1;
  const int64_t ts = ops[1]->element_count() == 1 ? 0 : 1;
  const int64_t fs = ops[2]->element_count() == 1 ? 0 : 1;
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* on_true = reinterpret_cast<const T*>(ops[1]->raw());
    const T* on_false = reinterpret_cast<const T*>(ops[2]->raw());
    T* dst = reinterpret_cast<T*>(out.mutable_raw());
    ParallelFor(ctx.num_threads(), n, 2, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        dst[i] = pred[i * ps] ? on_true[i * ts] : on_false[i * fs];
      }
    });
  };
  switch (width) {
    case 1: run(uint8_t{}); break;
    case 2: run(uint16_t{}); break;
    case 4: run(uint32_t{}); break;
    case 8: run(uint64_t{}); break;
    case 16: run(std::complex<double>{}); break;
    default: return InstructionUnimplemented(hlo, "unsupported element width");
  }
  return std::move(out);
}

absl::StatusOr<Literal> EvalClamp(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  HLOC_RETURN_IF_ERROR(CheckArrayOperands(hlo, ops));
  return DispatchType<false>(
      hlo.shape().element_type(), [&](auto tag) -> absl::StatusOr<Literal> {
        using Tag = decltype(tag);
        using C = typename Tag::Compute;
        using S = typename Tag::Storage;
        HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
        const S* lo = reinterpret_cast<const S*>(ops[0]->raw());
        const S* x = reinterpret_cast<const S*>(ops[1]->raw());
        const S* hi = reinterpret_cast<const S*>(ops[2]->raw());
        S* dst = reinterpret_cast<S*>(out.mutable_raw());
        const int64_t ls = ops[0]->element_count() == 1 ? 0 : 1;
        const int64_t xs = ops[1]->element_count() == 1 ? 0 : 1;
        const int64_t hs = ops[2]->element_count() == 1 ? 0 : 1;
        ParallelFor(ctx.num_threads(), out.element_count(), 3, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            C l = Tag::Load(lo[i * ls]), v = Tag::Load(x[i * xs]), h = Tag::Load(hi[i * hs]);
            C r;
            if constexpr (kIsFloat<Tag>) {
              if (std::isnan(l)) {
                r = l;
              } else if (std::isnan(v)) {
                r = v;
              } else if (std::isnan(h)) {
                r = h;
              } else {
                r = Minimum(h, Maximum(v, l));
              }
            } else {
              r = Minimum(h, Maximum(v, l));
            }
            dst[i] = Tag::Store(r);
          }
        });
        return std::move(out);
      });
}

}  // namespace eval
}  // namespace hloc
