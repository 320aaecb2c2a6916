// Reads a composite call's `composite.attributes` dictionary (the MLIR-style
// text passes/outlining/composite_attributes.h writes) back into values, so
// the oneDNN lowering can honor what the outlining pattern recorded:
//   {alpha = 1.0 : f64, epilogue = "bias_relu", lhs_contracting_dims = array<i64: 1>}
// Integers (`3 : i64`), floats (`1e-05 : f32`, or hex bits for NaN and
// infinities), `array<i64: ...>`, quoted strings and true/false.
#ifndef HLOC_BACKEND_HOST_ONEDNN_ATTRIBUTES_H_
#define HLOC_BACKEND_HOST_ONEDNN_ATTRIBUTES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hloc {
namespace host {

struct CompositeValue {
  enum class Kind { kInt, kFloat, kInts, kString, kBool };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  double f = 0;
  std::vector<int64_t> ints;
  std::string s;
  bool b = false;
};

class CompositeAttributeMap {
 public:
  // Parses the dictionary text; errors name the offset and what was expected.
  static absl::StatusOr<CompositeAttributeMap> Parse(absl::string_view text);

  bool Has(absl::string_view name) const { return values_.count(std::string(name)) > 0; }
  // Typed reads: nullopt when absent or of another kind (an integer reads as
  // a float too).
  std::optional<int64_t> Int(absl::string_view name) const;
  std::optional<double> Float(absl::string_view name) const;
  std::optional<std::vector<int64_t>> Ints(absl::string_view name) const;
  std::optional<std::string> String(absl::string_view name) const;

 private:
  const CompositeValue* Find(absl::string_view name) const;
  std::map<std::string, CompositeValue> values_;
};

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_ONEDNN_ATTRIBUTES_H_
