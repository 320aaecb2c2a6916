// UpcastNarrowTypeArithmetic: arithmetic on element types no backend computes
// natively (s4/u4 and the f8/f6/f4 kinds) rewritten as the same op on a wide
// type between converts, so the host and GPU elemental emitters, which only
// load, store and convert these types, compile it:
//
//   add(f8 a, f8 b) -> f8         convert<f8>(add<f32>(convert a, convert b))
//   multiply(s4 a, s4 b) -> s4    convert<s4>(multiply<s8>(convert a, convert b))
//   compare(u4 a, u4 b) -> pred   compare<u8>(convert a, convert b)
//   dot(f8 a, f8 b) -> f32        dot<f32>(convert a, convert b)
//
// Why this is exact (the interpreter, hlo/evaluator/element_types.h, is the
// definition): a narrow float is loaded as f32 exactly, the op computes in
// f32 and the result is rounded once to the narrow type, which is what the
// convert back does. s4/u4 compute in 8 bits of the same signedness and wrap
// to 4 bits on store; an integer convert wraps the same way, and wrapping
// mod 256 and then mod 16 is wrapping mod 16. Integer division keeps XLA's
// rules: -8 / -1 is 8 in s8 and wraps back to -8 (INT_MIN / -1 = INT_MIN),
// x / 0 is all ones in both widths.
//
// Dots and convolutions accumulate in the wide type and round once at the end,
// as the interpreter does. So do reduce and reduce-window of one array whose
// reducer is a single binary op (add, multiply, max, ...): the interpreter
// runs those as a typed loop accumulating in the compute type, so they become
// the same reduction on the wide type with a wide reducer; so do f16/bf16
// products and reduce-window sums (in f32, as the interpreter computes
// them). Other reducers, sort comparators and scatter combiners keep their
// narrow accumulators:
// their computations are rewritten like any other, so every step still
// rounds to the narrow type, as in the interpreter's per-element calls.
//
// popcnt and shift-right-logical on s4 read the 4 bits, not an s8's sign
// extension: their operands go s4 -> u4 -> u8 (integer converts wrap, so -1
// becomes 15) and the u8 result wraps back to s4. clz on s4/u4 counts the
// zero-extended u8 and subtracts the 4 leading zeros the extension added.
//
// Declined (left for the interpreter, never an error): operands of mixed
// element types; s1/s2/u1/u2.
#ifndef HLOC_PASSES_EXPANDERS_NARROW_TYPE_UPCASTING_H_
#define HLOC_PASSES_EXPANDERS_NARROW_TYPE_UPCASTING_H_

#include <optional>

#include "hlo/instruction.h"
#include "passes/pass.h"

namespace hloc {

// The type a backend computes `type` in: f32 for the f8/f6/f4 kinds, s8/u8
// for s4/u4; nullopt for types with native arithmetic.
std::optional<PrimitiveType> UpcastTypeFor(PrimitiveType type);

class UpcastNarrowTypeArithmetic : public HloPass {
 public:
  absl::string_view name() const override { return "upcast-narrow-type-arithmetic"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_NARROW_TYPE_UPCASTING_H_
