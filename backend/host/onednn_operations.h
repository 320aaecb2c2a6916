// The two oneDNN operations the host backend runs, described as plain specs
// (what the primitive computes and where each buffer sits among a library
// call's buffers), read off HLO dots and convolutions, and built into
// primitives:
//
//   MatmulSpec       (batched) matrix product, either operand transposed,
//                    f32/bf16/f16 inputs accumulated in f32, f32 or input-typed
//                    result
//   ConvolutionSpec  forward convolution in any dimension order oneDNN can
//                    address with strides, 1-3 spatial dims, window strides,
//                    padding, kernel dilation, feature groups
//
// both followed by an epilogue (alpha, per-feature sub/scale/bias vectors,
// relu or GELU) as oneDNN bias input and post-ops.
//
// A spec reader returns the reason when oneDNN cannot do what the HLO says
// (the caller keeps the previous path); builders fail with kUnimplemented when
// oneDNN has no implementation for a spec.
//   onednn_matmul.cc       MatmulFromDot, BuildMatmul
//   onednn_convolution.cc  ConvolutionFromHlo, BuildConvolution
#ifndef HLOC_BACKEND_HOST_ONEDNN_OPERATIONS_H_
#define HLOC_BACKEND_HOST_ONEDNN_OPERATIONS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/host/onednn_context.h"
#include "hlo/instruction.h"
#include "passes/outlining/library_epilogues.h"

namespace hloc {
namespace host {

// nullopt: accepted; otherwise why not.
using OneDnnRefusal = std::optional<std::string>;

// One step after the product, in the order the steps apply (the
// composite.attributes schema of passes/outlining/library_patterns.h, as
// DecodeLibraryCall reads it): a per-feature vector (a call operand, rank
// 1, along the output feature dimension) subtracted, multiplied or added,
// or an activation.
using OneDnnStep = EpilogueStep;
inline absl::string_view OneDnnStepName(OneDnnStep step) { return EpilogueStepToken(step); }
inline bool OneDnnStepTakesVector(OneDnnStep step) { return TakesVector(step); }

// y = steps(alpha * product). The first step, when it is a bias and alpha
// is 1, is oneDNN's own bias input; alpha and the other steps are post-ops
// (eltwise linear, binary sub/mul/add, eltwise relu/gelu).
struct OneDnnEpilogue {
  double alpha = 1.0;
  struct Step {
    OneDnnStep kind = OneDnnStep::kBias;
    int buffer = -1;  // The vector's buffer, for sub/scale/bias.
  };
  std::vector<Step> steps;
  PrimitiveType vector_type = xla::F32;  // The result's type.

