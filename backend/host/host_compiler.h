// Compiles an HloModule for the host: every fusion becomes a JIT-compiled
// kernel, every other elemental op a one-op kernel, tuples and reshapes
// become buffer aliases, while/conditional/call become nested thunk
// sequences, composite library calls (gemm, convolution) and plain dots and
// convolutions become oneDNN library calls where oneDNN takes them
// (onednn_library.h), and ops no kernel covers yet run through a fallback function
// (the interpreter, when the caller provides it) as library-call thunks.
// Buffer liveness follows the schedule (post order, nested computations
// inline at their caller) so temporaries share one arena; dynamic-update-
// slices and while loops reuse buffers whose old values are dead
// (host_compiler.cc explains when).
#ifndef HLOC_BACKEND_HOST_HOST_COMPILER_H_
#define HLOC_BACKEND_HOST_HOST_COMPILER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/host/kernel_compiler.h"
#include "backend/llvm/array_leaves.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "runtime/executable.h"

namespace hloc {
namespace host {

// Evaluates a module on literals; used for ops with no host kernel.
using FallbackEvaluator =
    std::function<absl::StatusOr<Literal>(const HloModule&, absl::Span<const Literal>)>;

struct HostCompileOptions {
  KernelCompilerOptions kernel;
  // Compile with this compiler (sharing its kernel cache) instead of a new one.
  std::shared_ptr<KernelCompiler> compiler;
  // Runs ops with no kernel (sort, scatter, custom calls, ...); when unset
  // such ops are compile errors.
  FallbackEvaluator fallback;
  // Gemm/convolution composite calls, dots and convolutions through oneDNN;
  // false: the previous paths (inlined bodies, the blocked gemm, generated
  // loops), for comparisons.
  bool use_onednn = true;
  // Dynamic-update-slices (plain or fusion roots) write only the update,
  // into their operand's buffer when nothing reads the old value afterwards;
  // while loops take over an initial value nothing else reads. false: every
  // such op writes a fresh buffer and loops copy their initial state, for
  // comparisons.
  bool update_in_place = true;
};

// What the compiler did, for reports and tests.
struct HostCompileReport {
  int64_t kernels = 0;            // Kernel thunks emitted.
  int64_t fused_kernels = 0;      // Of which compile a fusion.
  int64_t unfused_fusions = 0;    // Fusions split into their ops (no fused kernel).
  int64_t library_calls = 0;      // Host routines (sort, top-k).
  int64_t interpreter_calls = 0;  // Fallback thunks.
  std::vector<std::string> fallback_ops;  // "scatter (%scatter.3)", ...
  std::vector<std::string> strategies;    // Per kernel: "%fusion.2: row-reduction".
  // Library calls run by oneDNN (also counted in library_calls):
  // "%gemm_bias_relu (hloc.gemm_bias_relu): matmul brg:avx512_core (f32->f32 1x8x64x32 bias relu)".
  std::vector<std::string> onednn_calls;
  // Composite calls, dots and convolutions oneDNN did not take, with why; they
  // run as before (call bodies inlined, the blocked gemm, generated loops).
  std::vector<std::string> library_refusals;
  // Buffer sharing (HostCompileOptions::update_in_place).
  int64_t update_kernels = 0;     // Kernels writing only a dynamic-update-slice's update.
  int64_t updates_in_place = 0;   // Of which share their operand's buffer (no copy).
  int64_t loop_states_reused = 0;  // Loop state leaves living in their initial value's buffer.
  int64_t shared_bytes = 0;       // Bytes of buffers living in another's.
  // The module's input_output_alias pairs: "output {0} / parameter 1 {}"
  // for those a donated parameter holds (HostProgram::ExecuteDonating), with
  // the reason for the others.
  std::vector<std::string> aliased_outputs;
  std::vector<std::string> alias_refusals;
  std::string ToString() const;
};

class HostProgram {
 public:
  // Runs the program on one literal per entry parameter.
  absl::StatusOr<Literal> Execute(absl::Span<const Literal> arguments,
                                  runtime::ThreadPool* pool,
                                  const runtime::ExecuteOptions& options = {}) const;

  // As Execute, but the arguments are donated: an output the module aliases
  // with a parameter (input_output_alias, where the report lists it as
  // aliased) is computed in that argument's memory, which the result then
  // owns, with no copy.
  absl::StatusOr<Literal> ExecuteDonating(std::vector<Literal> arguments,
                                          runtime::ThreadPool* pool,
                                          const runtime::ExecuteOptions& options = {}) const;

  const runtime::Executable& executable() const { return *executable_; }
  const HostCompileReport& report() const { return report_; }
  const HloModule& module() const { return *module_; }

 private:
  friend class HostCompilation;
  friend absl::StatusOr<std::unique_ptr<HostProgram>> CompileForHost(
      const HloModule& module, const HostCompileOptions& options);
  HostProgram() = default;
  std::unique_ptr<HloModule> module_;
  std::shared_ptr<KernelCompiler> compiler_;
  std::unique_ptr<runtime::Executable> executable_;
  std::vector<Shape> parameter_shapes_;
  Shape result_shape_;
  HostCompileReport report_;
};

absl::StatusOr<std::unique_ptr<HostProgram>> CompileForHost(const HloModule& module,
                                                            const HostCompileOptions& options = {});

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_HOST_COMPILER_H_
