// The expanders as one pipeline stage, for the backends: every op that no
// host or GPU kernel covers and that an expander in this folder rewrites
// into ordinary HLO. The host and GPU pipelines run this stage first, before
// simplification and fusion, so the expansions are simplified and fused like
// any other code and no interpreter fallback is needed for these ops.
#ifndef HLOC_PASSES_EXPANDERS_EXPANDERS_H_
#define HLOC_PASSES_EXPANDERS_EXPANDERS_H_

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "passes/pipeline.h"

namespace hloc {

// What a target covers itself and keeps out of the expansion.
struct ExpanderOptions {
  // false: fft stays for the target's own routine (the host's,
  // backend/host/fft_library.h); true: FftExpander's matrix products.
  bool expand_fft = true;
};

// Adds every expander to `pipeline`.
void AddExpanders(HloPassPipeline& pipeline, const ExpanderOptions& expanders = {});

// Runs the "expand" stage (a pipeline of AddExpanders, verified between
// passes and dumped as `options` say); true when it changed the module.
absl::StatusOr<bool> RunExpanders(HloModule& module, const PipelineOptions& options = {},
                                  const ExpanderOptions& expanders = {});

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_EXPANDERS_H_
