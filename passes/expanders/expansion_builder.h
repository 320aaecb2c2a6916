// ExpansionBuilder: what the expanders in this folder use to replace one
// instruction by ordinary HLO. It adds instructions to one computation,
// takes every result shape from shape inference (so a malformed expansion is
// caught where it is built, not by the verifier afterwards), and keeps the
// expansion looking like the instruction it replaces:
//
//   - every new instruction is named after the replaced one ("bn.mean",
//     "bn.mean.1", ...) and shares its metadata, so dumps and profiles still
//     point at the source line;
//   - when the replaced instruction's shape carries layouts, new array
//     shapes get row-major ones (hloc's backends read every array row-major;
//     layouts only matter to layout-sensitive verification).
//
// Errors are sticky: after the first failure every method returns nullptr
// and status() says what failed, so an expansion reads as straight-line code
// and checks once at the end. Helper computations (reducers, loop bodies)
// are added to the module with NewComputation and built with a builder of
// their own.
#ifndef HLOC_PASSES_EXPANDERS_EXPANSION_BUILDER_H_
#define HLOC_PASSES_EXPANDERS_EXPANSION_BUILDER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"

namespace hloc {
namespace expanders {

class ExpansionBuilder {
 public:
  // Builds into `computation` (which must belong to a module) on behalf of
  // `origin`, the instruction being replaced (its name, metadata, layouts).
  ExpansionBuilder(HloComputation* computation, const HloInstruction* origin);

  const absl::Status& status() const { return status_; }
  HloComputation* computation() const { return computation_; }
  HloModule* module() const { return computation_->parent(); }

  // Adds opcode(operands): `configure` sets its attributes and called
  // computations, shape inference gives its shape (`declared` supplies what
  // inference cannot: result dimensions of broadcast/reshape/iota, the
  // element type of convert), `suffix` names it (default: the opcode).
  // nullptr after an earlier failure or for a null operand.
  HloInstruction* Build(HloOpcode opcode, absl::Span<HloInstruction* const> operands,
                        const std::function<void(HloInstruction&)>& configure = nullptr,
                        Shape declared = Shape(), absl::string_view suffix = "");

  HloInstruction* Parameter(int64_t number, const Shape& shape, absl::string_view name);
  HloInstruction* Constant(Literal literal);
  // A scalar constant of `type` (value converted as Literal::SetFromDouble does).
  HloInstruction* Scalar(PrimitiveType type, double value);
  // A scalar int constant of s32 or s64.
  HloInstruction* IndexScalar(PrimitiveType type, int64_t value);

  HloInstruction* Unary(HloOpcode opcode, HloInstruction* x);
  HloInstruction* Binary(HloOpcode opcode, HloInstruction* a, HloInstruction* b);
  HloInstruction* Compare(HloInstruction* a, HloInstruction* b, ComparisonDirection direction);
  HloInstruction* Select(HloInstruction* predicate, HloInstruction* on_true,
                         HloInstruction* on_false);
  HloInstruction* Convert(HloInstruction* x, PrimitiveType type);
  // Same as x when x already has `type`.
  HloInstruction* ConvertIfNeeded(HloInstruction* x, PrimitiveType type);
  // x's dimensions become result dimensions `mapping` of a `dimensions` array.
  HloInstruction* Broadcast(HloInstruction* x, const std::vector<int64_t>& dimensions,
                            std::vector<int64_t> mapping);
  // A scalar broadcast to `dimensions`.
  HloInstruction* Splat(HloInstruction* scalar, const std::vector<int64_t>& dimensions);
  HloInstruction* Reshape(HloInstruction* x, const std::vector<int64_t>& dimensions);
  HloInstruction* Transpose(HloInstruction* x, std::vector<int64_t> permutation);
  // x[starts:limits] with unit strides.
  HloInstruction* Slice(HloInstruction* x, std::vector<int64_t> starts, std::vector<int64_t> limits);
  HloInstruction* Concatenate(absl::Span<HloInstruction* const> parts, int64_t dimension);
  HloInstruction* Iota(PrimitiveType type, const std::vector<int64_t>& dimensions,
                       int64_t iota_dimension);
  HloInstruction* Reduce(HloInstruction* x, HloInstruction* init, std::vector<int64_t> dimensions,
                         HloComputation* reducer);
  HloInstruction* DynamicSlice(HloInstruction* x, absl::Span<HloInstruction* const> starts,
                               std::vector<int64_t> sizes);
  HloInstruction* DynamicUpdateSlice(HloInstruction* x, HloInstruction* update,
                                     absl::Span<HloInstruction* const> starts);
  HloInstruction* Dot(HloInstruction* lhs, HloInstruction* rhs,
                      const xla::DotDimensionNumbers& dimension_numbers);
  HloInstruction* Tuple(absl::Span<HloInstruction* const> elements);
  HloInstruction* GetTupleElement(HloInstruction* tuple, int64_t index);
  HloInstruction* While(HloInstruction* init, HloComputation* condition, HloComputation* body);

  // The instructions of `callee` copied here with its parameters replaced by
  // `arguments`; returns the copy of its root (how a select or comparator
  // computation becomes part of a reducer).
  HloInstruction* Inline(const HloComputation& callee, absl::Span<HloInstruction* const> arguments);

  // A builder for another computation of the same module, on behalf of the
  // same origin.
  ExpansionBuilder ForComputation(HloComputation* computation) const {
    return ExpansionBuilder(computation, origin_);
  }

  // An empty computation added to the module, named after the origin.
  HloComputation* NewComputation(absl::string_view suffix);
  // A computation (a, b) -> opcode(a, b) on scalars of `type`.
  HloComputation* ScalarBinaryComputation(HloOpcode opcode, PrimitiveType type);

  // Records a failure (keeps the first).
  void Fail(absl::Status status);
  // For a helper handed a null value (an earlier failure): records that and
  // returns nullptr.
  HloInstruction* MissingOperand();

 private:
  // Infers `instruction`'s shape and adds it (drops it, recording why, when
  // inference fails).
  HloInstruction* Add(std::unique_ptr<HloInstruction> instruction, absl::string_view suffix);
  // `shape` with row-major layouts on its array leaves when layouts are kept.
  Shape WithLayouts(Shape shape) const;

  HloComputation* computation_;
  const HloInstruction* origin_;
  bool keep_layouts_;
  absl::Status status_;
};

// True when an array leaf of `shape` has a layout.
bool HasLayouts(const Shape& shape);

// Replaces every use of `old_instruction` by `replacement` (giving it the
// old shape, layouts included, when they agree ignoring layouts) and removes
// the old instruction.
absl::Status ReplaceInstruction(HloInstruction* old_instruction, HloInstruction* replacement);

}  // namespace expanders
}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_EXPANSION_BUILDER_H_
