// The steps of a compiled GPU program. Like the host thunks
// (runtime/thunk.h) they name buffers by index into the program's buffer
// table; here each index resolves to a device address. Kernel launches,
// library calls and device copies are queued on the device's stream; while
// loops and conditionals read their predicate or branch index back to the
// host (a synchronization) before choosing what to queue next.
//
// A thunk is made without a device (the compiler's plan), printed for
// dumps and tests, then Initialize'd once on a device (modules loaded,
// library plans made and autotuned) before it runs.
//
// The vocabulary is the host runtime's, in namespace cuda: Thunk,
// ThunkSequence, KernelThunk, CopyThunk, WhileThunk, ConditionalThunk,
// InterpreterThunk (plus CustomCallThunk, the other host call, and the
// library calls GemmThunk, ConvThunk and alternatives_thunk.h's
// LibraryOrGeneratedThunk). Loops and conditionals
// decide as the host's do (runtime/control_flow.h). The former names
// (GpuThunk, KernelLaunchThunk, DeviceCopyThunk, ...) remain as aliases.
#ifndef HLOC_RUNTIME_CUDA_GPU_THUNK_H_
#define HLOC_RUNTIME_CUDA_GPU_THUNK_H_

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "runtime/cuda/autotune_cache.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cudnn_conv.h"
#include "runtime/cuda/library_call_configs.h"
#include "runtime/thunk.h"

namespace hloc {
namespace cuda {

using BufferId = int32_t;

struct GpuExecuteOptions {
  // A while loop running more iterations than this is an error; <= 0: none.
  int64_t max_while_iterations = 0;
};

// How long a collective waits for its peers before the NCCL watchdog
// aborts it (nccl_clique.h), unless GpuLoadOptions says otherwise.
inline constexpr absl::Duration kDefaultCollectiveTimeout = absl::Seconds(300);

class Thunk;
class GraphSegments;  // graph_segments.h
struct NcclRank;  // nccl_clique.h
using ThunkSequence = std::vector<std::unique_ptr<Thunk>>;
struct GpuInitContext;

// Which alternative a step with two (a library call and generated kernels,
// see alternatives_thunk.h) runs: the faster when timed (cached choice
// first; the library when there is neither a cached choice nor autotuning),
// or one of them regardless (tests, benchmarks).
enum class AlternativeSelection { kTimed, kLibrary, kGenerated };

// Milliseconds one run of `sequence` (already initialized) takes on the
// device; `what` names it for messages ("%gemm.3 generated"). Tests inject
// their own to choose without a GPU.
using SequenceTimer = std::function<absl::StatusOr<double>(
    absl::string_view what, const ThunkSequence& sequence, GpuInitContext& context)>;

// What Initialize may use: the device, library handles (made on first use)
// and tuning settings.
struct GpuInitContext {
  CudaDevice* device = nullptr;
  std::vector<CUdeviceptr> buffers;  // Indexed by BufferId (for autotuning runs).
  bool autotune = true;
  AutotuneCache* autotune_cache = nullptr;
  std::shared_ptr<CublasLtHandle> cublaslt;  // Lazily created.
  std::shared_ptr<CudnnHandle> cudnn;        // Lazily created.
  std::vector<std::string>* log = nullptr;   // Library choices, one line each.
  std::string device_name;                   // Autotuning keys (device->info().name).
  AlternativeSelection alternatives = AlternativeSelection::kTimed;
  SequenceTimer time_sequence;  // Null: TimeSequenceOnDevice (alternatives_thunk.h).
  // The device's place among the program's devices (collective thunks);
  // null: the first collective thunk makes a clique of this device alone.
  std::shared_ptr<NcclRank> collectives;
  // The NCCL watchdog's timeout for each collective (<= 0: none).
  absl::Duration collective_timeout = kDefaultCollectiveTimeout;
};

// What replaying sequences as CUDA graphs (graph_segments.h) did.
struct GraphStats {
  int64_t captured = 0;          // Segments captured into a graph.
  int64_t launches = 0;          // Graph launches.
  int64_t capture_failures = 0;  // Segments that refused capture (run directly).
};

struct GpuExecutionContext {
  CudaDevice* device = nullptr;
  std::vector<CUdeviceptr> buffers;  // Indexed by BufferId.
  GpuExecuteOptions options;
  // Replay runs of steps as CUDA graphs where possible (graph_segments.h);
  // false: every step runs directly.
  bool graphs = false;
  GraphStats* graph_stats = nullptr;       // May be null.
  std::vector<std::string>* log = nullptr;  // Capture failures; may be null.
};

class Thunk {
 public:
  virtual ~Thunk() = default;
  virtual absl::Status Initialize(GpuInitContext& context) = 0;
  virtual absl::Status Execute(GpuExecutionContext& context) const = 0;
  virtual void AppendTo(std::string* out, int indent) const = 0;
  // True when running synchronizes with the host (so the sequence cannot
  // be captured into a CUDA graph).
  virtual bool ReadsBackToHost() const { return false; }
};

absl::Status InitializeSequence(ThunkSequence& sequence, GpuInitContext& context);
absl::Status ExecuteSequence(const ThunkSequence& sequence, GpuExecutionContext& context);
void AppendSequence(const ThunkSequence& sequence, std::string* out, int indent);
bool SequenceReadsBackToHost(const ThunkSequence& sequence);

// Launches a compiled kernel over `buffers` (inputs then outputs, the
// kernel's parameter order).
class KernelThunk : public Thunk {
 public:
  KernelThunk(std::string label, std::shared_ptr<const KernelImage> image,
                    LaunchConfig launch, std::vector<BufferId> buffers, std::string strategy)
      : label_(std::move(label)),
        image_(std::move(image)),
        launch_(launch),
        buffers_(std::move(buffers)),
        strategy_(std::move(strategy)) {}
  absl::Status Initialize(GpuInitContext& context) override;
  absl::Status Execute(GpuExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  const KernelImage& image() const { return *image_; }
  const LaunchConfig& launch() const { return launch_; }
  const std::vector<BufferId>& buffers() const { return buffers_; }

 private:
  std::string label_;
  std::shared_ptr<const KernelImage> image_;
  LaunchConfig launch_;
  std::vector<BufferId> buffers_;
  std::string strategy_;
  CUfunction function_ = nullptr;
};

class CopyThunk : public Thunk {
 public:
  CopyThunk(BufferId source, BufferId destination, int64_t bytes)
      : source_(source), destination_(destination), bytes_(bytes) {}
  absl::Status Initialize(GpuInitContext&) override { return absl::OkStatus(); }
  absl::Status Execute(GpuExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;

 private:
  BufferId source_, destination_;
  int64_t bytes_;
};

// A library call: its label, configuration and buffers (operands, output,
// workspace last), and the runner Initialize makes. The gemm and convolution
// thunks differ only in the library behind them.
template <typename Config, typename Runner>
class LibraryCallThunkBase : public Thunk {
 public:
  LibraryCallThunkBase(std::string label, Config config, std::vector<BufferId> buffers,
                       int64_t workspace_bytes)
      : label_(std::move(label)),
        config_(std::move(config)),
        buffers_(std::move(buffers)),
        workspace_bytes_(workspace_bytes) {}
  const Config& config() const { return config_; }
  const std::vector<BufferId>& buffers() const { return buffers_; }

