// FusionGraph: the dense, read-only view of one computation that the fusion
// planners search. Instructions are numbered in post order (operands before
// users, ties in insertion order), so
//
//   a path a -> ... -> b   implies   index(a) < index(b)
//
// which lets every reachability question prune by index and stop after a
// bounded number of visits instead of walking the whole graph. Operand and
// user lists are flat arrays of indices; each instruction's NodeTraits (what
// the fusion rules say about it) is computed once.
//
// Also here: which computations fusion may rewrite, and the cycle guard that
// checks a grouping of the graph in linear time before anything is built.
#ifndef HLOC_PASSES_FUSION_FUSION_GRAPH_H_
#define HLOC_PASSES_FUSION_FUSION_GRAPH_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "hlo/module.h"
#include "passes/fusion/fusion_rules.h"

namespace hloc {

class FusionGraph {
 public:
  FusionGraph(const HloComputation& computation, const FusionRules& rules);
  FusionGraph(const FusionGraph&) = delete;
  FusionGraph& operator=(const FusionGraph&) = delete;

  int size() const { return static_cast<int>(nodes_.size()); }
  HloInstruction* node(int i) const { return nodes_[i]; }
  // -1 for an instruction of another computation.
  int IndexOf(const HloInstruction* instruction) const;
  // Distinct operands in operand order; users in increasing index.
  absl::Span<const int> operands(int i) const {
    return absl::MakeConstSpan(operand_list_).subspan(operand_begin_[i],
                                                      operand_begin_[i + 1] - operand_begin_[i]);
  }
  absl::Span<const int> users(int i) const {
    return absl::MakeConstSpan(user_list_).subspan(user_begin_[i],
                                                   user_begin_[i + 1] - user_begin_[i]);
  }
  bool is_root(int i) const { return i == root_; }
  int root() const { return root_; }
  const NodeTraits& traits(int i) const { return traits_[i]; }
  // How `consumer` uses `producer` over all operand slots that read it.
  OperandUse Use(int producer, int consumer) const;
  const HloComputation& computation() const { return *computation_; }
  const FusionRules& rules() const { return *rules_; }

  enum class Reach { kNo, kYes, kUnknown };
  // Whether a walk along users that starts at `sources` (themselves included)
  // meets a node for which is_target(node) holds. Nodes above `max_index` are
  // pruned; expand(node) decides whether the walk continues past a node that
  // is not a target. kUnknown once more than `limit` nodes were visited.
  template <typename IsTarget, typename Expand>
  Reach SearchForward(absl::Span<const int> sources, int max_index, IsTarget is_target,
                      Expand expand, int64_t limit) const;
  // The same walking operands, pruning nodes below `min_index`.
  template <typename IsTarget, typename Expand>
  Reach SearchBackward(absl::Span<const int> sources, int min_index, IsTarget is_target,
                       Expand expand, int64_t limit) const;

 private:
  int NextStamp() const;

  const HloComputation* computation_;
  const FusionRules* rules_;
  std::vector<HloInstruction*> nodes_;
  absl::flat_hash_map<const HloInstruction*, int> index_;
  std::vector<int> operand_begin_, operand_list_, user_begin_, user_list_;
  std::vector<NodeTraits> traits_;
  // How each fusion node uses its operands, filled on first need.
  mutable absl::flat_hash_map<int, std::vector<OperandUse>> fusion_uses_;
  int root_ = -1;
  // Scratch for searches: a node is visited when its stamp equals the current one.
  mutable std::vector<int> stamp_;
  mutable int current_stamp_ = 0;
  mutable std::vector<int> stack_;
};

// Computations fusion may rewrite: the entry and the bodies of call, while and
// conditional (not fused computations, not reducers/comparators/scatter
// combiners, not composite library calls, not async bodies). Callees first.
std::vector<HloComputation*> FusibleComputations(const HloModule& module);

// Cycle guard. `group_of[i]` is the group of node i (-1: alone). Returns the
// groups that lie on a cycle of the graph where each group is one node
// (building them would make a cyclic module), in increasing order. Linear.
std::vector<int> GroupsOnCycles(const FusionGraph& graph, absl::Span<const int> group_of,
                                int group_count);

// ---- template definitions ----

template <typename IsTarget, typename Expand>
FusionGraph::Reach FusionGraph::SearchForward(absl::Span<const int> sources, int max_index,
                                              IsTarget is_target, Expand expand,
                                              int64_t limit) const {
  const int stamp = NextStamp();
  stack_.clear();
  int64_t visited = 0;
  for (int s : sources) {
    if (s <= max_index && stamp_[s] != stamp) {
      stamp_[s] = stamp;
      stack_.push_back(s);
    }
  }
  while (!stack_.empty()) {
    int n = stack_.back();
    stack_.pop_back();
    if (is_target(n)) return Reach::kYes;
    if (++visited > limit) return Reach::kUnknown;
    if (!expand(n)) continue;
    for (int u : users(n)) {
      if (u <= max_index && stamp_[u] != stamp) {
        stamp_[u] = stamp;
        stack_.push_back(u);
      }
    }
  }
  return Reach::kNo;
}

template <typename IsTarget, typename Expand>
FusionGraph::Reach FusionGraph::SearchBackward(absl::Span<const int> sources, int min_index,
                                               IsTarget is_target, Expand expand,
                                               int64_t limit) const {
  const int stamp = NextStamp();
  stack_.clear();
  int64_t visited = 0;
  for (int s : sources) {
    if (s >= min_index && stamp_[s] != stamp) {
      stamp_[s] = stamp;
      stack_.push_back(s);
    }
  }
  while (!stack_.empty()) {
    int n = stack_.back();
    stack_.pop_back();
    if (is_target(n)) return Reach::kYes;
    if (++visited > limit) return Reach::kUnknown;
    if (!expand(n)) continue;
    for (int o : operands(n)) {
      if (o >= min_index && stamp_[o] != stamp) {
        stamp_[o] = stamp;
        stack_.push_back(o);
      }
    }
  }
  return Reach::kNo;
}

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_FUSION_GRAPH_H_
