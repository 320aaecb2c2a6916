// GroupForest: the union-find of nodes into would-be kernels that the
// post-dominator, multi-output and horizontal planners grow. Each group keeps
// its members, a GroupSummary and its external inputs, so that checking a
// merge costs O(size of the groups involved), never O(graph).
//
//   CheckMerge({g1, g2, ...})   budgets (instructions, distinct inputs,
//                               outputs), one hero, every edge that would
//                               become internal passes the edge table, and
//                               no expensive value reaches a reusing read
//   Union({g1, g2, ...})        commits what CheckMerge measured
//
// Small constants and iotas (free leaves) never join; planners copy them into
// groups at the end (AbsorbFreeLeaves).
#ifndef HLOC_PASSES_FUSION_FUSION_GROUPS_H_
#define HLOC_PASSES_FUSION_FUSION_GROUPS_H_

#include <vector>

#include "absl/types/span.h"
#include "passes/fusion/fusion_builder.h"
#include "passes/fusion/fusion_graph.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/fusion/fusion_rules.h"

namespace hloc {

class GroupForest {
 public:
  explicit GroupForest(const FusionGraph& graph);

  int Find(int node) const;
  // Members of the group whose representative is `root`, in join order.
  std::vector<int> Members(int root) const;
  int64_t MemberCount(int root) const;
  const GroupSummary& Summary(int root) const { return summary_[root]; }
  int MaxIndex(int root) const { return max_index_[root]; }
  int MinIndex(int root) const { return min_index_[root]; }

  // What merging the groups with representatives `roots` would give.
  struct Merge {
    std::vector<int> roots;
    std::vector<int> members;
    std::vector<int> inputs;
    GroupSummary summary;
  };
  struct MergeOptions {
    // Edges between the groups must pass the edge table (off for horizontal
    // fusion, whose members are independent).
    bool check_edges = true;
    // Several reductions may share the kernel (the planner checked that they
    // iterate over one index space).
    bool reductions_share_space = false;
  };
  // Checks the union of `roots` (distinct representatives).
  FusionDecision CheckMerge(absl::Span<const int> roots, const MergeOptions& options,
                            Merge* merge) const;
  // Commits a merge checked by CheckMerge; returns the new representative.
  int Union(const Merge& merge);
  // Puts every member of `root`'s group back alone.
  void Dissolve(int root);

  // True when a path leaves the union of `roots` and comes back into it
  // (merging them would close a cycle); also true when the bounded search
  // gives up, with *gave_up set.
  bool WouldCreateCycle(absl::Span<const int> roots, bool* gave_up) const;

  // Copies of free leaves each group reads: after planning, every free leaf
  // is copied into each group of two or more members (or of a fusion) that
  // reads it, when the edge and the instruction budget allow.
  void AbsorbFreeLeaves();
  const std::vector<int>& Leaves(int root) const;

  // Breaks cycles between groups (GroupsOnCycles) by dissolving groups,
  // recording each in the ledger; returns how many were dissolved.
  int BreakCycles(FusionLedger* ledger, absl::string_view pass_name);

  // Groups worth building (two or more members or copies), in post order of
  // their last member, as FusionGroups with kind chosen by KindForGroup.
  std::vector<FusionGroup> ToFusionGroups() const;

 private:
  const FusionGraph& graph_;
  mutable std::vector<int> parent_;
  std::vector<std::vector<int>> members_;  // empty for a group of one
  std::vector<std::vector<int>> inputs_;   // valid where members_ is not empty
  std::vector<GroupSummary> summary_;
  std::vector<int> min_index_, max_index_;
  std::vector<std::vector<int>> leaves_;
  mutable std::vector<int> mark_;
  mutable int mark_epoch_ = 0;
  mutable std::vector<char> carries_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_FUSION_GROUPS_H_
