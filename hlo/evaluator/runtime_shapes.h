// Bounded dynamic shapes in the evaluator.
//
// A value of a shape such as f32[<=8] is held as a literal of its runtime
// size: set-dimension-size(p, 3) on dimension 0 yields an f32[3] literal with
// the first 3 elements of p, get-dimension-size reads the literal's dimension,
// and an entry result of dynamic shape comes back at its runtime size. Every
// op therefore sees only the valid region, with XLA's meaning.
//
// An op family computes its result shape from the instruction, which holds
// the bounds. So for an instruction whose operands are smaller than their
// declared shapes (or whose own shape is dynamic), MakeRuntimeOp builds a
// detached copy of it whose operands are placeholders of the runtime shapes
// and whose result shape holds the runtime sizes; the family evaluates that
// copy unchanged. The runtime result size, per opcode:
//
//   elementwise (unary, binary, compare, select, clamp, map, convert, ...):
//       the operands' runtime size; a static operand at the bound is cut to
//       the size of the dynamic ones; two dynamic operands that disagree are
//       an error
//   broadcast      result dimension dims[i] takes operand dimension i's size
//   reshape        the operand's runtime element count; the one dynamic
//                  result dimension takes what the static ones leave (the
//                  valid elements in row-major order)
//   transpose, reverse, sort     the permuted / same sizes
//   slice          a dynamic result dimension is cut at the runtime size; a
//                  static one may not read past it
//   concatenate    sizes add up along the dimension
//   pad            low + high + size + (size - 1) * interior
//   reduce         the kept dimensions' sizes (only valid elements reduced)
//   dot            batch and free sizes; contracting sizes must agree
//   gather         shape inference on the runtime operands (batch sizes)
//
// Any other opcode meeting a runtime size below its bound is an Unimplemented
// error naming the instruction: never a guess.
#ifndef HLOC_HLO_EVALUATOR_RUNTIME_SHAPES_H_
#define HLOC_HLO_EVALUATOR_RUNTIME_SHAPES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/evaluator/ops.h"

namespace hloc {
namespace eval {

// An instruction re-shaped to its operands' runtime sizes.
struct RuntimeOp {
  std::vector<std::unique_ptr<HloInstruction>> placeholders;  // Its operands.
  std::unique_ptr<HloInstruction> instruction;
  std::vector<Literal> trimmed;            // Static operands cut to the runtime size.
  std::vector<const Literal*> operands;    // What to evaluate it on.
};

// Whether `hlo` on `ops` needs MakeRuntimeOp: an operand literal smaller than
// its declared shape, or a dynamic result shape.
bool NeedsRuntimeShapes(const HloInstruction& hlo, Operands ops);
absl::StatusOr<std::unique_ptr<RuntimeOp>> MakeRuntimeOp(const HloInstruction& hlo, Operands ops);

// set-dimension-size: the operand cut to `size` along the dimension. A size
// below 0 or above the bound, or above the operand's own runtime size (its
// elements past that are padding, not values), is an error.
absl::StatusOr<Literal> EvalSetDimensionSize(const HloInstruction& hlo, Operands ops);
// get-dimension-size: the operand's runtime size along the dimension.
absl::StatusOr<Literal> EvalGetDimensionSize(const HloInstruction& hlo, Operands ops);
// XLA's "PadToStatic" and "SliceToDynamic" custom calls
// (hlo/dynamic_custom_calls.h).
absl::StatusOr<Literal> EvalPadToStatic(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalSliceToDynamic(const HloInstruction& hlo, Operands ops);

// Whether a value of shape `value` may be passed where `declared` is
// expected: compatible, or a dynamic dimension no larger than its bound.
bool FitsDeclaredShape(const Shape& value, const Shape& declared);
// Why it may not ("tuple element 0 dimension 0 has size 9, above its bound
// 8"); empty when it may.
std::string DeclaredShapeMismatch(const Shape& value, const Shape& declared);

}  // namespace eval
}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_RUNTIME_SHAPES_H_
