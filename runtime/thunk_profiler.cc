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
}

void ThunkProfiler::Add(const ThunkSequence& sequence, int parent, const std::string& role,
                        int depth, const std::function<std::string(BufferId)>& buffer_name) {
  for (const auto& thunk : sequence) {
    const int id = static_cast<int>(timings_.size());
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
    index_.emplace(thunk.get(), id);
    for (const NestedSequence& nested : thunk->nested()) {
      Add(*nested.sequence, id, nested.label, depth + 1, buffer_name);
    }
  }
}

void ThunkProfiler::Record(const Thunk* thunk, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(thunk);
  if (it == index_.end()) return;
  ThunkTiming& timing = timings_[it->second];
  ++timing.calls;
  timing.seconds += seconds;
}

void ThunkProfiler::RecordRun(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  runs_.push_back(seconds);
}

void ThunkProfiler::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  for (ThunkTiming& timing : timings_) {
    timing.calls = 0;
    timing.seconds = 0;
  }
  runs_.clear();
}

std::vector<ThunkTiming> ThunkProfiler::timings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timings_;
}

std::vector<double> ThunkProfiler::run_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

absl::Status ExecuteSequenceProfiled(const ThunkSequence& sequence, ExecutionContext& context) {
  ThunkProfiler* profiler = context.options.profiler;
  for (const auto& thunk : sequence) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = thunk->Execute(context);
    const auto end = std::chrono::steady_clock::now();
    profiler->Record(thunk.get(), std::chrono::duration<double>(end - start).count());
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace runtime
}  // namespace hloc
