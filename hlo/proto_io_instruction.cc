// One instruction <-> HloInstructionProto: opcode, shape and every
// HloAttributes member mapped to the proto field XLA uses for it.
//
// How nothing gets lost. Reading copies the proto, clears each field it
// consumes into the IR, and keeps the remainder as the instruction's carried
// proto fields. Writing starts from the carried fields and writes the modeled
// ones on top, the way XLA's own writer does (metadata, frontend attributes
// and statistics always present; window, dimension numbers and precision
// config present for the ops that define them). Where XLA wrote a message
// that this writer would leave out (an empty window on a custom-call, say),
// the reader records an empty copy in the carried fields so it comes back.
// A shape with layout fields the IR does not model (sparse dim levels, tail
// padding other than 1, ...) is carried verbatim and used while the
// instruction's shape still matches it.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/proto_io.h"
#include "hlo/proto_io_internal.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace proto_io_internal {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Proto = xla::HloInstructionProto;

// Fields every instruction's reader consumes whatever its opcode.
const absl::flat_hash_set<int>& AlwaysConsumedFields() {
  static const auto* const kFields = new absl::flat_hash_set<int>{
      Proto::kNameFieldNumber,
      Proto::kOpcodeFieldNumber,
      Proto::kShapeFieldNumber,
      Proto::kMetadataFieldNumber,
      Proto::kLiteralFieldNumber,
      Proto::kIdFieldNumber,
      Proto::kOperandIdsFieldNumber,
      Proto::kControlPredecessorIdsFieldNumber,
      Proto::kCalledComputationIdsFieldNumber,
      Proto::kShardingFieldNumber,
      Proto::kBackendConfigFieldNumber,
      Proto::kFrontendAttributesFieldNumber,
      Proto::kIsCompositeFieldNumber,
      Proto::kDimensionsFieldNumber,
      Proto::kWindowFieldNumber,
      Proto::kConvolutionDimensionNumbersFieldNumber,
      Proto::kSliceDimensionsFieldNumber,
      Proto::kExponentBitsFieldNumber,
      Proto::kMantissaBitsFieldNumber,
      Proto::kDynamicSliceSizesFieldNumber,
      Proto::kPaddingConfigFieldNumber,
      Proto::kOutfeedConfigFieldNumber,
      Proto::kDistributionFieldNumber,
      Proto::kEpsilonFieldNumber,
      Proto::kFeatureIndexFieldNumber,
      Proto::kInfeedConfigFieldNumber,
      Proto::kCustomCallTargetFieldNumber,
      Proto::kOutfeedShapeFieldNumber,
      Proto::kDotDimensionNumbersFieldNumber,
      Proto::kRaggedDotDimensionNumbersFieldNumber,
      Proto::kFftTypeFieldNumber,
      Proto::kFftLengthFieldNumber,
      Proto::kGatherDimensionNumbersFieldNumber,
      Proto::kGatherSliceSizesFieldNumber,
      Proto::kIsHostTransferFieldNumber,
      Proto::kScatterDimensionNumbersFieldNumber,
      Proto::kFeatureGroupCountFieldNumber,
      Proto::kBatchGroupCountFieldNumber,
      Proto::kPrecisionConfigFieldNumber,
      Proto::kSourceTargetPairsFieldNumber,
      Proto::kTriangularSolveOptionsFieldNumber,
      Proto::kIsStableFieldNumber,
      Proto::kCholeskyOptionsFieldNumber,
      Proto::kCustomCallHasSideEffectFieldNumber,
      Proto::kIndicesAreSortedFieldNumber,
      Proto::kUniqueIndicesFieldNumber,
      Proto::kRngAlgorithmFieldNumber,
      Proto::kUseGlobalDeviceIdsFieldNumber,
      Proto::kOutputOperandAliasingFieldNumber,
      Proto::kCustomCallScheduleFieldNumber,
      Proto::kAsyncExecutionThreadFieldNumber,
      Proto::kKFieldNumber,
      Proto::kCollectiveDeviceListFieldNumber,
      Proto::kIotaCollectiveDeviceListFieldNumber,
      Proto::kResultAccuracyFieldNumber,
  };
  return *kFields;
}

absl::Status InstructionError(const Proto& proto, const std::string& message) {
  return absl::InvalidArgumentError(
      absl::StrCat("instruction '", proto.name(), "' (id ", proto.id(), "): ", message));
}

