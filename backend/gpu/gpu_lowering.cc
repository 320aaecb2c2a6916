// The GPU's lowering of kernels, copies, loops, conditionals and
// interpreter ops (see gpu_lowering.h); library calls are in
// gpu_library_lowering.cc.
#include "backend/gpu/gpu_lowering.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backend/common/registered_custom_calls.h"
#include "hlo/status_macros.h"
#include "runtime/cuda/collective_thunk.h"

namespace hloc {
namespace gpu {
namespace {

absl::StatusOr<cuda::LaunchConfig> ToLaunchConfig(const GpuKernel& kernel) {
  cuda::LaunchConfig c;
  for (int i = 0; i < 3; ++i) {
    const int64_t limit_grid = i == 0 ? std::numeric_limits<int32_t>::max() : 65535;
    if (kernel.launch.grid[i] < 0 || kernel.launch.grid[i] > limit_grid ||
        kernel.launch.block[i] < 0 || kernel.launch.block[i] > 1024) {
      return absl::InternalError(
          absl::StrCat("kernel ", kernel.name, " has launch dimensions out of range"));
    }
    c.grid[i] = static_cast<uint32_t>(kernel.launch.grid[i]);
    c.block[i] = static_cast<uint32_t>(kernel.launch.block[i]);
  }
  if (kernel.launch.shared_bytes < 0 || kernel.launch.shared_bytes > (int64_t{1} << 30)) {
    return absl::InternalError(absl::StrCat("kernel ", kernel.name, " asks for ",
                                            kernel.launch.shared_bytes, " shared bytes"));
  }
  c.shared_bytes = static_cast<uint32_t>(kernel.launch.shared_bytes);
  return c;
}

// The byte size of each buffer, for a host call's copies.
std::vector<int64_t> ByteSizes(const backend::BufferTable& table,
                               const std::vector<runtime::BufferId>& ids) {
  std::vector<int64_t> bytes;
  bytes.reserve(ids.size());
  for (runtime::BufferId id : ids) bytes.push_back(table.size(id));
  return bytes;
}

}  // namespace

absl::StatusOr<backend::KernelEmission> GpuLowering::EmitKernel(
    backend::ProgramBuilder& builder, const HloInstruction& hlo, const HloComputation& computation,
    backend::KernelVariant variant, const backend::KernelBinder& bind, backend::ThunkList* out) {
  backend::KernelEmission emission;
  absl::StatusOr<std::shared_ptr<const GpuKernel>> kernel =
      cache_->GetOrCompile(computation, variant);
  if (!kernel.ok()) {
    if (kernel.status().code() != absl::StatusCode::kUnimplemented) {
      return absl::Status(kernel.status().code(),
                          absl::StrCat("compiling %", hlo.name(), ": ", kernel.status().message()));
    }
    emission.refusal = std::string(kernel.status().message());
    return emission;
  }
  HLOC_ASSIGN_OR_RETURN(std::vector<BufferId> buffers, bind());
  HLOC_RETURN_IF_ERROR(AddKernelThunk(builder, hlo, **kernel, std::move(buffers), &Thunks(out), "",
                                      &emission.strategies));
  emission.emitted = true;
  return emission;
}

absl::Status GpuLowering::AddKernelThunk(backend::ProgramBuilder& builder,
                                         const HloInstruction& hlo, const GpuKernel& kernel,
                                         std::vector<BufferId> buffers, cuda::ThunkSequence* out,
                                         absl::string_view label,
                                         std::vector<std::string>* strategies) {
  backend::BufferTable& table = builder.buffers();
  const std::string name = label.empty() ? absl::StrCat("%", hlo.name()) : std::string(label);
  // Outputs the kernel updates in place start as copies of inputs.
  for (const auto& [input, output] : kernel.copy_before) {
    if (input < 0 || output < 0 || input >= static_cast<int64_t>(buffers.size()) ||
        output >= static_cast<int64_t>(buffers.size())) {
      return backend::InstructionError(hlo, "kernel copy_before out of range");
    }
    out->push_back(std::make_unique<cuda::CopyThunk>(buffers[input], buffers[output],
                                                     table.size(buffers[output])));
  }
  if (kernel.scratch_bytes > 0) {
    buffers.push_back(table.NewTemp(kernel.scratch_bytes, absl::StrCat(name, ".scratch")));
  }
  if (static_cast<int64_t>(buffers.size()) != kernel.num_buffers) {
    return backend::InstructionError(
        hlo, absl::StrCat("kernel takes ", kernel.num_buffers, " buffers, the instruction has ",
                          buffers.size()));
  }
  HLOC_ASSIGN_OR_RETURN(cuda::LaunchConfig launch, ToLaunchConfig(kernel));
  std::shared_ptr<const cuda::KernelImage>& image = images_[&kernel];
  if (image == nullptr) {
    image = std::make_shared<cuda::KernelImage>(
        cuda::KernelImage{kernel.name, kernel.ptx, kernel.cubin});
  }
  // Split reductions: a combine kernel runs next, over the same buffers.
  std::vector<BufferId> second_buffers;
  if (!kernel.second_name.empty()) second_buffers = buffers;
  out->push_back(std::make_unique<cuda::KernelThunk>(name, image, launch, std::move(buffers),
                                                     kernel.strategy));
  if (strategies != nullptr) {
    strategies->push_back(absl::StrCat(name, ": ", kernel.strategy, " ", kernel.name, " (grid ",
                                       kernel.launch.grid[0], ", block ", kernel.launch.block[0],
                                       ")"));
  }
  if (kernel.second_name.empty()) return absl::OkStatus();
  GpuKernel second;
  second.name = kernel.second_name;
  second.launch = kernel.second_launch;
  HLOC_ASSIGN_OR_RETURN(cuda::LaunchConfig second_launch, ToLaunchConfig(second));
  out->push_back(std::make_unique<cuda::KernelThunk>(
      absl::StrCat(name, ".combine"),
      std::make_shared<cuda::KernelImage>(
          cuda::KernelImage{kernel.second_name, image->ptx, image->cubin}),
      second_launch, std::move(second_buffers), "reduction-combine"));
  if (strategies != nullptr) {
    strategies->push_back(absl::StrCat(name, ".combine: reduction-combine ", kernel.second_name,
                                       " (grid ", kernel.second_launch.grid[0], ", block ",
                                       kernel.second_launch.block[0], ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> GpuLowering::EmitCollective(backend::ProgramBuilder& builder,
                                                 const HloInstruction& hlo,
                                                 runtime::CollectiveSpec spec,
                                                 backend::ThunkList* out) {
  if (absl::Status s = cuda::CheckNcclSupport(spec); !s.ok()) {
    return backend::InstructionError(hlo, s.message());
  }
  std::vector<BufferId> buffers = builder.BindCollective(hlo);
  const std::string label = absl::StrCat("%", hlo.name());
  if (const int64_t scratch = cuda::CollectiveScratchBytes(spec); scratch > 0) {
    buffers.push_back(builder.buffers().NewTemp(scratch, absl::StrCat(label, ".scratch")));
  }
  Thunks(out).push_back(
      std::make_unique<cuda::CollectiveThunk>(label, std::move(spec), std::move(buffers)));
  return true;
}

absl::StatusOr<bool> GpuLowering::EmitRegisteredCustomCall(backend::ProgramBuilder& builder,
                                                           const HloInstruction& hlo,
                                                           backend::ThunkList* out) {
  HLOC_ASSIGN_OR_RETURN(std::shared_ptr<const CustomCallHandler> handler,
                        backend::FindRegisteredCustomCall(options_.custom_calls.get(), hlo));
  backend::BufferTable& table = builder.buffers();
  std::vector<BufferId> inputs = table.UseOperands(hlo);
  std::vector<BufferId> outputs = table.NewTemps(hlo);
  table.Bind(&hlo, outputs);
  std::vector<int64_t> input_bytes = ByteSizes(table, inputs);
  std::vector<int64_t> output_bytes = ByteSizes(table, outputs);
  const std::string label = absl::StrCat("%", hlo.name());
  std::string target = handler->target;
  // GpuProgram owns the module, so `hlo` outlives the thunk.
  Thunks(out).push_back(std::make_unique<cuda::CustomCallThunk>(
      label, target, std::move(inputs), std::move(input_bytes), std::move(outputs),
      std::move(output_bytes), backend::MakeRegisteredCustomCallFunction(std::move(handler), &hlo)));
  ++report_.library_calls;
  report_.library.push_back(
      absl::StrCat(label, " custom-call \"", target, "\" -> registered function on the host"));
  return true;
}

void GpuLowering::EmitInterpreterOp(backend::ProgramBuilder& builder, std::string name,
                                    std::string reason, runtime::HostFunction function,
                                    std::vector<BufferId> inputs, std::vector<BufferId> outputs,
                                    backend::ThunkList* out) {
  std::vector<int64_t> input_bytes = ByteSizes(builder.buffers(), inputs);
  std::vector<int64_t> output_bytes = ByteSizes(builder.buffers(), outputs);
  Thunks(out).push_back(std::make_unique<cuda::InterpreterThunk>(
      std::move(name), std::move(reason), std::move(inputs), std::move(input_bytes),
      std::move(outputs), std::move(output_bytes), std::move(function)));
}

}  // namespace gpu
}  // namespace hloc
