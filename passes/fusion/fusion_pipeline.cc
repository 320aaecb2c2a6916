// Assembles the fusion passes (see fusion_pipeline.h).
#include "passes/fusion/fusion_pipeline.h"

#include "passes/fusion/horizontal_fusion.h"
#include "passes/fusion/multi_output_fusion.h"
#include "passes/fusion/post_dominator_fusion.h"
#include "passes/fusion/producer_consumer_fusion.h"

namespace hloc {

void AddFusionPasses(HloPassPipeline& pipeline, const FusionPipelineOptions& options) {
  if (options.fallback) {
    pipeline.AddPass<FallbackFusion>(options.rules, options.grouping, options.ledger);
    return;
  }
  if (options.grouping == FusionGrouping::kPostDominator) {
    pipeline.AddPass<PostDominatorFusion>(options.rules, options.ledger);
  } else {
    pipeline.AddPass<ProducerConsumerFusion>(options.rules, options.ledger);
  }
  if (options.multi_output) pipeline.AddPass<MultiOutputFusion>(options.rules, options.ledger);
  if (options.horizontal) pipeline.AddPass<HorizontalFusion>(options.rules, options.ledger);
}

}  // namespace hloc
