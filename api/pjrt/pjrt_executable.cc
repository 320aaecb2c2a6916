// Compiling and running: PJRT_Client_Compile hands the serialized
// HloModuleProto to hloc::api::Client::Compile (load, verify, hloc's pipeline,
// the host backend); PJRT_LoadedExecutable_Execute runs the Executable on the
// arguments' hloc buffers and wraps its results, all in process and on the
// calling thread.
//
// Donation (the module's buffer_donor, which torch_xla sets) is not used:
// arguments stay valid after a run, which PJRT allows.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/pjrt/module_with_config.pb.h"
#include "api/pjrt/optimized_program.h"
#include "api/pjrt/pjrt_objects.h"

namespace hloc {
namespace pjrt {
namespace {

constexpr char kMemoryKind[] = "device";

// The HloModuleProto in `program` (format "hlo", or "hlo_with_config").
absl::StatusOr<xla::HloModuleProto> ModuleOfProgram(const PJRT_Program& program) {
  const absl::string_view format(program.format, program.format_size);
  const absl::string_view code(program.code, program.code_size);
  if (format == "hlo") {
    xla::HloModuleProto module;
    if (!module.ParseFromArray(code.data(), static_cast<int>(code.size()))) {
      return absl::InvalidArgumentError("program (format hlo) is not a serialized HloModuleProto");
    }
    return module;
  }
  if (format == "hlo_with_config") {
    xla::HloModuleProtoWithConfig with_config;
    if (!with_config.ParseFromArray(code.data(), static_cast<int>(code.size()))) {
      return absl::InvalidArgumentError(
          "program (format hlo_with_config) is not a serialized HloModuleProtoWithConfig");
    }
    return std::move(*with_config.mutable_hlo_module());
  }
  return absl::UnimplementedError(absl::StrCat(
      "hloc's PJRT plugin compiles programs of format hlo or hlo_with_config, not '", format,
      "'"));
}

absl::StatusOr<std::shared_ptr<const PJRT_CompiledProgram>> Compile(PJRT_Client* client,
                                                                    const PJRT_Program& program) {
  absl::StatusOr<xla::HloModuleProto> module = ModuleOfProgram(program);
  if (!module.ok()) return module.status();
  std::string bytes;
  if (absl::string_view(program.format, program.format_size) == "hlo") {
    bytes.assign(program.code, program.code_size);
  } else if (!module->SerializeToString(&bytes)) {
    return absl::InternalError("could not serialize the module");
  }
  hloc::api::CompileOptions options;
  options.backend = client->backend;
  absl::StatusOr<std::shared_ptr<hloc::api::Executable>> executable =
      client->hloc->Compile(hloc::api::ModuleSource::Bytes(std::move(bytes)), options);
  if (!executable.ok()) return executable.status();

  auto compiled = std::make_shared<PJRT_CompiledProgram>();
  compiled->executable = *std::move(executable);
  compiled->name = module->name();
  absl::StatusOr<std::string> optimized = SerializeModuleWithRowMajorConfig(*std::move(module));
  if (!optimized.ok()) return optimized.status();
  compiled->optimized_program = *std::move(optimized);
  for (const hloc::api::ArraySpec& result : compiled->executable->results()) {
    compiled->output_types.push_back(ToPjrtType(result.type));
    compiled->output_dims.insert(compiled->output_dims.end(), result.dims.begin(),
                                 result.dims.end());
    compiled->output_dim_sizes.push_back(result.dims.size());
    compiled->output_memory_kinds.push_back(kMemoryKind);
    compiled->output_memory_kind_sizes.push_back(sizeof(kMemoryKind) - 1);
  }
  return compiled;
}

const PJRT_CompiledProgram& ProgramOf(const PJRT_Executable* executable) {
  return *executable->program;
}

}  // namespace

PJRT_Error* ClientCompile(PJRT_Client_Compile_Args* args) {
  if (args->program == nullptr) {
    return MakeError(absl::InvalidArgumentError("PJRT_Client_Compile without a program"));
  }
  // compile_options (a CompileOptionsProto) holds nothing hloc acts on: one
  // replica, one partition, one device.
  absl::StatusOr<std::shared_ptr<const PJRT_CompiledProgram>> program =
      Compile(args->client, *args->program);
  if (!program.ok()) return MakeError(program.status());
  auto* loaded = new PJRT_LoadedExecutable;
  loaded->client = args->client;
  loaded->program = *program;
  loaded->executable.program = *program;
  args->executable = loaded;
  return nullptr;
}

PJRT_Error* ExecutableDestroy(PJRT_Executable_Destroy_Args* args) {
  delete args->executable;
  return nullptr;
}

PJRT_Error* ExecutableName(PJRT_Executable_Name_Args* args) {
  const std::string& name = ProgramOf(args->executable).name;
  args->executable_name = name.c_str();
  args->executable_name_size = name.size();
  return nullptr;
}

PJRT_Error* ExecutableNumReplicas(PJRT_Executable_NumReplicas_Args* args) {
  args->num_replicas = 1;
  return nullptr;
}

PJRT_Error* ExecutableNumPartitions(PJRT_Executable_NumPartitions_Args* args) {
  args->num_partitions = 1;
  return nullptr;
}

PJRT_Error* ExecutableNumOutputs(PJRT_Executable_NumOutputs_Args* args) {
  args->num_outputs = ProgramOf(args->executable).output_types.size();
  return nullptr;
}

PJRT_Error* ExecutableSizeOfGeneratedCodeInBytes(
    PJRT_Executable_SizeOfGeneratedCodeInBytes_Args* args) {
  args->size_in_bytes = 0;  // JIT code is not counted by hloc.
  return nullptr;
}

PJRT_Error* ExecutableOutputMemoryKinds(PJRT_Executable_OutputMemoryKinds_Args* args) {
  const PJRT_CompiledProgram& program = ProgramOf(args->executable);
  args->num_outputs = program.output_memory_kinds.size();
  args->memory_kinds = program.output_memory_kinds.data();
  args->memory_kind_sizes = program.output_memory_kind_sizes.data();
  return nullptr;
}

PJRT_Error* ExecutableOptimizedProgram(PJRT_Executable_OptimizedProgram_Args* args) {
  static constexpr char kFormat[] = "hlo_with_config";
  const std::string& code = ProgramOf(args->executable).optimized_program;
  PJRT_Program* program = args->program;
  program->format = kFormat;
  program->format_size = sizeof(kFormat) - 1;
  if (program->code == nullptr) {
    program->code_size = code.size();
    return nullptr;
  }
  if (program->code_size < code.size()) {
    return MakeError(absl::InvalidArgumentError(
        absl::StrCat("program buffer of ", program->code_size, " bytes is too small for the ",
                     code.size(), "-byte optimized program")));
  }
  code.copy(program->code, code.size());
  program->code_size = code.size();
  return nullptr;
}

PJRT_Error* ExecutableOutputElementTypes(PJRT_Executable_OutputElementTypes_Args* args) {
  const PJRT_CompiledProgram& program = ProgramOf(args->executable);
  // The API hands out a mutable pointer; the array is never written through.
  args->output_types = const_cast<PJRT_Buffer_Type*>(program.output_types.data());
  args->num_output_types = program.output_types.size();
  return nullptr;
}

PJRT_Error* ExecutableOutputDimensions(PJRT_Executable_OutputDimensions_Args* args) {
  const PJRT_CompiledProgram& program = ProgramOf(args->executable);
  args->num_outputs = program.output_dim_sizes.size();
  args->dims = program.output_dims.data();
  args->dim_sizes = program.output_dim_sizes.data();
  return nullptr;
}

PJRT_Error* ExecutableFingerprint(PJRT_Executable_Fingerprint_Args* args) {
  const std::string& fingerprint = ProgramOf(args->executable).executable->fingerprint();
  args->executable_fingerprint = fingerprint.c_str();
  args->executable_fingerprint_size = fingerprint.size();
  return nullptr;
}

PJRT_Error* ExecutableGetCompiledMemoryStats(PJRT_Executable_GetCompiledMemoryStats_Args* args) {
  const hloc::api::Executable& executable = *ProgramOf(args->executable).executable;
  int64_t argument_bytes = 0;
  int64_t output_bytes = 0;
  for (const hloc::api::ArraySpec& spec : executable.parameters()) {
    argument_bytes += spec.byte_size();
  }
  for (const hloc::api::ArraySpec& spec : executable.results()) output_bytes += spec.byte_size();
  const int64_t temp_bytes = executable.stats().peak_memory_bytes;
  args->generated_code_size_in_bytes = 0;
  args->argument_size_in_bytes = argument_bytes;
  args->output_size_in_bytes = output_bytes;
  args->alias_size_in_bytes = 0;
  args->temp_size_in_bytes = temp_bytes;
  args->host_generated_code_size_in_bytes = 0;
  args->host_argument_size_in_bytes = 0;
  args->host_output_size_in_bytes = 0;
  args->host_alias_size_in_bytes = 0;
  args->host_temp_size_in_bytes = 0;
  if (HLOC_PJRT_HAS(args, PJRT_Executable_GetCompiledMemoryStats_Args, peak_memory_in_bytes)) {
    args->peak_memory_in_bytes = argument_bytes + output_bytes + temp_bytes;
  }
  if (HLOC_PJRT_HAS(args, PJRT_Executable_GetCompiledMemoryStats_Args, total_size_in_bytes)) {
    args->total_size_in_bytes = argument_bytes + output_bytes + temp_bytes;
  }
  return nullptr;
}

PJRT_Error* LoadedExecutableDestroy(PJRT_LoadedExecutable_Destroy_Args* args) {
  delete args->executable;
  return nullptr;
}

PJRT_Error* LoadedExecutableGetExecutable(PJRT_LoadedExecutable_GetExecutable_Args* args) {
  args->executable = new PJRT_Executable{args->loaded_executable->program};
  return nullptr;
}

PJRT_Error* LoadedExecutableAddressableDevices(
    PJRT_LoadedExecutable_AddressableDevices_Args* args) {
  PJRT_Client* client = args->executable->client;
  args->addressable_devices = client->devices.data();
  args->num_addressable_devices = client->devices.size();
  return nullptr;
}

PJRT_Error* LoadedExecutableDelete(PJRT_LoadedExecutable_Delete_Args* args) {
  args->executable->deleted = true;
  return nullptr;
}

PJRT_Error* LoadedExecutableIsDeleted(PJRT_LoadedExecutable_IsDeleted_Args* args) {
  args->is_deleted = args->executable->deleted.load();
  return nullptr;
}

PJRT_Error* LoadedExecutableExecute(PJRT_LoadedExecutable_Execute_Args* args) {
  PJRT_LoadedExecutable* loaded = args->executable;
  PJRT_Client* client = loaded->client;
  if (loaded->deleted.load()) {
    return MakeError(absl::FailedPreconditionError("the executable has been deleted"));
  }
  if (args->num_devices != 1) {
    return MakeError(absl::InvalidArgumentError(absl::StrCat(
        "hloc has one device; Execute was given argument lists for ", args->num_devices)));
  }
  if (args->execute_device != nullptr && args->execute_device != &client->device) {
    return MakeError(absl::InvalidArgumentError("execute_device is not this client's device"));
  }
  std::vector<hloc::api::Buffer> arguments;
  arguments.reserve(args->num_args);
  for (size_t i = 0; i < args->num_args; ++i) {
    PJRT_Buffer* buffer = args->argument_lists[0][i];
    if (buffer == nullptr) {
      return MakeError(absl::InvalidArgumentError(absl::StrCat("argument ", i, " is null")));
    }
    absl::StatusOr<hloc::api::Buffer> value = buffer->Get();
    if (!value.ok()) {
      return MakeError(absl::Status(value.status().code(),
                                    absl::StrCat("argument ", i, ": ", value.status().message())));
    }
    arguments.push_back(*std::move(value));
  }
  absl::StatusOr<std::vector<hloc::api::Buffer>> results =
      loaded->program->executable->Execute(arguments);
  if (!results.ok()) return MakeError(results.status());
  for (size_t j = 0; j < results->size(); ++j) {
    args->output_lists[0][j] = NewBuffer(client, std::move((*results)[j]));
  }
  if (args->device_complete_events != nullptr) {
    args->device_complete_events[0] = MakeReadyEvent();
  }
  return nullptr;
}

PJRT_Error* LoadedExecutableFingerprint(PJRT_LoadedExecutable_Fingerprint_Args* args) {
  const std::string& fingerprint = args->executable->program->executable->fingerprint();
  args->executable_fingerprint = fingerprint.c_str();
  args->executable_fingerprint_size = fingerprint.size();
  return nullptr;
}

}  // namespace pjrt
}  // namespace hloc
