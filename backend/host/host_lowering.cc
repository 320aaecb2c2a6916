// The host's lowering of kernels, library calls, copies, loops,
// conditionals and interpreter ops (see host_lowering.h).
#include "backend/host/host_lowering.h"

#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backend/common/registered_custom_calls.h"
#include "backend/host/library_calls.h"
#include "backend/host/onednn_library.h"
#include "hlo/status_macros.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace host {

using backend::KernelEmission;
using runtime::BufferId;

absl::StatusOr<KernelEmission> HostLowering::EmitKernel(
    backend::ProgramBuilder& builder, const HloInstruction& hlo, const HloComputation& computation,
    backend::KernelVariant variant, const backend::KernelBinder& bind, backend::ThunkList* out) {
  KernelEmission emission;
  absl::StatusOr<CompiledKernel> kernel = compiler_.Compile(computation, variant);
  if (!kernel.ok()) {
    if (kernel.status().code() != absl::StatusCode::kUnimplemented) return kernel.status();
    emission.refusal = std::string(kernel.status().message());
    return emission;
  }
  HLOC_ASSIGN_OR_RETURN(std::vector<BufferId> buffers, bind());
  if (static_cast<int64_t>(buffers.size()) != kernel->num_buffers) {
    return backend::InstructionError(
        hlo, absl::StrCat("kernel takes ", kernel->num_buffers, " buffers, the instruction has ",
                          buffers.size()));
  }
  Thunks(out).push_back(std::make_unique<runtime::KernelThunk>(
      absl::StrCat("%", hlo.name()), kernel->function, std::move(buffers), kernel->work_items,
      kernel->cost_per_item));
  emission.emitted = true;
  emission.strategies.push_back(absl::StrCat("%", hlo.name(), ": ", kernel->strategy));
  // A loop kernel's work item is one element of each output (of the
  // largest, and the proportional part of the others), each output a loop
  // nest of its own reading its operands at the element it stores.
  emission.outputs_in_elementwise_operands = kernel->strategy == "loop";
  return emission;
}

absl::StatusOr<bool> HostLowering::EmitLibraryCall(backend::ProgramBuilder& builder,
                                                   const HloInstruction& hlo,
                                                   backend::ThunkList* out) {
  const HloOpcode op = hlo.opcode();
  if (op == HloOpcode::kCustomCall && hlo.attrs().custom_call_target != "TopK") {
    return EmitRegisteredCustomCall(builder, hlo, out);
  }
  if (op == HloOpcode::kCall || op == HloOpcode::kDot || op == HloOpcode::kConvolution) {
    HLOC_ASSIGN_OR_RETURN(bool done, EmitOneDnnCall(builder, hlo, out));
    if (done || op == HloOpcode::kCall) return done;
  }
  HLOC_ASSIGN_OR_RETURN(std::optional<runtime::LibraryCallThunk::Function> routine,
                        MakeLibraryCall(hlo, compiler_));
  if (!routine.has_value()) return false;
  AddLibraryThunk(builder, hlo, *std::move(routine), "", out);
  return true;
}

absl::StatusOr<bool> HostLowering::EmitRegisteredCustomCall(backend::ProgramBuilder& builder,
                                                            const HloInstruction& hlo,
                                                            backend::ThunkList* out) {
  HLOC_ASSIGN_OR_RETURN(std::shared_ptr<const CustomCallHandler> handler,
                        backend::FindRegisteredCustomCall(options_.custom_calls.get(), hlo));
  // The program owns the module, so `hlo` outlives the thunk.
  const HloInstruction* instruction = &hlo;
  AddLibraryThunk(
      builder, hlo,
      [handler, instruction](absl::Span<void* const> buffers, runtime::ThreadPool* pool) {
        if (pool == nullptr || pool->num_threads() == 1) {
          return CallCustomCallHandler(*handler, *instruction, buffers);
        }
        const ParallelRanges parallel = [pool](int64_t n, int64_t grain,
                                               const std::function<void(int64_t, int64_t)>& fn) {
          pool->ParallelFor(n, grain, fn);
        };
        return CallCustomCallHandler(*handler, *instruction, buffers, &parallel);
      },
      absl::StrCat("custom-call:", handler->target), out);
  return true;
}

absl::StatusOr<bool> HostLowering::EmitOneDnnCall(backend::ProgramBuilder& builder,
                                                  const HloInstruction& hlo,
                                                  backend::ThunkList* out) {
  if (!options_.use_onednn) return false;
  if (onednn_ == nullptr) {
    HLOC_ASSIGN_OR_RETURN(onednn_, OneDnnContext::Create());
  }
  HLOC_ASSIGN_OR_RETURN(OneDnnLowering lowering, LowerToOneDnn(hlo, onednn_));
  const std::string* composite = hlo.FindFrontendAttribute("composite.name");
  const std::string what = hlo.opcode() == HloOpcode::kCall && composite != nullptr
                               ? *composite
                               : std::string(HloOpcodeName(hlo.opcode()));
  if (!lowering.function.has_value()) {
    report_.library_refusals.push_back(
        absl::StrCat("%", hlo.name(), " (", what, "): ", lowering.refusal));
    return false;
  }
  report_.onednn_calls.push_back(
      absl::StrCat("%", hlo.name(), " (", what, "): ", lowering.description));
  AddLibraryThunk(builder, hlo, *std::move(lowering.function), absl::StrCat("onednn:", what), out);
  return true;
}

absl::StatusOr<bool> HostLowering::EmitCollective(backend::ProgramBuilder& builder,
                                                  const HloInstruction& hlo,
                                                  runtime::CollectiveSpec spec,
                                                  backend::ThunkList* out) {
  std::shared_ptr<runtime::Communicator> communicator = options_.communicator;
  if (communicator == nullptr) communicator = std::make_shared<runtime::SelfCommunicator>();
  std::vector<BufferId> buffers = builder.BindCollective(hlo);
  Thunks(out).push_back(std::make_unique<runtime::CollectiveThunk>(
      absl::StrCat("%", hlo.name()), std::move(spec), std::move(communicator),
      std::move(buffers)));
  return true;
}

void HostLowering::AddLibraryThunk(backend::ProgramBuilder& builder, const HloInstruction& hlo,
                                   runtime::LibraryCallThunk::Function function,
                                   absl::string_view label, backend::ThunkList* out) {
  std::vector<BufferId> buffers = builder.BindCall(hlo);
  Thunks(out).push_back(std::make_unique<runtime::LibraryCallThunk>(
      absl::StrCat(label.empty() ? HloOpcodeName(hlo.opcode()) : label, " %", hlo.name()),
      std::move(function), std::move(buffers)));
  ++builder.report().library_calls;
}

void HostLowering::EmitInterpreterOp(backend::ProgramBuilder& builder, std::string name,
                                     std::string reason, runtime::HostFunction function,
                                     std::vector<BufferId> inputs, std::vector<BufferId> outputs,
                                     backend::ThunkList* out) {
  Thunks(out).push_back(std::make_unique<runtime::InterpreterThunk>(
      std::move(name), std::move(reason), std::move(function), std::move(inputs),
      std::move(outputs)));
}

}  // namespace host
}  // namespace hloc
