// The host's TargetLowering (backend/common/target_lowering.h): what the
// program builder asks of the host target, as runtime/thunk.h thunks.
//
//   kernel          KernelCompiler (ORC JIT) -> KernelThunk over work items
//   library call    oneDNN for composite gemm/conv calls, dots and
//                   convolutions (onednn_library.h); host routines for
//                   sort, top-k, scatter and f32/f64 dots (library_calls.h);
//                   registered custom-call targets (hlo/custom_call_targets.h)
//                   -> LibraryCallThunk
//   collective      CollectiveThunk on the options' communicator
//   copy, loop,     CopyThunk, WhileThunk, ConditionalThunk
//     conditional
//   interpreter op  InterpreterThunk on the buffers in place
#ifndef HLOC_BACKEND_HOST_HOST_LOWERING_H_
#define HLOC_BACKEND_HOST_HOST_LOWERING_H_

#include <memory>
#include <string>
#include <vector>

#include "backend/common/program_builder.h"
#include "backend/common/target_lowering.h"
#include "backend/host/host_compiler.h"
#include "backend/host/kernel_compiler.h"
#include "backend/host/onednn_context.h"
#include "runtime/thunk.h"

namespace hloc {
namespace host {

// The host runtime's thunks (runtime/thunk.h).
using HostLoweringBase =
    backend::ThunkVocabularyLowering<runtime::ThunkSequence, runtime::CopyThunk,
                                     runtime::WhileThunk, runtime::ConditionalThunk>;

class HostLowering : public HostLoweringBase {
 public:
  HostLowering(const HostCompileOptions& options, KernelCompiler* compiler,
               HostCompileReport* report)
      : options_(options), compiler_(*compiler), report_(*report) {}

  backend::Target target() const override { return backend::Target::kHost; }
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
  // A oneDNN library call for a composite call, dot or convolution; false,
  // with the reason in the report, when oneDNN does not take it.
  absl::StatusOr<bool> EmitOneDnnCall(backend::ProgramBuilder& builder, const HloInstruction& hlo,
                                      backend::ThunkList* out);
  // A library call running the function registered for `hlo`'s target;
  // Unimplemented when none is.
  absl::StatusOr<bool> EmitRegisteredCustomCall(backend::ProgramBuilder& builder,
                                                const HloInstruction& hlo,
                                                backend::ThunkList* out);
  void AddLibraryThunk(backend::ProgramBuilder& builder, const HloInstruction& hlo,
                       runtime::LibraryCallThunk::Function function, absl::string_view label,
                       backend::ThunkList* out);

  const HostCompileOptions& options_;
  KernelCompiler& compiler_;
  HostCompileReport& report_;
  std::shared_ptr<OneDnnContext> onednn_;  // Created with the first oneDNN call.
};

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_HOST_LOWERING_H_
