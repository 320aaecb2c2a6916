// rng: uniform and normal draws from the evaluator's deterministic stream
// (splitmix64 seeded by EvaluatorOptions::rng_seed). XLA does not define
// rng's bits, so values are reproducible run to run but not equal to XLA's.
// rng-bit-generator's algorithms are defined bit-exactly by XLA and are not
// reproduced here: it is reported as unimplemented.
#include <cmath>

#include "hlo/evaluator/ops.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {

absl::StatusOr<Literal> EvalRng(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  if (ops.size() != 2 || ops[0]->element_count() != 1 || ops[1]->element_count() != 1) {
    return InstructionError(hlo, "rng needs two scalar parameters");
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  const PrimitiveType type = hlo.shape().element_type();
  auto uniform01 = [&]() { return static_cast<double>(ctx.NextRandom() >> 11) * 0x1.0p-53; };
  switch (hlo.attrs().distribution) {
    case xla::RNG_UNIFORM:
      if (IsFloatingPoint(type)) {
        const double a = ops[0]->GetAsDouble(0), b = ops[1]->GetAsDouble(0);
        for (int64_t i = 0; i < out.element_count(); ++i) {
          double v = a + (b - a) * uniform01();
          out.SetFromDouble(i, v);
          if (out.GetAsDouble(i) >= b && b > a) out.SetFromDouble(i, a);  // Keep [a, b).
        }
      } else if (IsInteger(type)) {
        const int64_t a = ops[0]->GetAsInt64(0), b = ops[1]->GetAsInt64(0);
        const uint64_t range = static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
        for (int64_t i = 0; i < out.element_count(); ++i) {
          const uint64_t r = range == 0 ? 0 : ctx.NextRandom() % range;
          out.SetFromInt64(i, static_cast<int64_t>(static_cast<uint64_t>(a) + r));
        }
      } else if (type == xla::PRED) {
        for (int64_t i = 0; i < out.element_count(); ++i) out.SetFromInt64(i, ctx.NextRandom() & 1);
      } else {
        return InstructionUnimplemented(hlo, "uniform rng of ", PrimitiveTypeName(type));
      }
      return std::move(out);
    case xla::RNG_NORMAL: {
      if (!IsFloatingPoint(type)) return InstructionError(hlo, "normal rng needs a float type");
      const double mean = ops[0]->GetAsDouble(0), stddev = ops[1]->GetAsDouble(0);
      for (int64_t i = 0; i < out.element_count(); ++i) {
        // Box-Muller.
        const double u1 = 1.0 - uniform01(), u2 = uniform01();
        const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
        out.SetFromDouble(i, mean + stddev * z);
      }
      return std::move(out);
    }
    default:
      return InstructionError(hlo, "unknown rng distribution");
  }
}

absl::StatusOr<Literal> EvalRngBitGenerator(const HloInstruction& hlo, Operands ops) {
  (void)ops;
  return InstructionUnimplemented(
      hlo, "rng-bit-generator (XLA's three-fry/philox bit streams) is not implemented");
}

}  // namespace eval
}  // namespace hloc
