// Shared pieces of the gpu_bench binary (bench/gpu_bench_main.cc): options,
// compiling a module for the GPU, pattern arguments, tolerances and JSON
// helpers, plus the entry points of the kernel modes (--bandwidth, --gemm)
// that live in bench/gpu_bench_kernels.cc. Internal to bench/.
#ifndef HLOC_BENCH_GPU_BENCH_H_
#define HLOC_BENCH_GPU_BENCH_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backend/gpu/gpu_compiler.h"
#include "hlo/evaluator/compare.h"
#include "runtime/cuda/cuda_device.h"

namespace hloc {
namespace gpu_bench {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start);
double Median(std::vector<double> v);
std::string JsonString(absl::string_view s);

// ---------------------------------------------------------------- options

struct Options {
  std::vector<std::string> files;
  bool bandwidth = false, gemm = false, dry_run = false;
  int repeats = 0;        // 0: as many as --min-time allows (at least 5).
  double min_time = 0.3;  // Seconds of timed runs per measurement.
  bool tf32 = false;      // f32 dots of DEFAULT precision may use TF32.
  bool graph = true;
  bool verify = true;
  bool quick = false;
  bool plan = false;
  bool library_only = false;  // No generated alternatives of library calls.
  int log2_elements = 26;
  bool cupti = true;      // Model mode: CUPTI device time (bench/cupti_trace.h).
  int trace_steps = 30;   // Steps traced with CUPTI (gpu_vs_xla.py traces as many XLA calls).
  uint64_t seed = 1;
};

// How many timed samples: --repeats exactly, else at least 5 and until
// `budget` seconds have passed (at most 10000).
bool MoreSamples(const Options& o, size_t taken, Clock::time_point start, double budget);

// ------------------------------------------------------------ compiling

struct Compiled {
  std::unique_ptr<gpu::GpuProgram> program;
  double pipeline_s = 0, codegen_s = 0;
};

// OptimizeForGpu + CompileForGpu for `target`. `assume_libraries` plans
// cuBLASLt/cuDNN calls without loading the libraries (dry runs).
absl::StatusOr<Compiled> Compile(const HloModule& module, const gpu::GpuTarget& target, bool tf32,
                                 bool assume_libraries, bool library_only = false);

// The compile-time and kernel-count fields of a JSON line.
std::string ReportFields(const Compiled& c);

// Deterministic arguments for the module's parameters (values k/64).
absl::StatusOr<std::vector<Literal>> PatternArguments(const HloModule& module, uint64_t seed);

// Tolerance of GPU results against the interpreter's.
Tolerance GpuTolerance(PrimitiveType type, bool tf32);

// ------------------------------------------------------------ kernel modes
// (bench/gpu_bench_kernels.cc)

// --bandwidth: one module per case; `text(n)` is its HLO for n elements.
struct BandwidthCase {
  const char* name;
  std::function<std::string(int64_t n)> text;  // n: elements of the big arrays.
};
std::vector<BandwidthCase> BandwidthCases();
int RunBandwidth(const Options& o, cuda::CudaDevice* device);

// --gemm: one dot per case, against cuBLAS called directly.
struct GemmCase {
  std::string name;  // Set by GemmCases from the fields.
  const char* type;  // HLO element type of inputs and output.
  int64_t batch, m, n, k;
  bool bias_relu;
  bool tf32;
};
std::vector<GemmCase> GemmCases(bool quick);
std::string GemmText(const GemmCase& g);
int RunGemms(const Options& o, cuda::CudaDevice* device);

}  // namespace gpu_bench
}  // namespace hloc

#endif  // HLOC_BENCH_GPU_BENCH_H_
