// Times the host backend on one module file against the interpreter:
// compile time, best-of-N run time of each, and the comparison of results.
// Text or module protos run on random arguments; HloSnapshot files on their
// recorded arguments.
//   bazel run -c opt //backend/host:host_benchmark -- FILE [--threads=N] [--runs=N]
// With --onednn instead of FILE: built-in gemm and convolution cases, each
// compiled twice (oneDNN library calls, and the previous paths: the blocked
// gemm, generated convolution loops, inlined composite bodies) and timed in
// the same run.
// With --transpose: built-in transposes (2-D, NHWC <-> NCHW, one fused with
// elementwise ops), compiled with tiled transpose kernels and with plain
// loop kernels, timed in the same run on the compiled executables alone
// (preallocated outputs, no literal copies), in GB/s of bytes read and written.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "backend/host/host_compiler.h"
#include "backend/host/run_on_host.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/loader.h"
#include "hlo/text_parser.h"
#include "passes/outlining/outline_library_calls.h"
#include "runtime/thread_pool.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct LibraryCase {
  const char* name;
  double flops;
  bool outline;  // Run the outlining pass first (composite calls).
  std::string hlo;
};

std::vector<LibraryCase> LibraryCases() {
  auto gemm = [](int n) {
    return absl::StrCat("HloModule gemm\nENTRY e {\n  a = f32[", n, ",", n, "] parameter(0)\n",
                        "  b = f32[", n, ",", n, "] parameter(1)\n", "  ROOT d = f32[", n, ",", n,
                        "] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
  };
  auto conv = [](bool nhwc) {
    const char* in = nhwc ? "f32[8,56,56,64]" : "f32[8,64,56,56]";
    const char* w = nhwc ? "f32[3,3,64,64]" : "f32[64,64,3,3]";
    const char* labels = nhwc ? "b01f_01io->b01f" : "bf01_oi01->bf01";
    return absl::StrCat("HloModule conv\nENTRY e {\n  x = ", in, " parameter(0)\n  w = ", w,
                        " parameter(1)\n  ROOT c = ", in,
                        " convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=", labels,
                        "\n}\n");
  };
  const std::string dense = R"(HloModule dense
ENTRY e {
  x = f32[256,1024] parameter(0)
  w = f32[1024,1024] parameter(1)
  b = f32[1024] parameter(2)
  d = f32[256,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[256,1024] broadcast(b), dimensions={1}
  s = f32[256,1024] add(d, bb)
  z = f32[] constant(0)
  zb = f32[256,1024] broadcast(z), dimensions={}
  ROOT r = f32[256,1024] maximum(s, zb)
})";
  const double conv_flops = 2.0 * 8 * 56 * 56 * 64 * 64 * 9;
  return {{"gemm f32 512^3", 2.0 * 512 * 512 * 512, false, gemm(512)},
          {"gemm f32 1024^3", 2.0 * 1024 * 1024 * 1024, false, gemm(1024)},
          {"conv 3x3 NHWC 8x56x56 64->64", conv_flops, false, conv(true)},
          {"conv 3x3 NCHW 8x64x56x56 64->64", conv_flops, false, conv(false)},
          {"gemm_bias_relu call 256x1024x1024", 2.0 * 256 * 1024 * 1024, true, dense}};
}

// Median wall times of `runs` executions of each program after a warm-up,
// alternating between them so load changes on a shared machine hit both.
absl::Status TimePrograms(const hloc::host::HostProgram* const programs[2],
                          const std::vector<hloc::Literal>& args, hloc::runtime::ThreadPool* pool,
                          int runs, double seconds[2], hloc::Literal results[2]) {
  std::vector<double> times[2];
  for (int r = 0; r <= runs; ++r) {
    for (int p = 0; p < 2; ++p) {
      auto a = std::chrono::steady_clock::now();
      absl::StatusOr<hloc::Literal> out = programs[p]->Execute(args, pool);
      auto b = std::chrono::steady_clock::now();
      if (!out.ok()) return out.status();
      if (r > 0) times[p].push_back(Seconds(a, b));
      results[p] = *std::move(out);
    }
  }
  for (int p = 0; p < 2; ++p) {
    std::sort(times[p].begin(), times[p].end());
    seconds[p] = times[p][times[p].size() / 2];
  }
  return absl::OkStatus();
}

int RunLibraryComparison(int threads, int runs) {
  hloc::runtime::ThreadPool pool(threads);
  std::printf("| case | oneDNN | previous path | speedup | oneDNN GFLOP/s | what oneDNN ran |\n");
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  int status = 0;
  for (const LibraryCase& c : LibraryCases()) {
    auto module = hloc::ParseHloModule(c.hlo);
    if (!module.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.name, module.status().ToString().c_str());
      return 1;
    }
    if (c.outline) {
      hloc::OutlineLibraryCalls outline;
      auto changed = outline.Run(**module);
      if (!changed.ok()) {
        std::fprintf(stderr, "%s: %s\n", c.name, changed.status().ToString().c_str());
        return 1;
      }
    }
    auto args = hloc::MakeRandomArguments(**module, 1);
    if (!args.ok()) return 1;
    double seconds[2] = {0, 0};  // [0]: previous path, [1]: oneDNN.
    hloc::Literal results[2];
    std::unique_ptr<hloc::host::HostProgram> programs[2];
    std::string what;
    for (int use_onednn = 0; use_onednn < 2; ++use_onednn) {
      hloc::host::HostCompileOptions options;
      options.use_onednn = use_onednn != 0;
      auto program = hloc::host::CompileForHost(**module, options);
      if (!program.ok()) {
        std::fprintf(stderr, "%s: %s\n", c.name, program.status().ToString().c_str());
        return 1;
      }
      programs[use_onednn] = *std::move(program);
    }
    for (const std::string& line : programs[1]->report().onednn_calls) {
      what += line.substr(line.find(": ") + 2);
    }
    const hloc::host::HostProgram* const both[2] = {programs[0].get(), programs[1].get()};
    absl::Status timed = TimePrograms(both, *args, &pool, runs, seconds, results);
    if (!timed.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.name, timed.ToString().c_str());
      return 1;
    }
    // Sums of up to 576-1024 products of [-1, 1) values: f32 summation order
    // differences reach ~1e-5 absolute.
    hloc::ComparisonReport same =
        hloc::CompareLiterals(results[0], results[1], hloc::Tolerance{1e-4, 1e-4});
    if (!same.ok) {
      std::fprintf(stderr, "%s: results differ: %s\n", c.name, same.ToString().c_str());
      status = 1;
    }
    std::printf("| %s | %.2f ms | %.2f ms | %.1fx | %.0f | %s |\n", c.name, seconds[1] * 1e3,
                seconds[0] * 1e3, seconds[0] / seconds[1], c.flops / seconds[1] * 1e-9,
                what.c_str());
  }
  std::printf("(median of %d runs after a warm-up, %d threads)\n", runs, pool.num_threads());
  return status;
}

