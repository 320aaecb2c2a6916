// Type-changing elementwise ops: convert, bitcast-convert, reduce-precision.
//
// convert follows XLA: float -> integer saturates to the integer's range and
// maps NaN to 0; integer -> integer wraps; anything -> pred is "!= 0";
// real -> complex sets a zero imaginary part and complex -> real keeps the
// real part. Conversions to f16/bf16 and the f8/f6/f4 kinds round once, to
// nearest even, from the exact source value. s4/u4 results wrap (from
// integers) or saturate (from floats) to 4 bits.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/ops.h"
#include "hlo/evaluator/parallel.h"
#include "hlo/float_formats.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

template <typename T>
double RealPart(T v) {
  if constexpr (IsComplexT<T>::value) {
    return static_cast<double>(v.real());
  } else {
    return static_cast<double>(v);
  }
}

template <typename Out, typename In>
Out SaturatingFloatToInt(In v) {
  if (std::isnan(v)) return 0;
  // max + 1 and min are powers of two, exact in double (the cast of max
  // itself rounds up to max + 1 for 64-bit types, which is what we want).
  const double kMaxPlusOne = static_cast<double>(std::numeric_limits<Out>::max() / 2 + 1) * 2.0;
  const double kMin = static_cast<double>(std::numeric_limits<Out>::min());
  const double d = static_cast<double>(v);
  if (d >= kMaxPlusOne) return std::numeric_limits<Out>::max();
  if (d <= kMin) return std::numeric_limits<Out>::min();
  return static_cast<Out>(d);
}

// One element from InTag's compute type to OutTag's storage.
template <typename InTag, typename OutTag>
typename OutTag::Storage ConvertElement(typename InTag::Compute v) {
  using OC = typename OutTag::Compute;
  using IC = typename InTag::Compute;
  if constexpr (kIsPred<OutTag>) {
    if constexpr (IsComplexT<IC>::value) {
      return OutTag::Store(v.real() != 0 || v.imag() != 0);
    } else {
      return OutTag::Store(v != IC(0));
    }
  } else if constexpr (kIsComplex<OutTag>) {
    using R = typename OC::value_type;
    if constexpr (IsComplexT<IC>::value) {
      return OC(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    } else {
      return OC(static_cast<R>(v), R(0));
    }
  } else if constexpr (kIsSubByteInt<OutTag>) {
    // s4/u4: floats saturate to the 4-bit range, integers wrap.
    if constexpr (kIsFloat<InTag> || kIsComplex<InTag>) {
      const double d = RealPart(v);
      if (std::isnan(d)) return 0;
      return static_cast<OC>(std::min<double>(OutTag::kMax, std::max<double>(OutTag::kMin, d)));
    } else {
      return OutTag::Store(static_cast<OC>(v));
    }
  } else if constexpr (kIsInt<OutTag>) {
    if constexpr (kIsFloat<InTag> || kIsComplex<InTag>) {
      return SaturatingFloatToInt<OC>(RealPart(v));
    } else {
      return static_cast<OC>(v);
    }
  } else if constexpr (kIsRounded<OutTag>) {
    // f16/bf16/f8/f6/f4: round the exact value once. float inputs take the
    // float path.
    if constexpr (std::is_same<IC, float>::value) {
      return OutTag::Store(v);
    } else if constexpr (std::is_same<typename OutTag::Storage, uint8_t>::value) {
      return DoubleToNarrowFloat(OutTag::kPrimitiveType, RealPart(v));
    } else if constexpr (OutTag::kPrimitiveType == xla::F16) {
      return DoubleToHalf(RealPart(v));
    } else {
      return DoubleToBFloat16(RealPart(v));
    }
  } else {  // f32, f64
    if constexpr (IsComplexT<IC>::value) {
      return static_cast<OC>(v.real());
    } else if constexpr (std::is_same<OC, float>::value && std::is_integral<IC>::value &&
                         sizeof(IC) == 8) {
      return static_cast<float>(v);  // Correctly rounded by the compiler.
    } else {
      return static_cast<OC>(v);
    }
  }
}

template <typename InTag, typename OutTag>
void ConvertLoop(const Literal& in, Literal* out, int threads) {
  const auto* src = reinterpret_cast<const typename InTag::Storage*>(in.raw());
  auto* dst = reinterpret_cast<typename OutTag::Storage*>(out->mutable_raw());
  ParallelFor(threads, out->element_count(), 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      dst[i] = ConvertElement<InTag, OutTag>(InTag::Load(src[i]));
    }
  });
}

absl::StatusOr<Literal> ConvertInto(const Literal& in, Literal out, int threads) {
  HLOC_RETURN_IF_ERROR(DispatchType(in.shape().element_type(), [&](auto in_tag) {
    return DispatchType(out.shape().element_type(), [&](auto out_tag) {
      ConvertLoop<decltype(in_tag), decltype(out_tag)>(in, &out, threads);
      return absl::OkStatus();
    });
  }));
  return std::move(out);
}

