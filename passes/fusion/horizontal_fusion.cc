// Horizontal fusion (see horizontal_fusion.h for the idea).
#include "passes/fusion/horizontal_fusion.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "passes/fusion/fusion_driver.h"
#include "passes/fusion/fusion_groups.h"

namespace hloc {
namespace {

int64_t OutputElements(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : shape.tuple_shapes()) {
      int64_t count = OutputElements(element);
      if (count < 0 || total > INT64_MAX - count) return -1;
      total += count;
    }
    return total;
  }
  if (!shape.IsArray()) return -1;
  std::optional<int64_t> count = shape.CheckedElementCount();
  return count ? *count : -1;
}

class HorizontalPlanner {
 public:
  HorizontalPlanner(const FusionGraph& graph, FusionLedger* ledger, absl::string_view pass_name)
      : graph_(graph),
        ledger_(ledger),
        edge_ledger_(ledger != nullptr && ledger->records_edges() ? ledger : nullptr),
        pass_name_(pass_name),
        forest_(graph) {}

  std::vector<FusionGroup> Plan();

 private:
  bool IsSmallKernel(int v) const;
  void Log(int a, int b, const FusionDecision& decision) const {
    if (edge_ledger_ == nullptr) return;
    edge_ledger_->AddEdge(pass_name_, graph_.computation().name(), "horizontal",
                          graph_.node(a)->name(), graph_.node(b)->name(), decision.ok(),
                          decision.rule(), decision.reason());
  }

  const FusionGraph& graph_;
  FusionLedger* ledger_;
  FusionLedger* edge_ledger_;
  absl::string_view pass_name_;
  GroupForest forest_;
};

bool HorizontalPlanner::IsSmallKernel(int v) const {
  const NodeTraits& traits = graph_.traits(v);
  if (!traits.fusible || traits.free_leaf || traits.reductions > 0 || traits.dots > 0 ||
      UpdatesInPlace(*graph_.node(v))) {
    return false;
  }
  if (traits.kind != OpPatternKind::kElementwise && traits.kind != OpPatternKind::kBroadcast &&
      traits.kind != OpPatternKind::kInjective) {
    return false;
  }
  const HloInstruction* node = graph_.node(v);
  switch (node->opcode()) {
    case HloOpcode::kConstant:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kGetTupleElement:
      return false;  // no kernel of their own on most backends
    default:
      break;
  }
  const int64_t elements = OutputElements(node->shape());
  return elements > 0 && elements <= graph_.rules().budgets().max_horizontal_elements;
}

std::vector<FusionGroup> HorizontalPlanner::Plan() {
  const int n = graph_.size();
  const int64_t max_members = graph_.rules().budgets().max_horizontal_members;
  const int64_t limit = graph_.rules().budgets().max_search_nodes;
  for (int y = 0; y < n; ++y) {
    std::vector<int> candidates;
    for (int o : graph_.operands(y)) {
      if (forest_.Find(o) == o && forest_.MemberCount(o) == 1 && IsSmallKernel(o)) {
        candidates.push_back(o);
      }
    }
    if (candidates.size() < 2) continue;
    std::sort(candidates.begin(), candidates.end());
    int group = candidates[0];
    for (size_t k = 1; k < candidates.size(); ++k) {
      if (forest_.MemberCount(group) >= max_members) break;
      const int c = candidates[k];
      // c may not depend on any member (members come earlier in post order).
      const int min_index = forest_.MinIndex(group);
      FusionGraph::Reach reach = graph_.SearchBackward(
          graph_.operands(c), min_index, [&](int node) { return forest_.Find(node) == group; },
          [](int) { return true; }, limit);
      if (reach != FusionGraph::Reach::kNo) {
        Log(forest_.Members(group).front(), c,
            reach == FusionGraph::Reach::kYes
                ? FusionDecision::Refuse(fusion_rule::kCycle, "it depends on a member")
                : FusionDecision::Refuse(fusion_rule::kBudgetSearch,
                                         "the independence search gave up"));
        continue;
      }
      const int roots[2] = {std::min(group, c), std::max(group, c)};
      GroupForest::Merge merge;
      GroupForest::MergeOptions options;
      options.check_edges = false;
      FusionDecision decision = forest_.CheckMerge(roots, options, &merge);
      Log(forest_.Members(group).front(), c,
          decision.ok() ? FusionDecision::Allow(fusion_rule::kHorizontal) : decision);
      if (decision.ok()) group = forest_.Union(merge);
    }
  }
  forest_.BreakCycles(ledger_, pass_name_);
  std::vector<FusionGroup> groups = forest_.ToFusionGroups();
  for (FusionGroup& group : groups) {
    group.kind = FusionKind::kLoop;
    group.backend_config = std::string(kHorizontalBackendConfig);
    group.instruction_name = "horizontal_fusion";
    group.computation_name = "horizontal_fused_computation";
  }
  return groups;
}

}  // namespace

std::vector<FusionGroup> PlanHorizontalFusion(const FusionGraph& graph, FusionLedger* ledger,
                                              absl::string_view pass_name) {
  return HorizontalPlanner(graph, ledger, pass_name).Plan();
}

absl::StatusOr<bool> HorizontalFusion::Run(HloModule& module) {
  return RunFusionPlanner(module, rules_, kName, ledger_,
                          [](const FusionGraph& graph, FusionLedger* ledger) {
                            return PlanHorizontalFusion(graph, ledger, kName);
                          });
}

}  // namespace hloc
