// hloc run FILE: evaluate a module on arguments from a snapshot or drawn from
// a seed, print a summary of each output, optionally save the result.
#include <cstdio>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/machine_peak.h"
#include "api/profile.h"
#include "backend/common/literal_leaves.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/run_on_gpu.h"
#include "backend/gpu/run_on_gpu_devices.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/run_on_host.h"
#include "backend/host/run_on_host_devices.h"
#include "hlo/evaluator/multi_device.h"
#include "passes/sharding/per_device_module.h"
#include "passes/sharding/remove_sharding_annotations.h"
#include "passes/standard_pipelines.h"
#include "runtime/mpi/mpi_communicator.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/loader.h"
#include "hlo/status_macros.h"
#include "hlo/text_printer.h"
#include "tools/command.h"
#include "tools/custom_call_libraries.h"
#include "tools/literal_files.h"
#include "tools/module_files.h"

namespace hloc::tools {
namespace {

// The module, and arguments: from --inputs, from FILE itself when it is a
// snapshot, else random from --seed (default 0).
absl::StatusOr<LoadedSnapshot> LoadModuleAndArguments(const Args& args, bool* drawn = nullptr) {
  const std::string& path = args.positional[0];
  LoadedSnapshot run;
  bool have_arguments = false;
  if (FormatFromPath(path) == FileFormat::kProto && !args.Has("seed")) {
    absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
    if (snapshot.ok() && !snapshot->arguments.empty()) {
      run = *std::move(snapshot);
      have_arguments = true;
    }
  }
  if (!run.module) {
    HLOC_ASSIGN_OR_RETURN(run.module, LoadSingleModule(path));
  }
  // Before arguments are drawn for it or any backend looks at it.
  HLOC_RETURN_IF_ERROR(VerifyLoadedModule(*run.module, path));
  // One device: JAX's sharding annotations (with_sharding_constraint,
  // out_shardings) are identities that no backend needs to know.
  if (!args.Has("devices")) HLOC_RETURN_IF_ERROR(RemoveShardingAnnotations().Run(*run.module).status());
  if (args.Has("inputs")) {
    HLOC_ASSIGN_OR_RETURN(LoadedSnapshot inputs, LoadSnapshotFromFile(args.Get("inputs")));
    run.arguments = std::move(inputs.arguments);
    have_arguments = true;
  }
  if (!have_arguments) {
    HLOC_ASSIGN_OR_RETURN(int64_t seed, args.GetInt("seed", 0));
    HLOC_ASSIGN_OR_RETURN(run.arguments,
                          MakeRandomArguments(*run.module, static_cast<uint64_t>(seed)));
  }
  if (drawn != nullptr) *drawn = !have_arguments;
  run.result.reset();
  return run;
}

// --max-while-iterations=N (0, the default: no limit): a loop that runs longer
// is a ResourceExhausted error naming it, not a process that never ends.
absl::StatusOr<int64_t> MaxWhileIterations(const Args& args) {
  HLOC_ASSIGN_OR_RETURN(int64_t limit, args.GetInt("max-while-iterations", 0));
  if (limit < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-while-iterations=", limit, " (0 for no limit, or a positive count)"));
  }
  return limit;
}

// Compiles with the host pipeline (outlining, inlining of composites the host
// has no library for, fusion) and runs on the host backend; the module in
// `run` stays as loaded.
absl::StatusOr<Literal> RunWithHostBackend(const LoadedSnapshot& run, const Args& args) {
  std::unique_ptr<HloModule> optimized = run.module->Clone();
  if (args.Get("no-opt") != "true") {
    HLOC_RETURN_IF_ERROR(host::OptimizeForHost(*optimized).status());
  }
  RunOnHostOptions options;
  HLOC_ASSIGN_OR_RETURN(options.execute.max_while_iterations, MaxWhileIterations(args));
  HLOC_ASSIGN_OR_RETURN(options.compile.custom_calls, LoadCustomCallLibrary(args));
  return RunOnHost(*optimized, run.arguments, options);
}

// The interpreter, with --max-while-iterations.
absl::StatusOr<Literal> RunWithInterpreter(const LoadedSnapshot& run, const Args& args) {
  EvaluatorOptions options;
  HLOC_ASSIGN_OR_RETURN(options.max_while_iterations, MaxWhileIterations(args));
  HLOC_ASSIGN_OR_RETURN(std::shared_ptr<const CustomCallTargets> custom_calls,
                        LoadCustomCallLibrary(args));
  options.custom_calls = custom_calls.get();
  return Evaluate(*run.module, run.arguments, options);
}

// --profile / --profile-json: as RunWithHostBackend, then one warm-up run and
// --repeats recorded runs with every thunk timed (runtime/thunk_profiler.h);
// the table (or JSON) goes to stdout or the --profile-json file.
absl::StatusOr<Literal> ProfileWithHostBackend(const LoadedSnapshot& run, const Args& args) {
  HLOC_ASSIGN_OR_RETURN(int64_t repeats, args.GetInt("repeats", 10));
  HLOC_ASSIGN_OR_RETURN(int64_t rows, args.GetInt("profile-rows", 30));
  if (repeats < 1 || repeats > 1000000) {
    return absl::InvalidArgumentError(absl::StrCat("--repeats=", repeats, " (1 or more)"));
  }
  std::unique_ptr<HloModule> optimized = run.module->Clone();
  if (args.Get("no-opt") != "true") {
    HLOC_RETURN_IF_ERROR(host::OptimizeForHost(*optimized).status());
  }
  host::HostCompileOptions compile;
  compile.interpreter = HostInterpreter();
  HLOC_ASSIGN_OR_RETURN(compile.custom_calls, LoadCustomCallLibrary(args));
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<host::HostProgram> program,
                        host::CompileForHost(*optimized, compile));
  runtime::ThreadPool pool(0);
  HLOC_ASSIGN_OR_RETURN(Literal result, program->Execute(run.arguments, &pool));  // Warm-up.
  // The same runs untimed first, so the table can say what timing costs.
  std::vector<double> plain(static_cast<size_t>(repeats));
  for (double& seconds : plain) {
    const auto start = std::chrono::steady_clock::now();
    HLOC_ASSIGN_OR_RETURN(result, program->Execute(run.arguments, &pool));
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::sort(plain.begin(), plain.end());
  std::unique_ptr<runtime::ThunkProfiler> profiler = program->executable().MakeProfiler();
  runtime::ExecuteOptions options;
  options.profiler = profiler.get();
  for (int64_t r = 0; r < repeats; ++r) {
    HLOC_ASSIGN_OR_RETURN(result, program->Execute(run.arguments, &pool, options));
  }
  const api::Profile profile = api::SummarizeProfile(
      *profiler, program->module(), api::MeasureMachinePeak(pool.num_threads()), "host");
  if (args.Get("profile") == "true") {
    std::fputs(profile.ToString(static_cast<int>(rows)).c_str(), stdout);
    std::printf("untimed runs: median %.3f ms (the profiled runs' median is %+.1f%% of it)\n",
                plain[plain.size() / 2] * 1e3,
                (profile.median_seconds / plain[plain.size() / 2] - 1) * 100);
  }
  if (args.Has("profile-json")) {
    const std::string path = args.Get("profile-json");
    if (path == "-") {
      std::fputs(profile.ToJson().c_str(), stdout);
    } else {
      std::ofstream out(path, std::ios::trunc);
      out << profile.ToJson();
      if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
    }
  }
  return result;
}

// --collective-timeout=S (cuda): how long an NCCL collective may wait for
// its peers before the watchdog aborts the run (runtime/cuda/nccl_clique.h);
// 0: no watchdog.
absl::StatusOr<gpu::RunOnGpuOptions> CudaRunOptions(const Args& args) {
  HLOC_ASSIGN_OR_RETURN(
      int64_t seconds,
      args.GetInt("collective-timeout", absl::ToInt64Seconds(cuda::kDefaultCollectiveTimeout)));
  if (seconds < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--collective-timeout=", seconds, " (seconds; 0 for no NCCL watchdog)"));
  }
  gpu::RunOnGpuOptions options;
  options.collective_timeout = absl::Seconds(seconds);
  return options;
}

// Compiles with the CUDA pipeline (library calls, fusion) and runs on GPU 0.
absl::StatusOr<Literal> RunWithCudaBackend(const LoadedSnapshot& run, const Args& args) {
  const std::string reason = gpu::GpuUnavailableReason();
  if (!reason.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--backend=cuda: no usable GPU here: ", reason));
  }
  std::unique_ptr<HloModule> optimized = run.module->Clone();
  if (args.Get("no-opt") != "true") {
    HLOC_RETURN_IF_ERROR(gpu::OptimizeForGpu(*optimized).status());
  }
  HLOC_ASSIGN_OR_RETURN(gpu::RunOnGpuOptions options, CudaRunOptions(args));
  HLOC_ASSIGN_OR_RETURN(options.compile.custom_calls, LoadCustomCallLibrary(args));
  return gpu::RunOnGpu(*optimized, run.arguments, options);
}

// --distributed=mpi: this process is MPI rank r of N and runs device r on a
// host program with an MPI communicator; every device's result comes back to
// every rank (MPI_Allgather per output leaf) so that rank 0 can print.
absl::StatusOr<std::vector<Literal>> RunOnMpiRank(const HloModule& module,
                                                  const std::vector<std::vector<Literal>>& per_device,
                                                  int64_t n, bool* print) {
  HLOC_ASSIGN_OR_RETURN(std::shared_ptr<runtime::MpiSession> session,
                        runtime::MpiSession::Initialize(nullptr, nullptr));
  if (session->size() != n) {
    return absl::InvalidArgumentError(absl::StrCat("--devices=", n, " but the MPI job has ",
                                                   session->size(), " ranks"));
  }
  const int64_t rank = session->rank();
  *print = rank == 0;
  host::HostCompileOptions options;
  options.communicator = std::make_shared<runtime::MpiCommunicator>(session);
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<host::HostProgram> program,
                        host::CompileForHost(module, options));
  options.communicator.reset();
  absl::StatusOr<Literal> mine = program->Execute(per_device[rank], /*pool=*/nullptr, {});
  if (!mine.ok()) {
    return absl::Status(mine.status().code(),
                        absl::StrCat("device ", rank, ": ", mine.status().message()));
  }
  std::vector<Literal> results;
  std::vector<std::vector<void*>> outputs;
  for (int64_t d = 0; d < n; ++d) {
    HLOC_ASSIGN_OR_RETURN(backend::ResultLiteral result,
                          backend::CreateResultLiteral(mine->shape()));
    results.push_back(std::move(result.literal));
    outputs.push_back(std::move(result.outputs));
  }
  std::vector<const Literal*> leaves;
  backend::CollectLiteralLeaves(*mine, &leaves);
  const std::vector<const void*> data = backend::ArgumentLeafData(absl::MakeConstSpan(&*mine, 1));
  for (size_t k = 0; k < leaves.size(); ++k) {
    const int64_t bytes = backend::LeafBytes(leaves[k]->shape());
    std::vector<char> all(static_cast<size_t>(bytes * n));
    HLOC_RETURN_IF_ERROR(session->GatherBytes(data[k], all.data(), bytes));
    for (int64_t d = 0; d < n; ++d) {
      std::memcpy(outputs[d][k], all.data() + d * bytes, static_cast<size_t>(bytes));
    }
  }
  return results;
}

// --devices=N. The module becomes the per-device module the way the API's
// devices=N makes it (passes/sharding/per_device_module.h): a JAX shard_map
// module (Shardy custom calls) or a module with sharding annotations only
// (jax.jit over NamedSharding: hloc's SPMD partitioner) takes global
// arguments, split by their shardings, and its outputs are gathered back:
// one global result. Any other module runs as it is on its replica_count x
// num_partitions devices (a module that names one device runs with
// replica_count=N), each device on the same arguments, or on its own random
// ones (seed + device) when drawn; one result per device.
absl::Status RunRunOnDevices(const Args& args, const std::string& backend, int64_t n) {
  bool drawn = false;
  HLOC_ASSIGN_OR_RETURN(LoadedSnapshot run, LoadModuleAndArguments(args, &drawn));
  std::unique_ptr<HloModule> module = run.module->Clone();
  HLOC_ASSIGN_OR_RETURN(PerDeviceModule made, MakePerDeviceModule(*module, n));
  const HloModuleConfig& config = module->config();
  if (config.replica_count * config.num_partitions != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--devices=", n, " but the module runs on replica_count=", config.replica_count,
        " x num_partitions=", config.num_partitions, " devices"));
  }
  if (made.kind == PerDeviceModule::Kind::kSpmd) {
    std::fprintf(stderr, "%s\n", made.spmd_report.ToString().c_str());
  }
  std::vector<DevicePlacement> inputs, outputs;
  std::vector<std::vector<Literal>> per_device(n);
  if (made.global()) {
    HLOC_RETURN_IF_ERROR(PlaceGlobalArrays(*module, made, &inputs, &outputs));
    HLOC_ASSIGN_OR_RETURN(per_device, SplitGlobalArguments(*module, inputs, run.arguments));
  } else {
    for (int64_t d = 0; d < n; ++d) {
      if (drawn) {
        HLOC_ASSIGN_OR_RETURN(int64_t seed, args.GetInt("seed", 0));
        HLOC_ASSIGN_OR_RETURN(per_device[d],
                              MakeRandomArguments(*module, static_cast<uint64_t>(seed + d)));
      } else {
        per_device[d] = run.arguments;
      }
    }
  }
  absl::StatusOr<std::vector<Literal>> results;
  bool print = true;  // Only MPI rank 0 prints.
  if (args.Get("distributed") == "mpi") {
    if (backend != "host") {
      return absl::InvalidArgumentError("--distributed=mpi runs on --backend=host only");
    }
    if (args.Get("no-opt") != "true") HLOC_RETURN_IF_ERROR(host::OptimizeForHost(*module).status());
    results = RunOnMpiRank(*module, per_device, n, &print);
  } else if (backend == "host") {
    if (args.Get("no-opt") != "true") HLOC_RETURN_IF_ERROR(host::OptimizeForHost(*module).status());
    results = RunOnHostDevices(*module, per_device);
  } else if (backend == "cuda") {
    // One GPU per device, collectives through NCCL (backend/gpu/run_on_gpu_devices.h).
    if (args.Get("no-opt") != "true") HLOC_RETURN_IF_ERROR(gpu::OptimizeForGpu(*module).status());
    HLOC_ASSIGN_OR_RETURN(gpu::RunOnGpuOptions options, CudaRunOptions(args));
    results = gpu::RunOnGpuDevices(*module, per_device, options);
  } else {
    results = EvaluateOnDevices(*module, per_device);
  }
  if (!results.ok()) return results.status();
  if (!print) return absl::OkStatus();
  Literal result;
  if (made.global()) {
    HLOC_ASSIGN_OR_RETURN(std::vector<Literal> globals,
                          GatherGlobalResults(*module, outputs, *results));
    result = module->entry()->root()->shape().IsTuple() ? Literal::Tuple(std::move(globals))
                                                        : std::move(globals[0]);
    std::fputs(SummarizeLiteral(result).c_str(), stdout);
  } else {
    for (int64_t d = 0; d < n; ++d) {
      std::printf("device %lld:\n", static_cast<long long>(d));
      std::fputs(SummarizeLiteral((*results)[d]).c_str(), stdout);
    }
    result = Literal::Tuple(*std::move(results));
  }
  if (args.Get("print") == "true") std::printf("%s\n", result.ToString().c_str());
  if (args.Has("output")) {
    run.result = std::move(result);
    run.execution_platform = absl::StrCat("hloc-", backend, "-", n, "-devices");
    HLOC_RETURN_IF_ERROR(WriteSnapshot(run, args.Get("output")));
  }
  return absl::OkStatus();
}

