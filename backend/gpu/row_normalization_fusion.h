// RowNormalizationFusion: the CUDA pipeline's last fusion step. The generic
// fusion passes make one kernel per reduction, so softmax becomes three
// (max; exp and sum; divide) and layer norm three or four, each a launch
// and a trip of the row through memory. This pass merges such a chain back
// into one fusion when the result is a row normalization
// (row_normalization.h), which the GPU emitter runs as one kernel with a
// block (or warp) per row:
//
//    fusion(max) ─► fusion(exp, sum) ─► fusion(divide)
//                          ║
//                          ▼
//    fusion(max, exp, sum, divide), kind=kCustom,
//        frontend_attributes={hloc.fusion_strategy="row_normalization"}
//
// Candidates: fusions (and unfused reduces) whose reductions all reduce the
// trailing dimensions of one row shape and whose other ops are elementwise,
// broadcasts, reshapes and constants; neighbours of the same row shape join,
// and so do elementwise neighbours whose outputs are row-shaped or per row.
// A candidate group is merged on a scratch copy of the module first and kept
// only when its fused computation passes AnalyzeRowNormalization (and the
// merge closes no cycle); every refusal leaves the graph as it was and is a
// ledger entry with the reason.
#ifndef HLOC_BACKEND_GPU_ROW_NORMALIZATION_FUSION_H_
#define HLOC_BACKEND_GPU_ROW_NORMALIZATION_FUSION_H_

#include "absl/status/statusor.h"
#include "backend/gpu/row_normalization.h"
#include "hlo/module.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/pass.h"

namespace hloc {
namespace gpu {

class RowNormalizationFusion : public HloPass {
 public:
  explicit RowNormalizationFusion(RowNormalizationLimits limits = {},
                                  FusionLedger* ledger = nullptr)
      : limits_(limits), ledger_(ledger) {}
  static constexpr absl::string_view kPassName = "row-normalization-fusion";
  absl::string_view name() const override { return kPassName; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  absl::StatusOr<bool> RunOnComputation(HloModule& module, HloComputation& computation);

  RowNormalizationLimits limits_;
  FusionLedger* ledger_;
};

// Whether `fusion` was made (or marked) by RowNormalizationFusion.
bool IsRowNormalizationFusion(const HloInstruction& fusion);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_ROW_NORMALIZATION_FUSION_H_
