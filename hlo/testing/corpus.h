// Test support for the tests that walk real modules: the XLA test corpus
// ($HLOC_CORPUS_DIR, else ../shared/corpus beside the workspace; *.hlo files
// under xla/ and xla2023/, lit files holding several modules split by
// "// -----") and the JAX zoo (tests/jax/zoo, from the runfiles; a test lists
// "//tests/jax:zoo" in its data). Test code only (testonly target).
#ifndef HLOC_HLO_TESTING_CORPUS_H_
#define HLOC_HLO_TESTING_CORPUS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hlo/module.h"

namespace hloc {
namespace testdata {

// Names (not paths) of the files in `dir` whose name ends in `suffix`,
// sorted; empty when `dir` cannot be read.
std::vector<std::string> ListFiles(const std::string& dir, absl::string_view suffix);

// The whole file (binary safe); false when it cannot be opened.
bool ReadFile(const std::string& path, std::string* contents);

// The source workspace (realpath of this library's runfiles link), or "" when
// not run by `bazel test`.
std::string WorkspaceRoot();

// The runfiles tree of the test ($TEST_SRCDIR/$TEST_WORKSPACE), or "." when
// not run by `bazel test`.
std::string RunfilesDir();

// tests/jax/zoo in the runfiles.
std::string ZooDir();

// The model names of a zoo folder: NAME for each NAME.snapshot.pb, sorted.
std::vector<std::string> SnapshotModels(const std::string& dir);

// The JAX zoo's model names (SnapshotModels of ZooDir(); each beside
// NAME.before.pb and the text dumps).
std::vector<std::string> ZooModels();

// $HLOC_CORPUS_DIR, else ../shared/corpus beside the workspace, else "".
std::string CorpusDir();

// One *.hlo file of the corpus.
struct CorpusFile {
  std::string subdir;  // "xla" or "xla2023"
  std::string name;    // file name
  std::string path;    // full path
  std::string id() const { return subdir + "/" + name; }
};

// Every *.hlo file under root/xla and then root/xla2023, each sorted by name.
std::vector<CorpusFile> ListCorpusFiles(const std::string& root);

// One module of a corpus file: id is "xla/NAME.hlo#INDEX".
struct CorpusModule {
  std::string id;
  absl::StatusOr<std::unique_ptr<HloModule>> module;
};

// Reads `file` and parses each of its "// -----" pieces (ParseOptions
// filename: the file name). False when the file cannot be read.
bool ParseCorpusFile(const CorpusFile& file, std::vector<CorpusModule>* modules);

}  // namespace testdata
}  // namespace hloc

#endif  // HLOC_HLO_TESTING_CORPUS_H_