 protected:
  std::string label_;
  Config config_;
  std::vector<BufferId> buffers_;
  int64_t workspace_bytes_;
  std::unique_ptr<Runner> runner_;
};

// A cuBLASLt matmul. Buffers: lhs, rhs, [bias], output, workspace.
class GemmThunk : public LibraryCallThunkBase<GemmConfig, GemmRunner> {
 public:
  using LibraryCallThunkBase::LibraryCallThunkBase;
  absl::Status Initialize(GpuInitContext& context) override;
  absl::Status Execute(GpuExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;

 private:
  GemmBuffers Pointers(const std::vector<CUdeviceptr>& table) const;
};

// A cuDNN forward convolution. Buffers: input, filter, [bias], output,
// workspace.
class ConvThunk : public LibraryCallThunkBase<ConvConfig, ConvRunner> {
 public:
  using LibraryCallThunkBase::LibraryCallThunkBase;
  absl::Status Initialize(GpuInitContext& context) override;
  absl::Status Execute(GpuExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;

 private:
  ConvBuffers Pointers(const std::vector<CUdeviceptr>& table) const;
};

// Runs `condition`, copies the pred byte in `predicate` to the host, and
// runs `body` while it is nonzero.
class WhileThunk : public Thunk {
 public:
  WhileThunk(std::string label, ThunkSequence condition, BufferId predicate,
                ThunkSequence body)
      : label_(std::move(label)),
        condition_(std::move(condition)),
        predicate_(predicate),
        body_(std::move(body)) {}
  ~WhileThunk() override;
  absl::Status Initialize(GpuInitContext& context) override;
  absl::Status Execute(GpuExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  bool ReadsBackToHost() const override { return true; }

 private:
  std::string label_;
  ThunkSequence condition_;
  BufferId predicate_;
  ThunkSequence body_;
  // Replays of condition_ and body_ (made at Initialize; the executable runs
  // one sequence at a time, so Execute may capture into them). Shared
  // pointers: GraphSegments is incomplete here.
  std::shared_ptr<GraphSegments> condition_graphs_, body_graphs_;
};

// Copies the selector to the host and runs one branch: a pred (true ->
// branch 0, false -> branch 1) or an s32 index (out of range -> the last).
class ConditionalThunk : public Thunk {
 public:
  ConditionalThunk(std::string label, BufferId selector, bool selector_is_pred,
                      std::vector<ThunkSequence> branches)
      : label_(std::move(label)),
        selector_(selector),
        selector_is_pred_(selector_is_pred),
        branches_(std::move(branches)) {}
  ~ConditionalThunk() override;
  absl::Status Initialize(GpuInitContext& context) override;
  absl::Status Execute(GpuExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  bool ReadsBackToHost() const override { return true; }

 private:
  std::string label_;
  BufferId selector_;
  bool selector_is_pred_;
  std::vector<ThunkSequence> branches_;
  std::vector<std::shared_ptr<GraphSegments>> branch_graphs_;  // As WhileThunk's.
};

// A step run on the host: synchronizes (the stream's earlier work is
// done), copies `inputs` to host memory, calls `function` on them (inputs,
// then output buffers of `output_bytes` each), copies the outputs back and
// synchronizes again. The compiler supplies the function (the runtime knows
// nothing of HLO). Reads back to the host, so a program with one is not
// captured into a CUDA graph: it runs its thunks one by one. The two kinds
// below differ only in what they print and how an error reads.
class HostCallThunk : public Thunk {
 public:
  using Function = runtime::HostFunction;
  absl::Status Initialize(GpuInitContext& context) override;
  absl::Status Execute(GpuExecutionContext& context) const override;
  bool ReadsBackToHost() const override { return true; }

