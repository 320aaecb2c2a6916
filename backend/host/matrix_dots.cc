// See matrix_dots.h.
#include "backend/host/matrix_dots.h"

#include <memory>
#include <vector>

#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace host {
namespace {

// Whether `dims` is 0, 1, ..., size - 1.
bool Leading(const google::protobuf::RepeatedField<int64_t>& dims) {
  for (int i = 0; i < dims.size(); ++i) {
    if (dims[i] != i) return false;
  }
  return true;
}

// Which operands lack a free dimension (lhs, rhs), or neither where the dot
// is not one this pass rewrites.
struct Plan {
  bool lhs = false, rhs = false;
};

Plan PlanFor(const HloInstruction& dot) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2 || !dot.shape().IsArray() ||
      !dot.shape().is_static()) {
    return {};
  }
  const PrimitiveType type = dot.shape().element_type();
  const Shape& a = dot.operand(0)->shape();
  const Shape& b = dot.operand(1)->shape();
  if ((type != xla::F32 && type != xla::F64) || a.element_type() != type ||
      b.element_type() != type || !a.is_static() || !b.is_static()) {
    return {};
  }
  const xla::DotDimensionNumbers& dn = dot.attrs().dot_dimension_numbers;
  const int64_t batch = dn.lhs_batch_dimensions_size();
  if (dn.rhs_batch_dimensions_size() != batch || !Leading(dn.lhs_batch_dimensions()) ||
      !Leading(dn.rhs_batch_dimensions()) || dn.lhs_contracting_dimensions_size() != 1 ||
      dn.rhs_contracting_dimensions_size() != 1) {
    return {};
  }
  Plan plan;
  plan.lhs = a.rank() == batch + 1 && dn.lhs_contracting_dimensions(0) == batch;
  plan.rhs = b.rank() == batch + 1 && dn.rhs_contracting_dimensions(0) == batch;
  if (plan.lhs && plan.rhs) return {};  // vector . vector
  int64_t multiplies = a.rank() > 0 ? a.dimensions(dn.lhs_contracting_dimensions(0)) : 0;
  for (int64_t d : dot.shape().dimensions()) multiplies *= d;
  if (multiplies < VectorDotsAsMatrixDots::kMinMultiplies) return {};
  return plan;
}

// `dims` with a 1 inserted before position `at`.
std::vector<int64_t> WithUnit(std::vector<int64_t> dims, int64_t at) {
  dims.insert(dims.begin() + at, 1);
  return dims;
}

absl::Status Rewrite(HloComputation& computation, HloInstruction* dot, const Plan& plan) {
  const xla::DotDimensionNumbers& dn = dot->attrs().dot_dimension_numbers;
  const int64_t batch = dn.lhs_batch_dimensions_size();
  HloInstruction* lhs = dot->operand(0);
  HloInstruction* rhs = dot->operand(1);
  const PrimitiveType type = dot->shape().element_type();
  std::vector<int64_t> out = dot->shape().dimensions();
  if (plan.lhs) {
    lhs = computation.AddInstruction(HloInstruction::Create(
        HloOpcode::kReshape, Shape(type, WithUnit(lhs->shape().dimensions(), batch)), {lhs}));
    out = WithUnit(out, batch);
  }
  if (plan.rhs) {
    rhs = computation.AddInstruction(HloInstruction::Create(
        HloOpcode::kReshape, Shape(type, WithUnit(rhs->shape().dimensions(), batch + 1)), {rhs}));
    out.push_back(1);
  }
  std::unique_ptr<HloInstruction> matrix =
      dot->CloneWithNewOperands(Shape(type, out), {lhs, rhs}, ".matrix");
  if (plan.lhs) matrix->mutable_attrs()->dot_dimension_numbers->set_lhs_contracting_dimensions(0, batch + 1);
  HloInstruction* wide = computation.AddInstruction(std::move(matrix));
  HloInstruction* result = computation.AddInstruction(
      HloInstruction::Create(HloOpcode::kReshape, dot->shape(), {wide}));
  HLOC_RETURN_IF_ERROR(dot->ReplaceAllUsesWith(result));
  return computation.RemoveInstruction(dot);
}

}  // namespace

absl::StatusOr<bool> VectorDotsAsMatrixDots::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      const Plan plan = PlanFor(*instruction);
      if (!plan.lhs && !plan.rhs) continue;
      HLOC_RETURN_IF_ERROR(Rewrite(*computation, instruction, plan));
      changed = true;
    }
  }
  return changed;
}

}  // namespace host
}  // namespace hloc
