// NVPTX code generation for one fused (or one-op) computation: LLVM IR from
// the GPU kernel emitters, the O3 pipeline, PTX from LLVM's NVPTX backend,
// and a cubin from ptxas when ptxas is installed. Needs no GPU: everything
// here runs on any machine; the runtime loads the cubin (or JIT-compiles the
// PTX through the driver) on a machine that has one.
//
// Kernel ABI (the same buffers, in the same order, as the host backend):
//   __global__ void NAME(T0* p0, T1* p1, ..., Tn* pn)
// with one global pointer per array leaf of the computation's parameters in
// parameter order, then one per array leaf of the root (tuple roots: every
// leaf, depth first), then a scratch pointer for kernels that ask for one
// (GpuKernel::scratch_bytes). Every pointer must be 16-byte aligned and
// outputs must not overlap inputs or each other; inputs are only read.
// Outputs are only written, except those the launcher first fills with a
// copy of an input (GpuKernel::copy_before), which the kernel updates. The runtime
// launches it with `GpuKernel::launch` (grid, block, dynamic shared bytes:
// always 0 today, shared memory is static).
//
// This header is LLVM-free.
#ifndef HLOC_BACKEND_GPU_KERNEL_CODEGEN_H_
#define HLOC_BACKEND_GPU_KERNEL_CODEGEN_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/common/kernel_variant.h"
#include "hlo/computation.h"

namespace hloc {
namespace gpu {

// The device kernels are generated for. Defaults describe an H100 (sm_90);
// with no device present the compiler targets these.
struct GpuTarget {
  int compute_capability = 90;  // major * 10 + minor: 80 (A100) or 90 (H100) ...
  int sm_count = 132;
  int max_threads_per_block = 1024;
  int max_shared_memory_per_block = 48 * 1024;  // Static shared memory limit.
  int warp_size = 32;

  // Typical figures for a compute capability (80 -> A100, 90 -> H100).
  static GpuTarget ForComputeCapability(int compute_capability);
  // "sm_90" etc.
  std::string SmName() const;
};

struct GpuCompileOptions {
  GpuTarget target;
  // 0..3: LLVM's optimization pipeline level before code generation.
  int optimization_level = 3;
  // Run ptxas to produce a cubin. When ptxas cannot be found the kernel has
  // an empty cubin and a note; that is not an error.
  bool assemble = true;
  // ptxas to run; empty: $HLOC_PTXAS, else /usr/local/cuda/bin/ptxas.
  std::string ptxas_path;
  // libdevice bitcode; empty: $HLOC_LIBDEVICE, else
  // /usr/local/cuda/nvvm/libdevice/libdevice.10.bc. Only read by kernels
  // that call math functions; missing -> error for those kernels.
  std::string libdevice_path;
  // The kernel's symbol; empty: "hloc_" followed by a hash of the
  // computation's fingerprint (stable across runs).
  std::string kernel_name;
  // Keep the unoptimized IR too (GpuKernel::unoptimized_ir).
  bool keep_unoptimized_ir = false;
};

struct LaunchDims {
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t shared_bytes = 0;  // Dynamic shared memory (static shared is in the cubin).

