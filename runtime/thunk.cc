// Execution and printing of each thunk kind.
#include "runtime/thunk.h"

#include <algorithm>
#include <cstring>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/control_flow.h"

namespace hloc {
namespace runtime {
namespace {

void Indent(std::string* out, int indent) { out->append(static_cast<size_t>(indent) * 2, ' '); }

std::string BufferList(absl::Span<const BufferId> buffers) {
  return absl::StrCat("(", absl::StrJoin(buffers, ", ", [](std::string* out, BufferId id) {
                        absl::StrAppend(out, "b", id);
                      }), ")");
}

}  // namespace

const char* ThunkKindName(ThunkKind kind) {
  switch (kind) {
    case ThunkKind::kKernel: return "kernel";
    case ThunkKind::kLibraryCall: return "library";
    case ThunkKind::kCopy: return "copy";
    case ThunkKind::kWhile: return "loop";
    case ThunkKind::kConditional: return "conditional";
    case ThunkKind::kCollective: return "collective";
    case ThunkKind::kInterpreter: return "interpreter";
    case ThunkKind::kOther: return "other";
  }
  return "other";
}

// Defined in thunk_profiler.cc: the same loop with each thunk timed.
absl::Status ExecuteSequenceProfiled(const ThunkSequence& sequence, ExecutionContext& context);

absl::Status ExecuteSequence(const ThunkSequence& sequence, ExecutionContext& context) {
  if (context.options.profiler != nullptr) return ExecuteSequenceProfiled(sequence, context);
  for (const auto& thunk : sequence) {
    absl::Status status = thunk->Execute(context);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

void AppendSequence(const ThunkSequence& sequence, std::string* out, int indent) {
  for (const auto& thunk : sequence) thunk->AppendTo(out, indent);
}

absl::Status KernelThunk::Execute(ExecutionContext& context) const {
  // The kernel's buffers in its order; on the stack for the usual few, since
  // small kernels run in microseconds and a heap allocation per call shows.
  absl::InlinedVector<void*, 16> pointers(buffers_.size());
  for (size_t i = 0; i < buffers_.size(); ++i) pointers[i] = context.buffers[buffers_[i]];
  void* const* args = pointers.data();
  const int64_t cost = std::max<int64_t>(cost_per_item_, 1);
  if (context.pool == nullptr || context.pool->num_threads() == 1 ||
      work_items_ * cost < context.options.min_parallel_cost) {
    if (work_items_ > 0) function_(args, 0, work_items_);
    return absl::OkStatus();
  }
  // Chunks of at least min_parallel_cost / 4 operations, so thread hand-off
  // stays small next to the work.
  const int64_t grain = std::max<int64_t>(1, context.options.min_parallel_cost / 4 / cost);
  context.pool->ParallelFor(work_items_, grain,
                            [&](int64_t begin, int64_t end) { function_(args, begin, end); });
  return absl::OkStatus();
}

void KernelThunk::AppendTo(std::string* out, int indent) const {
  Indent(out, indent);
  absl::StrAppend(out, "kernel ", name_, BufferList(buffers_), " items=", work_items_,
                  " cost=", cost_per_item_, "\n");
}

absl::Status CopyThunk::Execute(ExecutionContext& context) const {
  // Buffers that share storage (an update in place) need no copy.
  void* destination = context.buffers[destination_];
  const void* source = context.buffers[source_];
  if (bytes_ <= 0 || source == destination) return absl::OkStatus();
  // Big copies of distinct buffers go over the pool in chunks, as a kernel
  // writing the same bytes would.
  constexpr int64_t kChunk = int64_t{256} << 10;
  const uint8_t* from = static_cast<const uint8_t*>(source);
  uint8_t* to = static_cast<uint8_t*>(destination);
  const bool overlap = from < to + bytes_ && to < from + bytes_;
  if (context.pool == nullptr || context.pool->num_threads() == 1 || bytes_ < 4 * kChunk ||
      overlap) {
    std::memmove(destination, source, bytes_);
    return absl::OkStatus();
  }
  context.pool->ParallelFor((bytes_ + kChunk - 1) / kChunk, 1, [&](int64_t begin, int64_t end) {
    const int64_t first = begin * kChunk;
    const int64_t last = std::min(end * kChunk, bytes_);
    std::memcpy(to + first, from + first, last - first);
  });
  return absl::OkStatus();
}

std::string CopyThunk::name() const { return absl::StrCat("copy b", source_, " -> b", destination_); }

void CopyThunk::AppendTo(std::string* out, int indent) const {
  Indent(out, indent);
  absl::StrAppend(out, "copy b", source_, " -> b", destination_, " (", bytes_, " B)\n");
}

absl::Status WhileThunk::Execute(ExecutionContext& context) const {
  return RunWhileLoop(
      name_, context.options.max_while_iterations,
      [&] { return ExecuteSequence(condition_, context); },
      [&]() -> absl::StatusOr<bool> {
        return *static_cast<const uint8_t*>(context.buffers[predicate_]) != 0;
      },
      [&] { return ExecuteSequence(body_, context); });
}

std::vector<NestedSequence> WhileThunk::nested() const {
  return {{"condition", &condition_}, {"body", &body_}};
}

void WhileThunk::AppendTo(std::string* out, int indent) const {
  Indent(out, indent);
  absl::StrAppend(out, "while ", name_, " {\n");
  Indent(out, indent + 1);
  out->append("condition:\n");
  AppendSequence(condition_, out, indent + 2);
  Indent(out, indent + 1);
  absl::StrAppend(out, "predicate b", predicate_, "\n");
  Indent(out, indent + 1);
  out->append("body:\n");
  AppendSequence(body_, out, indent + 2);
  Indent(out, indent);
  out->append("}\n");
}

absl::Status ConditionalThunk::Execute(ExecutionContext& context) const {
  if (branches_.empty()) return absl::OkStatus();
  int32_t selector = 0;
  std::memcpy(&selector, context.buffers[selector_], selector_is_pred_ ? 1 : sizeof(selector));
  return ExecuteSequence(branches_[SelectBranch(selector, selector_is_pred_, branches_.size())],
                         context);
}

std::vector<NestedSequence> ConditionalThunk::nested() const {
  std::vector<NestedSequence> out;
  for (size_t i = 0; i < branches_.size(); ++i) {
    out.push_back({absl::StrCat("branch ", i), &branches_[i]});
  }
  return out;
}

void ConditionalThunk::AppendTo(std::string* out, int indent) const {
  Indent(out, indent);
  absl::StrAppend(out, "conditional ", name_, " on b", selector_,
                  selector_is_pred_ ? " (pred)" : " (index)", " {\n");
  for (size_t i = 0; i < branches_.size(); ++i) {
    Indent(out, indent + 1);
    absl::StrAppend(out, "branch ", i, ":\n");
    AppendSequence(branches_[i], out, indent + 2);
  }
  Indent(out, indent);
  out->append("}\n");
}

absl::Status LibraryCallThunk::Execute(ExecutionContext& context) const {
  absl::InlinedVector<void*, 16> pointers(buffers_.size());
  for (size_t i = 0; i < buffers_.size(); ++i) pointers[i] = context.buffers[buffers_[i]];
  return function_(pointers, context.pool);
}

void LibraryCallThunk::AppendTo(std::string* out, int indent) const {
  Indent(out, indent);
  absl::StrAppend(out, "library-call ", name_, BufferList(buffers_), "\n");
}

absl::Status InterpreterThunk::Execute(ExecutionContext& context) const {
  absl::InlinedVector<const void*, 8> inputs(inputs_.size());
  absl::InlinedVector<void*, 4> outputs(outputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) inputs[i] = context.buffers[inputs_[i]];
  for (size_t i = 0; i < outputs_.size(); ++i) outputs[i] = context.buffers[outputs_[i]];
  absl::Status status = function_(inputs, outputs);
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(name_, " (interpreter): ", status.message()));
}

void InterpreterThunk::AppendTo(std::string* out, int indent) const {
  Indent(out, indent);
  absl::StrAppend(out, "interpreter ", name_, BufferList(inputs_), " -> ", BufferList(outputs_),
                  " (", reason_, ")\n");
}

}  // namespace runtime
}  // namespace hloc
