// Post-dominator fusion (see post_dominator_fusion.h for the idea).
#include "passes/fusion/post_dominator_fusion.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "passes/fusion/fusion_driver.h"
#include "passes/fusion/fusion_groups.h"

namespace hloc {
namespace {

// Lowest common ancestor of a and b in the post-dominator tree, or -1 (none,
// or the climb ran out of steps).
int CommonPostDominator(int a, int b, const std::vector<int>& ipdom,
                        const std::vector<int>& depth, int64_t max_climb) {
  int64_t steps = 0;
  while (a != b) {
    if (a < 0 || b < 0) return -1;
    if (++steps > max_climb) return -1;
    if (depth[a] > depth[b]) {
      a = ipdom[a];
    } else if (depth[b] > depth[a]) {
      b = ipdom[b];
    } else {
      a = ipdom[a];
      b = ipdom[b];
    }
  }
  return a;
}

bool InPhase(OpPatternKind kind, int phase) {
  switch (phase) {
    case 0:
      return kind == OpPatternKind::kElementwise || kind == OpPatternKind::kBroadcast ||
             kind == OpPatternKind::kOutElementwiseFusable;
    case 1:
      return kind == OpPatternKind::kInjective;
    default:
      return kind == OpPatternKind::kReduction;
  }
}

class PostDominatorPlanner {
 public:
  PostDominatorPlanner(const FusionGraph& graph, FusionLedger* ledger,
                       absl::string_view pass_name)
      : graph_(graph),
        ledger_(ledger),
        edge_ledger_(ledger != nullptr && ledger->records_edges() ? ledger : nullptr),
        pass_name_(pass_name),
        forest_(graph),
        visit_mark_(graph.size(), 0) {}

  std::vector<FusionGroup> Plan();

 private:
  // Nodes strictly between v and d on paths v -> d; a refusal when one may
  // not fuse or there are more than the instruction budget.
  FusionDecision CollectPath(int v, int d, std::vector<int>* path);
  void TryFuse(int v, int d);
  void Log(int v, int d, const FusionDecision& decision) const {
    if (edge_ledger_ == nullptr) return;
    edge_ledger_->AddEdge(pass_name_, graph_.computation().name(), "post-dominator",
                          graph_.node(v)->name(), graph_.node(d)->name(), decision.ok(),
                          decision.rule(), decision.reason());
  }

  const FusionGraph& graph_;
  FusionLedger* ledger_;
  FusionLedger* edge_ledger_;
  absl::string_view pass_name_;
  GroupForest forest_;
  std::vector<int> visit_mark_;
  int visit_epoch_ = 0;
};

FusionDecision PostDominatorPlanner::CollectPath(int v, int d, std::vector<int>* path) {
  const int64_t limit = graph_.rules().budgets().max_instructions;
  const int epoch = ++visit_epoch_;
  std::vector<int> stack = {v};
  visit_mark_[v] = epoch;
  while (!stack.empty()) {
    int x = stack.back();
    stack.pop_back();
    for (int y : graph_.users(x)) {
      if (y == d || visit_mark_[y] == epoch) continue;
      visit_mark_[y] = epoch;
      const NodeTraits& traits = graph_.traits(y);
      if (!traits.fusible) {
        return FusionDecision::Refuse(traits.why_not_rule,
                                      absl::StrCat("on the way: ", graph_.node(y)->name(), ": ",
                                                   traits.why_not));
      }
      path->push_back(y);
      if (static_cast<int64_t>(path->size()) > limit) {
        return FusionDecision::Refuse(
            fusion_rule::kBudgetInstructions,
            absl::StrCat("more than ", limit, " instructions lie between ",
                         graph_.node(v)->name(), " and ", graph_.node(d)->name()));
      }
      stack.push_back(y);
    }
  }
  return FusionDecision::Allow(fusion_rule::kCommitted);
}

void PostDominatorPlanner::TryFuse(int v, int d) {
  const NodeTraits& sink = graph_.traits(d);
  if (!sink.fusible) {
    Log(v, d, FusionDecision::Refuse(sink.why_not_rule, sink.why_not));
    return;
  }
  std::vector<int> path;
  FusionDecision decision = CollectPath(v, d, &path);
  if (!decision.ok()) {
    Log(v, d, decision);
    return;
  }
  std::vector<int> roots = {forest_.Find(v), forest_.Find(d)};
  for (int p : path) roots.push_back(forest_.Find(p));
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  GroupForest::Merge merge;
  decision = forest_.CheckMerge(roots, GroupForest::MergeOptions(), &merge);
  Log(v, d, decision);
  if (decision.ok()) forest_.Union(merge);
}

std::vector<FusionGroup> PostDominatorPlanner::Plan() {
  const int n = graph_.size();
  std::vector<int> ipdom =
      ComputeImmediatePostDominators(graph_, graph_.rules().budgets().max_search_nodes);
  for (int phase = 0; phase < 3; ++phase) {
    for (int v = 0; v < n; ++v) {
      const NodeTraits& traits = graph_.traits(v);
      if (!traits.fusible || traits.free_leaf) continue;
      const int d = ipdom[v];
      if (d < 0) {
        if (phase == 0 && edge_ledger_ != nullptr && !graph_.users(v).empty()) {
          LedgerEntry entry;
          entry.pass = std::string(pass_name_);
          entry.computation = graph_.computation().name();
          entry.event = "post-dominator";
          entry.subjects = {graph_.node(v)->name()};
          entry.rule = std::string(fusion_rule::kNoPostDominator);
          entry.reason = "its paths reach the output separately";
          edge_ledger_->Add(std::move(entry));
        }
        continue;
      }
      const int gv = forest_.Find(v);
      if (gv == forest_.Find(d)) continue;
      if (!InPhase(forest_.Summary(gv).kind, phase)) continue;
      TryFuse(v, d);
    }
  }
  forest_.AbsorbFreeLeaves();
  forest_.BreakCycles(ledger_, pass_name_);
  return forest_.ToFusionGroups();
}

}  // namespace

std::vector<int> ComputeImmediatePostDominators(const FusionGraph& graph, int64_t max_climb) {
  const int n = graph.size();
  std::vector<int> ipdom(n, -1), depth(n, 0);
  for (int v = n - 1; v >= 0; --v) {
    absl::Span<const int> users = graph.users(v);
    if (graph.is_root(v) || users.empty()) continue;
    int common = users[0];
    for (size_t k = 1; k < users.size() && common >= 0; ++k) {
      common = CommonPostDominator(common, users[k], ipdom, depth, max_climb);
    }
    ipdom[v] = common;
    depth[v] = common < 0 ? 0 : depth[common] + 1;
  }
  return ipdom;
}

std::vector<FusionGroup> PlanPostDominatorFusion(const FusionGraph& graph, FusionLedger* ledger,
                                                 absl::string_view pass_name) {
  return PostDominatorPlanner(graph, ledger, pass_name).Plan();
}

absl::StatusOr<bool> PostDominatorFusion::Run(HloModule& module) {
  return RunFusionPlanner(module, rules_, kName, ledger_,
                          [](const FusionGraph& graph, FusionLedger* ledger) {
                            return PlanPostDominatorFusion(graph, ledger, kName);
                          });
}

}  // namespace hloc
