// Times hloc's CUDA backend on a GPU and prints one JSON line per
// measurement, for bench/gpu_vs_xla.py (which adds XLA through JAX):
//
//   gpu_bench FILE... [--repeats N | --min-time S] [--tf32] [--no-graph]
//                     [--no-verify] [--seed N] [--plan] [--library-only]
//   gpu_bench --bandwidth [--log2-elements N] [--repeats N | --min-time S]
//   gpu_bench --gemm [--quick] [--repeats N | --min-time S]
//   gpu_bench --dry-run [FILE...] [--bandwidth] [--gemm]
//                                   compiles for sm_90, no device needed:
//                                   the FILEs / those modes' modules, or
//                                   every bench module when none is named
//
// Model mode: FILE is an HloSnapshot (*.snapshot.pb: its recorded arguments)
// or any module file hloc reads (arguments from --seed). The module goes
// through OptimizeForGpu and CompileForGpu for the device (compile_s is
// both), is loaded with CUDA graphs on, run twice through Execute (arguments
// copied in, graph captured and replayed), and then only the device work is
// timed, arguments staying in place: median_us is one run between two
// events, loop_us a run's share of back-to-back runs between two events
// (what a caller that does not wait for each result sees). The result of
// one run is compared with the interpreter (hlo/evaluator) unless the
// module is too big for it, and with the snapshot's recorded result.
//
// --bandwidth: large fused elementwise, broadcast, reduction and transpose
// modules through hloc vs cuMemcpyDtoD of the same traffic (bytes read +
// bytes written). --gemm: dots through hloc (cuBLASLt plans) vs cuBLAS
// called directly (cublasGemmEx, same data, same stream, the compute type
// hloc's plan uses); TFLOP/s and ratios.
//
// Without a usable GPU every mode prints "SKIPPED: no GPU: <reason>" on
// stderr, a {"skipped": ...} line on stdout, and exits 0. Errors are
// statuses naming what failed, never crashes; one failing model gives an
// {"error": ...} line and exit status 1 after the others ran.
#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"
#include "hlo/shape_util.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/loader.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/dynamic_library.h"

namespace hloc {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  }
  return out + "\"";
}

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
  uint64_t seed = 1;
};

const char kUsage[] =
    "usage: gpu_bench FILE... [--repeats N | --min-time S] [--tf32] [--no-graph] [--no-verify]\n"
    "                 [--seed N] [--plan] [--library-only]\n"
    "       gpu_bench --bandwidth [--log2-elements N] [--repeats N | --min-time S]\n"
    "       gpu_bench --gemm [--quick] [--repeats N | --min-time S]\n"
    "       gpu_bench --dry-run [FILE...] [--bandwidth] [--gemm]   (compile for sm_90, no GPU;\n"
    "                 nothing named: every bench module)\n";

// Flags take values as --name=V or --name V.
bool ParseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    auto take = [&]() -> bool {
      if (!value.empty()) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    struct Switch {
      const char* name;
      bool* target;
      bool value;
    };
    const Switch switches[] = {
        {"--bandwidth", &o->bandwidth, true}, {"--gemm", &o->gemm, true},
        {"--dry-run", &o->dry_run, true},     {"--tf32", &o->tf32, true},
        {"--no-graph", &o->graph, false},     {"--no-verify", &o->verify, false},
        {"--quick", &o->quick, true},         {"--plan", &o->plan, true},
        {"--library-only", &o->library_only, true}};
    const Switch* matched = nullptr;
    for (const Switch& s : switches) {
      if (arg == s.name) matched = &s;
    }
    if (matched != nullptr) {
      *matched->target = matched->value;
    } else if (arg == "--repeats" || arg == "--repeat") {
      if (!take()) return false;
      o->repeats = std::max(1, std::atoi(value.c_str()));
    } else if (arg == "--min-time") {
      if (!take()) return false;
      o->min_time = std::atof(value.c_str());
    } else if (arg == "--seed") {
      if (!take()) return false;
      o->seed = std::strtoull(value.c_str(), nullptr, 10);
    } else if (arg == "--log2-elements") {
      if (!take()) return false;
      o->log2_elements = std::min(30, std::max(16, std::atoi(value.c_str())));
    } else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "unknown flag %s\n", arg.c_str());
      return false;
    } else {
      o->files.push_back(arg);
    }
  }
  if (!o->dry_run && o->bandwidth && o->gemm) return false;  // One mode per run.
  return o->dry_run || o->bandwidth || o->gemm || !o->files.empty();
}

// How many timed samples: --repeats exactly, else at least 5 and until
// `budget` seconds have passed (at most 10000).
bool MoreSamples(const Options& o, size_t taken, Clock::time_point start, double budget) {
  if (o.repeats > 0) return static_cast<int>(taken) < o.repeats;
  return taken < 5 || (Since(start) < budget && taken < 10000);
}

// ------------------------------------------------------------ compiling

struct Compiled {
  std::unique_ptr<gpu::GpuProgram> program;
  double pipeline_s = 0, codegen_s = 0;
};

