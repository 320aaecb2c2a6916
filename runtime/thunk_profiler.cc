// ThunkProfiler (see thunk_profiler.h) and the timed sequence loop.
#include "runtime/thunk_profiler.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace hloc {
namespace runtime {

ThunkProfiler::ThunkProfiler(const ThunkSequence& program,
                             std::function<std::string(BufferId)> buffer_name)
    : program_(&program) {
  Add(program, -1, "", 0, buffer_name);
  calls_.reset(new std::atomic<int64_t>[timings_.size()]);
  nanoseconds_.reset(new std::atomic<int64_t>[timings_.size()]);
  for (size_t i = 0; i < timings_.size(); ++i) {
    calls_[i] = 0;
    nanoseconds_[i] = 0;
  }
}

void ThunkProfiler::Add(const ThunkSequence& sequence, int parent, const std::string& role,
                        int depth, const std::function<std::string(BufferId)>& buffer_name) {
  // Collected here and stored last: the nested calls below grow sequences_,
  // which moves its values.
  std::vector<int> ids;
  for (const auto& thunk : sequence) {
    const int id = static_cast<int>(timings_.size());
    ids.push_back(id);
    ThunkTiming timing;
    timing.thunk = thunk.get();
    timing.kind = thunk->kind();
    timing.name = thunk->name();
    timing.parent = parent;
    timing.role = role;
    timing.depth = depth;
    if (const auto* copy = dynamic_cast<const CopyThunk*>(thunk.get())) {
      timing.bytes = copy->bytes();
      if (buffer_name) {
        const std::string from = buffer_name(copy->source());
        const std::string to = buffer_name(copy->destination());
        if (!from.empty() && !to.empty()) timing.name = absl::StrCat("copy ", from, " -> ", to);
      }
    }
    timings_.push_back(std::move(timing));
    for (const NestedSequence& nested : thunk->nested()) {
      Add(*nested.sequence, id, nested.label, depth + 1, buffer_name);
    }
  }
  sequences_[&sequence] = std::move(ids);
}

const std::vector<int>* ThunkProfiler::EntriesOf(const ThunkSequence& sequence) const {
  auto it = sequences_.find(&sequence);
  return it == sequences_.end() ? nullptr : &it->second;
}

void ThunkProfiler::RecordRun(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  runs_.push_back(seconds);
}

void ThunkProfiler::Clear() {
  for (size_t i = 0; i < timings_.size(); ++i) {
    calls_[i] = 0;
    nanoseconds_[i] = 0;
  }
  std::lock_guard<std::mutex> lock(mu_);
  runs_.clear();
}

std::vector<ThunkTiming> ThunkProfiler::timings() const {
  std::vector<ThunkTiming> out = timings_;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].calls = calls_[i].load(std::memory_order_relaxed);
    out[i].seconds = static_cast<double>(nanoseconds_[i].load(std::memory_order_relaxed)) * 1e-9;
  }
  return out;
}

std::vector<double> ThunkProfiler::run_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

absl::Status ExecuteSequenceProfiled(const ThunkSequence& sequence, ExecutionContext& context) {
  ThunkProfiler* profiler = context.options.profiler;
  const std::vector<int>* entries = profiler->EntriesOf(sequence);
  for (size_t i = 0; i < sequence.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = sequence[i]->Execute(context);
    const auto end = std::chrono::steady_clock::now();
    if (entries != nullptr) {
      profiler->Record((*entries)[i],
                       std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace runtime
}  // namespace hloc
