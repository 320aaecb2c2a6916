// The optimization pipeline for the host backend: the default pipeline's
// passes with one step added between library outlining and fusion:
//
//   simplify -> UpcastDotsForHostGemm (dot_upcasting.h) -> outline library calls (+ epilogues)
//            -> InlineUnsupportedLibraryCalls(HostLibraryCapabilities())
//            -> when that inlined anything: outline again with the host's
//               patterns only (+ epilogues), inline what the host lacks
//            -> fusion -> dead code elimination
//
// The inlining step puts back the bodies of composite calls the host does
// not run as a library (softmax, layer norm, attention, frontend
// composites), so fusion makes fused kernels of them instead of the host
// compiler running each body op by op. The second outlining finds the dots
// those bodies held (attention's QK^T and PV products): as gemm calls they
// run on oneDNN, where fused into a softmax kernel they ran as generated
// loops. `hloc run --backend=host` and the host acceptance tests prepare
// modules with it.
#ifndef HLOC_BACKEND_HOST_HOST_PIPELINE_H_
#define HLOC_BACKEND_HOST_HOST_PIPELINE_H_

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/pipeline.h"

namespace hloc {
namespace host {

struct HostPipelineOptions {
  PipelineOptions pipeline;
  // Off: everything but the fusion passes (each op its own kernel).
  bool fusion = true;
  // bf16/f16 dots (when oneDNN lacks the type on this CPU) and short s8 dots
  // as f32 dots between converts (dot_upcasting.h).
  bool upcast_dots = true;
};

// Runs the host pipeline on `module`; true when it changed. `ledger` (may be
// null) receives every outlining, inlining and fusion decision.
absl::StatusOr<bool> OptimizeForHost(HloModule& module, const HostPipelineOptions& options = {},
                                     FusionLedger* ledger = nullptr);

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_HOST_PIPELINE_H_