// OptimizeForGpu + CompileForGpu for `target`. `assume_libraries` plans
// cuBLASLt/cuDNN calls without loading the libraries (dry runs).
absl::StatusOr<Compiled> Compile(const HloModule& module, const gpu::GpuTarget& target, bool tf32,
                                 bool assume_libraries, bool library_only = false) {
  Compiled c;
  Clock::time_point start = Clock::now();
  std::unique_ptr<HloModule> optimized = module.Clone();
  gpu::GpuPipelineOptions pipeline;
  pipeline.library.allow_tf32 = tf32;
  gpu::GpuProgramOptions options;
  options.codegen.target = target;
  options.library.allow_tf32 = tf32;
  options.library.try_generated = !library_only;
  if (assume_libraries) {
    pipeline.cublaslt = pipeline.cudnn = gpu::LibraryUse::kAvailable;
    options.cublaslt = options.cudnn = gpu::LibraryUse::kAvailable;
  }
  HLOC_RETURN_IF_ERROR(gpu::OptimizeForGpu(*optimized, pipeline).status());
  c.pipeline_s = Since(start);
  start = Clock::now();
  HLOC_ASSIGN_OR_RETURN(c.program, gpu::CompileForGpu(*optimized, options));
  c.codegen_s = Since(start);
  return c;
}

std::string ReportFields(const Compiled& c) {
  const gpu::GpuCompileReport& r = c.program->report();
  return absl::StrCat("\"compile_s\": ", c.pipeline_s + c.codegen_s,
                      ", \"pipeline_s\": ", c.pipeline_s, ", \"codegen_s\": ", c.codegen_s,
                      ", \"kernels\": ", r.kernels, ", \"fused_kernels\": ", r.fused_kernels,
                      ", \"library_calls\": ", r.library_calls,
                      ", \"inlined_library_calls\": ", r.inlined_library_calls);
}

// Deterministic values k/64, |k| <= 64: exact in every float type, so
// bf16/f16 inputs hold the same numbers as the f32 references.
void FillPattern(Literal* literal, uint64_t seed) {
  if (literal->shape().IsTuple()) {
    for (Literal& e : *literal->mutable_tuple_elements()) FillPattern(&e, ++seed);
    return;
  }
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&x]() {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<int>((x >> 33) % 129) - 64) / 64.0f;
  };
  const int64_t n = literal->element_count();
  switch (literal->shape().element_type()) {
    case xla::F32: {
      float* p = reinterpret_cast<float*>(literal->mutable_raw());
      for (int64_t i = 0; i < n; ++i) p[i] = next();
      break;
    }
    case xla::BF16: {  // The top half of the f32 bits (exact for k/64).
      uint16_t* p = reinterpret_cast<uint16_t*>(literal->mutable_raw());
      for (int64_t i = 0; i < n; ++i) {
        const float v = next();
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        p[i] = static_cast<uint16_t>(bits >> 16);
      }
      break;
    }
    default:
      for (int64_t i = 0; i < n; ++i) literal->SetFromDouble(i, next());
  }
}

absl::StatusOr<std::vector<Literal>> PatternArguments(const HloModule& module, uint64_t seed) {
  std::vector<Literal> arguments;
  const HloComputation* entry = module.entry();
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    HLOC_ASSIGN_OR_RETURN(Literal literal, Literal::Create(entry->parameter(p)->shape()));
    FillPattern(&literal, seed + static_cast<uint64_t>(p) * 7919);
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

// Library summation orders, TF32 and GPU math functions differ from the
// interpreter's (as in backend/gpu/gpu_device_test.cc).
Tolerance GpuTolerance(PrimitiveType type, bool tf32) {
  if (type == xla::BF16) return Tolerance{3e-2, 3e-2};
  if (type == xla::F16) return Tolerance{5e-3, 5e-3};
  if (tf32) return Tolerance{2e-2, 2e-2};
  return Tolerance{2e-4, 2e-5};
}

// A rough count of the interpreter's work: elements of every instruction,
// plus output elements times the second operand's elements for dots and
// convolutions (an upper bound of their multiply-adds).
double InterpreterWork(const HloModule& module) {
  double work = 0;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* instr : c->instructions()) {
      const double out = static_cast<double>(instr->shape().CheckedElementCount().value_or(1));
      work += out;
      if ((instr->opcode() == HloOpcode::kDot || instr->opcode() == HloOpcode::kConvolution) &&
          instr->operand_count() > 1) {
        work +=
            out * static_cast<double>(instr->operand(1)->shape().CheckedElementCount().value_or(1));
      }
    }
  }
  return work;
}

// sum_i (i + 1) * byte_i mod 2^64 of the literal's bytes: bench/gpu_vs_xla.py
// computes the same from numpy arrays to check both sides use equal inputs.
std::string Checksum(const Literal& literal) {
  if (literal.shape().IsTuple()) return "\"tuple\"";
  uint64_t sum = 0;
  const uint8_t* p = literal.raw();
  for (int64_t i = 0; i < literal.size_bytes(); ++i) sum += static_cast<uint64_t>(i + 1) * p[i];
  return absl::StrCat("\"", sum, "\"");
}

// ------------------------------------------------------------ model mode

struct RunTimes {
  double median_us = 0, min_us = 0, loop_us = 0;
  int runs = 0, loop_runs = 0;
};

// Single runs between events, then loops of back-to-back runs long enough
// (about a millisecond) that the event overhead does not count.
absl::StatusOr<RunTimes> TimeExecutable(cuda::GpuExecutable& executable, const Options& o) {
  RunTimes t;
  std::vector<double> single, loop;
  Clock::time_point start = Clock::now();
  while (MoreSamples(o, single.size(), start, o.min_time / 2)) {
    HLOC_ASSIGN_OR_RETURN(double ms, executable.TimeRun());
    single.push_back(ms * 1e3);
  }
  t.median_us = Median(single);
  t.min_us = *std::min_element(single.begin(), single.end());
  t.runs = static_cast<int>(single.size());
  t.loop_runs = static_cast<int>(std::min(1000.0, std::max(1.0, std::ceil(1000.0 / t.median_us))));
  start = Clock::now();
  Options loops = o;
  if (o.repeats > 0) loops.repeats = std::max(3, o.repeats / 10);
  while (MoreSamples(loops, loop.size(), start, o.min_time / 2)) {
    HLOC_ASSIGN_OR_RETURN(double ms, executable.TimeRuns(t.loop_runs));
    loop.push_back(ms * 1e3 / t.loop_runs);
  }
  t.loop_us = Median(loop);
  return t;
}

