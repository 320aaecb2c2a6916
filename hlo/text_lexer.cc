// Tokenizer for HLO text; see text_lexer.h. One pass over the bytes with a
// character-class table; tokens are views into the source.
#include "hlo/text_lexer.h"

#include <array>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace hloc {
namespace {

enum CharClass : uint8_t {
  kSpace = 1,      // ' ' \t \r \n \f \v
  kNameStart = 2,  // [A-Za-z_]
  kNameChar = 4,   // [A-Za-z0-9_.-]
  kDigit = 8,      // [0-9]
  kHexDigit = 16,  // [0-9a-fA-F]
  kWordStop = 32,  // whitespace and ,{}()[]"=/ end a raw word
};

constexpr std::array<uint8_t, 256> MakeCharClasses() {
  std::array<uint8_t, 256> table{};
  for (int c = 0; c < 256; ++c) {
    uint8_t flags = 0;
    const bool lower = c >= 'a' && c <= 'z';
    const bool upper = c >= 'A' && c <= 'Z';
    const bool digit = c >= '0' && c <= '9';
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
      flags |= kSpace | kWordStop;
    }
    if (lower || upper || c == '_') flags |= kNameStart;
    if (lower || upper || digit || c == '_' || c == '.' || c == '-') flags |= kNameChar;
    if (digit) flags |= kDigit;
    if (digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) flags |= kHexDigit;
    if (c == ',' || c == '{' || c == '}' || c == '(' || c == ')' || c == '[' || c == ']' ||
        c == '"' || c == '=' || c == '/') {
      flags |= kWordStop;
    }
    table[c] = flags;
  }
  return table;
}

constexpr std::array<uint8_t, 256> kCharClasses = MakeCharClasses();

inline bool Is(char c, uint8_t flags) {
  return (kCharClasses[static_cast<unsigned char>(c)] & flags) != 0;
}

}  // namespace

Lexer::Lexer(absl::string_view text, size_t begin, size_t end)
    : text_(text), end_(end < text.size() ? end : text.size()), pos_(begin) {
  if (pos_ > end_) pos_ = end_;
  Next();
}

void Lexer::Next() {
  const char* error = "";
  token_ = Lex(&pos_, &error);
  error_message_ = error;
}

Token Lexer::PeekNext() const {
  size_t pos = pos_;
  const char* error = "";
  return Lex(&pos, &error);
}

size_t Lexer::SkipSpaceAndComments(size_t pos, const char** error) const {
  const char* data = text_.data();
  while (pos < end_) {
    char c = data[pos];
    if (Is(c, kSpace)) {
      ++pos;
      continue;
    }
    if (c == '/' && pos + 1 < end_) {
      if (data[pos + 1] == '/') {
        const void* nl = std::memchr(data + pos, '\n', end_ - pos);
        pos = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data) + 1 : end_;
        continue;
      }
      if (data[pos + 1] == '*') {
        size_t p = pos + 2;
        bool closed = false;
        while (p + 1 < end_) {
          if (data[p] == '*' && data[p + 1] == '/') {
            closed = true;
            break;
          }
          ++p;
        }
        if (!closed) {
          *error = "unterminated /* comment";
          return pos;
        }
        pos = p + 2;
        continue;
      }
    }
    break;
  }
  return pos;
}

