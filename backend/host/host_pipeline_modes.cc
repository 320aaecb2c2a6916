// Pipelines behind each PipelineMode (see host_pipeline_modes.h).
#include "backend/host/host_pipeline_modes.h"

#include <string>

#include "backend/host/host_pipeline.h"
#include "hlo/status_macros.h"
#include "passes/dynamic_padder.h"
#include "passes/standard_pipelines.h"

namespace hloc {
namespace host_testing {

std::vector<PipelineMode> AllPipelineModes() {
  return {PipelineMode::kFusion, PipelineMode::kNoFusion, PipelineMode::kFallbackFusion};
}

const char* PipelineModeName(PipelineMode mode) {
  switch (mode) {
    case PipelineMode::kFusion: return "fusion";
    case PipelineMode::kNoFusion: return "no-fusion";
    case PipelineMode::kFallbackFusion: return "fallback-fusion";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<HloModule>> PrepareForMode(const HloModule& module,
                                                          PipelineMode mode,
                                                          const PipelineOptions& pipeline_options) {
  std::unique_ptr<HloModule> copy = module.Clone();
  if (mode == PipelineMode::kFallbackFusion) {
    // Bounded dynamic shapes as static buffers and sizes first, as
    // OptimizeForHost does: the host compiler takes static shapes only.
    DynamicPadder padder;
    HLOC_RETURN_IF_ERROR(padder.Run(*copy).status());
    HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> pipeline,
                          MakeStandardPipeline("fallback", pipeline_options, nullptr));
    HLOC_RETURN_IF_ERROR(pipeline->Run(*copy).status());
    return copy;
  }
  host::HostPipelineOptions options;
  options.pipeline = pipeline_options;
  options.fusion = mode == PipelineMode::kFusion;
  HLOC_RETURN_IF_ERROR(host::OptimizeForHost(*copy, options).status());
  return copy;
}

}  // namespace host_testing
}  // namespace hloc
