// Reshape sinking: an elementwise op over reshapes of one value becomes the
// same op over that value, followed by one reshape.
//
//   s = f32[2048] reduce(x, ...)                 s = f32[2048] reduce(x, ...)
//   k = f32[2048,1] reshape(s)           =>      d = f32[2048] divide(s, n')
//   n = f32[2048,1] broadcast(1024)              n' = f32[2048] broadcast(1024)
//   d = f32[2048,1] divide(k, n)                 k = f32[2048,1] reshape(d)
//
// Why: JAX's keepdims means (sum, then broadcast_in_dim to [N,1], then
// divide) put a reshape between a reduction and its epilogue, where the
// reduction kernels of both backends, which evaluate an epilogue at the
// reduction's own index, cannot see through it; the whole row sum then ran
// as a generic loop (layer_norm_bwd_f16: a sequential sum per row instead of
// the vectorized lanes). After sinking, the epilogue sits on the reduce and
// the reshape is the kernel's output, which is stored as the reduce's bytes.
// Likewise XLA's optimized modules multiply [B*S,K]x[K,N] as a matrix, then
// reshape to [B,S,N] and add a bias and an activation there: sunk, the bias
// and activation sit on the gemm, whose outlined epilogue absorbs them, and
// the reshape back to [B*S,N] cancels with the first.
//
// Applies when every array operand is either a reshape of a value of one
// common shape S (row-major, no dynamic dimensions), a broadcast of a scalar,
// or a broadcast into trailing dimensions that S and the op's shape share
// (a bias along the features), at least one of them a reshape. The op then
// runs on S (its own element type), broadcasts are rebuilt on S, and the
// result is reshaped back; the old reshapes stay for their other users. Each
// rewrite removes a reshape from an operand, so running it to a fixed point
// ends.
#ifndef HLOC_PASSES_RESHAPE_SINKING_H_
#define HLOC_PASSES_RESHAPE_SINKING_H_

#include "passes/pass.h"

namespace hloc {

class ReshapeSinking : public HloPass {
 public:
  absl::string_view name() const override { return "reshape-sinking"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_RESHAPE_SINKING_H_
