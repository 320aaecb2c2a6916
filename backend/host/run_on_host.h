// The host backend's entry point: compile a module for the host CPU and run
// it once on literal arguments. Ops with no host kernel run through the
// interpreter unless the options say otherwise.
#ifndef HLOC_BACKEND_HOST_RUN_ON_HOST_H_
#define HLOC_BACKEND_HOST_RUN_ON_HOST_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/host/host_compiler.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "runtime/thunk.h"

namespace hloc {

struct RunOnHostOptions {
  host::HostCompileOptions compile;
  // Run ops with no kernel in the interpreter (interpreter ops) when
  // compile.interpreter is unset.
  bool interpreter_fallback = true;
  // Threads that split kernels (counting the caller); 0: all cores.
  int num_threads = 0;
  runtime::ExecuteOptions execute;
};

// Compiles `module` and runs its entry computation on `arguments` (one per
// entry parameter). The result is a tuple literal when the entry returns one.
absl::StatusOr<Literal> RunOnHost(const HloModule& module, absl::Span<const Literal> arguments,
                                  const RunOnHostOptions& options = {});

// The interpreter as a host::InterpreterEvaluator (one thread per call).
host::InterpreterEvaluator HostInterpreter();
// The former name of HostInterpreter.
inline host::InterpreterEvaluator InterpreterFallback() { return HostInterpreter(); }

}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_RUN_ON_HOST_H_
