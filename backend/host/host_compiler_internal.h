// Internal to the host compiler (host_compiler.cc, host_program.cc): the
// literal-leaf helpers both the compiler and the program's execution use.
#ifndef HLOC_BACKEND_HOST_HOST_COMPILER_INTERNAL_H_
#define HLOC_BACKEND_HOST_HOST_COMPILER_INTERNAL_H_

#include <vector>

#include "hlo/literal.h"

namespace hloc {
namespace host {
namespace host_compiler_internal {

// Depth-first array leaves of a literal, matching ArrayLeaves of its shape.
void CollectLiteralLeaves(const Literal& literal, std::vector<const Literal*>* out);
void CollectMutableLeaves(Literal* literal, std::vector<Literal*>* out);

}  // namespace host_compiler_internal
}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_HOST_COMPILER_INTERNAL_H_
