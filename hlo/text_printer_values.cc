// Printers for the structured values of HLO text; see text_printer_internal.h.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "hlo/literal.h"
#include "hlo/mesh_replica_groups.h"
#include "hlo/text_printer_internal.h"

namespace hloc {
namespace text_internal {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

void AppendSanitized(absl::string_view name, std::string* out) {
  if (name.empty()) {
    out->push_back('_');
    return;
  }
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    // "->" would end the name early when read back.
    if (!IsNameChar(c) || (c == '-' && i + 1 < name.size() && name[i + 1] == '>')) c = '_';
    out->push_back(c);
  }
}

bool IsBareName(absl::string_view name) {
  if (name.empty()) return false;
  const char c = name[0];
  if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!IsNameChar(name[i])) return false;
    if (name[i] == '-' && i + 1 < name.size() && name[i + 1] == '>') return false;
  }
  return true;
}

// True when `value` is one {...} block as the parser's brace scanner reads it.
bool IsBalancedBraced(absl::string_view value) {
  if (value.size() < 2 || value.front() != '{' || value.back() != '}') return false;
  int64_t depth = 0;
  for (size_t p = 0; p < value.size(); ++p) {
    const char c = value[p];
    if (c == '"') {
      ++p;
      while (p < value.size() && value[p] != '"') {
        if (value[p] == '\\') ++p;
        ++p;
      }
      if (p >= value.size()) return false;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return p + 1 == value.size();
    }
  }
  return false;
}

absl::string_view ShardingTypeName(xla::OpSharding::Type type) {
  switch (type) {
    case xla::OpSharding::REPLICATED:
      return "replicated";
    case xla::OpSharding::MANUAL:
      return "manual";
    case xla::OpSharding::MAXIMAL:
      return "maximal";
    case xla::OpSharding::UNREDUCED:
      return "unreduced";
    default:
      return "unknown";
  }
}

template <typename Container>
bool IsIdentity(const Container& perm) {
  int64_t i = 0;
  for (auto p : perm) {
    if (p != i++) return false;
  }
  return true;
}

void AppendDxD(const xla::Window& window, int64_t (*get)(const xla::WindowDimension&),
               std::string* out) {
  for (int i = 0; i < window.dimensions_size(); ++i) {
    if (i) out->push_back('x');
    absl::StrAppend(out, get(window.dimensions(i)));
  }
}

}  // namespace

void AppendBareName(absl::string_view name, std::string* out) {
  std::string sanitized;
  AppendSanitized(name, &sanitized);
  if (!IsBareName(sanitized)) out->push_back('%');
  out->append(sanitized);
}

void AppendPercentName(absl::string_view name, std::string* out) {
  out->push_back('%');
  AppendSanitized(name, out);
}

void AppendQuoted(absl::string_view value, std::string* out) {
  out->push_back('"');
  bool plain = true;
  for (char c : value) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      plain = false;
      break;
    }
  }
  if (plain) {
    out->append(value.data(), value.size());
  } else {
    absl::StrAppend(out, absl::Utf8SafeCEscape(value));
  }
  out->push_back('"');
}

void AppendStringOrBraced(absl::string_view value, std::string* out) {
  if (IsBalancedBraced(value)) {
    out->append(value.data(), value.size());
  } else {
    AppendQuoted(value, out);
  }
}

void AppendProgramShapeLayout(const ProgramShape& program_shape, std::string* out) {
  out->append("{(");
  for (size_t i = 0; i < program_shape.parameters.size(); ++i) {
    if (i) out->append(", ");
    program_shape.parameters[i].AppendTo(out);
  }
  out->append(")->");
  program_shape.result.AppendTo(out);
  out->push_back('}');
}

