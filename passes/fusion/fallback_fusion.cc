// Fallback fusion (see fallback_fusion.h for the idea and the marker).
#include "passes/fusion/fallback_fusion.h"

#include "passes/fusion/fusion_driver.h"
#include "passes/fusion/post_dominator_fusion.h"
#include "passes/fusion/producer_consumer_fusion.h"

namespace hloc {

FallbackFusion::FallbackFusion(FusionRules rules, FusionGrouping grouping, FusionLedger* ledger)
    : rules_(std::move(rules)), grouping_(grouping), ledger_(ledger) {
  rules_.set_fallback_fusions_are_fusible(true);
}

absl::StatusOr<bool> FallbackFusion::Run(HloModule& module) {
  const FusionGrouping grouping = grouping_;
  return RunFusionPlanner(
      module, rules_, kName, ledger_, [grouping](const FusionGraph& graph, FusionLedger* ledger) {
        std::vector<FusionGroup> groups = grouping == FusionGrouping::kPostDominator
                                              ? PlanPostDominatorFusion(graph, ledger, kName)
                                              : PlanProducerConsumerFusion(graph, ledger, kName);
        for (FusionGroup& group : groups) {
          group.kind = FusionKind::kCustom;
          group.backend_config = std::string(kFallbackBackendConfig);
          group.instruction_name = "fallback_fusion";
          group.computation_name = "fallback_computation";
        }
        return groups;
      });
}

}  // namespace hloc
