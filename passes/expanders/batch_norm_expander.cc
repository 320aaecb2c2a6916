#include "passes/expanders/batch_norm_expander.h"

#include <vector>

#include "hlo/status_macros.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace {

using expanders::ExpansionBuilder;

bool IsBatchNorm(HloOpcode opcode) {
  return opcode == HloOpcode::kBatchNormTraining || opcode == HloOpcode::kBatchNormInference ||
         opcode == HloOpcode::kBatchNormGrad;
}

bool CanExpand(const HloInstruction& bn) {
  if (!bn.control_predecessors().empty() || !bn.control_successors().empty()) return false;
  const Shape& x = bn.operand(0)->shape();
  const int64_t f = bn.attrs().feature_index;
  if (!x.IsArray() || !x.is_static() || f < 0 || f >= x.rank()) return false;
  const PrimitiveType type = x.element_type();
  if (!IsFloatingPoint(type) || IsComplex(type) || IsNarrowFloat(type)) return false;
  for (const HloInstruction* operand : bn.operands()) {
    if (!operand->shape().IsArray() || operand->shape().element_type() != type) return false;
  }
  return true;
}

// The pieces every batch-norm expansion shares: the compute type, the
// reduction over everything but the feature dimension, and per-feature
// broadcasts.
class BatchNormExpansion {
 public:
  explicit BatchNormExpansion(HloInstruction* bn)
      : bn_(bn), b_(bn->parent(), bn), feature_(bn->attrs().feature_index) {
    const Shape& x = bn->operand(0)->shape();
    type_ = x.element_type();
    compute_ = (type_ == xla::F16 || type_ == xla::BF16) ? xla::F32 : type_;
    dims_ = x.dimensions();
    int64_t n = 1;
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (d != feature_) {
        reduce_dims_.push_back(d);
        n *= dims_[d];
      }
    }
    count_ = n > 0 ? n : 1;
  }

  ExpansionBuilder& b() { return b_; }
  // Operand i in the compute type.
  HloInstruction* Operand(int64_t i) { return b_.ConvertIfNeeded(bn_->operand(i), compute_); }
  // sum over every dimension but the feature one: [features].
  HloInstruction* SumPerFeature(HloInstruction* x) {
    if (add_ == nullptr) add_ = b_.ScalarBinaryComputation(HloOpcode::kAdd, compute_);
    return b_.Reduce(x, b_.Scalar(compute_, 0), reduce_dims_, add_);
  }
  // A per-feature vector broadcast to the operand's shape.
  HloInstruction* PerElement(HloInstruction* v) { return b_.Broadcast(v, dims_, {feature_}); }
  // v / N for a per-feature vector.
  HloInstruction* DivideByCount(HloInstruction* v) {
    return b_.Binary(HloOpcode::kDivide, v, Splat(static_cast<double>(count_)));
  }
  // A per-feature vector of `value`.
  HloInstruction* Splat(double value) {
    return b_.Splat(b_.Scalar(compute_, value), {dims_[feature_]});
  }
  // rsqrt(var + eps).
  HloInstruction* InverseStd(HloInstruction* var) {
    return b_.Unary(HloOpcode::kRsqrt,
                    b_.Binary(HloOpcode::kAdd, var, Splat(bn_->attrs().epsilon)));
  }
  // (x - mean) * (scale * inv_std) + offset, with x and per-feature values.
  HloInstruction* Normalize(HloInstruction* centered, HloInstruction* scale,
                            HloInstruction* inv_std, HloInstruction* offset) {
    HloInstruction* k = b_.Binary(HloOpcode::kMultiply, scale, inv_std);
    return b_.Binary(HloOpcode::kAdd, b_.Binary(HloOpcode::kMultiply, centered, PerElement(k)),
                     PerElement(offset));
  }
  HloInstruction* Result(HloInstruction* v) { return b_.ConvertIfNeeded(v, type_); }

  absl::Status Finish(HloInstruction* replacement) {
    HLOC_RETURN_IF_ERROR(b_.status());
    return expanders::ReplaceInstruction(bn_, replacement);
  }

 private:
  HloInstruction* bn_;
  ExpansionBuilder b_;
  int64_t feature_;
  PrimitiveType type_, compute_;
  std::vector<int64_t> dims_, reduce_dims_;
  int64_t count_ = 1;
  HloComputation* add_ = nullptr;
};

