// Fuzz target: HLO text of one small module -> verifier -> interpreter, host
// pipeline, interpreter on the optimized module, host backend (LLVM JIT
// kernels at O0, oneDNN calls). Errors are fine; crashes, leaks, sanitizer
// reports and empty error messages are not.
//
// Guards keep each input to well under a second (libFuzzer's -timeout is a
// failure): few instructions, small shapes, a while-iteration limit.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/kernel_compiler.h"
#include "backend/host/run_on_host.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"
#include "tests/fuzz/fuzz_targets.h"

namespace hloc::fuzz {

constexpr size_t kMaxTextBytes = 16 << 10;
constexpr int64_t kMaxInstructions = 60;
constexpr int64_t kMaxShapeBytes = 16 << 10;
constexpr int64_t kMaxWhileIterations = 64;

namespace {

// FNV-1a: the arguments depend on the input only (absl::Hash is seeded per
// process, and a reproducer must reproduce).
uint64_t InputSeed(absl::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (char c : text) hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return hash;
}

bool SmallEnoughToRun(const HloModule& module) {
  if (module.instruction_count() > kMaxInstructions) return false;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      std::optional<int64_t> bytes = instruction->shape().CheckedByteSize();
      if (!bytes || *bytes > kMaxShapeBytes) return false;
    }
  }
  return true;
}

// One compiler for the whole run (creating LLVM's JIT per input would be
// most of the time); no kernel cache, so memory does not grow with the run.
std::shared_ptr<host::KernelCompiler> SharedCompiler() {
  static const std::shared_ptr<host::KernelCompiler>* compiler = [] {
    host::KernelCompilerOptions options;
    options.optimization_level = 0;
    options.cache = false;
    absl::StatusOr<std::shared_ptr<host::KernelCompiler>> created =
        host::KernelCompiler::Create(options);
    if (!created.ok()) FuzzFailure("cannot create the host kernel compiler", created.status().ToString());
    return new std::shared_ptr<host::KernelCompiler>(*std::move(created));
  }();
  return *compiler;
}

}  // namespace

int FuzzPipeline(const uint8_t* data, size_t size) {
  if (size > kMaxTextBytes) return -1;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  ParseOptions parse_options;
  parse_options.filename = "fuzz.hlo";
  parse_options.max_constant_bytes = kMaxConstantBytes;
  absl::StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(text, parse_options);
  if (!parsed.ok()) {
    RequireMessage(parsed.status(), "parser");
    return 0;
  }
  const HloModule& module = **parsed;
  absl::Status verified = VerifyModule(module);
  if (!verified.ok()) {
    RequireMessage(verified, "verifier");
    return 0;
  }
  if (!SmallEnoughToRun(module)) return -1;

  absl::StatusOr<std::vector<Literal>> arguments =
      MakeRandomArguments(module, InputSeed(text));
  if (!arguments.ok()) {
    RequireMessage(arguments.status(), "random arguments");
    return 0;
  }
  EvaluatorOptions evaluator_options;
  evaluator_options.num_threads = 1;
  evaluator_options.max_while_iterations = kMaxWhileIterations;
  RequireMessage(Evaluate(module, *arguments, evaluator_options).status(), "interpreter");

  std::unique_ptr<HloModule> optimized = module.Clone();
  absl::StatusOr<bool> changed = host::OptimizeForHost(*optimized);
  if (!changed.ok()) {
    RequireMessage(changed.status(), "host pipeline");
    return 0;
  }
  RequireMessage(Evaluate(*optimized, *arguments, evaluator_options).status(),
                 "interpreter (optimized)");

  RunOnHostOptions host_options;
  host_options.compile.compiler = SharedCompiler();
  host_options.num_threads = 1;
  host_options.execute.max_while_iterations = kMaxWhileIterations;
  RequireMessage(RunOnHost(*optimized, *arguments, host_options).status(), "host backend");
  return 0;
}

}  // namespace hloc::fuzz
