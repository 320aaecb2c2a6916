// Horizontal fusion: several small, independent kernels launched as one.
//
//     a     b     c                      a     b     c
//     |     |     |                       \    |    /
//   k1(a) k2(b) k3(c)      ==>      horizontal_fusion(a, b, c)
//      \    |    /                    -> (k1, k2, k3)   one launch
//        consumer                          |
//                                       consumer reads the three outputs
//
// On a GPU each kernel launch costs a few microseconds whatever its size, so
// many tiny kernels (bias updates, per-layer scalars, optimizer steps) are
// dominated by launch overhead. Kernels that feed the same consumer are
// usually independent of each other; this pass gathers them, in post order,
// into groups of at most max_horizontal_members, each kernel small (at most
// max_horizontal_elements output elements) and loop-shaped (no reduction,
// dot or convolution hero, no update in place: UpdatesInPlace). Members need
// not share an index space: the
// backend runs each member over its own range inside one launch.
//
// Independence: a candidate may not be reachable from the group's members
// (bounded backward search pruned by post-order index; giving up refuses),
// and the linear cycle guard checks the whole grouping before building.
//
// The fusion has kind kLoop, a tuple of the members' outputs as root, and the
// backend_config marker
//
//     {"hloc_horizontal":true}
//
// (kHorizontalBackendConfig) so a backend knows its outputs do not share one
// index space. Other fusion passes treat such a fusion as opaque.
#ifndef HLOC_PASSES_FUSION_HORIZONTAL_FUSION_H_
#define HLOC_PASSES_FUSION_HORIZONTAL_FUSION_H_

#include <vector>

#include "passes/fusion/fusion_builder.h"
#include "passes/fusion/fusion_graph.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/fusion/fusion_rules.h"
#include "passes/pass.h"

namespace hloc {

std::vector<FusionGroup> PlanHorizontalFusion(const FusionGraph& graph, FusionLedger* ledger,
                                              absl::string_view pass_name);

class HorizontalFusion : public HloPass {
 public:
  static constexpr absl::string_view kName = "horizontal-fusion";
  explicit HorizontalFusion(FusionRules rules = FusionRules(), FusionLedger* ledger = nullptr)
      : rules_(std::move(rules)), ledger_(ledger) {}
  absl::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  FusionRules rules_;
  FusionLedger* ledger_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_HORIZONTAL_FUSION_H_
