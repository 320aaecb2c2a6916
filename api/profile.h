// Profiles of compiled programs: where a run's time goes, thunk by thunk,
// with each thunk's HLO instruction, bytes, FLOPs and how close it comes to
// this machine's measured peak. What `hloc run --profile`,
// ExecuteOptions::profile and Python's Executable.profile() return.
//
// Times are wall-clock means per run over the recorded runs (the caller
// decides warm-up). A loop's or conditional's own time excludes the thunks it
// runs, which appear as entries of their own under it, so the entries' own
// times plus the runtime's (buffer table, output copies) add up to the run's
// time and their shares to 100%.
//
// Bytes are the instruction's operands plus its result (what a thunk must at
// least read and write, at the instruction's boundary); FLOPs count 2 per
// multiply-add of dots and convolutions, 1 per element of elementwise ops and
// reductions, inside fusions and called computations too; 0 where no count
// is meaningful (copies, sorts, loops). Against the peak (machine_peak.h):
// a thunk's roofline time is max(bytes / peak bandwidth, FLOPs / peak FLOP/s)
// and `of_peak` is that time over its measured time.
#ifndef HLOC_API_PROFILE_H_
#define HLOC_API_PROFILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/machine_peak.h"
#include "hlo/module.h"
#include "runtime/thunk_profiler.h"

namespace hloc {
namespace api {

struct ProfileEntry {
  std::string name;      // The HLO instruction ("%fusion.3"), or the thunk's name (copies).
  std::string thunk;     // The thunk's own name ("onednn:hloc.gemm %call.2", "%fusion.3").
  std::string category;  // kernel, library, copy, loop, conditional, collective, interpreter.
  std::string op;        // HLO opcode, "fusion(kLoop)", "call hloc.gemm", ...; "" when unknown.
  std::string parent;    // "%while.2 body" for thunks a loop or conditional runs; "" at top level.
  int depth = 0;
  double calls = 0;         // Per run.
  double seconds = 0;       // Per run, inclusive of nested thunks.
  double self_seconds = 0;  // Per run, excluding nested thunks.
  double share = 0;         // self_seconds / the run's time.
  int64_t bytes = 0;        // Per call, read + written.
  double flops = 0;         // Per call.
  double gbps = 0;          // Achieved (bytes * calls / seconds), 0 when unknown.
  double gflops = 0;
  double of_peak = 0;       // Roofline time / measured time, 0 when unknown.
  std::string bound;        // "memory" or "compute": which roofline term is larger.
};

struct ProfileCategory {
  std::string category;
  int64_t thunks = 0;
  double calls = 0;
  double seconds = 0;  // Own time per run.
  double share = 0;
};

struct Profile {
  std::string backend;
  int64_t runs = 0;
  double mean_seconds = 0;  // Of whole runs.
  double median_seconds = 0;
  double min_seconds = 0;
  double runtime_seconds = 0;  // Per run, outside every thunk.
  MachinePeak peak;
  std::vector<ProfileEntry> entries;       // By own time, largest first.
  std::vector<ProfileCategory> categories;  // By time, largest first; "runtime" included.
  // Where the recorded runs accumulate (ExecuteOptions::profile); internal.
  std::shared_ptr<void> collector;

  // A table for a terminal: the `max_rows` largest entries, then the categories.
  std::string ToString(int max_rows = 30) const;
  std::string ToJson() const;
};

// The profile of the runs `profiler` recorded of a host program compiled
// from `module` (the optimized module, whose instruction names the thunks
// carry).
Profile SummarizeProfile(const runtime::ThunkProfiler& profiler, const HloModule& module,
                         const MachinePeak& peak, std::string backend);

// Bytes read + written and FLOPs of one instruction (see the top of this file).
int64_t InstructionBytes(const HloInstruction& instruction);
double InstructionFlops(const HloInstruction& instruction);

}  // namespace api
}  // namespace hloc

#endif  // HLOC_API_PROFILE_H_
