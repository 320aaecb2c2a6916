// The loop every fusion pass shares: for each computation fusion may rewrite
// (FusibleComputations), build the FusionGraph, let the pass's planner choose
// groups, build them (fusion_builder.h), record each group in the ledger, and
// finally drop the fused computations that merging made unused.
#ifndef HLOC_PASSES_FUSION_FUSION_DRIVER_H_
#define HLOC_PASSES_FUSION_FUSION_DRIVER_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "passes/fusion/fusion_builder.h"
#include "passes/fusion/fusion_graph.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/fusion/fusion_rules.h"

namespace hloc {

// Chooses the groups of one computation. Groups with one member that is not
// worth building (see the planners) are simply not returned.
using FusionPlanner =
    std::function<std::vector<FusionGroup>(const FusionGraph& graph, FusionLedger* ledger)>;

// Runs `planner` over every fusible computation of `module`; true when any
// fusion was made. `pass_name` labels the ledger entries.
absl::StatusOr<bool> RunFusionPlanner(HloModule& module, const FusionRules& rules,
                                      absl::string_view pass_name, FusionLedger* ledger,
                                      const FusionPlanner& planner);

// Members of `members` (node indices) in post order as instructions, with the
// matching duplicated flags; used by the planners to fill a FusionGroup.
void FillGroupMembers(const FusionGraph& graph, std::vector<std::pair<int, bool>> members,
                      FusionGroup* group);

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_FUSION_DRIVER_H_
