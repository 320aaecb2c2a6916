// The gemm family of library patterns: a dot as a (batched) matrix multiply,
// optionally followed by the epilogues gemm libraries fuse — a bias vector
// along the output feature (last) dimension, then relu or GELU.
//
//   hloc.gemm             dot(a, b)                                  no batch dims
//   hloc.gemm_bias        add(dot(a, b), broadcast(bias))
//   hloc.gemm_bias_relu   maximum(add(dot, broadcast(bias)), 0)
//   hloc.gemm_bias_gelu   gelu(add(dot, broadcast(bias))), tanh or erf form
//   hloc.batched_gemm     dot with leading batch dimensions
//
// A dot is a gemm when each side contracts one dimension and the right side
// has one free dimension; a left side of rank > 2 must contract its last
// dimension (its leading dimensions fold into M, as row-major storage allows).
// GELU is x * cdf(x) (or x/2 * erfc(..)) with cdf any elementwise function of
// the bias add x alone; the check evaluates the whole activation and compares
// it with both GELU forms (see elementwise_function.h), which covers the tanh
// form and JAX's 80-instruction erfc expansion of the exact form alike.
#include "absl/strings/str_cat.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/elementwise_function.h"
#include "passes/outlining/library_checks.h"
#include "passes/outlining/library_patterns.h"

