// GraphSegments: a thunk sequence replayed as CUDA graphs wherever it can
// be, including between steps that must talk to the host.
//
//   sequence:   k1 k2 k3 | host call | k4 k5 | while(...) | k6
//   segments:   [graph]    direct      [graph]  direct      direct
//
// Maximal runs of steps that never read back to the host (Thunk::
// ReadsBackToHost) are captured, on the sequence's first run, into one
// graph each, and replayed with one cuGraphLaunch on later runs; a step
// that reads back (a host call, a while loop's predicate, a branch
// selector, a collective under the NCCL watchdog) runs directly between
// them. So a program with a custom call in the middle, or a loop whose
// body is many kernels, pays one launch per segment instead of one per
// kernel. A while or conditional step keeps GraphSegments of its own
// sequences (body, condition, branches), so a loop body is captured once
// and replayed every iteration.
//
// Why replay is valid: the executable's buffer table is fixed at Load, so
// every step reads and writes the same addresses on every run (and every
// iteration). A run of one step gains nothing from a graph and runs
// directly. A capture that fails (a library refusing to be captured)
// leaves that segment running directly from then on, said once in the log.
//
// Not thread-safe: the executable runs one sequence at a time (its lock).
#ifndef HLOC_RUNTIME_CUDA_GRAPH_SEGMENTS_H_
#define HLOC_RUNTIME_CUDA_GRAPH_SEGMENTS_H_

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/cuda/gpu_thunk.h"

namespace hloc {
namespace cuda {

class GraphSegments {
 public:
  // `sequence` must outlive this (its owner keeps both).
  explicit GraphSegments(const ThunkSequence* sequence);
  ~GraphSegments();
  GraphSegments(const GraphSegments&) = delete;
  GraphSegments& operator=(const GraphSegments&) = delete;

  // Runs the sequence: segments as graphs when context.graphs says so
  // (capturing them on first use), every step directly otherwise.
  absl::Status Execute(GpuExecutionContext& context);

  // Segments that can be graphs (two or more steps, no read-back).
  int64_t capturable_segments() const;
  // True when the whole sequence is one captured graph.
  bool is_one_graph() const;

 private:
  struct Segment {
    size_t begin = 0, end = 0;  // Steps [begin, end) of the sequence.
    bool capturable = false;
    CUgraphExec graph = nullptr;
    bool capture_failed = false;
  };
  const ThunkSequence* sequence_;
  std::vector<Segment> segments_;
  CudaDevice* device_ = nullptr;  // The graphs' device, set at the first capture.
};

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_GRAPH_SEGMENTS_H_