absl::Status RunRun(const Args& args) {
  std::string backend = args.Get("backend", "auto");
  // auto: the CUDA backend when a driver loads and a device exists.
  if (backend == "auto" && args.Has("distributed")) backend = "host";  // MPI runs host devices.
  if (backend == "auto") backend = gpu::GpuUnavailableReason().empty() ? "cuda" : "host";
  if (backend != "interpreter" && backend != "host" && backend != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown backend '", backend, "' (have: auto, cuda, host, interpreter)"));
  }
  if (args.Has("distributed") && args.Get("distributed") != "mpi") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --distributed='", args.Get("distributed"), "' (have: mpi)"));
  }
  if (args.Has("distributed") && !args.Has("devices")) {
    return absl::InvalidArgumentError("--distributed=mpi needs --devices=N");
  }
  if (args.Has("devices") && (args.Get("profile") == "true" || args.Has("profile-json"))) {
    return absl::UnimplementedError("--profile runs one device (no --devices)");
  }
  if (args.Has("devices") && (args.Has("custom-call-library") || args.Has("custom-calls"))) {
    return absl::UnimplementedError("--custom-calls runs one device (no --devices)");
  }
  if (args.Has("devices")) {
    HLOC_ASSIGN_OR_RETURN(int64_t devices, args.GetInt("devices", 1));
    if (devices < 1 || devices > 1024) {
      return absl::InvalidArgumentError(absl::StrCat("--devices=", devices, " (1 to 1024)"));
    }
    return RunRunOnDevices(args, backend, devices);
  }
  const bool profile = args.Get("profile") == "true" || args.Has("profile-json");
  if (profile && backend != "host") {
    return absl::UnimplementedError(absl::StrCat(
        "--profile covers --backend=host (the backend whose thunks run on the shared runtime); ",
        backend, " has no per-thunk timing"));
  }
  if (args.Get("perf-map") == "true") {
    // Read by the host kernel compiler when it is made (backend/host/host_jit.cc).
    setenv("HLOC_PERF_MAP", "1", 1);
    // oneDNN's JIT gemm and convolution kernels into the same map.
    setenv("DNNL_JIT_PROFILE", "2", 0);
  }
  HLOC_ASSIGN_OR_RETURN(LoadedSnapshot run, LoadModuleAndArguments(args));
  if (profile) {
    HLOC_ASSIGN_OR_RETURN(Literal result, ProfileWithHostBackend(run, args));
    std::fputs(SummarizeLiteral(result).c_str(), stderr);
    return absl::OkStatus();
  }
  HLOC_ASSIGN_OR_RETURN(Literal result, backend == "host"   ? RunWithHostBackend(run, args)
                                        : backend == "cuda" ? RunWithCudaBackend(run, args)
                                                            : RunWithInterpreter(run, args));
  std::fputs(SummarizeLiteral(result).c_str(), stdout);
  if (args.Get("print") == "true") std::printf("%s\n", result.ToString().c_str());
  if (args.Has("output")) {
    run.result = std::move(result);
    run.execution_platform = absl::StrCat("hloc-", backend);
    HLOC_RETURN_IF_ERROR(WriteSnapshot(run, args.Get("output")));
  }
  return absl::OkStatus();
}

}  // namespace

