// LibraryOrGeneratedThunk: choosing between a library call and generated
// kernels at load (see alternatives_thunk.h).
#include "runtime/cuda/alternatives_thunk.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "runtime/cuda/status_util.h"

namespace hloc {
namespace cuda {
namespace {

std::string Indent(int indent) { return std::string(2 * indent, ' '); }

// Short steps are timed over at least this many milliseconds in all.
constexpr double kMinTimedMs = 0.5;
constexpr int kMaxTimedRuns = 100;
constexpr int kStepsPerGraph = 16;

}  // namespace

absl::string_view StepAlternativeName(StepAlternative alternative) {
  return alternative == StepAlternative::kLibrary ? "library" : "generated";
}

std::string AlternativeDecision::ToString() const {
  std::string out;
  if (library_ms >= 0 && generated_ms >= 0) {
    out = absl::StrFormat("library %.4f ms vs generated %.4f ms -> ", library_ms, generated_ms);
  } else if (library_ms >= 0) {
    out = absl::StrFormat("library %.4f ms -> ", library_ms);
  } else if (generated_ms >= 0) {
    out = absl::StrFormat("generated %.4f ms -> ", generated_ms);
  } else {
    out = "-> ";
  }
  absl::StrAppend(&out, StepAlternativeName(choice));
  if (!note.empty()) absl::StrAppend(&out, " (", note, ")");
  return out;
}

std::string LibraryOrGeneratedKey(absl::string_view device_name, absl::string_view fingerprint) {
  return absl::StrCat("library-or-generated|", device_name, "|", fingerprint);
}

std::string EncodeAlternativeDecision(const AlternativeDecision& decision) {
  return absl::StrFormat("%s %.9g %.9g", StepAlternativeName(decision.choice), decision.library_ms,
                         decision.generated_ms);
}

absl::StatusOr<AlternativeDecision> DecodeAlternativeDecision(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ' ', absl::SkipEmpty());
  AlternativeDecision decision;
  if (parts.size() != 3 || !absl::SimpleAtod(parts[1], &decision.library_ms) ||
      !absl::SimpleAtod(parts[2], &decision.generated_ms) ||
      !std::isfinite(decision.library_ms) || !std::isfinite(decision.generated_ms)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cached library-or-generated choice \"", text,
                     "\" is not \"library|generated <ms> <ms>\""));
  }
  if (parts[0] == "library") {
    decision.choice = StepAlternative::kLibrary;
  } else if (parts[0] == "generated") {
    decision.choice = StepAlternative::kGenerated;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("cached library-or-generated choice names \"", parts[0], "\""));
  }
  return decision;
}

absl::StatusOr<double> TimeSequenceOnDevice(absl::string_view what,
                                            const ThunkSequence& sequence,
                                            GpuInitContext& context) {
  if (context.device == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": no device to time on"));
  }
  GpuExecutionContext run;
  run.device = context.device;
  run.buffers = context.buffers;
  auto direct = [&]() { return ExecuteSequence(sequence, run); };
  HLOC_CUDA_RETURN_IF_ERROR(direct());
  // Timed as it runs in the program: replays of a CUDA graph holding the
  // step, so the host cost of launching (large for a library call, small
  // for a kernel) does not count. Measured on an H100 without the graph:
  // tiny cuBLASLt gemms looked 2-3 us slower than generated kernels because
  // of that cost alone, and the generated kernels then lost in the graph.
  // The graph holds kStepsPerGraph copies of the step, so one graph launch's
  // own cost is shared too. A step that cannot be captured is timed
  // launched directly.
  CUgraphExec graph = nullptr;
  absl::StatusOr<CUgraphExec> captured = context.device->CaptureGraph([&]() -> absl::Status {
    for (int i = 0; i < kStepsPerGraph; ++i) HLOC_CUDA_RETURN_IF_ERROR(direct());
    return absl::OkStatus();
  });
  if (captured.ok()) graph = *captured;
  const int steps_per_run = graph != nullptr ? kStepsPerGraph : 1;
  auto once = [&]() -> absl::Status {
    return graph != nullptr ? context.device->LaunchGraph(graph) : direct();
  };
  auto timed = [&]() -> absl::StatusOr<double> {
    HLOC_CUDA_RETURN_IF_ERROR(once());
    HLOC_CUDA_ASSIGN_OR_RETURN(double first, context.device->TimeOnStream(once));
    if (first >= kMinTimedMs) return first;
    const int runs = static_cast<int>(
        std::min<double>(kMaxTimedRuns, std::ceil(kMinTimedMs / std::max(first, 1e-3))));
    if (runs <= 1) return first;
    HLOC_CUDA_ASSIGN_OR_RETURN(double total, context.device->TimeOnStream([&]() -> absl::Status {
      for (int i = 0; i < runs; ++i) HLOC_CUDA_RETURN_IF_ERROR(once());
      return absl::OkStatus();
    }));
    return total / runs;
  };
  absl::StatusOr<double> ms = timed();
  if (graph != nullptr) context.device->DestroyGraph(graph);
  if (!ms.ok()) return ms.status();
  return *ms / steps_per_run;
}

