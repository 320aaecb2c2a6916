// Corpus and zoo walking for tests; see corpus.h.
#include "hlo/testing/corpus.h"

#include <dirent.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace testdata {

std::vector<std::string> ListFiles(const std::string& dir, absl::string_view suffix) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* entry = readdir(d)) {
    std::string name = entry->d_name;
    if (absl::EndsWith(name, suffix)) files.push_back(name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

bool ReadFile(const std::string& path, std::string* contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *contents = buffer.str();
  return true;
}

std::string WorkspaceRoot() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return "";
  // This file is in the library's data, so its runfiles link leads back to
  // the source tree.
  const std::string suffix = "/hlo/testing/corpus.cc";
  const std::string link = absl::StrCat(srcdir, "/", workspace, suffix);
  char resolved[PATH_MAX];
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  std::string path = resolved;
  if (!absl::EndsWith(path, suffix)) return "";
  return path.substr(0, path.size() - suffix.size());
}

std::string RunfilesDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return ".";
  return absl::StrCat(srcdir, "/", workspace);
}

std::string ZooDir() { return RunfilesDir() + "/tests/jax/zoo"; }

std::vector<std::string> SnapshotModels(const std::string& dir) {
  constexpr absl::string_view kSuffix = ".snapshot.pb";
  std::vector<std::string> names = ListFiles(dir, kSuffix);
  for (std::string& name : names) name.resize(name.size() - kSuffix.size());
  return names;
}

std::vector<std::string> ZooModels() { return SnapshotModels(ZooDir()); }

std::string CorpusDir() {
  const char* dir = std::getenv("HLOC_CORPUS_DIR");
  if (dir != nullptr && *dir != '\0') return dir;
  const std::string root = WorkspaceRoot();
  return root.empty() ? "" : root + "/../shared/corpus";
}

std::vector<CorpusFile> ListCorpusFiles(const std::string& root) {
  std::vector<CorpusFile> files;
  for (const char* subdir : {"xla", "xla2023"}) {
    const std::string dir = absl::StrCat(root, "/", subdir);
    for (std::string& name : ListFiles(dir, ".hlo")) {
      std::string path = absl::StrCat(dir, "/", name);
      files.push_back({subdir, std::move(name), std::move(path)});
    }
  }
  return files;
}

bool ParseCorpusFile(const CorpusFile& file, std::vector<CorpusModule>* modules) {
  modules->clear();
  std::string text;
  if (!ReadFile(file.path, &text)) return false;
  ParseOptions options;
  options.filename = file.name;
  std::vector<absl::StatusOr<std::unique_ptr<HloModule>>> parsed =
      ParseEachHloModule(text, options);
  for (size_t i = 0; i < parsed.size(); ++i) {
    modules->push_back({absl::StrCat(file.id(), "#", i), std::move(parsed[i])});
  }
  return true;
}

}  // namespace testdata
}  // namespace hloc
