// `hloc run --custom-call-library=LIB.so --custom-calls=TARGET[=SYMBOL],...`:
// custom-call targets served by C functions (hloc_c.h's
// hloc_custom_call_function) that a shared library exports, for the
// interpreter, host and cuda runs of one device. SYMBOL defaults to TARGET.
// The library is loaded once and stays loaded; it may call hloc_error_create
// (the hloc binary exports the C API's hloc_ functions).
#ifndef HLOC_TOOLS_CUSTOM_CALL_LIBRARIES_H_
#define HLOC_TOOLS_CUSTOM_CALL_LIBRARIES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "hlo/custom_call_targets.h"
#include "tools/command.h"

namespace hloc::tools {

// The targets the two options name; null when neither is given. Errors name
// the library, the symbol or the option that is wrong.
absl::StatusOr<std::shared_ptr<const CustomCallTargets>> LoadCustomCallLibrary(const Args& args);

}  // namespace hloc::tools

#endif  // HLOC_TOOLS_CUSTOM_CALL_LIBRARIES_H_
