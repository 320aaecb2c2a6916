// The attributes of a typed-FFI custom call (api_version=API_VERSION_TYPED_FFI).
// XLA keeps them in backend_config as an MLIR dictionary attribute, e.g.
//
//   backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}
//   backend_config={high = 4 : i32, low = 1 : i32}
//   backend_config={left = true, transpose = false}
//
// Decoded once here into name -> scalar; the code that implements a target
// asks for the attributes it needs by name and type. Only scalar entries
// (integers, booleans, floats) are understood; anything else (arrays,
// strings, nested dictionaries) is an error naming the attribute.
#ifndef HLOC_HLO_FFI_ATTRIBUTES_H_
#define HLOC_HLO_FFI_ATTRIBUTES_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hloc {

struct FfiScalar {
  enum class Kind { kInteger, kBool, kFloat };
  Kind kind = Kind::kInteger;
  int64_t integer = 0;  // kInteger, kBool (0 or 1); no getter reads a float's value yet.
};

class FfiAttributes {
 public:
  // Parses "{}" or "{name = value[ : type], ...}"; an empty string is no
  // attributes. Errors say where in `text` and what was expected.
  static absl::StatusOr<FfiAttributes> Parse(absl::string_view text);

  bool Has(absl::string_view name) const;
  // The integer attribute `name` (an error when missing or not an integer).
  absl::StatusOr<int64_t> Integer(absl::string_view name) const;
  // An integer attribute holding a character code (LAPACK's 'L', 'N', ...).
  absl::StatusOr<char> Character(absl::string_view name) const;
  absl::StatusOr<bool> Bool(absl::string_view name) const;

 private:
  absl::StatusOr<const FfiScalar*> Find(absl::string_view name) const;
  std::map<std::string, FfiScalar, std::less<>> values_;
};

}  // namespace hloc

#endif  // HLOC_HLO_FFI_ATTRIBUTES_H_
