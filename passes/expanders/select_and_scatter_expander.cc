#include "passes/expanders/select_and_scatter_expander.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "hlo/status_macros.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace {

using expanders::ExpansionBuilder;

bool CanExpand(const HloInstruction& sas) {
  if (!sas.control_predecessors().empty() || !sas.control_successors().empty()) return false;
  if (sas.operand_count() != 3 || sas.called_computations().size() != 2) return false;
  const Shape& x = sas.operand(0)->shape();
  const Shape& source = sas.operand(1)->shape();
  if (!x.IsArray() || !x.is_static() || !source.IsArray() || !source.is_static()) return false;
  const HloComputation* select = sas.called_computations()[0];
  return select->num_parameters() == 2 && select->root() != nullptr &&
         select->root()->shape().IsArray() && select->root()->shape().element_type() == xla::PRED;
}

// pick((av, ai), (cv, ci)) of the header comment.
HloComputation* MakePick(ExpansionBuilder& outer, const HloInstruction& sas,
                         const HloComputation& select, PrimitiveType type,
                         PrimitiveType index_type) {
  HloComputation* pick = outer.NewComputation("pick");
  ExpansionBuilder b(pick, &sas);
  const Shape value = Shape::Scalar(type), index = Shape::Scalar(index_type);
  HloInstruction* av = b.Parameter(0, value, "candidate");
  HloInstruction* ai = b.Parameter(1, index, "candidate_index");
  HloInstruction* cv = b.Parameter(2, value, "current");
  HloInstruction* ci = b.Parameter(3, index, "current_index");
  HloInstruction* keep = b.Inline(select, {av, cv});
  if (keep != nullptr && keep->shape().rank() != 0) keep = b.Reshape(keep, {});
  HloInstruction* zero = b.IndexScalar(index_type, 0);
  HloInstruction* take =
      b.Binary(HloOpcode::kOr, b.Compare(ai, zero, ComparisonDirection::kLt),
               b.Binary(HloOpcode::kAnd, b.Compare(ci, zero, ComparisonDirection::kGe),
                        b.Unary(HloOpcode::kNot, keep)));
  HloInstruction* root = b.Tuple({b.Select(take, cv, av), b.Select(take, ci, ai)});
  if (!b.status().ok()) {
    outer.Fail(b.status());
    return pick;
  }
  pick->set_root(root);
  return pick;
}

absl::Status Expand(HloInstruction* sas) {
  HloInstruction* x = sas->operand(0);
  HloInstruction* source = sas->operand(1);
  HloInstruction* init = sas->operand(2);
  HloComputation* select = sas->called_computations()[0];
  HloComputation* scatter_computation = sas->called_computations()[1];
  const std::vector<int64_t>& dims = x->shape().dimensions();
  const int64_t n = x->shape().element_count();
  const int64_t s = source->shape().element_count();
  const PrimitiveType index_type =
      n <= std::numeric_limits<int32_t>::max() ? xla::S32 : xla::S64;

  ExpansionBuilder b(sas->parent(), sas);
  HloInstruction* positions = b.Reshape(b.Iota(index_type, {n}, 0), dims);
  HloComputation* pick = MakePick(b, *sas, *select, x->shape().element_type(), index_type);
  HloInstruction* window = b.Build(
      HloOpcode::kReduceWindow, {x, positions, init, b.IndexScalar(index_type, -1)},
      [&](HloInstruction& w) {
        w.mutable_attrs()->window = sas->attrs().window;
        w.mutable_attrs()->has_window = true;
        w.AppendCalledComputation(pick);
      },
      Shape(), "select");
  HloInstruction* selected = b.GetTupleElement(window, 1);
  HloInstruction* scattered = b.Build(
      HloOpcode::kScatter, {b.Splat(init, {n}), b.Reshape(selected, {s, 1}), b.Reshape(source, {s})},
      [&](HloInstruction& scatter) {
        xla::ScatterDimensionNumbers* dn =
            scatter.mutable_attrs()->scatter_dimension_numbers.mutable_value();
        dn->add_inserted_window_dims(0);
        dn->add_scatter_dims_to_operand_dims(0);
        dn->set_index_vector_dim(1);
        scatter.AppendCalledComputation(scatter_computation);
      },
      Shape(), "scatter");
  HloInstruction* result = b.Reshape(scattered, dims);
  HLOC_RETURN_IF_ERROR(b.status());
  return expanders::ReplaceInstruction(sas, result);
}

}  // namespace

absl::StatusOr<bool> SelectAndScatterExpander::Run(HloModule& module) {
  std::vector<HloInstruction*> expandable;
  for (HloComputation* computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* sas : computation->MakeInstructionPostOrder()) {
      if (sas->opcode() == HloOpcode::kSelectAndScatter && CanExpand(*sas)) {
        expandable.push_back(sas);
      }
    }
  }
  // select bodies are copied into the reducers; drop those nothing calls.
  std::vector<HloComputation*> selects;
  for (HloInstruction* sas : expandable) {
    HloComputation* select = sas->called_computations()[0];
    if (std::find(selects.begin(), selects.end(), select) == selects.end()) {
      selects.push_back(select);
    }
    HLOC_RETURN_IF_ERROR(Expand(sas));
  }
  for (HloComputation* select : selects) {
    if (module.CallersOf(select).empty()) HLOC_RETURN_IF_ERROR(module.RemoveComputation(select));
  }
  return !expandable.empty();
}

}  // namespace hloc
