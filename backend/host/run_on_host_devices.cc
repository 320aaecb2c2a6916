// RunOnHostDevices (see run_on_host_devices.h).
#include "backend/host/run_on_host_devices.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/status_macros.h"
#include "runtime/shared_memory_communicator.h"

namespace hloc {

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

absl::StatusOr<std::vector<Literal>> RunOnHostDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments,
    const RunOnHostDevicesOptions& options) {
  HLOC_ASSIGN_OR_RETURN(const int64_t n, HostDeviceCount(module));
  if (static_cast<int64_t>(arguments.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), " runs on ", n,
                                                   " devices but arguments for ",
                                                   arguments.size(), " were given"));
  }
  runtime::SharedMemoryWorld world(n, options.collective_timeout);
  host::HostCompileOptions compile = options.host.compile;
  if (compile.compiler == nullptr) {
    HLOC_ASSIGN_OR_RETURN(compile.compiler, host::KernelCompiler::Create(compile.kernel));
  }
  std::vector<std::unique_ptr<host::HostProgram>> programs;
  for (int64_t d = 0; d < n; ++d) {
    compile.communicator = world.CommunicatorFor(d);
    HLOC_ASSIGN_OR_RETURN(std::unique_ptr<host::HostProgram> program,
                          host::CompileForHost(module, compile));
    if (d == 0 && options.report != nullptr) *options.report = program->report();
    programs.push_back(std::move(program));
  }
  return RunOnDeviceThreads(
      n,
      [&](int64_t d) {
        return programs[d]->Execute(arguments[d], /*pool=*/nullptr, options.host.execute);
      },
      [&](const absl::Status& status) { world.Abort(status); });
}

}  // namespace hloc
