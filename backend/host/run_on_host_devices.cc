// RunOnHostDevices and HostDevicesProgram (see run_on_host_devices.h).
#include "backend/host/run_on_host_devices.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/status_macros.h"
#include "runtime/shared_memory_communicator.h"

namespace hloc {
namespace {

// Device `rank`'s communicator for one run after another. Each run binds it
// to that run's world; the key's sequence is replaced by how many times this
// device called that instruction's op in this run (collective thunks count
// calls over the program's life, which a failed run leaves uneven across
// devices). Used by one device thread at a time.
class PerRunCommunicator : public runtime::Communicator {
 public:
  PerRunCommunicator(int64_t rank, int64_t size) : rank_(rank), size_(size) {}

  void Bind(runtime::SharedMemoryWorld* world) {
    target_ = world == nullptr ? nullptr : world->CommunicatorFor(rank_);
    calls_.clear();
  }

  int64_t rank() const override { return rank_; }
  int64_t size() const override { return size_; }
  absl::Status AllReduce(const runtime::CollectiveKey& key, runtime::DeviceGroup group,
                         runtime::ElementType type, runtime::ReductionKind kind,
                         const void* input, void* output, int64_t count) override {
    HLOC_ASSIGN_OR_RETURN(runtime::CollectiveKey k, Key(key));
    return target_->AllReduce(k, group, type, kind, input, output, count);
  }
  absl::Status AllGather(const runtime::CollectiveKey& key, runtime::DeviceGroup group,
                         const void* input, void* output, int64_t bytes) override {
    HLOC_ASSIGN_OR_RETURN(runtime::CollectiveKey k, Key(key));
    return target_->AllGather(k, group, input, output, bytes);
  }
  absl::Status ReduceScatter(const runtime::CollectiveKey& key, runtime::DeviceGroup group,
                             runtime::ElementType type, runtime::ReductionKind kind,
                             const void* input, void* output, int64_t count) override {
    HLOC_ASSIGN_OR_RETURN(runtime::CollectiveKey k, Key(key));
    return target_->ReduceScatter(k, group, type, kind, input, output, count);
  }
  absl::Status AllToAll(const runtime::CollectiveKey& key, runtime::DeviceGroup group,
                        const void* input, void* output, int64_t bytes) override {
    HLOC_ASSIGN_OR_RETURN(runtime::CollectiveKey k, Key(key));
    return target_->AllToAll(k, group, input, output, bytes);
  }
  absl::Status CollectivePermute(const runtime::CollectiveKey& key,
                                 absl::Span<const std::pair<int64_t, int64_t>> pairs,
                                 const void* input, void* output, int64_t bytes) override {
    HLOC_ASSIGN_OR_RETURN(runtime::CollectiveKey k, Key(key));
    return target_->CollectivePermute(k, pairs, input, output, bytes);
  }
  absl::Status Broadcast(const runtime::CollectiveKey& key, runtime::DeviceGroup group,
                         int64_t root, const void* input, void* output, int64_t bytes) override {
    HLOC_ASSIGN_OR_RETURN(runtime::CollectiveKey k, Key(key));
    return target_->Broadcast(k, group, root, input, output, bytes);
  }

 private:
  absl::StatusOr<runtime::CollectiveKey> Key(const runtime::CollectiveKey& key) {
    if (target_ == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(key.name, ": device ", rank_, " runs outside a multi-device run"));
    }
    return runtime::CollectiveKey{key.name, calls_[key.name]++};
  }

  const int64_t rank_;
  const int64_t size_;
  std::shared_ptr<runtime::Communicator> target_;
  std::map<std::string, int64_t> calls_;
};

}  // namespace

absl::StatusOr<int64_t> HostDeviceCount(const HloModule& module) {
  const int64_t replicas = module.config().replica_count;
  const int64_t partitions = module.config().num_partitions;
  if (replicas < 1 || partitions < 1 || replicas * partitions > 1024) {
    return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), ": replica_count=",
                                                   replicas, " num_partitions=", partitions,
                                                   " is not a device count the host runs"));
  }
  return replicas * partitions;
}

