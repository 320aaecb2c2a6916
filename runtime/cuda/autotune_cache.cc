// The on-disk autotuning cache (see autotune_cache.h).
#include "runtime/cuda/autotune_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/cuda/status_util.h"

namespace hloc {
namespace cuda {
namespace {

constexpr char kHeader[] = "# hloc autotune cache v1";

std::string Clean(absl::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

// mkdir -p of the directory holding `path`.
absl::Status MakeParentDirectories(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create directory ", dir, ": ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> ReadFile(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0 && errno == ENOENT) return std::optional<std::string>();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot read autotune cache ", path, ": ", std::strerror(errno)));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return std::optional<std::string>(buffer.str());
}

}  // namespace

std::string AutotuneCache::DefaultPath() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] == '\0') return ".hloc-autotune.tsv";
  return absl::StrCat(home, "/.cache/hloc/autotune.tsv");
}

absl::Status ParseAutotuneFile(absl::string_view text, absl::string_view path,
                               std::map<std::string, std::string>* entries) {
  if (text.empty()) return absl::OkStatus();
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines[0] != kHeader) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":1: not an hloc autotune cache (expected '", kHeader, "')"));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const size_t tab = lines[i].find('\t');
    if (tab == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", i + 1, ": expected 'key<TAB>value'"));
    }
    (*entries)[std::string(lines[i].substr(0, tab))] = std::string(lines[i].substr(tab + 1));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<AutotuneCache>> AutotuneCache::Open(std::string path) {
  auto cache = std::make_unique<AutotuneCache>();
  cache->path_ = std::move(path);
  HLOC_CUDA_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadFile(cache->path_));
  if (text.has_value()) {
    HLOC_CUDA_RETURN_IF_ERROR(ParseAutotuneFile(*text, cache->path_, &cache->entries_));
  }
  return cache;
}

std::optional<std::string> AutotuneCache::Lookup(absl::string_view key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(Clean(key));
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void AutotuneCache::Insert(absl::string_view key, absl::string_view value) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_[Clean(key)] = Clean(value);
}

size_t AutotuneCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

absl::Status AutotuneCache::Save() const {
  if (path_.empty()) return absl::OkStatus();
  std::map<std::string, std::string> merged;
  HLOC_CUDA_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadFile(path_));
  if (text.has_value()) {
    // A damaged file is replaced rather than kept.
    if (!ParseAutotuneFile(*text, path_, &merged).ok()) merged.clear();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, value] : entries_) merged[key] = value;
  }
  HLOC_CUDA_RETURN_IF_ERROR(MakeParentDirectories(path_));
  const std::string temporary = absl::StrCat(path_, ".tmp.", getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write ", temporary, ": ", std::strerror(errno)));
    }
    out << kHeader << "\n";
    for (const auto& [key, value] : merged) out << key << "\t" << value << "\n";
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      return absl::DataLossError(absl::StrCat("writing ", temporary, " failed"));
    }
  }
  if (std::rename(temporary.c_str(), path_.c_str()) != 0) {
    const std::string error = std::strerror(errno);
    std::remove(temporary.c_str());
    return absl::PermissionDeniedError(
        absl::StrCat("cannot rename ", temporary, " to ", path_, ": ", error));
  }
  return absl::OkStatus();
}

}  // namespace cuda
}  // namespace hloc
