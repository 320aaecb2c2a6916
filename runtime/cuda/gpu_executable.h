// A compiled GPU program: the buffer table (parameters, constants,
// temporaries), the thunk sequence, and the buffers holding the outputs.
//
// Device memory is one allocation made at Load, in three regions:
//   [ constants | parameters | temporaries (arena) ]
// Constants are uploaded once at Load; parameters are copied in at each
// Execute; temporaries (outputs included) share the arena as the buffer
// assignment (runtime/buffer_assignment.h) places them by live range, a
// group of buffers that share bytes (runtime/storage_plan.h) as one, and
// an output aliased with a parameter in that parameter's region.
// Placement is computed at Create, without a device, so a plan can be
// printed and its memory reported on any machine.
//
// With `use_cuda_graph`, runs of thunks that never read back to the host
// are captured into CUDA graphs on the first run and replayed on later runs
// (graph_segments.h): a program with no while, conditional or host call (an
// interpreter op or a registered custom call) becomes one graph; one with
// such steps becomes a graph per run of steps between them, and a loop's
// body a graph replayed every iteration. Addresses do not move between
// runs, so the graphs stay valid. A step that reads back runs directly
// between graphs: a host call, a loop's predicate, and an NCCL collective
// under the watchdog (collective_timeout, nccl_clique.h), which waits on the
// host for each collective to finish.
#ifndef HLOC_RUNTIME_CUDA_GPU_EXECUTABLE_H_
#define HLOC_RUNTIME_CUDA_GPU_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/buffer_assignment.h"
#include "runtime/cuda/gpu_thunk.h"
#include "runtime/cuda/graph_segments.h"
#include "runtime/executable.h"

namespace hloc {
namespace cuda {

struct GpuProgramSpec {
  // Same meaning as for host programs (runtime/executable.h), `shares`
  // included; `is_output` is ignored (outputs live in device memory and are
  // copied to the host after the run).
  std::vector<runtime::BufferSpec> buffers;
  ThunkSequence thunks;
  std::vector<BufferId> outputs;
  // (output j, parameter i): output j is computed in parameter i's device
  // memory (runtime::ProgramSpec::output_parameter_aliases says when the
  // compiler may ask for it), which saves the output's bytes.
  std::vector<std::pair<int64_t, int64_t>> output_parameter_aliases;
};

struct GpuLoadOptions {
  bool autotune = true;
  // Autotuning cache; null: none (tune every time when autotuning).
  AutotuneCache* autotune_cache = nullptr;
  // Capture the thunks into a CUDA graph on the first run (when possible).
  bool use_cuda_graph = true;
  // Steps with a library and a generated alternative (alternatives_thunk.h):
  // how to choose, and the timer (null: time on the device).
  AlternativeSelection alternatives = AlternativeSelection::kTimed;
  SequenceTimer time_sequence;
  // The device's rank and the NCCL clique of the program's devices
  // (nccl_clique.h), for programs with collectives; null: a clique of the
  // device alone, made when a collective thunk is initialized.
  std::shared_ptr<NcclRank> collectives;
  // How long each collective (and communicator init) may wait for its
  // peers before the NCCL watchdog aborts the clique and the run fails with
  // DeadlineExceeded (nccl_clique.h). A program with a watched collective
  // runs its thunks directly, not as a CUDA graph (the watchdog must see
  // each collective finish). <= 0: no watchdog (NCCL may wait forever).
  absl::Duration collective_timeout = kDefaultCollectiveTimeout;
};

class GpuExecutable {
 public:
  // Places buffers; checks ids and sizes. Needs no device.
  static absl::StatusOr<std::unique_ptr<GpuExecutable>> Create(GpuProgramSpec spec);
  ~GpuExecutable();

  // Allocates device memory, uploads constants, loads kernels and makes
  // library plans (autotuning). Once per executable.
  absl::Status Load(CudaDevice* device, const GpuLoadOptions& options = {});

