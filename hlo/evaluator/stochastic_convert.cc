// stochastic-convert: a floating-point operand converted to an integer type
// with stochastic rounding. The second operand holds one unsigned random word
// per element, as wide as the operand's type. XLA's rule: NaN gives 0, values
// at or beyond the result type's range (infinities included) saturate to its
// limits, and otherwise the magnitude's fraction f (scaled to a fixed-point
// number with as many bits as the random word) rounds the magnitude up when
// the random word is below it, so up happens with probability f. The sign is
// applied after rounding.
#include <cmath>
#include <limits>
#include <type_traits>

#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/ops.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

template <typename InTag, typename OutTag>
absl::StatusOr<Literal> StochasticConvertTyped(const HloInstruction& hlo, const Literal& x,
                                               const Literal& random) {
  using In = typename InTag::Storage;
  using Out = typename OutTag::Storage;
  using Bits = std::make_unsigned_t<std::conditional_t<
      sizeof(In) == 2, int16_t,
      std::conditional_t<sizeof(In) == 4, int32_t, int64_t>>>;
  const int64_t n = x.element_count();
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  if (out.element_count() != n || random.element_count() != n) {
    return InstructionError(hlo, "operand, random bits and result differ in element count");
  }
  // The result type's limits as values of the operand's type (rounded the
  // way the operand type rounds them, e.g. 32767 -> 32768 in bf16).
  auto as_operand_type = [](Out limit) {
    using C = typename InTag::Compute;
    return static_cast<double>(InTag::Load(InTag::Store(static_cast<C>(limit))));
  };
  const double max_limit = as_operand_type(std::numeric_limits<Out>::max());
  const double min_limit = as_operand_type(std::numeric_limits<Out>::min());
  const In* src = reinterpret_cast<const In*>(x.raw());
  const Bits* bits = reinterpret_cast<const Bits*>(random.raw());
  Out* dst = reinterpret_cast<Out*>(out.mutable_raw());
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(InTag::Load(src[i]));
    if (std::isnan(v)) {
      dst[i] = 0;
      continue;
    }
    if (v >= max_limit) {
      dst[i] = std::numeric_limits<Out>::max();
      continue;
    }
    if (v <= min_limit) {
      dst[i] = std::numeric_limits<Out>::min();
      continue;
    }
    const bool negative = std::signbit(v);
    const double magnitude = std::fabs(v);
    Out whole = static_cast<Out>(magnitude);
    // Exact: the fraction of a value of the operand's type fits its mantissa.
    const double fraction = magnitude - static_cast<double>(whole);
    if (fraction != 0) {
      const Bits fixed =
          static_cast<Bits>(std::ldexp(fraction, std::numeric_limits<Bits>::digits));
      if (bits[i] < fixed) {
        whole = whole == std::numeric_limits<Out>::max() ? std::numeric_limits<Out>::min()
                                                         : static_cast<Out>(whole + 1);
      }
    }
    dst[i] = negative ? static_cast<Out>(0 - whole) : whole;
  }
  return std::move(out);
}

}  // namespace

absl::StatusOr<Literal> EvalStochasticConvert(const HloInstruction& hlo, Operands ops) {
  if (ops.size() != 2 || !hlo.shape().IsArray()) {
    return InstructionError(hlo, "needs an operand and a random-bits operand");
  }
  const Literal& x = *ops[0];
  const Literal& random = *ops[1];
  const PrimitiveType in_type = x.shape().element_type();
  const PrimitiveType bits_type = random.shape().element_type();
  const PrimitiveType out_type = hlo.shape().element_type();
  if (x.shape().dimensions() != random.shape().dimensions()) {
    return InstructionError(hlo, "operand and random bits differ in shape");
  }
  const bool bits_ok = (in_type == xla::F16 || in_type == xla::BF16)
                           ? bits_type == xla::U16
                           : in_type == xla::F32 ? bits_type == xla::U32
                                                 : in_type == xla::F64 && bits_type == xla::U64;
  if (!bits_ok) {
    return InstructionError(hlo, "random bits of type ", PrimitiveTypeName(bits_type),
                            " do not match operand type ", PrimitiveTypeName(in_type));
  }
  return DispatchType<false>(in_type, [&](auto in_tag) -> absl::StatusOr<Literal> {
    using InTag = decltype(in_tag);
    if constexpr (!kIsFloat<InTag>) {
      return InstructionError(hlo, "operand must be floating point");
    } else {
      return DispatchType<false>(out_type, [&](auto out_tag) -> absl::StatusOr<Literal> {
        using OutTag = decltype(out_tag);
        using OutStorage = typename OutTag::Storage;
        if constexpr (!kIsInt<OutTag> || !std::is_signed<OutStorage>::value) {
          return InstructionUnimplemented(hlo, "only signed integer results are supported (as in XLA), not ",
                                          PrimitiveTypeName(out_type));
        } else {
          return StochasticConvertTyped<InTag, OutTag>(hlo, x, random);
        }
      });
    }
  });
}

}  // namespace eval
}  // namespace hloc
