// Internals shared by the API's implementation files (not installed).
#ifndef HLOC_API_API_INTERNAL_H_
#define HLOC_API_API_INTERNAL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "api/hloc.h"

namespace hloc {
namespace api {

// Builds Buffers around storage the implementation manages.
struct BufferAccess {
  static Buffer Make(ArraySpec spec, std::shared_ptr<Buffer::Storage> storage, void* data) {
    return Buffer(std::move(spec), std::move(storage), data);
  }
  static const std::shared_ptr<Buffer::Storage>& storage(const Buffer& buffer) {
    return buffer.storage_;
  }
};

// Alignment WrapHost demands for `type` (its element, or component, size).
int64_t RequiredAlignment(PrimitiveType type);
// A buffer of `spec` living in `donor`'s memory (a donated argument).
Buffer BufferSharing(const Buffer& donor, ArraySpec spec);

// Statuses for modules that do not load, verify or compile carry this
// payload, so the C and Python layers can tell them from bad arguments.
inline constexpr char kCompileErrorPayload[] = "hloc.dev/compile-error";
absl::Status MarkCompileError(absl::Status status);
bool IsCompileError(const absl::Status& status);

// One compiled program for one target. Executable (executable.cc) checks
// arguments, allocates results and handles donation; a target only runs.
class ExecutableImpl {
 public:
  virtual ~ExecutableImpl() = default;
  // `parameters[i]` holds parameters[i] of the spec, `outputs[j]` receives
  // results[j]; an output may be exactly the parameter AliasedParameter(j).
  virtual absl::Status Run(absl::Span<const void* const> parameters,
                           absl::Span<void* const> outputs, const ExecuteOptions& options) const = 0;
  // The parameter whose memory output j may be computed in, or -1.
  virtual int64_t AliasedParameter(int64_t output) const { return -1; }

  std::vector<ArraySpec> parameters;
  std::vector<ArraySpec> results;
  Shape result_shape;
  std::string optimized_hlo;
  std::string ledger;
  std::string report;
  std::string fingerprint;
  Stats stats;
  std::unique_ptr<MeshShardings> mesh_shardings;  // Shard_map executables only.
};

}  // namespace api
}  // namespace hloc

#endif  // HLOC_API_API_INTERNAL_H_