struct HostDevicesProgram::State {
  absl::Duration collective_timeout;
  std::vector<std::shared_ptr<PerRunCommunicator>> communicators;
  std::vector<std::unique_ptr<host::HostProgram>> programs;
  mutable std::mutex run_mu;
  // One thread per device, kept across runs (device 0 runs on the caller).
  std::unique_ptr<DeviceThreads> threads;
};

HostDevicesProgram::HostDevicesProgram(std::unique_ptr<State> state) : state_(std::move(state)) {}
HostDevicesProgram::~HostDevicesProgram() = default;

absl::StatusOr<std::unique_ptr<HostDevicesProgram>> HostDevicesProgram::Compile(
    const HloModule& module, const RunOnHostDevicesOptions& options) {
  HLOC_ASSIGN_OR_RETURN(const int64_t n, HostDeviceCount(module));
  auto state = std::make_unique<State>();
  state->collective_timeout = options.collective_timeout;
  host::HostCompileOptions compile = options.host.compile;
  if (compile.compiler == nullptr) {
    HLOC_ASSIGN_OR_RETURN(compile.compiler, host::KernelCompiler::Create(compile.kernel));
  }
  for (int64_t d = 0; d < n; ++d) {
    state->communicators.push_back(std::make_shared<PerRunCommunicator>(d, n));
    compile.communicator = state->communicators.back();
    HLOC_ASSIGN_OR_RETURN(std::unique_ptr<host::HostProgram> program,
                          host::CompileForHost(module, compile));
    if (d == 0 && options.report != nullptr) *options.report = program->report();
    state->programs.push_back(std::move(program));
  }
  state->threads = std::make_unique<DeviceThreads>(n);
  return std::unique_ptr<HostDevicesProgram>(new HostDevicesProgram(std::move(state)));
}

int64_t HostDevicesProgram::device_count() const {
  return static_cast<int64_t>(state_->programs.size());
}

const host::HostCompileReport& HostDevicesProgram::report() const {
  return state_->programs[0]->report();
}

const host::HostProgram& HostDevicesProgram::program(int64_t device) const {
  return *state_->programs[device];
}

absl::StatusOr<std::vector<Literal>> HostDevicesProgram::Execute(
    absl::Span<const std::vector<Literal>> arguments, const runtime::ExecuteOptions& options) const {
  const int64_t n = device_count();
  if (static_cast<int64_t>(arguments.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat("the program runs on ", n,
                                                   " devices but arguments for ",
                                                   arguments.size(), " were given"));
  }
  std::lock_guard<std::mutex> lock(state_->run_mu);
  runtime::SharedMemoryWorld world(n, state_->collective_timeout);
  for (const auto& communicator : state_->communicators) communicator->Bind(&world);
  absl::StatusOr<std::vector<Literal>> results = RunOnDeviceThreads(
      n,
      [&](int64_t d) {
        return state_->programs[d]->Execute(arguments[d], /*pool=*/nullptr, options);
      },
      [&](const absl::Status& status) { world.Abort(status); }, state_->threads.get());
  for (const auto& communicator : state_->communicators) communicator->Bind(nullptr);
  return results;
}

absl::StatusOr<std::vector<Literal>> RunOnHostDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments,
    const RunOnHostDevicesOptions& options) {
  HLOC_ASSIGN_OR_RETURN(const int64_t n, HostDeviceCount(module));
  if (static_cast<int64_t>(arguments.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), " runs on ", n,
                                                   " devices but arguments for ",
                                                   arguments.size(), " were given"));
  }
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HostDevicesProgram> program,
                        HostDevicesProgram::Compile(module, options));
  return program->Execute(arguments, options.host.execute);
}

}  // namespace hloc
