// Multi-output fusion: one kernel that writes several values, so that what
// two kernels would each read (or what one writes and the other reads back)
// crosses memory once.
//
//   producer as an extra output           siblings sharing an operand
//
//        p ----> other users                    x
//        |                                    /  \  .
//        v                                 r1=sum r2=max   (two kernels,
//        c  (reads p)                         both read x)
//   ==>  fusion{p, c} -> (c, p)           ==>  fusion{r1, r2} -> (r1, r2)
//        other users read p from it            x is read once
//
// Runs after producer-consumer or post-dominator fusion, on kernels (fusions
// and single fusible instructions):
//  1. Producer as extra output: a kernel p read by a kernel c and by others
//     joins c's kernel and is returned as one more output (the others read it
//     there), when the edge p -> c passes the rules (edge table, budgets,
//     reuse) and both iterate over the same index space.
//  2. Siblings: kernels that read the same operand (not a small constant)
//     and iterate over the same index space merge, pairwise in post order.
// Index spaces: a loop kernel iterates over its output shape, a reduction
// kernel over its reduction's input shape and reduced dimensions; a loop
// kernel may join a reduction kernel whose input shape is its output shape.
// Dot/convolution kernels, tuple-valued instructions and updates in place
// (UpdatesInPlace: alone they write only their update) take no part.
//
// Never a cycle: merging two kernels closes a cycle exactly when a path leaves
// one and enters the other through instructions outside both; a bounded
// search pruned by post-order index answers that (giving up refuses), and the
// linear cycle guard checks the whole grouping before anything is built.
#ifndef HLOC_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_
#define HLOC_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_

#include <vector>

#include "passes/fusion/fusion_builder.h"
#include "passes/fusion/fusion_graph.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/fusion/fusion_rules.h"
#include "passes/pass.h"

namespace hloc {

std::vector<FusionGroup> PlanMultiOutputFusion(const FusionGraph& graph, FusionLedger* ledger,
                                               absl::string_view pass_name);

class MultiOutputFusion : public HloPass {
 public:
  static constexpr absl::string_view kName = "multi-output-fusion";
  explicit MultiOutputFusion(FusionRules rules = FusionRules(), FusionLedger* ledger = nullptr)
      : rules_(std::move(rules)), ledger_(ledger) {}
  absl::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  FusionRules rules_;
  FusionLedger* ledger_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_
