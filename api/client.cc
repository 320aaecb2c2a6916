// Client (hloc.h): the one entry every embedding goes through — load,
// verify, optimize, compile — and the in-memory compile cache.
//
// Cache keys are fingerprints of what determines the result: the module's
// bytes as given (or its printed text for an in-memory module), the options
// and the resolved backend. A request whose key is cached returns the cached
// Executable before anything is parsed.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/api_internal.h"
#include "api/hloc.h"
#include "api/targets.h"
#include "backend/gpu/run_on_gpu.h"
#include "hlo/fingerprint.h"
#include "hlo/loader.h"
#include "hlo/status_macros.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "passes/sharding/shard_map_to_per_device.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/device_memory_cache.h"

namespace hloc {
namespace api {

const char* Version() { return "0.1.0"; }

absl::StatusOr<Backend> ParseBackend(absl::string_view name) {
  if (name == "auto") return Backend::kAuto;
  if (name == "host" || name == "cpu") return Backend::kHost;
  if (name == "cuda" || name == "gpu") return Backend::kCuda;
  if (name == "interpreter") return Backend::kInterpreter;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown backend '", name, "' (have: auto, host, cuda, interpreter)"));
}

const char* BackendName(Backend backend) {
  switch (backend) {
    case Backend::kAuto: return "auto";
    case Backend::kHost: return "host";
    case Backend::kCuda: return "cuda";
    case Backend::kInterpreter: return "interpreter";
  }
  return "?";
}

std::string BackendUnavailableReason(Backend backend) {
  if (backend == Backend::kCuda) return gpu::GpuUnavailableReason();
  return "";
}

ModuleSource ModuleSource::Bytes(std::string bytes) {
  ModuleSource source;
  source.kind_ = Kind::kBytes;
  source.data_ = std::move(bytes);
  return source;
}

ModuleSource ModuleSource::File(std::string path) {
  ModuleSource source;
  source.kind_ = Kind::kFile;
  source.data_ = std::move(path);
  return source;
}

ModuleSource ModuleSource::Module(const HloModule& module) {
  ModuleSource source;
  source.kind_ = Kind::kModule;
  source.module_ = module.Clone();
  return source;
}

class ClientState {
 public:
  ClientOptions options;
  CustomCallRegistry custom_calls;
  HostTargetContext host;
  std::mutex host_mu;  // Creates `host.kernel_compiler` once.

  std::mutex cache_mu;
  // Most recently used first.
  std::list<std::pair<std::string, std::shared_ptr<Executable>>> cache;
  int64_t cache_hits = 0;

  std::shared_ptr<Executable> Lookup(const std::string& key) {
    std::lock_guard<std::mutex> lock(cache_mu);
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (it->first == key) {
        cache.splice(cache.begin(), cache, it);
        ++cache_hits;
        return it->second;
      }
    }
    return nullptr;
  }

  void Insert(const std::string& key, std::shared_ptr<Executable> executable) {
    if (options.compile_cache_capacity <= 0) return;
    std::lock_guard<std::mutex> lock(cache_mu);
    cache.emplace_front(key, std::move(executable));
    while (static_cast<int>(cache.size()) > options.compile_cache_capacity) cache.pop_back();
  }

  std::mutex devices_mu;
  std::map<int, ClientDevice> devices;  // By ordinal, opened on use.

  absl::StatusOr<ClientDevice> Device(int ordinal) {
    if (ordinal < 0) {
      return absl::InvalidArgumentError(absl::StrCat("no CUDA device ", ordinal));
    }
    std::lock_guard<std::mutex> lock(devices_mu);
    auto it = devices.find(ordinal);
    if (it != devices.end()) return it->second;
    if (std::string reason = cuda::NoGpuReason(); !reason.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("no device memory on cuda:", ordinal, ": ", reason));
    }
    absl::StatusOr<std::unique_ptr<cuda::CudaDevice>> opened = cuda::CudaDevice::Open(ordinal);
    if (!opened.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot open cuda:", ordinal, ": ", opened.status().message()));
    }
    ClientDevice device;
    device.device = *std::move(opened);
    device.memory = cuda::DeviceMemoryCache::ForDevice(device.device,
                                                       options.device_memory_cache_bytes);
    devices.emplace(ordinal, device);
    return device;
  }

  absl::StatusOr<HostTargetContext> Host() {
    std::lock_guard<std::mutex> lock(host_mu);
    if (host.kernel_compiler == nullptr) {
      host::KernelCompilerOptions kernel;
      kernel.disk_cache_dir = options.disk_cache_dir;
      HLOC_ASSIGN_OR_RETURN(host.kernel_compiler, host::KernelCompiler::Create(kernel));
    }
    return host;
  }
};