std::string ModelName(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  for (const char* suffix : {".snapshot.pb", ".before.pb", ".pb", ".hlo", ".txt"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      return name.substr(0, name.size() - s.size());
    }
  }
  return name;
}

bool IsSnapshot(const std::string& path) {
  const std::string s = ".snapshot.pb";
  return path.size() > s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
}

// Everything after "{"model": ..., " for one file.
absl::StatusOr<std::string> BenchModel(const std::string& path, const Options& o,
                                       cuda::CudaDevice* device) {
  std::unique_ptr<HloModule> module;
  std::vector<Literal> arguments;
  std::optional<Literal> recorded;
  if (IsSnapshot(path)) {
    HLOC_ASSIGN_OR_RETURN(LoadedSnapshot snapshot, LoadSnapshotFromFile(path));
    module = std::move(snapshot.module);
    arguments = std::move(snapshot.arguments);
    recorded = std::move(snapshot.result);
  } else {
    HLOC_ASSIGN_OR_RETURN(module, LoadModuleFromFile(path));
    HLOC_ASSIGN_OR_RETURN(arguments, MakeRandomArguments(*module, o.seed));
  }
  HLOC_ASSIGN_OR_RETURN(Compiled c, Compile(*module, gpu::TargetForDevice(device->info()), o.tf32,
                                            /*assume_libraries=*/false, o.library_only));
  std::string json = ReportFields(c);
  const Clock::time_point load_start = Clock::now();
  cuda::GpuLoadOptions load;
  load.use_cuda_graph = o.graph;
  HLOC_RETURN_IF_ERROR(c.program->Load(device, load));
  // After Load: the plan then shows each library-or-generated choice.
  if (o.plan) std::fprintf(stderr, "%s\n", c.program->PlanToString().c_str());
  absl::StrAppend(&json, ", \"load_s\": ", Since(load_start));
  // The first run copies the arguments in and captures the graph; the
  // second replays it. Both leave the arguments on the device.
  HLOC_ASSIGN_OR_RETURN(Literal result, c.program->Execute(arguments));
  HLOC_ASSIGN_OR_RETURN(result, c.program->Execute(arguments));
  cuda::GpuExecutable& executable = c.program->executable();
  HLOC_ASSIGN_OR_RETURN(RunTimes t, TimeExecutable(executable, o));
  absl::StrAppend(&json, ", \"median_us\": ", t.median_us, ", \"min_us\": ", t.min_us,
                  ", \"runs\": ", t.runs, ", \"loop_us\": ", t.loop_us,
                  ", \"loop_runs\": ", t.loop_runs,
                  ", \"graph\": ", executable.uses_graph() ? "true" : "false",
                  ", \"device_bytes\": ", executable.device_bytes());
  for (const std::string& line : executable.load_log()) {
    if (line.find("graph capture failed") != std::string::npos) {
      absl::StrAppend(&json, ", \"graph_note\": ", JsonString(line));
    }
  }
  std::string sums;
  for (const Literal& a : arguments) absl::StrAppend(&sums, sums.empty() ? "" : ", ", Checksum(a));
  absl::StrAppend(&json, ", \"arg_checksums\": [", sums, "]");

  const Tolerance tolerance = GpuTolerance(FirstArrayType(result.shape()), o.tf32);
  const double work = InterpreterWork(*module);
  if (!o.verify) {
    absl::StrAppend(&json, ", \"verified\": \"skipped: --no-verify\"");
  } else if (work > 2e10) {
    absl::StrAppend(&json, ", \"verified\": \"skipped: too big for the interpreter (work ~", work,
                    ")\"");
  } else {
    const Clock::time_point start = Clock::now();
    absl::StatusOr<Literal> expected = Evaluate(*module, arguments);
    if (!expected.ok()) {
      absl::StrAppend(
          &json, ", \"verified\": ",
          JsonString(absl::StrCat("skipped: interpreter: ", expected.status().message())));
    } else {
      ComparisonReport report = CompareLiterals(*expected, result, tolerance);
      absl::StrAppend(&json, ", \"verified\": ",
                      JsonString(report.ok ? "ok" : absl::StrCat("MISMATCH: ", report.ToString())),
                      ", \"max_abs_error\": ", report.max_abs_error);
    }
    absl::StrAppend(&json, ", \"verify_s\": ", Since(start));
  }
  if (recorded.has_value()) {
    // XLA:CPU's result; a sanity check beside the interpreter's.
    const bool same = CompareLiterals(*recorded, result, tolerance).ok;
    absl::StrAppend(&json, ", \"matches_recorded\": ", same ? "true" : "false");
  }
  return json;
}

// ------------------------------------------------------------ bandwidth

struct BandwidthCase {
  const char* name;
  std::function<std::string(int64_t n)> text;  // n: elements of the big arrays.
};

