// batch-norm-inference, batch-norm-training and batch-norm-grad. Statistics
// are over every dimension except feature_index (the variance is the biased
// 1/N one) and are accumulated in double per feature; elements are read and
// written in their own type (f16/bf16 computed in float and rounded once).
// The operand is viewed as [outer, features, inner] so each feature touches
// contiguous runs; features are spread over the worker threads.
#include <cmath>
#include <vector>

#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/ops.h"
#include "hlo/evaluator/parallel.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

struct FeatureLayout {
  int64_t outer = 1, features = 1, inner = 1;  // operand = [outer, features, inner]
};

absl::StatusOr<FeatureLayout> Layout(const HloInstruction& hlo, const Literal& operand,
                                     absl::Span<const Literal* const> per_feature) {
  const int64_t f = hlo.attrs().feature_index;
  const Shape& s = operand.shape();
  if (!s.IsArray() || f < 0 || f >= s.rank() || !IsFloatingPoint(s.element_type()) ||
      IsNarrowFloat(s.element_type())) {
    return InstructionError(hlo, "feature_index out of range or operand not f16/bf16/f32/f64");
  }
  FeatureLayout l;
  for (int64_t d = 0; d < f; ++d) l.outer *= s.dimensions(d);
  l.features = s.dimensions(f);
  for (int64_t d = f + 1; d < s.rank(); ++d) l.inner *= s.dimensions(d);
  for (const Literal* p : per_feature) {
    if (p->element_count() != l.features ||
        p->shape().element_type() != s.element_type()) {
      return InstructionError(hlo, "per-feature operand has ", p->element_count(),
                              " elements of type ", PrimitiveTypeName(p->shape().element_type()),
                              ", expected ", l.features, " of the operand's type");
    }
  }
  return l;
}

std::vector<double> FeatureValues(const Literal& l) {
  std::vector<double> v(l.element_count());
  for (int64_t i = 0; i < l.element_count(); ++i) v[i] = l.GetAsDouble(i);
  return v;
}

Literal FeatureLiteral(const Shape& shape, const std::vector<double>& v) {
  Literal l(shape);
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetFromDouble(i, v[i]);
  return l;
}

// Calls fn(c, run pointer offset) for every contiguous run of feature c.
template <typename Fn>
void ForFeatureRuns(const FeatureLayout& l, int64_t c, Fn&& fn) {
  for (int64_t o = 0; o < l.outer; ++o) fn((o * l.features + c) * l.inner);
}

template <typename Tag>
void Normalize(const FeatureLayout& l, const Literal& x, Literal* y, const std::vector<double>& scale,
               const std::vector<double>& offset, const std::vector<double>& mean,
               const std::vector<double>& var, double eps, int threads) {
  using S = typename Tag::Storage;
  using C = typename Tag::Compute;
  const S* src = reinterpret_cast<const S*>(x.raw());
  S* dst = reinterpret_cast<S*>(y->mutable_raw());
  ParallelFor(threads, l.features, l.outer * l.inner * 4, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const double k = scale[c] / std::sqrt(var[c] + eps);
      const C mul = static_cast<C>(k);
      const C add = static_cast<C>(offset[c] - mean[c] * k);
      ForFeatureRuns(l, c, [&](int64_t base) {
        for (int64_t j = 0; j < l.inner; ++j) dst[base + j] = Tag::Store(Tag::Load(src[base + j]) * mul + add);
      });
    }
  });
}

template <typename Tag>
absl::StatusOr<Literal> TrainingTyped(const HloInstruction& hlo, Operands ops, const FeatureLayout& l,
                                      int threads) {
  using S = typename Tag::Storage;
  const S* src = reinterpret_cast<const S*>(ops[0]->raw());
  const double count = static_cast<double>(l.outer * l.inner);
  std::vector<double> mean(l.features, 0), var(l.features, 0);
  ParallelFor(threads, l.features, l.outer * l.inner * 3, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double sum = 0;
      ForFeatureRuns(l, c, [&](int64_t base) {
        for (int64_t j = 0; j < l.inner; ++j) sum += Tag::Load(src[base + j]);
      });
      const double m = count > 0 ? sum / count : 0;
      double sq = 0;
      ForFeatureRuns(l, c, [&](int64_t base) {
        for (int64_t j = 0; j < l.inner; ++j) {
          const double d = Tag::Load(src[base + j]) - m;
          sq += d * d;
        }
      });
      mean[c] = m;
      var[c] = count > 0 ? sq / count : 0;
    }
  });
  HLOC_ASSIGN_OR_RETURN(Literal y, NewLiteral(hlo, ops[0]->shape()));
  Normalize<Tag>(l, *ops[0], &y, FeatureValues(*ops[1]), FeatureValues(*ops[2]), mean, var,
                 hlo.attrs().epsilon, threads);
  std::vector<Literal> parts;
  parts.push_back(std::move(y));
  parts.push_back(FeatureLiteral(ops[1]->shape(), mean));
  parts.push_back(FeatureLiteral(ops[1]->shape(), var));
  return Literal::Tuple(std::move(parts));
}

