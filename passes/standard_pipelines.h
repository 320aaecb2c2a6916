// Named pipelines the tools and backends run: "simplify" (core rewrites to a
// fixed point), "outline" (library patterns into composite calls), "fusion"
// (fusion passes only), "fallback" (fusion recorded as kCustom fallback
// fusions), and "default" (simplify, outline library calls, let them absorb
// their library epilogues, fuse, clean up).
#ifndef HLOC_PASSES_STANDARD_PIPELINES_H_
#define HLOC_PASSES_STANDARD_PIPELINES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/pipeline.h"

namespace hloc {

std::vector<std::string> StandardPipelineNames();

// `ledger` (may be null) receives every fusion decision.
absl::StatusOr<std::unique_ptr<HloPassPipeline>> MakeStandardPipeline(
    const std::string& name, const PipelineOptions& options, FusionLedger* ledger);

}  // namespace hloc

#endif  // HLOC_PASSES_STANDARD_PIPELINES_H_
