// A step of a GPU program that the compiler could do two ways: through a
// library (cuBLASLt, cuDNN; possibly with preparation kernels) or as
// generated kernels compiled from the library call's callee. Both
// alternatives read the same input buffers and write the same output
// buffer; each has its own temporaries, live only at this step, so they
// never overlap anything the other alternative or the rest of the program
// relies on.
//
// Which one runs is settled once, at Initialize (GpuExecutable::Load):
//
//   cached choice for (device, fingerprint)?  -> that one  "(cached)"
//   else autotuning?                          -> time both, keep the faster,
//                                                store it in the cache
//   else                                      -> the library "(autotune off)"
//
// A library alternative that cannot be set up on this device (no
// algorithm, library missing at run time) leaves the generated one. The
// fingerprint (from the compiler: the call's library configuration and the
// generated kernel's name) together with the device name is the cache key,
// so a reload or rebuild picks the same alternative without timing.
#ifndef HLOC_RUNTIME_CUDA_ALTERNATIVES_THUNK_H_
#define HLOC_RUNTIME_CUDA_ALTERNATIVES_THUNK_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/autotune_cache.h"
#include "runtime/cuda/gpu_thunk.h"

namespace hloc {
namespace cuda {

enum class StepAlternative { kLibrary, kGenerated };
absl::string_view StepAlternativeName(StepAlternative alternative);  // "library", "generated"

// What was decided for one step, and on what grounds.
struct AlternativeDecision {
  StepAlternative choice = StepAlternative::kLibrary;
  // Milliseconds per run; < 0 when not timed.
  double library_ms = -1, generated_ms = -1;
  // Why, when not timed just now: "cached", "autotune off", "forced",
  // "library unusable: ...", "timing the generated kernels failed: ...".
  std::string note;
  // "library 0.0120 ms vs generated 0.0340 ms -> library (cached)".
  std::string ToString() const;
};

// The autotune cache key of a step (`fingerprint` from the compiler).
std::string LibraryOrGeneratedKey(absl::string_view device_name, absl::string_view fingerprint);
// A timed decision as cache text ("library 0.012 0.034") and back.
std::string EncodeAlternativeDecision(const AlternativeDecision& decision);
absl::StatusOr<AlternativeDecision> DecodeAlternativeDecision(absl::string_view text);

// Times one run of `sequence` on context.device: one untimed run first
// (first-use costs), then runs between one pair of events, repeated so that
// short steps are measured over about half a millisecond; the mean per run.
absl::StatusOr<double> TimeSequenceOnDevice(absl::string_view what,
                                            const ThunkSequence& sequence,
                                            GpuInitContext& context);

class LibraryOrGeneratedThunk : public Thunk {
 public:
  LibraryOrGeneratedThunk(std::string label, std::string fingerprint, ThunkSequence library,
                          ThunkSequence generated)
      : label_(std::move(label)),
        fingerprint_(std::move(fingerprint)),
        library_(std::move(library)),
        generated_(std::move(generated)) {}
  // Initializes the alternatives it may run and chooses (see above); logs
  // "<label>: <decision>" to context.log.
  absl::Status Initialize(GpuInitContext& context) override;
  absl::Status Execute(GpuExecutionContext& context) const override;
  void AppendTo(std::string* out, int indent) const override;
  bool ReadsBackToHost() const override;

  const std::string& fingerprint() const { return fingerprint_; }
  const ThunkSequence& library() const { return library_; }
  const ThunkSequence& generated() const { return generated_; }
  // Set by Initialize.
  const std::optional<AlternativeDecision>& decision() const { return decision_; }

 private:
  absl::StatusOr<AlternativeDecision> Decide(GpuInitContext& context);
  const ThunkSequence& Chosen() const {
    return decision_->choice == StepAlternative::kLibrary ? library_ : generated_;
  }
  std::string label_;
  std::string fingerprint_;
  ThunkSequence library_;
  ThunkSequence generated_;
  std::optional<AlternativeDecision> decision_;
};

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_ALTERNATIVES_THUNK_H_
