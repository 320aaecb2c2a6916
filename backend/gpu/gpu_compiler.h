// Compiles an HloModule (after the default pipeline) for the CUDA backend:
// the program builder (backend/common/program_builder.h: buffers,
// liveness, control flow, buffer sharing, input_output_alias, interpreter
// ops) with the GPU's lowering (gpu_lowering.h): every fusion becomes an
// NVPTX kernel (kernel_codegen.h), every other elemental op a one-op
// kernel, gemm and convolution composite calls become cuBLASLt / cuDNN
// thunks. The result is a runtime::cuda::GpuExecutable plus a report.
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
// own. Ops with no GPU kernel (the op table, backend/common/op_lowering.h:
// rng, fft, cholesky, triangular-solve, select-and-scatter, other custom
// calls, ops on types the emitters lack) are interpreter ops: they run on
// the host in the interpreter, never silently — the report lists each with
// its reason, and such a program is not captured into a CUDA graph.
// Collectives (all-reduce and all-reduce-start, all-gather, reduce-scatter,
// all-to-all, collective-permute, collective-broadcast), replica-id and
// partition-id are NCCL thunks (runtime/cuda/collective_thunk.h) decoded as
// the host's are (backend/common/collective_lowering.h): a module with
// replica_count x num_partitions = N compiles to the program each of its N
// GPUs runs (run_on_gpu_devices.h), N = 1 included. Other async ops are
// Unimplemented errors naming the instruction.
#ifndef HLOC_BACKEND_GPU_GPU_COMPILER_H_
#define HLOC_BACKEND_GPU_GPU_COMPILER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/common/declared_result.h"
#include "backend/common/program_report.h"
#include "backend/gpu/gpu_library_calls.h"
#include "backend/gpu/kernel_codegen.h"
#include "hlo/custom_call_targets.h"
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
  // Dynamic-update-slices and loop states share buffers whose old values
  // are dead (backend/common/program_builder.h, "In place"); false: every
  // such value gets its own buffer, for comparisons.
  bool update_in_place = true;
  // Functions the embedder registered for custom-call targets: each call to
  // one is a CustomCallThunk holding the function (this snapshot's, not a
  // later registration's). Null: none.
  std::shared_ptr<const CustomCallTargets> custom_calls;
};

// The program builder's counts (kernels, library and interpreter calls,
// buffer sharing, aliased outputs; backend/common/program_report.h) and the
// GPU libraries' decisions.
struct GpuCompileReport : backend::ProgramReport {
  int64_t inlined_library_calls = 0;
  // The former names of interpreter_calls and interpreter_ops (the same
  // values).
  int64_t host_fallbacks = 0;
  std::vector<std::string> host;
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
  // Runs on one literal per entry parameter (after Load); a bounded dynamic
  // parameter's of any size up to its bound. The result is the module's
  // declared one: a bounded dynamic result comes back at its runtime sizes
  // (declared_result.h), as on the host and the interpreter.
  absl::StatusOr<Literal> Execute(absl::Span<const Literal> arguments,
                                  const cuda::GpuExecuteOptions& options = {});

  cuda::GpuExecutable& executable() { return *executable_; }
  const cuda::GpuExecutable& executable() const { return *executable_; }
  const GpuCompileReport& report() const { return report_; }
  const HloModule& module() const { return *module_; }
  // What Execute applies to each run's result.
  const backend::DeclaredResult& declared_result() const { return declared_result_; }
  // The report, the thunk sequence and the memory placement.
  std::string PlanToString() const;

 private:
  friend absl::StatusOr<std::unique_ptr<GpuProgram>> CompileForGpu(
      const HloModule& module, const GpuProgramOptions& options);
  GpuProgram() = default;
  std::unique_ptr<HloModule> module_;
  std::unique_ptr<cuda::GpuExecutable> executable_;
  std::vector<Shape> parameter_shapes_;
  Shape result_shape_;
  // Cuts the result of a module DynamicPadder rewrote to the runtime sizes
  // its kernels computed and Execute copied back with it.
  backend::DeclaredResult declared_result_;
  GpuCompileReport report_;
};

absl::StatusOr<std::unique_ptr<GpuProgram>> CompileForGpu(const HloModule& module,
                                                          const GpuProgramOptions& options = {});

// The code generation target of a device.
GpuTarget TargetForDevice(const cuda::DeviceInfo& info);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_COMPILER_H_
