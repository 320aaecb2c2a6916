// What PJRT_Executable_OptimizedProgram returns: the module with its config,
// format "hlo_with_config" (an xla.HloModuleProtoWithConfig).
//
// torch_xla reads the program's shapes from it, and the config's
// entry_computation_layout gives the layouts of the executable's parameters
// and results (a missing one aborts torch_xla). hloc's runtime keeps every
// array row-major whatever the module declares, so every array shape in the
// returned module (instructions, computation signatures, host program shape)
// gets the row-major layout, and the entry computation layout is that
// signature: what the plugin reports is what its buffers hold. Constants'
// literals keep their own shapes (their data is in their layout's order).
#ifndef HLOC_API_PJRT_OPTIMIZED_PROGRAM_H_
#define HLOC_API_PJRT_OPTIMIZED_PROGRAM_H_

#include <string>

#include "absl/status/statusor.h"
#include "hlo/hlo.pb.h"

namespace hloc {
namespace pjrt {

// Gives every array shape in `module` the row-major layout (tuples none).
void SetRowMajorLayouts(xla::HloModuleProto& module);

// The serialized HloModuleProtoWithConfig for `module`: layouts made
// row-major, entry_computation_layout the entry signature, one replica and
// one partition.
absl::StatusOr<std::string> SerializeModuleWithRowMajorConfig(xla::HloModuleProto module);

}  // namespace pjrt
}  // namespace hloc

#endif  // HLOC_API_PJRT_OPTIMIZED_PROGRAM_H_
