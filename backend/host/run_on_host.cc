// RunOnHost: CompileForHost, a thread pool, one execution.
#include "backend/host/run_on_host.h"

#include "hlo/evaluator/evaluator.h"
#include "hlo/status_macros.h"
#include "runtime/thread_pool.h"

namespace hloc {

host::InterpreterEvaluator HostInterpreter() {
  return [](const HloModule& module, absl::Span<const Literal> arguments) {
    EvaluatorOptions options;
    options.num_threads = 1;
    // The wrapper of one instruction calls computations of the module it came
    // from, which was verified before it was compiled.
    options.verify = false;
    return Evaluate(module, arguments, options);
  };
}

absl::StatusOr<Literal> RunOnHost(const HloModule& module, absl::Span<const Literal> arguments,
                                  const RunOnHostOptions& options) {
  host::HostCompileOptions compile = options.compile;
  if (!compile.interpreter && !compile.fallback && options.interpreter_fallback) {
    compile.interpreter = HostInterpreter();
  }
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<host::HostProgram> program,
                        host::CompileForHost(module, compile));
  runtime::ThreadPool pool(options.num_threads);
  return program->Execute(arguments, &pool, options.execute);
}

}  // namespace hloc