template <typename Tag>
absl::StatusOr<Literal> GradTyped(const HloInstruction& hlo, Operands ops, const FeatureLayout& l,
                                  int threads) {
  using S = typename Tag::Storage;
  using C = typename Tag::Compute;
  const S* x = reinterpret_cast<const S*>(ops[0]->raw());
  const S* dy = reinterpret_cast<const S*>(ops[4]->raw());
  const std::vector<double> scale = FeatureValues(*ops[1]), mean = FeatureValues(*ops[2]),
                            var = FeatureValues(*ops[3]);
  const double eps = hlo.attrs().epsilon;
  const double count = static_cast<double>(l.outer * l.inner);
  std::vector<double> sum_dy(l.features, 0), grad_scale(l.features, 0);
  HLOC_ASSIGN_OR_RETURN(Literal dx_lit, NewLiteral(hlo, ops[0]->shape()));
  S* dx = reinterpret_cast<S*>(dx_lit.mutable_raw());
  ParallelFor(threads, l.features, l.outer * l.inner * 6, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double s_dy = 0, s_dy_xc = 0;
      const double m = mean[c];
      ForFeatureRuns(l, c, [&](int64_t base) {
        for (int64_t j = 0; j < l.inner; ++j) {
          const double g = Tag::Load(dy[base + j]);
          s_dy += g;
          s_dy_xc += g * (Tag::Load(x[base + j]) - m);
        }
      });
      const double inv_std = 1.0 / std::sqrt(var[c] + eps);
      sum_dy[c] = s_dy;
      grad_scale[c] = s_dy_xc * inv_std;
      // dx = k * (dy - mean(dy) - (x - m) * s_dy_xc / (N (var + eps)))
      const double k = scale[c] * inv_std;
      const C a = static_cast<C>(k);
      const C b = static_cast<C>(-k * s_dy / count);
      const C e = static_cast<C>(-k * s_dy_xc / (count * (var[c] + eps)));
      const C mc = static_cast<C>(m);
      ForFeatureRuns(l, c, [&](int64_t base) {
        for (int64_t j = 0; j < l.inner; ++j) {
          dx[base + j] =
              Tag::Store(a * Tag::Load(dy[base + j]) + b + e * (Tag::Load(x[base + j]) - mc));
        }
      });
    }
  });
  std::vector<Literal> parts;
  parts.push_back(std::move(dx_lit));
  parts.push_back(FeatureLiteral(ops[1]->shape(), grad_scale));
  parts.push_back(FeatureLiteral(ops[1]->shape(), sum_dy));
  return Literal::Tuple(std::move(parts));
}

template <typename Fn>
absl::StatusOr<Literal> DispatchFloat(const HloInstruction& hlo, PrimitiveType type, Fn&& fn) {
  switch (type) {
    case xla::F16: return fn(F16Type{});
    case xla::BF16: return fn(BF16Type{});
    case xla::F32: return fn(F32Type{});
    case xla::F64: return fn(F64Type{});
    default: return InstructionError(hlo, "batch norm needs a floating-point operand");
  }
}

}  // namespace

absl::StatusOr<Literal> EvalBatchNormInference(const HloInstruction& hlo, Operands ops,
                                               EvalContext& ctx) {
  HLOC_ASSIGN_OR_RETURN(FeatureLayout l, Layout(hlo, *ops[0], ops.subspan(1)));
  HLOC_ASSIGN_OR_RETURN(Literal y, NewLiteral(hlo, ops[0]->shape()));
  return DispatchFloat(hlo, ops[0]->shape().element_type(), [&](auto tag) -> absl::StatusOr<Literal> {
    Normalize<decltype(tag)>(l, *ops[0], &y, FeatureValues(*ops[1]), FeatureValues(*ops[2]),
                             FeatureValues(*ops[3]), FeatureValues(*ops[4]), hlo.attrs().epsilon,
                             ctx.num_threads());
    return std::move(y);
  });
}

absl::StatusOr<Literal> EvalBatchNormTraining(const HloInstruction& hlo, Operands ops,
                                              EvalContext& ctx) {
  HLOC_ASSIGN_OR_RETURN(FeatureLayout l, Layout(hlo, *ops[0], ops.subspan(1)));
  return DispatchFloat(hlo, ops[0]->shape().element_type(), [&](auto tag) {
    return TrainingTyped<decltype(tag)>(hlo, ops, l, ctx.num_threads());
  });
}

absl::StatusOr<Literal> EvalBatchNormGrad(const HloInstruction& hlo, Operands ops,
                                          EvalContext& ctx) {
  HLOC_ASSIGN_OR_RETURN(FeatureLayout l, Layout(hlo, *ops[0], ops.subspan(1, 3)));
  if (ops[4]->element_count() != ops[0]->element_count() ||
      ops[4]->shape().element_type() != ops[0]->shape().element_type()) {
    return InstructionError(hlo, "grad_output differs in size or type from the operand");
  }
  return DispatchFloat(hlo, ops[0]->shape().element_type(), [&](auto tag) {
    return GradTyped<decltype(tag)>(hlo, ops, l, ctx.num_threads());
  });
}

}  // namespace eval
}  // namespace hloc
