// Times one module on the host backend or in the interpreter and prints one
// JSON line, for bench/host_vs_xla.py:
//
//   host_bench FILE [--backend=host|interpreter] [--pipeline=host|NAME|none]
//              [--threads=N] [--repeat=N] [--min-time=S] [--seed=N]
//
// --repeat=0 compiles without running (compile time of big modules);
// --thunks prints the compiled thunk sequence to stderr.
// --ir=NAME prints the fused computation of fusion %NAME (after the pipeline)
// and its kernel's optimized LLVM IR to stderr, for reading what the kernel emitter made of it.
// FILE is an HloSnapshot (its recorded arguments are used) or any module
// file hloc reads (random arguments from --seed). The host backend is timed
// as `hloc run --backend=host` runs it: the host pipeline ("none" skips
// it), then CompileForHost with a fresh kernel
// compiler (no cache), the interpreter standing in for ops with no kernel.
// --pipeline=host (the default) is OptimizeForHost (host_pipeline.h); any
// other name is a standard pipeline ("default", "fusion", ...).
// Compile time is split into pipeline_s (the pass pipeline), codegen_s
// (CompileForHost: LLVM IR emission, O3, ORC JIT, thunks, buffer
// assignment; kernel_compile_s is the LLVM part of it). Runs: one warm-up,
// then at least 5 and at most --repeat timed executions, stopping once
// --min-time seconds have passed; median and minimum are reported, and
// cpu_s, the process's CPU time (every thread, CLOCK_PROCESS_CPUTIME_ID)
// over the timed runs divided by their number: on a busy machine, where
// wall times move with the other load, it moves far less. A timed
// execution takes the arguments as literals and returns a new result
// literal (the host's Execute; the interpreter's Evaluate).
#include <algorithm>
#include <cmath>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/run_on_host.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/loader.h"
#include "hlo/text_printer.h"
#include "passes/standard_pipelines.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Options {
  std::string path;
  std::string backend = "host";
  std::string pipeline = "host";
  int threads = 0;
  int repeat = 1000;
  double min_time = 0.5;
  uint64_t seed = 1;
  bool print_thunks = false;
  std::string ir_of;  // --ir=NAME
};

bool ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      const std::string prefix = absl::StrCat("--", name, "=");
      return arg.rfind(prefix, 0) == 0 ? argv[i] + prefix.size() : nullptr;
    };
    if (const char* v = value("backend")) {
      options->backend = v;
    } else if (const char* v = value("pipeline")) {
      options->pipeline = v;
    } else if (const char* v = value("threads")) {
      options->threads = std::atoi(v);
    } else if (const char* v = value("repeat")) {
      options->repeat = std::max(0, std::atoi(v));
    } else if (const char* v = value("min-time")) {
      options->min_time = std::atof(v);
    } else if (const char* v = value("ir")) {
      options->ir_of = v;
    } else if (arg == "--thunks") {
      options->print_thunks = true;
    } else if (const char* v = value("seed")) {
      options->seed = std::strtoull(v, nullptr, 10);
    } else if (arg.rfind("--", 0) == 0 || !options->path.empty()) {
      return false;
    } else {
      options->path = arg;
    }
  }
  return !options->path.empty() && (options->backend == "host" || options->backend == "interpreter");
}

struct Timing {
  double median = 0, min = 0;
  double cpu = 0;  // Process CPU seconds per timed run (mean).
  int runs = 0;
};

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// One warm-up, then timed runs (see the file comment).
absl::StatusOr<Timing> TimeRuns(const Options& options,
                                const std::function<absl::StatusOr<Literal>()>& run,
                                Literal* result) {
  absl::StatusOr<Literal> first = run();
  if (!first.ok()) return first.status();
  *result = *std::move(first);
  std::vector<double> times;
  const Clock::time_point start = Clock::now();
  const double cpu_start = ProcessCpuSeconds();
  while (static_cast<int>(times.size()) < options.repeat &&
         (times.size() < 5 || Since(start) < options.min_time)) {
    const Clock::time_point a = Clock::now();
    absl::StatusOr<Literal> out = run();
    times.push_back(Since(a));
    if (!out.ok()) return out.status();
  }
  const double cpu = ProcessCpuSeconds() - cpu_start;
  std::sort(times.begin(), times.end());
  Timing timing;
  timing.runs = static_cast<int>(times.size());
  timing.cpu = times.empty() ? 0 : cpu / static_cast<double>(times.size());
  timing.median = times[times.size() / 2];
  timing.min = times.front();
  return timing;
}

