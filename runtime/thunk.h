// Thunks: the steps of a compiled host program. A thunk names buffers by
// index into the execution's buffer table and does one thing: run a compiled
// kernel over its work items, copy bytes, loop, branch, call a host
// function standing in for a library (BLAS, sort, ...), or run an op no
// kernel covers in the interpreter. Sequences of thunks nest inside while
// and conditional thunks.
//
// The GPU runtime (runtime/cuda/gpu_thunk.h) has the same vocabulary in
// namespace cuda: Thunk, ThunkSequence, KernelThunk, CopyThunk, WhileThunk,
// ConditionalThunk, InterpreterThunk; what both loops and conditionals
// decide is in control_flow.h.
#ifndef HLOC_RUNTIME_THUNK_H_
#define HLOC_RUNTIME_THUNK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace runtime {

using BufferId = int32_t;

// A function run on host memory: the input buffers' bytes, then output
// buffers to fill. What an InterpreterThunk (host or GPU) calls; the
// compiler makes it (backend/common/interpreter_ops.h), the runtime knows
// nothing of what it computes.
using HostFunction = std::function<absl::Status(absl::Span<const void* const> inputs,
                                                absl::Span<void* const> outputs)>;

// The ABI of compiled kernels: `buffers` holds the kernel's buffers in the
// order the kernel was compiled for (inputs, then outputs); the call computes
// work items [begin, end). Disjoint ranges may run concurrently.
using KernelFunction = void (*)(void* const* buffers, int64_t begin, int64_t end);

class ThunkProfiler;

struct ExecuteOptions {
  // A while loop running more iterations than this is an error; <= 0: no limit.
  int64_t max_while_iterations = 0;
  // Work (items * cost per item, in the kernel compiler's estimated
  // operations) below which a kernel runs on the calling thread only. Waking
  // a parked worker and waiting for it costs several microseconds of CPU
  // (futex wake, two context switches), while vectorized code does several
  // estimated operations per nanosecond: at 2^16 a split kernel gained less
  // than the hand-off cost (gru_scan_grad's scan bodies, 2 threads: 2.5 ms
  // more CPU per run than 1 thread, and no faster), at 2^18 it breaks even.
  int64_t min_parallel_cost = int64_t{1} << 18;
  // When set, every thunk's time is added to it (thunk_profiler.h). It must
  // have been made for the program being run. Null: no timing at all (one
  // branch per thunk sequence).
  ThunkProfiler* profiler = nullptr;
};

// What a thunk may touch while it runs.
struct ExecutionContext {
  // Indexed by BufferId; inline for the usual small program, since a tiny
  // program runs in well under a microsecond and a heap allocation shows.
  absl::InlinedVector<void*, 32> buffers;
  ThreadPool* pool = nullptr;  // May be null: everything runs on the caller.
  ExecuteOptions options;
};

// What a thunk does, for profiles: the categories `hloc run --profile` sums.
enum class ThunkKind {
  kKernel, kLibraryCall, kCopy, kWhile, kConditional, kCollective, kInterpreter, kOther
};
const char* ThunkKindName(ThunkKind kind);  // "kernel", "library", "copy", "loop", ...

class Thunk;
using ThunkSequence = std::vector<std::unique_ptr<Thunk>>;

// A sequence a thunk runs (a loop's condition or body, a branch) and its label.
struct NestedSequence {
  std::string label;  // "condition", "body", "branch 0", ...
  const ThunkSequence* sequence = nullptr;
};

class Thunk {
 public:
  virtual ~Thunk() = default;
  virtual absl::Status Execute(ExecutionContext& context) const = 0;
  // One line per thunk (nested sequences indented), for dumps and tests.
  virtual void AppendTo(std::string* out, int indent) const = 0;
  // For profiles: the kind, a name (the HLO instruction's, "%fusion.3", when
  // the thunk computes one) and the sequences it runs.
  virtual ThunkKind kind() const { return ThunkKind::kOther; }
  virtual std::string name() const { return ""; }
  virtual std::vector<NestedSequence> nested() const { return {}; }
};

absl::Status ExecuteSequence(const ThunkSequence& sequence, ExecutionContext& context);
void AppendSequence(const ThunkSequence& sequence, std::string* out, int indent);