bool SameSerialization(const Message& a, const Message& b) {
  std::string sa, sb;
  a.SerializeToString(&sa);
  b.SerializeToString(&sb);
  return sa == sb;
}

bool IsGroupedCollective(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kCollectiveBroadcast:
      return true;
    default:
      return false;
  }
}

template <typename T>
std::vector<int64_t> ToVector(const google::protobuf::RepeatedField<T>& field) {
  return std::vector<int64_t>(field.begin(), field.end());
}

// Reads the fields InstructionFromProto consumes into `instruction`'s
// attributes and clears them from `rest`.
absl::Status ReadAttributes(const Proto& p, HloInstruction* instruction, Proto* rest) {
  const HloOpcode opcode = instruction->opcode();
  HloAttributes* a = instruction->mutable_attrs();

  if (opcode == HloOpcode::kIota) {
    if (p.dimensions_size() != 1) {
      return InstructionError(p, absl::StrCat("iota needs exactly one dimension, has ",
                                              p.dimensions_size()));
    }
    a->iota_dimension = p.dimensions(0);
    if (!instruction->shape().IsArray() || a->iota_dimension < 0 ||
        a->iota_dimension >= instruction->shape().rank()) {
      return InstructionError(p, absl::StrCat("iota dimension ", a->iota_dimension,
                                              " is out of range for shape ",
                                              instruction->shape().ToString()));
    }
  } else {
    a->dimensions = ToVector(p.dimensions());
  }
  if (opcode == HloOpcode::kParameter) {
    if (p.parameter_number() < 0) {
      return InstructionError(p, absl::StrCat("negative parameter number ", p.parameter_number()));
    }
    a->parameter_number = p.parameter_number();
    rest->clear_parameter_number();
  }
  if (opcode == HloOpcode::kGetTupleElement) {
    const Shape& tuple = instruction->operand(0)->shape();
    if (!tuple.IsTuple() || p.tuple_index() < 0 || p.tuple_index() >= tuple.tuple_shapes_size()) {
      return InstructionError(p, absl::StrCat("tuple_index ", p.tuple_index(),
                                              " is out of range for operand shape ",
                                              tuple.ToString()));
    }
    a->tuple_index = p.tuple_index();
    rest->clear_tuple_index();
  }
  if (p.has_literal()) {
    auto literal = LiteralFromProto(p.literal());
    if (!literal.ok()) return InstructionError(p, std::string(literal.status().message()));
    if (opcode == HloOpcode::kConstant &&
        !literal->shape().Compatible(instruction->shape())) {
      return InstructionError(p, absl::StrCat("literal shape ", literal->shape().ToString(),
                                              " does not match instruction shape ",
                                              instruction->shape().ToString()));
    }
    a->literal = *std::move(literal);
  } else if (opcode == HloOpcode::kConstant) {
    return InstructionError(p, "constant has no literal");
  }
  for (const auto& s : p.slice_dimensions()) {
    a->slice_starts.push_back(s.start());
    a->slice_limits.push_back(s.limit());
    a->slice_strides.push_back(s.stride());
  }
  a->dynamic_slice_sizes = ToVector(p.dynamic_slice_sizes());
  a->gather_slice_sizes = ToVector(p.gather_slice_sizes());
  a->has_window = p.has_window();
  if (p.has_window()) a->window = p.window();
  if (p.has_convolution_dimension_numbers()) {
    a->convolution_dimension_numbers = p.convolution_dimension_numbers();
  }
  a->feature_group_count = p.feature_group_count() == 0 ? 1 : p.feature_group_count();
  a->batch_group_count = p.batch_group_count() == 0 ? 1 : p.batch_group_count();
  if (p.has_dot_dimension_numbers()) a->dot_dimension_numbers = p.dot_dimension_numbers();
  if (p.has_ragged_dot_dimension_numbers()) {
    a->ragged_dot_dimension_numbers = p.ragged_dot_dimension_numbers();
  }
  if (p.has_precision_config()) a->precision_config = p.precision_config();
  if (p.has_gather_dimension_numbers()) a->gather_dimension_numbers = p.gather_dimension_numbers();
  if (p.has_scatter_dimension_numbers()) {
    a->scatter_dimension_numbers = p.scatter_dimension_numbers();
  }
  a->indices_are_sorted = p.indices_are_sorted();
  a->unique_indices = p.unique_indices();
  if (p.has_padding_config()) a->padding_config = p.padding_config();

  if (opcode == HloOpcode::kCompare) {
    auto direction = ComparisonDirectionFromName(p.comparison_direction());
    if (!direction) {
      return InstructionError(
          p, absl::StrCat("unknown comparison_direction \"", p.comparison_direction(), "\""));
    }
    a->comparison_direction = *direction;
    a->comparison_type = ComparisonType::kDefault;
    if (!p.comparison_type().empty()) {
      auto type = ComparisonTypeFromName(p.comparison_type());
      if (!type) {
        return InstructionError(
            p, absl::StrCat("unknown comparison_type \"", p.comparison_type(), "\""));
      }
      // The type the operands imply reads back as "default", as in text.
      if (*type != DefaultComparisonType(instruction->operand(0)->shape().element_type())) {
        a->comparison_type = *type;
      }
    }
    rest->clear_comparison_direction();
    rest->clear_comparison_type();
  }
  if (opcode == HloOpcode::kFusion) {
    auto kind = FusionKindFromName(p.fusion_kind());
    if (!kind) {
      return InstructionError(p, absl::StrCat("unknown fusion_kind \"", p.fusion_kind(), "\""));
    }
    a->fusion_kind = *kind;
    rest->clear_fusion_kind();
  }

  a->custom_call_target = p.custom_call_target();
  a->custom_call_has_side_effect = p.custom_call_has_side_effect();
  a->custom_call_schedule = p.custom_call_schedule();
  for (const auto& alias : p.output_operand_aliasing()) {
    OutputOperandAlias entry;
    entry.output = ToVector(alias.output_shape_index());
    entry.operand_number = alias.operand_index();
    entry.operand_index = ToVector(alias.operand_shape_index());
    a->output_to_operand_aliasing.push_back(std::move(entry));
  }
  if (opcode == HloOpcode::kCustomCall) {
    // Proto enums are open: a number XLA never defined has no text form.
    if (!xla::CustomCallApiVersion_IsValid(p.custom_call_api_version())) {
      return InstructionError(p, absl::StrCat("unknown custom_call_api_version ",
                                              static_cast<int>(p.custom_call_api_version())));
    }
    a->custom_call_api_version = p.custom_call_api_version() == xla::API_VERSION_UNSPECIFIED
                                     ? xla::API_VERSION_ORIGINAL
                                     : p.custom_call_api_version();
    rest->clear_custom_call_api_version();
    if (p.constrain_layout()) {
      std::vector<Shape> shapes;
      for (const auto& sp : p.operand_shapes_with_layout()) {
        auto shape = ShapeFromProto(sp);
        if (!shape.ok()) {
          return InstructionError(p, absl::StrCat("operand_shapes_with_layout: ",
                                                  shape.status().message()));
        }
        shapes.push_back(*std::move(shape));
      }
      a->operand_layout_constraints = std::move(shapes);
      rest->clear_constrain_layout();
      rest->clear_operand_shapes_with_layout();
    }
  } else {
    a->constrain_layout = p.constrain_layout();
    rest->clear_constrain_layout();
  }

  a->distribution = p.distribution();
  a->rng_algorithm = p.rng_algorithm();
  a->exponent_bits = p.exponent_bits();
  a->mantissa_bits = p.mantissa_bits();
  a->fft_type = p.fft_type();
  a->fft_length = ToVector(p.fft_length());
  if (p.has_triangular_solve_options()) a->triangular_solve_options = p.triangular_solve_options();
  if (p.has_cholesky_options()) a->cholesky_options = p.cholesky_options();
  a->is_stable = p.is_stable();
  // scan's own fields, as XLA writes them: the scanned dimension in
  // `dimensions` (14), is_reverse (94), num_carries (95) and is_associative
  // (96, a TriState: unset, true or false; only a hint). Enum values were
  // checked above; on other opcodes these fields stay carried.
  if (opcode == HloOpcode::kScan) {
    if (p.num_carries() < 0) {
      return InstructionError(p, absl::StrCat("negative num_carries ", p.num_carries()));
    }
    a->is_reverse = p.is_reverse();
    a->num_carries = p.num_carries();
    a->is_associative = p.is_associative();
    rest->clear_is_reverse();
    rest->clear_num_carries();
    rest->clear_is_associative();
  }
  a->k = p.k();
  if (opcode == HloOpcode::kTopK) {
    a->largest = p.largest();
    rest->clear_largest();
  }
  a->epsilon = p.epsilon();
  a->feature_index = p.feature_index();

  if (p.channel_id() > 0) {
    a->channel_id = p.channel_id();
    rest->clear_channel_id();
  }
  if (p.has_collective_device_list()) {
    std::vector<std::vector<int64_t>> groups;
    for (const auto& g : p.collective_device_list().replica_groups()) {
      groups.push_back(ToVector(g.replica_ids()));
    }
    a->replica_groups = std::move(groups);
  } else if (p.has_iota_collective_device_list()) {
    a->iota_replica_groups = p.iota_collective_device_list();
  } else if (p.has_mesh_axes_replica_group_list()) {
    a->mesh_replica_groups = p.mesh_axes_replica_group_list();
    rest->clear_mesh_axes_replica_group_list();
  } else if (p.replica_groups_size() > 0) {
    std::vector<std::vector<int64_t>> groups;
    for (const auto& g : p.replica_groups()) groups.push_back(ToVector(g.replica_ids()));
    a->replica_groups = std::move(groups);
    rest->clear_replica_groups();
  }
  for (const auto& pair : p.source_target_pairs()) {
    a->source_target_pairs.emplace_back(pair.source(), pair.target());
  }
  a->use_global_device_ids = p.use_global_device_ids();
  a->is_host_transfer = p.is_host_transfer();
  a->infeed_config = p.infeed_config();
  a->outfeed_config = p.outfeed_config();
  if (p.has_outfeed_shape()) {
    auto shape = ShapeFromProto(p.outfeed_shape());
    if (!shape.ok()) {
      return InstructionError(p, absl::StrCat("outfeed_shape: ", shape.status().message()));
    }
    a->outfeed_shape = *std::move(shape);
  }
  if (opcode == HloOpcode::kCopyStart) {
    if (p.has_cross_program_prefetch_index() || p.is_cross_program_prefetch()) {
      a->is_cross_program_prefetch = true;
    }
    rest->clear_is_cross_program_prefetch();  // The index itself stays carried.
  }
  if (opcode == HloOpcode::kDomain) {
    if (p.has_domain_entry_sharding()) a->domain_entry_sharding = p.domain_entry_sharding();
    if (p.has_domain_exit_sharding()) a->domain_exit_sharding = p.domain_exit_sharding();
    if (p.has_domain_entry_sharding() || p.has_domain_exit_sharding()) a->domain_kind = "sharding";
    rest->clear_domain_entry_sharding();
    rest->clear_domain_exit_sharding();
  }
  a->async_execution_thread = p.async_execution_thread();
  a->has_result_accuracy = p.has_result_accuracy();
  if (p.has_result_accuracy()) a->result_accuracy = p.result_accuracy();
  return absl::OkStatus();
}

