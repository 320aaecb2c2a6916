// Times the host backend on one module file against the interpreter:
// compile time, best-of-N run time of each, and the comparison of results.
// Text or module protos run on random arguments; HloSnapshot files on their
// recorded arguments.
//   bazel run -c opt //backend/host:host_benchmark -- FILE [--threads=N] [--runs=N]
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend/host/host_compiler.h"
#include "backend/host/run_on_host.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/loader.h"
#include "runtime/thread_pool.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [--threads=N] [--runs=N]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  // Keep large freed arrays for reuse (as evaluate_benchmark does), so both
  // sides are timed without fresh-page faults on every result literal.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
  int threads = 0, runs = 5;
  for (int i = 2; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
    if (std::strncmp(argv[i], "--runs=", 7) == 0) runs = std::max(1, std::atoi(argv[i] + 7));
  }
  std::unique_ptr<hloc::HloModule> module;
  std::vector<hloc::Literal> args;
  if (path.size() > 12 && path.substr(path.size() - 12) == ".snapshot.pb") {
    auto snapshot = hloc::LoadSnapshotFromFile(path);
    if (!snapshot.ok()) {
      std::fprintf(stderr, "%s\n", snapshot.status().ToString().c_str());
      return 1;
    }
    module = std::move(snapshot->module);
    args = std::move(snapshot->arguments);
  } else {
    auto loaded = hloc::LoadModuleFromFile(path);
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
      return 1;
    }
    module = *std::move(loaded);
    auto random = hloc::MakeRandomArguments(*module, 1);
    if (!random.ok()) {
      std::fprintf(stderr, "%s\n", random.status().ToString().c_str());
      return 1;
    }
    args = *std::move(random);
  }
  hloc::host::HostCompileOptions options;
  options.fallback = hloc::InterpreterFallback();
  auto t0 = std::chrono::steady_clock::now();
  auto program = hloc::host::CompileForHost(*module, options);
  auto t1 = std::chrono::steady_clock::now();
  if (!program.ok()) {
    std::fprintf(stderr, "%s\n", program.status().ToString().c_str());
    return 1;
  }
  std::printf("compile %.3f s\n%s%s", Seconds(t0, t1), (*program)->report().ToString().c_str(),
              (*program)->executable().MemoryReport().substr(
                  0, (*program)->executable().MemoryReport().find('\n') + 1).c_str());
  hloc::runtime::ThreadPool pool(threads);
  double best_host = 1e30, best_interpreter = 1e30;
  absl::StatusOr<hloc::Literal> host_result, interpreted;
  for (int r = 0; r < runs; ++r) {
    auto a = std::chrono::steady_clock::now();
    host_result = (*program)->Execute(args, &pool);
    auto b = std::chrono::steady_clock::now();
    if (!host_result.ok()) {
      std::fprintf(stderr, "host: %s\n", host_result.status().ToString().c_str());
      return 1;
    }
    best_host = std::min(best_host, Seconds(a, b));
  }
  hloc::EvaluatorOptions evaluator_options;
  evaluator_options.num_threads = threads;
  for (int r = 0; r < runs; ++r) {
    auto a = std::chrono::steady_clock::now();
    interpreted = hloc::Evaluate(*module, args, evaluator_options);
    auto b = std::chrono::steady_clock::now();
    if (!interpreted.ok()) {
      std::fprintf(stderr, "interpreter: %s\n", interpreted.status().ToString().c_str());
      return 1;
    }
    best_interpreter = std::min(best_interpreter, Seconds(a, b));
  }
  std::printf("host %.6f s, interpreter %.6f s (best of %d, %d threads)\n", best_host,
              best_interpreter, runs, pool.num_threads());
  hloc::ComparisonReport report = hloc::CompareLiterals(*interpreted, *host_result);
  std::printf("%s\n", report.ok ? "results match" : report.ToString().c_str());
  return report.ok ? 0 : 1;
}
