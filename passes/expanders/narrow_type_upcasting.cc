// UpcastNarrowTypeArithmetic (see narrow_type_upcasting.h).
#include "passes/expanders/narrow_type_upcasting.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/module.h"
#include "hlo/status_macros.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace {

// Ops rewritten when a narrow type is among their operand or result types.
// Converts, copies and the like only load and store, which every backend
// already does for these types.
bool IsArithmetic(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kConvert: case HloOpcode::kBitcastConvert: case HloOpcode::kCopy:
    case HloOpcode::kReducePrecision: case HloOpcode::kReal: case HloOpcode::kImag:
    case HloOpcode::kComplex: case HloOpcode::kStochasticConvert:
      return false;
    case HloOpcode::kClamp: case HloOpcode::kDot: case HloOpcode::kConvolution:
      return true;
    default:
      return IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode);
  }
}

// clz of s4/u4 counts the leading zeros of 4 bits: the 4 bits zero-extended
// to u8 have 4 more.
bool IsClzOf4Bits(const HloInstruction& instruction) {
  const PrimitiveType type = instruction.shape().element_type();
  return instruction.opcode() == HloOpcode::kClz && (type == xla::S4 || type == xla::U4) &&
         instruction.operand_count() == 1 && instruction.operand(0)->shape().element_type() == type;
}

// popcnt and shift-right-logical on s4 must not see the sign extension an s8
// would add: they read the 4 bits zero-extended (s4 -> u4 -> u8).
bool ReadsBitsOfS4(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kPopulationCount &&
      instruction.opcode() != HloOpcode::kShiftRightLogical) {
    return false;
  }
  if (instruction.shape().element_type() != xla::S4) return false;
  for (const HloInstruction* operand : instruction.operands()) {
    if (operand->shape().element_type() != xla::S4) return false;
  }
  return true;
}

Shape WithType(Shape shape, PrimitiveType type) {
  shape.set_element_type(type);
  return shape;
}

// The rewrite of one instruction, or nullopt when it is declined.
struct Upcast {
  PrimitiveType operand_type;                // What every operand becomes.
  std::optional<PrimitiveType> result_type;  // Set when the result is narrow.
  // For a reduction: its reducer's one binary op, rebuilt on the wide type.
  std::optional<HloOpcode> wide_reducer;
  // s4 operands go through u4 first (zero extension; see ReadsBitsOfS4).
  bool zero_extend = false;
  // Subtracted from the wide result before it narrows (clz of 4 bits in u8).
  int64_t extra_leading_zeros = 0;
};

// The opcode of a reducer that is one binary op of its two parameters, the
// reducers the interpreter runs as a typed loop (MatchSimpleReducer in
// hlo/evaluator/reduce.cc), accumulating in the compute type.
std::optional<HloOpcode> SingleOpReducer(const HloComputation& reducer) {
  const HloInstruction* root = reducer.root();
  if (reducer.num_parameters() != 2 || root == nullptr || root->operand_count() != 2) {
    return std::nullopt;
  }
  switch (root->opcode()) {
    case HloOpcode::kAdd: case HloOpcode::kMultiply: case HloOpcode::kMaximum:
    case HloOpcode::kMinimum: case HloOpcode::kAnd: case HloOpcode::kOr: case HloOpcode::kXor:
      break;
    default:
      return std::nullopt;
  }
  if (root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter ||
      root->operand(0) == root->operand(1)) {
    return std::nullopt;
  }
  return root->opcode();
}

// reduce and reduce-window of one narrow array whose reducer is one binary
// op become the same reduction on the wide type: the interpreter accumulates
// these in the compute type (f32, or wider for sums) and rounds once at the
// end, which rewriting only the reducer (rounding every step) would not.
// f16 and bf16 have native arithmetic, but their products and window sums
// accumulate in f32 too (a bf16 cumsum of 300 values rounded at every step
// is off by percents); their reduce sums need nothing, the backends already
// sum them in double (ElementalIrEmitter::SumsInDouble).
std::optional<Upcast> PlanReductionUpcast(const HloInstruction& instruction) {
  if (instruction.operand_count() != 2 || !instruction.shape().IsArray() ||
      instruction.to_apply() == nullptr) {
    return std::nullopt;
  }
  const PrimitiveType type = instruction.shape().element_type();
  if (instruction.operand(0)->shape().element_type() != type ||
      instruction.operand(1)->shape().element_type() != type) {
    return std::nullopt;
  }
  const std::optional<HloOpcode> op = SingleOpReducer(*instruction.to_apply());
  if (!op.has_value() || instruction.to_apply()->root()->shape().element_type() != type) {
    return std::nullopt;
  }
  std::optional<PrimitiveType> wide = UpcastTypeFor(type);
  if ((type == xla::F16 || type == xla::BF16) &&
      (*op == HloOpcode::kMultiply ||
       (*op == HloOpcode::kAdd && instruction.opcode() == HloOpcode::kReduceWindow))) {
    wide = xla::F32;
  }
  if (!wide.has_value()) return std::nullopt;
  return Upcast{*wide, wide, op, false};
}

