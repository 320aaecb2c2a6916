// CompileForGpu: the program builder with the GPU's lowering (see
// gpu_compiler.h), the GPU report, and running a GpuProgram.
#include "backend/gpu/gpu_compiler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "backend/common/literal_leaves.h"
#include "backend/common/program_builder.h"
#include "backend/gpu/gpu_lowering.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace gpu {

std::string GpuCompileReport::ToString() const {
  std::string out =
      absl::StrCat(kernels, " kernels (", fused_kernels, " fused), ", unfused_fusions,
                   " fusions split, ", library_calls, " library calls, ", inlined_library_calls,
                   " library calls inlined, ", interpreter_calls, " interpreter calls\n");
  for (const std::string& s : strategies) absl::StrAppend(&out, "  kernel ", s, "\n");
  for (const std::string& s : library) absl::StrAppend(&out, "  library ", s, "\n");
  for (const std::string& s : inlined) absl::StrAppend(&out, "  inlined ", s, "\n");
  for (const std::string& s : alternatives) absl::StrAppend(&out, "  alternatives ", s, "\n");
  AppendSharedLines(&out);
  return out;
}

GpuProgram::~GpuProgram() = default;

absl::StatusOr<std::unique_ptr<GpuProgram>> CompileForGpu(const HloModule& module,
                                                          const GpuProgramOptions& options) {
  std::unique_ptr<GpuProgram> program(new GpuProgram());
  program->module_ = module.Clone();
  GpuLowering lowering(options, &program->report_);
  backend::ProgramBuilderOptions builder_options;
  builder_options.update_in_place = options.update_in_place;
  builder_options.interpreter = backend::ReferenceInterpreter();
  backend::ProgramBuilder builder(&lowering, std::move(builder_options), &program->report_);
  HLOC_ASSIGN_OR_RETURN(backend::BuiltProgram built, builder.Build(*program->module_));
  GpuCompileReport& report = program->report_;
  report.host_fallbacks = report.interpreter_calls;
  report.host = report.interpreter_ops;
  program->parameter_shapes_ = std::move(built.parameter_shapes);
  program->result_shape_ = std::move(built.result_shape);
  HLOC_ASSIGN_OR_RETURN(program->declared_result_,
                        backend::DeclaredResult::ForModule(*program->module_));
  cuda::GpuProgramSpec spec;
  backend::MoveIntoSpec<GpuLowering>(&built, &spec);
  HLOC_ASSIGN_OR_RETURN(program->executable_, cuda::GpuExecutable::Create(std::move(spec)));
  return program;
}

absl::Status GpuProgram::Load(cuda::CudaDevice* device, const cuda::GpuLoadOptions& options) {
  return executable_->Load(device, options);
}

absl::StatusOr<Literal> GpuProgram::Execute(absl::Span<const Literal> arguments,
                                            const cuda::GpuExecuteOptions& options) {
  std::vector<Literal> padded;  // Dynamic entry parameters' arguments (declared_result.h).
  if (declared_result_.dynamic_parameters()) {
    HLOC_ASSIGN_OR_RETURN(padded, declared_result_.PadArguments(arguments));
    arguments = padded;
  }
  HLOC_RETURN_IF_ERROR(backend::CheckArguments(arguments, parameter_shapes_));
  HLOC_ASSIGN_OR_RETURN(backend::ResultLiteral result, backend::CreateResultLiteral(result_shape_));
  HLOC_RETURN_IF_ERROR(
      executable_->Execute(backend::ArgumentLeafData(arguments), result.outputs, options));
  return declared_result_.FromRun(std::move(result.literal));
}

std::string GpuProgram::PlanToString() const {
  return absl::StrCat(report_.ToString(), "thunks:\n", executable_->ThunksToString(),
                      executable_->MemoryReport());
}

GpuTarget TargetForDevice(const cuda::DeviceInfo& info) {
  GpuTarget target = GpuTarget::ForComputeCapability(info.compute_major * 10 + info.compute_minor);
  target.sm_count = info.sm_count;
  target.max_threads_per_block = info.max_threads_per_block;
  target.warp_size = info.warp_size;
  return target;
}

}  // namespace gpu
}  // namespace hloc
