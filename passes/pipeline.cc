#include "passes/pipeline.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hlo/status_macros.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"

namespace hloc {

HloPassPipeline::HloPassPipeline(std::string name, PipelineOptions options)
    : name_(std::move(name)), options_(std::move(options)) {}

absl::StatusOr<bool> HloPassPipeline::Run(HloModule& module) {
  bool changed = false;
  if (options_.verify_input) {
    absl::Status status = VerifyModule(module);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input module fails verification: ", status.message()));
    }
  }
  if (!options_.dump_to.empty()) HLOC_RETURN_IF_ERROR(Dump(module, "input"));
  for (const std::unique_ptr<HloPass>& pass : passes_) {
    std::string pass_name(pass->name());
    if (options_.disabled_passes.contains(pass_name)) continue;
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> pass_changed = pass->Run(module);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!pass_changed.ok()) {
      return absl::Status(pass_changed.status().code(),
                          absl::StrCat("pass ", pass_name, ": ", pass_changed.status().message()));
    }
    timings_.push_back({pass_name, seconds, *pass_changed});
    if (options_.verify_between_passes) {
      absl::Status status = VerifyModule(module);
      if (!status.ok()) {
        return absl::InternalError(absl::StrCat("module is invalid after pass ", pass_name,
                                                *pass_changed ? "" : " (which reported no change)",
                                                ": ", status.message()));
      }
    }
    if (!*pass_changed) continue;
    changed = true;
    if (!options_.dump_to.empty()) HLOC_RETURN_IF_ERROR(Dump(module, pass_name));
  }
  if (changed && options_.verify_output && !options_.verify_between_passes) {
    absl::Status status = VerifyModule(module);
    if (!status.ok()) {
      return absl::InternalError(absl::StrCat("module is invalid after pipeline ", name_,
                                              " (verify_between_passes names the pass): ",
                                              status.message()));
    }
  }
  return changed;
}

absl::Status HloPassPipeline::Dump(const HloModule& module, absl::string_view pass_name) {
  std::error_code error;
  std::filesystem::create_directories(options_.dump_to, error);
  if (error) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create dump directory ", options_.dump_to, ": ", error.message()));
  }
  std::string path = absl::StrFormat("%s/%03d-%s-%s.hlo", options_.dump_to, dump_counter_++,
                                     name_, std::string(pass_name));
  std::ofstream out(path);
  out << PrintModule(module);
  if (!out) return absl::DataLossError(absl::StrCat("cannot write dump ", path));
  return absl::OkStatus();
}

std::string HloPassPipeline::TimingReport() const {
  std::string report;
  double total = 0;
  for (const PassTiming& t : timings_) total += t.seconds;
  for (const PassTiming& t : timings_) {
    absl::StrAppendFormat(&report, "%-36s %9.3f ms %s\n", t.pass, t.seconds * 1e3,
                          t.changed ? "changed" : "");
  }
  absl::StrAppendFormat(&report, "%-36s %9.3f ms\n", "total", total * 1e3);
  return report;
}

absl::StatusOr<bool> FixedPointPass::Run(HloModule& module) {
  bool changed = false;
  for (iterations_run_ = 0; iterations_run_ < max_iterations_;) {
    ++iterations_run_;
    bool round_changed = false;
    for (const std::unique_ptr<HloPass>& pass : passes_) {
      HLOC_ASSIGN_OR_RETURN(bool pass_changed, pass->Run(module));
      round_changed |= pass_changed;
    }
    if (!round_changed) break;
    changed = true;
  }
  return changed;
}

}  // namespace hloc
