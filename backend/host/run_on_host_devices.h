// The host backend on N virtual devices in one process: a module that runs
// on replica_count x num_partitions devices is compiled once per device and
// each device's program runs on its own thread.
//
// Collectives (and replica-id / partition-id) are interpreter ops on the host
// (backend/common/op_lowering.h): each device's program evaluates them with
// the interpreter bound to that device, and the devices meet in one
// in-process rendezvous (hlo/evaluator/multi_device.h: DeviceGroup). Every
// other op runs as the host's compiled kernels and library calls. The kernel
// compiler is shared, so each kernel is compiled once for all devices.
#ifndef HLOC_BACKEND_HOST_RUN_ON_HOST_DEVICES_H_
#define HLOC_BACKEND_HOST_RUN_ON_HOST_DEVICES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "backend/host/run_on_host.h"

namespace hloc {

struct RunOnHostDevicesOptions {
  // compile.interpreter is replaced per device; num_threads is ignored (each
  // device runs its kernels on its own thread).
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

}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_RUN_ON_HOST_DEVICES_H_
