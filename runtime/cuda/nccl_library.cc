// Loading NCCL (see nccl_library.h).
#include "runtime/cuda/nccl_library.h"

#include <glob.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace hloc {
namespace cuda {
namespace {

constexpr char kLibraryName[] = "libnccl.so.2";

// Files matching `pattern`, sorted (glob's order).
std::vector<std::string> Glob(const std::string& pattern) {
  std::vector<std::string> files;
  glob_t found;
  if (glob(pattern.c_str(), 0, nullptr, &found) == 0) {
    for (size_t i = 0; i < found.gl_pathc; ++i) files.push_back(found.gl_pathv[i]);
  }
  globfree(&found);
  return files;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// The pip wheel's library as the python3 on PATH sees it (any prefix,
// venvs included), or "" when there is no python3 or no wheel.
std::string AskPython() {
  FILE* pipe = popen(
      "python3 -c 'import os, nvidia.nccl as m; "
      "print(os.path.join(list(m.__path__)[0], \"lib\", \"libnccl.so.2\"))' 2>/dev/null",
      "r");
  if (pipe == nullptr) return "";
  char line[4096] = {0};
  std::string path;
  if (fgets(line, sizeof(line), pipe) != nullptr) path = line;
  pclose(pipe);
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
  return path;
}

}  // namespace

std::vector<std::string> NcclLibrary::SearchPath() {
  std::vector<std::string> names;
  auto add_matches = [&](const std::string& pattern) {
    for (std::string& file : Glob(pattern)) names.push_back(std::move(file));
  };
  if (std::string explicit_file = Env("HLOC_NCCL_LIBRARY"); !explicit_file.empty()) {
    names.push_back(explicit_file);
  }
  names.push_back(kLibraryName);
  add_matches(absl::StrCat("/usr/local/cuda/lib64/", kLibraryName));
  add_matches(absl::StrCat("/usr/local/cuda/lib/", kLibraryName));
  add_matches(absl::StrCat("/usr/local/cuda-*/lib64/", kLibraryName));
  add_matches(absl::StrCat("/usr/local/cuda-*/lib/", kLibraryName));
  const std::string wheel = absl::StrCat("nvidia/nccl/lib/", kLibraryName);
  for (absl::string_view entry : absl::StrSplit(Env("PYTHONPATH"), ':', absl::SkipEmpty())) {
    add_matches(absl::StrCat(entry, "/", wheel));
  }
  std::vector<std::string> prefixes = {Env("VIRTUAL_ENV"), Env("CONDA_PREFIX")};
  if (std::string home = Env("HOME"); !home.empty()) prefixes.push_back(home + "/.local");
  for (const char* prefix : {"/usr/local", "/usr", "/opt/conda"}) prefixes.push_back(prefix);
  for (const std::string& prefix : prefixes) {
    if (prefix.empty()) continue;
    for (const char* packages : {"site-packages", "dist-packages"}) {
      add_matches(absl::StrCat(prefix, "/lib/python3*/", packages, "/", wheel));
    }
  }
  add_matches(absl::StrCat("/usr/lib/python3/dist-packages/", wheel));
  return names;
}

absl::StatusOr<std::unique_ptr<NcclLibrary>> NcclLibrary::Load(
    const std::vector<std::string>& names) {
  std::unique_ptr<NcclLibrary> nccl(new NcclLibrary());
  absl::StatusOr<std::shared_ptr<DynamicLibrary>> library =
      DynamicLibrary::Open("NCCL not found", names);
  if (!library.ok()) return library.status();
  nccl->library_ = *std::move(library);
  std::string missing;
#define HLOC_NCCL_RESOLVE(fn)                                                              \
  nccl->fn = reinterpret_cast<decltype(nccl->fn)>(nccl->library_->Symbol(#fn));            \
  if (nccl->fn == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", #fn);
  HLOC_NCCL_FUNCTIONS(HLOC_NCCL_RESOLVE)
#undef HLOC_NCCL_RESOLVE
  if (!missing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the NCCL in ", nccl->library_->name(), " lacks functions hloc needs: ", missing));
  }
  return nccl;
}

absl::StatusOr<const NcclLibrary*> NcclLibrary::Get() {
  static const absl::StatusOr<const NcclLibrary*>* const nccl =
      new absl::StatusOr<const NcclLibrary*>([]() -> absl::StatusOr<const NcclLibrary*> {
        absl::StatusOr<std::unique_ptr<NcclLibrary>> loaded = Load(SearchPath());
        if (!loaded.ok() && IsLibraryMissing(loaded.status())) {
          // Last, a wheel in a Python prefix the fixed places miss.
          if (std::string wheel = AskPython(); !wheel.empty()) {
            absl::StatusOr<std::unique_ptr<NcclLibrary>> from_wheel = Load({wheel});
            if (from_wheel.ok()) loaded = std::move(from_wheel);
          }
        }
        if (!loaded.ok()) return loaded.status();
        return loaded->release();
      }());
  return *nccl;
}

absl::Status NcclLibrary::Check(ncclResult_t result, absl::string_view call) const {
  if (result == ncclSuccess) return absl::OkStatus();
  const char* text = ncclGetErrorString != nullptr ? ncclGetErrorString(result) : nullptr;
  return absl::InternalError(absl::StrCat(call, ": ", text != nullptr ? text : "NCCL error",
                                          " (ncclResult_t ", static_cast<int>(result), ")"));
}

int NcclLibrary::version() const {
  int version = 0;
  if (ncclGetVersion == nullptr || ncclGetVersion(&version) != ncclSuccess) return 0;
  return version;
}

}  // namespace cuda
}  // namespace hloc
