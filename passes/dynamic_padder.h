// DynamicPadder: bounded dynamic shapes (f32[<=8]) become static shapes at
// their bound plus explicit s32 sizes, so the compiled backends, which know
// only static buffers, give the reference interpreter's answer.
//
// A value of a dynamic shape lives in a buffer of its bound; its runtime size
// per dimension is an s32 scalar the pass tracks beside it (none: the bound).
// Walking the entry computation in post order:
//
//   set-dimension-size(x, n)   copy(x), size n (checked: 0 <= n <= bound)
//   get-dimension-size(x)      x's tracked size (or the bound as a constant)
//   elementwise, broadcast,    sizes follow the dimensions; the padding
//   transpose, gather (on the  elements hold whatever, nothing reads them
//   indices' batch dims)
//   reduce over a sized dim    input masked with the init value:
//                              select(iota < size, x, init)
//   dot contracting a sized    both operands masked with zeros (garbage
//   dim                        padding could be inf, and inf * 0 is nan)
//   reduce-window over a       each input masked with its init value (what
//   sized dim                  the op pads with); size from the window
//   convolution                input masked with zeros along sized
//                              spatial dims (size from the window) and
//                              features (the kernel too); sized batch and
//                              kernel output features carried over; not
//                              with a sized kernel window or groups
//   reshape                    static unit dimensions added or dropped
//                              ([<=n] -> [1, <=n]), or only a sized major
//                              dimension: [<=n, a, b] -> [<=n * k, ...]
//   slice                      unit stride; size min(n, limit) - start
//   concatenate                only the last operand sized along the axis
//   pad                        low edge padding only on a sized dimension
//   reverse along a sized dim  operand rotated by the size first, so
//                              the valid elements end at the bound
//   sort along a sized dim     one more operand keys the padding last
//   (any number of operands)   (0 valid, 1 padding; lower key first)
//   tuple, get-tuple-element   sizes kept per array leaf of the tuple
//   variadic reduce            each result element the kept sizes
//
// First, in every computation, a set-dimension-size whose result dimension
// is static becomes its operand and a get-dimension-size of a static
// dimension its bound (TF emits both around ops of known size).
//
// Loops and branches. A while whose carried value holds runtime-sized
// arrays, or a conditional whose branch operands or result do, calls padded
// copies of its computations: each takes (its parameter at the bound, one
// s32 size per dynamic dimension of it) and a body or branch returns (its
// result at the bound, the result's sizes); the copy is padded like the
// entry, starting from those sizes, so the loop carries the sizes from one
// iteration to the next. The originals, no longer called, are removed.
// A runtime size check inside a body or branch (a set-dimension-size, a
// static slice of a runtime-sized dimension) comes out as one more
// (value, limit) pair beside the result, and the entry checks it: a loop
// carries the first failing pair of all its iterations, a conditional has
// a slot per check of every branch ((0, 0), passing, in the branches that
// do not make it). A check in a loop condition ends the loop when it fails
// (the condition returns false), and a copy of the condition run on the
// loop's result gives the pair the entry checks. A call whose
// callee has dynamic shapes is inlined first, and so is an XlaBuilder call's
// decomposition (hlo/builder_custom_calls.h). XLA's PadToStatic and
// SliceToDynamic custom calls become the padded value with its sizes.
//
// Anything else meeting a dynamic shape is refused with an error naming the
// instruction, as are dynamic shapes in computations other than the entry,
// loops, branches and calls (custom calls' computations, say).
//
// Entry parameters. A dynamic array parameter (p: f32[<=8, 3]) becomes a
// parameter at its bound (f32[8, 3]) and one new trailing s32[] parameter
// per dynamic dimension (p.size0), in parameter, array leaf, then dimension
// order (a tuple parameter q: (f32[<=8], s32[]) gets q.0.size0); that
// parameter is the dimension's tracked size. The caller copies each argument,
// of any size up to the bound, into a buffer of the bound and passes its
// sizes (PadDynamicArguments below; compiled programs and the API call it
// through backend/common/declared_result.h). Unbounded ("?") dimensions are
// refused.
//
// The entry result. When the module had dynamic shapes, the entry root
// becomes the tuple (result, (sizes...), (checks...)): the result at its
// bound, one s32 size per dynamic dimension of its array leaves in order,
// and two s32 values (value, limit) per runtime check. The module's frontend
// attribute kDynamicResultAttribute records the declared result shape, the
// declared entry parameters (when one was dynamic) and each check's message;
// a backend reads it with FindDynamicResultContract, pads its arguments with
// PadDynamicArguments and turns what it ran into the interpreter's value
// with ShrinkDynamicResult (leaves cut to their sizes, a failed check an
// error naming the instruction).
#ifndef HLOC_PASSES_DYNAMIC_PADDER_H_
#define HLOC_PASSES_DYNAMIC_PADDER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "passes/pass.h"

namespace hloc {

class DynamicPadder : public HloPass {
 public:
  absl::string_view name() const override { return "dynamic-padder"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

inline constexpr char kDynamicResultAttribute[] = "hloc_dynamic_result";

// What DynamicPadder promised about the entry result.
struct DynamicResultContract {
  Shape declared;                   // The entry result before the pass.
  // The entry parameters before the pass when one of them was dynamic, else
  // empty (the arguments are then the parameters' static shapes).
  std::vector<Shape> parameters;
  std::vector<std::string> parameter_names;  // Beside `parameters`.
  std::vector<std::string> checks;  // One message per (value, limit) pair.
};

// The contract of a module DynamicPadder rewrote; nullopt for any other.
absl::StatusOr<std::optional<DynamicResultContract>> FindDynamicResultContract(
    const HloModule& module);

// The rewritten entry's arguments for `arguments` of the declared entry
// (contract.parameters non-empty): an argument of a dynamic parameter, of
// any size up to the bound along its dynamic dimensions, copied into an
// array of the bound (the padding is zeros; a tuple argument leaf by leaf),
// and those sizes appended as s32 scalars. Any other argument must match its parameter. A wrong count,
// element type, rank, static dimension or a size past its bound is an
// InvalidArgument error naming the argument, parameter, dimension, size and
// bound.
absl::StatusOr<std::vector<Literal>> PadDynamicArguments(absl::Span<const Literal> arguments,
                                                         const DynamicResultContract& contract);

// `padded` (the rewritten entry's result) as the declared result: each array
// leaf cut to its runtime sizes. A check whose value is outside [0, limit]
// is an InvalidArgument error with the check's message.
absl::StatusOr<Literal> ShrinkDynamicResult(const Literal& padded,
                                            const DynamicResultContract& contract);

}  // namespace hloc

#endif  // HLOC_PASSES_DYNAMIC_PADDER_H_
