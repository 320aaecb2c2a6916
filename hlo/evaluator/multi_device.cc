// One thread per device around the single-device evaluator (see multi_device.h).
#include "hlo/evaluator/multi_device.h"

#include <algorithm>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "hlo/collective_groups.h"
#include "hlo/evaluator/collectives.h"
#include "hlo/verifier.h"

namespace hloc {

DeviceGroup::DeviceGroup(int64_t replica_count, int64_t num_partitions, absl::Duration timeout)
    : rendezvous_(std::make_unique<eval::Rendezvous>(timeout)) {
  const DeviceMesh mesh{replica_count, num_partitions};
  for (int64_t d = 0; d < mesh.device_count(); ++d) {
    auto slot = std::make_unique<eval::DeviceSlot>();
    slot->mesh = mesh;
    slot->device = d;
    slot->rendezvous = rendezvous_.get();
    slots_.push_back(std::move(slot));
  }
}

DeviceGroup::~DeviceGroup() = default;

EvaluatorOptions DeviceGroup::OptionsFor(int64_t d, EvaluatorOptions base) const {
  base.device = slots_[d].get();
  return base;
}

void DeviceGroup::Abort(const absl::Status& status) { rendezvous_->Abort(status); }

absl::StatusOr<std::vector<Literal>> EvaluateOnDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments,
    const MultiDeviceOptions& options) {
  const DeviceMesh mesh = DeviceMesh::Of(module.config());
  if (mesh.replica_count < 1 || mesh.num_partitions < 1 || mesh.device_count() > 4096) {
    return absl::InvalidArgumentError(absl::StrCat(
        "module ", module.name(), ": replica_count=", mesh.replica_count,
        " num_partitions=", mesh.num_partitions, " is not a device count the interpreter runs"));
  }
  if (static_cast<int64_t>(arguments.size()) != mesh.device_count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "module ", module.name(), " runs on ", mesh.device_count(), " devices (replica_count=",
        mesh.replica_count, ", num_partitions=", mesh.num_partitions, ") but arguments for ",
        arguments.size(), " were given"));
  }
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), " has no entry"));
  }
  if (options.evaluator.verify) {
    absl::Status status = VerifyModule(module);
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("module ", module.name(),
                                                     " fails verification: ", status.message()));
    }
  }
  DeviceGroup devices(mesh.replica_count, mesh.num_partitions, options.collective_timeout);
  const int64_t n = mesh.device_count();
  return RunOnDeviceThreads(
      n,
      [&](int64_t d) -> absl::StatusOr<Literal> {
        EvaluatorOptions device_options = devices.OptionsFor(d, options.evaluator);
        device_options.verify = false;
        if (device_options.num_threads <= 0) device_options.num_threads = 1;
        std::vector<const Literal*> args;
        for (const Literal& a : arguments[d]) args.push_back(&a);
        return EvaluateComputation(*module.entry(), args, device_options);
      },
      [&](const absl::Status& status) { devices.Abort(status); }, options.threads);
}

DeviceThreads::DeviceThreads(int64_t n) : n_(std::max<int64_t>(n, 1)) {
  threads_.reserve(n_ - 1);
  for (int64_t d = 1; d < n_; ++d) threads_.emplace_back([this, d] { Loop(d); });
}

DeviceThreads::~DeviceThreads() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void DeviceThreads::Loop(int64_t d) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t)>* fn = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      fn = fn_;
    }
    (*fn)(d);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--running_ > 0) continue;
    }
    done_cv_.notify_one();
  }
}

std::thread::id DeviceThreads::id(int64_t d) const {
  if (d < 1 || d >= n_) return std::thread::id();
  return threads_[d - 1].get_id();
}

uint64_t DeviceThreads::runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

void DeviceThreads::Run(const std::function<void(int64_t)>& fn) {
  std::lock_guard<std::mutex> run(run_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    running_ = n_ - 1;
    ++generation_;
  }
  start_cv_.notify_all();
  fn(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return running_ == 0; });
  fn_ = nullptr;
}

absl::StatusOr<std::vector<Literal>> RunOnDeviceThreads(
    int64_t n, const std::function<absl::StatusOr<Literal>(int64_t)>& run,
    const std::function<void(const absl::Status&)>& abort, DeviceThreads* threads) {
  std::vector<absl::StatusOr<Literal>> results(n, absl::UnknownError("not run"));
  auto device = [&](int64_t d) {
    results[d] = run(d);
    if (!results[d].ok()) {
      abort(absl::CancelledError(
          absl::StrCat("device ", d, " failed: ", results[d].status().message())));
    }
  };
  if (threads != nullptr && threads->size() == n) {
    threads->Run(device);
  } else {
    std::vector<std::thread> started;
    for (int64_t d = 0; d < n; ++d) started.emplace_back(device, d);
    for (std::thread& t : started) t.join();
  }
  // The first device that failed on its own (not cancelled by another).
  for (int64_t d = 0; d < n; ++d) {
    if (!results[d].ok() && !absl::IsCancelled(results[d].status())) {
      return absl::Status(results[d].status().code(),
                          absl::StrCat("device ", d, ": ", results[d].status().message()));
    }
  }
  std::vector<Literal> out;
  for (int64_t d = 0; d < n; ++d) {
    if (!results[d].ok()) return results[d].status();
    out.push_back(*std::move(results[d]));
  }
  return out;
}

}  // namespace hloc
