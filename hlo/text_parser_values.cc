// Value syntax of HLO text: numbers, lists, strings, shapes, layouts and
// literals. Structured attribute values (windows, shardings, metadata, ...)
// are in text_parser_structured.cc.
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser_internal.h"

namespace hloc {
namespace text_internal {
namespace {

// Splits an integer token's text into sign and magnitude; false on overflow of
// 64 bits or malformed text. Accepts decimal and 0x-prefixed hex.
bool ParseIntegerText(absl::string_view text, bool* negative, uint64_t* magnitude) {
  *negative = false;
  if (!text.empty() && text[0] == '-') {
    *negative = true;
    text.remove_prefix(1);
  }
  if (text.empty()) return false;
  uint64_t value = 0;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    for (char c : text) {
      int digit;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') {
        digit = (c | 0x20) - 'a' + 10;
      } else {
        return false;
      }
      if (value >> 60) return false;
      value = value * 16 + digit;
    }
  } else {
    for (char c : text) {
      if (c < '0' || c > '9') return false;
      if (__builtin_mul_overflow(value, uint64_t{10}, &value) ||
          __builtin_add_overflow(value, static_cast<uint64_t>(c - '0'), &value)) {
        return false;
      }
    }
  }
  *magnitude = value;
  return true;
}

// Decimal text (an integer or float token, "inf", "nan", "-inf", "-nan") to
// a double; false when malformed or beyond double's range.
bool TextToDouble(absl::string_view text, double* value) {
  bool negative = false;
  absl::string_view body = text;
  if (!body.empty() && body[0] == '-') {
    negative = true;
    body.remove_prefix(1);
  }
  if (body == "inf") {
    *value = negative ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
    return true;
  }
  if (body == "nan") {
    *value = std::copysign(std::numeric_limits<double>::quiet_NaN(), negative ? -1.0 : 1.0);
    return true;
  }
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    bool unused;
    uint64_t magnitude;
    if (!ParseIntegerText(body, &unused, &magnitude)) return false;
    *value = negative ? -static_cast<double>(magnitude) : static_cast<double>(magnitude);
    return true;
  }
  auto result = std::from_chars(text.data(), text.data() + text.size(), *value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

PrimitiveType LookupElementType(absl::string_view name, bool* found) {
  *found = true;
  // The common spellings first; the table lookup covers the rest.
  if (name == "f32") return xla::F32;
  if (name == "s32") return xla::S32;
  if (name == "pred") return xla::PRED;
  if (name == "bf16") return xla::BF16;
  if (name == "f16") return xla::F16;
  if (name == "s64") return xla::S64;
  if (name == "u32") return xla::U32;
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(name);
  if (!type) {
    *found = false;
    return xla::PRIMITIVE_TYPE_INVALID;
  }
  return *type;
}

}  // namespace

Parser::Parser(absl::string_view text, size_t begin, size_t end, const ParseOptions& options)
    : lexer_(text, begin, end), options_(options) {}

absl::Status Parser::ErrorAt(size_t offset, absl::string_view message) const {
  auto [line, column] = lexer_.LineColumn(offset);
  return absl::InvalidArgumentError(
      absl::StrCat(options_.filename, ":", line, ":", column, ": ", message));
}

absl::Status Parser::Expected(absl::string_view what) const {
  const Token& t = tok();
  if (t.kind == TokenKind::kError) {
    return ErrorAt(t.offset, absl::StrCat("expected ", what, ", got ", lexer_.error_message()));
  }
  return ErrorAt(t.offset, absl::StrCat("expected ", what, ", got ", DescribeToken(t)));
}

absl::Status Parser::Expect(TokenKind kind, absl::string_view what) {
  if (lexer_.kind() != kind) return Expected(what);
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status Parser::CheckDepth() const {
  if (depth_ > kMaxNesting) {
    return ErrorAt(tok().offset, absl::StrCat("nesting deeper than ", kMaxNesting, " levels"));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseInt64(int64_t* value) {
  if (!At(TokenKind::kInt)) return Expected("an integer");
  bool negative;
  uint64_t magnitude;
  const uint64_t limit = uint64_t{1} << 63;
  if (!ParseIntegerText(tok().text, &negative, &magnitude) ||
      magnitude > (negative ? limit : limit - 1)) {
    return ErrorAt(tok().offset, absl::StrCat("integer ", tok().text, " does not fit in 64 bits"));
  }
  *value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status Parser::ParseInt32(int32_t* value) {
  const size_t offset = tok().offset;
  int64_t wide;
  HLOC_RETURN_IF_ERROR(ParseInt64(&wide));
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
    return ErrorAt(offset, absl::StrCat("integer ", wide, " does not fit in 32 bits"));
  }
  *value = static_cast<int32_t>(wide);
  return absl::OkStatus();
}

absl::Status Parser::ParseDouble(double* value) {
  const Token& t = tok();
  const bool numeric =
      t.kind == TokenKind::kInt || t.kind == TokenKind::kFloat ||
      (t.kind == TokenKind::kName && !t.percent && (t.text == "inf" || t.text == "nan"));
  if (!numeric) return Expected("a number");
  if (!TextToDouble(t.text, value)) {
    return ErrorAt(t.offset, absl::StrCat("number ", t.text, " is out of range for f64"));
  }
  lexer_.Next();
  // nan(0x...) spells a NaN payload.
  if (std::isnan(*value) && At(TokenKind::kLparen)) {
    lexer_.Next();
    if (!At(TokenKind::kInt)) return Expected("a NaN payload such as 0x1");
    bool negative;
    uint64_t payload;
    if (!ParseIntegerText(tok().text, &negative, &payload) || negative || payload == 0 ||
        payload >= (uint64_t{1} << 52)) {
      return ErrorAt(tok().offset, absl::StrCat("invalid NaN payload ", tok().text));
    }
    lexer_.Next();
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after the NaN payload"));
    uint64_t bits =
        (std::signbit(*value) ? uint64_t{1} << 63 : 0) | (uint64_t{0x7ff} << 52) | payload;
    std::memcpy(value, &bits, sizeof(bits));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseBool(bool* value) {
  if (AtName("true")) {
    *value = true;
  } else if (AtName("false")) {
    *value = false;
  } else {
    return Expected("true or false");
  }
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status Parser::ParseString(std::string* value) {
  if (!At(TokenKind::kString)) return Expected("a quoted string");
  if (tok().has_escape) {
    if (!UnescapeString(tok().text, value)) {
      return ErrorAt(tok().offset, "malformed escape sequence in string");
    }
  } else {
    value->assign(tok().text.data(), tok().text.size());
  }
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status Parser::ParseStringOrBraced(std::string* value) {
  if (At(TokenKind::kString)) return ParseString(value);
  if (!At(TokenKind::kLbrace)) return Expected("a quoted string or a {...} block");
  lexer_.RescanBraced();
  if (!At(TokenKind::kBraced)) {
    return ErrorAt(tok().offset, "'{' is never closed");
  }
  value->assign(tok().text.data(), tok().text.size());
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status Parser::ParseInt64List(std::vector<int64_t>* values) {
  values->clear();
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a list of integers"));
  if (Eat(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    int64_t v;
    HLOC_RETURN_IF_ERROR(ParseInt64(&v));
    values->push_back(v);
  } while (Eat(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "',' or '}' in a list of integers");
}

absl::Status Parser::ParseInt64ListList(std::vector<std::vector<int64_t>>* values) {
  values->clear();
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a list of lists"));
  if (Eat(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    values->emplace_back();
    HLOC_RETURN_IF_ERROR(ParseInt64List(&values->back()));
  } while (Eat(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "',' or '}' in a list of lists");
}

absl::Status Parser::ParseBoolList(std::vector<bool>* values) {
  values->clear();
  if (!At(TokenKind::kLbrace)) {
    bool v;
    HLOC_RETURN_IF_ERROR(ParseBool(&v));
    values->push_back(v);
    return absl::OkStatus();
  }
  lexer_.Next();
  if (Eat(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    bool v;
    HLOC_RETURN_IF_ERROR(ParseBool(&v));
    values->push_back(v);
  } while (Eat(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "',' or '}' in a list of booleans");
}

absl::Status Parser::ParseShapeIndex(ShapeIndex* index) { return ParseInt64List(index); }

absl::Status Parser::ParseWordToken(absl::string_view what, absl::string_view* word) {
  const Token before = tok();
  lexer_.RescanWord();
  if (tok().text.empty()) {
    return ErrorAt(before.offset, absl::StrCat("expected ", what, ", got ", DescribeToken(before)));
  }
  *word = tok().text;
  lexer_.Next();
  return absl::OkStatus();
}

// ---------------------------------------------------------------- shapes

bool Parser::AtShape() const {
  if (At(TokenKind::kLparen)) return true;
  return At(TokenKind::kName) && !tok().percent && lexer_.NextCharIs('[');
}

absl::Status Parser::ParseShape(Shape* shape) {
  DepthGuard guard(this);
  HLOC_RETURN_IF_ERROR(CheckDepth());
  if (Eat(TokenKind::kLparen)) {
    std::vector<Shape> elements;
    if (!Eat(TokenKind::kRparen)) {
      do {
        elements.emplace_back();
        HLOC_RETURN_IF_ERROR(ParseShape(&elements.back()));
      } while (Eat(TokenKind::kComma));
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "',' or ')' in a tuple shape"));
    }
    *shape = Shape::Tuple(std::move(elements));
    return absl::OkStatus();
  }
  if (!At(TokenKind::kName) || tok().percent) return Expected("a shape");
  bool known;
  const PrimitiveType type = LookupElementType(tok().text, &known);
  if (!known || type == xla::TUPLE) {
    return ErrorAt(tok().offset, absl::StrCat("unknown element type '", tok().text, "'"));
  }
  lexer_.Next();
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLsquare, "'[' after the element type"));
  if (type == xla::TOKEN) {
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRsquare, "']' (token shapes have no dimensions)"));
    *shape = Shape::Token();
    return absl::OkStatus();
  }
  Shape result(type, {});
  if (!Eat(TokenKind::kRsquare)) {
    do {
      if (Eat(TokenKind::kQuestion)) {
        result.add_dimension(Shape::kUnboundedSize, /*is_dynamic=*/true);
        continue;
      }
      const bool bounded = Eat(TokenKind::kLeq);
      const size_t offset = tok().offset;
      int64_t size;
      HLOC_RETURN_IF_ERROR(ParseInt64(&size));
      if (size < 0) {
        return ErrorAt(offset, absl::StrCat("expected a dimension size >= 0, got ", size));
      }
      result.add_dimension(size, bounded);
    } while (Eat(TokenKind::kComma));
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRsquare, "',' or ']' in the dimensions"));
  }
  if (At(TokenKind::kLbrace)) {
    TokenKind next = lexer_.PeekNext().kind;
    if (next == TokenKind::kInt || next == TokenKind::kColon) {
      Layout layout;
      HLOC_RETURN_IF_ERROR(ParseLayout(&layout));
      result.set_layout(std::move(layout));
    }
  }
  *shape = std::move(result);
  return absl::OkStatus();
}

absl::Status Parser::ParseValidatedShape(Shape* shape) {
  const size_t offset = tok().offset;
  HLOC_RETURN_IF_ERROR(ParseShape(shape));
  if (shape->element_type() == xla::OPAQUE_TYPE && shape->rank() == 0) return absl::OkStatus();
  absl::Status status = ValidateShape(*shape);
  if (!status.ok()) return ErrorAt(offset, status.message());
  return absl::OkStatus();
}

absl::Status Parser::ParseLayout(Layout* layout) {
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a layout"));
  if (At(TokenKind::kInt)) {
    do {
      int64_t d;
      HLOC_RETURN_IF_ERROR(ParseInt64(&d));
      layout->minor_to_major.push_back(d);
    } while (Eat(TokenKind::kComma));
  }
  if (Eat(TokenKind::kColon)) {
    bool seen_tiles = false, seen_element_size = false, seen_memory_space = false;
    while (!At(TokenKind::kRbrace)) {
      const Token item = tok();
      if (item.kind != TokenKind::kName || item.percent) {
        return ErrorAt(item.offset,
                       absl::StrCat("unsupported layout attribute ", DescribeToken(item),
                                    " (hloc reads T(...), E(...) and S(...))"));
      }
      if (item.text == "T" && !seen_tiles) {
        seen_tiles = true;
        lexer_.Next();
        if (!At(TokenKind::kLparen)) return Expected("'(' after T in a layout");
        while (Eat(TokenKind::kLparen)) {
          Tile tile;
          if (!At(TokenKind::kRparen)) {
            do {
              if (Eat(TokenKind::kStar)) {
                tile.dimensions.push_back(Tile::kCombineDimension);
                continue;
              }
              const size_t at = tok().offset;
              int64_t d;
              HLOC_RETURN_IF_ERROR(ParseInt64(&d));
              if (d <= 0) {
                return ErrorAt(at, absl::StrCat("tile dimension ", d,
                                                " is not positive (use * to combine dimensions)"));
              }
              tile.dimensions.push_back(d);
            } while (Eat(TokenKind::kComma));
          }
          HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "',' or ')' in a tile"));
          layout->tiles.push_back(std::move(tile));
        }
      } else if ((item.text == "E" && !seen_element_size) ||
                 (item.text == "S" && !seen_memory_space)) {
        const bool is_element_size = item.text == "E";
        (is_element_size ? seen_element_size : seen_memory_space) = true;
        lexer_.Next();
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' in a layout attribute"));
        const size_t at = tok().offset;
        int64_t v;
        HLOC_RETURN_IF_ERROR(ParseInt64(&v));
        if (is_element_size && v < 0) {
          return ErrorAt(at, absl::StrCat("negative element size E(", v, ") in a layout"));
        }
        (is_element_size ? layout->element_size_in_bits : layout->memory_space) = v;
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' in a layout attribute"));
      } else {
        return ErrorAt(item.offset,
                       absl::StrCat("unsupported or repeated layout attribute '", item.text,
                                    "' (hloc reads T(...), E(...) and S(...))"));
      }
    }
  }
  return Expect(TokenKind::kRbrace, "'}' to end the layout");
}

// -------------------------------------------------------------- literals

absl::Status Parser::ParseLiteral(const Shape& shape, Literal* literal) {
  DepthGuard guard(this);
  HLOC_RETURN_IF_ERROR(CheckDepth());
  if (shape.IsTuple()) {
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' to start a tuple literal"));
    std::vector<Literal> elements;
    elements.reserve(shape.tuple_shapes_size());
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i > 0) HLOC_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' between tuple elements"));
      // XLA writes each element's shape before its value; it must agree.
      if (At(TokenKind::kName) && lexer_.NextCharIs('[')) {
        const size_t offset = tok().offset;
        Shape written;
        HLOC_RETURN_IF_ERROR(ParseShape(&written));
        if (!written.Compatible(shape.tuple_shapes(i))) {
          return ErrorAt(
              offset, absl::StrCat("tuple element ", i, " has shape ",
                                   shape.tuple_shapes(i).ToString(), ", not ", written.ToString()));
        }
      }
      elements.emplace_back();
      HLOC_RETURN_IF_ERROR(ParseLiteral(shape.tuple_shapes(i), &elements.back()));
    }
    HLOC_RETURN_IF_ERROR(Expect(
        TokenKind::kRparen,
        absl::StrCat("')' after the ", shape.tuple_shapes_size(), " elements of a tuple literal")));
    *literal = Literal::Tuple(std::move(elements));
    return absl::OkStatus();
  }
  if (!shape.IsArray()) {
    return ErrorAt(tok().offset, absl::StrCat("a literal cannot have shape ", shape.ToString()));
  }
  return ParseArrayLiteral(shape, literal);
}

absl::Status Parser::ParseArrayLiteral(const Shape& shape, Literal* literal) {
  const size_t start = tok().offset;
  const int64_t rank = shape.rank();
  auto create = [&]() -> absl::Status {
    std::optional<int64_t> bytes = shape.CheckedByteSize();
    // (Above Literal::kMaxBytes, Literal::Create says why.)
    if (bytes && *bytes > options_.max_constant_bytes && *bytes <= Literal::kMaxBytes) {
      return ErrorAt(start, absl::StrCat("constant of shape ", shape.ToString(), " takes ", *bytes,
                                         " bytes, more than the limit of ",
                                         options_.max_constant_bytes));
    }
    absl::StatusOr<Literal> created = Literal::Create(shape);
    if (!created.ok()) return ErrorAt(start, created.status().message());
    *literal = std::move(created).value();
    return absl::OkStatus();
  };
  // "{...}" stands for elided contents: a zero-filled literal.
  if (rank > 0 && At(TokenKind::kLbrace)) {
    absl::string_view text = lexer_.text();
    size_t p = start + 1;
    while (p < lexer_.end() && (text[p] == ' ' || text[p] == '\t' || text[p] == '\n')) ++p;
    if (lexer_.end() - p >= 3 && text.substr(p, 3) == "...") {
      lexer_.Reset(p + 3);
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' after '...'"));
      return create();
    }
  }
  // Every element takes at least one character: refuse before allocating
  // when the text cannot hold them all.
  std::optional<int64_t> count = shape.CheckedElementCount();
  if (!count) return ErrorAt(start, absl::StrCat("shape ", shape.ToString(), " is too large"));
  if (static_cast<uint64_t>(*count) > lexer_.end() - start) {
    return ErrorAt(start, absl::StrCat("constant of shape ", shape.ToString(), " needs ", *count,
                                       " elements; the text is shorter than that"));
  }
  HLOC_RETURN_IF_ERROR(create());
  if (rank == 0) return ParseLiteralElement(literal, 0);

  const std::vector<int64_t>& dims = shape.dimensions();
  std::vector<int64_t> seen(rank, 0);
  int64_t level = 0;
  int64_t linear = 0;
  bool need_separator = false;  // after a value or '}', only ',' or '}' may follow
  do {
    const Token t = tok();
    switch (t.kind) {
      case TokenKind::kLbrace:
        if (need_separator) return Expected("',' or '}'");
        if (level == rank) {
          return ErrorAt(t.offset, absl::StrCat("constant of shape ", shape.ToString(false),
                                                " nests '{' deeper than its rank ", rank));
        }
        if (level > 0 && ++seen[level - 1] > dims[level - 1]) {
          return ErrorAt(t.offset,
                         absl::StrCat("dimension ", level - 1, " of the constant has more than ",
                                      dims[level - 1], " elements"));
        }
        ++level;
        lexer_.Next();
        break;
      case TokenKind::kRbrace:
        if (level == 0) return Expected("'{'");
        if (seen[level - 1] != dims[level - 1]) {
          return ErrorAt(t.offset, absl::StrCat("dimension ", level - 1, " of the constant has ",
                                                seen[level - 1], " elements, the shape says ",
                                                dims[level - 1]));
        }
        seen[level - 1] = 0;
        --level;
        need_separator = true;
        lexer_.Next();
        break;
      case TokenKind::kComma:
        if (!need_separator) return Expected("a value or '{'");
        need_separator = false;
        lexer_.Next();
        break;
      default:
        if (level == 0) return Expected("'{' to start a constant array");
        if (need_separator) return Expected("',' or '}'");
        if (level != rank) {
          return ErrorAt(t.offset,
                         absl::StrCat("expected '{' in constant of shape ", shape.ToString(false),
                                      ": values belong at "
                                      "nesting level ",
                                      rank, ", not ", level));
        }
        if (++seen[rank - 1] > dims[rank - 1]) {
          return ErrorAt(t.offset,
                         absl::StrCat("dimension ", rank - 1, " of the constant has more than ",
                                      dims[rank - 1], " elements"));
        }
        HLOC_RETURN_IF_ERROR(ParseLiteralElement(literal, linear++));
        need_separator = true;
    }
  } while (level > 0);
  return absl::OkStatus();
}

absl::Status Parser::ParseLiteralElement(Literal* literal, int64_t index) {
  const PrimitiveType type = literal->shape().element_type();
  const Token t = tok();
  auto out_of_range = [&](absl::string_view value) {
    return ErrorAt(t.offset,
                   absl::StrCat("value ", value, " is out of range for ", PrimitiveTypeName(type)));
  };
  if (type == xla::PRED) {
    bool value;
    if (t.kind == TokenKind::kInt && (t.text == "0" || t.text == "1")) {
      value = t.text == "1";
      lexer_.Next();
    } else {
      HLOC_RETURN_IF_ERROR(ParseBool(&value));
    }
    literal->SetFromInt64(index, value ? 1 : 0);
    return absl::OkStatus();
  }
  if (IsInteger(type)) {
    if (t.kind != TokenKind::kInt)
      return Expected(absl::StrCat("an integer for ", PrimitiveTypeName(type)));
    bool negative;
    uint64_t magnitude;
    if (!ParseIntegerText(t.text, &negative, &magnitude)) return out_of_range(t.text);
    const int bits = BitWidth(type);
    if (IsUnsignedInteger(type)) {
      const uint64_t max = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      if ((negative && magnitude != 0) || magnitude > max) return out_of_range(t.text);
      literal->SetFromUint64(index, magnitude);
    } else {
      const uint64_t max_positive = (uint64_t{1} << (bits - 1)) - 1;
      if (magnitude > (negative ? max_positive + 1 : max_positive)) return out_of_range(t.text);
      literal->SetFromInt64(
          index, negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude));
    }
    lexer_.Next();
    return absl::OkStatus();
  }
  if (IsFloatingPoint(type)) {
    double value;
    HLOC_RETURN_IF_ERROR(ParseDouble(&value));
    if (type == xla::F32 && std::isnan(value)) {
      // Keep the NaN's sign and a payload written as nan(0x...) when it fits.
      uint64_t bits64;
      std::memcpy(&bits64, &value, sizeof(bits64));
      const uint64_t payload64 = bits64 & ((uint64_t{1} << 52) - 1);
      const uint32_t payload = payload64 != 0 && payload64 < (uint64_t{1} << 23)
                                   ? static_cast<uint32_t>(payload64)
                                   : 0x400000u;
      const uint32_t bits = (bits64 >> 63 ? 0x80000000u : 0u) | 0x7f800000u | payload;
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      literal->mutable_data<float>()[index] = f;
      return absl::OkStatus();
    }
    literal->SetFromDouble(index, value);
    if (std::isfinite(value) && !std::isfinite(literal->GetAsDouble(index))) {
      return out_of_range(t.text);
    }
    return absl::OkStatus();
  }
  if (IsComplex(type)) {
    double real, imag = 0;
    if (Eat(TokenKind::kLparen)) {
      HLOC_RETURN_IF_ERROR(ParseDouble(&real));
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' between the parts of a complex number"));
      HLOC_RETURN_IF_ERROR(ParseDouble(&imag));
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after a complex number"));
    } else {
      HLOC_RETURN_IF_ERROR(ParseDouble(&real));
    }
    literal->SetFromComplex(index, {real, imag});
    std::complex<double> stored = literal->GetAsComplex(index);
    if ((std::isfinite(real) && !std::isfinite(stored.real())) ||
        (std::isfinite(imag) && !std::isfinite(stored.imag()))) {
      return out_of_range(absl::StrCat("(", real, ", ", imag, ")"));
    }
    return absl::OkStatus();
  }
  return ErrorAt(t.offset,
                 absl::StrCat("constants of type ", PrimitiveTypeName(type), " are not supported"));
}

}  // namespace text_internal
}  // namespace hloc
