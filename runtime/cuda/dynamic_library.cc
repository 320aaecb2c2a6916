// dlopen/dlsym wrapper (see dynamic_library.h).
#include "runtime/cuda/dynamic_library.h"

#include <dlfcn.h>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace hloc {
namespace cuda {
namespace {

constexpr char kMissingLibraryPayload[] = "hloc.cuda/missing-library";

}  // namespace

absl::StatusOr<std::shared_ptr<DynamicLibrary>> DynamicLibrary::Open(
    absl::string_view prefix, const std::vector<std::string>& names) {
  std::string failures;
  for (const std::string& name : names) {
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      return std::shared_ptr<DynamicLibrary>(new DynamicLibrary(handle, name));
    }
    const char* error = dlerror();
    absl::StrAppend(&failures, failures.empty() ? "" : "; ", "dlopen ", name,
                    " failed: ", error != nullptr ? error : "unknown error");
  }
  if (names.empty()) failures = "no library names given";
  return MissingLibraryError(absl::StrCat(prefix, ": ", failures));
}

DynamicLibrary::~DynamicLibrary() {
  // Libraries stay loaded: the CUDA libraries register process-wide state
  // (atexit handlers, driver callbacks) that unloading would leave dangling.
}

void* DynamicLibrary::Symbol(const char* name) const { return dlsym(handle_, name); }

absl::Status MissingLibraryError(absl::string_view message) {
  absl::Status status = absl::NotFoundError(message);
  status.SetPayload(kMissingLibraryPayload, absl::Cord("1"));
  return status;
}

bool IsLibraryMissing(const absl::Status& status) {
  return status.code() == absl::StatusCode::kNotFound &&
         status.GetPayload(kMissingLibraryPayload).has_value();
}

}  // namespace cuda
}  // namespace hloc