std::vector<BandwidthCase> BandwidthCases() {
  const char* add =
      "add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n"
      " ROOT s = f32[] add(x, y) }\n";
  return {
      {"fma f32 a*b+c",
       [](int64_t n) {
         return absl::StrCat("HloModule fma\nENTRY main {\n a = f32[", n,
                             "] parameter(0)\n b = f32[", n, "] parameter(1)\n c = f32[", n,
                             "] parameter(2)\n m = f32[", n, "] multiply(a, b)\n ROOT r = f32[", n,
                             "] add(m, c)\n}\n");
       }},
      {"exp(a)*b f32",
       [](int64_t n) {
         return absl::StrCat("HloModule exp_mul\nENTRY main {\n a = f32[", n,
                             "] parameter(0)\n b = f32[", n, "] parameter(1)\n e = f32[", n,
                             "] exponential(a)\n ROOT r = f32[", n, "] multiply(e, b)\n}\n");
       }},
      {"bf16 convert chain",
       [](int64_t n) {
         return absl::StrCat("HloModule convert_chain\nENTRY main {\n a = f32[", n,
                             "] parameter(0)\n h = bf16[", n, "] convert(a)\n f = f32[", n,
                             "] convert(h)\n m = f32[", n, "] multiply(f, a)\n ROOT r = bf16[", n,
                             "] convert(m)\n}\n");
       }},
      {"broadcast-add row f32[n/1024,1024]",
       [](int64_t n) {
         const int64_t rows = n / 1024;
         return absl::StrCat("HloModule row_bias\nENTRY main {\n x = f32[", rows,
                             ",1024] parameter(0)\n b = f32[1024] parameter(1)\n bb = f32[", rows,
                             ",1024] broadcast(b), dimensions={1}\n ROOT r = f32[", rows,
                             ",1024] add(x, bb)\n}\n");
       }},
      {"row reduce f32[n/1024,1024]->[n/1024]",
       [add](int64_t n) {
         const int64_t rows = n / 1024;
         return absl::StrCat("HloModule row_reduce\n", add, "ENTRY main {\n x = f32[", rows,
                             ",1024] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[", rows,
                             "] reduce(x, z), dimensions={1}, to_apply=add\n}\n");
       }},
      {"column reduce f32[1024,n/1024]->[n/1024]",
       [add](int64_t n) {
         const int64_t cols = n / 1024;
         return absl::StrCat("HloModule column_reduce\n", add, "ENTRY main {\n x = f32[1024,", cols,
                             "] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[", cols,
                             "] reduce(x, z), dimensions={0}, to_apply=add\n}\n");
       }},
      {"transpose f32[n/4096,4096]",
       [](int64_t n) {
         const int64_t rows = n / 4096;
         return absl::StrCat("HloModule transpose\nENTRY main {\n x = f32[", rows,
                             ",4096] parameter(0)\n ROOT t = f32[4096,", rows,
                             "] transpose(x), dimensions={1,0}\n}\n");
       }},
  };
}

// Milliseconds per operation: median over samples of `per_sample`
// back-to-back operations between two events.
absl::StatusOr<double> TimeLoops(const Options& o, int per_sample,
                                 const std::function<absl::StatusOr<double>()>& sample) {
  std::vector<double> ms;
  const Clock::time_point start = Clock::now();
  while (MoreSamples(o, ms.size(), start, o.min_time)) {
    HLOC_ASSIGN_OR_RETURN(double t, sample());
    ms.push_back(t / per_sample);
  }
  return Median(ms);
}

// A small instance of the same module, run and compared with the
// interpreter (the big one would take the interpreter too long).
std::string VerifySmall(const std::string& text, cuda::CudaDevice* device) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) return absl::StrCat("parse: ", module.status().message());
  absl::StatusOr<std::vector<Literal>> args = PatternArguments(**module, 5);
  if (!args.ok()) return std::string(args.status().message());
  absl::StatusOr<Compiled> c =
      Compile(**module, gpu::TargetForDevice(device->info()), false, false);
  if (!c.ok()) return absl::StrCat("compile: ", c.status().message());
  absl::Status loaded = c->program->Load(device);
  if (!loaded.ok()) return absl::StrCat("load: ", loaded.message());
  absl::StatusOr<Literal> actual = c->program->Execute(*args);
  if (!actual.ok()) return absl::StrCat("run: ", actual.status().message());
  absl::StatusOr<Literal> expected = Evaluate(**module, *args);
  if (!expected.ok()) return absl::StrCat("interpreter: ", expected.status().message());
  ComparisonReport r =
      CompareLiterals(*expected, *actual, GpuTolerance(FirstArrayType(expected->shape()), false));
  return r.ok ? "ok" : absl::StrCat("MISMATCH: ", r.ToString());
}