void WriteAttributes(const HloInstruction& instruction, Proto* p) {
  const HloOpcode opcode = instruction.opcode();
  const HloAttributes& a = instruction.attrs();
  const bool is_custom_call = opcode == HloOpcode::kCustomCall;

  if (opcode == HloOpcode::kIota) {
    p->add_dimensions(a.iota_dimension);
  } else {
    for (int64_t d : a.dimensions) p->add_dimensions(d);
  }
  if (opcode == HloOpcode::kParameter) p->set_parameter_number(a.parameter_number);
  if (opcode == HloOpcode::kGetTupleElement) p->set_tuple_index(a.tuple_index);
  for (size_t i = 0; i < a.slice_starts.size(); ++i) {
    auto* s = p->add_slice_dimensions();
    s->set_start(a.slice_starts[i]);
    s->set_limit(i < a.slice_limits.size() ? a.slice_limits[i] : 0);
    s->set_stride(i < a.slice_strides.size() ? a.slice_strides[i] : 1);
  }
  for (int64_t d : a.dynamic_slice_sizes) p->add_dynamic_slice_sizes(d);
  for (int64_t d : a.gather_slice_sizes) p->add_gather_slice_sizes(d);
  if (a.has_window) *p->mutable_window() = a.window;
  const bool is_conv = opcode == HloOpcode::kConvolution;
  if (is_conv || a.convolution_dimension_numbers->ByteSizeLong() > 0) {
    *p->mutable_convolution_dimension_numbers() = a.convolution_dimension_numbers;
  }
  if (is_conv || is_custom_call || a.feature_group_count != 1) {
    p->set_feature_group_count(a.feature_group_count);
  }
  if (is_conv || is_custom_call || a.batch_group_count != 1) {
    p->set_batch_group_count(a.batch_group_count);
  }
  if (opcode == HloOpcode::kDot || a.dot_dimension_numbers->ByteSizeLong() > 0) {
    *p->mutable_dot_dimension_numbers() = a.dot_dimension_numbers;
  }
  if (opcode == HloOpcode::kRaggedDot || a.ragged_dot_dimension_numbers->ByteSizeLong() > 0) {
    *p->mutable_ragged_dot_dimension_numbers() = a.ragged_dot_dimension_numbers;
  }
  if (opcode == HloOpcode::kDot || opcode == HloOpcode::kRaggedDot || is_conv || is_custom_call ||
      a.precision_config->ByteSizeLong() > 0) {
    *p->mutable_precision_config() = a.precision_config;
  }
  if (opcode == HloOpcode::kGather || a.gather_dimension_numbers->ByteSizeLong() > 0) {
    *p->mutable_gather_dimension_numbers() = a.gather_dimension_numbers;
  }
  if (opcode == HloOpcode::kScatter || a.scatter_dimension_numbers->ByteSizeLong() > 0) {
    *p->mutable_scatter_dimension_numbers() = a.scatter_dimension_numbers;
  }
  p->set_indices_are_sorted(a.indices_are_sorted);
  p->set_unique_indices(a.unique_indices);
  if (opcode == HloOpcode::kPad || a.padding_config->ByteSizeLong() > 0) {
    *p->mutable_padding_config() = a.padding_config;
  }
  if (opcode == HloOpcode::kCompare) {
    p->set_comparison_direction(std::string(ComparisonDirectionName(a.comparison_direction)));
    ComparisonType type = a.comparison_type;
    if (type == ComparisonType::kDefault && instruction.operand_count() > 0) {
      type = DefaultComparisonType(instruction.operand(0)->shape().element_type());
    }
    if (type != ComparisonType::kDefault) {
      p->set_comparison_type(std::string(ComparisonTypeName(type)));
    }
  }
  if (opcode == HloOpcode::kFusion) p->set_fusion_kind(std::string(FusionKindName(a.fusion_kind)));

  p->set_custom_call_target(a.custom_call_target);
  p->set_custom_call_has_side_effect(a.custom_call_has_side_effect);
  p->set_custom_call_schedule(a.custom_call_schedule);
  for (const OutputOperandAlias& alias : a.output_to_operand_aliasing) {
    auto* entry = p->add_output_operand_aliasing();
    for (int64_t i : alias.output) entry->add_output_shape_index(i);
    entry->set_operand_index(alias.operand_number);
    for (int64_t i : alias.operand_index) entry->add_operand_shape_index(i);
  }
  if (is_custom_call) {
    p->set_custom_call_api_version(a.custom_call_api_version);
    if (a.operand_layout_constraints) {
      p->set_constrain_layout(true);
      p->clear_operand_shapes_with_layout();
      for (const Shape& s : *a.operand_layout_constraints) {
        *p->add_operand_shapes_with_layout() = ShapeToProto(s);
      }
    }
    // XLA keeps a custom-call's legacy opaque string as its backend config.
    if (instruction.backend_config().empty() && !a.opaque.empty()) {
      p->set_backend_config(a.opaque);
    }
  } else {
    p->set_constrain_layout(a.constrain_layout);
  }

  p->set_distribution(a.distribution);
  p->set_rng_algorithm(a.rng_algorithm);
  p->set_exponent_bits(a.exponent_bits);
  p->set_mantissa_bits(a.mantissa_bits);
  p->set_fft_type(a.fft_type);
  for (int64_t d : a.fft_length) p->add_fft_length(d);
  if (opcode == HloOpcode::kTriangularSolve || a.triangular_solve_options->ByteSizeLong() > 0) {
    *p->mutable_triangular_solve_options() = a.triangular_solve_options;
  }
  if (opcode == HloOpcode::kCholesky || a.cholesky_options->ByteSizeLong() > 0) {
    *p->mutable_cholesky_options() = a.cholesky_options;
  }
  p->set_is_stable(a.is_stable);
  if (opcode == HloOpcode::kScan) {
    p->set_is_reverse(a.is_reverse);
    p->set_num_carries(a.num_carries);
    p->set_is_associative(a.is_associative);
  }
  p->set_k(a.k);
  if (opcode == HloOpcode::kTopK) p->set_largest(a.largest);
  p->set_epsilon(a.epsilon);
  p->set_feature_index(a.feature_index);

  if (a.channel_id) p->set_channel_id(*a.channel_id);
  if (a.mesh_replica_groups) {
    *p->mutable_mesh_axes_replica_group_list() = *a.mesh_replica_groups;
  } else if (a.iota_replica_groups) {
    *p->mutable_iota_collective_device_list() = *a.iota_replica_groups;
  } else if (a.replica_groups) {
    auto* list = p->mutable_collective_device_list();
    list->clear_replica_groups();
    for (const auto& group : *a.replica_groups) {
      auto* g = list->add_replica_groups();
      for (int64_t id : group) g->add_replica_ids(id);
    }
  } else if (IsGroupedCollective(opcode) && !p->has_mesh_axes_replica_group_list()) {
    p->mutable_collective_device_list();
  }
  for (const auto& [source, target] : a.source_target_pairs) {
    auto* pair = p->add_source_target_pairs();
    pair->set_source(source);
    pair->set_target(target);
  }
  p->set_use_global_device_ids(a.use_global_device_ids);
  p->set_is_host_transfer(a.is_host_transfer);
  p->set_infeed_config(a.infeed_config);
  p->set_outfeed_config(a.outfeed_config);
  if (a.outfeed_shape) *p->mutable_outfeed_shape() = ShapeToProto(*a.outfeed_shape);
  // The prefetch index itself travels in the carried fields (as the text
  // parser keeps it); an explicit flag adds or removes it.
  if (opcode == HloOpcode::kCopyStart && a.is_cross_program_prefetch.has_value()) {
    if (*a.is_cross_program_prefetch) {
      if (!p->has_cross_program_prefetch_index()) p->set_cross_program_prefetch_index(0);
    } else {
      p->clear_cross_program_prefetch_index();
    }
  }
  if ((opcode == HloOpcode::kDomain && a.domain_kind == "sharding") ||
      a.domain_entry_sharding->ByteSizeLong() > 0 || a.domain_exit_sharding->ByteSizeLong() > 0) {
    *p->mutable_domain_entry_sharding() = a.domain_entry_sharding;
    *p->mutable_domain_exit_sharding() = a.domain_exit_sharding;
  }
  p->set_async_execution_thread(a.async_execution_thread);
  if (a.has_result_accuracy) *p->mutable_result_accuracy() = a.result_accuracy;
}

}  // namespace

