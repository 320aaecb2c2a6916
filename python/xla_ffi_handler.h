// The XLA FFI handler through which hloc.jax.jit runs hloc executables
// inside JAX's own dispatch.
//
// JAX arrays live in XLA's runtime, and turning hloc's results into
// jax.Arrays from Python costs far more than running a small module. So
// hloc.jax.jit wraps the compiled hloc executable in a one-op JAX program: a
// custom call (jax.ffi.ffi_call) to the handler below, with the executable's
// handle as an attribute. JAX's C++ dispatch then checks and caches the
// arguments, XLA allocates the results, and the handler runs the hloc
// executable on XLA's buffers in place (Executable::ExecuteInto): no copy
// either way, and every op of the module still runs on hloc.
//
// XLA's FFI passes only plain attributes, so executables are named by handles
// in a process-wide table: registered when hloc.jax compiles one and dropped
// when the jitted function goes away; a call with a stale handle fails with
// an error rather than touching freed memory.
#ifndef HLOC_PYTHON_XLA_FFI_HANDLER_H_
#define HLOC_PYTHON_XLA_FFI_HANDLER_H_

#include <cstdint>
#include <memory>

#include "api/hloc.h"

namespace hloc {
namespace api {

// Whether this build has the handler (jaxlib's FFI headers were found).
bool XlaFfiHandlerAvailable();

// The handler, an XLA_FFI_Handler* for jax.ffi.register_ffi_target; null
// when unavailable. It takes one int64 attribute `executable` (a handle),
// the executable's arguments and its results.
void* XlaFfiHandler();

// Handles in the table the handler reads.
int64_t RegisterXlaFfiExecutable(std::shared_ptr<const Executable> executable);
void UnregisterXlaFfiExecutable(int64_t handle);

}  // namespace api
}  // namespace hloc

#endif  // HLOC_PYTHON_XLA_FFI_HANDLER_H_