void AppendSharding(const xla::OpSharding& sharding, std::string* out) {
  out->push_back('{');
  if (sharding.type() == xla::OpSharding::TUPLE) {
    for (int i = 0; i < sharding.tuple_shardings_size(); ++i) {
      if (i) out->append(", ");
      AppendSharding(sharding.tuple_shardings(i), out);
    }
    out->push_back('}');
    return;
  }
  if (sharding.type() == xla::OpSharding::OTHER) {
    out->append("devices=[");
    for (int i = 0; i < sharding.tile_assignment_dimensions_size(); ++i) {
      if (i) out->push_back(',');
      absl::StrAppend(out, sharding.tile_assignment_dimensions(i));
    }
    out->push_back(']');
    if (sharding.iota_reshape_dims_size() > 0) {
      out->append("<=[");
      for (int i = 0; i < sharding.iota_reshape_dims_size(); ++i) {
        if (i) out->push_back(',');
        absl::StrAppend(out, sharding.iota_reshape_dims(i));
      }
      out->push_back(']');
      if (!IsIdentity(sharding.iota_transpose_perm())) {
        out->append("T(");
        for (int i = 0; i < sharding.iota_transpose_perm_size(); ++i) {
          if (i) out->push_back(',');
          absl::StrAppend(out, sharding.iota_transpose_perm(i));
        }
        out->push_back(')');
      }
    } else {
      for (int i = 0; i < sharding.tile_assignment_devices_size(); ++i) {
        if (i) out->push_back(',');
        absl::StrAppend(out, sharding.tile_assignment_devices(i));
      }
    }
    if (sharding.replicate_on_last_tile_dim()) out->append(" last_tile_dim_replicate");
    if (sharding.last_tile_dims_size() > 0) {
      out->append(" last_tile_dims={");
      for (int i = 0; i < sharding.last_tile_dims_size(); ++i) {
        if (i) out->append(", ");
        absl::StrAppend(out, ShardingTypeName(sharding.last_tile_dims(i)));
      }
      out->push_back('}');
    }
  } else {
    absl::StrAppend(out, ShardingTypeName(sharding.type()));
    if (sharding.type() == xla::OpSharding::MAXIMAL &&
        sharding.tile_assignment_devices_size() > 0) {
      absl::StrAppend(out, " device=", sharding.tile_assignment_devices(0));
    }
  }
  if (sharding.is_shard_group()) {
    absl::StrAppend(
        out, sharding.shard_group_type() == xla::OpSharding::AS ? " shard_as " : " shard_like ",
        sharding.shard_group_id());
  }
  if (sharding.metadata_size() == 1) {
    out->append(" metadata=");
    AppendMetadata(sharding.metadata(0), out);
  } else if (sharding.metadata_size() > 1) {
    out->append(" metadata={");
    for (int i = 0; i < sharding.metadata_size(); ++i) {
      if (i) out->append(", ");
      AppendMetadata(sharding.metadata(i), out);
    }
    out->push_back('}');
  }
  out->push_back('}');
}

void AppendMetadata(const xla::OpMetadata& m, std::string* out) {
  out->push_back('{');
  bool first = true;
  auto key = [&](absl::string_view name) {
    if (!first) out->push_back(' ');
    first = false;
    out->append(name.data(), name.size());
    out->push_back('=');
  };
  auto string_field = [&](absl::string_view name, const std::string& value) {
    if (value.empty()) return;
    key(name);
    AppendQuoted(value, out);
  };
  auto int_field = [&](absl::string_view name, int64_t value) {
    if (value == 0) return;
    key(name);
    absl::StrAppend(out, value);
  };
  string_field("op_type", m.op_type());
  string_field("op_name", m.op_name());
  string_field("source_file", m.source_file());
  int_field("source_line", m.source_line());
  int_field("source_end_line", m.source_end_line());
  int_field("source_column", m.source_column());
  int_field("source_end_column", m.source_end_column());
  if (m.profile_type_size() > 0) {
    key("profile_type");
    AppendIntList(m.profile_type(), out);
  }
  int_field("size_of_generated_code_in_bytes", m.size_of_generated_code_in_bytes());
  int_field("size_of_memory_working_set_in_bytes", m.size_of_memory_working_set_in_bytes());
  string_field("deduplicated_name", m.deduplicated_name());
  string_field("scheduling_name", m.scheduling_name());
  int_field("stack_frame_id", m.stack_frame_id());
  out->push_back('}');
}

void AppendFrontendAttributes(const xla::FrontendAttributes& attributes, std::string* out) {
  std::vector<std::pair<const std::string*, const std::string*>> entries;
  entries.reserve(attributes.map().size());
  for (const auto& entry : attributes.map()) entries.push_back({&entry.first, &entry.second});
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return *a.first < *b.first; });
  out->push_back('{');
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i) out->append(", ");
    if (IsBareName(*entries[i].first)) {
      out->append(*entries[i].first);
    } else {
      AppendQuoted(*entries[i].first, out);
    }
    out->push_back('=');
    AppendStringOrBraced(*entries[i].second, out);
  }
  out->push_back('}');
}

