// The epilogue registry: families, step tokens, names (see library_epilogues.h).
#include "passes/outlining/library_epilogues.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace {

// Steps come in this order: per-channel subtract, scale, bias, activation.
int Rank(EpilogueStep step) {
  switch (step) {
    case EpilogueStep::kSub: return 0;
    case EpilogueStep::kScale: return 1;
    case EpilogueStep::kBias: return 2;
    default: return 3;
  }
}

constexpr EpilogueStep kAllSteps[] = {EpilogueStep::kSub,  EpilogueStep::kScale,
                                      EpilogueStep::kBias, EpilogueStep::kRelu,
                                      EpilogueStep::kGeluTanh, EpilogueStep::kGeluErf};

}  // namespace

absl::string_view EpilogueStepToken(EpilogueStep step) {
  switch (step) {
    case EpilogueStep::kSub: return "sub";
    case EpilogueStep::kScale: return "scale";
    case EpilogueStep::kBias: return "bias";
    case EpilogueStep::kRelu: return "relu";
    case EpilogueStep::kGeluTanh: return "gelu_tanh";
    case EpilogueStep::kGeluErf: return "gelu_erf";
  }
  return "?";
}

absl::string_view EpilogueStepNameToken(EpilogueStep step) {
  if (step == EpilogueStep::kGeluTanh || step == EpilogueStep::kGeluErf) return "gelu";
  return EpilogueStepToken(step);
}

bool TakesVector(EpilogueStep step) { return Rank(step) < 3; }

bool IsActivation(EpilogueStep step) { return Rank(step) == 3; }

const std::vector<LibraryEpilogueFamily>& LibraryEpilogueFamilies() {
  using S = EpilogueStep;
  static const auto* families = new std::vector<LibraryEpilogueFamily>{
      {"hloc.gemm", {S::kBias, S::kRelu, S::kGeluTanh, S::kGeluErf}},
      {"hloc.batched_gemm", {S::kBias, S::kRelu, S::kGeluTanh, S::kGeluErf}},
      {"hloc.conv", {S::kSub, S::kScale, S::kBias, S::kRelu}},
  };
  return *families;
}

const LibraryEpilogueFamily* FindEpilogueFamily(absl::string_view composite_name) {
  for (const LibraryEpilogueFamily& family : LibraryEpilogueFamilies()) {
    if (composite_name == family.base ||
        absl::StartsWith(composite_name, absl::StrCat(family.base, "_"))) {
      return &family;
    }
  }
  return nullptr;
}

std::string EpilogueToString(absl::Span<const EpilogueStep> steps) {
  if (steps.empty()) return "none";
  return absl::StrJoin(steps, "_", [](std::string* out, EpilogueStep step) {
    absl::StrAppend(out, EpilogueStepToken(step));
  });
}

absl::StatusOr<std::vector<EpilogueStep>> ParseEpilogue(absl::string_view text) {
  std::vector<EpilogueStep> steps;
  if (text == "none") return steps;
  while (!text.empty()) {
    // Longest token first: "gelu_tanh" before a hypothetical "gelu".
    const EpilogueStep* found = nullptr;
    size_t found_length = 0;
    for (const EpilogueStep& step : kAllSteps) {
      absl::string_view token = EpilogueStepToken(step);
      if (absl::StartsWith(text, token) && token.size() > found_length &&
          (text.size() == token.size() || text[token.size()] == '_')) {
        found = &step;
        found_length = token.size();
      }
    }
    if (found == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown epilogue step at '", text, "'"));
    }
    steps.push_back(*found);
    text.remove_prefix(std::min(text.size(), found_length + 1));
  }
  return steps;
}

std::string EpilogueCompositeName(const LibraryEpilogueFamily& family,
                                  absl::Span<const EpilogueStep> steps) {
  std::string name = family.base;
  for (EpilogueStep step : steps) absl::StrAppend(&name, "_", EpilogueStepNameToken(step));
  return name;
}

Refusal CheckEpilogueSteps(const LibraryEpilogueFamily& family,
                           absl::Span<const EpilogueStep> steps) {
  for (size_t k = 0; k < steps.size(); ++k) {
    if (std::find(family.steps.begin(), family.steps.end(), steps[k]) == family.steps.end()) {
      return absl::StrCat(family.base, " fuses no '", EpilogueStepToken(steps[k]),
                          "' epilogue step");
    }
    if (k > 0 && Rank(steps[k - 1]) >= Rank(steps[k])) {
      return absl::StrCat(family.base, " cannot apply '", EpilogueStepToken(steps[k]),
                          "' after '", EpilogueStepToken(steps[k - 1]), "'");
    }
  }
  return std::nullopt;
}

std::vector<std::string> LibraryEpilogueNames() {
  std::set<std::string> names;
  for (const LibraryEpilogueFamily& family : LibraryEpilogueFamilies()) {
    std::vector<EpilogueStep> linear, activations;
    for (EpilogueStep step : family.steps) {
      (IsActivation(step) ? activations : linear).push_back(step);
    }
    for (uint32_t subset = 0; subset < (1u << linear.size()); ++subset) {
      std::vector<EpilogueStep> steps;
      for (size_t k = 0; k < linear.size(); ++k) {
        if (subset & (1u << k)) steps.push_back(linear[k]);
      }
      names.insert(EpilogueCompositeName(family, steps));
      for (EpilogueStep activation : activations) {
        std::vector<EpilogueStep> with = steps;
        with.push_back(activation);
        names.insert(EpilogueCompositeName(family, with));
      }
    }
  }
  return std::vector<std::string>(names.begin(), names.end());
}

}  // namespace hloc
