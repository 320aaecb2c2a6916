#include "tools/custom_call_libraries.h"

#include <dlfcn.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/hloc_c_custom_calls.h"

namespace hloc::tools {

absl::StatusOr<std::shared_ptr<const CustomCallTargets>> LoadCustomCallLibrary(const Args& args) {
  const bool library = args.Has("custom-call-library");
  const bool targets = args.Has("custom-calls");
  if (!library && !targets) return std::shared_ptr<const CustomCallTargets>();
  if (!library || !targets) {
    return absl::InvalidArgumentError(
        "--custom-call-library=LIB.so and --custom-calls=TARGET[=SYMBOL],... go together");
  }
  const std::string path = args.Get("custom-call-library");
  // Never closed: executables hold its functions for the process's life.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::InvalidArgumentError(absl::StrCat("--custom-call-library: cannot load ", path,
                                                   ": ", why != nullptr ? why : "unknown error"));
  }
  CustomCallRegistry registry;
  for (absl::string_view entry : absl::StrSplit(args.Get("custom-calls"), ',')) {
    std::vector<std::string> parts = absl::StrSplit(entry, absl::MaxSplits('=', 1));
    const std::string& target = parts[0];
    const std::string symbol = parts.size() > 1 ? parts[1] : target;
    if (target.empty() || symbol.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--custom-calls: '", entry, "' is not TARGET or TARGET=SYMBOL"));
    }
    if (registry.Snapshot()->Find(target) != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--custom-calls: target '", target, "' is named twice"));
    }
    dlerror();
    void* address = dlsym(handle, symbol.c_str());
    if (address == nullptr) {
      const char* why = dlerror();
      return absl::InvalidArgumentError(absl::StrCat(
          "--custom-calls: ", path, " has no symbol '", symbol, "' for target '", target, "'",
          why != nullptr ? absl::StrCat(" (", why, ")") : ""));
    }
    auto function = reinterpret_cast<hloc_custom_call_function>(address);
    absl::Status registered =
        registry.Register(target, [function](const CustomCallFrame& frame) {
          return api::CallCustomCallFunction(function, nullptr, frame);
        });
    if (!registered.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--custom-calls: ", registered.message()));
    }
  }
  return registry.Snapshot();
}

}  // namespace hloc::tools