void AppendWindow(const xla::Window& window, std::string* out) {
  out->append("{size=");
  AppendDxD(
      window, [](const xla::WindowDimension& d) { return d.size(); }, out);
  auto any = [&](auto predicate) {
    for (const auto& d : window.dimensions()) {
      if (predicate(d)) return true;
    }
    return false;
  };
  if (any([](const xla::WindowDimension& d) { return d.stride() != 1; })) {
    out->append(" stride=");
    AppendDxD(
        window, [](const xla::WindowDimension& d) { return d.stride(); }, out);
  }
  if (any([](const xla::WindowDimension& d) {
        return d.padding_low() != 0 || d.padding_high() != 0;
      })) {
    out->append(" pad=");
    for (int i = 0; i < window.dimensions_size(); ++i) {
      if (i) out->push_back('x');
      absl::StrAppend(out, window.dimensions(i).padding_low(), "_",
                      window.dimensions(i).padding_high());
    }
  }
  if (any([](const xla::WindowDimension& d) { return d.base_dilation() != 1; })) {
    out->append(" lhs_dilate=");
    AppendDxD(
        window, [](const xla::WindowDimension& d) { return d.base_dilation(); }, out);
  }
  if (any([](const xla::WindowDimension& d) { return d.window_dilation() != 1; })) {
    out->append(" rhs_dilate=");
    AppendDxD(
        window, [](const xla::WindowDimension& d) { return d.window_dilation(); }, out);
  }
  if (any([](const xla::WindowDimension& d) { return d.window_reversal(); })) {
    out->append(" rhs_reversal=");
    AppendDxD(
        window, [](const xla::WindowDimension& d) { return int64_t{d.window_reversal() ? 1 : 0}; },
        out);
  }
  out->push_back('}');
}

void AppendDimLabels(const xla::ConvolutionDimensionNumbers& d, std::string* out) {
  // One character per dimension: the two named ones, spatial dimension i as
  // the digit i, '?' for positions the numbers leave out.
  auto part = [&](int64_t first, char first_label, int64_t second, char second_label,
                  const google::protobuf::RepeatedField<int64_t>& spatial) {
    int64_t size = std::max(first, second) + 1;
    for (int64_t s : spatial) size = std::max(size, s + 1);
    if (size > 4096) size = 4096;  // Corrupt numbers from a proto; keep the text bounded.
    std::string labels(static_cast<size_t>(std::max<int64_t>(size, 0)), '?');
    auto put = [&](int64_t index, char label) {
      if (index >= 0 && index < size) labels[index] = label;
    };
    for (int i = 0; i < spatial.size(); ++i) put(spatial[i], static_cast<char>('0' + i));
    put(first, first_label);
    put(second, second_label);
    out->append(labels);
  };
  part(d.input_batch_dimension(), 'b', d.input_feature_dimension(), 'f',
       d.input_spatial_dimensions());
  out->push_back('_');
  part(d.kernel_input_feature_dimension(), 'i', d.kernel_output_feature_dimension(), 'o',
       d.kernel_spatial_dimensions());
  out->append("->");
  part(d.output_batch_dimension(), 'b', d.output_feature_dimension(), 'f',
       d.output_spatial_dimensions());
}

void AppendPaddingConfig(const xla::PaddingConfig& padding, std::string* out) {
  bool interior = false;
  for (const auto& d : padding.dimensions()) interior |= d.interior_padding() != 0;
  for (int i = 0; i < padding.dimensions_size(); ++i) {
    const auto& d = padding.dimensions(i);
    if (i) out->push_back('x');
    absl::StrAppend(out, d.edge_padding_low(), "_", d.edge_padding_high());
    if (interior) absl::StrAppend(out, "_", d.interior_padding());
  }
}

void AppendReplicaGroups(const HloAttributes& attrs, std::string* out) {
  if (attrs.mesh_replica_groups) {
    AppendMeshAxesGroups(*attrs.mesh_replica_groups, out);
    return;
  }
  if (attrs.iota_replica_groups) {
    const auto& iota = *attrs.iota_replica_groups;
    absl::StrAppend(out, "[", iota.num_replica_groups(), ",", iota.num_devices_per_group(), "]<=[");
    for (int i = 0; i < iota.iota_reshape_dims_size(); ++i) {
      if (i) out->push_back(',');
      absl::StrAppend(out, iota.iota_reshape_dims(i));
    }
    out->push_back(']');
    if (!IsIdentity(iota.iota_transpose_perm())) {
      out->append("T(");
      for (int i = 0; i < iota.iota_transpose_perm_size(); ++i) {
        if (i) out->push_back(',');
        absl::StrAppend(out, iota.iota_transpose_perm(i));
      }
      out->push_back(')');
    }
    return;
  }
  out->push_back('{');
  if (attrs.replica_groups) {
    for (size_t i = 0; i < attrs.replica_groups->size(); ++i) {
      if (i) out->push_back(',');
      AppendIntList((*attrs.replica_groups)[i], out);
    }
  }
  out->push_back('}');
}

