// The matching engine behind passes/pattern/matcher.h.
//
// Matching is written in continuation-passing style: MatchAt(node, i, k)
// matches `node` at `i` and then calls `k` to match whatever comes after it
// (the next operand, the parent's remaining operands, ...). A node with
// alternatives tries each and returns true as soon as one alternative *and*
// its continuation succeed, so a choice made early is revisited when
// something later fails. Every MatchAt that returns false leaves the state as
// it found it (captures and members are undone by truncation).
#include "passes/pattern/matcher.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/computation.h"

namespace hloc::pattern {

struct PatternNode {
  enum class Kind { kInstruction, kAnyOf, kBroadcastChain, kElementwiseOf };
  Kind kind = Kind::kInstruction;
  std::optional<HloOpcode> opcode;
  bool has_operand_list = false;
  // kInstruction: the operand list; kAnyOf: alternatives; kBroadcastChain and
  // kElementwiseOf: the base / input pattern.
  std::vector<Pattern> children;
  std::vector<std::pair<int64_t, Pattern>> indexed_operands;
  bool commutative = false;
  bool one_use = false;
  std::vector<std::pair<std::function<bool(const HloInstruction&)>, std::string>> predicates;
  bool as_input = false;
  std::string capture_name;
  HloInstruction** capture_out = nullptr;
  int64_t max_instructions = 512;
};

namespace {

using Continuation = absl::FunctionRef<bool()>;

struct Binding {
  const std::string* name;  // Named capture, or nullptr.
  HloInstruction** out;     // Pointer capture, or nullptr.
  HloInstruction* value;
};

struct State {
  std::vector<Binding> bindings;
  std::vector<HloInstruction*> members;
  void Rollback(size_t bindings_size, size_t members_size) {
    bindings.resize(bindings_size);
    members.resize(members_size);
  }
};

HloInstruction* FindBinding(const State& state, const PatternNode& node) {
  for (const Binding& b : state.bindings) {
    if (node.capture_out != nullptr && b.out == node.capture_out) return b.value;
    if (!node.capture_name.empty() && b.name != nullptr && *b.name == node.capture_name) {
      return b.value;
    }
  }
  return nullptr;
}

bool IsMemberNode(const PatternNode& node) {
  if (node.as_input) return false;
  return node.kind != PatternNode::Kind::kInstruction || node.opcode.has_value();
}

bool SameDimensions(const Shape& a, const Shape& b) {
  return a.IsArray() && b.IsArray() && a.dimensions() == b.dimensions();
}

bool IsScalarConstant(const HloInstruction* i) {
  return i->opcode() == HloOpcode::kConstant && i->shape().IsScalar();
}

bool MatchAt(const PatternNode& node, HloInstruction* i, State& state, Continuation k);

bool MatchSequence(const std::vector<std::pair<int64_t, const PatternNode*>>& entries, size_t next,
                   HloInstruction* i, State& state, Continuation k) {
  if (next == entries.size()) return k();
  return MatchAt(*entries[next].second, i->operand(entries[next].first), state,
                 [&] { return MatchSequence(entries, next + 1, i, state, k); });
}

bool MatchOperands(const PatternNode& node, HloInstruction* i, State& state, Continuation k) {
  std::vector<std::pair<int64_t, const PatternNode*>> entries;
  if (node.has_operand_list) {
    if (i->operand_count() != static_cast<int64_t>(node.children.size())) return false;
    for (size_t j = 0; j < node.children.size(); ++j) {
      entries.emplace_back(static_cast<int64_t>(j), &node.children[j].node());
    }
  }
  for (const auto& [index, pattern] : node.indexed_operands) {
    if (index < 0 || index >= i->operand_count()) return false;
    entries.emplace_back(index, &pattern.node());
  }
  if (MatchSequence(entries, 0, i, state, k)) return true;
  if (node.commutative && node.has_operand_list && node.children.size() == 2) {
    std::swap(entries[0].first, entries[1].first);
    return MatchSequence(entries, 0, i, state, k);
  }
  return false;
}

bool MatchBroadcastChain(const PatternNode& node, HloInstruction* top, State& state,
                         Continuation k) {
  // levels[0] = top, then down through reshapes and broadcasts to the first
  // instruction that is neither. The base is tried deepest first.
  std::vector<HloInstruction*> levels = {top};
  while (levels.back()->opcode() == HloOpcode::kReshape ||
         levels.back()->opcode() == HloOpcode::kBroadcast) {
    levels.push_back(levels.back()->operand(0));
  }
  for (size_t depth = levels.size(); depth-- > 0;) {
    HloInstruction* base = levels[depth];
    bool matched = MatchAt(node.children[0].node(), base, state, [&] {
      if (!EquivalentBroadcastDimensions(top, base).has_value()) return false;
      size_t members_size = state.members.size();
      if (IsMemberNode(node)) {
        state.members.insert(state.members.end(), levels.begin(), levels.begin() + depth);
      }
      if (k()) return true;
      state.members.resize(members_size);
      return false;
    });
    if (matched) return true;
  }
  return false;
}

bool MatchElementwiseOf(const PatternNode& node, HloInstruction* root, State& state,
                        Continuation k) {
  if (!root->IsElementwise() || !root->shape().IsArray()) return false;
  size_t bindings_size = state.bindings.size(), members_size = state.members.size();
  HloInstruction* input = nullptr;
  std::vector<HloInstruction*> cone;
  absl::flat_hash_set<HloInstruction*> seen;
  std::vector<HloInstruction*> stack = {root};
  bool ok = true;
  while (ok && !stack.empty()) {
    HloInstruction* n = stack.back();
    stack.pop_back();
    if (n == input || !seen.insert(n).second) continue;
    if (static_cast<int64_t>(cone.size()) >= node.max_instructions) {
      ok = false;
      break;
    }
    if (n->opcode() == HloOpcode::kConstant ||
        (n->opcode() == HloOpcode::kBroadcast && IsScalarConstant(n->operand(0)))) {
      if (!SameDimensions(n->shape(), root->shape()) && !n->shape().IsScalar()) {
        ok = false;
        break;
      }
      cone.push_back(n);
      if (n->opcode() == HloOpcode::kBroadcast) cone.push_back(n->operand(0));
      continue;
    }
    if (input == nullptr && n != root &&
        MatchAt(node.children[0].node(), n, state, [] { return true; })) {
      input = n;
      continue;
    }
    if (!n->IsElementwise() || !SameDimensions(n->shape(), root->shape())) {
      ok = false;
      break;
    }
    cone.push_back(n);
    for (auto it = n->operands().rbegin(); it != n->operands().rend(); ++it) stack.push_back(*it);
  }
  if (ok && input != nullptr) {
    if (IsMemberNode(node)) state.members.insert(state.members.end(), cone.begin(), cone.end());
    if (k()) return true;
  }
  state.Rollback(bindings_size, members_size);
  return false;
}

bool MatchAt(const PatternNode& node, HloInstruction* i, State& state, Continuation k) {
  if (i == nullptr) return false;
  HloInstruction* bound = nullptr;
  bool captures = node.capture_out != nullptr || !node.capture_name.empty();
  if (captures) {
    bound = FindBinding(state, node);
    if (bound != nullptr && bound != i) return false;
  }
  if (node.opcode.has_value() && i->opcode() != *node.opcode) return false;
  if (node.one_use) {
    if (i->user_count() != 1) return false;
    if (i->parent() != nullptr && i->parent()->root() == i) return false;
  }
  for (const auto& [predicate, description] : node.predicates) {
    if (!predicate(*i)) return false;
  }
  size_t bindings_size = state.bindings.size(), members_size = state.members.size();
  if (captures && bound == nullptr) {
    state.bindings.push_back(
        Binding{node.capture_name.empty() ? nullptr : &node.capture_name, node.capture_out, i});
  }
  bool matched = false;
  switch (node.kind) {
    case PatternNode::Kind::kInstruction:
      if (IsMemberNode(node)) state.members.push_back(i);
      matched = MatchOperands(node, i, state, k);
      break;
    case PatternNode::Kind::kAnyOf: {
      // AsInput() on AnyOf: `i` itself is not a member, whichever alternative
      // matched it (it is put back if what follows fails, for the rollback).
      auto without_i = [&]() -> bool {
        if (!node.as_input) return k();
        auto it = std::find(state.members.begin() + members_size, state.members.end(), i);
        if (it == state.members.end()) return k();
        size_t at = it - state.members.begin();
        state.members.erase(it);
        if (k()) return true;
        state.members.insert(state.members.begin() + at, i);
        return false;
      };
      for (const Pattern& alternative : node.children) {
        if (MatchAt(alternative.node(), i, state, without_i)) {
          matched = true;
          break;
        }
      }
      break;
    }
    case PatternNode::Kind::kBroadcastChain:
      matched = MatchBroadcastChain(node, i, state, k);
      break;
    case PatternNode::Kind::kElementwiseOf:
      matched = MatchElementwiseOf(node, i, state, k);
      break;
  }
  if (!matched) state.Rollback(bindings_size, members_size);
  return matched;
}

void AppendNode(const PatternNode& node, std::string* out) {
  if (!node.capture_name.empty()) absl::StrAppend(out, "capture ", node.capture_name, ": ");
  if (node.capture_out != nullptr) absl::StrAppend(out, "capture: ");
  auto append_children = [&](absl::string_view separator) {
    for (size_t j = 0; j < node.children.size(); ++j) {
      if (j > 0) absl::StrAppend(out, separator);
      AppendNode(node.children[j].node(), out);
    }
  };
  switch (node.kind) {
    case PatternNode::Kind::kInstruction:
      absl::StrAppend(out, node.opcode.has_value() ? HloOpcodeName(*node.opcode) : "*");
      if (node.has_operand_list) {
        absl::StrAppend(out, "(");
        append_children(", ");
        absl::StrAppend(out, ")");
      }
      for (const auto& [index, pattern] : node.indexed_operands) {
        absl::StrAppend(out, " operand ", index, "=");
        AppendNode(pattern.node(), out);
      }
      break;
    case PatternNode::Kind::kAnyOf:
      absl::StrAppend(out, "any-of(");
      append_children(" | ");
      absl::StrAppend(out, ")");
      break;
    case PatternNode::Kind::kBroadcastChain:
      absl::StrAppend(out, "broadcast-chain(");
      append_children("");
      absl::StrAppend(out, ")");
      break;
    case PatternNode::Kind::kElementwiseOf:
      absl::StrAppend(out, "elementwise-of(");
      append_children("");
      absl::StrAppend(out, ")");
      break;
  }
  if (node.kind != PatternNode::Kind::kInstruction && node.opcode.has_value()) {
    absl::StrAppend(out, " opcode ", HloOpcodeName(*node.opcode));
  }
  if (node.commutative) absl::StrAppend(out, " commutative");
  if (node.one_use) absl::StrAppend(out, " one-use");
  for (const auto& predicate : node.predicates) absl::StrAppend(out, " [", predicate.second, "]");
  if (node.as_input) absl::StrAppend(out, " input");
}

Pattern Make(PatternNode node) {
  return Pattern(std::make_shared<const PatternNode>(std::move(node)));
}

// Relative tolerance for "equals `value`" on a constant of `type`: a few ulps,
// since frontends round their constants to the element type.
double SplatTolerance(PrimitiveType type) {
  switch (type) {
    case xla::F64:
      return 4 * std::numeric_limits<double>::epsilon();
    case xla::F32:
      return 4 * std::numeric_limits<float>::epsilon();
    case xla::F16:
      return 4.0 / 1024;
    case xla::BF16:
      return 4.0 / 128;
    default:
      return 0.0;
  }
}

}  // namespace

// ---- Pattern builders.

std::shared_ptr<PatternNode> Pattern::MutableCopy() const {
  return std::make_shared<PatternNode>(*node_);
}

Pattern Pattern::WithOperands(std::vector<Pattern> operands) const {
  auto copy = MutableCopy();
  copy->has_operand_list = true;
  copy->children = std::move(operands);
  return Pattern(std::move(copy));
}

Pattern Pattern::WithOperand(int64_t index, Pattern operand) const {
  auto copy = MutableCopy();
  copy->indexed_operands.emplace_back(index, std::move(operand));
  return Pattern(std::move(copy));
}

Pattern Pattern::Commutative() const {
  auto copy = MutableCopy();
  copy->commutative = true;
  return Pattern(std::move(copy));
}

Pattern Pattern::OneUse() const {
  auto copy = MutableCopy();
  copy->one_use = true;
  return Pattern(std::move(copy));
}

Pattern Pattern::WithOpcode(HloOpcode opcode) const {
  auto copy = MutableCopy();
  copy->opcode = opcode;
  return Pattern(std::move(copy));
}

Pattern Pattern::WithElementType(PrimitiveType type) const {
  return WithShape([type](const Shape& s) { return s.element_type() == type; },
                   absl::StrCat("type ", PrimitiveTypeName(type)));
}

Pattern Pattern::WithRank(int64_t rank) const {
  return WithShape([rank](const Shape& s) { return s.IsArray() && s.rank() == rank; },
                   absl::StrCat("rank ", rank));
}

Pattern Pattern::WithShape(std::function<bool(const Shape&)> predicate,
                           std::string description) const {
  return Where(
      [predicate = std::move(predicate)](const HloInstruction& i) { return predicate(i.shape()); },
      std::move(description));
}

Pattern Pattern::Where(std::function<bool(const HloInstruction&)> predicate,
                       std::string description) const {
  auto copy = MutableCopy();
  copy->predicates.emplace_back(std::move(predicate), std::move(description));
  return Pattern(std::move(copy));
}

Pattern Pattern::AsInput() const {
  auto copy = MutableCopy();
  copy->as_input = true;
  return Pattern(std::move(copy));
}

std::string Pattern::ToString() const {
  std::string out;
  AppendNode(*node_, &out);
  return out;
}

Pattern Any() { return Make(PatternNode{}); }

Pattern Op(HloOpcode opcode) {
  PatternNode node;
  node.opcode = opcode;
  return Make(std::move(node));
}

Pattern Capture(HloInstruction** out, Pattern pattern) {
  PatternNode node = pattern.node();
  node.capture_out = out;
  return Make(std::move(node));
}

Pattern Capture(std::string name, Pattern pattern) {
  PatternNode node = pattern.node();
  node.capture_name = std::move(name);
  return Make(std::move(node));
}

Pattern AnyOf(std::vector<Pattern> alternatives) {
  PatternNode node;
  node.kind = PatternNode::Kind::kAnyOf;
  node.children = std::move(alternatives);
  return Make(std::move(node));
}

Pattern Broadcast(Pattern operand) { return Op(HloOpcode::kBroadcast).WithOperands(operand); }

Pattern Constant() { return Op(HloOpcode::kConstant); }

Pattern SplatConstant(double value) {
  auto equals = [value](const HloInstruction& i) {
    std::optional<double> v = SplatValue(&i);
    if (!v.has_value()) return false;
    if (*v == value) return true;
    if (!std::isfinite(value) || value == 0) return false;
    return std::fabs(*v - value) <= SplatTolerance(i.shape().element_type()) * std::fabs(value);
  };
  std::string description = absl::StrCat("splat ", value);
  return AnyOf({Constant().Where(equals, description),
                Broadcast(Constant().WithRank(0)).Where(equals, description)});
}

Pattern AnySplatConstant() {
  auto splat = [](const HloInstruction& i) { return SplatValue(&i).has_value(); };
  return AnyOf(
      {Constant().Where(splat, "splat"), Broadcast(Constant().WithRank(0)).Where(splat, "splat")});
}

Pattern BroadcastChain(Pattern base) {
  PatternNode node;
  node.kind = PatternNode::Kind::kBroadcastChain;
  node.children = {std::move(base)};
  return Make(std::move(node));
}

Pattern ElementwiseOf(Pattern input, int64_t max_instructions) {
  PatternNode node;
  node.kind = PatternNode::Kind::kElementwiseOf;
  node.children = {std::move(input)};
  node.max_instructions = max_instructions;
  return Make(std::move(node));
}

// ---- Matching.

HloInstruction* Match::Get(absl::string_view name) const {
  for (const auto& [n, value] : captures_) {
    if (n == name) return value;
  }
  return nullptr;
}

bool Match::IsMember(const HloInstruction* instruction) const {
  for (const HloInstruction* m : members_) {
    if (m == instruction) return true;
  }
  return false;
}

bool Matches(HloInstruction* instruction, const Pattern& pattern, Match* match) {
  State state;
  if (!MatchAt(pattern.node(), instruction, state, [] { return true; })) return false;
  for (const Binding& b : state.bindings) {
    if (b.out != nullptr) *b.out = b.value;
  }
  if (match != nullptr) {
    *match = Match();
    match->root_ = instruction;
    for (const Binding& b : state.bindings) {
      if (b.name != nullptr) match->captures_.emplace_back(*b.name, b.value);
    }
    absl::flat_hash_set<HloInstruction*> seen;
    for (HloInstruction* m : state.members) {
      if (seen.insert(m).second) match->members_.push_back(m);
    }
  }
  return true;
}

// ---- Helpers.

std::optional<double> SplatValue(const HloInstruction* i) {
  if (i->opcode() == HloOpcode::kBroadcast) {
    if (!i->operand(0)->shape().IsScalar()) return std::nullopt;
    i = i->operand(0);
  }
  if (i->opcode() != HloOpcode::kConstant || !i->shape().IsArray()) return std::nullopt;
  if (!i->attrs().literal.has_value()) return std::nullopt;
  const Literal& literal = i->literal();
  int64_t count = literal.element_count();
  // Comparing every element of a huge constant is not worth it for a pattern.
  if (count == 0 || count > (int64_t{1} << 16)) return std::nullopt;
  double first = literal.GetAsDouble(0);
  for (int64_t k = 1; k < count; ++k) {
    double v = literal.GetAsDouble(k);
    if (!(v == first) && !(std::isnan(v) && std::isnan(first))) return std::nullopt;
  }
  return first;
}

std::optional<std::vector<int64_t>> EquivalentBroadcastDimensions(const HloInstruction* top,
                                                                  const HloInstruction* base) {
  std::vector<const HloInstruction*> path;  // top ... just above base
  for (const HloInstruction* i = top; i != base; i = i->operand(0)) {
    if (i->opcode() != HloOpcode::kReshape && i->opcode() != HloOpcode::kBroadcast) {
      return std::nullopt;
    }
    path.push_back(i);
  }
  if (!base->shape().IsArray()) return std::nullopt;
  // origin[d]: which base dimension dimension d of the current value is, or -1.
  std::vector<int64_t> origin;
  const std::vector<int64_t>& base_dims = base->shape().dimensions();
  for (int64_t d = 0; d < static_cast<int64_t>(base_dims.size()); ++d) {
    origin.push_back(base_dims[d] == 1 ? -1 : d);
  }
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    const HloInstruction* i = *it;
    const std::vector<int64_t>& in_dims = i->operand(0)->shape().dimensions();
    const std::vector<int64_t>& out_dims = i->shape().dimensions();
    std::vector<int64_t> next(out_dims.size(), -1);
    if (i->opcode() == HloOpcode::kReshape) {
      // Only insertion or removal of size-1 dimensions keeps the mapping.
      size_t in = 0;
      for (size_t out = 0; out < out_dims.size(); ++out) {
        if (out_dims[out] == 1) continue;
        while (in < in_dims.size() && in_dims[in] == 1) ++in;
        if (in == in_dims.size() || in_dims[in] != out_dims[out]) return std::nullopt;
        next[out] = origin[in++];
      }
      while (in < in_dims.size() && in_dims[in] == 1) ++in;
      if (in != in_dims.size()) return std::nullopt;
    } else {
      const std::vector<int64_t>& dims = i->dimensions();
      if (dims.size() != in_dims.size()) return std::nullopt;
      for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] < 0 || dims[k] >= static_cast<int64_t>(out_dims.size())) return std::nullopt;
        next[dims[k]] = origin[k];
      }
    }
    origin = std::move(next);
  }
  std::vector<int64_t> result;
  for (int64_t d = 0; d < static_cast<int64_t>(base_dims.size()); ++d) {
    if (base_dims[d] == 1) continue;
    int64_t found = -1;
    for (int64_t t = 0; t < static_cast<int64_t>(origin.size()); ++t) {
      if (origin[t] == d) {
        if (found >= 0) return std::nullopt;
        found = t;
      }
    }
    if (found < 0) return std::nullopt;
    result.push_back(found);
  }
  return result;
}

bool IsReduceWith(const HloInstruction& i, HloOpcode binary) {
  if (i.opcode() != HloOpcode::kReduce || i.operand_count() != 2) return false;
  const HloComputation* reducer = i.to_apply();
  if (reducer == nullptr || reducer->num_parameters() != 2) return false;
  const HloInstruction* root = reducer->root();
  if (root == nullptr || root->opcode() != binary || root->operand_count() != 2) return false;
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  return a->opcode() == HloOpcode::kParameter && b->opcode() == HloOpcode::kParameter && a != b;
}


}  // namespace hloc::pattern
