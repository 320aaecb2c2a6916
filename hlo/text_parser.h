// Parser for XLA's HLO text format. Accepts what XLA prints and what XLA's own
// tests are written in: module headers with attributes, computations with or
// without ENTRY and '%' prefixes, comments, every per-op attribute hloc models,
// several modules split by "// -----", and files of bare computations.
// Errors are absl::InvalidArgumentError with "FILE:LINE:COLUMN: message".
#ifndef HLOC_HLO_TEXT_PARSER_H_
#define HLOC_HLO_TEXT_PARSER_H_

#include <memory>
#include <string>

#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloc {

struct ParseOptions {
  std::string filename = "<text>";  // Used in error locations.
  // A constant larger than this is an error before anything is allocated.
  // Matters for elided constants: "f32[20000,20000] constant({...})" is a few
  // bytes of text and 1.6 GB of zeros.
  int64_t max_constant_bytes = Literal::kMaxBytes;
};

// Parses exactly one module. A file of bare computations (no "HloModule"
// header) becomes a module named after the file; the last computation, or the
// one marked ENTRY, is the entry.
absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(absl::string_view text,
                                                          const ParseOptions& options = {});

// Splits on lines that are exactly "// -----" and parses each piece. Piece i's
// errors report line numbers of the whole file.
absl::StatusOr<std::vector<std::unique_ptr<HloModule>>> ParseHloModules(
    absl::string_view text, const ParseOptions& options = {});

// As ParseHloModules, but parses every piece even when others fail: one
// result per piece that holds any text other than comments.
std::vector<absl::StatusOr<std::unique_ptr<HloModule>>> ParseEachHloModule(
    absl::string_view text, const ParseOptions& options = {});

// Standalone pieces, for tests and tools.
absl::StatusOr<Shape> ParseShape(absl::string_view text);
absl::StatusOr<Literal> ParseLiteral(absl::string_view text, const Shape& shape);

}  // namespace hloc

#endif  // HLOC_HLO_TEXT_PARSER_H_