namespace hloc {
namespace {

using pattern::AnyOf;
using pattern::BroadcastChain;
using pattern::Capture;
using pattern::Match;
using pattern::Op;
using pattern::Pattern;

bool HasBatchDims(const HloInstruction& dot) {
  return dot.attrs().dot_dimension_numbers->lhs_batch_dimensions_size() > 0;
}

Pattern GemmDot() {
  return Capture("dot", Op(HloOpcode::kDot)
                            .Where([](const HloInstruction& i) { return !HasBatchDims(i); },
                                   "no batch dimensions"));
}

Pattern BatchedDot() {
  return Capture("dot", Op(HloOpcode::kDot).Where(HasBatchDims, "batch dimensions"));
}

// add(dot, broadcast of a rank-1 bias), either order.
Pattern BiasAdd() {
  return Capture(
      "bias_add",
      Op(HloOpcode::kAdd)
          .WithOperands(GemmDot(),
                        Capture("bias_broadcast",
                                BroadcastChain(Capture("bias", pattern::Any().WithRank(1)))))
          .Commutative());
}

Refusal CheckDot(const HloInstruction* dot, bool batched, const LibraryCheckOptions& options) {
  const HloInstruction* lhs = dot->operand(0);
  const HloInstruction* rhs = dot->operand(1);
  HLOC_REFUSE_IF(CheckLibraryFloat(lhs));
  PrimitiveType in = lhs->shape().element_type();
  PrimitiveType out = dot->shape().element_type();
  if (rhs->shape().element_type() != in) {
    return absl::StrCat("operands of ", dot->name(), " have different types (",
                        PrimitiveTypeName(in), ", ", PrimitiveTypeName(rhs->shape().element_type()),
                        ")");
  }
  bool widening = out == xla::F32 && (in == xla::F16 || in == xla::BF16);
  if (out != in && !widening) {
    return absl::StrCat(dot->name(), " computes ", PrimitiveTypeName(out), " from ",
                        PrimitiveTypeName(in));
  }
  HLOC_REFUSE_IF(CheckStatic(dot));
  const xla::DotDimensionNumbers& dn = dot->attrs().dot_dimension_numbers;
  if (dn.lhs_contracting_dimensions_size() != 1 || dn.rhs_contracting_dimensions_size() != 1) {
    return absl::StrCat(dot->name(), " contracts ", dn.lhs_contracting_dimensions_size(),
                        " dimensions (a gemm contracts one)");
  }
  int64_t batch = dn.lhs_batch_dimensions_size();
  for (int64_t k = 0; k < batch; ++k) {
    if (dn.lhs_batch_dimensions(k) != k || dn.rhs_batch_dimensions(k) != k) {
      return absl::StrCat(dot->name(), " has batch dimensions lhs ",
                          DimsToString(ToVector(dn.lhs_batch_dimensions())), " rhs ",
                          DimsToString(ToVector(dn.rhs_batch_dimensions())),
                          ", not the leading ones");
    }
  }
  int64_t lhs_rank = lhs->shape().rank(), rhs_rank = rhs->shape().rank();
  if (rhs_rank != batch + 2) {
    return absl::StrCat("right operand of ", dot->name(), " has ", rhs_rank - batch - 1,
                        " free dimensions (a gemm has one)");
  }
  if (batched ? lhs_rank != batch + 2 : lhs_rank < 2) {
    return absl::StrCat("left operand of ", dot->name(), " has ", lhs_rank - batch - 1,
                        " free dimensions");
  }
  if (lhs_rank > batch + 2 && dn.lhs_contracting_dimensions(0) != lhs_rank - 1) {
    return absl::StrCat("left operand of ", dot->name(),
                        " has several free dimensions and does not contract its last one");
  }
  HLOC_REFUSE_IF(CheckLayouts(dot, options));
  return std::nullopt;
}

Refusal CheckBias(const Match& m, const LibraryCheckOptions& options) {
  const HloInstruction* add = m.Get("bias_add");
  const Shape& out = add->shape();
  HLOC_REFUSE_IF(
      CheckVectorAlong(m.Get("bias_broadcast"), m.Get("bias"), out.rank() - 1, out, "bias"));
  HLOC_REFUSE_IF(CheckLayouts(add, options));
  return std::nullopt;
}

CompositeAttributes DotAttributes(const Match& m, absl::string_view epilogue) {
  const HloInstruction* dot = m.Get("dot");
  const xla::DotDimensionNumbers& dn = dot->attrs().dot_dimension_numbers;
  CompositeAttributes a;
  a.Ints("lhs_contracting_dims", ToVector(dn.lhs_contracting_dimensions()))
      .Ints("rhs_contracting_dims", ToVector(dn.rhs_contracting_dimensions()))
      .Ints("lhs_batch_dims", ToVector(dn.lhs_batch_dimensions()))
      .Ints("rhs_batch_dims", ToVector(dn.rhs_batch_dimensions()))
      .Float("alpha", 1.0)
      .Float("beta", 0.0)
      .String("epilogue", epilogue);
  RecordLayout(a, "lhs_layout", dot->operand(0));
  RecordLayout(a, "rhs_layout", dot->operand(1));
  RecordLayout(a, "result_layout", m.root());
  return a;
}

const std::vector<std::string>& GemmAttributeNames() {
  static const auto* names = new std::vector<std::string>{"lhs_contracting_dims",
                                                          "rhs_contracting_dims",
                                                          "lhs_batch_dims",
                                                          "rhs_batch_dims",
                                                          "alpha",
                                                          "beta",
                                                          "epilogue",
                                                          "lhs_layout",
                                                          "rhs_layout",
                                                          "result_layout"};
  return *names;
}

// lhs, rhs[, bias]: the order the library reads them.
std::vector<const HloInstruction*> GemmOperands(const Match& m) {
  const HloInstruction* dot = m.Get("dot");
  std::vector<const HloInstruction*> operands = {dot->operand(0), dot->operand(1)};
  if (const HloInstruction* bias = m.Get("bias")) operands.push_back(bias);
  return operands;
}

NumericsContract GemmNumerics() {
  return {NumericsContract::Kind::kReformulation, 0,
          "summation order of the dot is the library's; accumulation at least in the result "
          "type"};
}

// The GELU form of the cone rooted at m.root() over the bias add.
absl::StatusOr<Identification> GeluForm(const Match& m) {
  return IdentifyElementwiseFunction(m.root(), m.Get("bias_add"), GeluReferences());
}

}  // namespace

void AppendGemmPatterns(std::vector<LibraryPattern>* table) {
  {
    LibraryPattern p;
    p.name = "hloc.gemm";
    p.priority = 10;
    p.pattern = GemmDot();
    p.check = [](const Match& m, const LibraryCheckOptions& o) {
      return CheckDot(m.Get("dot"), false, o);
    };
    p.attributes = [](const Match& m) { return DotAttributes(m, "none").ToString(); };
    p.recorded_attributes = GemmAttributeNames();
    p.numerics = GemmNumerics();
    p.operands = GemmOperands;
    table->push_back(std::move(p));
  }
  {
    LibraryPattern p;
    p.name = "hloc.gemm_bias";
    p.priority = 20;
    p.pattern = BiasAdd();
    p.check = [](const Match& m, const LibraryCheckOptions& o) -> Refusal {
      HLOC_REFUSE_IF(CheckDot(m.Get("dot"), false, o));
      return CheckBias(m, o);
    };
    p.attributes = [](const Match& m) { return DotAttributes(m, "bias").ToString(); };
    p.recorded_attributes = GemmAttributeNames();
    p.numerics = GemmNumerics();
    p.operands = GemmOperands;
    table->push_back(std::move(p));
  }
  {
    LibraryPattern p;
    p.name = "hloc.gemm_bias_relu";
    p.priority = 30;
    p.pattern =
        Op(HloOpcode::kMaximum).WithOperands(BiasAdd(), pattern::SplatConstant(0)).Commutative();
    p.check = [](const Match& m, const LibraryCheckOptions& o) -> Refusal {
      HLOC_REFUSE_IF(CheckDot(m.Get("dot"), false, o));
      HLOC_REFUSE_IF(CheckBias(m, o));
      return CheckLayouts(m.root(), o);
    };
    p.attributes = [](const Match& m) {
      return DotAttributes(m, "bias_relu").ToString();
    };
    p.recorded_attributes = GemmAttributeNames();
    p.numerics = GemmNumerics();
    p.operands = GemmOperands;
    table->push_back(std::move(p));
  }
  {
    LibraryPattern p;
    p.name = "hloc.gemm_bias_gelu";
    p.priority = 30;
    // x * cdf(x) (tanh form) or (x * 0.5) * erfc(..x..) (erf form), with x
    // the bias add and cdf any elementwise function of x alone; which
    // function it is, the check finds out.
    Pattern half_x =
        Op(HloOpcode::kMultiply).WithOperands(BiasAdd(), pattern::AnySplatConstant()).Commutative();
    p.pattern =
        Op(HloOpcode::kMultiply)
            .WithOperands(AnyOf({BiasAdd(), half_x}), pattern::ElementwiseOf(Capture("bias_add")))
            .Commutative();
    p.check = [](const Match& m, const LibraryCheckOptions& o) -> Refusal {
      HLOC_REFUSE_IF(CheckDot(m.Get("dot"), false, o));
      HLOC_REFUSE_IF(CheckBias(m, o));
      HLOC_REFUSE_IF(CheckLayouts(m.root(), o));
      absl::StatusOr<Identification> form = GeluForm(m);
      if (!form.ok()) {
        return absl::StrCat("activation not evaluable: ", form.status().message());
      }
      if (form->name.empty()) return absl::StrCat("activation is not GELU: ", form->ToString());
      return std::nullopt;
    };
    p.attributes = [](const Match& m) {
      absl::StatusOr<Identification> form = GeluForm(m);
      std::string epilogue =
          form.ok() && form->name == "gelu_erf" ? "bias_gelu_erf" : "bias_gelu_tanh";
      return DotAttributes(m, epilogue).ToString();
    };
    p.recorded_attributes = GemmAttributeNames();
    p.numerics = GemmNumerics();
    p.operands = GemmOperands;
    p.numerics.note += "; GELU evaluated by the library in the recorded form (tanh or erf)";
    table->push_back(std::move(p));
  }
  {
    LibraryPattern p;
    p.name = "hloc.batched_gemm";
    p.priority = 10;
    p.pattern = BatchedDot();
    p.check = [](const Match& m, const LibraryCheckOptions& o) {
      return CheckDot(m.Get("dot"), true, o);
    };
    p.attributes = [](const Match& m) { return DotAttributes(m, "none").ToString(); };
    p.recorded_attributes = GemmAttributeNames();
    p.numerics = GemmNumerics();
    p.operands = GemmOperands;
    table->push_back(std::move(p));
  }
}

}  // namespace hloc
