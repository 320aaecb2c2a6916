// The table of library patterns: the families in a fixed order (table order
// breaks ties between overlapping matches of equal priority and size).
#include "passes/outlining/library_patterns.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/library_epilogues.h"

namespace hloc {

std::string NumericsContract::ToString() const {
  switch (kind) {
    case Kind::kBitIdentical:
      return "bit-identical";
    case Kind::kWithinUlp:
      return absl::StrCat("within ", ulp, " ulp", note.empty() ? "" : ": ", note);
    case Kind::kReformulation:
      return absl::StrCat("reformulation", note.empty() ? "" : ": ", note);
  }
  return "";
}

std::vector<LibraryPattern> DefaultLibraryPatterns() {
  std::vector<LibraryPattern> table;
  AppendGemmPatterns(&table);
  AppendConvolutionPatterns(&table);
  AppendNormalizationPatterns(&table);
  return table;
}

namespace {

// "array<i64: 1, 2>" or "array<i64>" -> the integers; nullopt for other text.
std::optional<std::vector<int64_t>> ParseIntArray(absl::string_view text) {
  if (!absl::ConsumePrefix(&text, "array<i64") || !absl::ConsumeSuffix(&text, ">")) {
    return std::nullopt;
  }
  std::vector<int64_t> values;
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return values;
  if (!absl::ConsumePrefix(&text, ":")) return std::nullopt;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(item), &value)) return std::nullopt;
    values.push_back(value);
  }
  return values;
}

}  // namespace

std::optional<int64_t> LibraryCallDescriptor::Int(const std::string& key) const {
  auto it = ints.find(key);
  if (it == ints.end()) return std::nullopt;
  return it->second;
}

std::optional<std::vector<int64_t>> LibraryCallDescriptor::Ints(const std::string& key) const {
  auto it = int_arrays.find(key);
  if (it == int_arrays.end()) return std::nullopt;
  return it->second;
}

std::string LibraryCallDescriptor::family_name() const {
  return family == nullptr ? "" : family->base;
}

absl::StatusOr<LibraryCallDescriptor> DecodeLibraryCall(const HloInstruction& call) {
  const std::string* name = call.FindFrontendAttribute(kCompositeName);
  if (call.opcode() != HloOpcode::kCall || !call.is_composite() || name == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("%", call.name(), " is not a composite library call"));
  }
  LibraryCallDescriptor d;
  d.name = *name;
  d.family = FindEpilogueFamily(d.name);
  const std::string* text = call.FindFrontendAttribute(kCompositeAttributes);
  absl::StatusOr<CompositeAttributes> attributes =
      CompositeAttributes::Parse(text == nullptr || text->empty() ? "{}" : *text);
  if (!attributes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("%", call.name(), ": ", attributes.status().message()));
  }
  for (const auto& [key, value] : attributes->entries()) {
    if (std::optional<std::vector<int64_t>> array = ParseIntArray(value)) {
      d.int_arrays[key] = *std::move(array);
    } else if (absl::EndsWith(value, ": i64")) {
      if (std::optional<int64_t> i = attributes->GetInt(key)) d.ints[key] = *i;
    }
  }
  for (auto [key, target] : {std::pair<const char*, double*>{"alpha", &d.alpha},
                             std::pair<const char*, double*>{"beta", &d.beta}}) {
    if (!attributes->Has(key)) continue;
    std::optional<double> value = attributes->GetFloat(key);
    if (!value.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("%", call.name(), ": ", key, " = '", attributes->entries().at(key),
                       "' is not a number"));
    }
    *target = *value;
  }
  if (d.family == nullptr) return d;
  const std::string epilogue = attributes->GetString("epilogue").value_or("none");
  absl::StatusOr<std::vector<EpilogueStep>> steps = ParseEpilogue(epilogue);
  if (!steps.ok()) return absl::FailedPreconditionError(steps.status().message());
  if (Refusal refusal = CheckEpilogueSteps(*d.family, *steps)) {
    return absl::FailedPreconditionError(*refusal);
  }
  if (EpilogueCompositeName(*d.family, *steps) != d.name) {
    return absl::FailedPreconditionError(
        absl::StrCat("epilogue \"", epilogue, "\" does not match the name ", d.name));
  }
  d.epilogue = *std::move(steps);
  return d;
}

}  // namespace hloc
