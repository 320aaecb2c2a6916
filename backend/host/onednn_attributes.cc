// A recursive-descent reader for composite.attributes dictionaries (see
// onednn_attributes.h).
#include "backend/host/onednn_attributes.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hloc {
namespace host {
namespace {

class Reader {
 public:
  explicit Reader(absl::string_view text) : text_(text) {}

  absl::Status Error(absl::string_view expected) const {
    return absl::InvalidArgumentError(absl::StrCat("composite.attributes at offset ", pos_,
                                                   ": expected ", expected, " in '", text_, "'"));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(absl::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  // [A-Za-z0-9_.+-]+ : names, numbers and type names.
  absl::string_view Word() {
    SkipSpace();
    const size_t start = pos_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '+' &&
          c != '-') {
        break;
      }
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }
  absl::StatusOr<std::string> Quoted() {
    std::string out;
    if (!Consume("\"")) return Error("'\"'");
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out += text_[pos_++];
    }
    if (!Consume("\"")) return Error("closing '\"'");
    return out;
  }

  absl::StatusOr<CompositeValue> Value() {
    CompositeValue v;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '"') {
      v.kind = CompositeValue::Kind::kString;
      absl::StatusOr<std::string> s = Quoted();
      if (!s.ok()) return s.status();
      v.s = *std::move(s);
      return v;
    }
    if (Consume("array<")) {
      v.kind = CompositeValue::Kind::kInts;
      if (Word() != "i64") return Error("i64 array");
      if (Consume(":")) {
        do {
          int64_t x;
          if (!absl::SimpleAtoi(Word(), &x)) return Error("an integer");
          v.ints.push_back(x);
        } while (Consume(","));
      }
      if (!Consume(">")) return Error("'>'");
      return v;
    }
    const absl::string_view word = Word();
    if (word == "true" || word == "false") {
      v.kind = CompositeValue::Kind::kBool;
      v.b = word == "true";
      return v;
    }
    if (word.empty()) return Error("a value");
    std::string type;
    if (Consume(":")) type = std::string(Word());
    const bool is_float_type = !type.empty() && (type[0] == 'f' || type == "bf16");
    if (word.size() > 2 && word[0] == '0' && (word[1] == 'x' || word[1] == 'X')) {
      // Bit pattern of a float: 16 hex digits are an f64, fewer an f32.
      const uint64_t bits = std::strtoull(std::string(word.substr(2)).c_str(), nullptr, 16);
      v.kind = CompositeValue::Kind::kFloat;
      if (word.size() - 2 > 8) {
        std::memcpy(&v.f, &bits, sizeof(double));
      } else {
        float f;
        const uint32_t narrow = static_cast<uint32_t>(bits);
        std::memcpy(&f, &narrow, sizeof(float));
        v.f = f;
      }
      return v;
    }
    if (!is_float_type && absl::SimpleAtoi(word, &v.i)) {
      v.kind = CompositeValue::Kind::kInt;
      return v;
    }
    if (absl::SimpleAtod(word, &v.f)) {
      v.kind = CompositeValue::Kind::kFloat;
      return v;
    }
    return Error("a number");
  }

 private:
  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<CompositeAttributeMap> CompositeAttributeMap::Parse(absl::string_view text) {
  CompositeAttributeMap map;
  Reader reader(text);
  if (!reader.Consume("{")) return reader.Error("'{'");
  if (!reader.Consume("}")) {
    do {
      const std::string name(reader.Word());
      if (name.empty()) return reader.Error("an attribute name");
      if (!reader.Consume("=")) return reader.Error("'='");
      absl::StatusOr<CompositeValue> value = reader.Value();
      if (!value.ok()) return value.status();
      map.values_[name] = *std::move(value);
    } while (reader.Consume(","));
    if (!reader.Consume("}")) return reader.Error("'}' or ','");
  }
  if (!reader.AtEnd()) return reader.Error("the end");
  return map;
}

const CompositeValue* CompositeAttributeMap::Find(absl::string_view name) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? nullptr : &it->second;
}

std::optional<int64_t> CompositeAttributeMap::Int(absl::string_view name) const {
  const CompositeValue* v = Find(name);
  if (v == nullptr || v->kind != CompositeValue::Kind::kInt) return std::nullopt;
  return v->i;
}

std::optional<double> CompositeAttributeMap::Float(absl::string_view name) const {
  const CompositeValue* v = Find(name);
  if (v == nullptr) return std::nullopt;
  if (v->kind == CompositeValue::Kind::kFloat) return v->f;
  if (v->kind == CompositeValue::Kind::kInt) return static_cast<double>(v->i);
  return std::nullopt;
}

std::optional<std::vector<int64_t>> CompositeAttributeMap::Ints(absl::string_view name) const {
  const CompositeValue* v = Find(name);
  if (v == nullptr || v->kind != CompositeValue::Kind::kInts) return std::nullopt;
  return v->ints;
}

std::optional<std::string> CompositeAttributeMap::String(absl::string_view name) const {
  const CompositeValue* v = Find(name);
  if (v == nullptr || v->kind != CompositeValue::Kind::kString) return std::nullopt;
  return v->s;
}

}  // namespace host
}  // namespace hloc
