// CompileForHost: the program builder with the host's lowering (see
// host_compiler.h), and the host report.
#include "backend/host/host_compiler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "backend/common/program_builder.h"
#include "backend/host/host_lowering.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace host {

std::string HostCompileReport::ToString() const {
  std::string out = absl::StrCat(kernels, " kernels (", fused_kernels, " fused), ", unfused_fusions,
                                 " fusions split, ", library_calls, " library calls, ",
                                 interpreter_calls, " interpreter calls\n");
  for (const std::string& s : strategies) absl::StrAppend(&out, "  kernel ", s, "\n");
  for (const std::string& s : onednn_calls) absl::StrAppend(&out, "  onednn ", s, "\n");
  for (const std::string& s : library_refusals) absl::StrAppend(&out, "  not onednn ", s, "\n");
  AppendSharedLines(&out);
  return out;
}

absl::StatusOr<std::unique_ptr<HostProgram>> CompileForHost(const HloModule& module,
                                                            const HostCompileOptions& options) {
  std::unique_ptr<HostProgram> program(new HostProgram());
  program->module_ = module.Clone();
  program->compiler_ = options.compiler;
  if (program->compiler_ == nullptr) {
    HLOC_ASSIGN_OR_RETURN(program->compiler_, KernelCompiler::Create(options.kernel));
  }
  HostLowering lowering(options, program->compiler_.get(), &program->report_);
  backend::ProgramBuilderOptions builder_options;
  builder_options.update_in_place = options.update_in_place;
  builder_options.interpreter = options.interpreter ? options.interpreter : options.fallback;
  backend::ProgramBuilder builder(&lowering, std::move(builder_options), &program->report_);
  HLOC_ASSIGN_OR_RETURN(backend::BuiltProgram built, builder.Build(*program->module_));
  for (const auto& [opcode, name] : program->report_.interpreter_opcodes) {
    program->report_.fallback_ops.push_back(absl::StrCat(opcode, " (%", name, ")"));
  }
  program->parameter_shapes_ = std::move(built.parameter_shapes);
  program->result_shape_ = std::move(built.result_shape);
  HLOC_ASSIGN_OR_RETURN(program->declared_result_,
                        backend::DeclaredResult::ForModule(*program->module_));
  runtime::ProgramSpec spec;
  backend::MoveIntoSpec<HostLowering>(&built, &spec);
  spec.code_owner = program->compiler_;
  HLOC_ASSIGN_OR_RETURN(program->executable_, runtime::Executable::Create(std::move(spec)));
  return program;
}

}  // namespace host
}  // namespace hloc
