// CUPTI activity tracing of benchmark steps (see cupti_trace.h).
#include "bench/cupti_trace.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cupti_activity.h"
#include "cupti_result.h"
#include "cupti_version.h"

namespace hloc {
namespace gpu_bench {
namespace {

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The process-wide collector CUPTI's buffer callbacks write into (they take
// no user pointer). Records are decoded as buffers complete, so a buffer
// is freed at once.
struct Collector {
  std::mutex trace_mu;  // Held by TraceSteps: one trace in the process at a time.
  std::mutex mu;        // Guards the fields below.
  std::vector<DeviceActivity> activities;
  uint64_t unknown_records = 0;
  // Set by Open: cuptiActivityGetNextRecord from the loaded library.
  decltype(&cuptiActivityGetNextRecord) get_next_record = nullptr;
};

Collector& TheCollector() {
  static Collector* const collector = new Collector();  // Lives for the process.
  return *collector;
}

constexpr size_t kBufferBytes = 4 << 20;
constexpr size_t kBufferAlignment = 8;  // ACTIVITY_RECORD_ALIGNMENT

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // As many as fit.
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Collector& c = TheCollector();
  std::lock_guard<std::mutex> lock(c.mu);
  CUpti_Activity* record = nullptr;
  while (buffer != nullptr && c.get_next_record != nullptr &&
         c.get_next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
    DeviceActivity a;
    // The record layouts of cupti_activity.h (CUDA 13); start and end come
    // right after the few leading fields in every version of these records.
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        a = {DeviceActivity::Kind::kKernel, k->start, k->end};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        a = {DeviceActivity::Kind::kMemcpy, m->start, m->end};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        a = {DeviceActivity::Kind::kMemset, m->start, m->end};
        break;
      }
      default:
        ++c.unknown_records;
        continue;
    }
    if (a.end_ns >= a.start_ns && a.start_ns != 0) c.activities.push_back(a);
  }
  std::free(buffer);
}

// The activity kinds traced: what XLA's CUPTI tracer shows as GPU events.
constexpr CUpti_ActivityKind kTracedKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

const char* KindName(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return "MEMSET";
    default:
      return "?";
  }
}

}  // namespace

#define HLOC_CUPTI_FUNCTIONS(X)     \
  X(cuptiActivityRegisterCallbacks) \
  X(cuptiActivityEnable)            \
  X(cuptiActivityDisable)           \
  X(cuptiActivityFlushAll)          \
  X(cuptiActivityGetNextRecord)     \
  X(cuptiGetTimestamp)              \
  X(cuptiGetResultString)           \
  X(cuptiGetVersion)

struct CuptiTracer::Api {
#define HLOC_CUPTI_DECLARE(fn) decltype(&::fn) fn = nullptr;
  HLOC_CUPTI_FUNCTIONS(HLOC_CUPTI_DECLARE)
#undef HLOC_CUPTI_DECLARE
  uint32_t version = 0;

  absl::Status Check(CUptiResult result, absl::string_view what) const {
    if (result == CUPTI_SUCCESS) return absl::OkStatus();
    const char* text = nullptr;
    if (cuptiGetResultString == nullptr || cuptiGetResultString(result, &text) != CUPTI_SUCCESS ||
        text == nullptr) {
      text = "unknown CUPTI error";
    }
    return absl::InternalError(absl::StrCat(what, " failed: ", text, " (", result, ")"));
  }
};

StepTraceSummary SummarizeSteps(const std::vector<uint64_t>& step_starts,
                                std::vector<DeviceActivity> activities) {
  StepTraceSummary s;
  s.steps = static_cast<int>(step_starts.size());
  std::sort(
      activities.begin(), activities.end(),
      [](const DeviceActivity& a, const DeviceActivity& b) { return a.start_ns < b.start_ns; });
  struct Step {
    uint64_t first = UINT64_MAX, last = 0, busy = 0;
    int activities = 0, kernels = 0;
  };
  std::vector<Step> steps(step_starts.size());
  for (const DeviceActivity& a : activities) {
    // The step whose host call began last at or before the activity's start.
    auto it = std::upper_bound(step_starts.begin(), step_starts.end(), a.start_ns);
    if (it == step_starts.begin()) continue;
    Step& step = steps[(it - step_starts.begin()) - 1];
    step.first = std::min(step.first, a.start_ns);
    step.last = std::max(step.last, a.end_ns);
    step.busy += a.end_ns - a.start_ns;
    ++step.activities;
    if (a.kind == DeviceActivity::Kind::kKernel) ++step.kernels;
  }
  std::vector<double> span, busy, count, kernels;
  for (const Step& step : steps) {
    if (step.activities == 0) continue;
    span.push_back(static_cast<double>(step.last - step.first) * 1e-3);
    busy.push_back(static_cast<double>(step.busy) * 1e-3);
    count.push_back(step.activities);
    kernels.push_back(step.kernels);
  }
  s.steps_with_work = static_cast<int>(span.size());
  s.span_us = MedianOf(span);
  s.busy_us = MedianOf(busy);
  s.activities = MedianOf(count);
  s.kernels = MedianOf(kernels);
  return s;
}

