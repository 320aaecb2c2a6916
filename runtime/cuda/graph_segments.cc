// GraphSegments (see graph_segments.h).
#include "runtime/cuda/graph_segments.h"

#include "absl/strings/str_cat.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/status_util.h"

namespace hloc {
namespace cuda {

GraphSegments::GraphSegments(const ThunkSequence* sequence) : sequence_(sequence) {
  const ThunkSequence& steps = *sequence_;
  size_t i = 0;
  while (i < steps.size()) {
    Segment segment;
    segment.begin = i;
    if (steps[i]->ReadsBackToHost()) {
      segment.end = ++i;
    } else {
      while (i < steps.size() && !steps[i]->ReadsBackToHost()) ++i;
      segment.end = i;
      segment.capturable = segment.end - segment.begin >= 2;
    }
    segments_.push_back(segment);
  }
}

GraphSegments::~GraphSegments() {
  if (device_ == nullptr) return;
  for (Segment& segment : segments_) device_->DestroyGraph(segment.graph);
}

int64_t GraphSegments::capturable_segments() const {
  int64_t n = 0;
  for (const Segment& segment : segments_) n += segment.capturable ? 1 : 0;
  return n;
}

bool GraphSegments::is_one_graph() const {
  return segments_.size() == 1 && segments_[0].graph != nullptr;
}

absl::Status GraphSegments::Execute(GpuExecutionContext& context) {
  const ThunkSequence& steps = *sequence_;
  auto run_directly = [&](const Segment& segment) -> absl::Status {
    for (size_t i = segment.begin; i < segment.end; ++i) {
      HLOC_CUDA_RETURN_IF_ERROR(steps[i]->Execute(context));
    }
    return absl::OkStatus();
  };
  for (Segment& segment : segments_) {
    if (!context.graphs || !segment.capturable || segment.capture_failed) {
      HLOC_CUDA_RETURN_IF_ERROR(run_directly(segment));
      continue;
    }
    if (segment.graph == nullptr) {
      // Graphs of one sequence all live on one device (the executable's).
      if (device_ != nullptr && device_ != context.device) {
        return absl::InternalError("a thunk sequence ran on two devices");
      }
      absl::StatusOr<CUgraphExec> graph =
          context.device->CaptureGraph([&] { return run_directly(segment); });
      if (!graph.ok()) {
        // Some library calls refuse capture: this segment runs directly from
        // now on (capture ran nothing, so run it now).
        segment.capture_failed = true;
        if (context.graph_stats != nullptr) ++context.graph_stats->capture_failures;
        if (context.log != nullptr) {
          context.log->push_back(absl::StrCat("CUDA graph capture of steps [", segment.begin,
                                              ", ", segment.end, ") failed, running them: ",
                                              graph.status().message()));
        }
        HLOC_CUDA_RETURN_IF_ERROR(run_directly(segment));
        continue;
      }
      device_ = context.device;
      segment.graph = *graph;
      if (context.graph_stats != nullptr) ++context.graph_stats->captured;
    }
    HLOC_CUDA_RETURN_IF_ERROR(context.device->LaunchGraph(segment.graph));
    if (context.graph_stats != nullptr) ++context.graph_stats->launches;
  }
  return absl::OkStatus();
}

}  // namespace cuda
}  // namespace hloc
