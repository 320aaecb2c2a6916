// Post-dominator fusion, TVM style: fuse a node with everything between it and
// its immediate post-dominator when every path in between may share a kernel.
//
//            x                 ipdom(x) = add: every path from x to the output
//       /    |    \            goes through add.
//     exp   neg   mul          CheckPath(x, add) walks all paths x -> add and
//       \    |    /            asks the rules about every edge on them; when
//            add               they all pass, CommitFuse puts x, exp, neg, mul
//             |                and add into one group (union-find).
//
// 1. Number the computation in post order and build the post-dominator tree
//    walking users before operands: ipdom(v) is the lowest common ancestor,
//    in the tree built so far, of v's users (no ancestor: v reaches more than
//    one output and has none). Common-ancestor climbs are bounded.
// 2. In three phases, for every node v in post order whose group is of the
//    phase's kind: (0) elementwise/broadcast groups and dot/convolution
//    epilogues, (1) injective groups, (2) reduction epilogues — check the
//    paths v -> ipdom(v) (bounded by the group-size budget, so each check is
//    O(budget)), then the merged group (all edges inside it pass the edge
//    table, one hero, instruction and operand budgets, no expensive value
//    read many times), and commit.
// 3. Small constants and iotas do not take part (a shared constant would tie
//    unrelated groups together); afterwards each is copied into the groups
//    that read it.
// 4. A linear cycle guard (GroupsOnCycles) checks the grouping; a group that
//    would close a cycle is dissolved and noted in the ledger.
//
// Beyond TVM: a reduction followed by an elementwise epilogue fuses (phase
// 2), and an elementwise producer can join a dot/convolution prologue when
// FusionRules::set_fuse_into_dot_prologue(true) is set. Existing fusions are
// nodes like any other, so re-running merges fusions and then stops changing.
#ifndef HLOC_PASSES_FUSION_POST_DOMINATOR_FUSION_H_
#define HLOC_PASSES_FUSION_POST_DOMINATOR_FUSION_H_

#include <vector>

#include "passes/fusion/fusion_builder.h"
#include "passes/fusion/fusion_graph.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/fusion/fusion_rules.h"
#include "passes/pass.h"

namespace hloc {

// Immediate post-dominators of every node of `graph` (-1: none), computed
// with at most `max_climb` steps per common-ancestor search (a search that
// runs out gives -1, which only loses fusion).
std::vector<int> ComputeImmediatePostDominators(const FusionGraph& graph, int64_t max_climb);

// The groups post-dominator fusion would build in one computation.
std::vector<FusionGroup> PlanPostDominatorFusion(const FusionGraph& graph, FusionLedger* ledger,
                                                 absl::string_view pass_name);

class PostDominatorFusion : public HloPass {
 public:
  static constexpr absl::string_view kName = "post-dominator-fusion";
  explicit PostDominatorFusion(FusionRules rules = FusionRules(), FusionLedger* ledger = nullptr)
      : rules_(std::move(rules)), ledger_(ledger) {}
  absl::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  FusionRules rules_;
  FusionLedger* ledger_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_POST_DOMINATOR_FUSION_H_
