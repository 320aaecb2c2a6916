// Formatting of composite.attributes dictionaries (see composite_attributes.h).
#include "passes/outlining/composite_attributes.h"

#include <cmath>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "hlo/literal.h"

namespace hloc {

CompositeAttributes& CompositeAttributes::Int(absl::string_view name, int64_t value) {
  entries_[std::string(name)] = absl::StrCat(value, " : i64");
  return *this;
}

CompositeAttributes& CompositeAttributes::Float(absl::string_view name, double value,
                                                PrimitiveType type) {
  bool narrow = type == xla::F32 || type == xla::F16 || type == xla::BF16;
  std::string text;
  if (std::isnan(value)) {
    text = "0x7FF8000000000000";
  } else if (std::isinf(value)) {
    text = value > 0 ? "0x7FF0000000000000" : "0xFFF0000000000000";
  } else {
    if (narrow) {
      AppendShortestFloat(static_cast<float>(value), &text);
    } else {
      AppendShortestDouble(value, &text);
    }
    // MLIR float literals need a '.' or an exponent.
    if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  }
  entries_[std::string(name)] = absl::StrCat(text, " : ", narrow ? PrimitiveTypeName(type) : "f64");
  return *this;
}

CompositeAttributes& CompositeAttributes::Ints(absl::string_view name,
                                               absl::Span<const int64_t> values) {
  entries_[std::string(name)] =
      values.empty() ? "array<i64>" : absl::StrCat("array<i64: ", absl::StrJoin(values, ", "), ">");
  return *this;
}

CompositeAttributes& CompositeAttributes::String(absl::string_view name, absl::string_view value) {
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  quoted += '"';
  entries_[std::string(name)] = quoted;
  return *this;
}

CompositeAttributes& CompositeAttributes::Bool(absl::string_view name, bool value) {
  entries_[std::string(name)] = value ? "true" : "false";
  return *this;
}

CompositeAttributes& CompositeAttributes::Erase(absl::string_view name) {
  entries_.erase(std::string(name));
  return *this;
}

absl::StatusOr<CompositeAttributes> CompositeAttributes::Parse(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (!absl::ConsumePrefix(&text, "{") || !absl::ConsumeSuffix(&text, "}")) {
    return absl::InvalidArgumentError(
        absl::StrCat("composite attributes are not a {...} dictionary: ", text));
  }
  CompositeAttributes attributes;
  // Entries end at top-level commas: not inside quotes or array<...>.
  auto add_entry = [&](absl::string_view entry) -> absl::Status {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry.empty()) return absl::OkStatus();
    size_t eq = entry.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("composite attribute without '=': ", entry));
    }
    std::string name(absl::StripAsciiWhitespace(entry.substr(0, eq)));
    absl::string_view value = absl::StripAsciiWhitespace(entry.substr(eq + 1));
    if (name.empty() || value.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("malformed composite attribute: ", entry));
    }
    attributes.entries_[name] = std::string(value);
    return absl::OkStatus();
  };
  bool quoted = false;
  int angle = 0;
  size_t start = 0;
  for (size_t k = 0; k < text.size(); ++k) {
    char c = text[k];
    if (quoted) {
      if (c == '\\') {
        ++k;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '<') {
      ++angle;
    } else if (c == '>') {
      --angle;
    } else if (c == ',' && angle == 0) {
      absl::Status status = add_entry(text.substr(start, k - start));
      if (!status.ok()) return status;
      start = k + 1;
    }
  }
  if (quoted || angle != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unbalanced composite attributes: {", text, "}"));
  }
  absl::Status status = add_entry(text.substr(start));
  if (!status.ok()) return status;
  return attributes;
}

std::optional<std::string> CompositeAttributes::GetString(absl::string_view name) const {
  auto it = entries_.find(std::string(name));
  if (it == entries_.end()) return std::nullopt;
  absl::string_view v = it->second;
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') return std::nullopt;
  std::string out;
  for (size_t k = 1; k + 1 < v.size(); ++k) {
    if (v[k] == '\\' && k + 2 < v.size()) ++k;
    out += v[k];
  }
  return out;
}

std::optional<double> CompositeAttributes::GetFloat(absl::string_view name) const {
  auto it = entries_.find(std::string(name));
  if (it == entries_.end()) return std::nullopt;
  absl::string_view v = it->second;
  size_t colon = v.find(':');
  if (colon != absl::string_view::npos) v = absl::StripAsciiWhitespace(v.substr(0, colon));
  if (absl::StartsWith(v, "0x")) {  // a hexadecimal f64 bit pattern (NaN, infinities)
    uint64_t bits = 0;
    if (!absl::SimpleHexAtoi(v, &bits)) return std::nullopt;
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
  double value = 0;
  if (!absl::SimpleAtod(v, &value)) return std::nullopt;
  return value;
}

std::optional<int64_t> CompositeAttributes::GetInt(absl::string_view name) const {
  auto it = entries_.find(std::string(name));
  if (it == entries_.end()) return std::nullopt;
  absl::string_view v = it->second;
  size_t colon = v.find(':');
  if (colon != absl::string_view::npos) v = absl::StripAsciiWhitespace(v.substr(0, colon));
  int64_t value = 0;
  if (!absl::SimpleAtoi(v, &value)) return std::nullopt;
  return value;
}

std::string CompositeAttributes::ToString() const {
  return absl::StrCat("{",
                      absl::StrJoin(entries_, ", ",
                                    [](std::string* out, const auto& entry) {
                                      absl::StrAppend(out, entry.first, " = ", entry.second);
                                    }),
                      "}");
}

}  // namespace hloc