void AppendOutputOperandAliasing(const std::vector<OutputOperandAlias>& aliasing,
                                 std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < aliasing.size(); ++i) {
    if (i) out->append(", ");
    AppendIntList(aliasing[i].output, out);
    absl::StrAppend(out, ": (", aliasing[i].operand_number, ", ");
    AppendIntList(aliasing[i].operand_index, out);
    out->push_back(')');
  }
  out->push_back('}');
}

void AppendResultAccuracy(const xla::ResultAccuracy& accuracy, std::string* out) {
  if (accuracy.has_tolerance()) {
    out->append("{tolerance={atol=");
    AppendShortestDouble(accuracy.tolerance().atol(), out);
    out->append(",rtol=");
    AppendShortestDouble(accuracy.tolerance().rtol(), out);
    absl::StrAppend(out, ",ulps=", accuracy.tolerance().ulps(), "}}");
    return;
  }
  absl::StrAppend(out, "{mode=", xla::ResultAccuracy::Mode_Name(accuracy.mode()), "}");
}

void AppendStatistics(const xla::StatisticsViz& statistics, std::string* out) {
  absl::StrAppend(out, "{visualizing_index=", statistics.stat_index_to_visualize());
  for (const auto& stat : statistics.statistics()) {
    out->push_back(',');
    AppendBareName(stat.stat_name(), out);
    out->push_back('=');
    AppendShortestDouble(stat.stat_val(), out);
  }
  out->push_back('}');
}

void AppendOriginalValue(const xla::OriginalValueProto& value, const Shape& shape,
                         std::string* out) {
  ShapeIndex index;
  // Leaves of `shape` in order; each prints its original array or {}.
  auto leaf = [&](const ShapeIndex& at) {
    out->push_back('{');
    for (const auto& element : value.elements()) {
      if (!std::equal(element.shape_index().begin(), element.shape_index().end(), at.begin(),
                      at.end())) {
        continue;
      }
      AppendQuoted(element.original_array().instruction_name(), out);
      if (element.original_array().shape_index_size() > 0) {
        out->push_back(' ');
        AppendIntList(element.original_array().shape_index(), out);
      }
      break;
    }
    out->push_back('}');
  };
  struct Walker {
    std::string* out;
    const decltype(leaf)& on_leaf;
    void Walk(const Shape& s, ShapeIndex* at) {
      if (!s.IsTuple()) {
        on_leaf(*at);
        return;
      }
      out->push_back('(');
      for (int64_t i = 0; i < s.tuple_shapes_size(); ++i) {
        if (i) out->append(", ");
        at->push_back(i);
        Walk(s.tuple_shapes(i), at);
        at->pop_back();
      }
      out->push_back(')');
    }
  };
  out->push_back('{');
  Walker{out, leaf}.Walk(shape, &index);
  out->push_back('}');
}

void AppendSparsity(const xla::SparsityConfig& sparsity, std::string* out) {
  bool first = true;
  auto side = [&](char name, const xla::SparsityConfig::TensorSparsityConfig& config) {
    if (!first) out->push_back('_');
    first = false;
    absl::StrAppend(out, std::string(1, name), ".", config.dimension(), "@", config.num_non_zero(),
                    ":", config.block_size());
  };
  if (sparsity.has_lhs()) side('L', sparsity.lhs());
  if (sparsity.has_rhs()) side('R', sparsity.rhs());
}

void AppendStackFrameIndex(const xla::StackFrameIndexProto& index, std::string* out) {
  auto strings = [&](absl::string_view title, const auto& values) {
    absl::StrAppend(out, "\n", title, "\n");
    int i = 0;
    for (const std::string& v : values) {
      absl::StrAppend(out, ++i, " ");
      AppendQuoted(v, out);
      out->push_back('\n');
    }
  };
  strings("FileNames", index.file_names());
  strings("FunctionNames", index.function_names());
  out->append("\nFileLocations\n");
  int i = 0;
  for (const auto& l : index.file_locations()) {
    absl::StrAppend(out, ++i, " {file_name_id=", l.file_name_id(),
                    " function_name_id=", l.function_name_id(), " line=", l.line(),
                    " end_line=", l.end_line(), " column=", l.column(),
                    " end_column=", l.end_column(), "}\n");
  }
  out->append("\nStackFrames\n");
  i = 0;
  for (const auto& f : index.stack_frames()) {
    // The text counts parents from 1 where the proto counts from 0.
    absl::StrAppend(out, ++i, " {file_location_id=", f.file_location_id(),
                    " parent_frame_id=", f.parent_frame_id() + 1, "}\n");
  }
}

}  // namespace text_internal

std::string PrintedName(absl::string_view name) {
  std::string printed;
  text_internal::AppendSanitized(name, &printed);
  return printed;
}

}  // namespace hloc
