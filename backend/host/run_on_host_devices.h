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

// arguments[d] and result [d] are device d's (d = replica * num_partitions +
// partition). The first device error is returned, naming the device.
absl::StatusOr<std::vector<Literal>> RunOnHostDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments,
    const RunOnHostDevicesOptions& options = {});

// The number of devices `module` runs on, or an error naming the counts.
absl::StatusOr<int64_t> HostDeviceCount(const HloModule& module);

}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_RUN_ON_HOST_DEVICES_H_