int RunBandwidth(const Options& o, cuda::CudaDevice* device) {
  const int64_t n = int64_t{1} << o.log2_elements;
  int failures = 0;
  CUdeviceptr copy_src = 0, copy_dst = 0;
  int64_t copy_capacity = 0;
  for (const BandwidthCase& bc : BandwidthCases()) {
    absl::StatusOr<std::string> line = [&]() -> absl::StatusOr<std::string> {
      HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(bc.text(n)));
      HLOC_ASSIGN_OR_RETURN(std::vector<Literal> args, PatternArguments(*module, o.seed));
      HLOC_ASSIGN_OR_RETURN(Compiled c,
                            Compile(*module, gpu::TargetForDevice(device->info()), false, false));
      HLOC_RETURN_IF_ERROR(c.program->Load(device));
      HLOC_RETURN_IF_ERROR(c.program->Execute(args).status());
      cuda::GpuExecutable& e = c.program->executable();
      int64_t bytes = 0;
      for (int64_t i = 0; i < e.num_parameters(); ++i) bytes += e.parameter_size(i);
      for (int64_t j = 0; j < e.num_outputs(); ++j) bytes += e.output_size(j);
      constexpr int kPerSample = 10;
      HLOC_ASSIGN_OR_RETURN(double ms,
                            TimeLoops(o, kPerSample, [&] { return e.TimeRuns(kPerSample); }));
      // The copy moves bytes/2 so that it reads and writes as many bytes.
      const int64_t half = (bytes / 2 + 255) / 256 * 256;
      if (half > copy_capacity) {
        if (copy_src != 0) HLOC_RETURN_IF_ERROR(device->Free(copy_src));
        if (copy_dst != 0) HLOC_RETURN_IF_ERROR(device->Free(copy_dst));
        copy_src = copy_dst = 0;
        HLOC_ASSIGN_OR_RETURN(copy_src, device->Allocate(half));
        HLOC_ASSIGN_OR_RETURN(copy_dst, device->Allocate(half));
        HLOC_RETURN_IF_ERROR(device->Memset(copy_src, 0, half));
        copy_capacity = half;
      }
      HLOC_ASSIGN_OR_RETURN(
          double copy_ms, TimeLoops(o, kPerSample, [&] {
            return device->TimeOnStream([&]() -> absl::Status {
              for (int i = 0; i < kPerSample; ++i) {
                HLOC_RETURN_IF_ERROR(device->CopyOnDevice(copy_dst, copy_src, half));
              }
              return absl::OkStatus();
            });
          }));
      const double gbs = bytes / (ms * 1e-3) / 1e9;
      const double copy_gbs = 2.0 * half / (copy_ms * 1e-3) / 1e9;
      return absl::StrCat(ReportFields(c), ", \"bytes\": ", bytes, ", \"median_us\": ", ms * 1e3,
                          ", \"gb_s\": ", gbs, ", \"copy_us\": ", copy_ms * 1e3,
                          ", \"copy_gb_s\": ", copy_gbs, ", \"ratio_to_copy\": ", gbs / copy_gbs,
                          ", \"verified\": ", JsonString(VerifySmall(bc.text(1 << 16), device)));
    }();
    if (line.ok()) {
      std::printf("{\"bandwidth\": %s, \"elements\": %lld, %s}\n", JsonString(bc.name).c_str(),
                  static_cast<long long>(n), line->c_str());
    } else {
      ++failures;
      std::printf("{\"bandwidth\": %s, \"error\": %s}\n", JsonString(bc.name).c_str(),
                  JsonString(line.status().ToString()).c_str());
    }
    std::fflush(stdout);
  }
  if (copy_src != 0) device->Free(copy_src).IgnoreError();
  if (copy_dst != 0) device->Free(copy_dst).IgnoreError();
  return failures == 0 ? 0 : 1;
}

// ------------------------------------------------------------ gemm

struct GemmCase {
  std::string name;  // Set by GemmCases from the fields.
  const char* type;  // HLO element type of inputs and output.
  int64_t batch, m, n, k;
  bool bias_relu;
  bool tf32;
};

std::vector<GemmCase> GemmCases(bool quick) {
  std::vector<GemmCase> cases = {
      {"", "f32", 1, 1024, 1024, 1024, false, false},
      {"", "f32", 1, 4096, 4096, 4096, false, false},
      {"", "f32", 1, 4096, 4096, 4096, false, true},
      {"", "bf16", 1, 1024, 1024, 1024, false, false},
      {"", "bf16", 1, 4096, 4096, 4096, false, false},
      {"", "f16", 1, 1024, 1024, 1024, false, false},
      {"", "f16", 1, 4096, 4096, 4096, false, false},
      {"", "bf16", 32, 1024, 1024, 1024, false, false},
      {"", "bf16", 1, 4096, 4096, 4096, true, false},
  };
  for (GemmCase& c : cases) {
    if (quick) {
      c.m = std::min<int64_t>(c.m, 1024);
      c.n = std::min<int64_t>(c.n, 1024);
      c.k = std::min<int64_t>(c.k, 1024);
      c.batch = std::min<int64_t>(c.batch, 4);
    }
    // "bf16 32x 1024x1024x1024 +bias+relu": type, batch, m x n x k, extras.
    c.name = absl::StrCat(c.type, " ", c.batch > 1 ? absl::StrCat(c.batch, "x ") : "", c.m, "x",
                          c.n, "x", c.k, c.tf32 ? " tf32" : "", c.bias_relu ? " +bias+relu" : "");
  }
  return cases;
}

std::string GemmText(const GemmCase& g) {
  const std::string t = g.type;
  const std::string b = g.batch > 1 ? absl::StrCat(g.batch, ",") : "";
  const std::string out = absl::StrCat(t, "[", b, g.m, ",", g.n, "]");
  std::string text =
      absl::StrCat("HloModule gemm\nENTRY main {\n a = ", t, "[", b, g.m, ",", g.k,
                   "] parameter(0)\n w = ", t, "[", b, g.k, ",", g.n, "] parameter(1)\n");
  const std::string dims = g.batch > 1 ? "lhs_batch_dims={0}, rhs_batch_dims={0}, "
                                         "lhs_contracting_dims={2}, rhs_contracting_dims={1}"
                                       : "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  const std::string root = g.bias_relu ? "" : "ROOT ";
  absl::StrAppend(&text, " ", root, "d = ", out, " dot(a, w), ", dims, "\n");
  if (g.bias_relu) {
    absl::StrAppend(&text, " bias = ", t, "[", g.n, "] parameter(2)\n bb = ", out,
                    " broadcast(bias), dimensions={", g.batch > 1 ? 2 : 1, "}\n s = ", out,
                    " add(d, bb)\n z = ", t, "[] constant(0)\n zb = ", out,
                    " broadcast(z), dimensions={}\n ROOT r = ", out, " maximum(s, zb)\n");
  }
  return text + "}\n";
}

