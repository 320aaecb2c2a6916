// Compiles fused computations into host kernels: LLVM IR from the kernel
// emitters, the O3 pipeline for the host CPU, and ORC's LLJIT. Kernels are
// cached by the printed text of their computation (instruction names
// canonicalized), so identical fusions compile once per compiler.
//
// This header is LLVM-free: the host compiler and tests include it without
// paying for LLVM's headers.
#ifndef HLOC_BACKEND_HOST_KERNEL_COMPILER_H_
#define HLOC_BACKEND_HOST_KERNEL_COMPILER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "backend/common/kernel_variant.h"
#include "backend/llvm/kernel_fingerprint.h"
#include "hlo/computation.h"
#include "runtime/thunk.h"

namespace hloc {
namespace host {

struct KernelCompilerOptions {
  // 0..3: LLVM's optimization pipeline level (O0 skips it).
  int optimization_level = 3;
  // Reuse kernels of computations that print the same.
  bool cache = true;
  // Tile transposes that move the minor dimension (kernel_emitter.h); false
  // emits them as plain loop kernels (for comparisons).
  bool tiled_transposes = true;
  // With `cache`: compiled kernels are also kept as object files in this
  // folder, named by a fingerprint of the kernel's text, this CPU and these
  // options, and a later compiler (another process) loads them instead of
  // running LLVM. An unreadable or corrupt entry is recompiled and
  // rewritten; a folder that cannot be written only loses the saving.
  std::string disk_cache_dir;
  // f32 exp, expm1, tanh, log (and logistic through exp) call libm, bit for
  // bit with the interpreter, instead of the inline polynomials of
  // backend/llvm/polynomial_math.h (which vectorize; error bounds there).
  // KernelCompiler::Create also turns this on when the environment sets
  // HLOC_HOST_EXACT_MATH=1, so any tool can bisect a numerical difference.
  bool exact_math = false;
};

// What a kernel stores, and which parameter an update-in-place kernel
// leaves unread: the program builder's (backend/common/kernel_variant.h).
using backend::KernelVariant;
using backend::UpdateInPlaceParameter;

struct CompiledKernel {
  runtime::KernelFunction function = nullptr;
  int64_t work_items = 0;
  int64_t cost_per_item = 1;  // Rough operations per work item.
  int64_t num_buffers = 0;    // Parameter leaves, then root leaves.
  std::string strategy;       // "loop", "row-reduction", ...
};

struct KernelCompilerStats {
  int64_t kernels_compiled = 0;
  int64_t cache_hits = 0;
  int64_t disk_cache_hits = 0;    // Kernels loaded from disk_cache_dir.
  int64_t disk_cache_writes = 0;  // Kernels stored there.
  double compile_seconds = 0;
};

class KernelCompiler {
 public:
  static absl::StatusOr<std::shared_ptr<KernelCompiler>> Create(
      const KernelCompilerOptions& options = {});
  virtual ~KernelCompiler() = default;

  // A kernel computing `computation` (a fused computation, or a wrapper
  // holding one op and its parameters). The kernel stays valid as long as
  // the compiler lives.
  virtual absl::StatusOr<CompiledKernel> Compile(
      const HloComputation& computation, KernelVariant variant = KernelVariant::kWhole) = 0;

  // The kernel's LLVM IR as text, before or after the optimization pipeline.
  virtual absl::StatusOr<std::string> EmitIr(const HloComputation& computation, bool optimized,
                                             KernelVariant variant = KernelVariant::kWhole) = 0;

  virtual KernelCompilerStats stats() const = 0;
};

// The cache key of a computation (shared with the GPU backend).
using codegen::KernelFingerprint;

// Rough count of operations to compute all outputs of `computation`.
double EstimateCost(const HloComputation& computation);

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_KERNEL_COMPILER_H_
