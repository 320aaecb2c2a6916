// How a program's buffer table maps to memory, for both runtimes
// (Executable here, cuda::GpuExecutable on the GPU): the checks every table
// must pass, storage groups (temporaries living in another's bytes,
// BufferSpec::shares, followed to the buffer that owns them), the interval
// over which each group must keep its bytes (the union of its members'),
// and which output may live in which parameter's memory
// (ProgramSpec::output_parameter_aliases). Where the bytes then are (an
// arena in host memory, a device allocation) is each runtime's business.
#ifndef HLOC_RUNTIME_STORAGE_PLAN_H_
#define HLOC_RUNTIME_STORAGE_PLAN_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/buffer_assignment.h"
#include "runtime/executable.h"

namespace hloc {
namespace runtime {

struct StoragePlan {
  int64_t num_parameters = 0;
  std::vector<int64_t> parameter_sizes;    // Per parameter index.
  std::vector<BufferId> parameter_buffer;  // Per parameter index: its buffer.
  std::vector<BufferId> storage_root;      // Per buffer: whose bytes it uses.
  // Per buffer: for a temporary that is its group's root, the group's live
  // interval and size; `is_temp_root` marks those entries.
  std::vector<BufferInterval> group_live;
  std::vector<bool> is_temp_root;
  std::vector<int64_t> aliased_parameter;  // Per output: its parameter, or -1.
  int64_t shared_bytes = 0;                // Bytes of temporaries in another's bytes.
};

// Fails, naming the buffer, on a negative size, a parameter index out of
// range or given twice or not at all, a constant whose data is not its
// size, a temporary live over an empty interval, `shares` between buffers
// that are not temporaries of one size or in a cycle, an output id out of
// range, or an alias pair that is out of range, repeated or of two sizes.
absl::StatusOr<StoragePlan> PlanStorage(
    const std::vector<BufferSpec>& buffers, const std::vector<BufferId>& outputs,
    const std::vector<std::pair<int64_t, int64_t>>& output_parameter_aliases);

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_STORAGE_PLAN_H_