Token Lexer::Lex(size_t* pos_ptr, const char** error) const {
  Token token;
  size_t pos = SkipSpaceAndComments(*pos_ptr, error);
  const char* data = text_.data();
  token.offset = pos;
  if (**error != '\0') {
    token.kind = TokenKind::kError;
    token.text = absl::string_view(data + pos, 2);
    *pos_ptr = end_;
    return token;
  }
  if (pos >= end_) {
    token.kind = TokenKind::kEof;
    token.offset = end_;
    *pos_ptr = end_;
    return token;
  }
  const size_t start = pos;
  auto finish = [&](TokenKind kind, size_t length) {
    token.kind = kind;
    token.text = absl::string_view(data + start, length);
    *pos_ptr = start + length;
    return token;
  };
  auto fail = [&](const char* message, size_t length) {
    *error = message;
    return finish(TokenKind::kError, length);
  };
  // Scans a name body from `p`, stopping before "->".
  auto scan_name = [&](size_t p) {
    while (p < end_ && Is(data[p], kNameChar)) {
      if (data[p] == '-' && p + 1 < end_ && data[p + 1] == '>') break;
      ++p;
    }
    return p;
  };
  // Scans an unsigned number starting at `p` (a digit or '.'); sets *is_float.
  auto scan_number = [&](size_t p, bool* is_float) {
    *is_float = false;
    if (data[p] == '0' && p + 2 < end_ && (data[p + 1] == 'x' || data[p + 1] == 'X') &&
        Is(data[p + 2], kHexDigit)) {
      p += 2;
      while (p < end_ && Is(data[p], kHexDigit)) ++p;
      return p;
    }
    while (p < end_ && Is(data[p], kDigit)) ++p;
    if (p < end_ && data[p] == '.') {
      *is_float = true;
      ++p;
      while (p < end_ && Is(data[p], kDigit)) ++p;
    }
    if (p < end_ && (data[p] == 'e' || data[p] == 'E')) {
      size_t q = p + 1;
      if (q < end_ && (data[q] == '+' || data[q] == '-')) ++q;
      if (q < end_ && Is(data[q], kDigit)) {
        *is_float = true;
        p = q;
        while (p < end_ && Is(data[p], kDigit)) ++p;
      }
    }
    return p;
  };

  const char c = data[pos];
  switch (c) {
    case '{':
      return finish(TokenKind::kLbrace, 1);
    case '}':
      return finish(TokenKind::kRbrace, 1);
    case '(':
      return finish(TokenKind::kLparen, 1);
    case ')':
      return finish(TokenKind::kRparen, 1);
    case '[':
      return finish(TokenKind::kLsquare, 1);
    case ']':
      return finish(TokenKind::kRsquare, 1);
    case ',':
      return finish(TokenKind::kComma, 1);
    case ':':
      return finish(TokenKind::kColon, 1);
    case '=':
      return finish(TokenKind::kEqual, 1);
    case '?':
      return finish(TokenKind::kQuestion, 1);
    case '*':
      return finish(TokenKind::kStar, 1);
    case '<':
      if (pos + 1 < end_ && data[pos + 1] == '=') return finish(TokenKind::kLeq, 2);
      return fail("unexpected character '<'", 1);
    case '"':
    case '\'': {  // 'x': XLA's quoted mesh axis names (replica_groups=mesh[...]).
      size_t p = pos + 1;
      bool escape = false;
      while (p < end_ && data[p] != c) {
        if (data[p] == '\\') {
          escape = true;
          ++p;
        }
        ++p;
      }
      if (p >= end_) return fail("unterminated string", 1);
      token.has_escape = escape;
      token.kind = TokenKind::kString;
      token.text = absl::string_view(data + pos + 1, p - pos - 1);
      *pos_ptr = p + 1;
      return token;
    }
    case '%': {
      size_t p = scan_name(pos + 1);
      if (p == pos + 1) return fail("expected a name after '%'", 1);
      token.percent = true;
      token.kind = TokenKind::kName;
      token.text = absl::string_view(data + pos + 1, p - pos - 1);
      *pos_ptr = p;
      return token;
    }
    case '-': {
      if (pos + 1 < end_ && data[pos + 1] == '>') return finish(TokenKind::kArrow, 2);
      size_t p = pos + 1;
      if (p < end_ &&
          (Is(data[p], kDigit) || (data[p] == '.' && p + 1 < end_ && Is(data[p + 1], kDigit)))) {
        bool is_float;
        size_t q = scan_number(p, &is_float);
        return finish(is_float ? TokenKind::kFloat : TokenKind::kInt, q - pos);
      }
      if (p < end_ && Is(data[p], kNameStart)) {
        size_t q = scan_name(p);
        absl::string_view word(data + p, q - p);
        if (word == "inf" || word == "nan") return finish(TokenKind::kFloat, q - pos);
        return fail("unexpected character '-'", 1);
      }
      return fail("unexpected character '-'", 1);
    }
    default:
      break;
  }
  if (Is(c, kDigit) || (c == '.' && pos + 1 < end_ && Is(data[pos + 1], kDigit))) {
    bool is_float;
    size_t p = scan_number(pos, &is_float);
    return finish(is_float ? TokenKind::kFloat : TokenKind::kInt, p - pos);
  }
  if (Is(c, kNameStart)) {
    size_t p = scan_name(pos + 1);
    return finish(TokenKind::kName, p - pos);
  }
  return fail("unexpected character", 1);
}