  // Copies parameters in, runs the thunks, copies outputs out. `parameters[i]`
  // holds parameter_size(i) bytes, `outputs[j]` receives output_size(j).
  // Runs are serialized (one arena).
  absl::Status Execute(absl::Span<const void* const> parameters, absl::Span<void* const> outputs,
                       const GpuExecuteOptions& options = {});
  // The same where some pointers are device memory of this executable's
  // device (a CUdeviceptr cast to a pointer): a nonzero
  // `parameter_on_device[i]` / `output_on_device[j]` makes that copy a
  // device-to-device one, with no trip through the host. An empty span
  // means all host.
  absl::Status Execute(absl::Span<const void* const> parameters, absl::Span<void* const> outputs,
                       absl::Span<const char> parameter_on_device,
                       absl::Span<const char> output_on_device,
                       const GpuExecuteOptions& options = {});

  // One run on the parameters left in place by the previous Execute,
  // waiting for the device; outputs stay on the device. What a caller that
  // keeps its arguments on the device waits for per step (gpu_bench's wall
  // time).
  absl::Status RunInPlace(const GpuExecuteOptions& options = {});

  // Milliseconds of the device work of one run (parameters already in
  // place from the previous Execute; graph launch when captured).
  absl::StatusOr<double> TimeRun(const GpuExecuteOptions& options = {});
  // Milliseconds of `runs` back-to-back runs between one pair of events, for
  // runs shorter than the launch and event overhead of a single TimeRun.
  absl::StatusOr<double> TimeRuns(int runs, const GpuExecuteOptions& options = {});

  int64_t num_parameters() const { return static_cast<int64_t>(parameter_sizes_.size()); }
  int64_t parameter_size(int64_t i) const { return parameter_sizes_[i]; }
  int64_t num_outputs() const { return static_cast<int64_t>(spec_.outputs.size()); }
  int64_t output_size(int64_t j) const { return spec_.buffers[spec_.outputs[j]].size; }
  int64_t device_bytes() const { return total_bytes_; }
  // The buffer whose bytes buffer `id` uses (itself unless it shares).
  BufferId storage_of(BufferId id) const { return storage_root_[id]; }
  // Bytes of temporaries that live in another buffer's bytes.
  int64_t shared_bytes() const { return shared_bytes_; }
  // The parameter output j lives in, or -1.
  int64_t aliased_parameter(int64_t j) const { return aliased_parameter_[j]; }
  bool graph_capturable() const { return !SequenceReadsBackToHost(spec_.thunks); }
  // The whole program replays as one CUDA graph.
  bool uses_graph() const { return segments_ != nullptr && segments_->is_one_graph(); }
  // Graphs captured and launched so far, at every level (loop bodies too).
  GraphStats graph_stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return graph_stats_;
  }
  const std::vector<std::string>& load_log() const { return load_log_; }

  std::string ThunksToString() const;
  // Region sizes and the arena placement of every temporary.
  std::string MemoryReport() const;

 private:
  explicit GpuExecutable(GpuProgramSpec spec) : spec_(std::move(spec)) {}
  absl::Status RunThunks(const GpuExecuteOptions& options);
  GpuProgramSpec spec_;
  runtime::ArenaAssignment arena_;
  std::vector<int64_t> offsets_;  // Per buffer, from the start of the allocation.
  std::vector<int64_t> parameter_sizes_;
  std::vector<size_t> temp_ids_;  // Group roots in the arena, in arena_ order.
  std::vector<runtime::BufferInterval> arena_buffers_;  // Their group intervals.
  std::vector<BufferId> storage_root_;
  std::vector<int64_t> aliased_parameter_;
  int64_t shared_bytes_ = 0;
  int64_t constants_bytes_ = 0, parameters_bytes_ = 0, total_bytes_ = 0;

  std::mutex mu_;
  CudaDevice* device_ = nullptr;
  CUdeviceptr base_ = 0;
  std::vector<CUdeviceptr> addresses_;
  bool use_graph_ = false;
  std::unique_ptr<GraphSegments> segments_;  // The top-level sequence's.
  GraphStats graph_stats_;
  std::vector<std::string> load_log_;
};

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_GPU_EXECUTABLE_H_