// The comparison type XLA assumes for operands of `type`.
ComparisonType DefaultComparisonType(PrimitiveType type) {
  if (IsFloatingPoint(type) || IsComplex(type)) return ComparisonType::kFloat;
  if (IsSignedInteger(type)) return ComparisonType::kSigned;
  return ComparisonType::kUnsigned;
}

// How many computations an opcode calls, where the IR relies on it: -1 for
// "at least one", 0 when not checked.
int ExpectedCalledCount(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kWhile:
    case HloOpcode::kSelectAndScatter:
      return 2;
    case HloOpcode::kFusion:
    case HloOpcode::kCall:
    case HloOpcode::kMap:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kScan:
    case HloOpcode::kScatter:
    case HloOpcode::kSort:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAsyncStart:
      return 1;
    case HloOpcode::kConditional:
      return -1;
    default:
      return 0;
  }
}

void CopyFieldsExcept(const Message& from, const absl::flat_hash_set<int>& skip, Message* to) {
  const Reflection* rf = from.GetReflection();
  const Reflection* rt = to->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  rf->ListFields(from, &fields);
  for (const FieldDescriptor* f : fields) {
    if (skip.contains(f->number())) continue;
    if (f->is_repeated()) {
      const int n = rf->FieldSize(from, f);
      for (int i = 0; i < n; ++i) {
        switch (f->cpp_type()) {
          case FieldDescriptor::CPPTYPE_INT32:
            rt->AddInt32(to, f, rf->GetRepeatedInt32(from, f, i)); break;
          case FieldDescriptor::CPPTYPE_INT64:
            rt->AddInt64(to, f, rf->GetRepeatedInt64(from, f, i)); break;
          case FieldDescriptor::CPPTYPE_UINT32:
            rt->AddUInt32(to, f, rf->GetRepeatedUInt32(from, f, i)); break;
          case FieldDescriptor::CPPTYPE_UINT64:
            rt->AddUInt64(to, f, rf->GetRepeatedUInt64(from, f, i)); break;
          case FieldDescriptor::CPPTYPE_DOUBLE:
            rt->AddDouble(to, f, rf->GetRepeatedDouble(from, f, i)); break;
          case FieldDescriptor::CPPTYPE_FLOAT:
            rt->AddFloat(to, f, rf->GetRepeatedFloat(from, f, i)); break;
          case FieldDescriptor::CPPTYPE_BOOL:
            rt->AddBool(to, f, rf->GetRepeatedBool(from, f, i)); break;
          case FieldDescriptor::CPPTYPE_ENUM:
            rt->AddEnumValue(to, f, rf->GetRepeatedEnumValue(from, f, i)); break;
          case FieldDescriptor::CPPTYPE_STRING:
            rt->AddString(to, f, rf->GetRepeatedString(from, f, i)); break;
          case FieldDescriptor::CPPTYPE_MESSAGE:
            rt->AddMessage(to, f)->CopyFrom(rf->GetRepeatedMessage(from, f, i)); break;
        }
      }
      continue;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: rt->SetInt32(to, f, rf->GetInt32(from, f)); break;
      case FieldDescriptor::CPPTYPE_INT64: rt->SetInt64(to, f, rf->GetInt64(from, f)); break;
      case FieldDescriptor::CPPTYPE_UINT32: rt->SetUInt32(to, f, rf->GetUInt32(from, f)); break;
      case FieldDescriptor::CPPTYPE_UINT64: rt->SetUInt64(to, f, rf->GetUInt64(from, f)); break;
      case FieldDescriptor::CPPTYPE_DOUBLE: rt->SetDouble(to, f, rf->GetDouble(from, f)); break;
      case FieldDescriptor::CPPTYPE_FLOAT: rt->SetFloat(to, f, rf->GetFloat(from, f)); break;
      case FieldDescriptor::CPPTYPE_BOOL: rt->SetBool(to, f, rf->GetBool(from, f)); break;
      case FieldDescriptor::CPPTYPE_ENUM:
        rt->SetEnumValue(to, f, rf->GetEnumValue(from, f)); break;
      case FieldDescriptor::CPPTYPE_STRING: rt->SetString(to, f, rf->GetString(from, f)); break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        rt->MutableMessage(to, f)->CopyFrom(rf->GetMessage(from, f)); break;
    }
  }
  rt->MutableUnknownFields(to)->MergeFrom(rf->GetUnknownFields(from));
}

