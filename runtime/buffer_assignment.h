// Placement of temporary buffers in one arena. Each buffer is live over a
// closed interval of program steps; two buffers may share bytes only when their
// intervals are disjoint. The compiler (backend/) computes the intervals from
// its schedule; this file knows nothing about where they come from.
#ifndef HLOC_RUNTIME_BUFFER_ASSIGNMENT_H_
#define HLOC_RUNTIME_BUFFER_ASSIGNMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"

namespace hloc {
namespace runtime {

// A buffer of `size` bytes, written first at step `first_use` and read last
// at step `last_use` (first_use <= last_use).
struct BufferInterval {
  int64_t size = 0;
  int64_t first_use = 0;
  int64_t last_use = 0;
};

struct ArenaAssignment {
  std::vector<int64_t> offsets;    // Per buffer, aligned to `alignment`.
  int64_t arena_size = 0;          // Peak bytes: the arena the program needs.
  int64_t total_size = 0;          // Bytes with no reuse (sum of aligned sizes).
  int64_t peak_live_size = 0;      // Largest sum of sizes live at one step (lower bound).
};

// Greedy placement: biggest buffers first, each at the lowest offset that
// overlaps no placed buffer live at the same time.
ArenaAssignment AssignArenaOffsets(absl::Span<const BufferInterval> buffers,
                                   int64_t alignment = 64);

// "arena 1.2 KiB (no reuse: 3.0 KiB, live lower bound: 1.0 KiB), 12 buffers"
// followed, when `names` is not empty, by one line per buffer.
std::string ArenaReport(const ArenaAssignment& assignment,
                        absl::Span<const BufferInterval> buffers,
                        absl::Span<const std::string> names = {});

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_BUFFER_ASSIGNMENT_H_
