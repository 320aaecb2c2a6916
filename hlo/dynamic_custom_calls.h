// The two custom calls XLA's own dynamic padder leaves at the edges of a
// module it compiled (and which appear in XLA's optimized dumps), treated by
// hloc as built-in ops: shape inference checks them, the interpreter runs
// them (hlo/evaluator/runtime_shapes.cc) and passes/dynamic_padder.cc
// rewrites them for the backends.
//
//   "PadToStatic"(x: T[d0, <=b1, ...]) -> (T[d0, b1, ...], s32[], ...)
//       x at its bounds, the padding zero, then one s32 per dimension: its
//       runtime size (a static dimension's is its size).
//   "SliceToDynamic"(x: T[b0, b1, ...], n0: s32[], n1: s32[], ...)
//       -> T[b0, <=b1, ...]: x with each dimension dynamic in the result cut
//       to n_d (0 <= n_d <= b_d, else an error); n_d of a static result
//       dimension is not read.
#ifndef HLOC_HLO_DYNAMIC_CUSTOM_CALLS_H_
#define HLOC_HLO_DYNAMIC_CUSTOM_CALLS_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/instruction.h"
#include "hlo/shape.h"

namespace hloc {

enum class DynamicCustomCall { kPadToStatic, kSliceToDynamic };

inline constexpr char kPadToStaticTarget[] = "PadToStatic";
inline constexpr char kSliceToDynamicTarget[] = "SliceToDynamic";

// Which of the two `target` names, if any.
std::optional<DynamicCustomCall> DynamicCustomCallFromTarget(absl::string_view target);
// Same for a custom-call instruction (nullopt for any other instruction).
std::optional<DynamicCustomCall> DynamicCustomCallOf(const HloInstruction& instruction);

// The result shape the call's operands give, or an InvalidArgument error
// naming what is wrong (the declared shape must then match it).
absl::StatusOr<Shape> InferDynamicCustomCallShape(DynamicCustomCall kind,
                                                  const HloInstruction& instruction,
                                                  absl::Span<const Shape* const> operands);

}  // namespace hloc

#endif  // HLOC_HLO_DYNAMIC_CUSTOM_CALLS_H_
