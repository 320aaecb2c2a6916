// LowerCublasGemmCustomCalls: XLA:GPU's own gemm calls ("__cublas$gemm"
// custom calls, as XLA dumps them after its GPU passes) back to HLO dots, so
// that hloc outlines them to cuBLASLt (or compiles them) like any dot
// instead of running them in the interpreter.
//
//   c = f32[m,n] custom-call(a, b), custom_call_target="__cublas$gemm",
//       backend_config={"alpha_real":2, "beta":0, "dot_dimension_numbers":..}
//   ->
//   d = f32[m,n] dot(a, b), <the config's dimension numbers>
//   c = f32[m,n] multiply(d, broadcast(2))        (only when alpha != 1)
//
// Taken: two operands (no bias), an array result (no workspace tuple),
// beta 0, alpha real, no epilogue. Other gemm calls stay as they are and
// the report names them as interpreter ops.
#ifndef HLOC_BACKEND_GPU_CUBLAS_GEMM_CUSTOM_CALLS_H_
#define HLOC_BACKEND_GPU_CUBLAS_GEMM_CUSTOM_CALLS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hlo/module.h"
#include "passes/pass.h"

namespace hloc {
namespace gpu {

class LowerCublasGemmCustomCalls : public HloPass {
 public:
  static constexpr absl::string_view kPassName = "lower-cublas-gemm-custom-calls";
  absl::string_view name() const override { return kPassName; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_CUBLAS_GEMM_CUSTOM_CALLS_H_
