// Runs a module on several devices at once with the reference interpreter:
// one thread per device, collectives meeting in an in-process rendezvous
// (collectives.h). This defines the right answer for multi-device programs:
// XLA's per-device modules after SPMD partitioning (num_partitions=N) and
// replicated modules (replica_count=N).
//
// The devices are the module's replica_count x num_partitions (device d is
// replica d / num_partitions, partition d % num_partitions); arguments[d]
// and the result [d] are device d's. A device that fails stops the others:
// the first error is returned, naming the device.
#ifndef HLOC_HLO_EVALUATOR_MULTI_DEVICE_H_
#define HLOC_HLO_EVALUATOR_MULTI_DEVICE_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloc {

class DeviceThreads;

struct MultiDeviceOptions {
  // Per device; num_threads <= 0 means one thread each (the devices already
  // run side by side). `device` is ignored.
  EvaluatorOptions evaluator;
  // A device waiting this long for the rest of its group is an error.
  absl::Duration collective_timeout = absl::Seconds(120);
  // Threads kept across runs (one per device; the caller keeps them and
  // runs one module with them at a time); null or another device count:
  // threads started for this run.
  DeviceThreads* threads = nullptr;
};

namespace eval {
class Rendezvous;
struct DeviceSlot;
}  // namespace eval

// The devices of one multi-device run and the rendezvous their collectives
// meet in. EvaluateOnDevices makes one; other runners (the host backend,
// whose collectives run as interpreter ops) make one per run and evaluate
// device d's collectives with OptionsFor(d).
class DeviceGroup {
 public:
  DeviceGroup(int64_t replica_count, int64_t num_partitions, absl::Duration timeout);
  ~DeviceGroup();
  DeviceGroup(const DeviceGroup&) = delete;
  DeviceGroup& operator=(const DeviceGroup&) = delete;
  int64_t device_count() const { return static_cast<int64_t>(slots_.size()); }
  // `base` with device = device d (d in [0, device_count())). Evaluations
  // with these options must run on device d's thread only.
  EvaluatorOptions OptionsFor(int64_t d, EvaluatorOptions base) const;
  // A device failed: the others' collectives return `status` instead of waiting.
  void Abort(const absl::Status& status);

 private:
  std::unique_ptr<eval::Rendezvous> rendezvous_;
  std::vector<std::unique_ptr<eval::DeviceSlot>> slots_;
};

// Threads kept for the devices of a program run many times: a run hands
// device d's work to thread d (device 0's runs on the caller) instead of
// starting and joining a thread per device per run, which costs a clone,
// an exit and their context switches every time. Every multi-device runner
// keeps one per program: the host backend's (backend/host), the GPU
// backend's (backend/gpu, where thread d keeps GPU d's context current)
// and the interpreter's (MultiDeviceOptions::threads). Runs from several
// threads take turns (Run holds a lock for the whole run); a device's work
// must not call Run again.
class DeviceThreads {
 public:
  explicit DeviceThreads(int64_t n);
  ~DeviceThreads();
  DeviceThreads(const DeviceThreads&) = delete;
  DeviceThreads& operator=(const DeviceThreads&) = delete;
  int64_t size() const { return n_; }
  // The thread that runs device d's work (the caller's for device 0: none).
  std::thread::id id(int64_t d) const;
  // Runs made so far.
  uint64_t runs() const;
  // fn(d) for every d in [0, size()), all at once, each on its own thread;
  // returns when every one has returned.
  void Run(const std::function<void(int64_t)>& fn);

 private:
  void Loop(int64_t d);
  const int64_t n_;
  std::mutex run_mu_;  // One run at a time.
  mutable std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int64_t)>* fn_ = nullptr;  // Guarded by mu_.
  uint64_t generation_ = 0;                           // Runs started.
  int64_t running_ = 0;                               // Threads inside fn_.
  bool stop_ = false;
  std::vector<std::thread> threads_;  // Devices 1..n-1.
};

// Runs `run(d)` for devices 0..n-1, each on its own thread (`threads`'
// when given, of size n; else threads started for this run). When a device
// fails, `abort` gets a Cancelled status naming it (to release the others
// from their collectives). Returns every device's result, or the first error
// of a device that failed on its own (not cancelled), naming the device.
// Shared by every multi-device runner (this interpreter, the host backend).
absl::StatusOr<std::vector<Literal>> RunOnDeviceThreads(
    int64_t n, const std::function<absl::StatusOr<Literal>(int64_t)>& run,
    const std::function<void(const absl::Status&)>& abort, DeviceThreads* threads = nullptr);

absl::StatusOr<std::vector<Literal>> EvaluateOnDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments,
    const MultiDeviceOptions& options = {});

}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_MULTI_DEVICE_H_
