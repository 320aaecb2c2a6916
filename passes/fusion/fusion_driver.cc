// The per-computation plan/build loop shared by the fusion passes.
#include "passes/fusion/fusion_driver.h"

#include <algorithm>

#include "hlo/status_macros.h"

namespace hloc {

void FillGroupMembers(const FusionGraph& graph, std::vector<std::pair<int, bool>> members,
                      FusionGroup* group) {
  std::sort(members.begin(), members.end());
  group->members.clear();
  group->duplicated.clear();
  bool any_duplicated = false;
  for (const auto& [index, duplicated] : members) {
    group->members.push_back(graph.node(index));
    group->duplicated.push_back(duplicated);
    any_duplicated = any_duplicated || duplicated;
  }
  if (!any_duplicated) group->duplicated.clear();
}

namespace {

// A planner may propose a group whose outputs the builder cannot express (see
// CheckGroupBuildable); the pass declines it, on the record, and goes on.
void DropUnbuildableGroups(const HloComputation& computation, absl::string_view pass_name,
                           FusionLedger* ledger, std::vector<FusionGroup>* groups) {
  size_t kept = 0;
  for (size_t k = 0; k < groups->size(); ++k) {
    FusionGroup& group = (*groups)[k];
    FusionDecision decision = CheckGroupBuildable(computation, group);
    if (!decision.ok()) {
      if (ledger != nullptr) {
        LedgerEntry entry;
        entry.pass = std::string(pass_name);
        entry.computation = computation.name();
        entry.event = "group";
        for (const HloInstruction* member : group.members) {
          entry.subjects.push_back(member->name());
        }
        entry.accepted = false;
        entry.rule = decision.rule();
        entry.reason = decision.reason();
        ledger->Add(std::move(entry));
      }
      continue;
    }
    if (kept != k) (*groups)[kept] = std::move(group);
    ++kept;
  }
  groups->resize(kept);
}

}  // namespace

absl::StatusOr<bool> RunFusionPlanner(HloModule& module, const FusionRules& rules,
                                      absl::string_view pass_name, FusionLedger* ledger,
                                      const FusionPlanner& planner) {
  bool changed = false;
  std::vector<HloComputation*> dead;
  for (HloComputation* computation : FusibleComputations(module)) {
    std::vector<FusionGroup> groups;
    {
      FusionGraph graph(*computation, rules);
      groups = planner(graph, ledger);
    }
    DropUnbuildableGroups(*computation, pass_name, ledger, &groups);
    if (groups.empty()) continue;
    std::vector<std::vector<std::string>> names;
    if (ledger != nullptr) {
      for (const FusionGroup& group : groups) {
        std::vector<std::string> member_names;
        for (const HloInstruction* member : group.members) member_names.push_back(member->name());
        names.push_back(std::move(member_names));
      }
    }
    HLOC_ASSIGN_OR_RETURN(BuildResult built, BuildFusions(*computation, groups));
    changed = true;
    dead.insert(dead.end(), built.dead_computations.begin(), built.dead_computations.end());
    if (ledger != nullptr) {
      for (size_t k = 0; k < groups.size(); ++k) {
        LedgerEntry entry;
        entry.pass = std::string(pass_name);
        entry.computation = computation->name();
        entry.event = "group";
        entry.subjects = std::move(names[k]);
        entry.accepted = true;
        entry.rule = std::string(fusion_rule::kCommitted);
        entry.reason = std::string(FusionKindName(groups[k].kind));
        entry.result = built.fusions[k]->name();
        ledger->Add(std::move(entry));
      }
    }
  }
  HLOC_RETURN_IF_ERROR(module.RemoveComputations(dead));
  return changed;
}

}  // namespace hloc
