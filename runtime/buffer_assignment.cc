// Interval packing for the temporary arena (see buffer_assignment.h). The
// greedy order, largest first with ties broken by earlier start, is the usual
// heuristic for this bin-packing-in-time problem; it is exact for buffers
// that do not overlap in time at all (they all land at offset 0).
#include "runtime/buffer_assignment.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hloc {
namespace runtime {
namespace {

int64_t AlignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::string Bytes(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  if (bytes < (int64_t{1} << 20)) return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  return absl::StrFormat("%.1f MiB", bytes / (1024.0 * 1024.0));
}

}  // namespace

ArenaAssignment AssignArenaOffsets(absl::Span<const BufferInterval> buffers, int64_t alignment) {
  ArenaAssignment result;
  const size_t n = buffers.size();
  result.offsets.assign(n, 0);
  std::vector<int64_t> sizes(n);
  for (size_t i = 0; i < n; ++i) {
    sizes[i] = AlignUp(std::max<int64_t>(buffers[i].size, 1), alignment);
    result.total_size += sizes[i];
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
    return buffers[a].first_use < buffers[b].first_use;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of conflicting buffers.
  for (size_t index : order) {
    const BufferInterval& buffer = buffers[index];
    busy.clear();
    for (size_t other : placed) {
      const BufferInterval& o = buffers[other];
      if (o.last_use < buffer.first_use || buffer.last_use < o.first_use) continue;
      busy.push_back({result.offsets[other], result.offsets[other] + sizes[other]});
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [start, end] : busy) {
      if (start >= offset + sizes[index]) break;  // The gap before `start` fits.
      offset = std::max(offset, end);
    }
    result.offsets[index] = offset;
    result.arena_size = std::max(result.arena_size, offset + sizes[index]);
    placed.push_back(index);
  }
  // Lower bound on any placement: the most bytes live at one step.
  std::vector<std::pair<int64_t, int64_t>> events;  // (step, +size at start / -size after end)
  events.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    events.push_back({buffers[i].first_use, sizes[i]});
    events.push_back({buffers[i].last_use + 1, -sizes[i]});
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0;
  for (const auto& [step, delta] : events) {
    live += delta;
    result.peak_live_size = std::max(result.peak_live_size, live);
  }
  return result;
}

std::string ArenaReport(const ArenaAssignment& assignment,
                        absl::Span<const BufferInterval> buffers,
                        absl::Span<const std::string> names) {
  std::string out = absl::StrCat("arena ", Bytes(assignment.arena_size), " (no reuse: ",
                                 Bytes(assignment.total_size), ", live lower bound: ",
                                 Bytes(assignment.peak_live_size), "), ", buffers.size(),
                                 " buffers\n");
  if (names.empty()) return out;
  for (size_t i = 0; i < buffers.size(); ++i) {
    absl::StrAppend(&out, "  ", i < names.size() ? names[i] : absl::StrCat("buffer", i),
                    ": offset ", assignment.offsets[i], ", ", buffers[i].size, " B, steps [",
                    buffers[i].first_use, ", ", buffers[i].last_use, "]\n");
  }
  return out;
}

}  // namespace runtime
}  // namespace hloc
