// The CUDA backend's pipeline (see gpu_pipeline.h).
#include "backend/gpu/gpu_pipeline.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/gpu/cublas_gemm_custom_calls.h"
#include "backend/gpu/row_normalization_fusion.h"
#include "hlo/status_macros.h"
#include "passes/call_inliner.h"
#include "passes/dead_code_elimination.h"
#include "passes/dynamic_padder.h"
#include "passes/expanders/expanders.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/pipeline.h"
#include "passes/standard_pipelines.h"

namespace hloc {
namespace gpu {

absl::StatusOr<bool> InlineCallsWithoutGpuLibrary::Run(HloModule& module) {
  bool changed = false;
  // Callees first, so a body is final before it is copied into its caller.
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    // The calls first: inlining one removes the get-tuple-elements that read
    // it, which the instruction list would still hold (CallInliner::Run).
    std::vector<HloInstruction*> calls;
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kCall) calls.push_back(i);
    }
    for (HloInstruction* call : calls) {
      const std::string* name = call->FindFrontendAttribute(kCompositeName);
      if (name == nullptr || call->to_apply() == nullptr) continue;
      std::string reason;
      if (GpuLibraryFamily(*call).has_value()) {
        absl::StatusOr<LibraryCallPlan> plan = PlanLibraryCall(*call, options_.library);
        if (!plan.ok()) {
          if (plan.status().code() != absl::StatusCode::kFailedPrecondition) return plan.status();
          reason = std::string(plan.status().message());
        } else {
          absl::Status available = GpuLibraryAvailable(
              plan->library == GpuLibrary::kCublasLt ? options_.cublaslt : options_.cudnn,
              plan->library);
          if (!available.ok()) reason = std::string(available.message());
        }
        if (reason.empty()) continue;
      } else {
        reason = "no GPU library routine for it: its body is fused and generated";
      }
      if (!call->control_predecessors().empty() || !call->control_successors().empty()) continue;
      const std::string call_name = call->name();
      const std::string composite = *name;
      HloComputation* callee = call->to_apply();
      HLOC_RETURN_IF_ERROR(CallInliner::InlineCall(call).status());
      if (module.CallersOf(callee).empty()) HLOC_RETURN_IF_ERROR(module.RemoveComputation(callee));
      if (ledger_ != nullptr) {
        LedgerEntry entry;
        entry.pass = std::string(kPassName);
        entry.computation = computation->name();
        entry.event = "inlined";
        entry.subjects = {call_name};
        entry.accepted = true;
        entry.rule = composite;
        entry.reason = reason;
        ledger_->Add(std::move(entry));
      }
      changed = true;
    }
  }
  return changed;
}

absl::StatusOr<bool> OptimizeForGpu(HloModule& module, const GpuPipelineOptions& options,
                                    FusionLedger* ledger) {
  // A module that arrives fused (XLA's optimized modules) as plain HLO:
  // hloc's outlining and fusion decide again (FusionInliner).
  HloPassPipeline unfuse("unfuse", options.pipeline);
  unfuse.AddPass<FusionInliner>(ledger);
  HLOC_ASSIGN_OR_RETURN(bool changed, unfuse.Run(module));
  // XLA:GPU's own gemm custom calls as dots, for the outliner below.
  LowerCublasGemmCustomCalls gemm_calls;
  HLOC_ASSIGN_OR_RETURN(bool lowered, gemm_calls.Run(module));
  changed = changed || lowered;
  // Bounded dynamic shapes as static buffers at the bound plus s32 sizes,
  // computed by the program's kernels; GpuProgram::Execute cuts the result
  // to them (backend/common/declared_result.h), as the host does.
  DynamicPadder padder;
  HLOC_ASSIGN_OR_RETURN(bool padded, padder.Run(module));
  changed = changed || padded;
  // Ops with no GPU kernel (batch norm, select-and-scatter, ...) as plain HLO.
  HLOC_ASSIGN_OR_RETURN(bool expanded, RunExpanders(module, options.pipeline));
  changed = changed || expanded;
  for (const char* stage : {"simplify", "outline"}) {
    if (std::string(stage) == "outline" && options.pipeline.optimization_level < 1) continue;
    HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> pipeline,
                          MakeStandardPipeline(stage, options.pipeline, ledger));
    HLOC_ASSIGN_OR_RETURN(bool c, pipeline->Run(module));
    changed = changed || c;
  }
  InlineCallsWithoutGpuLibrary inline_calls(options, ledger);
  HLOC_ASSIGN_OR_RETURN(bool inlined, inline_calls.Run(module));
  changed = changed || inlined;
  if (options.pipeline.optimization_level >= 1) {
    HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> fusion,
                          MakeStandardPipeline("fusion", options.pipeline, ledger));
    HLOC_ASSIGN_OR_RETURN(bool fused, fusion->Run(module));
    changed = changed || fused;
    // Softmax, layer norm and their kin: one kernel per row instead of one
    // per reduction.
    RowNormalizationFusion row_normalization({}, ledger);
    HLOC_ASSIGN_OR_RETURN(bool merged, row_normalization.Run(module));
    changed = changed || merged;
  }
  DeadCodeElimination dce;
  HLOC_ASSIGN_OR_RETURN(bool removed, dce.Run(module));
  return changed || removed;
}

}  // namespace gpu
}  // namespace hloc