// A JSON number, or null for NaN and infinities (which JSON lacks).
std::string JsonNumber(double v) { return std::isfinite(v) ? absl::StrCat(v) : "null"; }

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) {
      out.push_back(' ');
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

int Main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: %s FILE [--backend=host|interpreter] [--pipeline=NAME|none] [--thunks] [--ir=FUSION] "
                 "[--threads=N] [--repeat=N] [--min-time=S] [--seed=N]\n",
                 argv[0]);
    return 2;
  }
  auto fail = [](const std::string& what, const absl::Status& status) {
    std::fprintf(stderr, "%s: %s\n", what.c_str(), status.ToString().c_str());
    return 1;
  };
  const Clock::time_point load_start = Clock::now();
  std::unique_ptr<HloModule> module;
  std::vector<Literal> arguments;
  std::optional<Literal> recorded;
  if (options.path.size() > 12 && options.path.substr(options.path.size() - 12) == ".snapshot.pb") {
    absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(options.path);
    if (!snapshot.ok()) return fail("load", snapshot.status());
    module = std::move(snapshot->module);
    arguments = std::move(snapshot->arguments);
    recorded = std::move(snapshot->result);
  } else {
    absl::StatusOr<std::unique_ptr<HloModule>> loaded = LoadModuleFromFile(options.path);
    if (!loaded.ok()) return fail("load", loaded.status());
    module = *std::move(loaded);
    absl::StatusOr<std::vector<Literal>> random = MakeRandomArguments(*module, options.seed);
    if (!random.ok()) return fail("arguments", random.status());
    arguments = *std::move(random);
  }
  const double load_s = Since(load_start);

  runtime::ThreadPool pool(options.threads);
  std::string json = absl::StrCat("{\"file\": ", JsonString(options.path), ", \"backend\": \"",
                                  options.backend, "\", \"threads\": ", pool.num_threads(),
                                  ", \"load_s\": ", load_s);
  Literal result;
  absl::StatusOr<Timing> timing;
  if (options.backend == "interpreter") {
    EvaluatorOptions evaluator;
    evaluator.num_threads = pool.num_threads();
    timing = TimeRuns(options, [&] { return Evaluate(*module, arguments, evaluator); }, &result);
  } else {
    Clock::time_point start = Clock::now();
    std::unique_ptr<HloModule> optimized = module->Clone();
    if (options.pipeline == "host") {
      absl::StatusOr<bool> changed = host::OptimizeForHost(*optimized);
      if (!changed.ok()) return fail("pipeline", changed.status());
    } else if (options.pipeline != "none") {
      absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline =
          MakeStandardPipeline(options.pipeline, PipelineOptions{}, nullptr);
      if (!pipeline.ok()) return fail("pipeline", pipeline.status());
      absl::StatusOr<bool> changed = (*pipeline)->Run(*optimized);
      if (!changed.ok()) return fail("pipeline", changed.status());
    }
    const double pipeline_s = Since(start);
    start = Clock::now();
    host::HostCompileOptions compile;
    compile.fallback = InterpreterFallback();
    absl::StatusOr<std::shared_ptr<host::KernelCompiler>> compiler =
        host::KernelCompiler::Create(compile.kernel);
    if (!compiler.ok()) return fail("kernel compiler", compiler.status());
    compile.compiler = *compiler;
    if (!options.ir_of.empty()) {
      const HloInstruction* fusion = nullptr;
      for (const HloComputation* computation : optimized->computations()) {
        for (const HloInstruction* instruction : computation->instructions()) {
          if (instruction->name() == options.ir_of && instruction->opcode() == HloOpcode::kFusion) {
            fusion = instruction;
          }
        }
      }
      if (fusion == nullptr) {
        return fail("ir", absl::NotFoundError(absl::StrCat("no fusion %", options.ir_of)));
      }
      absl::StatusOr<std::string> ir =
          (*compiler)->EmitIr(*fusion->called_computations()[0], /*optimized=*/true);
      if (!ir.ok()) return fail("ir", ir.status());
      std::fprintf(stderr, "%s\n%s\n", PrintComputation(*fusion->called_computations()[0]).c_str(),
                   ir->c_str());
    }
    absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
        host::CompileForHost(*optimized, compile);
    if (!program.ok()) return fail("compile", program.status());
    const double codegen_s = Since(start);
    if (options.print_thunks) {
      std::fprintf(stderr, "%s", (*program)->executable().ThunksToString().c_str());
    }
    const host::HostCompileReport& report = (*program)->report();
    absl::StrAppend(&json, ", \"pipeline\": \"", options.pipeline, "\", \"pipeline_s\": ",
                    pipeline_s, ", \"codegen_s\": ", codegen_s, ", \"kernel_compile_s\": ",
                    (*compiler)->stats().compile_seconds, ", \"kernels\": ", report.kernels,
                    ", \"fused_kernels\": ", report.fused_kernels, ", \"library_calls\": ",
                    report.library_calls, ", \"interpreter_calls\": ", report.interpreter_calls);
    absl::StrAppend(&json, ", \"fallback_ops\": [");
    for (size_t i = 0; i < report.fallback_ops.size(); ++i) {
      absl::StrAppend(&json, i ? ", " : "", JsonString(report.fallback_ops[i]));
    }
    absl::StrAppend(&json, "]");
    if (options.repeat == 0) {
      std::printf("%s}\n", json.c_str());
      return 0;
    }
    timing = TimeRuns(options, [&] { return (*program)->Execute(arguments, &pool); }, &result);
  }
  if (!timing.ok()) return fail("run", timing.status());
  absl::StrAppend(&json, ", \"runs\": ", timing->runs, ", \"median_s\": ", timing->median,
                  ", \"min_s\": ", timing->min, ", \"cpu_s\": ", timing->cpu);
  if (recorded.has_value()) {
    // Sanity only (tests check correctness): XLA's recorded result.
    Tolerance tolerance{2e-2, 2e-2};
    const ComparisonReport comparison = CompareLiterals(*recorded, result, tolerance);
    absl::StrAppend(&json, ", \"matches_recorded\": ", comparison.ok ? "true" : "false",
                    ", \"max_abs_error\": ", JsonNumber(comparison.max_abs_error),
                    ", \"max_rel_error\": ", JsonNumber(comparison.max_rel_error),
                    ", \"mismatches\": ", comparison.mismatches);
  }
  std::printf("%s}\n", json.c_str());
  return 0;
}

}  // namespace
}  // namespace hloc

int main(int argc, char** argv) { return hloc::Main(argc, argv); }
