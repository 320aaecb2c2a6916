// Shared libraries opened at run time (dlopen), so one hloc binary runs with
// or without the CUDA driver, cuBLASLt or cuDNN installed. A library that
// cannot be opened is a NotFound status carrying a "missing library" marker
// that callers test with IsLibraryMissing to choose another path.
#ifndef HLOC_RUNTIME_CUDA_DYNAMIC_LIBRARY_H_
#define HLOC_RUNTIME_CUDA_DYNAMIC_LIBRARY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hloc {
namespace cuda {

class DynamicLibrary {
 public:
  // Opens the first of `names` that dlopen accepts (RTLD_NOW | RTLD_LOCAL).
  // Errors read "<prefix>: dlopen NAME failed: <dlerror>", each name tried
  // listed, e.g. "no CUDA driver: dlopen libcuda.so.1 failed: ...".
  static absl::StatusOr<std::shared_ptr<DynamicLibrary>> Open(
      absl::string_view prefix, const std::vector<std::string>& names);
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // The symbol's address, or null.
  void* Symbol(const char* name) const;
  // The file name that was opened.
  const std::string& name() const { return name_; }

 private:
  DynamicLibrary(void* handle, std::string name) : handle_(handle), name_(std::move(name)) {}
  void* handle_;
  std::string name_;
};

// A NotFound status marked as "library missing".
absl::Status MissingLibraryError(absl::string_view message);
// True for statuses made by MissingLibraryError (and Open's failures).
bool IsLibraryMissing(const absl::Status& status);

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_DYNAMIC_LIBRARY_H_
