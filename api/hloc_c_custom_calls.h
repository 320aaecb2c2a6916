// The C API's custom-call functions (hloc_c.h's hloc_custom_call_function)
// as the C++ API's: for the C API itself and for the hloc command line,
// which loads such functions from a shared library (--custom-call-library).
#ifndef HLOC_API_HLOC_C_CUSTOM_CALLS_H_
#define HLOC_API_HLOC_C_CUSTOM_CALLS_H_

#include "absl/status/status.h"
#include "api/hloc.h"
#include "api/hloc_c.h"

namespace hloc::api {

// Calls `function` on `frame` (converted to hloc_custom_call_frame); the
// error object it returns, if any, becomes the status (and is destroyed).
absl::Status CallCustomCallFunction(hloc_custom_call_function function, void* user_data,
                                    const CustomCallFrame& frame);

}  // namespace hloc::api

#endif  // HLOC_API_HLOC_C_CUSTOM_CALLS_H_