class KernelThunk : public Thunk {
 public:
  // `cost_per_item` is a rough count of operations per work item, used to
  // decide how finely to split the items over threads.
  KernelThunk(std::string name, KernelFunction function, std::vector<BufferId> buffers,
              int64_t work_items, int64_t cost_per_item)
      : name_(std::move(name)), function_(function), buffers_(std::move(buffers)),
        work_items_(work_items), cost_per_item_(cost_per_item) {}
  absl::Status Execute(ExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  ThunkKind kind() const override { return ThunkKind::kKernel; }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  KernelFunction function_;
  std::vector<BufferId> buffers_;
  int64_t work_items_;
  int64_t cost_per_item_;
};

class CopyThunk : public Thunk {
 public:
  CopyThunk(BufferId source, BufferId destination, int64_t bytes)
      : source_(source), destination_(destination), bytes_(bytes) {}
  absl::Status Execute(ExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  ThunkKind kind() const override { return ThunkKind::kCopy; }
  std::string name() const override;
  int64_t bytes() const { return bytes_; }
  BufferId source() const { return source_; }
  BufferId destination() const { return destination_; }

 private:
  BufferId source_, destination_;
  int64_t bytes_;
};

// Runs `condition`, reads the pred byte in `predicate`, and runs `body` while
// it is nonzero.
class WhileThunk : public Thunk {
 public:
  WhileThunk(std::string name, ThunkSequence condition, BufferId predicate, ThunkSequence body)
      : name_(std::move(name)), condition_(std::move(condition)), predicate_(predicate),
        body_(std::move(body)) {}
  absl::Status Execute(ExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  ThunkKind kind() const override { return ThunkKind::kWhile; }
  std::string name() const override { return name_; }
  std::vector<NestedSequence> nested() const override;

 private:
  std::string name_;
  ThunkSequence condition_;
  BufferId predicate_;
  ThunkSequence body_;
};

// Runs one branch chosen by `selector`: a pred (true -> branch 0, false ->
// branch 1) or an s32 index (out of range -> the last branch).
class ConditionalThunk : public Thunk {
 public:
  ConditionalThunk(std::string name, BufferId selector, bool selector_is_pred,
                   std::vector<ThunkSequence> branches)
      : name_(std::move(name)), selector_(selector), selector_is_pred_(selector_is_pred),
        branches_(std::move(branches)) {}
  absl::Status Execute(ExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  ThunkKind kind() const override { return ThunkKind::kConditional; }
  std::string name() const override { return name_; }
  std::vector<NestedSequence> nested() const override;

 private:
  std::string name_;
  BufferId selector_;
  bool selector_is_pred_;
  std::vector<ThunkSequence> branches_;
};

// A host function over buffer pointers: the place where library calls (BLAS,
// sort, a reference implementation of an op no kernel covers yet) plug in.
// It may split its work over `pool` (null: run on the caller only).
class LibraryCallThunk : public Thunk {
 public:
  using Function =
      std::function<absl::Status(absl::Span<void* const> buffers, ThreadPool* pool)>;
  LibraryCallThunk(std::string name, Function function, std::vector<BufferId> buffers)
      : name_(std::move(name)), function_(std::move(function)), buffers_(std::move(buffers)) {}
  absl::Status Execute(ExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  ThunkKind kind() const override { return ThunkKind::kLibraryCall; }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  Function function_;
  std::vector<BufferId> buffers_;
};

// An op no kernel or library routine covers, run by `function` (the
// interpreter) on the input buffers into the output buffers. `reason` says
// why it runs there; it shows in dumps.
class InterpreterThunk : public Thunk {
 public:
  InterpreterThunk(std::string name, std::string reason, HostFunction function,
                   std::vector<BufferId> inputs, std::vector<BufferId> outputs)
      : name_(std::move(name)), reason_(std::move(reason)), function_(std::move(function)),
        inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}
  absl::Status Execute(ExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  ThunkKind kind() const override { return ThunkKind::kInterpreter; }
  std::string name() const override { return name_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string name_;
  std::string reason_;
  HostFunction function_;
  std::vector<BufferId> inputs_, outputs_;
};

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_THUNK_H_
