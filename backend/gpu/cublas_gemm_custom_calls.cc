// "__cublas$gemm" custom calls back to dots (see cublas_gemm_custom_calls.h).
#include "backend/gpu/cublas_gemm_custom_calls.h"

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"

#include "backend/gpu/cublas_gemm_config.pb.h"
#include "hlo/backend_config.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace gpu {
namespace {

constexpr absl::string_view kTarget = "__cublas$gemm";

// The config of `call` when this pass can take it.
std::optional<CublasGemmConfig> TakenConfig(const HloInstruction& call) {
  if (call.opcode() != HloOpcode::kCustomCall || call.attrs().custom_call_target != kTarget ||
      call.operand_count() != 2 || !call.shape().IsArray() ||
      !call.operand(0)->shape().IsArray() || !call.operand(1)->shape().IsArray()) {
    return std::nullopt;
  }
  CublasGpuBackendConfig wrapped;
  CublasGemmConfig config;
  if (ParseBackendConfig(call, &wrapped).ok() && wrapped.has_gemm_backend_config()) {
    config = wrapped.gemm_backend_config();
  } else if (!ParseBackendConfig(call, &config).ok()) {
    return std::nullopt;
  }
  if (config.beta() != 0 || config.alpha_imag() != 0 ||
      (!config.epilogue().empty() && config.epilogue() != "DEFAULT")) {
    return std::nullopt;
  }
  // A scaled result needs a constant of the result type.
  const PrimitiveType type = call.shape().element_type();
  if (config.alpha_real() != 1 && type != xla::F32 && type != xla::F64) return std::nullopt;
  return config;
}

}  // namespace

absl::StatusOr<bool> LowerCublasGemmCustomCalls::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* call : computation->MakeInstructionPostOrder()) {
      std::optional<CublasGemmConfig> config = TakenConfig(*call);
      if (!config.has_value()) continue;
      std::unique_ptr<HloInstruction> dot = HloInstruction::Create(
          HloOpcode::kDot, call->shape(), {call->operand(0), call->operand(1)});
      xla::DotDimensionNumbers dims;
      const CublasGemmConfig::DotDimensions& from = config->dot_dimension_numbers();
      for (int64_t d : from.lhs_contracting_dimensions()) dims.add_lhs_contracting_dimensions(d);
      for (int64_t d : from.rhs_contracting_dimensions()) dims.add_rhs_contracting_dimensions(d);
      for (int64_t d : from.lhs_batch_dimensions()) dims.add_lhs_batch_dimensions(d);
      for (int64_t d : from.rhs_batch_dimensions()) dims.add_rhs_batch_dimensions(d);
      *dot->mutable_attrs()->dot_dimension_numbers.mutable_value() = dims;
      dot->set_name(module.UniquifyName(absl::StrCat(call->name(), ".dot")));
      HloInstruction* result = computation->AddInstruction(std::move(dot));
      if (config->alpha_real() != 1) {
        const PrimitiveType type = call->shape().element_type();
        HloInstruction* alpha = computation->AddInstruction(
            HloInstruction::CreateConstant(Literal::Scalar(type, config->alpha_real())));
        HloInstruction* alphas = computation->AddInstruction(
            HloInstruction::CreateBroadcast(call->shape(), alpha, {}));
        result = computation->AddInstruction(
            HloInstruction::Create(HloOpcode::kMultiply, call->shape(), {result, alphas}));
      }
      HLOC_RETURN_IF_ERROR(call->ReplaceAllUsesWith(result));
      HLOC_RETURN_IF_ERROR(computation->RemoveInstruction(call));
      changed = true;
    }
  }
  return changed;
}

}  // namespace gpu
}  // namespace hloc
