#include "passes/standard_pipelines.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/algebraic_simplifier.h"
#include "passes/call_inliner.h"
#include "passes/common_subexpression_elimination.h"
#include "passes/constant_folding.h"
#include "passes/dead_code_elimination.h"
#include "passes/fusion/fusion_pipeline.h"
#include "passes/layout_bitcast_expander.h"
#include "passes/outlining/library_epilogue_fusion.h"
#include "passes/outlining/outline_library_calls.h"
#include "passes/reduce_window_rewriter.h"
#include "passes/reshape_sinking.h"
#include "passes/sharding/remove_sharding_annotations.h"
#include "passes/tuple_simplifier.h"
#include "passes/while_loop_unroller.h"

namespace hloc {
namespace {

void AddSimplification(HloPassPipeline& pipeline, const PipelineOptions& options) {
  // Before inlining: the copies of a loop body's calls are inlined with the rest.
  if (options.optimization_level >= 1) pipeline.AddPass<WhileLoopUnroller>();
  pipeline.AddPass<CallInliner>();
  // Tiled reduce-windows (pooling, partial sums) as reduces, once: no pass
  // below makes new ones.
  pipeline.AddPass<ReduceWindowRewriter>();
  FixedPointPass& fix = pipeline.AddPass<FixedPointPass>("simplify-fixed-point");
  fix.AddPass<AlgebraicSimplifier>();
  fix.AddPass<TupleSimplifier>();
  fix.AddPass<ReshapeSinking>();
  if (options.optimization_level >= 1) fix.AddPass<ConstantFolding>();
  fix.AddPass<CommonSubexpressionElimination>();
  fix.AddPass<DeadCodeElimination>();
}

void AddFusion(HloPassPipeline& pipeline, FusionLedger* ledger, bool fallback) {
  FusionPipelineOptions fusion;
  fusion.ledger = ledger;
  fusion.fallback = fallback;
  AddFusionPasses(pipeline, fusion);
}

}  // namespace

std::vector<std::string> StandardPipelineNames() {
  return {"default", "simplify", "outline", "fusion", "fallback"};
}

absl::StatusOr<std::unique_ptr<HloPassPipeline>> MakeStandardPipeline(
    const std::string& name, const PipelineOptions& options, FusionLedger* ledger) {
  auto pipeline = std::make_unique<HloPassPipeline>(name, options);
  // On one device JAX's sharding custom calls are identities (a no-op for
  // modules naming several devices, which keep them for the partitioner).
  pipeline->AddPass<RemoveShardingAnnotations>();
  // Bitcasts that move elements (XLA's optimized modules) as the transposes
  // they are, before any pass reads a bitcast as a reshape.
  pipeline->AddPass<LayoutBitcastExpander>();
  if (name == "simplify") {
    AddSimplification(*pipeline, options);
  } else if (name == "fusion") {
    AddFusion(*pipeline, ledger, /*fallback=*/false);
  } else if (name == "fallback") {
    AddFusion(*pipeline, ledger, /*fallback=*/true);
  } else if (name == "outline") {
    pipeline->AddPass<CallInliner>();
    pipeline->AddPass<OutlineLibraryCalls>(DefaultLibraryPatterns(), LibraryOutliningOptions{},
                                           ledger);
    pipeline->AddPass<LibraryEpilogueFusion>(FusionRules(), LibraryCheckOptions{}, ledger);
  } else if (name == "default") {
    AddSimplification(*pipeline, options);
    if (options.optimization_level >= 1) {
      // Library patterns first: fusion treats the outlined calls as opaque.
      pipeline->AddPass<OutlineLibraryCalls>(DefaultLibraryPatterns(),
                                             LibraryOutliningOptions{}, ledger);
      // Then the calls absorb the epilogues their libraries fuse (when the
      // fusion rules allow it), before generic fusion sees what is left.
      pipeline->AddPass<LibraryEpilogueFusion>(FusionPipelineOptions().rules,
                                               LibraryCheckOptions{}, ledger);
      AddFusion(*pipeline, ledger, /*fallback=*/false);
    }
    pipeline->AddPass<DeadCodeElimination>();
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown pipeline '", name, "' (have: ",
                                                   absl::StrJoin(StandardPipelineNames(), ", "),
                                                   ")"));
  }
  return pipeline;
}

}  // namespace hloc
