// Pass pipelines: an ordered list of passes and fixed-point groups, with the
// verifier before the first pass (a bad input is the input's fault, not the
// first pass that happens to trip over it) and after passes, per-pass timing,
// numbered dumps of the module after every pass that changed it, and passes
// disabled by name.
#ifndef HLOC_PASSES_PIPELINE_H_
#define HLOC_PASSES_PIPELINE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "passes/pass.h"

namespace hloc {

// Debug builds (and so tests) verify after every pass; optimized builds verify
// the input and the final module only.
#ifdef NDEBUG
inline constexpr bool kVerifyAfterEveryPassByDefault = false;
#else
inline constexpr bool kVerifyAfterEveryPassByDefault = true;
#endif

struct PipelineOptions {
  // Refuse an input module that fails the verifier before any pass sees it:
  // "input module fails verification: <the verifier's message>".
  bool verify_input = true;
  // Run the verifier after every pass, changed or not (a pass that changes
  // the module and says it did not is caught too); a failure names the pass.
  bool verify_between_passes = kVerifyAfterEveryPassByDefault;
  // Without verify_between_passes: verify the module once after the last pass
  // that changed it, so no backend sees a module a pass broke.
  bool verify_output = true;
  // When not empty, write "NNN-<pipeline>-<pass>.hlo" here after each change.
  std::string dump_to;
  // Pass names to skip (matches HloPass::name()).
  absl::flat_hash_set<std::string> disabled_passes;
  // 0 = only passes needed for correctness, 1 = default, 2 = aggressive.
  int optimization_level = 1;
};

// Wall time and outcome of one pass run.
struct PassTiming {
  std::string pass;
  double seconds = 0;
  bool changed = false;
};

class HloPassPipeline : public HloPass {
 public:
  explicit HloPassPipeline(std::string name, PipelineOptions options = {});

  absl::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(HloModule& module) override;

  // Adds a pass; returns it for further set-up.
  template <typename Pass, typename... Args>
  Pass& AddPass(Args&&... args) {
    auto pass = std::make_unique<Pass>(std::forward<Args>(args)...);
    Pass& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }
  void AddPass(std::unique_ptr<HloPass> pass) { passes_.push_back(std::move(pass)); }

  const std::vector<PassTiming>& timings() const { return timings_; }
  std::string TimingReport() const;
  const PipelineOptions& options() const { return options_; }

 private:
  absl::Status Dump(const HloModule& module, absl::string_view pass_name);

  std::string name_;
  PipelineOptions options_;
  std::vector<std::unique_ptr<HloPass>> passes_;
  std::vector<PassTiming> timings_;
  int dump_counter_ = 0;
};

// Runs a group of passes repeatedly until none changes the module, at most
// `max_iterations` times (then it stops and says so in its timing entry, not
// an error: a rewrite that oscillates must not hang compilation).
class FixedPointPass : public HloPass {
 public:
  FixedPointPass(std::string name, int max_iterations = 25) : name_(std::move(name)),
                                                              max_iterations_(max_iterations) {}
  absl::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(HloModule& module) override;

  template <typename Pass, typename... Args>
  Pass& AddPass(Args&&... args) {
    auto pass = std::make_unique<Pass>(std::forward<Args>(args)...);
    Pass& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }
  int iterations_run() const { return iterations_run_; }

 private:
  std::string name_;
  int max_iterations_;
  int iterations_run_ = 0;
  std::vector<std::unique_ptr<HloPass>> passes_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_PIPELINE_H_
