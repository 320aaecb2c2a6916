// UpcastDotsForHostGemm (see dot_upcasting.h).
#include "backend/host/dot_upcasting.h"

#include <memory>
#include <vector>

#include "backend/host/onednn_context.h"
#include "hlo/computation.h"
#include "hlo/evaluator/gemm_kernel.h"
#include "hlo/instruction.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace host {
namespace {

// Longest s8 dot whose partial sums all stay exact in f32 (see the header).
constexpr int64_t kMaxExactS8Contraction = 1024;

bool IsHalf(PrimitiveType type) { return type == xla::BF16 || type == xla::F16; }

int64_t ContractionSize(const HloInstruction& dot) {
  int64_t k = 1;
  for (int64_t d : dot.attrs().dot_dimension_numbers->lhs_contracting_dimensions()) {
    k *= dot.operand(0)->shape().dimensions(d);
  }
  return k;
}

bool ShouldUpcast(const HloInstruction& dot, const UpcastOptions& options) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2) return false;
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  if (!lhs.IsArray() || !rhs.IsArray() || !dot.shape().IsArray()) return false;
  const PrimitiveType a = lhs.element_type(), b = rhs.element_type();
  const PrimitiveType out = dot.shape().element_type();
  auto wanted = [&](PrimitiveType t) {
    return (t == xla::BF16 && options.upcast_bf16) || (t == xla::F16 && options.upcast_f16);
  };
  if (IsHalf(a) && IsHalf(b) && (IsHalf(out) || out == xla::F32)) {
    return wanted(a) || wanted(b) || (IsHalf(out) && wanted(out));
  }
  if (IsS8ToS32Dot(dot) && options.upcast_s8) {
    return ContractionSize(dot) <= kMaxExactS8Contraction;
  }
  return false;
}

Shape WithType(Shape shape, PrimitiveType type) {
  shape.set_element_type(type);
  return shape;
}

absl::Status Upcast(HloComputation& computation, HloInstruction* dot) {
  std::vector<HloInstruction*> operands;
  for (HloInstruction* operand : dot->operands()) {
    HloInstruction* convert = computation.AddInstruction(HloInstruction::Create(
        HloOpcode::kConvert, WithType(operand->shape(), xla::F32), {operand}));
    operands.push_back(convert);
  }
  HloInstruction* wide = computation.AddInstruction(
      dot->CloneWithNewOperands(WithType(dot->shape(), xla::F32), operands, ".f32"));
  HloInstruction* result = wide;
  if (dot->shape().element_type() != xla::F32) {
    result = computation.AddInstruction(
        HloInstruction::Create(HloOpcode::kConvert, dot->shape(), {wide}));
  }
  HLOC_RETURN_IF_ERROR(dot->ReplaceAllUsesWith(result));
  return computation.RemoveInstruction(dot);
}

// The bf16 value behind a dot operand that is convert<f32>(a:bf16), or a
// reshape of one (XLA's modules regroup [B,S,K] as [B*S,K] after the
// convert); nullptr otherwise.
HloInstruction* NarrowSource(const HloInstruction& operand) {
  const HloInstruction* convert = &operand;
  if (operand.opcode() == HloOpcode::kReshape && operand.operand_count() == 1) {
    convert = operand.operand(0);
  }
  if (convert->opcode() != HloOpcode::kConvert || convert->operand_count() != 1) return nullptr;
  HloInstruction* source = convert->operand(0);
  if (!source->shape().IsArray() || source->shape().element_type() != xla::BF16) return nullptr;
  return source;
}

bool ShouldNarrow(const HloInstruction& dot, const UpcastOptions& options) {
  if (options.upcast_bf16 || dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2 ||
      !dot.shape().IsArray() || dot.shape().element_type() != xla::F32) {
    return false;
  }
  return NarrowSource(*dot.operand(0)) != nullptr && NarrowSource(*dot.operand(1)) != nullptr;
}

absl::Status Narrow(HloComputation& computation, HloInstruction* dot) {
  std::vector<HloInstruction*> operands;
  for (HloInstruction* operand : dot->operands()) {
    HloInstruction* source = NarrowSource(*operand);
    if (operand->opcode() == HloOpcode::kReshape) {
      source = computation.AddInstruction(HloInstruction::Create(
          HloOpcode::kReshape, WithType(operand->shape(), xla::BF16), {source}));
    }
    operands.push_back(source);
  }
  HloInstruction* narrow =
      computation.AddInstruction(dot->CloneWithNewOperands(dot->shape(), operands, ".bf16"));
  HLOC_RETURN_IF_ERROR(dot->ReplaceAllUsesWith(narrow));
  // With the f32 converts and reshapes nothing else reads.
  return computation.RemoveInstructionAndUnusedOperands(dot);
}

// True when oneDNN builds a matmul primitive of `type` on this CPU.
bool OneDnnMultipliesNatively(dnnl::memory::data_type type) {
  try {
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    const dnnl::memory::desc a({16, 16}, type, dnnl::memory::format_tag::ab);
    const dnnl::matmul::desc desc(a, a, a);
    dnnl::matmul::primitive_desc pd(desc, engine, /*allow_empty=*/true);
    return static_cast<bool>(pd);
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace

bool IsS8ToS32Dot(const HloInstruction& hlo) {
  return hlo.opcode() == HloOpcode::kDot && hlo.operand_count() == 2 && hlo.shape().IsArray() &&
         hlo.shape().element_type() == xla::S32 &&
         hlo.operand(0)->shape().element_type() == xla::S8 &&
         hlo.operand(1)->shape().element_type() == xla::S8;
}

UpcastOptions HostUpcastOptions() {
  static const UpcastOptions kOptions = [] {
    UpcastOptions options;
    options.upcast_bf16 = !OneDnnMultipliesNatively(dnnl::memory::data_type::bf16);
    options.upcast_f16 = !OneDnnMultipliesNatively(dnnl::memory::data_type::f16);
    // s8 dots run on the exact integer GEMM where it is vectorized (pairs of
    // products per lane: faster than converting both operands and the
    // f32 gemm), and on the f32 gemm elsewhere.
    options.upcast_s8 = !eval::GemmS8IsVectorized();
    return options;
  }();
  return kOptions;
}

absl::StatusOr<bool> UpcastDotsForHostGemm::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (ShouldUpcast(*instruction, options_)) {
        HLOC_RETURN_IF_ERROR(Upcast(*computation, instruction));
        changed = true;
      } else if (ShouldNarrow(*instruction, options_)) {
        HLOC_RETURN_IF_ERROR(Narrow(*computation, instruction));
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace host
}  // namespace hloc
