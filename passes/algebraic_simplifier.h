// Algebraic simplification: local rewrites real models need, each an identity
// that holds exactly for the value computed (no reassociation of floats):
//   x+0, 0+x, x-0, x*1, 1*x, x/1 -> x;  negate(negate(x)), not(not(x)) -> x
//   reshape/broadcast/transpose/convert/copy that change nothing -> operand
//   reshape(reshape(x)) -> reshape(x); transpose(transpose(x)) -> one transpose
//   broadcast(broadcast(x)) -> one broadcast; slice(slice(x)) -> one slice
//   convert(convert(x)) -> x when the inner conversion is exact (widening)
//   concatenate of one operand, pad by nothing -> operand
//   select(constant pred, a, b) -> a or b
//   set-dimension-size with a static result -> operand
#ifndef HLOC_PASSES_ALGEBRAIC_SIMPLIFIER_H_
#define HLOC_PASSES_ALGEBRAIC_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hloc {

class AlgebraicSimplifier : public HloPass {
 public:
  absl::string_view name() const override { return "algebraic-simplifier"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

// True when every element of `i`'s value is `value`: a constant, or a
// broadcast of such a constant.
bool IsConstantSplat(const HloInstruction* i, double value);

}  // namespace hloc

#endif  // HLOC_PASSES_ALGEBRAIC_SIMPLIFIER_H_
