// Fallback fusion: the grouping of producer-consumer (or post-dominator)
// fusion, recorded as fusions that backends run op by op.
//
//   add -> mul -> exp          fallback_fusion(a, b), kind=kCustom,
//   (one planned group)  ==>       backend_config={"hloc_fallback":true}
//                                  calls=%fallback_computation
//
// A backend without a code generator for some fused pattern (or one being
// brought up) still gets the graph partitioned into the kernels the real
// passes would make, so launches, buffers and the schedule are those of the
// fused program, while each kernel is executed by interpreting its fused
// computation instruction by instruction.
//
// The marker: a fusion is a fallback fusion exactly when its kind is kCustom
// and its backend_config is the JSON text
//
//     {"hloc_fallback":true}
//
// (kFallbackBackendConfig in fusion_rules.h, tested by IsFallbackFusion).
// Backends must run such a fusion by evaluating its fused computation; other
// kCustom fusions keep their own meaning. The other fusion passes treat
// fallback fusions as opaque; this pass treats them (and ordinary fusions) as
// nodes it may merge, so re-running it changes nothing.
#ifndef HLOC_PASSES_FUSION_FALLBACK_FUSION_H_
#define HLOC_PASSES_FUSION_FALLBACK_FUSION_H_

#include "passes/fusion/fusion_ledger.h"
#include "passes/fusion/fusion_rules.h"
#include "passes/pass.h"

namespace hloc {

enum class FusionGrouping { kProducerConsumer, kPostDominator };

class FallbackFusion : public HloPass {
 public:
  static constexpr absl::string_view kName = "fallback-fusion";
  explicit FallbackFusion(FusionRules rules = FusionRules(),
                          FusionGrouping grouping = FusionGrouping::kProducerConsumer,
                          FusionLedger* ledger = nullptr);
  absl::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  FusionRules rules_;
  FusionGrouping grouping_;
  FusionLedger* ledger_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_FALLBACK_FUSION_H_