Command RunCommand() {
  return {"run", "evaluate a module and summarize its outputs",
          "usage: hloc run FILE [--backend=auto|cuda|host|interpreter] [--inputs=SNAPSHOT.pb | --seed=N]\n"
          "                [--output=OUT.pb] [--print] [--no-opt] [--devices=N [--distributed=mpi]]\n"
          "                [--max-while-iterations=N] [--collective-timeout=SECONDS]\n"
          "                [--profile] [--profile-json=FILE] [--repeats=N] [--perf-map]\n"
          "                [--custom-call-library=LIB.so --custom-calls=TARGET[=SYMBOL],...]\n"
          "  --backend=host compiles with the host pipeline (library outlining, fusion;\n"
          "  --no-opt skips it) and runs LLVM-JIT kernels on the CPU; cuda compiles with the\n"
          "  CUDA pipeline and runs NVPTX kernels and cuBLASLt/cuDNN calls on GPU 0 (an error\n"
          "  saying why when no driver or device is usable); auto is cuda when a CUDA driver\n"
          "  loads and a device exists, else host; interpreter is the reference interpreter.\n"
          "  Arguments come from --inputs (an HloSnapshot), from FILE itself when it is a\n"
          "  snapshot with arguments, or are drawn deterministically from --seed (default 0;\n"
          "  type-appropriate ranges, index operands kept in range). Prints shape, min, max,\n"
          "  mean, NaN count and checksum per output. --output writes an HloSnapshot with the\n"
          "  module, arguments and result; --print prints the result literal.\n"
          "  --devices=N runs on N devices (interpreter or host: one thread per device,\n"
          "  collectives between them; cuda: one GPU per device, collectives through\n"
          "  NCCL, which is loaded at run time). A JAX shard_map module, or a module with\n"
          "  sharding annotations only (jax.jit over NamedSharding; partitioned for N devices\n"
          "  by hloc's SPMD partitioner, its report on stderr), takes and returns global\n"
          "  arrays (split and gathered by its shardings); any other module runs on its\n"
          "  replica_count x num_partitions devices (replica_count=N when it names one)\n"
          "  and prints each device's outputs.\n"
          "  --distributed=mpi (with --devices=N, host backend): run under\n"
          "  `mpirun -np N hloc run ...`; each MPI rank runs its device, collectives go\n"
          "  through MPI, and rank 0 prints.\n"
          "  --max-while-iterations=N (interpreter and host, one device): a while loop that\n"
          "  runs more than N iterations stops the run with an error naming it.\n"
          "  --collective-timeout=SECONDS (cuda, default 300): an NCCL collective whose\n"
          "  peers do not arrive within it fails the run (DeadlineExceeded, naming the op)\n"
          "  and its communicators are aborted; 0 turns the watchdog off.\n"
          "  --profile (host backend): one warm-up run, then --repeats=N (default 10) runs\n"
          "  with every thunk timed; prints a table sorted by time (kernels, library calls,\n"
          "  copies, loops with their bodies, collectives, interpreter ops: each with its\n"
          "  HLO instruction, bytes, FLOPs, mean time per run, share, GB/s and GFLOP/s\n"
          "  against this machine's measured peak), then a summary by category; the output\n"
          "  summary goes to stderr. --profile-rows=N rows (default 30). --profile-json=FILE\n"
          "  writes the same as JSON ('-': stdout). --perf-map writes /tmp/perf-PID.map\n"
          "  naming the JIT kernels for `perf report` (as HLOC_PERF_MAP=1 does), and\n"
          "  oneDNN's (DNNL_JIT_PROFILE=2).\n"
          "  --custom-call-library=LIB.so --custom-calls=TARGET[=SYMBOL],... (one device):\n"
          "  custom calls to each TARGET run the C function SYMBOL (default: TARGET) that\n"
          "  LIB.so exports, with hloc_c.h's signature hloc_custom_call_function (it may\n"
          "  return hloc_error_create's error objects).\n",
          {{"backend", false}, {"inputs", false}, {"seed", false}, {"output", false},
           {"print", true}, {"no-opt", true}, {"devices", false}, {"distributed", false},
           {"max-while-iterations", false}, {"profile", true}, {"profile-json", false},
           {"profile-rows", false}, {"repeats", false}, {"perf-map", true},
           {"collective-timeout", false}, {"custom-call-library", false},
           {"custom-calls", false}},
          1, 1, RunRun};
}

}  // namespace hloc::tools
