// The host backend on N virtual devices in one process: a module that runs
// on replica_count x num_partitions devices is compiled once per device and
// each device's program runs on its own thread.
//
// Collectives, replica-id and partition-id are communicator thunks
// (runtime/collective_thunks.h) on a shared-memory communicator
// (runtime/shared_memory_communicator.h): devices read each other's buffers
// directly, and an all-reduce has each device reduce only its slice. Nothing
// runs in the interpreter. The kernel compiler is shared, so each kernel is
// compiled once for all devices.
#ifndef HLOC_BACKEND_HOST_RUN_ON_HOST_DEVICES_H_
#define HLOC_BACKEND_HOST_RUN_ON_HOST_DEVICES_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "backend/host/run_on_host.h"

namespace hloc {

struct RunOnHostDevicesOptions {
  // compile.communicator is replaced per device; num_threads is ignored
  // (each device runs its kernels on its own thread).
  RunOnHostOptions host;
  absl::Duration collective_timeout = absl::Seconds(120);
  // Not owned; when set, receives device 0's compile report (every device's
  // program is compiled from the same module the same way).
  host::HostCompileReport* report = nullptr;
};

// A module compiled once for each of its N host devices, run many times.
// Each run meets in a fresh shared-memory world, and collectives are matched
// by how often a device called them in this run, so a run that failed (one
// device stopped early) leaves nothing behind for the next. Runs of one
// program are serialized (the devices' programs and arenas are shared), and
// reuse the program's device threads (DeviceThreads), started once.
class HostDevicesProgram {
 public:
  static absl::StatusOr<std::unique_ptr<HostDevicesProgram>> Compile(
      const HloModule& module, const RunOnHostDevicesOptions& options = {});
  ~HostDevicesProgram();
  // arguments[d] and result[d] are device d's.
  absl::StatusOr<std::vector<Literal>> Execute(absl::Span<const std::vector<Literal>> arguments,
                                               const runtime::ExecuteOptions& options = {}) const;
  int64_t device_count() const;
  // Device 0's (every device's program is compiled the same way).
  const host::HostCompileReport& report() const;
  const host::HostProgram& program(int64_t device) const;

 private:
  struct State;
  explicit HostDevicesProgram(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// arguments[d] and result [d] are device d's (d = replica * num_partitions +
// partition). The first device error is returned, naming the device.
absl::StatusOr<std::vector<Literal>> RunOnHostDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments,
    const RunOnHostDevicesOptions& options = {});

// The number of devices `module` runs on, or an error naming the counts.
absl::StatusOr<int64_t> HostDeviceCount(const HloModule& module);

}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_RUN_ON_HOST_DEVICES_H_