// cuBLAS, opened with dlopen: the baseline hloc's gemms are held against.
struct Cublas {
  std::shared_ptr<cuda::DynamicLibrary> library;
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  // Spelled out: in C++ the headers overload these two (a legacy
  // cudaDataType_t compute type), so decltype(&::cublasGemmEx) is ambiguous.
  using GemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType_t, int, const void*,
                                    cudaDataType_t, int, const void*, void*, cudaDataType_t, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
  using BatchedGemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                           int, int, int, const void*, const void*, cudaDataType_t,
                                           int, long long, const void*, cudaDataType_t, int,
                                           long long, const void*, void*, cudaDataType_t, int,
                                           long long, int, cublasComputeType_t, cublasGemmAlgo_t);
  GemmFn gemm = nullptr;
  BatchedGemmFn gemm_batched = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;
  cublasHandle_t handle = nullptr;

  static absl::StatusOr<std::unique_ptr<Cublas>> Open(CUstream stream) {
    auto c = std::make_unique<Cublas>();
    HLOC_ASSIGN_OR_RETURN(c->library, cuda::DynamicLibrary::Open(
                                          "cuBLAS not available",
                                          {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}));
    auto get = [&](auto* fn, const char* name) {
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(c->library->Symbol(name));
      return *fn != nullptr;
    };
    if (!get(&c->create, "cublasCreate_v2") || !get(&c->destroy, "cublasDestroy_v2") ||
        !get(&c->set_stream, "cublasSetStream_v2") || !get(&c->gemm, "cublasGemmEx") ||
        !get(&c->gemm_batched, "cublasGemmStridedBatchedEx") ||
        !get(&c->status_string, "cublasGetStatusString")) {
      return absl::NotFoundError(absl::StrCat(c->library->name(), " lacks a cuBLAS function"));
    }
    HLOC_RETURN_IF_ERROR(c->Check(c->create(&c->handle), "cublasCreate"));
    HLOC_RETURN_IF_ERROR(c->Check(c->set_stream(c->handle, reinterpret_cast<cudaStream_t>(stream)),
                                  "cublasSetStream"));
    return c;
  }
  ~Cublas() {
    if (handle != nullptr) destroy(handle);
  }
  absl::Status Check(cublasStatus_t s, const char* call) const {
    if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(call, ": ", status_string ? status_string(s) : "", " (",
                                            static_cast<int>(s), ")"));
  }
};

cudaDataType_t CudaType(const std::string& type) {
  if (type == "bf16") return CUDA_R_16BF;
  if (type == "f16") return CUDA_R_16F;
  return CUDA_R_32F;
}

// The host side of the bias+relu epilogue, applied to cuBLAS's product so
// the two results can be compared.
void BiasRelu(const Literal& bias, Literal* out) {
  const int64_t n = bias.element_count();
  for (int64_t i = 0; i < out->element_count(); ++i) {
    out->SetFromDouble(i, std::max(0.0, out->GetAsDouble(i) + bias.GetAsDouble(i % n)));
  }
}

