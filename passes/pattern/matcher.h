// Declarative patterns over HLO instructions, for every pass that looks for a
// shape in the graph. A pattern is a tree of constraints written the way the
// graph reads:
//
//   Op(kAdd).WithOperands(Capture(&dot, Op(kDot)), Broadcast(Capture(&bias)))
//           .Commutative()
//
// matches `add(dot(..), broadcast(b))` and `add(broadcast(b), dot(..))`,
// binding `dot` and `bias`. Constraints cover opcodes, operands (in order or
// either order), result shapes, attributes (any predicate over the
// instruction), single use, and captures. A capture used twice must bind the
// same instruction both times, which is how `multiply(x, x)` is written.
//
// Matching backtracks fully: when an alternative (AnyOf, a commutative operand
// order, the depth of a BroadcastChain) leads to a failure further on, the
// next alternative is tried and every capture made on the way is undone.
//
// A match also reports its members: the instructions a rewrite would replace.
// A node with an opcode constraint contributes the instruction it matched;
// unconstrained nodes (Any, Capture of Any) and nodes marked AsInput() are
// inputs — the values a rewrite reads but does not replace.
#ifndef HLOC_PASSES_PATTERN_MATCHER_H_
#define HLOC_PASSES_PATTERN_MATCHER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "hlo/instruction.h"

namespace hloc::pattern {

struct PatternNode;

class Pattern {
 public:
  // Operands matched position by position; the instruction must have exactly
  // this many operands.
  Pattern WithOperands(std::vector<Pattern> operands) const;
  template <typename... Patterns>
  Pattern WithOperands(const Pattern& first, const Patterns&... rest) const {
    return WithOperands(std::vector<Pattern>{first, rest...});
  }
  // Operand `index` only (the others are not looked at).
  Pattern WithOperand(int64_t index, Pattern operand) const;
  // With two operand patterns: the operands may match in either order.
  Pattern Commutative() const;
  // The instruction has exactly one user and is not its computation's root.
  Pattern OneUse() const;
  Pattern WithOpcode(HloOpcode opcode) const;
  Pattern WithElementType(PrimitiveType type) const;
  Pattern WithRank(int64_t rank) const;
  Pattern WithShape(std::function<bool(const Shape&)> predicate, std::string description) const;
  // Any condition on the instruction (attributes, called computations, ...).
  Pattern Where(std::function<bool(const HloInstruction&)> predicate,
                std::string description) const;
  // The matched instruction is read by a rewrite, not part of it (patterns
  // below it still decide for their own instructions).
  Pattern AsInput() const;

  // "add(capture dot: dot(*, *), broadcast(capture bias: *)) commutative".
  std::string ToString() const;

  const PatternNode& node() const { return *node_; }
  explicit Pattern(std::shared_ptr<const PatternNode> node) : node_(std::move(node)) {}

 private:
  std::shared_ptr<PatternNode> MutableCopy() const;
  std::shared_ptr<const PatternNode> node_;
};

// Any instruction (an input).
Pattern Any();
// An instruction with `opcode` (a member).
Pattern Op(HloOpcode opcode);
// Binds the instruction `pattern` matched to `*out` (written only when the
// whole match succeeds) or to `name` in the Match.
Pattern Capture(HloInstruction** out, Pattern pattern = Any());
Pattern Capture(std::string name, Pattern pattern = Any());
// The first alternative that leads to a whole match.
Pattern AnyOf(std::vector<Pattern> alternatives);

// Shorthands.
Pattern Broadcast(Pattern operand);
Pattern Constant();
// Every element equals `value`, within a few ulps of the constant's type: a
// constant, or a broadcast of a scalar constant (both members).
Pattern SplatConstant(double value);
// Any constant or broadcast of a scalar constant whose elements are all equal.
Pattern AnySplatConstant();
// Zero or more reshapes/broadcasts on top of an instruction matching `base`,
// together equal to one broadcast of `base` (reshapes may only add or drop
// dimensions of size 1). The longest chain is tried first: `base` is tried at
// the first instruction below the chain that is neither a reshape nor a
// broadcast, then upwards. The reshapes and broadcasts are members.
Pattern BroadcastChain(Pattern base);
// An elementwise computation of one value: every instruction reachable from
// the matched one through operands is elementwise (same dimensions), a
// constant, or a broadcast of a scalar constant, down to a single instruction
// matching `input`, which may occur several times (the first way it matches
// is kept). The walk stops at `max_instructions` (no match).
Pattern ElementwiseOf(Pattern input, int64_t max_instructions = 512);

// What a successful match found.
class Match {
 public:
  HloInstruction* root() const { return root_; }
  // The instruction bound to `name`, or nullptr.
  HloInstruction* Get(absl::string_view name) const;
  const std::vector<std::pair<std::string, HloInstruction*>>& captures() const { return captures_; }
  // Members, each once, in the order they were matched.
  const std::vector<HloInstruction*>& members() const { return members_; }
  bool IsMember(const HloInstruction* instruction) const;

 private:
  friend bool Matches(HloInstruction*, const Pattern&, Match*);
  HloInstruction* root_ = nullptr;
  std::vector<std::pair<std::string, HloInstruction*>> captures_;
  std::vector<HloInstruction*> members_;
};

bool Matches(HloInstruction* instruction, const Pattern& pattern, Match* match = nullptr);

// ---- Helpers for patterns and their checks.

// The value of `constant_or_broadcast` when all its elements are equal: a
// constant (splat) or a broadcast of a scalar constant.
std::optional<double> SplatValue(const HloInstruction* constant_or_broadcast);
// When `top` is `base` seen through reshapes that only add or drop size-1
// dimensions and broadcasts: the dimensions of `top` that `base`'s dimensions
// of size > 1 become, in order (what broadcast(squeeze(base), dims) needs).
std::optional<std::vector<int64_t>> EquivalentBroadcastDimensions(const HloInstruction* top,
                                                                  const HloInstruction* base);
// A reduce of one array whose reducer is `binary(param0, param1)` (either order).
bool IsReduceWith(const HloInstruction& instruction, HloOpcode binary);

}  // namespace hloc::pattern

#endif  // HLOC_PASSES_PATTERN_MATCHER_H_