absl::Status ExpandTraining(HloInstruction* bn) {
  BatchNormExpansion e(bn);
  ExpansionBuilder& b = e.b();
  HloInstruction* x = e.Operand(0);
  HloInstruction* mean = e.DivideByCount(e.SumPerFeature(x));
  HloInstruction* centered = b.Binary(HloOpcode::kSubtract, x, e.PerElement(mean));
  HloInstruction* var =
      e.DivideByCount(e.SumPerFeature(b.Binary(HloOpcode::kMultiply, centered, centered)));
  HloInstruction* y = e.Normalize(centered, e.Operand(1), e.InverseStd(var), e.Operand(2));
  return e.Finish(b.Tuple({e.Result(y), e.Result(mean), e.Result(var)}));
}

absl::Status ExpandInference(HloInstruction* bn) {
  BatchNormExpansion e(bn);
  ExpansionBuilder& b = e.b();
  HloInstruction* centered =
      b.Binary(HloOpcode::kSubtract, e.Operand(0), e.PerElement(e.Operand(3)));
  HloInstruction* y = e.Normalize(centered, e.Operand(1), e.InverseStd(e.Operand(4)), e.Operand(2));
  return e.Finish(e.Result(y));
}

absl::Status ExpandGrad(HloInstruction* bn) {
  BatchNormExpansion e(bn);
  ExpansionBuilder& b = e.b();
  HloInstruction* scale = e.Operand(1);
  HloInstruction* var = e.Operand(3);
  HloInstruction* dy = e.Operand(4);
  HloInstruction* centered =
      b.Binary(HloOpcode::kSubtract, e.Operand(0), e.PerElement(e.Operand(2)));
  HloInstruction* inv_std = e.InverseStd(var);
  HloInstruction* sum_dy = e.SumPerFeature(dy);
  HloInstruction* sum_dy_xc = e.SumPerFeature(b.Binary(HloOpcode::kMultiply, dy, centered));
  HloInstruction* grad_scale = b.Binary(HloOpcode::kMultiply, sum_dy_xc, inv_std);
  // dx = k * (dy - sum_dy / N - xc * sum_dy_xc / (N (var + eps))), k = scale * inv_std.
  HloInstruction* k = b.Binary(HloOpcode::kMultiply, scale, inv_std);
  HloInstruction* var_eps = b.Binary(HloOpcode::kAdd, var, e.Splat(bn->attrs().epsilon));
  HloInstruction* xc_factor =
      e.DivideByCount(b.Binary(HloOpcode::kDivide, sum_dy_xc, var_eps));
  HloInstruction* dx = b.Binary(
      HloOpcode::kMultiply, e.PerElement(k),
      b.Binary(HloOpcode::kSubtract,
               b.Binary(HloOpcode::kSubtract, dy, e.PerElement(e.DivideByCount(sum_dy))),
               b.Binary(HloOpcode::kMultiply, centered, e.PerElement(xc_factor))));
  return e.Finish(b.Tuple({e.Result(dx), e.Result(grad_scale), e.Result(sum_dy)}));
}

}  // namespace

absl::StatusOr<bool> BatchNormExpander::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* bn : computation->MakeInstructionPostOrder()) {
      if (!IsBatchNorm(bn->opcode()) || !CanExpand(*bn)) continue;
      switch (bn->opcode()) {
        case HloOpcode::kBatchNormTraining: HLOC_RETURN_IF_ERROR(ExpandTraining(bn)); break;
        case HloOpcode::kBatchNormInference: HLOC_RETURN_IF_ERROR(ExpandInference(bn)); break;
        default: HLOC_RETURN_IF_ERROR(ExpandGrad(bn)); break;
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