 protected:
  // `error_prefix` goes before the function's error message.
  HostCallThunk(std::string label, std::string error_prefix, std::vector<BufferId> inputs,
                std::vector<int64_t> input_bytes, std::vector<BufferId> outputs,
                std::vector<int64_t> output_bytes, Function function)
      : label_(std::move(label)),
        error_prefix_(std::move(error_prefix)),
        inputs_(std::move(inputs)),
        input_bytes_(std::move(input_bytes)),
        outputs_(std::move(outputs)),
        output_bytes_(std::move(output_bytes)),
        function_(std::move(function)) {}
  // "inputs=[..] outputs=[..]".
  std::string BuffersToString() const;

  std::string label_;

 private:
  std::string error_prefix_;
  std::vector<BufferId> inputs_;
  std::vector<int64_t> input_bytes_;
  std::vector<BufferId> outputs_;
  std::vector<int64_t> output_bytes_;
  Function function_;
};

// An interpreter op (an op with no GPU kernel) run on the host; the reason
// it runs there shows in dumps and errors.
class InterpreterThunk : public HostCallThunk {
 public:
  InterpreterThunk(std::string label, std::string reason, std::vector<BufferId> inputs,
                   std::vector<int64_t> input_bytes, std::vector<BufferId> outputs,
                   std::vector<int64_t> output_bytes, Function function)
      : HostCallThunk(label, absl::StrCat(label, " (on the host): "), std::move(inputs),
                      std::move(input_bytes), std::move(outputs), std::move(output_bytes),
                      std::move(function)),
        reason_(std::move(reason)) {}
  void AppendTo(std::string* out, int indent) const override;
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// A custom call to a function the embedder registered for `target`
// (backend/common/registered_custom_calls.h). Its errors already name the
// instruction and the target, and pass through unchanged.
class CustomCallThunk : public HostCallThunk {
 public:
  CustomCallThunk(std::string label, std::string target, std::vector<BufferId> inputs,
                  std::vector<int64_t> input_bytes, std::vector<BufferId> outputs,
                  std::vector<int64_t> output_bytes, Function function)
      : HostCallThunk(std::move(label), "", std::move(inputs), std::move(input_bytes),
                      std::move(outputs), std::move(output_bytes), std::move(function)),
        target_(std::move(target)) {}
  void AppendTo(std::string* out, int indent) const override;
  const std::string& target() const { return target_; }

 private:
  std::string target_;
};

// The former names.
using GpuThunk = Thunk;
using GpuThunkSequence = ThunkSequence;
using KernelLaunchThunk = KernelThunk;
using DeviceCopyThunk = CopyThunk;
using GpuWhileThunk = WhileThunk;
using GpuConditionalThunk = ConditionalThunk;
using HostCallbackThunk = InterpreterThunk;

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_GPU_THUNK_H_
