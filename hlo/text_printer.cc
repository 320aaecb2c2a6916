// Canonical HLO text. A module prints as its header (name and the config
// attributes that are set), JAX's stack-frame tables when present, then its
// computations callees-first, each instruction in post order as
//   [ROOT ]%name = shape opcode(shape %operand, ...), attribute=value, ...
// with the opcode's own attributes first, then called computations, then the
// attributes any instruction may carry. Everything is deterministic (frontend
// attributes sorted by key) and constants are printed in full, so
// parse(print(m)) rebuilds m and printing again gives the same bytes.
#include "hlo/text_printer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/text_printer_internal.h"

namespace hloc {
namespace {

using namespace text_internal;  // NOLINT: the value printers of this printer.
using O = HloOpcode;

void Key(absl::string_view name, std::string* out) {
  out->append(", ");
  out->append(name.data(), name.size());
  out->push_back('=');
}

void AppendCallee(const HloComputation* computation, std::string* out) {
  AppendPercentName(
      computation != nullptr ? absl::string_view(computation->name()) : absl::string_view("null"),
      out);
}

template <typename Container>
void IntListAttr(absl::string_view name, const Container& values, std::string* out) {
  Key(name, out);
  AppendIntList(values, out);
}

template <typename Container>
void NonEmptyIntListAttr(absl::string_view name, const Container& values, std::string* out) {
  if (values.size() > 0) IntListAttr(name, values, out);
}

void BoolAttrIfTrue(absl::string_view name, bool value, std::string* out) {
  if (value) {
    Key(name, out);
    out->append("true");
  }
}

std::string Lower(absl::string_view s) {
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return lower;
}

void AppendPrecisionConfig(const xla::PrecisionConfig& config, std::string* out) {
  bool non_default = false;
  for (int p : config.operand_precision()) non_default |= p != xla::PrecisionConfig::DEFAULT;
  if (non_default) {
    Key("operand_precision", out);
    out->push_back('{');
    for (int i = 0; i < config.operand_precision_size(); ++i) {
      if (i) out->push_back(',');
      out->append(Lower(xla::PrecisionConfig::Precision_Name(config.operand_precision(i))));
    }
    out->push_back('}');
  }
  if (config.algorithm() != xla::PrecisionConfig::ALG_UNSET) {
    Key("algorithm", out);
    std::string name = Lower(xla::PrecisionConfig::Algorithm_Name(config.algorithm()));
    out->append(name.rfind("alg_", 0) == 0 ? name.substr(4) : name);
  }
}

void AppendDotDimensions(const xla::DotDimensionNumbers& d, std::string* out) {
  NonEmptyIntListAttr("lhs_batch_dims", d.lhs_batch_dimensions(), out);
  NonEmptyIntListAttr("lhs_contracting_dims", d.lhs_contracting_dimensions(), out);
  NonEmptyIntListAttr("rhs_batch_dims", d.rhs_batch_dimensions(), out);
  NonEmptyIntListAttr("rhs_contracting_dims", d.rhs_contracting_dimensions(), out);
}

void AppendCollectiveAttributes(const HloInstruction& instruction, std::string* out) {
  const HloAttributes& a = instruction.attrs();
  if (a.channel_id) absl::StrAppend(out, ", channel_id=", *a.channel_id);
  if (a.replica_groups || a.iota_replica_groups || a.mesh_replica_groups) {
    Key("replica_groups", out);
    AppendReplicaGroups(a, out);
  }
  BoolAttrIfTrue("constrain_layout", a.constrain_layout, out);
}

// The attributes that belong to the instruction's opcode.
void AppendOpcodeAttributes(const HloInstruction& instruction, std::string* out) {
  const HloAttributes& a = instruction.attrs();
  const xla::HloInstructionProto* carried = instruction.carried_proto_fields();
  switch (instruction.opcode()) {
    case O::kGetTupleElement:
      absl::StrAppend(out, ", index=", a.tuple_index);
      break;
    case O::kIota:
      absl::StrAppend(out, ", iota_dimension=", a.iota_dimension);
      break;
    case O::kBroadcast:
    case O::kTranspose:
    case O::kReverse:
    case O::kConcatenate:
    case O::kGetDimensionSize:
    case O::kSetDimensionSize:
    case O::kReduce:
      IntListAttr("dimensions", a.dimensions, out);
      break;
    case O::kSort:
      IntListAttr("dimensions", a.dimensions, out);
      BoolAttrIfTrue("is_stable", a.is_stable, out);
      break;
    case O::kScan:
      // XLA's spelling: scan(inputs..., inits...), dimensions={d},
      // num_carries=k[, is_reverse=true][, is_associative=true|false],
      // to_apply=step.
      IntListAttr("dimensions", a.dimensions, out);
      absl::StrAppend(out, ", num_carries=", a.num_carries);
      BoolAttrIfTrue("is_reverse", a.is_reverse, out);
      if (a.is_associative != xla::TRI_STATE_UNSPECIFIED) {
        absl::StrAppend(out, ", is_associative=",
                        a.is_associative == xla::TRI_STATE_TRUE ? "true" : "false");
      }
      break;
    case O::kMap:
      NonEmptyIntListAttr("dimensions", a.dimensions, out);
      break;
    case O::kReshape:
      if (!a.dimensions.empty()) absl::StrAppend(out, ", inferred_dimension=", a.dimensions[0]);
      break;
    case O::kAllGather:
    case O::kAllGatherStart:
    case O::kReduceScatter:
      AppendCollectiveAttributes(instruction, out);
      IntListAttr("dimensions", a.dimensions, out);
      BoolAttrIfTrue("use_global_device_ids", a.use_global_device_ids, out);
      break;
    case O::kAllToAll:
    case O::kRaggedAllToAll:
      AppendCollectiveAttributes(instruction, out);
      NonEmptyIntListAttr("dimensions", a.dimensions, out);
      break;
    case O::kAllReduce:
    case O::kAllReduceStart:
      AppendCollectiveAttributes(instruction, out);
      BoolAttrIfTrue("use_global_device_ids", a.use_global_device_ids, out);
      break;
    case O::kCollectiveBroadcast:
      AppendCollectiveAttributes(instruction, out);
      // The text syntax requires replica_groups here; a proto leaves an empty list out.
      if (!a.replica_groups && !a.iota_replica_groups && !a.mesh_replica_groups) {
        absl::StrAppend(out, ", replica_groups={}");
      }
      break;
    case O::kCollectivePermute:
    case O::kCollectivePermuteStart:
      if (a.channel_id) absl::StrAppend(out, ", channel_id=", *a.channel_id);
      Key("source_target_pairs", out);
      out->push_back('{');
      for (size_t i = 0; i < a.source_target_pairs.size(); ++i) {
        absl::StrAppend(out, i ? "," : "", "{", a.source_target_pairs[i].first, ",",
                        a.source_target_pairs[i].second, "}");
      }
      out->push_back('}');
      break;
    case O::kSend:
    case O::kSendDone:
    case O::kRecv:
    case O::kRecvDone:
      if (a.channel_id) absl::StrAppend(out, ", channel_id=", *a.channel_id);
      BoolAttrIfTrue("is_host_transfer", a.is_host_transfer, out);
      break;
    case O::kSlice:
      Key("slice", out);
      out->push_back('{');
      for (size_t i = 0; i < a.slice_starts.size(); ++i) {
        absl::StrAppend(out, i ? ", " : "", "[", a.slice_starts[i], ":", a.slice_limits[i]);
        if (i < a.slice_strides.size() && a.slice_strides[i] != 1) {
          absl::StrAppend(out, ":", a.slice_strides[i]);
        }
        out->push_back(']');
      }
      out->push_back('}');
      break;
    case O::kDynamicSlice:
      IntListAttr("dynamic_slice_sizes", a.dynamic_slice_sizes, out);
      break;
    case O::kReduceWindow:
    case O::kSelectAndScatter:
      if (a.has_window && a.window->dimensions_size() > 0) {
        Key("window", out);
        AppendWindow(a.window, out);
      }
      break;
    case O::kConvolution:
    case O::kCustomCall:
      if (instruction.opcode() == O::kCustomCall) {
        Key("custom_call_target", out);
        AppendQuoted(a.custom_call_target, out);
      }
      if (a.has_window && a.window->dimensions_size() > 0) {
        Key("window", out);
        AppendWindow(a.window, out);
      }
      if (instruction.opcode() == O::kConvolution ||
          a.convolution_dimension_numbers->ByteSizeLong() > 0) {
        Key("dim_labels", out);
        AppendDimLabels(a.convolution_dimension_numbers, out);
      }
      if (a.feature_group_count != 1)
        absl::StrAppend(out, ", feature_group_count=", a.feature_group_count);
      if (a.batch_group_count != 1)
        absl::StrAppend(out, ", batch_group_count=", a.batch_group_count);
      if (instruction.opcode() == O::kCustomCall) {
        if (a.operand_layout_constraints) {
          Key("operand_layout_constraints", out);
          out->push_back('{');
          for (size_t i = 0; i < a.operand_layout_constraints->size(); ++i) {
            if (i) out->append(", ");
            (*a.operand_layout_constraints)[i].AppendTo(out);
          }
          out->push_back('}');
        }
        BoolAttrIfTrue("custom_call_has_side_effect", a.custom_call_has_side_effect, out);
        if (!a.output_to_operand_aliasing.empty()) {
          Key("output_to_operand_aliasing", out);
          AppendOutputOperandAliasing(a.output_to_operand_aliasing, out);
        }
        if (carried != nullptr && carried->padding_type() != xla::PADDING_INVALID) {
          absl::StrAppend(out, ", padding_type=", xla::PaddingType_Name(carried->padding_type()));
        }
        if (a.literal) {
          // The shape always carries a layout so that "{" of the value is not
          // read as one.
          Key("literal", out);
          Shape shape = a.literal->shape();
          if (shape.IsArray() && shape.rank() > 0 && !shape.has_layout()) {
            shape.set_layout(Layout::RowMajor(shape.rank()));
          }
          shape.AppendTo(out);
          out->push_back(' ');
          a.literal->AppendValueTo(out);
        }
        if (a.custom_call_schedule != xla::SCHEDULE_NONE) {
          absl::StrAppend(out, ", schedule=", xla::CustomCallSchedule_Name(a.custom_call_schedule));
        }
        if (a.custom_call_api_version != xla::API_VERSION_ORIGINAL) {
          absl::StrAppend(
              out, ", api_version=", xla::CustomCallApiVersion_Name(a.custom_call_api_version));
        }
        if (!a.opaque.empty()) {
          Key("opaque", out);
          AppendQuoted(a.opaque, out);
        }
      }
      AppendPrecisionConfig(a.precision_config, out);
      break;
    case O::kDot:
      AppendDotDimensions(a.dot_dimension_numbers, out);
      AppendPrecisionConfig(a.precision_config, out);
      if (carried != nullptr && carried->has_sparsity_config()) {
        Key("sparsity", out);
        AppendSparsity(carried->sparsity_config(), out);
      }
      break;
    case O::kRaggedDot: {
      const xla::RaggedDotDimensionNumbers& r = a.ragged_dot_dimension_numbers;
      AppendDotDimensions(r.dot_dimension_numbers(), out);
      NonEmptyIntListAttr("lhs_ragged_dims", r.lhs_ragged_dimensions(), out);
      NonEmptyIntListAttr("rhs_group_dims", r.rhs_group_dimensions(), out);
      AppendPrecisionConfig(a.precision_config, out);
      break;
    }
    case O::kGather: {
      const auto& g = *a.gather_dimension_numbers;
      IntListAttr("offset_dims", g.offset_dims(), out);
      IntListAttr("collapsed_slice_dims", g.collapsed_slice_dims(), out);
      IntListAttr("start_index_map", g.start_index_map(), out);
      NonEmptyIntListAttr("operand_batching_dims", g.operand_batching_dims(), out);
      NonEmptyIntListAttr("start_indices_batching_dims", g.start_indices_batching_dims(), out);
      absl::StrAppend(out, ", index_vector_dim=", g.index_vector_dim());
      IntListAttr("slice_sizes", a.gather_slice_sizes, out);
      BoolAttrIfTrue("indices_are_sorted", a.indices_are_sorted, out);
      break;
    }
    case O::kScatter: {
      const auto& s = *a.scatter_dimension_numbers;
      IntListAttr("update_window_dims", s.update_window_dims(), out);
      IntListAttr("inserted_window_dims", s.inserted_window_dims(), out);
      IntListAttr("scatter_dims_to_operand_dims", s.scatter_dims_to_operand_dims(), out);
      NonEmptyIntListAttr("input_batching_dims", s.input_batching_dims(), out);
      NonEmptyIntListAttr("scatter_indices_batching_dims", s.scatter_indices_batching_dims(), out);
      absl::StrAppend(out, ", index_vector_dim=", s.index_vector_dim());
      BoolAttrIfTrue("indices_are_sorted", a.indices_are_sorted, out);
      BoolAttrIfTrue("unique_indices", a.unique_indices, out);
      break;
    }
    case O::kPad:
      Key("padding", out);
      AppendPaddingConfig(a.padding_config, out);
      break;
    case O::kCompare:
      absl::StrAppend(out, ", direction=", ComparisonDirectionName(a.comparison_direction));
      if (a.comparison_type != ComparisonType::kDefault) {
        absl::StrAppend(out, ", type=", ComparisonTypeName(a.comparison_type));
      }
      break;
    case O::kFusion:
      absl::StrAppend(out, ", kind=", FusionKindName(a.fusion_kind));
      if (!a.output_to_operand_aliasing.empty()) {
        Key("output_to_operand_aliasing", out);
        AppendOutputOperandAliasing(a.output_to_operand_aliasing, out);
      }
      break;
    case O::kRng:
      absl::StrAppend(out, ", distribution=", Lower(xla::RandomDistribution_Name(a.distribution)));
      break;
    case O::kRngBitGenerator:
      absl::StrAppend(out, ", algorithm=", Lower(xla::RandomAlgorithm_Name(a.rng_algorithm)));
      break;
    case O::kRngGetAndUpdateState:
      absl::StrAppend(out, ", delta=", carried != nullptr ? carried->delta() : 0);
      break;
    case O::kReducePrecision:
      absl::StrAppend(out, ", exponent_bits=", a.exponent_bits,
                      ", mantissa_bits=", a.mantissa_bits);
      break;
    case O::kFft:
      absl::StrAppend(out, ", fft_type=", xla::FftType_Name(a.fft_type));
      IntListAttr("fft_length", a.fft_length, out);
      break;
    case O::kTriangularSolve: {
      const auto& t = *a.triangular_solve_options;
      BoolAttrIfTrue("left_side", t.left_side(), out);
      BoolAttrIfTrue("lower", t.lower(), out);
      BoolAttrIfTrue("unit_diagonal", t.unit_diagonal(), out);
      if (t.transpose_a() != xla::TriangularSolveOptions::TRANSPOSE_INVALID) {
        absl::StrAppend(
            out, ", transpose_a=", xla::TriangularSolveOptions::Transpose_Name(t.transpose_a()));
      }
      break;
    }
    case O::kCholesky:
      BoolAttrIfTrue("lower", a.cholesky_options->lower(), out);
      break;
    case O::kTopK:
      absl::StrAppend(out, ", k=", a.k, ", largest=", a.largest ? "true" : "false");
      break;
    case O::kBatchNormGrad:
    case O::kBatchNormInference:
    case O::kBatchNormTraining:
      out->append(", epsilon=");
      AppendShortestFloat(a.epsilon, out);
      absl::StrAppend(out, ", feature_index=", a.feature_index);
      break;
    case O::kInfeed:
      if (!a.infeed_config.empty()) {
        Key("infeed_config", out);
        AppendQuoted(a.infeed_config, out);
      }
      break;
    case O::kOutfeed:
      if (a.outfeed_shape) {
        Key("outfeed_shape", out);
        a.outfeed_shape->AppendTo(out);
      }
      if (!a.outfeed_config.empty()) {
        Key("outfeed_config", out);
        AppendQuoted(a.outfeed_config, out);
      }
      break;
    case O::kDomain:
      Key("domain", out);
      out->append("{kind=");
      AppendQuoted(a.domain_kind, out);
      out->append(", entry=");
      AppendSharding(a.domain_entry_sharding, out);
      out->append(", exit=");
      AppendSharding(a.domain_exit_sharding, out);
      out->push_back('}');
      break;
    case O::kAsyncStart:
    case O::kAsyncUpdate:
    case O::kAsyncDone:
      if (!a.async_execution_thread.empty()) {
        Key("async_execution_thread", out);
        AppendQuoted(a.async_execution_thread, out);
      }
      break;
    case O::kCopyStart:
      if (carried != nullptr && carried->optional_cross_program_prefetch_index_case() ==
                                    xla::HloInstructionProto::kCrossProgramPrefetchIndex) {
        absl::StrAppend(out,
                        ", cross_program_prefetch_index=", carried->cross_program_prefetch_index());
      }
      break;
    default:
      break;
  }
  if (a.has_result_accuracy) {
    Key("result_accuracy", out);
    AppendResultAccuracy(a.result_accuracy, out);
  }
}

void AppendCalledComputations(const HloInstruction& instruction, std::string* out) {
  const std::vector<HloComputation*>& called = instruction.called_computations();
  if (called.empty()) return;
  auto single = [&](absl::string_view name, size_t i) {
    if (i >= called.size()) return;
    Key(name, out);
    AppendCallee(called[i], out);
  };
  auto list = [&](absl::string_view name) {
    Key(name, out);
    out->push_back('{');
    for (size_t i = 0; i < called.size(); ++i) {
      if (i) out->append(", ");
      AppendCallee(called[i], out);
    }
    out->push_back('}');
  };
  switch (instruction.opcode()) {
    case O::kWhile:
      single("condition", 0);
      single("body", 1);
      break;
    case O::kConditional:
      if (called.size() == 2 && instruction.operand_count() > 0 &&
          instruction.operand(0)->shape().element_type() == xla::PRED) {
        single("true_computation", 0);
        single("false_computation", 1);
      } else {
        list("branch_computations");
      }
      break;
    case O::kSelectAndScatter:
      single("select", 0);
      single("scatter", 1);
      break;
    case O::kFusion:
    case O::kAsyncStart:
    case O::kAsyncUpdate:
    case O::kAsyncDone:
      single("calls", 0);
      break;
    case O::kCustomCall:
      list("called_computations");
      break;
    default:
      single("to_apply", 0);
      break;
  }
}

// Attributes any instruction may carry.
void AppendCommonAttributes(const HloInstruction& instruction, const PrintOptions& options,
                            std::string* out) {
  BoolAttrIfTrue("is_composite", instruction.is_composite(), out);
  if (instruction.has_sharding()) {
    Key("sharding", out);
    AppendSharding(instruction.sharding(), out);
  }
  const xla::HloInstructionProto* carried = instruction.carried_proto_fields();
  if (carried != nullptr && carried->has_parameter_replication()) {
    Key("parameter_replication", out);
    out->push_back('{');
    const auto& leaves = carried->parameter_replication().replicated_at_leaf_buffers();
    for (int i = 0; i < leaves.size(); ++i) {
      absl::StrAppend(out, i ? "," : "", leaves[i] ? "true" : "false");
    }
    out->push_back('}');
  }
  if (!instruction.control_predecessors().empty()) {
    Key("control-predecessors", out);
    out->push_back('{');
    for (size_t i = 0; i < instruction.control_predecessors().size(); ++i) {
      if (i) out->append(", ");
      AppendPercentName(instruction.control_predecessors()[i]->name(), out);
    }
    out->push_back('}');
  }
  if (!instruction.frontend_attributes().map().empty()) {
    Key("frontend_attributes", out);
    AppendFrontendAttributes(instruction.frontend_attributes(), out);
  }
  if (carried != nullptr && carried->has_original_value()) {
    Key("origin", out);
    AppendOriginalValue(carried->original_value(), instruction.shape(), out);
  }
  if (carried != nullptr && carried->has_statistics_viz()) {
    Key("statistics", out);
    AppendStatistics(carried->statistics_viz(), out);
  }
  if (options.print_metadata && instruction.metadata().ByteSizeLong() > 0) {
    Key("metadata", out);
    AppendMetadata(instruction.metadata(), out);
  }
  if (!instruction.backend_config().empty()) {
    Key("backend_config", out);
    AppendStringOrBraced(instruction.backend_config(), out);
  }
}

void AppendInstruction(const HloInstruction& instruction, const PrintOptions& options,
                       std::string* out) {
  AppendPercentName(instruction.name(), out);
  out->append(" = ");
  instruction.shape().AppendTo(out, options.print_layouts);
  out->push_back(' ');
  absl::string_view opcode = HloOpcodeName(instruction.opcode());
  out->append(opcode.data(), opcode.size());
  out->push_back('(');
  switch (instruction.opcode()) {
    case O::kParameter:
      absl::StrAppend(out, instruction.parameter_number());
      break;
    case O::kConstant:
      if (instruction.attrs().literal) instruction.literal().AppendValueTo(out);
      break;
    default:
      for (int64_t i = 0; i < instruction.operand_count(); ++i) {
        if (i) out->append(", ");
        const HloInstruction* operand = instruction.operand(i);
        if (options.print_operand_shapes) {
          operand->shape().AppendTo(out, options.print_layouts);
          out->push_back(' ');
        }
        AppendPercentName(operand->name(), out);
      }
  }
  out->push_back(')');
  AppendOpcodeAttributes(instruction, out);
  AppendCalledComputations(instruction, out);
  AppendCommonAttributes(instruction, options, out);
}

void AppendComputation(const HloComputation& computation, bool is_entry,
                       const PrintOptions& options, std::string* out) {
  if (is_entry) out->append("ENTRY ");
  AppendPercentName(computation.name(), out);
  bool complete = true;
  for (const HloInstruction* p : computation.parameters()) complete &= p != nullptr;
  if (complete && computation.root() != nullptr) {
    out->append(" (");
    for (int64_t i = 0; i < computation.num_parameters(); ++i) {
      if (i) out->append(", ");
      const HloInstruction* p = computation.parameter(i);
      AppendBareName(p->name(), out);
      out->append(": ");
      p->shape().AppendTo(out, options.print_layouts);
    }
    out->append(") -> ");
    computation.root()->shape().AppendTo(out, options.print_layouts);
  }
  out->append(" {\n");
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    out->append(instruction == computation.root() ? "  ROOT " : "  ");
    AppendInstruction(*instruction, options, out);
    out->push_back('\n');
  }
  out->push_back('}');
  if (!computation.execution_thread().empty()) {
    out->append(", execution_thread=");
    AppendQuoted(computation.execution_thread(), out);
  }
  out->push_back('\n');
}

void AppendModuleHeader(const HloModule& module, std::string* out) {
  const HloModuleConfig& config = module.config();
  out->append("HloModule ");
  AppendBareName(module.name(), out);
  if (config.is_scheduled) out->append(", is_scheduled=true");
  if (config.entry_computation_layout) {
    Key("entry_computation_layout", out);
    AppendProgramShapeLayout(*config.entry_computation_layout, out);
  }
  if (config.input_output_alias.entries_size() > 0) {
    Key("input_output_alias", out);
    out->append("{ ");
    for (int i = 0; i < config.input_output_alias.entries_size(); ++i) {
      const auto& e = config.input_output_alias.entries(i);
      if (i) out->append(", ");
      AppendIntList(e.output_shape_index(), out);
      absl::StrAppend(out, ": (", e.parameter_number(), ", ");
      AppendIntList(e.parameter_shape_index(), out);
      out->append(e.kind() == xla::MUST_ALIAS ? ", must-alias)" : ", may-alias)");
    }
    out->append(" }");
  }
  if (config.buffer_donor.entries_size() > 0) {
    Key("buffer_donor", out);
    out->append("{ ");
    for (int i = 0; i < config.buffer_donor.entries_size(); ++i) {
      const auto& e = config.buffer_donor.entries(i);
      if (i) out->append(", ");
      absl::StrAppend(out, "(", e.parameter_number(), ", ");
      AppendIntList(e.parameter_shape_index(), out);
      out->push_back(')');
    }
    out->append(" }");
  }
  if (config.alias_passthrough_params) out->append(", alias_passthrough_params=true");
  if (config.replica_count != 1) absl::StrAppend(out, ", replica_count=", config.replica_count);
  if (config.num_partitions != 1) absl::StrAppend(out, ", num_partitions=", config.num_partitions);
  auto bools = [&](absl::string_view name, const std::vector<bool>& values) {
    if (values.empty()) return;
    Key(name, out);
    out->push_back('{');
    for (size_t i = 0; i < values.size(); ++i) {
      absl::StrAppend(out, i ? "," : "", values[i] ? "true" : "false");
    }
    out->push_back('}');
  };
  bools("allow_spmd_sharding_propagation_to_parameters",
        config.allow_spmd_sharding_propagation_to_parameters);
  bools("allow_spmd_sharding_propagation_to_output",
        config.allow_spmd_sharding_propagation_to_output);
  if (!config.frontend_attributes.map().empty()) {
    Key("frontend_attributes", out);
    AppendFrontendAttributes(config.frontend_attributes, out);
  }
  out->push_back('\n');
}

}  // namespace