std::optional<Upcast> PlanUpcast(const HloInstruction& instruction) {
  if (!instruction.control_predecessors().empty() || !instruction.control_successors().empty()) {
    return std::nullopt;
  }
  if (instruction.opcode() == HloOpcode::kReduce ||
      instruction.opcode() == HloOpcode::kReduceWindow) {
    return PlanReductionUpcast(instruction);
  }
  if (!IsArithmetic(instruction.opcode()) || !instruction.shape().IsArray()) return std::nullopt;
  if (instruction.operand_count() == 0) return std::nullopt;
  if (ReadsBitsOfS4(instruction)) return Upcast{xla::U8, xla::U8, std::nullopt, true};
  if (IsClzOf4Bits(instruction)) return Upcast{xla::U8, xla::U8, std::nullopt, true, 4};
  bool any_narrow = false;
  std::optional<PrimitiveType> common;
  for (const HloInstruction* operand : instruction.operands()) {
    if (!operand->shape().IsArray()) return std::nullopt;
    const PrimitiveType type = operand->shape().element_type();
    const std::optional<PrimitiveType> wide = UpcastTypeFor(type);
    if (wide.has_value()) any_narrow = true;
    const PrimitiveType computed = wide.value_or(type);
    if (common.has_value() && *common != computed) return std::nullopt;
    common = computed;
  }
  Upcast plan{*common, UpcastTypeFor(instruction.shape().element_type()), std::nullopt, false};
  if (!any_narrow && !plan.result_type.has_value()) return std::nullopt;
  return plan;
}

// (x, y) -> op(x, y) on scalars of `type`.
HloComputation* BinaryReducer(HloModule& module, const HloComputation& narrow, HloOpcode op,
                              PrimitiveType type) {
  auto reducer = std::make_unique<HloComputation>(
      absl::StrCat(narrow.name(), "_", PrimitiveTypeName(type)));
  const Shape scalar(type, {});
  HloInstruction* x = reducer->AddInstruction(HloInstruction::CreateParameter(0, scalar, "x"));
  HloInstruction* y = reducer->AddInstruction(HloInstruction::CreateParameter(1, scalar, "y"));
  reducer->set_root(reducer->AddInstruction(HloInstruction::Create(op, scalar, {x, y})));
  return module.AddComputation(std::move(reducer));
}

absl::Status Rewrite(HloModule& module, HloComputation& computation,
                     HloInstruction* instruction, const Upcast& plan) {
  std::vector<HloInstruction*> operands;
  for (HloInstruction* operand : instruction->operands()) {
    if (operand->shape().element_type() == plan.operand_type) {
      operands.push_back(operand);
      continue;
    }
    HloInstruction* source = operand;
    if (plan.zero_extend && operand->shape().element_type() == xla::S4) {
      source = computation.AddInstruction(HloInstruction::Create(
          HloOpcode::kConvert, WithType(operand->shape(), xla::U4), {operand}));
    }
    operands.push_back(computation.AddInstruction(HloInstruction::Create(
        HloOpcode::kConvert, WithType(operand->shape(), plan.operand_type), {source})));
  }
  const Shape wide_shape =
      plan.result_type.has_value() ? WithType(instruction->shape(), *plan.result_type)
                                   : instruction->shape();
  const std::string suffix =
      std::string(PrimitiveTypeName(plan.result_type.value_or(plan.operand_type)));
  std::unique_ptr<HloInstruction> clone =
      instruction->CloneWithNewOperands(wide_shape, operands, suffix);
  if (plan.wide_reducer.has_value()) {
    clone->set_called_computation(
        0, BinaryReducer(module, *instruction->to_apply(), *plan.wide_reducer, plan.operand_type));
  }
  HloInstruction* wide = computation.AddInstruction(std::move(clone));
  if (plan.extra_leading_zeros != 0) {
    expanders::ExpansionBuilder b(&computation, instruction);
    HloInstruction* extra = b.Splat(
        b.Scalar(wide_shape.element_type(), static_cast<double>(plan.extra_leading_zeros)),
        wide_shape.dimensions());
    wide = b.Binary(HloOpcode::kSubtract, wide, extra);
    HLOC_RETURN_IF_ERROR(b.status());
  }
  HloInstruction* result = wide;
  if (plan.result_type.has_value()) {
    result = computation.AddInstruction(
        HloInstruction::Create(HloOpcode::kConvert, instruction->shape(), {wide}));
  }
  HLOC_RETURN_IF_ERROR(instruction->ReplaceAllUsesWith(result));
  return computation.RemoveInstruction(instruction);
}

}  // namespace

std::optional<PrimitiveType> UpcastTypeFor(PrimitiveType type) {
  if (type == xla::S4) return xla::S8;
  if (type == xla::U4) return xla::U8;
  if (IsNarrowFloat(type)) return xla::F32;
  return std::nullopt;
}

absl::StatusOr<bool> UpcastNarrowTypeArithmetic::Run(HloModule& module) {
  bool changed = false;
  // A copy: rewriting reductions adds wide reducers, which need nothing.
  const std::vector<HloComputation*> computations = module.computations();
  std::vector<HloComputation*> old_reducers;
  // Reductions first, while their reducers are still one narrow op.
  for (bool reductions : {true, false}) {
    for (HloComputation* computation : computations) {
      for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
        const std::optional<Upcast> plan = PlanUpcast(*instruction);
        if (!plan.has_value() || plan->wide_reducer.has_value() != reductions) continue;
        if (reductions) old_reducers.push_back(instruction->to_apply());
        HLOC_RETURN_IF_ERROR(Rewrite(module, *computation, instruction, *plan));
        changed = true;
      }
    }
  }
  // Narrow reducers no reduction calls any more (their own ops were upcast
  // like any other, but nothing runs them).
  std::vector<HloComputation*> unused;
  for (HloComputation* reducer : old_reducers) {
    if (module.CallersOf(reducer).empty() &&
        std::find(unused.begin(), unused.end(), reducer) == unused.end()) {
      unused.push_back(reducer);
    }
  }
  if (!unused.empty()) HLOC_RETURN_IF_ERROR(module.RemoveComputations(unused));
  return changed;
}

}  // namespace hloc