  int64_t total_threads() const {
    return grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2];
  }
};

struct GpuKernel {
  std::string name;            // Entry symbol in the PTX and cubin.
  std::string llvm_ir;         // Optimized LLVM IR (libdevice linked in).
  std::string unoptimized_ir;  // Only with keep_unoptimized_ir.
  std::string ptx;
  std::string cubin;  // Empty when ptxas is unavailable (see note).
  std::string note;   // Why cubin is empty.
  LaunchDims launch;
  int64_t num_buffers = 0;  // Parameter leaves, then root leaves.
  int64_t num_inputs = 0;   // Of which parameter leaves.
  // "loop", "loop-vectorized", "row-normalization", "row-reduction", "column-reduction",
  // "row-reduction-split", "column-reduction-split" (with a second kernel),
  // "transpose", "sort-shared", "sort-global", "topk-shared", "topk-global",
  // "scatter", "scatter-atomic", "scatter-ordered", "scatter-serial".
  std::string strategy;
  // Elements a thread handles per grid-stride step (loop kernels: 1, 2, 4...).
  int64_t vector_width = 1;
  // Launch dims of zero threads: nothing to run (an output with 0 elements).
  bool empty() const { return launch.total_threads() == 0; }
  // (input buffer, output buffer) pairs the launcher copies, input into
  // output, before the launch: the kernel then updates that output in place
  // (scatter). Such outputs are read as well as written.
  std::vector<std::pair<int64_t, int64_t>> copy_before;
  // Bytes of scratch memory (uninitialized, 16-byte aligned) the kernel
  // takes as one extra pointer after the outputs; counted in num_buffers.
  // 0: none. (Sorts of rows too long for shared memory keep their
  // permutation there.)
  int64_t scratch_bytes = 0;
  // A second entry of the same PTX/cubin the launcher runs right after this
  // one, over the same buffers (scratch included), with `second_launch`;
  // empty: none. (Split reductions: per-chunk partials, then their combine.)
  std::string second_name;
  LaunchDims second_launch;
};

// Compiles `computation`. Unimplemented when the emitters do not cover it
// (an op with no elemental form and no kernel of its own, such as fft, or a
// type such as complex); sort, topk (op and "TopK" custom call) and scatter
// have kernels of their own when they are the computation's root and read
// parameters directly (one-op wrappers). On Unimplemented the caller runs
// the computation op by op, through a library or on the host. Other errors
// are bugs or bad input. kUpdateInPlace (backend/common/kernel_variant.h):
// a kernel writing only a dynamic-update-slice's update into an output that
// already holds the updated operand; Unimplemented for other computations.
absl::StatusOr<GpuKernel> CompileGpuKernel(
    const HloComputation& computation, const GpuCompileOptions& options,
    backend::KernelVariant variant = backend::KernelVariant::kWhole);

// Several kernels in one LLVM module, so one PTX text and one cubin hold
// them all (one ptxas run, one module load in the runtime). Identical
// computations share one kernel.
struct GpuKernelBatch {
  // One entry per computation, in order: the kernel (its llvm_ir, ptx and
  // cubin left empty: they are the batch's) or why it has none
  // (Unimplemented, as CompileGpuKernel would say).
  std::vector<absl::StatusOr<GpuKernel>> kernels;
  std::string llvm_ir;
  std::string ptx;
  std::string cubin;  // Empty when ptxas is unavailable (see note) or no kernel compiled.
  std::string note;
};
absl::StatusOr<GpuKernelBatch> CompileGpuKernels(
    absl::Span<const HloComputation* const> computations, const GpuCompileOptions& options);

// PTX -> cubin with ptxas for sm_`compute_capability`, run as a subprocess in
// a temporary directory. NotFound when ptxas does not exist (callers treat
// that as "no cubin"); Internal with ptxas' messages when it rejects the PTX.
absl::StatusOr<std::string> AssemblePtx(const std::string& ptx, int compute_capability,
                                        const std::string& ptxas_path);
// The ptxas AssemblePtx runs for `options` (explicit, $HLOC_PTXAS, default).
std::string PtxasPath(const GpuCompileOptions& options);

// Kernels by the computation's fingerprint (see backend/llvm/
// kernel_fingerprint.h) and the target: identical fusions compile once.
// Thread-safe; compiles outside the lock, so two threads asking for the same
// new kernel may both compile it (the first result stays).
class GpuKernelCache {
 public:
  explicit GpuKernelCache(GpuCompileOptions options) : options_(std::move(options)) {}

  absl::StatusOr<std::shared_ptr<const GpuKernel>> GetOrCompile(
      const HloComputation& computation,
      backend::KernelVariant variant = backend::KernelVariant::kWhole);

  const GpuCompileOptions& options() const { return options_; }
  int64_t hits() const;
  int64_t misses() const;

 private:
  const GpuCompileOptions options_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const GpuKernel>> kernels_;
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_KERNEL_CODEGEN_H_