absl::StatusOr<std::string> BenchGemm(const GemmCase& g, const Options& o, cuda::CudaDevice* device,
                                      Cublas* cublas) {
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(GemmText(g)));
  HLOC_ASSIGN_OR_RETURN(std::vector<Literal> args, PatternArguments(*module, o.seed));
  HLOC_ASSIGN_OR_RETURN(Compiled c,
                        Compile(*module, gpu::TargetForDevice(device->info()), g.tf32, false));
  const gpu::GpuCompileReport& report = c.program->report();
  // The direct call uses the compute type of hloc's plan.
  bool tf32 = g.tf32 && std::string(g.type) == "f32";
  std::string plan = "no cuBLASLt call (inlined or kernels)";
  if (!report.gemms.empty()) {
    tf32 = report.gemms[0].second.compute_type() == "32F_FAST_TF32";
    plan = report.gemms[0].second.ToString();
  }
  HLOC_RETURN_IF_ERROR(c.program->Load(device));
  HLOC_ASSIGN_OR_RETURN(Literal ours, c.program->Execute(args));
  cuda::GpuExecutable& e = c.program->executable();

  const int64_t a_bytes = args[0].size_bytes(), w_bytes = args[1].size_bytes();
  const int64_t out_bytes = ours.size_bytes();
  HLOC_ASSIGN_OR_RETURN(CUdeviceptr a, device->Allocate(a_bytes));
  HLOC_ASSIGN_OR_RETURN(CUdeviceptr w, device->Allocate(w_bytes));
  HLOC_ASSIGN_OR_RETURN(CUdeviceptr d, device->Allocate(out_bytes));
  auto free_all = [&] {
    for (CUdeviceptr p : {a, w, d}) device->Free(p).IgnoreError();
  };
  absl::StatusOr<std::string> result = [&]() -> absl::StatusOr<std::string> {
    HLOC_RETURN_IF_ERROR(device->CopyToDevice(a, args[0].raw(), a_bytes));
    HLOC_RETURN_IF_ERROR(device->CopyToDevice(w, args[1].raw(), w_bytes));
    const float one = 1, zero = 0;
    const cudaDataType_t type = CudaType(g.type);
    const cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    // Row-major out = a w is column-major out^T = w^T a^T.
    auto direct = [&]() -> absl::Status {
      if (g.batch == 1) {
        return cublas->Check(
            cublas->gemm(cublas->handle, CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k, &one,
                         reinterpret_cast<const void*>(w), type, g.n,
                         reinterpret_cast<const void*>(a), type, g.k, &zero,
                         reinterpret_cast<void*>(d), type, g.n, compute, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
      }
      return cublas->Check(
          cublas->gemm_batched(cublas->handle, CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k, &one,
                               reinterpret_cast<const void*>(w), type, g.n, g.k * g.n,
                               reinterpret_cast<const void*>(a), type, g.k, g.m * g.k, &zero,
                               reinterpret_cast<void*>(d), type, g.n, g.m * g.n, g.batch, compute,
                               CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
    };
    HLOC_RETURN_IF_ERROR(direct());
    Literal theirs(ours.shape());
    HLOC_RETURN_IF_ERROR(device->CopyToHost(theirs.mutable_raw(), d, out_bytes));
    HLOC_RETURN_IF_ERROR(device->Synchronize());
    if (g.bias_relu) BiasRelu(args[2], &theirs);
    // Both sum k products of k/64 values; they differ in order and, for
    // 16-bit outputs, in the last rounding.
    const double scale = std::sqrt(static_cast<double>(g.k)) / 3;
    const bool narrow = std::string(g.type) != "f32";
    const Tolerance tolerance{narrow ? 2e-2 : (tf32 ? 1e-2 : 1e-4),
                              scale * (narrow ? 2e-2 : (tf32 ? 1e-2 : 1e-5))};
    const ComparisonReport cmp = CompareLiterals(theirs, ours, tolerance);

    const double flops = 2.0 * g.batch * g.m * g.n * g.k;
    const int per_sample = flops > 1e11 ? 5 : 20;
    // Like hloc's program, the cuBLAS call is replayed as a CUDA graph, so
    // neither side pays cuBLAS's host overhead per call (small gemms would
    // otherwise measure the host); direct calls if capture is refused.
    absl::StatusOr<CUgraphExec> graph = device->CaptureGraph(direct);
    auto baseline = [&]() -> absl::Status {
      return graph.ok() ? device->LaunchGraph(*graph) : direct();
    };
    std::vector<double> ours_ms, theirs_ms;
    const Clock::time_point start = Clock::now();
    // Interleaved so clocks and temperature drift alike for both.
    absl::Status timed = absl::OkStatus();
    while (timed.ok() && MoreSamples(o, ours_ms.size(), start, o.min_time)) {
      absl::StatusOr<double> t = e.TimeRuns(per_sample);
      if (!t.ok()) {
        timed = t.status();
        break;
      }
      absl::StatusOr<double> u = device->TimeOnStream([&]() -> absl::Status {
        for (int i = 0; i < per_sample; ++i) HLOC_RETURN_IF_ERROR(baseline());
        return absl::OkStatus();
      });
      timed = u.status();
      if (timed.ok()) {
        ours_ms.push_back(*t / per_sample);
        theirs_ms.push_back(*u / per_sample);
      }
    }
    if (graph.ok()) device->DestroyGraph(*graph);
    HLOC_RETURN_IF_ERROR(timed);
    const double ours_t = Median(ours_ms), theirs_t = Median(theirs_ms);
    const double ours_tflops = flops / (ours_t * 1e-3) / 1e12;
    const double theirs_tflops = flops / (theirs_t * 1e-3) / 1e12;
    return absl::StrCat(ReportFields(c), ", \"plan\": ", JsonString(plan), ", \"compute\": \"",
                        tf32 ? "32F_FAST_TF32" : "32F", "\", \"flops\": ", flops,
                        ", \"hloc_us\": ", ours_t * 1e3, ", \"cublas_us\": ", theirs_t * 1e3,
                        ", \"hloc_tflops\": ", ours_tflops, ", \"cublas_tflops\": ", theirs_tflops,
                        ", \"ratio\": ", ours_tflops / theirs_tflops, ", \"baseline\": \"",
                        g.bias_relu ? "cublasGemmEx without epilogue" : "cublasGemmEx",
                        graph.ok() ? " (CUDA graph)" : " (direct calls)",
                        "\", \"matches_cublas\": ", cmp.ok ? "true" : "false",
                        ", \"max_abs_error\": ", cmp.max_abs_error);
  }();
  free_all();
  return result;
}

int RunGemms(const Options& o, cuda::CudaDevice* device) {
  absl::StatusOr<std::unique_ptr<Cublas>> cublas = Cublas::Open(device->stream());
  if (!cublas.ok()) {
    std::printf("{\"gemm\": \"all\", \"error\": %s}\n",
                JsonString(cublas.status().ToString()).c_str());
    return 1;
  }
  int failures = 0;
  for (const GemmCase& g : GemmCases(o.quick)) {
    absl::StatusOr<std::string> line = BenchGemm(g, o, device, cublas->get());
    if (line.ok()) {
      std::printf("{\"gemm\": %s, \"batch\": %lld, \"m\": %lld, \"n\": %lld, \"k\": %lld, %s}\n",
                  JsonString(g.name).c_str(), static_cast<long long>(g.batch),
                  static_cast<long long>(g.m), static_cast<long long>(g.n),
                  static_cast<long long>(g.k), line->c_str());
    } else {
      ++failures;
      std::printf("{\"gemm\": %s, \"error\": %s}\n", JsonString(g.name).c_str(),
                  JsonString(line.status().ToString()).c_str());
    }
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}

// ------------------------------------------------------------ dry run

// Every bench module (and FILEs) through the pipeline and compiler for
// sm_90, kernels through ptxas when it is installed; nothing runs.
int DryRun(const Options& o) {
  const gpu::GpuTarget target = gpu::GpuTarget::ForComputeCapability(90);
  std::vector<std::pair<std::string, std::function<absl::StatusOr<std::unique_ptr<HloModule>>()>>>
      modules;
  const int64_t n = int64_t{1} << o.log2_elements;
  // FILEs alone: only them; --bandwidth / --gemm: those; nothing: all.
  const bool all = !o.bandwidth && !o.gemm && o.files.empty();
  for (const BandwidthCase& bc : BandwidthCases()) {
    if (!all && !o.bandwidth) break;
    modules.push_back(
        {absl::StrCat("bandwidth: ", bc.name), [bc, n] { return ParseHloModule(bc.text(n)); }});
  }
  for (const GemmCase& g : GemmCases(o.quick)) {
    if (!all && !o.gemm) break;
    modules.push_back(
        {absl::StrCat("gemm: ", g.name), [g] { return ParseHloModule(GemmText(g)); }});
  }
  for (const std::string& path : o.files) {
    modules.push_back({absl::StrCat("model: ", ModelName(path)),
                       [path]() -> absl::StatusOr<std::unique_ptr<HloModule>> {
                         if (!IsSnapshot(path)) return LoadModuleFromFile(path);
                         HLOC_ASSIGN_OR_RETURN(LoadedSnapshot s, LoadSnapshotFromFile(path));
                         return std::move(s.module);
                       }});
  }
  int failures = 0;
  for (const auto& entry : modules) {
    const std::string& name = entry.first;
    const bool is_gemm = name.rfind("gemm: ", 0) == 0;
    absl::StatusOr<std::string> line = [&]() -> absl::StatusOr<std::string> {
      HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, entry.second());
      // A gemm case's own precision; --tf32 for the others.
      bool tf32 = o.tf32;
      for (const GemmCase& g : GemmCases(o.quick)) {
        if (name == absl::StrCat("gemm: ", g.name)) tf32 = g.tf32;
      }
      HLOC_ASSIGN_OR_RETURN(Compiled c, Compile(*module, target, tf32, /*assume_libraries=*/true));
      if (o.plan) std::fprintf(stderr, "%s\n", c.program->PlanToString().c_str());
      const gpu::GpuCompileReport& r = c.program->report();
      if (is_gemm && r.gemms.empty()) {
        return absl::InternalError(absl::StrCat("no cuBLASLt call planned:\n", r.ToString()));
      }
      std::string plans;
      for (const auto& [call, config] : r.gemms) {
        absl::StrAppend(&plans, plans.empty() ? "" : "; ", config.ToString());
      }
      return absl::StrCat(ReportFields(c),
                          ", \"device_bytes\": ", c.program->executable().device_bytes(),
                          ", \"gemms\": ", JsonString(plans));
    }();
    if (line.ok()) {
      std::printf("{\"dry_run\": %s, \"sm\": 90, %s}\n", JsonString(name).c_str(), line->c_str());
    } else {
      ++failures;
      std::printf("{\"dry_run\": %s, \"error\": %s}\n", JsonString(name).c_str(),
                  JsonString(line.status().ToString()).c_str());
    }
    std::fflush(stdout);
  }
  std::fprintf(stderr, "dry run: %zu modules compiled for sm_90, %d failed\n", modules.size(),
               failures);
  return failures == 0 ? 0 : 1;
}

// ------------------------------------------------------------ main

int Main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, &o)) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  if (o.dry_run) return DryRun(o);
  const std::string reason = cuda::NoGpuReason();
  if (!reason.empty()) {
    std::fprintf(stderr, "no GPU: %s\nSKIPPED\n", reason.c_str());
    std::printf("{\"skipped\": %s}\n", JsonString(absl::StrCat("no GPU: ", reason)).c_str());
    return 0;
  }
  absl::StatusOr<std::unique_ptr<cuda::CudaDevice>> device = cuda::CudaDevice::Open(0);
  if (!device.ok()) {
    std::fprintf(stderr, "cannot open CUDA device 0: %s\n", device.status().ToString().c_str());
    return 1;
  }
  std::fprintf(stderr, "device: %s\n", (*device)->info().ToString().c_str());
  int status = 0;
  if (o.bandwidth) {
    status = RunBandwidth(o, device->get());
  } else if (o.gemm) {
    status = RunGemms(o, device->get());
  } else {
    for (const std::string& path : o.files) {
      absl::StatusOr<std::string> line = BenchModel(path, o, device->get());
      if (line.ok()) {
        std::printf("{\"model\": %s, %s}\n", JsonString(ModelName(path)).c_str(), line->c_str());
      } else {
        status = 1;
        std::printf("{\"model\": %s, \"error\": %s}\n", JsonString(ModelName(path)).c_str(),
                    JsonString(line.status().ToString()).c_str());
      }
      std::fflush(stdout);
    }
  }
  return status;
}

}  // namespace
}  // namespace hloc

int main(int argc, char** argv) { return hloc::Main(argc, argv); }
