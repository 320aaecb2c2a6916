// LAPACK opened at run time (see lapack_library.h).
#include "hlo/lapack/lapack_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"

namespace hloc {
namespace lapack {
namespace {

absl::StatusOr<const LapackLibrary*> Open(
    const std::function<const LapackLibrary*(void*, std::string)>& make) {
  std::vector<std::string> names;
  if (const char* chosen = std::getenv("HLOC_LAPACK_LIBRARY"); chosen != nullptr && *chosen) {
    names.push_back(chosen);
  } else {
    names = {"liblapack.so.3", "libopenblas.so.0", "liblapack.so"};
  }
  std::string failures;
  for (const std::string& name : names) {
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      // OpenBLAS: one thread per call. hloc calls LAPACK once per matrix of
      // a batch; OpenBLAS's own threads then contend with hloc's for the
      // same cores (a batched inverse swung between 5 and 83 ms).
      using SetThreads = void (*)(int);
      if (auto set = reinterpret_cast<SetThreads>(dlsym(handle, "openblas_set_num_threads"))) {
        set(1);
      }
      return make(handle, name);
    }
    const char* why = dlerror();
    absl::StrAppend(&failures, failures.empty() ? "" : "; ", "dlopen ", name, " failed: ",
                    why != nullptr ? why : "unknown error");
  }
  return absl::NotFoundError(absl::StrCat(
      "no LAPACK library (needed by lapack_*_ffi custom calls; install liblapack3 or "
      "libopenblas0, or set HLOC_LAPACK_LIBRARY): ",
      failures));
}

}  // namespace

absl::StatusOr<const LapackLibrary*> LapackLibrary::Get() {
  // Opened once; the library stays loaded for the life of the process.
  static const absl::StatusOr<const LapackLibrary*> library =
      Open([](void* handle, std::string path) -> const LapackLibrary* {
        return new LapackLibrary(handle, std::move(path));
      });
  return library;
}

absl::StatusOr<void*> LapackLibrary::Routine(const std::string& name) const {
  const std::string symbol = name + "_";
  void* address = dlsym(handle_, symbol.c_str());
  if (address == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("LAPACK routine ", symbol, " not found in ", path_));
  }
  return address;
}

}  // namespace lapack
}  // namespace hloc
