// The host backend's named library calls, through oneDNN:
//
//   hloc.gemm, hloc.gemm_bias, hloc.gemm_bias_relu,     oneDNN matmul with bias
//   hloc.gemm_bias_gelu (tanh or erf form),             and relu/GELU post-ops
//   hloc.batched_gemm
//   hloc.conv, hloc.conv_bias, hloc.conv_bias_relu      oneDNN forward convolution
//
// and plain (not outlined) dot and convolution ops, which become the same
// primitives. A composite call is read from its recorded composite.attributes
// (dimension numbers, alpha/beta, epilogue, window) and from its body, which
// says which call operand is which (the dot's operands, the bias under its
// broadcasts); the two must agree. hloc.softmax, hloc.layer_norm and
// hloc.attention are not host library operations: the host compiler runs
// their bodies as generated kernels.
//
// Every refusal (a type, layout or attribute combination oneDNN or this file
// does not take) carries its reason; the compiler then keeps the previous
// path (inlining the call's body, the blocked gemm for dots, the generated
// loop for convolutions) and puts the reason into its report.
#ifndef HLOC_BACKEND_HOST_ONEDNN_LIBRARY_H_
#define HLOC_BACKEND_HOST_ONEDNN_LIBRARY_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "backend/host/onednn_context.h"
#include "hlo/instruction.h"
#include "passes/outlining/library_capabilities.h"
#include "runtime/thunk.h"

namespace hloc {
namespace host {

// The composite names the host implements as library calls.
LibraryCapabilities HostLibraryCapabilities();

struct OneDnnLowering {
  // Set when oneDNN runs the instruction.
  std::optional<runtime::LibraryCallThunk::Function> function;
  std::string description;  // What runs: "matmul brg:avx512_core (f32 1x8x64x32 bias relu)".
  std::string refusal;      // Why not, when `function` is empty.
};

// A library call for `hlo` (a composite call, dot or convolution) with its
// primitive created now; a refusal for anything else or anything oneDNN
// cannot do. Errors only for malformed input.
absl::StatusOr<OneDnnLowering> LowerToOneDnn(const HloInstruction& hlo,
                                             const std::shared_ptr<OneDnnContext>& context);

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_ONEDNN_LIBRARY_H_
