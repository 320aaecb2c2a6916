// Row normalization: the shape of computation that one GPU block (or warp)
// per row can run whole. Softmax, log-softmax, layer norm and RMS norm all
// read the same way:
//
//      x[r, c] ──► reduce over c ──► per-row value m[r] ──► broadcast back
//        │                                                      │
//        └──────────────── elementwise (x, m) ◄─────────────────┘
//                               │
//                          reduce over c again ──► ... ──► outputs
//
// Every reduction reduces the same trailing (row) dimensions of the same row
// shape; whatever depends on a reduction is either row-shaped and
// elementwise, or per-row (one value per row: the reduction, reshapes of it,
// elementwise ops on such values) and reaches row-shaped values only through
// a broadcast along the row. Then a kernel can keep a row's reductions in
// registers: fold the row, combine across the block, and read the result
// wherever a broadcast asks for it, with no round trip through memory.
//
// This file only decides whether a computation has that shape (LLVM-free);
// row_normalization_fusion.h merges fusions into such computations and
// row_normalization_kernel_emitter.cc generates the kernel.
#ifndef HLOC_BACKEND_GPU_ROW_NORMALIZATION_H_
#define HLOC_BACKEND_GPU_ROW_NORMALIZATION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/computation.h"

namespace hloc {
namespace gpu {

// The frontend attribute a row-normalization fusion carries, and its value.
inline constexpr char kFusionStrategyAttribute[] = "hloc.fusion_strategy";
inline constexpr char kRowNormalizationStrategy[] = "row_normalization";

struct RowNormalizationLimits {
  // A row must fit one block's registers: at most this many elements.
  int64_t max_row_length = 8192;
  // Each reduction keeps a few shared-memory slots; more than this many
  // reductions in one kernel is refused.
  int64_t max_reductions = 8;
};

struct RowNormalizationPlan {
  std::vector<int64_t> row_shape;   // The reductions' operand dimensions.
  std::vector<int64_t> outer_dims;  // Leading dimensions (one row per index).
  std::vector<int64_t> row_dims;    // Trailing, reduced dimensions.
  int64_t rows = 1;
  int64_t row_length = 1;
  // Every reduction, operands before users.
  std::vector<const HloInstruction*> reductions;
  // A reduction reads another one's result (softmax's sum after its max).
  bool chained = false;
  // A row-shaped value depends on a reduction (the result is broadcast back).
  bool broadcasts_back = false;
};

// The plan for `computation`, or FailedPrecondition saying why it is not a
// row normalization (the first rule it breaks, naming the instruction).
// Plain reductions (no reduction result read back along the row) are refused
// too: the reduction emitter covers them.
absl::StatusOr<RowNormalizationPlan> AnalyzeRowNormalization(
    const HloComputation& computation, const RowNormalizationLimits& limits = {});

// Whether `dims` has one element per row of `plan` laid out in row order:
// the same dimensions as plan.outer_dims once dimensions of size 1 are
// dropped from both.
bool IsPerRowShape(const RowNormalizationPlan& plan, const std::vector<int64_t>& dims);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_ROW_NORMALIZATION_H_