void Lexer::RescanWord() {
  size_t p = token_.offset;
  const char* data = text_.data();
  while (p < end_ && !Is(data[p], kWordStop)) ++p;
  token_.kind = TokenKind::kWord;
  token_.percent = false;
  token_.text = absl::string_view(data + token_.offset, p - token_.offset);
  pos_ = p;
}

void Lexer::RescanBraced() {
  const size_t start = token_.offset;
  const char* data = text_.data();
  if (start >= end_ || data[start] != '{') {
    token_.kind = TokenKind::kError;
    error_message_ = "expected '{'";
    return;
  }
  int64_t depth = 0;
  size_t p = start;
  while (p < end_) {
    char c = data[p];
    if (c == '"') {
      ++p;
      while (p < end_ && data[p] != '"') {
        if (data[p] == '\\') ++p;
        ++p;
      }
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) {
        token_.kind = TokenKind::kBraced;
        token_.percent = false;
        token_.text = absl::string_view(data + start, p + 1 - start);
        pos_ = p + 1;
        return;
      }
    }
    ++p;
  }
  token_.kind = TokenKind::kError;
  token_.text = absl::string_view(data + start, 1);
  error_message_ = "unclosed '{'";
  pos_ = end_;
}

std::pair<int, int> Lexer::LineColumn(size_t offset) const {
  if (offset > text_.size()) offset = text_.size();
  int line = 1;
  size_t line_start = 0;
  const char* data = text_.data();
  size_t p = 0;
  while (p < offset) {
    const void* nl = std::memchr(data + p, '\n', offset - p);
    if (!nl) break;
    p = static_cast<size_t>(static_cast<const char*>(nl) - data) + 1;
    ++line;
    line_start = p;
  }
  return {line, static_cast<int>(offset - line_start) + 1};
}

std::string DescribeToken(const Token& token) {
  auto clip = [](absl::string_view s) {
    return s.size() > 40 ? absl::StrCat(s.substr(0, 40), "...") : std::string(s);
  };
  switch (token.kind) {
    case TokenKind::kEof:
      return "end of input";
    case TokenKind::kError:
      return absl::StrCat("'", clip(token.text), "'");
    case TokenKind::kName:
      return absl::StrCat("'", token.percent ? "%" : "", clip(token.text), "'");
    case TokenKind::kInt:
    case TokenKind::kFloat:
      return absl::StrCat("number ", clip(token.text));
    case TokenKind::kString:
      return absl::StrCat("string \"", clip(token.text), "\"");
    case TokenKind::kWord:
    case TokenKind::kBraced:
      return absl::StrCat("'", clip(token.text), "'");
    case TokenKind::kLbrace:
      return "'{'";
    case TokenKind::kRbrace:
      return "'}'";
    case TokenKind::kLparen:
      return "'('";
    case TokenKind::kRparen:
      return "')'";
    case TokenKind::kLsquare:
      return "'['";
    case TokenKind::kRsquare:
      return "']'";
    case TokenKind::kComma:
      return "','";
    case TokenKind::kColon:
      return "':'";
    case TokenKind::kEqual:
      return "'='";
    case TokenKind::kArrow:
      return "'->'";
    case TokenKind::kLeq:
      return "'<='";
    case TokenKind::kQuestion:
      return "'?'";
    case TokenKind::kStar:
      return "'*'";
  }
  return "token";
}

bool UnescapeString(absl::string_view s, std::string* out) {
  out->clear();
  out->reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i >= s.size()) return false;
    c = s[i];
    switch (c) {
      case 'n':
        out->push_back('\n');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 'a':
        out->push_back('\a');
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'v':
        out->push_back('\v');
        break;
      case '\\':
      case '"':
      case '\'':
      case '?':
        out->push_back(c);
        break;
      case 'x': {
        int value = 0;
        int digits = 0;
        while (i + 1 < s.size() && digits < 2 && Is(s[i + 1], kHexDigit)) {
          char h = s[++i];
          value = value * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
          ++digits;
        }
        if (digits == 0) return false;
        out->push_back(static_cast<char>(value));
        break;
      }
      default: {
        if (c < '0' || c > '7') return false;
        int value = c - '0';
        int digits = 1;
        while (i + 1 < s.size() && digits < 3 && s[i + 1] >= '0' && s[i + 1] <= '7') {
          value = value * 8 + (s[++i] - '0');
          ++digits;
        }
        if (value > 255) return false;
        out->push_back(static_cast<char>(value));
      }
    }
  }
  return true;
}

}  // namespace hloc
