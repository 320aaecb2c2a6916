// BatchNormExpander: batch-norm-training, batch-norm-inference and
// batch-norm-grad rewritten as reductions, broadcasts and elementwise ops,
// which every backend compiles (before this pass the host and the GPU ran
// them through the interpreter).
//
// With x the operand, f = feature_index, N the element count of one feature
// (the product of every dimension but f), per-feature vectors broadcast
// along f and eps = epsilon:
//
//   training   mean = sum(x) / N            (reduce over every dimension but f)
//              var  = sum((x - mean)^2) / N (biased, two passes as the
//                                            interpreter: no cancellation)
//              y    = (x - mean) * (scale * rsqrt(var + eps)) + offset
//              -> (y, mean, var)
//   inference  y    = (x - mean) * (scale * rsqrt(var + eps)) + offset
//   grad       xc = x - mean, inv = rsqrt(var + eps)
//              sum_dy = sum(dy), sum_dy_xc = sum(dy * xc)
//              dx = scale * inv * (dy - sum_dy / N - xc * sum_dy_xc / (N (var + eps)))
//              -> (dx, sum_dy_xc * inv, sum_dy)
//
// f16 and bf16 are computed in f32 and rounded once at the end (the
// interpreter also rounds once); f32 and f64 in their own type. N = 0 divides
// by 1 instead, so an empty batch gives mean 0 and var 0 as the interpreter
// does. Instructions with control dependencies or dynamic shapes are left
// alone.
#ifndef HLOC_PASSES_EXPANDERS_BATCH_NORM_EXPANDER_H_
#define HLOC_PASSES_EXPANDERS_BATCH_NORM_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class BatchNormExpander : public HloPass {
 public:
  absl::string_view name() const override { return "batch-norm-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_BATCH_NORM_EXPANDER_H_
