// The text of a composite call's `composite.attributes` frontend attribute: an
// MLIR-style dictionary, as XLA writes it for stablehlo.composite, e.g.
//   {alpha = 1.0 : f64, epilogue = "bias_relu", lhs_contracting_dims = array<i64: 1>}
// Entries are kept sorted by name (MLIR dictionaries are), so equal
// attributes always print the same.
#ifndef HLOC_PASSES_OUTLINING_COMPOSITE_ATTRIBUTES_H_
#define HLOC_PASSES_OUTLINING_COMPOSITE_ATTRIBUTES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "hlo/primitive_type.h"

namespace hloc {

class CompositeAttributes {
 public:
  CompositeAttributes& Int(absl::string_view name, int64_t value);
  // Printed as the shortest text that reads back to `value` in `type`
  // (f64, or f32 for f32/f16/bf16), with the type: "1e-05 : f32".
  CompositeAttributes& Float(absl::string_view name, double value, PrimitiveType type = xla::F64);
  CompositeAttributes& Ints(absl::string_view name, absl::Span<const int64_t> values);
  CompositeAttributes& String(absl::string_view name, absl::string_view value);
  CompositeAttributes& Bool(absl::string_view name, bool value);
  CompositeAttributes& Erase(absl::string_view name);
  std::string ToString() const;

  // Reads a dictionary this class printed (or any flat MLIR dictionary of
  // numbers, strings, booleans and i64 arrays); values are kept as text.
  static absl::StatusOr<CompositeAttributes> Parse(absl::string_view text);
  bool Has(absl::string_view name) const { return entries_.count(std::string(name)) > 0; }
  // The value of a string entry, unquoted; nullopt when absent or not a string.
  std::optional<std::string> GetString(absl::string_view name) const;
  // The value of a float or integer entry ("0.5 : f64", "3 : i64").
  std::optional<double> GetFloat(absl::string_view name) const;
  std::optional<int64_t> GetInt(absl::string_view name) const;
  // Every entry's value as written ("3 : i64", "array<i64: 0, 1>", "\"bias\"").
  const std::map<std::string, std::string>& entries() const { return entries_; }

 private:
  std::map<std::string, std::string> entries_;
};

// Frontend attribute keys of XLA composite calls.
inline constexpr char kCompositeName[] = "composite.name";
inline constexpr char kCompositeAttributes[] = "composite.attributes";
inline constexpr char kCompositeVersion[] = "composite.version";

}  // namespace hloc

#endif  // HLOC_PASSES_OUTLINING_COMPOSITE_ATTRIBUTES_H_
