// The fusion passes assembled in their usual order:
//
//   producer-consumer (or post-dominator) fusion   kernels from the graph
//   multi-output fusion                            shared reads, extra outputs
//   horizontal fusion                              small kernels, one launch
//
// or, for a backend that interprets kernels, fallback fusion alone. All passes
// share one FusionRules and one ledger.
#ifndef HLOC_PASSES_FUSION_FUSION_PIPELINE_H_
#define HLOC_PASSES_FUSION_FUSION_PIPELINE_H_

#include "passes/fusion/fallback_fusion.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/fusion/fusion_rules.h"
#include "passes/pipeline.h"

namespace hloc {

struct FusionPipelineOptions {
  FusionGrouping grouping = FusionGrouping::kProducerConsumer;
  bool multi_output = true;
  bool horizontal = true;
  // Make fallback fusions (kCustom, {"hloc_fallback":true}) instead; no
  // multi-output or horizontal fusion then.
  bool fallback = false;
  FusionRules rules;
  FusionLedger* ledger = nullptr;  // not owned; may be null
};

// Appends the fusion passes to `pipeline`.
void AddFusionPasses(HloPassPipeline& pipeline, const FusionPipelineOptions& options);

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_FUSION_PIPELINE_H_
