// Typed-FFI custom-call attributes (see ffi_attributes.h).
#include "hlo/ffi_attributes.h"

#include <cctype>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hloc {
namespace {

// A cursor over the dictionary text; errors name the offset.
class Reader {
 public:
  explicit Reader(absl::string_view text) : text_(text) {}
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  // [A-Za-z0-9_.$-]+ (names, numbers, types, true/false).
  absl::string_view Word() {
    SkipSpace();
    const size_t start = pos_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' &&
          c != '$' && c != '-' && c != '+') {
        break;
      }
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }
  absl::Status Error(absl::string_view expected) const {
    return absl::InvalidArgumentError(absl::StrCat("FFI attributes \"", text_, "\", offset ", pos_,
                                                   ": expected ", expected));
  }

 private:
  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<FfiAttributes> FfiAttributes::Parse(absl::string_view text) {
  FfiAttributes attributes;
  Reader reader(text);
  if (reader.AtEnd()) return attributes;
  if (!reader.Eat('{')) return reader.Error("'{'");
  if (reader.Eat('}')) {
    if (!reader.AtEnd()) return reader.Error("the end after '}'");
    return attributes;
  }
  while (true) {
    const absl::string_view name = reader.Word();
    if (name.empty()) return reader.Error("an attribute name");
    if (!reader.Eat('=')) return reader.Error(absl::StrCat("'=' after ", name));
    const absl::string_view value = reader.Word();
    if (value.empty()) {
      return reader.Error(absl::StrCat("a scalar value for ", name,
                                       " (only integers, booleans and floats are understood)"));
    }
    FfiScalar scalar;
    if (value == "true" || value == "false") {
      scalar.kind = FfiScalar::Kind::kBool;
      scalar.integer = value == "true" ? 1 : 0;
    } else if (absl::SimpleAtoi(value, &scalar.integer)) {
      scalar.kind = FfiScalar::Kind::kInteger;
    } else if (double real = 0; absl::SimpleAtod(value, &real)) {
      scalar.kind = FfiScalar::Kind::kFloat;
    } else {
      return reader.Error(absl::StrCat("a number or true/false for ", name, ", not \"", value,
                                       "\""));
    }
    if (reader.Eat(':')) {
      // The written type ("ui8", "i32") is checked for presence only: the
      // getters say how a value is read.
      if (reader.Word().empty()) return reader.Error(absl::StrCat("a type after ':' for ", name));
    }
    if (!attributes.values_.emplace(std::string(name), scalar).second) {
      return reader.Error(absl::StrCat("one value for ", name, " (it appears twice)"));
    }
    if (reader.Eat('}')) break;
    if (!reader.Eat(',')) return reader.Error("',' or '}'");
  }
  if (!reader.AtEnd()) return reader.Error("the end after '}'");
  return attributes;
}

bool FfiAttributes::Has(absl::string_view name) const { return values_.find(name) != values_.end(); }

absl::StatusOr<const FfiScalar*> FfiAttributes::Find(absl::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("attribute ", name, " is missing"));
  }
  return &it->second;
}

absl::StatusOr<int64_t> FfiAttributes::Integer(absl::string_view name) const {
  absl::StatusOr<const FfiScalar*> scalar = Find(name);
  if (!scalar.ok()) return scalar.status();
  if ((*scalar)->kind != FfiScalar::Kind::kInteger) {
    return absl::InvalidArgumentError(absl::StrCat("attribute ", name, " is not an integer"));
  }
  return (*scalar)->integer;
}

absl::StatusOr<char> FfiAttributes::Character(absl::string_view name) const {
  absl::StatusOr<int64_t> code = Integer(name);
  if (!code.ok()) return code.status();
  if (*code < 32 || *code > 126) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute ", name, " = ", *code, " is not a printable character code"));
  }
  return static_cast<char>(*code);
}

absl::StatusOr<bool> FfiAttributes::Bool(absl::string_view name) const {
  absl::StatusOr<const FfiScalar*> scalar = Find(name);
  if (!scalar.ok()) return scalar.status();
  if ((*scalar)->kind != FfiScalar::Kind::kBool) {
    return absl::InvalidArgumentError(absl::StrCat("attribute ", name, " is not true or false"));
  }
  return (*scalar)->integer != 0;
}

}  // namespace hloc
