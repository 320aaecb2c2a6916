// Compiles an HloModule (after the default pipeline) for the CUDA backend:
// every fusion becomes an NVPTX kernel (kernel_codegen.h), every other
// elemental op a one-op kernel, gemm and convolution composite calls become
// cuBLASLt / cuDNN thunks, tuples and reshapes are buffer aliases,
// while/conditional/call become nested thunk sequences. The result is a
// runtime::cuda::GpuExecutable plus a report.
//
// Compiling needs no GPU: it produces the plan (thunk sequence, kernels as
// PTX and, with ptxas, cubins, library calls with their parameters, buffer
// placement) that GpuProgram::Load then puts on a device. That "plan only"
// use is what tests and `hloc compile` see on machines without a GPU.
//
// A library call whose callee is also one generated kernel (and small
// enough, LibraryCallOptions::try_generated*) gets both: a
// LibraryOrGeneratedThunk that GpuProgram::Load times (or looks up in the
// autotune cache) to run the faster.
//
// Library calls the libraries cannot take (erf GELU, asymmetric conv
// padding, a missing libcublasLt/libcudnn, ...) are compiled from their
// callee instead — as one kernel when the emitters cover the whole callee,
// else op by op — and the report (and the ledger, when given) says why.
// Sort, topk (op and "TopK" custom call) and scatter get kernels of their
// own. Ops with no GPU kernel (rng, fft, cholesky, triangular-solve,
// select-and-scatter, other custom calls, ops on types the emitters lack)
// run on the host through a InterpreterThunk (host_fallback.h): never
// silently — the report lists each as "runs on host: <reason>", and such a
// program is not captured into a CUDA graph. Collectives and async ops are
// Unimplemented errors naming the instruction.
//
// Scheduling and buffer liveness follow backend/host/host_compiler.cc
// (post order, nested computations inline at their caller; a while loop's
// state live to the end of the loop).
#ifndef HLOC_BACKEND_GPU_GPU_COMPILER_H_
#define HLOC_BACKEND_GPU_GPU_COMPILER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/gpu/gpu_library_calls.h"
#include "backend/gpu/kernel_codegen.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "passes/fusion/fusion_ledger.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/gpu_executable.h"

namespace hloc {
namespace gpu {

struct GpuProgramOptions {
  GpuCompileOptions codegen;
  // Compile through this cache (shared with other programs) instead of a new one.
  std::shared_ptr<GpuKernelCache> kernel_cache;
  LibraryUse cublaslt = LibraryUse::kProbe;
  LibraryUse cudnn = LibraryUse::kProbe;
  LibraryCallOptions library;
  // Workspace of each library call (a temporary in the arena, live only at
  // its call, so calls share it).
  int64_t gemm_workspace_bytes = int64_t{32} << 20;
  int64_t conv_workspace_bytes = int64_t{32} << 20;
  // Receives a "gpu-compiler" entry per library call mapped or inlined.
  FusionLedger* ledger = nullptr;
};

struct GpuCompileReport {
  int64_t kernels = 0;          // Kernel launches.
  int64_t fused_kernels = 0;    // Of which compile a fusion.
  int64_t unfused_fusions = 0;  // Fusions compiled op by op.
  int64_t library_calls = 0;    // cuBLASLt / cuDNN thunks.
  int64_t inlined_library_calls = 0;
  int64_t host_fallbacks = 0;           // Ops run on the host (InterpreterThunk).
  std::vector<std::string> host;        // "%fft.2 runs on host: <why>"
  std::vector<std::string> strategies;  // "%fusion.2: loop hloc_1a2b (grid 4, block 256)"
  std::vector<std::string> library;     // "%gemm.3 hloc.gemm_bias -> cuBLASLt gemm ..."
  std::vector<std::string> inlined;     // "%gemm.4 hloc.gemm_bias_gelu inlined: <why>"
  // Library calls that also have a generated alternative (chosen at load):
  // "%gemm.3 hloc.gemm: cuBLASLt or generated loop hloc_1a2b (grid 1, block 64)".
  // Their kernels are not counted in `kernels` / `strategies`.
  std::vector<std::string> alternatives;
  std::vector<std::pair<std::string, cuda::GemmConfig>> gemms;  // By call name.
  std::vector<std::pair<std::string, cuda::ConvConfig>> convs;
  std::string ToString() const;
};

class GpuProgram {
 public:
  ~GpuProgram();
  // Puts the plan on `device` (memory, constants, modules, library plans).
  absl::Status Load(cuda::CudaDevice* device, const cuda::GpuLoadOptions& options = {});
  // Runs on one literal per entry parameter (after Load).
  absl::StatusOr<Literal> Execute(absl::Span<const Literal> arguments,
                                  const cuda::GpuExecuteOptions& options = {});

  cuda::GpuExecutable& executable() { return *executable_; }
  const cuda::GpuExecutable& executable() const { return *executable_; }
  const GpuCompileReport& report() const { return report_; }
  const HloModule& module() const { return *module_; }
  // The report, the thunk sequence and the memory placement.
  std::string PlanToString() const;

 private:
  friend class GpuCompilation;
  friend absl::StatusOr<std::unique_ptr<GpuProgram>> CompileForGpu(
      const HloModule& module, const GpuProgramOptions& options);
  GpuProgram() = default;
  std::unique_ptr<HloModule> module_;
  std::unique_ptr<cuda::GpuExecutable> executable_;
  std::vector<Shape> parameter_shapes_;
  Shape result_shape_;
  GpuCompileReport report_;
};

absl::StatusOr<std::unique_ptr<GpuProgram>> CompileForGpu(const HloModule& module,
                                                          const GpuProgramOptions& options = {});

// The code generation target of a device.
GpuTarget TargetForDevice(const cuda::DeviceInfo& info);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_COMPILER_H_