absl::StatusOr<ClientDevice> ClientAccess::Device(Client& client, int ordinal) {
  return client.state_->Device(ordinal);
}

Client::Client(std::unique_ptr<ClientState> state) : state_(std::move(state)) {}
Client::~Client() = default;

absl::StatusOr<std::shared_ptr<Client>> Client::Create(const ClientOptions& options) {
  auto state = std::make_unique<ClientState>();
  state->options = options;
  if (state->options.disk_cache_dir.empty()) {
    if (const char* dir = std::getenv("HLOC_CACHE_DIR"); dir != nullptr) {
      state->options.disk_cache_dir = dir;
    }
  }
  if (state->options.device_memory_cache_bytes < 0) {
    state->options.device_memory_cache_bytes = cuda::DeviceMemoryCache::kDefaultMaxCachedBytes;
    if (const char* bytes = std::getenv("HLOC_DEVICE_CACHE_BYTES"); bytes != nullptr) {
      int64_t parsed = 0;
      if (!absl::SimpleAtoi(bytes, &parsed) || parsed < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "HLOC_DEVICE_CACHE_BYTES must be a byte count >= 0, got \"", bytes, "\""));
      }
      state->options.device_memory_cache_bytes = parsed;
    }
  }
  if (std::isnan(state->options.collective_timeout_seconds)) {
    return absl::InvalidArgumentError(
        "collective_timeout_seconds is NaN: seconds expected (0: no NCCL watchdog; < 0: "
        "$HLOC_NCCL_TIMEOUT or 300)");
  }
  if (state->options.collective_timeout_seconds < 0) {
    state->options.collective_timeout_seconds =
        absl::ToDoubleSeconds(cuda::kDefaultCollectiveTimeout);
    if (const char* text = std::getenv("HLOC_NCCL_TIMEOUT"); text != nullptr) {
      double seconds = 0;
      if (!absl::SimpleAtod(text, &seconds) || seconds < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "HLOC_NCCL_TIMEOUT=", text, ": seconds expected (0: no NCCL watchdog)"));
      }
      state->options.collective_timeout_seconds = seconds;
    }
  }
  if (options.num_threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_threads must be >= 0 (0: all cores), got ", options.num_threads));
  }
  state->host.pool = std::make_shared<runtime::ThreadPool>(options.num_threads);
  return std::shared_ptr<Client>(new Client(std::move(state)));
}

absl::Status Client::RegisterCustomCall(std::string target, CustomCallFunction function) {
  return state_->custom_calls.Register(std::move(target), std::move(function));
}

int64_t Client::cache_hits() const {
  std::lock_guard<std::mutex> lock(state_->cache_mu);
  return state_->cache_hits;
}

namespace {

std::string CacheKey(const ModuleSource& source, const CompileOptions& options, Backend backend,
                     const CustomCallTargets& custom_calls) {
  FingerprintBuilder key;
  key.Add("hloc api executable v1").Add(BackendName(backend)).Add(options.pipeline);
  // An executable calls the functions registered when it was compiled.
  key.Add(custom_calls.fingerprint());
  key.Add(absl::StrJoin(options.disabled_passes, ",")).Add(options.dump_dir);
  key.Add(options.allow_interpreter_ops ? 1 : 0).Add(static_cast<int64_t>(source.kind()));
  key.Add(static_cast<int64_t>(options.devices));
  if (source.kind() == ModuleSource::Kind::kModule) {
    key.Add(PrintModule(*source.module()));
  } else {
    // Serialized bytes (Compile turns a file source into its loaded module
    // first, so a file rewritten between compiles is not served stale).
    key.Add(source.bytes_or_path());
  }
  return key.Finish();
}

absl::StatusOr<std::unique_ptr<HloModule>> Load(const ModuleSource& source) {
  switch (source.kind()) {
    case ModuleSource::Kind::kBytes:
      if (source.bytes_or_path().empty()) {
        return absl::InvalidArgumentError("the module is empty (0 bytes)");
      }
      return LoadModuleFromBytes(source.bytes_or_path(), "<module>");
    case ModuleSource::Kind::kFile:
      return LoadModuleFromFile(source.bytes_or_path());
    case ModuleSource::Kind::kModule:
      return source.module()->Clone();
  }
  return absl::InternalError("unknown module source");
}

}  // namespace