std::string UnknownEnumValue(const Message& message) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    // A map of scalars (frontend_attributes: string -> string) holds no
    // enum; reading it as repeated entries would make protobuf build that
    // representation of the map first (it crashed under ThreadSanitizer).
    if (field->is_map()) {
      const FieldDescriptor* value = field->message_type()->map_value();
      if (value->cpp_type() != FieldDescriptor::CPPTYPE_ENUM &&
          value->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
        continue;
      }
    }
    const bool repeated = field->is_repeated();
    const int count = repeated ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < count; ++i) {
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
        const int value = repeated ? reflection->GetRepeatedEnumValue(message, field, i)
                                   : reflection->GetEnumValue(message, field);
        if (field->enum_type()->FindValueByNumber(value) == nullptr) {
          return absl::StrCat(field->name(), " = ", value);
        }
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const Message& inner = repeated ? reflection->GetRepeatedMessage(message, field, i)
                                        : reflection->GetMessage(message, field);
        std::string found = UnknownEnumValue(inner);
        if (!found.empty()) return absl::StrCat(field->name(), ".", found);
      }
    }
  }
  return "";
}

absl::StatusOr<std::unique_ptr<HloInstruction>> InstructionFromProto(
    const Proto& p, absl::Span<HloInstruction* const> operands,
    absl::Span<HloComputation* const> called_computations) {
  const std::optional<HloOpcode> opcode = HloOpcodeFromName(p.opcode());
  if (!opcode) return InstructionError(p, absl::StrCat("unknown opcode \"", p.opcode(), "\""));
  const int arity = HloOpcodeArity(*opcode);
  if (arity >= 0 && arity != static_cast<int>(operands.size())) {
    return InstructionError(p, absl::StrCat(p.opcode(), " takes ", arity, " operands, has ",
                                            operands.size()));
  }
  const int expected_called = ExpectedCalledCount(*opcode);
  if ((expected_called > 0 && static_cast<int>(called_computations.size()) != expected_called) ||
      (expected_called < 0 && called_computations.empty())) {
    return InstructionError(p, absl::StrCat(p.opcode(), " calls ", called_computations.size(),
                                            " computations"));
  }
  if (!p.has_shape()) return InstructionError(p, "no shape");
  auto shape = ShapeFromProto(p.shape());
  if (!shape.ok()) return InstructionError(p, std::string(shape.status().message()));
  if (std::string unknown = UnknownEnumValue(p); !unknown.empty()) {
    return InstructionError(p, absl::StrCat("enum value XLA does not define: ", unknown));
  }

  std::unique_ptr<HloInstruction> instruction =
      HloInstruction::Create(*opcode, *shape, operands);
  instruction->set_name(p.name());
  if (*opcode == HloOpcode::kWhile) {
    // XLA's order is (body, condition); the IR's is (condition, body).
    instruction->AppendCalledComputation(called_computations[1]);
    instruction->AppendCalledComputation(called_computations[0]);
  } else {
    for (HloComputation* c : called_computations) instruction->AppendCalledComputation(c);
  }
  *instruction->mutable_metadata() = p.metadata();
  *instruction->mutable_frontend_attributes() = p.frontend_attributes();
  instruction->set_backend_config(p.backend_config());
  if (p.has_sharding()) instruction->set_sharding(p.sharding());
  instruction->set_is_composite(p.is_composite());

  Proto rest;
  CopyFieldsExcept(p, AlwaysConsumedFields(), &rest);
  HLOC_RETURN_IF_ERROR(ReadAttributes(p, instruction.get(), &rest));
  if (rest.has_statistics_viz() && rest.statistics_viz().ByteSizeLong() == 0) {
    rest.clear_statistics_viz();  // Written back empty anyway, as XLA does.
  }
  if (!SameSerialization(ShapeToProto(*shape), p.shape())) *rest.mutable_shape() = p.shape();

  // Messages XLA wrote that a plain re-export would leave out come back as
  // empty markers in the carried fields.
  Proto reexport;
  InstructionFieldsToProto(*instruction, /*use_carried=*/false, /*write_literal=*/false,
                           &reexport);
  const Reflection* reflection = p.GetReflection();
  const auto* descriptor = Proto::descriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* f = descriptor->field(i);
    if (f->is_repeated() || f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (reflection->HasField(p, f) && !reflection->HasField(reexport, f) &&
        !reflection->HasField(rest, f)) {
      reflection->MutableMessage(&rest, f);
    }
  }
  if (rest.ByteSizeLong() > 0) *instruction->mutable_carried_proto_fields() = std::move(rest);
  return instruction;
}