struct TransposeCase {
  const char* name;
  std::string hlo;
};

std::vector<TransposeCase> TransposeCases() {
  auto transpose = [](const std::string& in, const std::string& out, const std::string& dims) {
    return absl::StrCat("HloModule t\nENTRY e {\n  p = ", in, " parameter(0)\n  ROOT t = ", out,
                        " transpose(p), dimensions={", dims, "}\n}\n");
  };
  const std::string fused = R"(HloModule fused
scale_transpose_add {
  x = f32[4096,4096] parameter(0)
  c = f32[] constant(0.5)
  cb = f32[4096,4096] broadcast(c), dimensions={}
  m = f32[4096,4096] multiply(x, cb)
  t = f32[4096,4096] transpose(m), dimensions={1,0}
  ROOT s = f32[4096,4096] add(t, cb)
}
ENTRY e {
  a = f32[4096,4096] parameter(0)
  ROOT f = f32[4096,4096] fusion(a), kind=kLoop, calls=scale_transpose_add
})";
  return {{"f32[4096,4096] 1,0", transpose("f32[4096,4096]", "f32[4096,4096]", "1,0")},
          {"NHWC->NCHW f32[32,56,56,256]",
           transpose("f32[32,56,56,256]", "f32[32,256,56,56]", "0,3,1,2")},
          {"NCHW->NHWC f32[32,256,56,56]",
           transpose("f32[32,256,56,56]", "f32[32,56,56,256]", "0,2,3,1")},
          {"bf16[4096,4096] 1,0", transpose("bf16[4096,4096]", "bf16[4096,4096]", "1,0")},
          {"s8[4096,4096] 1,0", transpose("s8[4096,4096]", "s8[4096,4096]", "1,0")},
          {"f32[64,512,512] 0,2,1", transpose("f32[64,512,512]", "f32[64,512,512]", "0,2,1")},
          {"f32[256,256,256] 0,2,1", transpose("f32[256,256,256]", "f32[256,256,256]", "0,2,1")},
          {"f32[256,200,200] 0,2,1", transpose("f32[256,200,200]", "f32[256,200,200]", "0,2,1")},
          {"fused 0.5x -> 1,0 -> +0.5 f32[4096,4096]", fused}};
}