absl::StatusOr<AlternativeDecision> LibraryOrGeneratedThunk::Decide(GpuInitContext& context) {
  AlternativeDecision decision;
  if (context.alternatives == AlternativeSelection::kLibrary) {
    HLOC_CUDA_RETURN_IF_ERROR(InitializeSequence(library_, context));
    decision.note = "forced";
    return decision;
  }
  if (context.alternatives == AlternativeSelection::kGenerated) {
    HLOC_CUDA_RETURN_IF_ERROR(InitializeSequence(generated_, context));
    decision.choice = StepAlternative::kGenerated;
    decision.note = "forced";
    return decision;
  }
  // Timed (or cached). A library that cannot be set up here leaves the
  // generated kernels, which need nothing but the driver.
  absl::Status library_ready = InitializeSequence(library_, context);
  HLOC_CUDA_RETURN_IF_ERROR(InitializeSequence(generated_, context));
  if (!library_ready.ok()) {
    decision.choice = StepAlternative::kGenerated;
    decision.note = absl::StrCat("library unusable: ", library_ready.message());
    return decision;
  }
  const std::string key = LibraryOrGeneratedKey(context.device_name, fingerprint_);
  if (context.autotune_cache != nullptr) {
    if (std::optional<std::string> cached = context.autotune_cache->Lookup(key)) {
      absl::StatusOr<AlternativeDecision> decoded = DecodeAlternativeDecision(*cached);
      if (decoded.ok()) {
        decoded->note = "cached";
        return decoded;
      }
      // A malformed entry: time again and overwrite it.
    }
  }
  if (!context.autotune) {
    decision.note = "autotune off";
    return decision;
  }
  const SequenceTimer& timer =
      context.time_sequence ? context.time_sequence : SequenceTimer(TimeSequenceOnDevice);
  absl::StatusOr<double> library_ms = timer(absl::StrCat(label_, " library"), library_, context);
  absl::StatusOr<double> generated_ms =
      timer(absl::StrCat(label_, " generated"), generated_, context);
  if (!library_ms.ok() && !generated_ms.ok()) {
    return absl::Status(library_ms.status().code(),
                        absl::StrCat(label_, ": timing both alternatives failed: ",
                                     library_ms.status().message(), "; ",
                                     generated_ms.status().message()));
  }
  if (!generated_ms.ok()) {
    decision.library_ms = *library_ms;
    decision.note = absl::StrCat("timing the generated kernels failed: ",
                                 generated_ms.status().message());
    return decision;
  }
  if (!library_ms.ok()) {
    decision.choice = StepAlternative::kGenerated;
    decision.generated_ms = *generated_ms;
    decision.note = absl::StrCat("timing the library failed: ", library_ms.status().message());
    return decision;
  }
  decision.library_ms = *library_ms;
  decision.generated_ms = *generated_ms;
  // Ties go to the library (tuned for every shape; the kernels are not).
  decision.choice =
      *generated_ms < *library_ms ? StepAlternative::kGenerated : StepAlternative::kLibrary;
  if (context.autotune_cache != nullptr) {
    context.autotune_cache->Insert(key, EncodeAlternativeDecision(decision));
  }
  return decision;
}

absl::Status LibraryOrGeneratedThunk::Initialize(GpuInitContext& context) {
  decision_.reset();
  absl::StatusOr<AlternativeDecision> decision = Decide(context);
  if (!decision.ok()) return decision.status();
  decision_ = *std::move(decision);
  if (context.log != nullptr) {
    context.log->push_back(absl::StrCat(label_, ": ", decision_->ToString()));
  }
  return absl::OkStatus();
}

absl::Status LibraryOrGeneratedThunk::Execute(GpuExecutionContext& context) const {
  if (!decision_.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(label_, ": not initialized"));
  }
  return ExecuteSequence(Chosen(), context);
}

void LibraryOrGeneratedThunk::AppendTo(std::string* out, int indent) const {
  absl::StrAppend(out, Indent(indent), "alternatives ", label_, " ",
                  decision_.has_value() ? decision_->ToString() : "(chosen at load)", "\n");
  absl::StrAppend(out, Indent(indent + 1), "library:\n");
  AppendSequence(library_, out, indent + 2);
  absl::StrAppend(out, Indent(indent + 1), "generated:\n");
  AppendSequence(generated_, out, indent + 2);
}

bool LibraryOrGeneratedThunk::ReadsBackToHost() const {
  if (decision_.has_value()) return SequenceReadsBackToHost(Chosen());
  return SequenceReadsBackToHost(library_) || SequenceReadsBackToHost(generated_);
}

}  // namespace cuda
}  // namespace hloc
