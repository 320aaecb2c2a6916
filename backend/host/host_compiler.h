// Compiles an HloModule for the host: the program builder
// (backend/common/program_builder.h: buffers, liveness, control flow,
// updates in place, input_output_alias, interpreter ops) with the host's
// lowering (host_lowering.h): every fusion and every other elemental op a
// kernel JIT-compiled through LLVM's ORC JIT, composite library calls (gemm,
// convolution) and plain dots and convolutions oneDNN library calls where
// oneDNN takes them (onednn_library.h), sort/top-k/scatter host routines
// (library_calls.h), and ops nothing covers interpreter ops when the caller
// provides the interpreter. HostProgram::Execute* is in host_program.cc.
#ifndef HLOC_BACKEND_HOST_HOST_COMPILER_H_
#define HLOC_BACKEND_HOST_HOST_COMPILER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/common/declared_result.h"
#include "backend/common/interpreter_ops.h"
#include "backend/common/program_report.h"
#include "backend/host/kernel_compiler.h"
#include "backend/llvm/array_leaves.h"
#include "hlo/custom_call_targets.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "runtime/communicator.h"
#include "runtime/executable.h"

namespace hloc {
namespace host {

// Evaluates a module on literals; runs the ops with no host kernel
// (interpreter ops, backend/common/interpreter_ops.h).
using InterpreterEvaluator = backend::InterpreterEvaluator;
using FallbackEvaluator = InterpreterEvaluator;  // The former name.

struct HostCompileOptions {
  KernelCompilerOptions kernel;
  // Compile with this compiler (sharing its kernel cache) instead of a new one.
  std::shared_ptr<KernelCompiler> compiler;
  // Runs ops with no kernel (rng, custom calls, ...); when unset such ops
  // are compile errors.
  InterpreterEvaluator interpreter;
  // The former name of `interpreter`, used when that is unset.
  InterpreterEvaluator fallback;
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
  // The device's communicator, which its collectives, replica-id and
  // partition-id call (runtime/communicator.h); unset: a one-device
  // SelfCommunicator (every group must be that device alone).
  std::shared_ptr<runtime::Communicator> communicator;
  // Custom-call targets the embedder registered: each call to one is a
  // library call running its function. A custom call whose target is
  // neither these nor built in ("TopK") is a compile error.
  std::shared_ptr<const CustomCallTargets> custom_calls;
};

// What the compiler did, for reports and tests: the program builder's
// counts (kernels, library and interpreter calls, buffer sharing, aliased
// outputs; backend/common/program_report.h) and oneDNN's decisions.
struct HostCompileReport : backend::ProgramReport {
  // The interpreter ops in the former format: "scatter (%scatter.3)".
  std::vector<std::string> fallback_ops;
  // Library calls run by oneDNN (also counted in library_calls):
  // "%gemm_bias_relu (hloc.gemm_bias_relu): matmul brg:avx512_core (f32->f32 1x8x64x32 bias relu)".
  std::vector<std::string> onednn_calls;
  // Composite calls, dots and convolutions oneDNN did not take, with why; they
  // run as before (call bodies inlined, the blocked gemm, generated loops).
  std::vector<std::string> library_refusals;
  std::string ToString() const;
};

class HostProgram {
 public:
  // Runs the program on one literal per entry parameter (a bounded dynamic
  // one's of any size up to its bound; declared_result.h).
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
  friend absl::StatusOr<std::unique_ptr<HostProgram>> CompileForHost(
      const HloModule& module, const HostCompileOptions& options);
  HostProgram() = default;
  std::unique_ptr<HloModule> module_;
  std::shared_ptr<KernelCompiler> compiler_;
  std::unique_ptr<runtime::Executable> executable_;
  std::vector<Shape> parameter_shapes_;
  Shape result_shape_;
  // Cuts the result of a module DynamicPadder rewrote to its runtime sizes.
  backend::DeclaredResult declared_result_;
  HostCompileReport report_;
};

absl::StatusOr<std::unique_ptr<HostProgram>> CompileForHost(const HloModule& module,
                                                            const HostCompileOptions& options = {});

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_HOST_COMPILER_H_
