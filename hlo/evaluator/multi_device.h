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

absl::StatusOr<std::vector<Literal>> EvaluateOnDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments,
    const MultiDeviceOptions& options = {});

}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_MULTI_DEVICE_H_
