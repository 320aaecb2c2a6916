// One thread per device around the single-device evaluator (see multi_device.h).
#include "hlo/evaluator/multi_device.h"

#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "hlo/collective_groups.h"
#include "hlo/evaluator/collectives.h"
#include "hlo/verifier.h"

namespace hloc {

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
  eval::Rendezvous rendezvous(options.collective_timeout);
  const int64_t n = mesh.device_count();
  std::vector<eval::DeviceSlot> slots(n);
  std::vector<absl::StatusOr<Literal>> results(n, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < n; ++d) {
    slots[d].mesh = mesh;
    slots[d].device = d;
    slots[d].rendezvous = &rendezvous;
    threads.emplace_back([&, d] {
      EvaluatorOptions device_options = options.evaluator;
      device_options.verify = false;
      device_options.device = &slots[d];
      if (device_options.num_threads <= 0) device_options.num_threads = 1;
      std::vector<const Literal*> args;
      for (const Literal& a : arguments[d]) args.push_back(&a);
      results[d] = EvaluateComputation(*module.entry(), args, device_options);
      if (!results[d].ok()) {
        rendezvous.Abort(absl::CancelledError(absl::StrCat(
            "device ", d, " failed: ", results[d].status().message())));
      }
    });
  }
  for (std::thread& t : threads) t.join();
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