absl::StatusOr<std::shared_ptr<Executable>> Client::Compile(const ModuleSource& source,
                                                            const CompileOptions& options) {
  Backend backend = options.backend;
  if (options.devices < 0 || options.devices > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("devices must be 0 (as the module says) to 1024, got ", options.devices));
  }
  if (backend == Backend::kAuto) {
    // Several devices run on the host; backend kCuda runs them on as many GPUs.
    backend = options.devices == 1 && gpu::GpuUnavailableReason().empty() ? Backend::kCuda
                                                                          : Backend::kHost;
  }
  if (!IsKnownPipeline(options.pipeline)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown pipeline '", options.pipeline, "' (have: default, no-fusion, fallback, none)"));
  }
  if (std::string reason = BackendUnavailableReason(backend); !reason.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("backend ", BackendName(backend), " cannot run here: ", reason));
  }
  // The file's path is no key for a file that changes: file sources are
  // read first and keyed by their bytes.
  ModuleSource keyed = source;
  if (source.kind() == ModuleSource::Kind::kFile) {
    absl::StatusOr<std::unique_ptr<HloModule>> loaded = Load(source);
    if (!loaded.ok()) return MarkCompileError(loaded.status());
    keyed = ModuleSource::Module(**loaded);
  }
  // One snapshot for the whole compile: a registration racing with it
  // affects later compiles only.
  CustomCalls custom_calls = state_->custom_calls.Snapshot();
  for (const auto& [target, function] : options.custom_calls) {
    absl::StatusOr<CustomCalls> with = custom_calls->With(target, function);
    if (!with.ok()) return with.status();
    custom_calls = *std::move(with);
  }
  // The executable's own targets are new registrations: its key matches no
  // other compile's, so it is not cached.
  const bool cacheable = options.custom_calls.empty();
  const std::string key = CacheKey(keyed, options, backend, *custom_calls);
  if (cacheable) {
    if (std::shared_ptr<Executable> cached = state_->Lookup(key)) return cached;
  }

  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<HloModule>> module = Load(keyed);
  if (!module.ok()) return MarkCompileError(module.status());
  // Verify first: nothing below ever sees a module the verifier rejects.
  if (absl::Status verified = VerifyModule(**module); !verified.ok()) {
    return MarkCompileError(absl::Status(
        verified.code(), absl::StrCat("module fails verification: ", verified.message())));
  }
  FusionLedger ledger;
  const bool on_devices = options.devices != 1 || HasShardMap(**module);
  absl::StatusOr<std::unique_ptr<ExecutableImpl>> impl;
  if (on_devices) {
    absl::StatusOr<HostTargetContext> host;
    if (backend == Backend::kHost) {
      host = state_->Host();
      if (!host.ok()) return host.status();
    }
    impl = CompileForDevices(**module, backend, options, host.ok() ? &*host : nullptr,
                             state_->options.num_threads, custom_calls, &ledger,
                             CollectiveTimeout(state_->options));
    // Marks its compile errors itself: a device count the module does not
    // fit is the caller's option, not the module's fault.
    if (!impl.ok()) return impl.status();
  } else if (absl::Status optimized = OptimizeForBackend(backend, options, **module, &ledger);
             !optimized.ok()) {
    return MarkCompileError(optimized);
  } else if (backend == Backend::kHost) {
    absl::StatusOr<HostTargetContext> host = state_->Host();
    if (!host.ok()) return host.status();
    impl = CompileForHostTarget(**module, options, *host, custom_calls);
  } else if (backend == Backend::kCuda) {
    absl::StatusOr<ClientDevice> buffers_device = state_->Device(0);
    if (!buffers_device.ok()) return buffers_device.status();
    impl = CompileForCudaTarget(**module, options, *std::move(buffers_device), custom_calls,
                                CollectiveTimeout(state_->options));
  } else {
    impl = CompileForInterpreterTarget(**module, state_->options.num_threads, custom_calls);
  }
  if (!impl.ok()) {
    // A missing GPU or memory is the machine's, not the module's.
    if (absl::IsFailedPrecondition(impl.status()) || absl::IsResourceExhausted(impl.status())) {
      return impl.status();
    }
    return MarkCompileError(impl.status());
  }
  if (!on_devices) DescribeEntry(**module, impl->get());
  (*impl)->optimized_hlo = PrintModule(**module);
  (*impl)->ledger = ledger.ToText();
  (*impl)->fingerprint = key;
  (*impl)->stats.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto executable = std::shared_ptr<Executable>(new Executable(*std::move(impl)));
  if (cacheable) state_->Insert(key, executable);
  return executable;
}

}  // namespace api
}  // namespace hloc
