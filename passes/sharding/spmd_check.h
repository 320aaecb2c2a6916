// Test support for the SPMD partitioner: partitions a module, splits random
// (or given) global arguments by the partitioned parameters' shardings, runs
// the per-device module with a caller's N-device runner (the interpreter's,
// the host backend's), gathers each result by the root's sharding and
// compares it with the original module evaluated on one device.
#ifndef HLOC_PASSES_SHARDING_SPMD_CHECK_H_
#define HLOC_PASSES_SHARDING_SPMD_CHECK_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/evaluator/compare.h"
#include "hlo/module.h"
#include "passes/sharding/spmd_partitioner.h"

namespace hloc {

using DeviceRunner = std::function<absl::StatusOr<std::vector<Literal>>(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments)>;

struct SpmdCheck {
  std::unique_ptr<HloModule> partitioned;
  SpmdReport report;
  std::vector<Literal> expected, actual;  // Global results (one per output).
  std::string mismatches;                 // Empty when every result matches.
};

// `arguments` empty: random ones (seed 1). `tolerance`: CompareLiterals'
// (sums split over devices add in another order).
absl::StatusOr<SpmdCheck> CheckSpmdPartition(const HloModule& original, int64_t devices,
                                             const DeviceRunner& run,
                                             std::vector<Literal> arguments = {},
                                             const Tolerance& tolerance = {});

// The interpreter's N-device runner.
absl::StatusOr<std::vector<Literal>> RunOnInterpreterDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments);

// Number of instructions of `opcode` in the entry.
int64_t CountOps(const HloModule& module, HloOpcode opcode);

}  // namespace hloc

#endif  // HLOC_PASSES_SHARDING_SPMD_CHECK_H_
