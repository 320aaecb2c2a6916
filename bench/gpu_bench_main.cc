// Times hloc's CUDA backend on a GPU and prints one JSON line per
// measurement, for bench/gpu_vs_xla.py (which adds XLA through JAX):
//
//   gpu_bench FILE... [--repeats N | --min-time S] [--tf32] [--no-graph]
//                     [--no-verify] [--seed N] [--plan] [--library-only]
//                     [--trace-steps N | --no-cupti]
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
// copied in, graph captured and replayed), and then timed with the
// arguments staying in place, one measure after the other:
//   median_us  one run between two CUDA events (graph launch included)
//   loop_us    a run's share of back-to-back runs between two events (what
//              a caller that does not wait for each result sees)
//   wall_us    host clock around one run plus the wait for the device
//              (GpuExecutable::RunInPlace): call to results ready, as
//              gpu_vs_xla.py times f(*args).block_until_ready() for XLA
//   cupti_us   device time from CUPTI's activity trace of --trace-steps
//              runs, each followed by a wait: per run, first start to last
//              end of its kernels, memcpys and memsets; the median (exactly
//              how gpu_vs_xla.py reads XLA's device time from JAX's
//              profiler; bench/cupti_trace.h). Without libcupti, or when
//              tracing fails, "cupti_error" says why instead.
// All are medians. The result of one run is compared with the interpreter
// (hlo/evaluator) unless the module is too big for it, and with the
// snapshot's recorded result.
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
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"
#include "bench/cupti_trace.h"
#include "bench/gpu_bench.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/loader.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser.h"
#include "runtime/cuda/cuda_device.h"

namespace hloc {
namespace gpu_bench {

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

const char kUsage[] =
    "usage: gpu_bench FILE... [--repeats N | --min-time S] [--tf32] [--no-graph] [--no-verify]\n"
    "                 [--seed N] [--plan] [--library-only] [--trace-steps N | --no-cupti]\n"
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
        {"--bandwidth", &o->bandwidth, true},       {"--gemm", &o->gemm, true},
        {"--dry-run", &o->dry_run, true},           {"--tf32", &o->tf32, true},
        {"--no-graph", &o->graph, false},           {"--no-verify", &o->verify, false},
        {"--quick", &o->quick, true},               {"--plan", &o->plan, true},
        {"--library-only", &o->library_only, true}, {"--no-cupti", &o->cupti, false}};
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
    } else if (arg == "--trace-steps") {
      if (!take()) return false;
      o->trace_steps = std::max(1, std::atoi(value.c_str()));
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

// OptimizeForGpu + CompileForGpu for `target`. `assume_libraries` plans
// cuBLASLt/cuDNN calls without loading the libraries (dry runs).
absl::StatusOr<Compiled> Compile(const HloModule& module, const gpu::GpuTarget& target, bool tf32,
                                 bool assume_libraries, bool library_only) {
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

// Host time of RunInPlace (one run plus the wait), microseconds: median
// over samples for half of --min-time (at least 5).
absl::StatusOr<std::pair<double, int>> TimeWall(cuda::GpuExecutable& executable, const Options& o) {
  std::vector<double> wall;
  const Clock::time_point start = Clock::now();
  while (MoreSamples(o, wall.size(), start, o.min_time / 2)) {
    const Clock::time_point a = Clock::now();
    HLOC_RETURN_IF_ERROR(executable.RunInPlace());
    wall.push_back(Since(a) * 1e6);
  }
  return std::make_pair(Median(wall), static_cast<int>(wall.size()));
}

// The CUPTI fields of a model's JSON line (bench/cupti_trace.h).
std::string CuptiFields(CuptiTracer* tracer, const std::string& unavailable,
                        cuda::GpuExecutable& executable, const Options& o) {
  if (tracer == nullptr) return absl::StrCat(", \"cupti_error\": ", JsonString(unavailable));
  absl::StatusOr<StepTraceSummary> trace =
      tracer->TraceSteps(o.trace_steps, [&] { return executable.RunInPlace(); });
  if (!trace.ok()) {
    // Where no record came at all, say whether the runs were graph replays
    // (captured before tracing began), the first thing to suspect.
    const std::string hint =
        absl::IsNotFound(trace.status()) && executable.uses_graph()
            ? " (runs were CUDA graph replays, the graph captured before tracing began)"
            : "";
    return absl::StrCat(", \"cupti_error\": ", JsonString(trace.status().ToString() + hint));
  }
  return absl::StrCat(", \"cupti_us\": ", trace->span_us, ", \"cupti_busy_us\": ", trace->busy_us,
                      ", \"cupti_activities\": ", trace->activities,
                      ", \"cupti_kernels\": ", trace->kernels,
                      ", \"cupti_steps\": ", trace->steps_with_work,
                      ", \"cupti_library\": ", JsonString(tracer->Describe()));
}

// Everything after "{"model": ..., " for one file. `tracer` is null when
// CUPTI is unavailable (`cupti_unavailable` says why).
absl::StatusOr<std::string> BenchModel(const std::string& path, const Options& o,
                                       cuda::CudaDevice* device, CuptiTracer* tracer,
                                       const std::string& cupti_unavailable) {
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
  HLOC_ASSIGN_OR_RETURN(auto wall, TimeWall(executable, o));
  absl::StrAppend(&json, ", \"median_us\": ", t.median_us, ", \"min_us\": ", t.min_us,
                  ", \"runs\": ", t.runs, ", \"wall_us\": ", wall.first,
                  ", \"wall_runs\": ", wall.second,
                  CuptiFields(tracer, cupti_unavailable, executable, o),
                  ", \"loop_us\": ", t.loop_us, ", \"loop_runs\": ", t.loop_runs,
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
    // XLA's result (XLA:CPU's for tests/jax/zoo, XLA:GPU's for the real-size
    // zoo made on the GPU): beside the interpreter's, or alone when the
    // module is too big for the interpreter.
    const ComparisonReport same = CompareLiterals(*recorded, result, tolerance);
    absl::StrAppend(&json, ", \"matches_recorded\": ", same.ok ? "true" : "false",
                    ", \"recorded_max_abs_error\": ", same.max_abs_error);
    if (!same.ok) {
      absl::StrAppend(&json,
                      ", \"recorded_mismatch\": ", JsonString(same.ToString().substr(0, 300)));
    }
  }
  return json;
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
    std::unique_ptr<CuptiTracer> tracer;
    std::string cupti_unavailable = "--no-cupti";
    if (o.cupti) {
      absl::StatusOr<std::unique_ptr<CuptiTracer>> opened = CuptiTracer::Open();
      if (opened.ok()) {
        tracer = *std::move(opened);
        std::fprintf(stderr, "CUPTI: %s\n", tracer->Describe().c_str());
      } else {
        cupti_unavailable = opened.status().ToString();
        std::fprintf(stderr, "CUPTI unavailable: %s\n", cupti_unavailable.c_str());
      }
    }
    for (const std::string& path : o.files) {
      absl::StatusOr<std::string> line =
          BenchModel(path, o, device->get(), tracer.get(), cupti_unavailable);
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

}  // namespace gpu_bench
}  // namespace hloc

int main(int argc, char** argv) { return hloc::gpu_bench::Main(argc, argv); }
