#include "passes/expanders/rng_expander.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "hlo/status_macros.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace {

using expanders::ExpansionBuilder;

// rng-bit-generator(Philox, key `key`) of `dims` elements of `type`.
HloInstruction* Draw(ExpansionBuilder& b, PrimitiveType type, const std::vector<int64_t>& dims,
                     uint64_t key) {
  Literal state(Shape(xla::U64, {2}));
  state.SetFromInt64(0, static_cast<int64_t>(key));
  state.SetFromInt64(1, 0);
  HloInstruction* initial = b.Constant(std::move(state));
  const Shape bits(type, dims);
  HloInstruction* generated = b.Build(
      HloOpcode::kRngBitGenerator, {initial},
      [](HloInstruction& built) { built.mutable_attrs()->rng_algorithm = xla::RNG_PHILOX; },
      Shape::Tuple({Shape(xla::U64, {2}), bits}), "bits");
  return b.GetTupleElement(generated, 1);
}

// Uniform in [0, 1) of type `compute` (f32 or f64), from a draw.
HloInstruction* Unit(ExpansionBuilder& b, PrimitiveType compute, const std::vector<int64_t>& dims,
                     uint64_t key) {
  const bool wide = compute == xla::F64;
  HloInstruction* bits = Draw(b, wide ? xla::U64 : xla::U32, dims, key);
  const int shift = wide ? 11 : 8;
  HloInstruction* top = b.Binary(HloOpcode::kShiftRightLogical, bits,
                                 b.Splat(b.Scalar(wide ? xla::U64 : xla::U32, shift), dims));
  return b.Binary(HloOpcode::kMultiply, b.Convert(top, compute),
                  b.Splat(b.Scalar(compute, std::ldexp(1.0, -(wide ? 53 : 24))), dims));
}

// Whether it replaced `rng` (types it has no rule for stay).
absl::StatusOr<bool> Expand(HloInstruction* rng, uint64_t key) {
  const Shape& shape = rng->shape();
  const PrimitiveType type = shape.element_type();
  const std::vector<int64_t>& dims = shape.dimensions();
  ExpansionBuilder b(rng->parent(), rng);
  HloInstruction* out = nullptr;
  if (IsFloatingPoint(type)) {
    const PrimitiveType compute = type == xla::F64 ? xla::F64 : xla::F32;
    HloInstruction* a = b.Splat(b.ConvertIfNeeded(rng->operand(0), compute), dims);
    HloInstruction* c = b.Splat(b.ConvertIfNeeded(rng->operand(1), compute), dims);
    if (rng->attrs().distribution == xla::RNG_UNIFORM) {
      HloInstruction* u = Unit(b, compute, dims, key);
      HloInstruction* v = b.Binary(HloOpcode::kAdd, a,
                                   b.Binary(HloOpcode::kMultiply, b.Binary(HloOpcode::kSubtract, c, a), u));
      HloInstruction* narrowed = b.ConvertIfNeeded(b.ConvertIfNeeded(v, type), compute);
      HloInstruction* past = b.Binary(HloOpcode::kAnd,
                                      b.Compare(narrowed, c, ComparisonDirection::kGe),
                                      b.Compare(c, a, ComparisonDirection::kGt));
      out = b.ConvertIfNeeded(b.Select(past, a, v), type);
    } else {
      // Box-Muller: two uniforms per element, from two keys.
      HloInstruction* u1 = b.Binary(HloOpcode::kSubtract, b.Splat(b.Scalar(compute, 1), dims),
                                    Unit(b, compute, dims, key));
      HloInstruction* u2 = Unit(b, compute, dims, key ^ 0xA5A5A5A5A5A5A5A5ull);
      HloInstruction* radius = b.Unary(
          HloOpcode::kSqrt, b.Binary(HloOpcode::kMultiply, b.Splat(b.Scalar(compute, -2), dims),
                                     b.Unary(HloOpcode::kLog, u1)));
      HloInstruction* angle = b.Binary(HloOpcode::kMultiply,
                                       b.Splat(b.Scalar(compute, 2 * M_PI), dims), u2);
      HloInstruction* z = b.Binary(HloOpcode::kMultiply, radius, b.Unary(HloOpcode::kCos, angle));
      out = b.ConvertIfNeeded(b.Binary(HloOpcode::kAdd, a, b.Binary(HloOpcode::kMultiply, c, z)),
                              type);
    }
  } else if (rng->attrs().distribution != xla::RNG_UNIFORM) {
    return false;  // Not a valid rng: the interpreter says why.
  } else if (type == xla::S8 || type == xla::S16 || type == xla::S32 || type == xla::S64 ||
             type == xla::U8 || type == xla::U16 || type == xla::U32 || type == xla::U64) {
    // a + draw mod (b - a), in u64 (wrapping, as the interpreter's).
    HloInstruction* a = b.Convert(rng->operand(0), xla::U64);
    HloInstruction* range = b.Binary(HloOpcode::kSubtract, b.Convert(rng->operand(1), xla::U64), a);
    HloInstruction* zero = b.Scalar(xla::U64, 0);
    HloInstruction* empty = b.Compare(range, zero, ComparisonDirection::kEq);
    HloInstruction* divisor = b.Select(empty, b.Scalar(xla::U64, 1), range);
    HloInstruction* r = b.Binary(HloOpcode::kRemainder, Draw(b, xla::U64, dims, key),
                                 b.Splat(divisor, dims));
    out = b.Convert(b.Binary(HloOpcode::kAdd, b.Splat(a, dims), r), type);
  } else {
    return false;  // Left to the interpreter (which says so).
  }
  HLOC_RETURN_IF_ERROR(b.status());
  HLOC_RETURN_IF_ERROR(expanders::ReplaceInstruction(rng, out));
  return true;
}

}  // namespace

absl::StatusOr<bool> RngExpander::Run(HloModule& module) {
  bool changed = false;
  uint64_t position = 0;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* rng : computation->MakeInstructionPostOrder()) {
      if (rng->opcode() != HloOpcode::kRng || rng->operand_count() != 2) continue;
      if (!rng->control_predecessors().empty() || !rng->control_successors().empty()) continue;
      if (!rng->shape().IsArray() || !rng->operand(0)->shape().IsScalar() ||
          !rng->operand(1)->shape().IsScalar()) {
        continue;
      }
      // splitmix64's increment spreads the positions over the key space.
      const uint64_t key = 0x6A09E667F3BCC909ull + 0x9E3779B97F4A7C15ull * ++position;
      HLOC_ASSIGN_OR_RETURN(const bool expanded, Expand(rng, key));
      changed = changed || expanded;
    }
  }
  return changed;
}

}  // namespace hloc
