// Library patterns over reductions, as JAX spells them:
//
//   hloc.softmax     jax.nn.softmax over the last axis
//                      m = reduce-max(x)   (optionally maximum(m, -inf))
//                      e = exp(x - broadcast(m));  e / broadcast(reduce-sum(e))
//   hloc.layer_norm  (x - mean) * rsqrt(var + eps) [* gamma] [+ beta] over the
//                    last axis, mean and var as reduce-sum divided by N (or
//                    times 1/N), var from the centred values squared
//   hloc.attention   softmax(mask ? q.k^T / scale : fill) . v with q, k, v as
//                    [batch, heads, sequence, head_dim]; scale and mask optional
//
// The broadcasts between the reductions and their users go through JAX's
// reshape/broadcast chains (see pattern::BroadcastChain); the checks verify
// that each chain broadcasts back exactly along the reduced dimension.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/library_checks.h"
#include "passes/outlining/library_patterns.h"

namespace hloc {
namespace {

using pattern::Any;
using pattern::AnyOf;
using pattern::AnySplatConstant;
using pattern::BroadcastChain;
using pattern::Capture;
using pattern::Match;
using pattern::Op;
using pattern::Pattern;
using pattern::SplatConstant;

Pattern ReduceWith(HloOpcode reducer, Pattern operand, double init) {
  return Op(HloOpcode::kReduce)
      .WithOperands(std::move(operand), SplatConstant(init))
      .Where([reducer](const HloInstruction& i) { return pattern::IsReduceWith(i, reducer); },
             absl::StrCat(HloOpcodeName(reducer), " reducer"));
}

// softmax(input) over the last axis; captures x, max, max_value,
// max_broadcast, exp, sum, sum_broadcast.
Pattern SoftmaxOf(Pattern input) {
  Pattern x = Capture("x", std::move(input));
  Pattern max = Capture("max", ReduceWith(HloOpcode::kMaximum, x, -INFINITY));
  Pattern max_value = Capture(
      "max_value",
      AnyOf({Op(HloOpcode::kMaximum).WithOperands(max, SplatConstant(-INFINITY)).Commutative(),
             max}));
  Pattern exp = Capture(
      "exp",
      Op(HloOpcode::kExp)
          .WithOperands(Op(HloOpcode::kSubtract)
                            .WithOperands(x, Capture("max_broadcast", BroadcastChain(max_value)))));
  Pattern sum = Capture("sum", ReduceWith(HloOpcode::kAdd, exp, 0));
  return Op(HloOpcode::kDivide).WithOperands(exp, Capture("sum_broadcast", BroadcastChain(sum)));
}

Refusal CheckSoftmax(const Match& m, const LibraryCheckOptions& options) {
  const HloInstruction* x = m.Get("x");
  HLOC_REFUSE_IF(CheckLibraryFloat(x));
  HLOC_REFUSE_IF(CheckStatic(m.Get("exp")));
  HLOC_REFUSE_IF(CheckReducesLastDimension(m.Get("max"), "max"));
  HLOC_REFUSE_IF(CheckReducesLastDimension(m.Get("sum"), "sum"));
  std::vector<int64_t> last = {x->shape().rank() - 1};
  HLOC_REFUSE_IF(
      CheckBroadcastBack(m.Get("max_broadcast"), m.Get("max_value"), x->shape(), last, "max"));
  HLOC_REFUSE_IF(CheckBroadcastBack(m.Get("sum_broadcast"), m.Get("sum"), x->shape(), last, "sum"));
  HLOC_REFUSE_IF(CheckLayouts(m.Get("max"), options));
  HLOC_REFUSE_IF(CheckLayouts(m.Get("exp"), options));
  return std::nullopt;
}

// ---- layer norm

// x - broadcast(mean), with the broadcast captured as `name`_mean_broadcast.
Pattern Centered(const std::string& name, const Pattern& mean) {
  return Capture(name, Op(HloOpcode::kSubtract)
                           .WithOperands(Capture("x"),
                                         Capture(name + "_mean_broadcast", BroadcastChain(mean))));
}

// reduce-sum(operand) / N or * (1/N); captures `sum` and `count`/`inv_count`.
Pattern MeanOf(const std::string& prefix, Pattern operand) {
  Pattern sum = Capture(prefix + "sum", ReduceWith(HloOpcode::kAdd, std::move(operand), 0));
  return AnyOf(
      {Op(HloOpcode::kDivide)
           .WithOperands(BroadcastChain(sum), Capture(prefix + "count", AnySplatConstant())),
       Op(HloOpcode::kMultiply)
           .WithOperands(BroadcastChain(sum), Capture(prefix + "inv_count", AnySplatConstant()))
           .Commutative()});
}

Pattern LayerNorm() {
  Pattern mean = Capture("mean", MeanOf("", Capture("x")));
  Pattern square = Op(HloOpcode::kMultiply).WithOperands(Centered("c2", mean), Capture("c2"));
  Pattern var = Capture("var", MeanOf("sq_", square));
  Pattern rstd = Capture(
      "rstd", Op(HloOpcode::kRsqrt)
                  .WithOperands(Op(HloOpcode::kAdd)
                                    .WithOperands(var, Capture("epsilon", AnySplatConstant()))
                                    .Commutative()));
  Pattern normalized = Capture(
      "normalized",
      Op(HloOpcode::kMultiply)
          .WithOperands(Centered("c1", mean), Capture("rstd_broadcast", BroadcastChain(rstd)))
          .Commutative());
  Pattern scaled = Capture(
      "scaled",
      Op(HloOpcode::kMultiply)
          .WithOperands(normalized, Capture("gamma_broadcast",
                                            BroadcastChain(Capture("gamma", Any().WithRank(1)))))
          .Commutative());
  Pattern biased =
      Op(HloOpcode::kAdd)
          .WithOperands(
              scaled, Capture("beta_broadcast", BroadcastChain(Capture("beta", Any().WithRank(1)))))
          .Commutative();
  return AnyOf({biased, scaled, normalized});
}

// The count a mean divides by (or multiplies by the inverse of) is N.
Refusal CheckCount(const Match& m, const std::string& prefix, int64_t n) {
  if (const HloInstruction* count = m.Get(prefix + "count")) {
    double value = pattern::SplatValue(count).value_or(NAN);
    if (value != static_cast<double>(n)) {
      return absl::StrCat(prefix, "mean divides by ", value, ", not the ", n, " reduced elements");
    }
  } else if (const HloInstruction* inverse = m.Get(prefix + "inv_count")) {
    double value = pattern::SplatValue(inverse).value_or(NAN);
    if (!(std::fabs(value * n - 1) <= 1e-6)) {
      return absl::StrCat(prefix, "mean multiplies by ", value, ", not 1/", n);
    }
  }
  return std::nullopt;
}

Refusal CheckLayerNorm(const Match& m, const LibraryCheckOptions& options) {
  const HloInstruction* x = m.Get("x");
  const Shape& shape = x->shape();
  HLOC_REFUSE_IF(CheckLibraryFloat(x));
  HLOC_REFUSE_IF(CheckStatic(m.root()));
  std::vector<int64_t> last = {shape.rank() - 1};
  int64_t n = shape.dimensions(shape.rank() - 1);
  HLOC_REFUSE_IF(CheckReducesLastDimension(m.Get("sum"), "mean"));
  HLOC_REFUSE_IF(CheckReducesLastDimension(m.Get("sq_sum"), "variance"));
  HLOC_REFUSE_IF(CheckCount(m, "", n));
  HLOC_REFUSE_IF(CheckCount(m, "sq_", n));
  // mean and rstd hold one value per row.
  for (const char* name : {"mean", "var"}) {
    if (m.Get(name)->shape().element_count() != m.Get("sum")->shape().element_count()) {
      return absl::StrCat(name, " ", m.Get(name)->name(), " is not one value per row");
    }
  }
  HLOC_REFUSE_IF(
      CheckBroadcastBack(m.Get("c1_mean_broadcast"), m.Get("mean"), shape, last, "mean"));
  HLOC_REFUSE_IF(
      CheckBroadcastBack(m.Get("c2_mean_broadcast"), m.Get("mean"), shape, last, "mean"));
  HLOC_REFUSE_IF(CheckBroadcastBack(m.Get("rstd_broadcast"), m.Get("rstd"), shape, last, "rstd"));
  double epsilon = pattern::SplatValue(m.Get("epsilon")).value_or(NAN);
  if (!(epsilon >= 0)) return absl::StrCat("epsilon ", epsilon, " is negative");
  if (m.Get("gamma") != nullptr) {
    HLOC_REFUSE_IF(CheckVectorAlong(m.Get("gamma_broadcast"), m.Get("gamma"), shape.rank() - 1,
                                    shape, "scale"));
  }
  if (m.Get("beta") != nullptr) {
    HLOC_REFUSE_IF(CheckVectorAlong(m.Get("beta_broadcast"), m.Get("beta"), shape.rank() - 1, shape,
                                    "offset"));
  }
  HLOC_REFUSE_IF(CheckLayouts(m.Get("sum"), options));
  HLOC_REFUSE_IF(CheckLayouts(m.root(), options));
  return std::nullopt;
}

std::string LayerNormAttributes(const Match& m) {
  CompositeAttributes a;
  a.Int("axis", m.Get("x")->shape().rank() - 1)
      .Float("epsilon", pattern::SplatValue(m.Get("epsilon")).value_or(0),
             m.Get("epsilon")->shape().element_type())
      .Bool("has_scale", m.Get("gamma") != nullptr)
      .Bool("has_offset", m.Get("beta") != nullptr);
  RecordLayout(a, "x_layout", m.Get("x"));
  RecordLayout(a, "result_layout", m.root());
  return a.ToString();
}

// ---- attention

Pattern Attention() {
  Pattern qk = Capture("qk", Op(HloOpcode::kDot));
  Pattern scaled =
      AnyOf({Op(HloOpcode::kDivide).WithOperands(qk, Capture("divisor", AnySplatConstant())),
             Op(HloOpcode::kMultiply)
                 .WithOperands(qk, Capture("multiplier", AnySplatConstant()))
                 .Commutative(),
             qk});
  Pattern masked = AnyOf(
      {Op(HloOpcode::kSelect)
           .WithOperands(Capture("mask_broadcast",
                                 BroadcastChain(Capture("mask", Any().WithElementType(xla::PRED)))),
                         scaled, Capture("fill", AnySplatConstant())),
       scaled});
  return Op(HloOpcode::kDot).WithOperands(Capture("probs", SoftmaxOf(masked)), Capture("v"));
}

Refusal CheckBatchedDot(const HloInstruction* dot, int64_t lhs_contracting,
                        int64_t rhs_contracting) {
  const xla::DotDimensionNumbers& dn = dot->attrs().dot_dimension_numbers;
  bool ok = dot->operand(0)->shape().rank() == 4 && dot->operand(1)->shape().rank() == 4 &&
            ToVector(dn.lhs_batch_dimensions()) == std::vector<int64_t>{0, 1} &&
            ToVector(dn.rhs_batch_dimensions()) == std::vector<int64_t>{0, 1} &&
            ToVector(dn.lhs_contracting_dimensions()) == std::vector<int64_t>{lhs_contracting} &&
            ToVector(dn.rhs_contracting_dimensions()) == std::vector<int64_t>{rhs_contracting};
  if (!ok) {
    return absl::StrCat(dot->name(), " is not a [batch, heads, ...] product contracting lhs ",
                        lhs_contracting, " with rhs ", rhs_contracting);
  }
  return std::nullopt;
}

Refusal CheckAttention(const Match& m, const LibraryCheckOptions& options) {
  const HloInstruction* qk = m.Get("qk");
  const HloInstruction* pv = m.root();
  HLOC_REFUSE_IF(CheckLibraryFloat(qk->operand(0)));
  PrimitiveType type = qk->operand(0)->shape().element_type();
  for (const HloInstruction* i :
       std::vector<const HloInstruction*>{qk->operand(1), qk, pv->operand(1), pv}) {
    if (i->shape().element_type() != type) {
      return absl::StrCat(i->name(), " is ", PrimitiveTypeName(i->shape().element_type()),
                          ", q is ", PrimitiveTypeName(type));
    }
  }
  HLOC_REFUSE_IF(CheckStatic(qk));
  HLOC_REFUSE_IF(CheckStatic(pv));
  HLOC_REFUSE_IF(CheckBatchedDot(qk, 3, 3));
  HLOC_REFUSE_IF(CheckBatchedDot(pv, 3, 2));
  HLOC_REFUSE_IF(CheckSoftmax(m, options));
  if (const HloInstruction* mask = m.Get("mask")) {
    if (!pattern::EquivalentBroadcastDimensions(m.Get("mask_broadcast"), mask).has_value()) {
      return "mask is not a broadcast of a smaller mask";
    }
  }
  HLOC_REFUSE_IF(CheckLayouts(qk, options));
  HLOC_REFUSE_IF(CheckLayouts(pv, options));
  return std::nullopt;
}

std::string AttentionAttributes(const Match& m) {
  double scale = 1;
  if (const HloInstruction* d = m.Get("divisor")) scale = 1 / pattern::SplatValue(d).value_or(1);
  if (const HloInstruction* k = m.Get("multiplier")) scale = pattern::SplatValue(k).value_or(1);
  PrimitiveType type = m.Get("qk")->shape().element_type();
  CompositeAttributes a;
  a.Float("scale", scale, type).Bool("has_mask", m.Get("mask") != nullptr);
  if (const HloInstruction* mask = m.Get("mask")) {
    a.Ints("mask_dims", pattern::EquivalentBroadcastDimensions(m.Get("mask_broadcast"), mask)
                            .value_or(std::vector<int64_t>{}));
    a.Float("mask_fill", pattern::SplatValue(m.Get("fill")).value_or(0), type);
  }
  const HloInstruction* qk = m.Get("qk");
  RecordLayout(a, "q_layout", qk->operand(0));
  RecordLayout(a, "k_layout", qk->operand(1));
  RecordLayout(a, "v_layout", m.root()->operand(1));
  RecordLayout(a, "result_layout", m.root());
  return a.ToString();
}

// The captured inputs among `names`, in that order.
std::vector<const HloInstruction*> Inputs(const Match& m, std::vector<const char*> names) {
  std::vector<const HloInstruction*> inputs;
  for (const char* name : names) {
    if (const HloInstruction* i = m.Get(name)) inputs.push_back(i);
  }
  return inputs;
}

}  // namespace

void AppendNormalizationPatterns(std::vector<LibraryPattern>* table) {
  {
    LibraryPattern p;
    p.name = "hloc.softmax";
    p.priority = 15;
    p.pattern = SoftmaxOf(Any());
    p.check = CheckSoftmax;
    p.attributes = [](const Match& m) {
      CompositeAttributes a;
      a.Int("axis", m.Get("x")->shape().rank() - 1);
      RecordLayout(a, "x_layout", m.Get("x"));
      RecordLayout(a, "result_layout", m.root());
      return a.ToString();
    };
    p.recorded_attributes = {"axis", "x_layout", "result_layout"};
    p.operands = [](const Match& m) { return Inputs(m, {"x"}); };
    p.numerics = {NumericsContract::Kind::kReformulation, 0,
                  "max-shifted exp and the row sum in the library's order"};
    p.outside_uses = OutsideUsePolicy::kExtraOutputs;
    table->push_back(std::move(p));
  }
  {
    LibraryPattern p;
    p.name = "hloc.layer_norm";
    p.priority = 15;
    p.pattern = LayerNorm();
    p.check = CheckLayerNorm;
    p.attributes = LayerNormAttributes;
    p.operands = [](const Match& m) { return Inputs(m, {"x", "gamma", "beta"}); };
    p.recorded_attributes = {"axis",       "epsilon",  "has_scale",
                             "has_offset", "x_layout", "result_layout"};
    p.numerics = {NumericsContract::Kind::kReformulation, 0,
                  "mean and variance may be computed in one pass (Welford) in the library's "
                  "order"};
    p.outside_uses = OutsideUsePolicy::kExtraOutputs;
    table->push_back(std::move(p));
  }
  {
    LibraryPattern p;
    p.name = "hloc.attention";
    p.priority = 40;
    p.pattern = Attention();
    p.check = CheckAttention;
    p.attributes = AttentionAttributes;
    p.operands = [](const Match& m) {
      std::vector<const HloInstruction*> inputs = {m.Get("qk")->operand(0),
                                                   m.Get("qk")->operand(1),
                                                   m.root()->operand(1)};
      if (const HloInstruction* mask = m.Get("mask")) inputs.push_back(mask);
      return inputs;
    };
    p.recorded_attributes = {"scale",    "has_mask", "mask_dims",   "mask_fill",
                             "q_layout", "k_layout", "v_layout", "result_layout"};
    p.numerics = {NumericsContract::Kind::kReformulation, 0,
                  "online (flash) softmax: probabilities are rescaled blockwise and never "
                  "stored"};
    table->push_back(std::move(p));
  }
}

}  // namespace hloc