int RunTransposeComparison(int threads, int runs, const std::string& only) {
  hloc::runtime::ThreadPool pool(threads);
  std::printf("| case | tiled | loop | speedup | tiled GB/s | loop GB/s |\n");
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  int status = 0;
  for (const TransposeCase& c : TransposeCases()) {
    if (std::string(c.name).find(only) == std::string::npos) continue;
    auto module = hloc::ParseHloModule(c.hlo);
    if (!module.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.name, module.status().ToString().c_str());
      return 1;
    }
    auto args = hloc::MakeRandomArguments(**module, 1);
    if (!args.ok()) return 1;
    std::unique_ptr<hloc::host::HostProgram> programs[2];  // [0]: loop, [1]: tiled.
    for (int tiled = 0; tiled < 2; ++tiled) {
      hloc::host::HostCompileOptions options;
      options.kernel.tiled_transposes = tiled != 0;
      auto program = hloc::host::CompileForHost(**module, options);
      if (!program.ok()) {
        std::fprintf(stderr, "%s: %s\n", c.name, program.status().ToString().c_str());
        return 1;
      }
      programs[tiled] = *std::move(program);
    }
    const hloc::runtime::Executable& loop = programs[0]->executable();
    // Page-aligned copies of the arguments and touched outputs, one set per
    // program, reused by every run: both programs see the same alignment.
    std::vector<std::unique_ptr<char, void (*)(void*)>> memory;
    auto allocate = [&](int64_t size) {
      const int64_t rounded = std::max<int64_t>(4096, (size + 4095) / 4096 * 4096);
      memory.emplace_back(static_cast<char*>(std::aligned_alloc(4096, rounded)), std::free);
      std::memset(memory.back().get(), 1, rounded);
      return memory.back().get();
    };
    std::vector<const void*> parameters;
    int64_t bytes = 0;
    for (const hloc::Literal& arg : *args) {
      char* copy = allocate(arg.size_bytes());
      std::memcpy(copy, arg.raw(), arg.size_bytes());
      parameters.push_back(copy);
      bytes += arg.size_bytes();
    }
    for (int64_t j = 0; j < loop.num_outputs(); ++j) bytes += loop.output_size(j);
    std::vector<void*> outputs[2];
    for (int p = 0; p < 2; ++p) {
      for (int64_t j = 0; j < loop.num_outputs(); ++j) {
        outputs[p].push_back(allocate(loop.output_size(j)));
      }
    }
    std::vector<double> times[2];
    for (int r = 0; r <= runs; ++r) {
      for (int p = 0; p < 2; ++p) {
        auto a = std::chrono::steady_clock::now();
        absl::Status ran = programs[p]->executable().Execute(parameters, outputs[p], &pool);
        auto b = std::chrono::steady_clock::now();
        if (!ran.ok()) {
          std::fprintf(stderr, "%s: %s\n", c.name, ran.ToString().c_str());
          return 1;
        }
        if (r > 0) times[p].push_back(Seconds(a, b));
      }
    }
    double seconds[2];
    for (int p = 0; p < 2; ++p) {
      std::sort(times[p].begin(), times[p].end());
      seconds[p] = times[p][times[p].size() / 2];
    }
    bool same = true;
    for (int64_t j = 0; j < loop.num_outputs(); ++j) {
      same = same && std::memcmp(outputs[0][j], outputs[1][j], loop.output_size(j)) == 0;
    }
    if (!same) {
      std::fprintf(stderr, "%s: tiled and loop results differ\n", c.name);
      status = 1;
    }
    const std::string strategy = programs[1]->report().strategies.empty()
                                      ? std::string("?")
                                      : programs[1]->report().strategies.back();
    std::printf("| %s (%s) | %.2f ms | %.2f ms | %.2fx | %.1f | %.1f |\n", c.name,
                strategy.c_str(), seconds[1] * 1e3, seconds[0] * 1e3, seconds[0] / seconds[1],
                bytes / seconds[1] * 1e-9, bytes / seconds[0] * 1e-9);
  }
  std::printf("(median of %d runs after a warm-up, %d threads; GB/s counts input and output "
              "bytes once each)\n",
              runs, pool.num_threads());
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [--threads=N] [--runs=N]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  if (path == "--onednn") {
    int threads = 0, runs = 10;
    for (int i = 2; i < argc; ++i) {
      if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
      if (std::strncmp(argv[i], "--runs=", 7) == 0) runs = std::max(1, std::atoi(argv[i] + 7));
    }
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, -1);
    return RunLibraryComparison(threads, runs);
  }
  if (path == "--transpose") {
    int threads = 0, runs = 10;
    std::string only;  // --case=TEXT: only cases whose name contains TEXT.
    for (int i = 2; i < argc; ++i) {
      if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
      if (std::strncmp(argv[i], "--runs=", 7) == 0) runs = std::max(1, std::atoi(argv[i] + 7));
      if (std::strncmp(argv[i], "--case=", 7) == 0) only = argv[i] + 7;
    }
    return RunTransposeComparison(threads, runs, only);
  }
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
