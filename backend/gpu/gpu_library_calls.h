// Which outlined library calls (composite `call`s, see
// passes/outlining/library_patterns.h) the CUDA backend runs through cuBLASLt
// or cuDNN, and with which parameters. The mapping reads the callee: the dot
// or convolution in it fixes shapes, dimension numbers, types and which call
// operands are the matrices / input / filter; the call's descriptor
// (DecodeLibraryCall, passes/outlining/library_patterns.h: epilogue steps,
// alpha, beta) says what follows the product, and the vector operand (bias)
// is found behind the broadcast that reads it.
//
// A call the libraries cannot take gets a refusal naming why (erf GELU,
// asymmetric padding, a non-row-major layout, ...); the compiler then
// inlines the callee and compiles it to generated kernels, and records the
// reason. Nothing here needs a GPU or the libraries themselves.
#ifndef HLOC_BACKEND_GPU_GPU_LIBRARY_CALLS_H_
#define HLOC_BACKEND_GPU_GPU_LIBRARY_CALLS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/instruction.h"
#include "runtime/cuda/library_call_configs.h"

namespace hloc {
namespace gpu {

enum class GpuLibrary { kCublasLt, kCudnn };
absl::string_view GpuLibraryName(GpuLibrary library);  // "cuBLASLt", "cuDNN"

// A value a library call reads: a parameter of the callee (so the call's
// operand of that number) or a constant inside the callee (a cheap operand
// the outliner copied in).
struct CalleeValue {
  int64_t parameter = -1;
  const HloInstruction* constant = nullptr;
};

struct LibraryCallPlan {
  GpuLibrary library = GpuLibrary::kCublasLt;
  cuda::GemmConfig gemm;  // kCublasLt
  cuda::ConvConfig conv;  // kCudnn
  // gemm: lhs, rhs[, bias]; conv: input, filter (its vectors are below).
  std::vector<CalleeValue> operands;
  // conv only. The work before cuDNN runs, each a generated kernel:
  //  - the input zero-padded by these amounts per spatial dimension when the
  //    HLO pads asymmetrically (cuDNN's legacy API pads symmetrically; the
  //    ConvConfig then has padding 0 and the padded input sizes);
  //  - the filter transposed with `filter_permutation` (HLO transpose
  //    dimensions) into the order cuDNN reads, and multiplied by `scale`
  //    along its output features;
  //  - the bias cuDNN adds: bias - sub * scale (missing terms dropped), or
  //    zeros when only a relu follows the product.
  std::vector<int64_t> input_pad_low, input_pad_high;
  std::vector<int64_t> filter_permutation;
  std::optional<CalleeValue> sub, scale, bias;
  std::string ToString() const;
};

// Whether a library may be called.
enum class LibraryUse {
  kProbe,        // If it loads here (dlopen; no GPU needed).
  kAvailable,    // Assume it will be there at run time.
  kUnavailable,  // Never: compile its calls from their callees.
};

// OK when `library` may be called; else why not (the dlopen failure, or
// "disabled by the compile options").
absl::Status GpuLibraryAvailable(LibraryUse use, GpuLibrary library);

struct LibraryCallOptions {
  // f32 gemms/convolutions whose HLO precision is DEFAULT may use TF32.
  bool allow_tf32 = false;
  // Also compile each library call as generated code when its whole callee
  // is one generated kernel, so the program holds both alternatives and
  // GpuExecutable::Load times them and keeps the faster
  // (runtime/cuda/alternatives_thunk.h). Calls of more than
  // `try_generated_max_flops` (LibraryCallFlops) get the library only: the
  // generated kernels do not tile, and timing them would only slow loading.
  bool try_generated = true;
  double try_generated_max_flops = double{1} * (int64_t{1} << 36);
};

// The library composite family `call` belongs to ("hloc.gemm",
// "hloc.batched_gemm", "hloc.conv": passes/outlining/library_epilogues.h),
// or nullopt for other calls (plain calls, softmax/layer_norm/attention
// composites, frontend composites).
std::optional<std::string> GpuLibraryFamily(const HloInstruction& call);

// The plan for `call` (a composite of one of the families above), or the
// reason it cannot run in a library, as a FailedPrecondition status whose
// message is that reason. Errors for malformed calls are InvalidArgument.
absl::StatusOr<LibraryCallPlan> PlanLibraryCall(const HloInstruction& call,
                                                const LibraryCallOptions& options = {});

// Floating-point operations of the product (2 per multiply-add) a plan
// computes; the epilogue is not counted.
double LibraryCallFlops(const LibraryCallPlan& plan);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_LIBRARY_CALLS_H_