std::vector<std::string> DefaultCuptiLibraryNames() {
  std::vector<std::string> names;
  if (const char* path = std::getenv("HLOC_CUPTI_LIBRARY"); path != nullptr && *path != '\0') {
    names.push_back(path);
  }
  for (const char* name :
       {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
        "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/lib/libcupti.so.13"}) {
    names.push_back(name);
  }
  return names;
}

CuptiTracer::CuptiTracer(std::shared_ptr<cuda::DynamicLibrary> library, std::unique_ptr<Api> api)
    : library_(std::move(library)), api_(std::move(api)) {}

CuptiTracer::~CuptiTracer() = default;

absl::StatusOr<std::unique_ptr<CuptiTracer>> CuptiTracer::Open(
    const std::vector<std::string>& library_names) {
  auto library = cuda::DynamicLibrary::Open("CUPTI not available", library_names);
  if (!library.ok()) return library.status();
  auto api = std::make_unique<Api>();
  std::string missing;
#define HLOC_CUPTI_RESOLVE(fn)                                            \
  api->fn = reinterpret_cast<decltype(api->fn)>((*library)->Symbol(#fn)); \
  if (api->fn == nullptr) absl::StrAppend(&missing, " ", #fn);
  HLOC_CUPTI_FUNCTIONS(HLOC_CUPTI_RESOLVE)
#undef HLOC_CUPTI_RESOLVE
  if (!missing.empty()) {
    return cuda::MissingLibraryError(
        absl::StrCat("CUPTI not available: ", (*library)->name(), " lacks", missing));
  }
  if (absl::Status s = api->Check(api->cuptiGetVersion(&api->version), "cuptiGetVersion");
      !s.ok()) {
    return s;
  }
  {
    Collector& c = TheCollector();
    std::lock_guard<std::mutex> lock(c.mu);
    c.get_next_record = api->cuptiActivityGetNextRecord;
  }
  if (absl::Status s =
          api->Check(api->cuptiActivityRegisterCallbacks(&BufferRequested, &BufferCompleted),
                     "cuptiActivityRegisterCallbacks");
      !s.ok()) {
    return s;
  }
  return std::unique_ptr<CuptiTracer>(new CuptiTracer(*std::move(library), std::move(api)));
}

std::string CuptiTracer::Describe() const {
  return absl::StrCat(library_->name(), " (CUPTI API version ", api_->version, ")");
}

absl::StatusOr<StepTraceSummary> CuptiTracer::TraceSteps(
    int steps, const std::function<absl::Status()>& step) {
  Collector& c = TheCollector();
  std::lock_guard<std::mutex> trace_lock(c.trace_mu);
  const Api& api = *api_;
  auto flush = [&] {
    return api.Check(api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                     "cuptiActivityFlushAll");
  };
  // Records of earlier work (another model, the warm-up) are not this
  // trace's. (Its status is not this trace's either: with nothing enabled
  // yet some CUPTI versions report an error here.)
  flush().IgnoreError();
  absl::Status status = absl::OkStatus();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    c.activities.clear();
  }
  std::vector<CUpti_ActivityKind> enabled;
  for (CUpti_ActivityKind kind : kTracedKinds) {
    if (!status.ok()) break;
    status = api.Check(api.cuptiActivityEnable(kind),
                       absl::StrCat("cuptiActivityEnable(", KindName(kind), ")"));
    if (status.ok()) enabled.push_back(kind);
  }
  std::vector<uint64_t> starts;
  for (int i = 0; i < steps && status.ok(); ++i) {
    uint64_t now = 0;
    status = api.Check(api.cuptiGetTimestamp(&now), "cuptiGetTimestamp");
    if (!status.ok()) break;
    starts.push_back(now);
    status = step();
  }
  // Flush while still enabled (the last records are in CUPTI's buffers),
  // then stop tracing whatever happened.
  if (absl::Status s = flush(); status.ok()) status = s;
  for (CUpti_ActivityKind kind : enabled) {
    absl::Status s = api.Check(api.cuptiActivityDisable(kind),
                               absl::StrCat("cuptiActivityDisable(", KindName(kind), ")"));
    if (status.ok()) status = s;
  }
  std::vector<DeviceActivity> activities;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    activities.swap(c.activities);
  }
  if (!status.ok()) return status;
  const size_t recorded = activities.size();
  StepTraceSummary summary = SummarizeSteps(starts, std::move(activities));
  if (summary.steps_with_work == 0) {
    return absl::NotFoundError(absl::StrCat("CUPTI recorded no kernel, memcpy or memset in ", steps,
                                            " steps (", recorded, " records in all)"));
  }
  return summary;
}

}  // namespace gpu_bench
}  // namespace hloc
