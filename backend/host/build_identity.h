// What identifies the code that emitted a host kernel, for keys of caches that
// outlive the process (HLOC_CACHE_DIR): a kernel's HLO text says nothing of
// the emitter that lowered it, so an object file written by one build of hloc
// must not be loaded by another.
#ifndef HLOC_BACKEND_HOST_BUILD_IDENTITY_H_
#define HLOC_BACKEND_HOST_BUILD_IDENTITY_H_

#include <string>

namespace hloc {
namespace host {

// The GNU build-id (hex) of the loaded ELF object that holds hloc's host
// emitter: the executable, libhloc_c.so or the Python module, whichever this
// code was linked into. Without a build-id note: "file:PATH:SIZE:MTIME" of
// that object. Computed once per process.
const std::string& EmitterBuildIdentity();

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_BUILD_IDENTITY_H_
