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

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloc {

struct MultiDeviceOptions {
  // Per device; num_threads <= 0 means one thread each (the devices already
  // run side by side). `device` is ignored.
  EvaluatorOptions evaluator;
  // A device waiting this long for the rest of its group is an error.
  absl::Duration collective_timeout = absl::Seconds(120);
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

// Runs `run(d)` for devices 0..n-1, each on its own thread. When a device
// fails, `abort` gets a Cancelled status naming it (to release the others
// from their collectives). Returns every device's result, or the first error
// of a device that failed on its own (not cancelled), naming the device.
// Shared by every multi-device runner (this interpreter, the host backend).
absl::StatusOr<std::vector<Literal>> RunOnDeviceThreads(
    int64_t n, const std::function<absl::StatusOr<Literal>(int64_t)>& run,
    const std::function<void(const absl::Status&)>& abort);

absl::StatusOr<std::vector<Literal>> EvaluateOnDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments,
    const MultiDeviceOptions& options = {});

}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_MULTI_DEVICE_H_