void InstructionFieldsToProto(const HloInstruction& instruction, bool use_carried,
                              bool write_literal, Proto* p) {
  const Proto* carried = use_carried ? instruction.carried_proto_fields() : nullptr;
  if (carried) p->CopyFrom(*carried);
  p->set_name(instruction.name());
  p->set_opcode(std::string(HloOpcodeName(instruction.opcode())));
  bool shape_from_carried = false;
  if (carried && carried->has_shape()) {
    auto carried_shape = ShapeFromProto(carried->shape());
    shape_from_carried = carried_shape.ok() && *carried_shape == instruction.shape();
  }
  if (!shape_from_carried) *p->mutable_shape() = ShapeToProto(instruction.shape());
  *p->mutable_metadata() = instruction.metadata();
  *p->mutable_frontend_attributes() = instruction.frontend_attributes();
  p->mutable_statistics_viz();
  p->set_backend_config(instruction.backend_config());
  if (instruction.has_sharding()) *p->mutable_sharding() = instruction.sharding();
  p->set_is_composite(instruction.is_composite());
  if (instruction.attrs().literal) {
    if (write_literal) {
      *p->mutable_literal() = LiteralToProto(*instruction.attrs().literal);
    } else {
      p->mutable_literal();
    }
  }
  WriteAttributes(instruction, p);
}

std::vector<HloComputation*> CalledComputationsInProtoOrder(const HloInstruction& instruction) {
  std::vector<HloComputation*> called = instruction.called_computations();
  if (instruction.opcode() == HloOpcode::kWhile && called.size() == 2) {
    std::swap(called[0], called[1]);
  }
  return called;
}

}  // namespace proto_io_internal
}  // namespace hloc
