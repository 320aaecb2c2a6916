// ThunkProfiler: wall time per thunk of a program's runs, for `hloc run
// --profile` and the APIs' profiles. The runtime times; what a thunk computes
// (its HLO, bytes, FLOPs) is added by the layer that knows the module
// (api/profile.h).
//
// Off by default and free when off: ExecuteOptions::profiler is null, and
// ExecuteSequence tests it once per sequence. When set, each thunk of every
// sequence (nested loop bodies and branches too) is timed with steady_clock
// and its time added to its entry. Entries are made once, by walking the
// program's thunk tree, in program order:
//
//   0 %fusion.1          kernel        top level
//   1 %while.3           loop          top level    (inclusive: condition + body + loop overhead)
//   2 %compare.2         kernel        parent 1, "condition"
//   3 onednn:gemm %c.4   library       parent 1, "body"
//
// A loop's or conditional's time includes its children's; its own time
// (the loop's bookkeeping) is its time minus theirs. The run's time minus
// the top-level thunks' is the runtime's own (buffer table, output copies).
#ifndef HLOC_RUNTIME_THUNK_PROFILER_H_
#define HLOC_RUNTIME_THUNK_PROFILER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/thunk.h"

namespace hloc {
namespace runtime {

struct ThunkTiming {
  const Thunk* thunk = nullptr;
  ThunkKind kind = ThunkKind::kOther;
  std::string name;   // Thunk::name(); for a copy "copy %a -> %b" when the executable names them.
  int parent = -1;    // Entry of the loop or conditional running it; -1 at top level.
  std::string role;   // Its label in the parent: "condition", "body", "branch 1".
  int depth = 0;
  int64_t bytes = 0;  // Copies: bytes moved per call; else 0 (the caller knows the HLO).
  int64_t calls = 0;  // Times it ran, summed over the recorded runs.
  double seconds = 0;  // Inclusive wall time, summed over the recorded runs.
};

class ThunkProfiler {
 public:
  // Entries for every thunk of `program`; the profiler must only be passed to
  // runs of that program (Executable::Execute checks).
  // `buffer_name` (optional) names a copy's buffers in its entry's name.
  explicit ThunkProfiler(const ThunkSequence& program,
                         std::function<std::string(BufferId)> buffer_name = nullptr);

  const ThunkSequence* program() const { return program_; }
  // The entries of `sequence`'s thunks, in order; null for a sequence not
  // in the program. Lock-free (the table is fixed at construction).
  const std::vector<int>* EntriesOf(const ThunkSequence& sequence) const;
  // Adds one execution of entry `entry` taking `nanoseconds` (atomic: runs
  // may overlap).
  void Record(int entry, int64_t nanoseconds) {
    calls_[entry].fetch_add(1, std::memory_order_relaxed);
    nanoseconds_[entry].fetch_add(nanoseconds, std::memory_order_relaxed);
  }
  // Adds one whole run (Executable::Execute, set-up and output copies included).
  void RecordRun(double seconds);
  void Clear();

  // Copies, under the lock (runs may be in flight).
  std::vector<ThunkTiming> timings() const;
  std::vector<double> run_seconds() const;

 private:
  void Add(const ThunkSequence& sequence, int parent, const std::string& role, int depth,
           const std::function<std::string(BufferId)>& buffer_name);

  const ThunkSequence* program_;
  std::vector<ThunkTiming> timings_;  // calls and seconds live in the counters below.
  absl::flat_hash_map<const ThunkSequence*, std::vector<int>> sequences_;
  std::unique_ptr<std::atomic<int64_t>[]> calls_;
  std::unique_ptr<std::atomic<int64_t>[]> nanoseconds_;
  mutable std::mutex mu_;  // Guards runs_.
  std::vector<double> runs_;
};

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_THUNK_PROFILER_H_
