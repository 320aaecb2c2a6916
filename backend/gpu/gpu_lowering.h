// The GPU's TargetLowering (backend/common/target_lowering.h): what the
// program builder asks of the CUDA target, as runtime/cuda thunks. Not part
// of any public interface (gpu_compiler.h is).
//
//   kernel          GpuKernelCache (NVPTX, PTX, cubin) -> KernelThunk (and a
//                   combine launch for split reductions; copies first where
//                   the kernel updates an input in place; scratch buffers)
//   library call    composite gemm / conv calls -> cuBLASLt / cuDNN thunks
//                   from their LibraryCallPlan, with prep kernels, or a
//                   LibraryOrGeneratedThunk holding a generated alternative
//                   (gpu_library_lowering.cc); calls no library takes become
//                   one kernel, or the builder inlines them
//   copy, loop,     CopyThunk, WhileThunk, ConditionalThunk
//     conditional
//   custom call     CustomCallThunk: the function registered for its target
//                   (backend/common/registered_custom_calls.h), on the host
//   interpreter op  InterpreterThunk: copies to the host and back
//   collective      cuda::CollectiveThunk (NCCL, runtime/cuda/collective_thunk.h);
//                   a reduction NCCL lacks is a compile error
#ifndef HLOC_BACKEND_GPU_GPU_LOWERING_H_
#define HLOC_BACKEND_GPU_GPU_LOWERING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backend/common/program_builder.h"
#include "backend/common/target_lowering.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_library_calls.h"
#include "runtime/cuda/gpu_thunk.h"

namespace hloc {
namespace gpu {

// The CUDA runtime's thunks (runtime/cuda/gpu_thunk.h).
using GpuLoweringBase = backend::ThunkVocabularyLowering<cuda::ThunkSequence, cuda::CopyThunk,
                                                         cuda::WhileThunk, cuda::ConditionalThunk>;

class GpuLowering : public GpuLoweringBase {
 public:
  GpuLowering(const GpuProgramOptions& options, GpuCompileReport* report)
      : options_(options), report_(*report), cache_(options.kernel_cache) {
    if (cache_ == nullptr) cache_ = std::make_shared<GpuKernelCache>(options.codegen);
  }

  backend::Target target() const override { return backend::Target::kCuda; }
  absl::StatusOr<backend::KernelEmission> EmitKernel(backend::ProgramBuilder& builder,
                                                     const HloInstruction& hlo,
                                                     const HloComputation& computation,
                                                     backend::KernelVariant variant,
                                                     const backend::KernelBinder& bind,
                                                     backend::ThunkList* out) override;
  absl::StatusOr<bool> EmitLibraryCall(backend::ProgramBuilder& builder, const HloInstruction& hlo,
                                       backend::ThunkList* out) override;
  absl::StatusOr<bool> EmitCollective(backend::ProgramBuilder& builder, const HloInstruction& hlo,
                                      runtime::CollectiveSpec spec,
                                      backend::ThunkList* out) override;
  void EmitInterpreterOp(backend::ProgramBuilder& builder, std::string name, std::string reason,
                         runtime::HostFunction function, std::vector<runtime::BufferId> inputs,
                         std::vector<runtime::BufferId> outputs, backend::ThunkList* out) override;

 private:
  using BufferId = runtime::BufferId;

  // A launch of `kernel` over `buffers` (inputs, then outputs), labeled
  // `label` (default: %hlo), with its copies, scratch and combine launch;
  // one report line per launch into `strategies` unless it is null.
  absl::Status AddKernelThunk(backend::ProgramBuilder& builder, const HloInstruction& hlo,
                              const GpuKernel& kernel, std::vector<BufferId> buffers,
                              cuda::ThunkSequence* out, absl::string_view label,
                              std::vector<std::string>* strategies);

  // A host call to the function registered for `hlo`'s target; an error
  // when none is.
  absl::StatusOr<bool> EmitRegisteredCustomCall(backend::ProgramBuilder& builder,
                                                const HloInstruction& hlo,
                                                backend::ThunkList* out);

  // ---- gpu_library_lowering.cc
  void Ledger(const HloInstruction& call, bool accepted, absl::string_view rule,
              absl::string_view reason, absl::string_view result);
  absl::StatusOr<bool> EmitLibraryOrGenerated(backend::ProgramBuilder& builder,
                                              const HloInstruction& call,
                                              absl::string_view composite,
                                              const LibraryCallPlan& plan, backend::ThunkList* out);
  absl::StatusOr<BufferId> ValueBuffer(backend::ProgramBuilder& builder, const HloInstruction& call,
                                       const CalleeValue& value);
  absl::StatusOr<BufferId> EmitPrepKernel(backend::ProgramBuilder& builder,
                                          const HloInstruction& call,
                                          const HloComputation& computation,
                                          const std::vector<BufferId>& inputs,
                                          cuda::ThunkSequence* out);
  // Pad, filter and bias preparation before a cuDNN call.
  absl::Status EmitConvPrep(backend::ProgramBuilder& builder, const HloInstruction& call,
                            const LibraryCallPlan& plan, std::vector<BufferId>* args,
                            cuda::ThunkSequence* out);
  absl::Status EmitLibraryThunk(backend::ProgramBuilder& builder, const HloInstruction& call,
                                absl::string_view composite, const LibraryCallPlan& plan,
                                backend::ThunkList* out);

  const GpuProgramOptions& options_;
  GpuCompileReport& report_;
  std::shared_ptr<GpuKernelCache> cache_;
  absl::flat_hash_map<const GpuKernel*, std::shared_ptr<const cuda::KernelImage>> images_;
};

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_LOWERING_H_
