// The "hlo_with_config" program of PJRT_Executable_OptimizedProgram.
#include "api/pjrt/optimized_program.h"

#include <utility>

#include "api/pjrt/module_with_config.pb.h"

namespace hloc {
namespace pjrt {
namespace {

void SetRowMajorLayout(xla::ShapeProto& shape) {
  switch (shape.element_type()) {
    case xla::TUPLE:
      shape.clear_layout();
      for (xla::ShapeProto& element : *shape.mutable_tuple_shapes()) SetRowMajorLayout(element);
      return;
    case xla::TOKEN:
    case xla::OPAQUE_TYPE:
    case xla::PRIMITIVE_TYPE_INVALID:
      return;
    default:
      break;
  }
  xla::LayoutProto* layout = shape.mutable_layout();
  layout->Clear();
  for (int d = shape.dimensions_size() - 1; d >= 0; --d) layout->add_minor_to_major(d);
}

void SetRowMajorLayouts(xla::ProgramShapeProto& program_shape) {
  for (xla::ShapeProto& parameter : *program_shape.mutable_parameters()) {
    SetRowMajorLayout(parameter);
  }
  SetRowMajorLayout(*program_shape.mutable_result());
}

}  // namespace

void SetRowMajorLayouts(xla::HloModuleProto& module) {
  if (module.has_host_program_shape()) SetRowMajorLayouts(*module.mutable_host_program_shape());
  for (xla::HloComputationProto& computation : *module.mutable_computations()) {
    if (computation.has_program_shape()) SetRowMajorLayouts(*computation.mutable_program_shape());
    for (xla::HloInstructionProto& instruction : *computation.mutable_instructions()) {
      SetRowMajorLayout(*instruction.mutable_shape());
    }
  }
}

absl::StatusOr<std::string> SerializeModuleWithRowMajorConfig(xla::HloModuleProto module) {
  SetRowMajorLayouts(module);
  xla::HloModuleProtoWithConfig with_config;
  xla::HloModuleConfigProto* config = with_config.mutable_config();
  config->set_replica_count(1);
  config->set_num_partitions(1);
  if (module.has_host_program_shape()) {
    *config->mutable_entry_computation_layout() = module.host_program_shape();
  } else {
    const xla::HloComputationProto* entry = nullptr;
    for (const xla::HloComputationProto& computation : module.computations()) {
      if (computation.id() == module.entry_computation_id()) entry = &computation;
    }
    if (entry == nullptr || !entry->has_program_shape()) {
      return absl::InvalidArgumentError(
          "module has neither a host program shape nor an entry computation signature");
    }
    *config->mutable_entry_computation_layout() = entry->program_shape();
  }
  *with_config.mutable_hlo_module() = std::move(module);
  std::string bytes;
  if (!with_config.SerializeToString(&bytes)) {
    return absl::InternalError("could not serialize the module with its config");
  }
  return bytes;
}

}  // namespace pjrt
}  // namespace hloc
