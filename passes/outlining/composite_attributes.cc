// Formatting of composite.attributes dictionaries (see composite_attributes.h).
#include "passes/outlining/composite_attributes.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

std::string CompositeAttributes::ToString() const {
  return absl::StrCat("{",
                      absl::StrJoin(entries_, ", ",
                                    [](std::string* out, const auto& entry) {
                                      absl::StrAppend(out, entry.first, " = ", entry.second);
                                    }),
                      "}");
}

}  // namespace hloc
