// Round trip of real HLO text: every module in XLA's own test files
// ($HLOC_CORPUS_DIR/xla and /xla2023, split on "// -----") and every JAX dump
// in tests/jax/zoo is parsed, printed, parsed again and printed again; the two
// printouts must be identical. Inputs that are not valid HLO text (lit files
// whose pieces are MLIR or deliberately broken) are listed with the reason,
// and must be exactly the known ones below.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/testing/corpus.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace {

// The whole file, or "" when it cannot be read.
std::string ReadFile(const std::string& path) {
  std::string text;
  testdata::ReadFile(path, &text);
  return text;
}

// Pieces of the corpus that are not valid HLO text, as "file#piece" -> a
// substring of the expected error, each checked by hand. None at present:
// every piece of the corpus is HLO text (xla_tools_tests_invalid_concat.hlo is
// wrong only in its shapes, which is the verifier's business).
const std::map<std::string, std::string>& KnownInvalidPieces() {
  static const auto* known = new std::map<std::string, std::string>{};
  return *known;
}

struct Tally {
  int files = 0;
  int modules = 0;
  int parsed = 0;
  std::vector<std::string> parse_failures;       // "file#i: message"
  std::vector<std::string> unexpected_failures;  // not in KnownInvalidPieces
  std::vector<std::string> round_trip_failures;
};

// Parses `text`, prints it, and checks that printing is a fixed point.
void RoundTrip(const std::string& label, const std::string& text, Tally* tally,
               bool failures_allowed) {
  ParseOptions options;
  options.filename = label;
  std::vector<absl::StatusOr<std::unique_ptr<HloModule>>> modules =
      ParseEachHloModule(text, options);
  for (size_t i = 0; i < modules.size(); ++i) {
    const std::string piece = absl::StrCat(label, "#", i);
    ++tally->modules;
    if (!modules[i].ok()) {
      const std::string message(modules[i].status().message());
      tally->parse_failures.push_back(absl::StrCat(piece, ": ", message));
      auto known = KnownInvalidPieces().find(piece);
      if (!failures_allowed || known == KnownInvalidPieces().end() ||
          !absl::StrContains(message, known->second)) {
        tally->unexpected_failures.push_back(absl::StrCat(piece, ": ", message));
      }
      continue;
    }
    ++tally->parsed;
    const std::string first = PrintModule(**modules[i]);
    ParseOptions reparse_options;
    reparse_options.filename = absl::StrCat("print(", piece, ")");
    absl::StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(first, reparse_options);
    if (!again.ok()) {
      tally->round_trip_failures.push_back(
          absl::StrCat(piece, ": printed text does not parse: ", again.status().message()));
      continue;
    }
    const std::string second = PrintModule(**again);
    if (first != second) {
      size_t at = 0;
      while (at < first.size() && at < second.size() && first[at] == second[at]) ++at;
      tally->round_trip_failures.push_back(absl::StrCat(piece, ": second print differs at byte ",
                                                        at, ": '", first.substr(at, 80), "' vs '",
                                                        second.substr(at, 80), "'"));
    }
  }
}

void Report(const char* title, const Tally& tally) {
  std::printf("%s: %d files, %d modules, %d parsed, %zu failed to parse, %zu round-trip failures\n",
              title, tally.files, tally.modules, tally.parsed, tally.parse_failures.size(),
              tally.round_trip_failures.size());
  for (const std::string& failure : tally.parse_failures) {
    std::printf("  parse failure: %s\n", failure.c_str());
  }
}

TEST(TextRoundTripCorpus, XlaTestFilesReachAFixedPoint) {
  const char* corpus = std::getenv("HLOC_CORPUS_DIR");
  if (corpus == nullptr || *corpus == '\0') {
    GTEST_SKIP() << "HLOC_CORPUS_DIR is not set";
  }
  Tally tally;
  for (const testdata::CorpusFile& file : testdata::ListCorpusFiles(corpus)) {
    ++tally.files;
    RoundTrip(file.id(), ReadFile(file.path), &tally, /*failures_allowed=*/true);
  }
  Report("XLA corpus", tally);
  EXPECT_GT(tally.files, 0) << "no .hlo files under " << corpus;
  for (const std::string& failure : tally.unexpected_failures) {
    ADD_FAILURE() << "unexpected parse failure: " << failure;
  }
  for (const std::string& failure : tally.round_trip_failures) ADD_FAILURE() << failure;
}

TEST(TextRoundTripCorpus, JaxDumpsParseAndReachAFixedPoint) {
  const std::string zoo = testdata::ZooDir();
  Tally tally;
  for (const char* suffix : {".before.txt", ".after.txt"}) {
    for (const std::string& file : testdata::ListFiles(zoo, suffix)) {
      ++tally.files;
      RoundTrip(file, ReadFile(zoo + "/" + file), &tally, /*failures_allowed=*/false);
    }
  }
  Report("JAX zoo", tally);
  EXPECT_GE(tally.files, 32) << "expected the JAX zoo under " << zoo;
  EXPECT_EQ(tally.parsed, tally.modules);
  for (const std::string& failure : tally.unexpected_failures) ADD_FAILURE() << failure;
  for (const std::string& failure : tally.round_trip_failures) ADD_FAILURE() << failure;
}

}  // namespace
}  // namespace hloc