std::string PrintModule(const HloModule& module, const PrintOptions& options) {
  std::string out;
  AppendModuleHeader(module, &out);
  const xla::HloModuleProto& carried = module.config().carried;
  if (carried.has_stack_frame_index()) {
    AppendStackFrameIndex(carried.stack_frame_index(), &out);
  }
  // Callees first; the entry goes last unless something calls it.
  std::vector<HloComputation*> order = module.MakeComputationPostOrder();
  if (module.entry() != nullptr && module.CallersOf(module.entry()).empty()) {
    auto it = std::find(order.begin(), order.end(), module.entry());
    if (it != order.end()) std::rotate(it, it + 1, order.end());
  }
  for (const HloComputation* computation : order) {
    out.push_back('\n');
    AppendComputation(*computation, computation == module.entry(), options, &out);
  }
  return out;
}

std::string PrintComputation(const HloComputation& computation, const PrintOptions& options) {
  std::string out;
  const bool is_entry =
      computation.parent() != nullptr && computation.parent()->entry() == &computation;
  AppendComputation(computation, is_entry, options, &out);
  return out;
}

std::string PrintInstruction(const HloInstruction& instruction, const PrintOptions& options) {
  std::string out;
  AppendInstruction(instruction, options, &out);
  return out;
}

}  // namespace hloc
