// OptimizeForHost (see host_pipeline.h): the standard stages around one
// inlining pass driven by what the host's libraries implement.
#include "backend/host/host_pipeline.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"

#include "backend/host/dot_upcasting.h"
#include "backend/host/matrix_dots.h"
#include "backend/host/onednn_library.h"
#include "backend/host/running_reduction.h"
#include "hlo/evaluator/gemm_kernel.h"
#include "hlo/status_macros.h"
#include "passes/call_inliner.h"
#include "passes/dead_code_elimination.h"
#include "passes/dynamic_padder.h"
#include "passes/expanders/expanders.h"
#include "passes/fusion/fusion_pipeline.h"
#include "passes/outlining/library_capabilities.h"
#include "passes/outlining/library_epilogue_fusion.h"
#include "passes/outlining/library_operand_slices.h"
#include "passes/outlining/library_patterns.h"
#include "passes/outlining/outline_library_calls.h"
#include "passes/pipeline.h"
#include "passes/standard_pipelines.h"

namespace hloc {
namespace host {
namespace {

// Outlining options that leave out every default pattern the host has no
// library for (softmax, layer norm, attention), so only gemm and
// convolution patterns match.
LibraryOutliningOptions HostOnlyOutlining(const LibraryCapabilities& host) {
  LibraryOutliningOptions options;
  for (const LibraryPattern& pattern : DefaultLibraryPatterns()) {
    if (!host.Implements(pattern.name)) options.disabled_patterns.insert(pattern.name);
  }
  return options;
}

// The standard fusion passes, except that two kinds of op stay out of every
// fusion, to remain library calls (library_calls.cc):
//   - s8 x s8 -> s32 dots, where the integer GEMM is vectorized: fused, a dot
//     becomes the elemental dot of a loop kernel (one scalar sum per output
//     element); alone it is a call to eval::GemmS8. Float dots need no such
//     rule: outlining already made them opaque library calls;
//   - running reductions (cumsum and the like, running_reduction.h): fused,
//     each output element would reduce its whole window.
void AddHostFusion(HloPassPipeline& pipeline, FusionLedger* ledger) {
  FusionPipelineOptions fusion;
  fusion.ledger = ledger;
  fusion.rules.AddInstructionRule("host-running-reduction", [](const HloInstruction& i) {
    if (!IsRunningReduction(i)) return FusionDecision::Allow("host-running-reduction");
    return FusionDecision::Refuse("host-running-reduction",
                                  absl::StrCat(i.name(), " runs as a running reduction"));
  });
  if (eval::GemmS8IsVectorized()) {
    fusion.rules.AddInstructionRule("host-integer-gemm", [](const HloInstruction& i) {
      if (!IsS8ToS32Dot(i)) return FusionDecision::Allow("host-integer-gemm");
      return FusionDecision::Refuse("host-integer-gemm",
                                    absl::StrCat(i.name(), " runs on the integer GEMM"));
    });
  }
  AddFusionPasses(pipeline, fusion);
}

}  // namespace

absl::StatusOr<bool> OptimizeForHost(HloModule& module, const HostPipelineOptions& options,
                                     FusionLedger* ledger) {
  bool changed = false;
  auto run_stage = [&](const std::string& stage) -> absl::Status {
    HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> pipeline,
                          MakeStandardPipeline(stage, options.pipeline, ledger));
    HLOC_ASSIGN_OR_RETURN(bool c, pipeline->Run(module));
    changed = changed || c;
    return absl::OkStatus();
  };
  // A module that arrives fused (XLA's optimized modules) as plain HLO:
  // hloc's outlining and fusion decide again (FusionInliner).
  HloPassPipeline unfuse("unfuse", options.pipeline);
  unfuse.AddPass<FusionInliner>(ledger);
  HLOC_ASSIGN_OR_RETURN(changed, unfuse.Run(module));
  // Bounded dynamic shapes as static buffers plus sizes (the program then
  // cuts its result to the sizes: HostProgram reads the padder's contract).
  DynamicPadder padder;
  HLOC_ASSIGN_OR_RETURN(bool padded, padder.Run(module));
  changed = changed || padded;
  // Ops with no host kernel (batch norm, select-and-scatter, ...) as plain
  // HLO; fft stays for the host's FFT routine (fft_library.h).
  ExpanderOptions expanders;
  expanders.expand_fft = false;
  HLOC_ASSIGN_OR_RETURN(bool expanded, RunExpanders(module, options.pipeline, expanders));
  changed = changed || expanded;
  HLOC_RETURN_IF_ERROR(run_stage("simplify"));
  if (options.upcast_dots) {
    UpcastDotsForHostGemm upcast(HostUpcastOptions());
    HLOC_ASSIGN_OR_RETURN(bool upcasted, upcast.Run(module));
    changed = changed || upcasted;
  }
  if (options.pipeline.optimization_level >= 1) {
    // Vector-matrix dots as gemms with a unit dimension, for outlining.
    VectorDotsAsMatrixDots matrix_dots;
    HLOC_ASSIGN_OR_RETURN(bool reshaped, matrix_dots.Run(module));
    changed = changed || reshaped;
    HLOC_RETURN_IF_ERROR(run_stage("outline"));
    const LibraryCapabilities host = HostLibraryCapabilities();
    InlineUnsupportedLibraryCalls inline_calls(host, ledger);
    HLOC_ASSIGN_OR_RETURN(bool inlined, inline_calls.Run(module));
    changed = changed || inlined;
    if (inlined) {
      // The inlined bodies hold dots the first outlining could not see as
      // gemms (attention's QK^T and PV products sat inside hloc.attention or
      // a frontend composite); outline them now, with the host's patterns
      // only, so they reach oneDNN instead of becoming fused loop kernels.
      HloPassPipeline reoutline("host-reoutline", options.pipeline);
      reoutline.AddPass<OutlineLibraryCalls>(DefaultLibraryPatterns(), HostOnlyOutlining(host),
                                             ledger);
      reoutline.AddPass<LibraryEpilogueFusion>(FusionRules(), LibraryCheckOptions{}, ledger);
      reoutline.AddPass<InlineUnsupportedLibraryCalls>(host, ledger);
      HLOC_ASSIGN_OR_RETURN(bool outlined, reoutline.Run(module));
      changed = changed || outlined;
    }
    // Gemm operands that are contiguous slices (per-expert weights) read
    // their array at an offset instead of a copy (onednn_library.cc).
    HloPassPipeline slices("host-library-operands", options.pipeline);
    slices.AddPass<LibraryOperandSlices>();
    HLOC_ASSIGN_OR_RETURN(bool sliced, slices.Run(module));
    changed = changed || sliced;
    if (options.fusion) {
      HloPassPipeline fusion("fusion", options.pipeline);
      AddHostFusion(fusion, ledger);
      HLOC_ASSIGN_OR_RETURN(bool fused, fusion.Run(module));
      changed = changed || fused;
    }
  }
  DeadCodeElimination dce;
  HLOC_ASSIGN_OR_RETURN(bool removed, dce.Run(module));
  return changed || removed;
}

}  // namespace host
}  // namespace hloc