  bool NativeBias() const {
    return alpha == 1.0 && !steps.empty() && steps[0].kind == OneDnnStep::kBias;
  }
  // A last tanh-GELU step on an f32 result is no post-op: the operation
  // applies GeluTanhInPlace to each block after the primitive wrote it
  // (oneDNN 2.6's gelu_tanh post-op is slow; see gelu_epilogue.h).
  bool GeluTanhAfterPrimitive() const {
    return !steps.empty() && steps.back().kind == OneDnnStep::kGeluTanh &&
           vector_type == xla::F32;
  }
  std::string Key() const;
  std::string ToString() const;  // "bias relu", "alpha=0.5 sub scale bias relu"
  // oneDNN's attributes for everything but the native bias; `vector` is the
  // memory descriptor of a per-feature vector broadcast against the result.
  dnnl::primitive_attr Attributes(const dnnl::memory::desc& vector) const;
  // Adds the binary post-ops' vectors to `args`; with an `owner`, their
  // memory objects are the calling thread's kept ones (ThreadMemory).
  void AddPostOpArguments(absl::Span<void* const> buffers, const dnnl::memory::desc& vector,
                          const dnnl::engine& engine, std::unordered_map<int, dnnl::memory>* args,
                          const void* owner = nullptr) const;
};

struct MatmulSpec {
  PrimitiveType input_type = xla::F32;
  PrimitiveType output_type = xla::F32;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool batched = false;       // 3-D primitive (the dot has batch dimensions).
  bool a_transposed = false;  // A stored [K, M] per batch.
  bool b_transposed = false;  // B stored [N, K] per batch.
  OneDnnEpilogue epilogue;
  int a_buffer = 0, b_buffer = 1, out_buffer = 2;
  // Where A and B start in their buffers (a contiguous slice of a call
  // operand: LibraryOperandSlices).
  int64_t a_offset = 0, b_offset = 0;
  std::string Key() const;
};

// The matmul a dot computes: batch dimensions leading on both sides, each
// side's free and contracting dimensions runs of adjacent dimensions (so each
// batch is one row-major or transposed matrix), element types oneDNN takes.
OneDnnRefusal MatmulFromDot(const HloInstruction& dot, MatmulSpec* spec);

// Large problems are split into row blocks of M (per batch entry) that run
// over the host's thread pool, each a single-threaded primitive (see
// onednn_context.h).
absl::StatusOr<std::shared_ptr<const OneDnnOperation>> BuildMatmul(const MatmulSpec& spec,
                                                                   const dnnl::engine& engine);

struct ConvolutionSpec {
  PrimitiveType input_type = xla::F32;
  PrimitiveType output_type = xla::F32;
  // oneDNN's logical orders: src {N, C, spatial...}, weights {O, I, spatial...}
  // or {G, O/G, I/G, spatial...}, dst {N, O, spatial...}; strides in
  // elements from the HLO shapes' row-major storage.
  std::vector<int64_t> src_dims, src_strides, weights_dims, weights_strides, dst_dims,
      dst_strides;
  std::vector<int64_t> window_strides, dilation /* oneDNN's: HLO's minus 1 */, pad_low, pad_high;
  int64_t groups = 1;
  // A transposed convolution (HLO input dilation) as oneDNN's deconvolution:
  // window_strides are the input dilation, pad_low/pad_high the
  // deconvolution's, and the kernel is read spatially reversed (the
  // operation flips it into a buffer of its own each run).
  bool transposed = false;
  // A grouped convolution's weight gradient (HLO batch_group_count > 1, as
  // XLA writes the kernel gradient of a depthwise or grouped convolution):
  // oneDNN's convolution_backward_weights. Then src is the forward input,
  // dst the forward result's gradient (the HLO kernel operand, at
  // kernel_buffer) and weights the gradient this computes (the HLO result);
  // window_strides, dilation and padding are the forward convolution's.
  bool weight_gradient = false;
  OneDnnEpilogue epilogue;
  int input_buffer = 0, kernel_buffer = 1, out_buffer = 2;
  std::string Key() const;
};

// The forward convolution an HLO convolution computes; refuses window
// reversal, batch groups, negative padding. Input (lhs) dilation with unit
// window strides becomes a deconvolution (`transposed`) when its padding is
// at most the dilated kernel's extent minus one.
OneDnnRefusal ConvolutionFromHlo(const HloInstruction& convolution, ConvolutionSpec* spec);

// Uses the HLO layouts directly when oneDNN has a fast implementation for
// them; otherwise lets oneDNN choose blocked layouts and reorders around the
// primitive. Large convolutions with a batch are split into batch slices
// over the host's thread pool; the others run on OpenMP threads.
absl::StatusOr<std::shared_ptr<const OneDnnOperation>> BuildConvolution(
    const ConvolutionSpec& spec, const dnnl::engine& engine);

// How good an implementation oneDNN picked for a convolution is: its
// reference code (seconds for a 7x7 weight-gradient convolution of
// mobilenet_v2 that im2col + gemm does in milliseconds) < gemm-based < its
// own kernels.
int ConvolutionImplementationRank(const std::string& impl);

// The weight-gradient operation of a spec with weight_gradient set
// (onednn_weight_gradient.cc); BuildConvolution hands such specs to it.
absl::StatusOr<std::shared_ptr<const OneDnnOperation>> BuildWeightGradient(
    const ConvolutionSpec& spec, const dnnl::engine& engine);

// True when any dimension of the instruction's operands or result is dynamic
// (oneDNN would compute over the bounds).
bool HasDynamicDimensions(const HloInstruction& hlo);

// Row-major strides of `dims`.
std::vector<int64_t> RowMajorStridesOf(const std::vector<int64_t>& dims);

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_ONEDNN_OPERATIONS_H_