template <typename U>
U ReduceBits(U bits, int src_exp, int src_mant, int exp_bits, int mant_bits) {
  const int total = sizeof(U) * 8;
  if (mant_bits < src_mant) {
    const int shift = src_mant - mant_bits;
    const U last_bit = U{1} << shift;
    const U bias = (last_bit >> 1) - 1 + ((bits & last_bit) >> shift);
    bits = (bits + bias) & ~(last_bit - 1);
  }
  if (exp_bits < src_exp) {
    const U sign_mask = U{1} << (total - 1);
    const U exp_mask = ((U{1} << src_exp) - 1) << src_mant;
    const U exponent_bias = (U{1} << (src_exp - 1)) - 1;
    const U reduced_bias = (U{1} << (exp_bits - 1)) - 1;
    const U max_exp = exponent_bias + reduced_bias;
    const U min_exp = exponent_bias - reduced_bias;
    const U x_exp = bits & exp_mask;
    if (x_exp > (max_exp << src_mant)) {
      bits = (bits & sign_mask) | exp_mask;
    } else if (x_exp <= (min_exp << src_mant)) {
      bits = bits & sign_mask;
    }
  }
  return bits;
}

template <typename T>
T ReducePrecisionValue(T v, int exp_bits, int mant_bits) {
  if (std::isnan(v)) {
    return mant_bits > 0 ? v : std::copysign(std::numeric_limits<T>::infinity(), v);
  }
  if constexpr (std::is_same<T, float>::value) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits = ReduceBits<uint32_t>(bits, 8, 23, exp_bits, mant_bits);
    std::memcpy(&v, &bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    bits = ReduceBits<uint64_t>(bits, 11, 52, exp_bits, mant_bits);
    std::memcpy(&v, &bits, 8);
  }
  return v;
}

}  // namespace

absl::StatusOr<Literal> ConvertLiteral(const Literal& input, PrimitiveType type) {
  Shape shape = input.shape();
  shape.set_element_type(type);
  HLOC_ASSIGN_OR_RETURN(Literal out, Literal::Create(shape));
  return ConvertInto(input, std::move(out), 1);
}

absl::StatusOr<Literal> EvalConvert(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  if (!ops[0]->shape().IsArray() || !hlo.shape().IsArray() ||
      ops[0]->element_count() != hlo.shape().element_count()) {
    return InstructionError(hlo, "operand and result must be arrays of the same size");
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  return ConvertInto(*ops[0], std::move(out), ctx.num_threads());
}

absl::StatusOr<Literal> EvalBitcastConvert(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  const PrimitiveType from = in.shape().element_type(), to = hlo.shape().element_type();
  if (!in.shape().IsArray() || !hlo.shape().IsArray()) {
    return InstructionError(hlo, "operand and result must be arrays");
  }
  for (PrimitiveType t : {from, to}) {
    if (BitWidth(t) != 8 * ByteWidth(t) || t == xla::PRED) {
      return InstructionUnimplemented(hlo, "bitcast-convert of ", PrimitiveTypeName(t),
                                      " is not supported");
    }
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  if (out.size_bytes() != in.size_bytes()) {
    return InstructionError(hlo, "operand has ", in.size_bytes(), " bytes, result ",
                            out.size_bytes());
  }
  // Literals hold elements little-endian in row-major order, so XLA's
  // bitcast-convert (narrow elements along a new minor dimension) is a copy.
  if (in.size_bytes() > 0) std::memcpy(out.mutable_raw(), in.raw(), in.size_bytes());
  return std::move(out);
}

absl::StatusOr<Literal> EvalReducePrecision(const HloInstruction& hlo, Operands ops) {
  const int e = hlo.attrs().exponent_bits, m = hlo.attrs().mantissa_bits;
  if (e < 1 || m < 0) {
    return InstructionError(hlo, "exponent_bits must be >= 1 and mantissa_bits >= 0");
  }
  const Literal& in = *ops[0];
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  auto run = [&](auto tag) -> absl::Status {
    using Tag = decltype(tag);
    const auto* src = reinterpret_cast<const typename Tag::Storage*>(in.raw());
    auto* dst = reinterpret_cast<typename Tag::Storage*>(out.mutable_raw());
    using C = typename Tag::Compute;
    const int max_e = std::is_same<C, float>::value ? 8 : 11;
    const int max_m = std::is_same<C, float>::value ? 23 : 52;
    for (int64_t i = 0; i < out.element_count(); ++i) {
      dst[i] = Tag::Store(
          ReducePrecisionValue<C>(Tag::Load(src[i]), std::min(e, max_e), std::min(m, max_m)));
    }
    return absl::OkStatus();
  };
  switch (in.shape().element_type()) {
    case xla::F16: HLOC_RETURN_IF_ERROR(run(F16Type{})); break;
    case xla::BF16: HLOC_RETURN_IF_ERROR(run(BF16Type{})); break;
    case xla::F32: HLOC_RETURN_IF_ERROR(run(F32Type{})); break;
    case xla::F64: HLOC_RETURN_IF_ERROR(run(F64Type{})); break;
    default: return InstructionError(hlo, "reduce-precision needs a floating-point operand");
  }
  return std::move(out);
}

}  // namespace eval
}  // namespace hloc
