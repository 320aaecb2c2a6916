// Internals shared by the API's implementation files (not installed).
#ifndef HLOC_API_API_INTERNAL_H_
#define HLOC_API_API_INTERNAL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "api/hloc.h"
#include "hlo/literal.h"

namespace hloc {
namespace cuda {
class CudaDevice;
class DeviceMemoryCache;
}  // namespace cuda
namespace backend {
class DeclaredResult;
}  // namespace backend

namespace api {

// Builds Buffers around storage the implementation manages.
struct BufferAccess {
  using Storage = Buffer::Storage;
  static Buffer Make(ArraySpec spec, std::shared_ptr<Buffer::Storage> storage, void* data,
                     bool on_device = false) {
    return Buffer(std::move(spec), std::move(storage), data, on_device);
  }
  static const std::shared_ptr<Buffer::Storage>& storage(const Buffer& buffer) {
    return buffer.storage_;
  }
  // The host address, or a device buffer's CUdeviceptr as a pointer.
  static void* address(const Buffer& buffer) { return buffer.data_; }
};

// The client's hold on one CUDA device, opened on first use and shared by
// the device buffers allocated through the client: the device (its primary
// context, and a stream for the buffers' copies) and the cache their memory
// comes from and goes back to (runtime/cuda/device_memory_cache.h).
struct ClientDevice {
  std::shared_ptr<cuda::CudaDevice> device;
  std::shared_ptr<cuda::DeviceMemoryCache> memory;
  // Waits for all work queued on the device by anyone (cuCtxSynchronize),
  // telling the cache, whose released blocks are then safe to reuse.
  absl::Status WaitForAllWork() const;
};

struct ClientAccess {
  static absl::StatusOr<ClientDevice> Device(Client& client, int ordinal);
};

// Uninitialized memory for `spec` on `device` (kept alive by the buffer).
absl::StatusOr<Buffer> AllocateOnDevice(const ClientDevice& device, ArraySpec spec);
// Whether a buffer is the caller's device memory (WrapDevice), which work
// the caller queued on its own streams may still be writing: whoever reads
// or writes it on hloc's streams waits for the device first.
bool HoldsCallersDeviceMemory(const Buffer& buffer);

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
  // The same where a nonzero `parameter_on_device[i]` / `output_on_device[j]`
  // makes that pointer a CUdeviceptr on location()'s device. Only targets
  // that run on a device get here.
  virtual absl::Status RunWithDeviceMemory(absl::Span<const void* const> parameters,
                                           absl::Span<void* const> outputs,
                                           absl::Span<const char> parameter_on_device,
                                           absl::Span<const char> output_on_device,
                                           const ExecuteOptions& options) const {
    return absl::InternalError("this target takes host memory only");
  }
  // Where the target runs; device buffers must be there.
  virtual Location location() const { return Location{}; }
  // Device memory for a result left on the device.
  virtual absl::StatusOr<Buffer> AllocateOnTargetDevice(const ArraySpec& spec) const {
    return absl::InternalError("this target has no device memory");
  }
  // Waits for every stream of the target's device (the caller's work on
  // buffers it wrapped). Only targets that run on a device get here.
  virtual absl::Status WaitForDeviceWork() const {
    return absl::InternalError("this target has no device");
  }
  // The parameter whose memory output j may be computed in, or -1.
  virtual int64_t AliasedParameter(int64_t output) const { return -1; }
  // Whether the target runs the module as declared, bounded dynamic shapes
  // and all (the interpreter): DescribeEntry then sets runs_declared for a
  // module with such shapes, and Executable calls RunDeclared.
  virtual bool RunsDeclaredModule() const { return false; }
  // `arguments` (one per entry parameter, at their runtime sizes) -> the
  // entry's result at its runtime sizes. Only where runs_declared.
  virtual absl::StatusOr<Literal> RunDeclared(absl::Span<const Literal> arguments,
                                              const ExecuteOptions& options) const {
    return absl::InternalError("this target runs compiled programs");
  }

  std::vector<ArraySpec> parameters;
  std::vector<ArraySpec> results;
  // Bounded dynamic shapes (host and CUDA targets; the module DynamicPadder
  // rewrote, backend/common/declared_result.h). With dynamic entry
  // parameters `parameters` hold their bounds, an argument may be smaller
  // along a dynamic dimension (dynamic_dims[i][d]), and Executable copies
  // the arguments to their bounds and appends their sizes before Run. With
  // a dynamic result or runtime size checks (padded_result) `results` hold
  // the bounds, Run writes the program's (result, sizes, checks) leaves of
  // `program_result_shape`, and Execute returns the result cut to its
  // runtime sizes (or the failed check's error).
  //
  // A target that runs the declared module (RunsDeclaredModule) instead
  // gets the arguments at their runtime sizes and returns the result at
  // its runtime sizes through RunDeclared (runs_declared); dynamic_dims,
  // declared_parameters and padded_result mean the same there, and
  // dynamic_entry is null.
  //
  // An argument is one array leaf of an entry parameter: `parameters`,
  // dynamic_dims and argument_names hold one entry per leaf, in order, and
  // Executable regroups the leaves into declared_parameters' shapes.
  std::shared_ptr<const backend::DeclaredResult> dynamic_entry;
  bool runs_declared = false;
  std::vector<std::vector<bool>> dynamic_dims;  // Per argument; empty: all static.
  std::vector<Shape> declared_parameters;       // With dynamic_dims only.
  // "parameter %p", "parameter %p, tuple element 1": what each argument is,
  // for messages (with dynamic_dims only).
  std::vector<std::string> argument_names;
  bool padded_result = false;
  Shape program_result_shape;
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
