// Autotuning results kept on disk so a rebuild picks the same algorithms
// without timing again (and two runs of hloc compile to the same program).
// The file is text, one "key<TAB>value" line per entry after a header line;
// keys are deterministic descriptions of the problem (device name, shapes,
// types, epilogue), values are whatever the tuner stores (an encoded
// algorithm). Saving merges with what is on disk and replaces the file
// atomically (write to a temporary, rename), so concurrent hloc processes
// at worst lose each other's newest entries, never corrupt the file.
#ifndef HLOC_RUNTIME_CUDA_AUTOTUNE_CACHE_H_
#define HLOC_RUNTIME_CUDA_AUTOTUNE_CACHE_H_

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hloc {
namespace cuda {

class AutotuneCache {
 public:
  // $HOME/.cache/hloc/autotune.tsv (or ./.hloc-autotune.tsv without HOME).
  static std::string DefaultPath();

  // A cache backed by `path`; reads the file when it exists. A missing file
  // is an empty cache; a file that is not an autotune cache is an error.
  static absl::StatusOr<std::unique_ptr<AutotuneCache>> Open(std::string path);
  // A cache that lives in memory only.
  AutotuneCache() = default;

  std::optional<std::string> Lookup(absl::string_view key) const;
  // Tabs and newlines in key or value are replaced by spaces.
  void Insert(absl::string_view key, absl::string_view value);
  // Writes the entries (merged with the file's current ones; ours win).
  // Creates the directory when needed. No-op for an in-memory cache.
  absl::Status Save() const;

  size_t size() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> entries_;
};

// Reads "key<TAB>value" lines of a cache file into `entries`.
absl::Status ParseAutotuneFile(absl::string_view text, absl::string_view path,
                               std::map<std::string, std::string>* entries);

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_AUTOTUNE_CACHE_H_
