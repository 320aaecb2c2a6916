// The three ways the host backend's acceptance tests prepare a module before
// compiling it: the host pipeline (host_pipeline.h: the default pipeline's
// passes plus inlining of composites the host has no library for), the same
// without its fusion passes (every op its own kernel), and fallback fusion
// (the "fallback" pipeline: fusions recorded as kCustom fallback fusions).
// Shared by the corpus and zoo tests so both mean the same by each mode.
#ifndef HLOC_BACKEND_HOST_HOST_PIPELINE_MODES_H_
#define HLOC_BACKEND_HOST_HOST_PIPELINE_MODES_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "passes/pipeline.h"

namespace hloc {
namespace host_testing {

enum class PipelineMode {
  kFusion,          // OptimizeForHost: simplify, outline, inline the rest, fuse.
  kNoFusion,        // OptimizeForHost without the fusion passes.
  kFallbackFusion,  // "fallback" on the module as loaded (DynamicPadder first).
};

std::vector<PipelineMode> AllPipelineModes();
const char* PipelineModeName(PipelineMode mode);

// A copy of `module` run through the mode's pipelines (verifying between
// passes), with `pipeline`'s options (e.g. passes disabled).
absl::StatusOr<std::unique_ptr<HloModule>> PrepareForMode(const HloModule& module,
                                                          PipelineMode mode,
                                                          const PipelineOptions& pipeline = {});

}  // namespace host_testing
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_HOST_PIPELINE_MODES_H_
