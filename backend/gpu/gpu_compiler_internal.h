// Internal to the GPU compiler (gpu_compiler.cc): the GpuCompilation class
// that walks an HloModule and builds a GpuExecutable plan. Its library-call
// part (cuBLASLt / cuDNN thunks, generated alternatives, prep kernels) lives
// in gpu_compiler_library_calls.cc; everything else in gpu_compiler.cc.
// Not part of any public interface.
#ifndef HLOC_BACKEND_GPU_GPU_COMPILER_INTERNAL_H_
#define HLOC_BACKEND_GPU_GPU_COMPILER_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_library_calls.h"

namespace hloc {
namespace gpu {
namespace gpu_compiler_internal {

// Bytes of an array shape's data.
int64_t LeafBytes(const Shape& shape);
// InvalidArgument naming `hlo`.
absl::Status InstructionError(const HloInstruction& hlo, absl::string_view message);

}  // namespace gpu_compiler_internal

class GpuCompilation {
 public:
  GpuCompilation(const GpuProgramOptions& options, GpuProgram* program)
      : options_(options), program_(program), cache_(options.kernel_cache) {
    if (cache_ == nullptr) cache_ = std::make_shared<GpuKernelCache>(options.codegen);
  }

  absl::Status Compile();

 private:
  using BufferId = cuda::BufferId;
  using ThunkSequence = cuda::ThunkSequence;
  using BufferSpec = runtime::BufferSpec;

  GpuCompileReport& report() { return program_->report_; }

  BufferId AddBuffer(BufferSpec spec) {
    buffers_.push_back(std::move(spec));
    return static_cast<BufferId>(buffers_.size() - 1);
  }
  BufferId NewTemp(int64_t bytes, std::string name);
  std::vector<BufferId> NewTemps(const HloInstruction& hlo);
  std::vector<BufferId> ConstantBuffers(const HloInstruction& hlo);
  void Use(BufferId id);
  std::vector<BufferId> OperandLeaves(const HloInstruction& hlo);

  absl::Status EmitComputation(const HloComputation& computation, ThunkSequence* out);

  absl::Status EmitInstruction(const HloInstruction& hlo, ThunkSequence* out);

  absl::Status EmitHostFallback(const HloInstruction& hlo, absl::string_view reason,
                                ThunkSequence* out);

  absl::StatusOr<bool> EmitKernel(const HloInstruction& hlo, const HloComputation& computation,
                                  ThunkSequence* out);

  absl::Status AddKernelThunk(const HloInstruction& hlo, const GpuKernel& kernel,
                              std::vector<BufferId> args, const std::vector<BufferId>& results,
                              ThunkSequence* out, absl::string_view label = "",
                              bool count = true);

  absl::Status EmitInline(const HloComputation& computation, const HloInstruction& caller,
                          ThunkSequence* out);

  void Ledger(const HloInstruction& call, bool accepted, absl::string_view rule,
              absl::string_view reason, absl::string_view result);

  absl::Status EmitLibraryComposite(const HloInstruction& call, ThunkSequence* out);

  absl::Status EmitLibraryOrGenerated(const HloInstruction& call, absl::string_view composite,
                                      const LibraryCallPlan& plan, ThunkSequence* out);

  absl::StatusOr<BufferId> ValueBuffer(const HloInstruction& call, const CalleeValue& value);
  const Shape& ValueShape(const HloInstruction& call, const CalleeValue& value);

  absl::StatusOr<BufferId> EmitPrepKernel(const HloInstruction& call,
                                          const HloComputation& computation,
                                          const std::vector<BufferId>& inputs,
                                          ThunkSequence* out);

  std::unique_ptr<HloComputation> PadComputation(const HloInstruction& call, const Shape& shape,
                                                 const LibraryCallPlan& plan,
                                                 const HloInstruction& conv);

  std::unique_ptr<HloComputation> FilterComputation(const HloInstruction& call, const Shape& shape,
                                                    const LibraryCallPlan& plan,
                                                    const Shape* scale_shape);

  std::unique_ptr<HloComputation> BiasComputation(const HloInstruction& call, const Shape& shape,
                                                  const LibraryCallPlan& plan);

  absl::Status EmitLibraryThunk(const HloInstruction& call, absl::string_view composite,
                                const LibraryCallPlan& plan, ThunkSequence* out);

  absl::Status EmitWhile(const HloInstruction& hlo, ThunkSequence* out);

  absl::Status EmitConditional(const HloInstruction& hlo, ThunkSequence* out);

  const GpuProgramOptions& options_;
  GpuProgram* program_;
  std::shared_ptr<GpuKernelCache> cache_;
  std::vector<BufferSpec> buffers_;
  absl::node_hash_map<const HloInstruction*, std::vector<BufferId>> leaves_;
  absl::flat_hash_map<const GpuKernel*, std::shared_ptr<const cuda::KernelImage>> images_;
  std::string unimplemented_reason_;
  int64_t time_ = 0;
};

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_COMPILER_INTERNAL_H_
