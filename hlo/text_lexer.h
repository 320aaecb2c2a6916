// Tokenizer for HLO text. It hands out one token at a time as views into the
// source (no per-token allocation), skips whitespace and `//` / `/* */`
// comments, and lets the parser re-read the text under the current token in
// two raw modes that HLO's attribute syntax needs: a "word" (dim_labels
// `b01f_01io->b01f`, padding `0_1x1_1`, window sizes `3x3`, sparsity
// `L.1@2:4`) and a balanced `{...}` block kept verbatim (backend_config and
// frontend attribute values).
#ifndef HLOC_HLO_TEXT_LEXER_H_
#define HLOC_HLO_TEXT_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace hloc {

enum class TokenKind : uint8_t {
  kEof,
  kError,   // text holds the offending character(s); error_message() says why.
  kName,    // identifier, or `%`-prefixed name (percent is set, text excludes '%')
  kInt,     // optional '-', decimal digits or 0x-prefixed hex digits
  kFloat,   // decimal number with '.', exponent, or "-inf" / "-nan"
  kString,  // text is the contents between the quotes ("..." or '...'), still escaped
  kWord,    // produced only by Lexer::RescanWord
  kBraced,  // produced only by Lexer::RescanBraced; text includes the braces
  kLbrace,
  kRbrace,
  kLparen,
  kRparen,
  kLsquare,
  kRsquare,
  kComma,
  kColon,
  kEqual,
  kArrow,  // ->
  kLeq,    // <=
  kQuestion,
  kStar,
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  bool percent = false;     // kName written with a leading '%'
  bool has_escape = false;  // kString contains a backslash escape
  size_t offset = 0;        // Byte offset of the token's first character.
  absl::string_view text;
};

class Lexer {
 public:
  // Lexes text[begin, end) of `text`; offsets and line numbers are relative to
  // the start of `text`, so pieces of a larger file report true locations.
  Lexer(absl::string_view text, size_t begin, size_t end);
  explicit Lexer(absl::string_view text) : Lexer(text, 0, text.size()) {}

  const Token& token() const { return token_; }
  TokenKind kind() const { return token_.kind; }
  // Advances to the next token.
  void Next();
  // The token after the current one, without consuming anything.
  Token PeekNext() const;
  // True when the character right after the current token is `c` (no
  // whitespace skipped): tells `f32[` (a shape) from a name `f32`.
  bool NextCharIs(char c) const { return pos_ < end_ && text_[pos_] == c; }

  // Re-reads the current token's text as a raw word: the longest run of
  // characters other than whitespace and `,{}()[]"=`. The word becomes the
  // current token (kind kWord); call Next() after using it.
  void RescanWord();
  // Re-reads from the current token, which must be '{', up to the matching
  // '}' (nested braces counted, quoted strings skipped). The block becomes the
  // current token (kind kBraced), or kError when it is not closed.
  void RescanBraced();

  // Restarts lexing at byte offset `pos` (within the range given to the
  // constructor) and reads the token there.
  void Reset(size_t pos) {
    pos_ = pos < end_ ? pos : end_;
    Next();
  }

  // Why the current kError token is an error.
  const char* error_message() const { return error_message_; }

  // 1-based line and column of a byte offset.
  std::pair<int, int> LineColumn(size_t offset) const;
  absl::string_view text() const { return text_; }
  size_t end() const { return end_; }

 private:
  // Lexes one token starting at `*pos`, advancing it.
  Token Lex(size_t* pos, const char** error) const;
  size_t SkipSpaceAndComments(size_t pos, const char** error) const;

  absl::string_view text_;
  size_t end_;
  size_t pos_;  // Position right after the current token.
  Token token_;
  const char* error_message_ = "";
};

// A short description of a token for "expected X, got Y" messages.
std::string DescribeToken(const Token& token);

// Decodes the C-style escapes of a kString token's text (\" \\ \n \t \r
// \xNN \NNN ...). Returns false on a malformed escape.
bool UnescapeString(absl::string_view escaped, std::string* out);

}  // namespace hloc

#endif  // HLOC_HLO_TEXT_LEXER_H_
