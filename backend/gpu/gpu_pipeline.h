// The optimization pipeline for the CUDA backend: the default pipeline's
// passes with one step added between library outlining and fusion:
//
//   cuBLAS gemm custom calls as dots -> DynamicPadder -> expanders -> simplify
//     -> outline library calls (+ epilogues) -> InlineCallsWithoutGpuLibrary
//     -> fusion -> RowNormalizationFusion -> dead code elimination
//
// DynamicPadder (passes/dynamic_padder.h) first, as on the host: bounded
// dynamic shapes become static buffers at the bound and s32 sizes that the
// program's kernels compute; GpuProgram::Execute cuts the result to them.
//
// InlineCallsWithoutGpuLibrary inlines every composite call the CUDA
// backend will not run in a library — softmax, layer norm and attention
// (no GPU library routine here), frontend composites, and gemm/conv calls
// that cuBLASLt/cuDNN cannot take or that are unavailable — so fusion sees
// their bodies and makes fused kernels of them, instead of the compiler
// running each body op by op. Each inlining is a ledger entry with why.
#ifndef HLOC_BACKEND_GPU_GPU_PIPELINE_H_
#define HLOC_BACKEND_GPU_GPU_PIPELINE_H_

#include "absl/status/statusor.h"
#include "backend/gpu/gpu_library_calls.h"
#include "hlo/module.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/pass.h"
#include "passes/pipeline.h"

namespace hloc {
namespace gpu {

struct GpuPipelineOptions {
  LibraryUse cublaslt = LibraryUse::kProbe;
  LibraryUse cudnn = LibraryUse::kProbe;
  LibraryCallOptions library;
  PipelineOptions pipeline;
};

class InlineCallsWithoutGpuLibrary : public HloPass {
 public:
  InlineCallsWithoutGpuLibrary(GpuPipelineOptions options, FusionLedger* ledger)
      : options_(std::move(options)), ledger_(ledger) {}
  static constexpr absl::string_view kPassName = "inline-calls-without-gpu-library";
  absl::string_view name() const override { return kPassName; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  GpuPipelineOptions options_;
  FusionLedger* ledger_;
};

// Runs the CUDA backend's pipeline on `module`; true when it changed.
absl::StatusOr<bool> OptimizeForGpu(HloModule& module, const GpuPipelineOptions& options = {},
                                    FusionLedger* ledger = nullptr);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_PIPELINE_H_
