// Structured attribute values of HLO text: windows, convolution dim labels,
// padding and slice specs, replica groups, shardings, metadata, frontend
// attributes, aliasing, result accuracy, statistics, original values,
// sparsity descriptors and program shapes.
#include <algorithm>
#include <cmath>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hlo/mesh_replica_groups.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser_internal.h"

namespace hloc {
namespace text_internal {
namespace {

bool SplitInts(absl::string_view text, char separator, std::vector<int64_t>* out) {
  out->clear();
  for (absl::string_view piece : absl::StrSplit(text, separator)) {
    int64_t v;
    if (!absl::SimpleAtoi(piece, &v)) return false;
    out->push_back(v);
  }
  return true;
}

bool IsPermutation(const std::vector<int64_t>& perm) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

// Product of `dims`, or -1 when negative or overflowing.
int64_t CheckedProduct(const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(product, d, &product)) return -1;
  }
  return product;
}

}  // namespace

absl::Status Parser::ParseWindow(xla::Window* window) {
  const size_t start = tok().offset;
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a window"));
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, reversal;
  std::vector<std::pair<int64_t, int64_t>> pad;
  bool seen_pad = false;
  while (!At(TokenKind::kRbrace)) {
    const Token key = tok();
    if (key.kind != TokenKind::kName || key.percent) return Expected("a window field or '}'");
    lexer_.Next();
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after a window field"));
    absl::string_view word;
    const size_t value_offset = tok().offset;
    HLOC_RETURN_IF_ERROR(ParseWordToken("a window value such as 3x3", &word));
    std::vector<int64_t>* target = nullptr;
    if (key.text == "size")
      target = &size;
    else if (key.text == "stride")
      target = &stride;
    else if (key.text == "lhs_dilate")
      target = &lhs_dilate;
    else if (key.text == "rhs_dilate")
      target = &rhs_dilate;
    else if (key.text == "rhs_reversal")
      target = &reversal;
    if (key.text == "pad") {
      if (seen_pad) return ErrorAt(key.offset, "window field 'pad' given twice");
      seen_pad = true;
      for (absl::string_view piece : absl::StrSplit(word, 'x')) {
        std::vector<int64_t> low_high;
        if (!SplitInts(piece, '_', &low_high) || low_high.size() != 2) {
          return ErrorAt(value_offset,
                         absl::StrCat("expected window padding like 0_1x1_1, got '", word, "'"));
        }
        pad.push_back({low_high[0], low_high[1]});
      }
      continue;
    }
    if (target == nullptr) {
      return ErrorAt(key.offset, absl::StrCat("unknown window field '", key.text, "'"));
    }
    if (!target->empty()) {
      return ErrorAt(key.offset, absl::StrCat("window field '", key.text, "' given twice"));
    }
    if (!SplitInts(word, 'x', target)) {
      return ErrorAt(value_offset,
                     absl::StrCat("expected numbers separated by 'x', got '", word, "'"));
    }
  }
  lexer_.Next();
  const size_t rank = size.size();
  auto check = [&](size_t n, absl::string_view field) -> absl::Status {
    if (n != 0 && n != rank) {
      return ErrorAt(start, absl::StrCat("window field '", field, "' has ", n,
                                         " dimensions, 'size' has ", rank));
    }
    return absl::OkStatus();
  };
  HLOC_RETURN_IF_ERROR(check(stride.size(), "stride"));
  HLOC_RETURN_IF_ERROR(check(pad.size(), "pad"));
  HLOC_RETURN_IF_ERROR(check(lhs_dilate.size(), "lhs_dilate"));
  HLOC_RETURN_IF_ERROR(check(rhs_dilate.size(), "rhs_dilate"));
  HLOC_RETURN_IF_ERROR(check(reversal.size(), "rhs_reversal"));
  window->Clear();
  for (size_t i = 0; i < rank; ++i) {
    xla::WindowDimension* d = window->add_dimensions();
    d->set_size(size[i]);
    d->set_stride(stride.empty() ? 1 : stride[i]);
    if (!pad.empty()) {
      d->set_padding_low(pad[i].first);
      d->set_padding_high(pad[i].second);
    }
    d->set_base_dilation(lhs_dilate.empty() ? 1 : lhs_dilate[i]);
    d->set_window_dilation(rhs_dilate.empty() ? 1 : rhs_dilate[i]);
    d->set_window_reversal(!reversal.empty() && reversal[i] != 0);
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseConvolutionDimensionNumbers(xla::ConvolutionDimensionNumbers* dnums) {
  const size_t offset = tok().offset;
  absl::string_view word;
  HLOC_RETURN_IF_ERROR(ParseWordToken("dim labels such as b01f_01io->b01f", &word));
  const size_t underscore = word.find('_');
  const size_t arrow = word.find("->");
  if (underscore == absl::string_view::npos || arrow == absl::string_view::npos ||
      arrow < underscore) {
    return ErrorAt(offset,
                   absl::StrCat("expected dim_labels like b01f_01io->b01f, got '", word, "'"));
  }
  const absl::string_view parts[3] = {word.substr(0, underscore),
                                      word.substr(underscore + 1, arrow - underscore - 1),
                                      word.substr(arrow + 2)};
  const char letters[3][2] = {{'b', 'f'}, {'i', 'o'}, {'b', 'f'}};
  const char* part_names[3] = {"input", "kernel", "output"};
  int64_t spatial_count[3];
  std::vector<int64_t> spatial[3];
  int64_t first[3] = {-1, -1, -1}, second[3] = {-1, -1, -1};
  for (int p = 0; p < 3; ++p) {
    const absl::string_view s = parts[p];
    int64_t count = 0;
    for (char c : s) {
      if (c != letters[p][0] && c != letters[p][1] && c != '?') ++count;
    }
    spatial_count[p] = count;
    spatial[p].assign(count, -1);
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '?') continue;
      int64_t* slot = nullptr;
      if (c == letters[p][0]) {
        slot = &first[p];
      } else if (c == letters[p][1]) {
        slot = &second[p];
      } else if (c >= '0' && c - '0' < count) {
        slot = &spatial[p][c - '0'];
      }
      if (slot == nullptr || *slot != -1) {
        return ErrorAt(
            offset, absl::StrCat("invalid or repeated '", std::string(1, c), "' in ", part_names[p],
                                 " part '", s, "' of dim_labels '", word, "'"));
      }
      *slot = static_cast<int64_t>(i);
    }
    if (first[p] < 0 || second[p] < 0) {
      return ErrorAt(offset,
                     absl::StrCat(part_names[p], " part '", s, "' of dim_labels needs both '",
                                  std::string(1, letters[p][0]), "' and '",
                                  std::string(1, letters[p][1]), "'"));
    }
  }
  if (spatial_count[0] != spatial_count[1] || spatial_count[0] != spatial_count[2]) {
    return ErrorAt(offset, absl::StrCat("dim_labels '", word, "' give ", spatial_count[0], ", ",
                                        spatial_count[1], " and ", spatial_count[2],
                                        " spatial dimensions; they must agree"));
  }
  dnums->Clear();
  dnums->set_input_batch_dimension(first[0]);
  dnums->set_input_feature_dimension(second[0]);
  dnums->set_kernel_input_feature_dimension(first[1]);
  dnums->set_kernel_output_feature_dimension(second[1]);
  dnums->set_output_batch_dimension(first[2]);
  dnums->set_output_feature_dimension(second[2]);
  for (int64_t d : spatial[0]) dnums->add_input_spatial_dimensions(d);
  for (int64_t d : spatial[1]) dnums->add_kernel_spatial_dimensions(d);
  for (int64_t d : spatial[2]) dnums->add_output_spatial_dimensions(d);
  return absl::OkStatus();
}

absl::Status Parser::ParsePaddingConfig(xla::PaddingConfig* padding) {
  padding->Clear();
  // Every dimension starts with a number; a rank-0 pad prints an empty config.
  if (!At(TokenKind::kInt)) return absl::OkStatus();
  const size_t offset = tok().offset;
  lexer_.RescanWord();
  const absl::string_view word = tok().text;
  lexer_.Next();
  std::vector<int64_t> numbers;
  for (absl::string_view piece : absl::StrSplit(word, 'x')) {
    if (!SplitInts(piece, '_', &numbers) || (numbers.size() != 2 && numbers.size() != 3)) {
      return ErrorAt(offset, absl::StrCat("expected padding like low_high or low_high_interior "
                                          "per dimension, got '",
                                          word, "'"));
    }
    auto* d = padding->add_dimensions();
    d->set_edge_padding_low(numbers[0]);
    d->set_edge_padding_high(numbers[1]);
    d->set_interior_padding(numbers.size() == 3 ? numbers[2] : 0);
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseSliceRanges(HloAttributes* attrs) {
  attrs->slice_starts.clear();
  attrs->slice_limits.clear();
  attrs->slice_strides.clear();
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start slice ranges"));
  if (Eat(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLsquare, "'[' to start a slice range"));
    int64_t start, limit, stride = 1;
    HLOC_RETURN_IF_ERROR(ParseInt64(&start));
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' in a slice range"));
    HLOC_RETURN_IF_ERROR(ParseInt64(&limit));
    if (Eat(TokenKind::kColon)) HLOC_RETURN_IF_ERROR(ParseInt64(&stride));
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRsquare, "']' to end a slice range"));
    attrs->slice_starts.push_back(start);
    attrs->slice_limits.push_back(limit);
    attrs->slice_strides.push_back(stride);
  } while (Eat(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "',' or '}' in slice ranges");
}

// [dims]<=[reshape]T(perm) after the leading '[' has been seen: the iota
// device lists of replica groups and shardings.
static absl::Status ParseIotaList(Parser* parser, std::vector<int64_t>* dims,
                                  std::vector<int64_t>* reshape, std::vector<int64_t>* perm,
                                  bool* is_iota, std::vector<int64_t>* devices) {
  HLOC_RETURN_IF_ERROR(parser->Expect(TokenKind::kLsquare, "'[' to start the tile dimensions"));
  do {
    int64_t d;
    HLOC_RETURN_IF_ERROR(parser->ParseInt64(&d));
    dims->push_back(d);
  } while (parser->Eat(TokenKind::kComma));
  HLOC_RETURN_IF_ERROR(parser->Expect(TokenKind::kRsquare, "']' after the tile dimensions"));
  *is_iota = parser->Eat(TokenKind::kLeq);
  if (!*is_iota) {
    if (devices == nullptr) return parser->Expected("'<=' in an iota device list");
    do {
      int64_t d;
      HLOC_RETURN_IF_ERROR(parser->ParseInt64(&d));
      devices->push_back(d);
    } while (parser->Eat(TokenKind::kComma));
    return absl::OkStatus();
  }
  HLOC_RETURN_IF_ERROR(parser->Expect(TokenKind::kLsquare, "'[' after '<='"));
  do {
    int64_t d;
    HLOC_RETURN_IF_ERROR(parser->ParseInt64(&d));
    reshape->push_back(d);
  } while (parser->Eat(TokenKind::kComma));
  HLOC_RETURN_IF_ERROR(parser->Expect(TokenKind::kRsquare, "']' after the iota dimensions"));
  const size_t perm_offset = parser->tok().offset;
  if (parser->AtName("T") && parser->lexer_.NextCharIs('(')) {
    parser->lexer_.Next();
    HLOC_RETURN_IF_ERROR(parser->Expect(TokenKind::kLparen, "'(' after T"));
    do {
      int64_t d;
      HLOC_RETURN_IF_ERROR(parser->ParseInt64(&d));
      perm->push_back(d);
    } while (parser->Eat(TokenKind::kComma));
    HLOC_RETURN_IF_ERROR(parser->Expect(TokenKind::kRparen, "')' after the transpose"));
  } else {
    for (size_t i = 0; i < reshape->size(); ++i) perm->push_back(static_cast<int64_t>(i));
  }
  if (perm->size() != reshape->size() || !IsPermutation(*perm)) {
    return parser->ErrorAt(perm_offset,
                           "iota transpose must be a permutation of the iota dimensions");
  }
  if (CheckedProduct(*dims) < 0 || CheckedProduct(*dims) != CheckedProduct(*reshape)) {
    return parser->ErrorAt(perm_offset,
                           "iota dimensions must hold as many devices as the tile dimensions");
  }
  return absl::OkStatus();
}

// mesh['x'=2,'y'=2](, device_ids=(3,2,1,0) | ([2,2]T(1,0)))? {'y','x':(1)2}
// after "mesh"
// (hlo/mesh_replica_groups.h). Axis names are quoted; an axis reference may
// also be a mesh axis index ('0'), as XLA's parser allows.
absl::Status Parser::ParseMeshReplicaGroups(xla::MeshAxesReplicaGroupListProto* list) {
  const size_t start = tok().offset;
  lexer_.Next();  // mesh
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLsquare, "'[' after mesh"));
  xla::MeshProto* mesh = list->mutable_mesh();
  do {
    const size_t name_offset = tok().offset;
    std::string name;
    HLOC_RETURN_IF_ERROR(ParseString(&name));
    for (const auto& axis : mesh->axes()) {
      if (axis.name() == name) {
        return ErrorAt(name_offset,
                       absl::StrCat("mesh axis '", absl::CEscape(name), "' is named twice"));
      }
    }
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after a mesh axis name"));
    const size_t size_offset = tok().offset;
    int64_t size;
    HLOC_RETURN_IF_ERROR(ParseInt64(&size));
    if (size < 1) return ErrorAt(size_offset, "a mesh axis size must be at least 1");
    auto* axis = mesh->add_axes();
    axis->set_name(std::move(name));
    axis->set_size(size);
  } while (Eat(TokenKind::kComma));
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRsquare, "',' or ']' after a mesh axis"));
  if (At(TokenKind::kComma)) {
    const Token next = lexer_.PeekNext();
    if (next.kind == TokenKind::kName && !next.percent && next.text == "device_ids") {
      lexer_.Next();  // ,
      lexer_.Next();  // device_ids
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after device_ids"));
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' to start the mesh's device ids"));
      if (Eat(TokenKind::kLsquare)) {
        // device_ids=([2,4]T(1,0)): iota reshaped and transposed.
        auto* iota = mesh->mutable_iota_transform();
        do {
          int64_t d;
          HLOC_RETURN_IF_ERROR(ParseInt64(&d));
          iota->add_reshape_dims(d);
        } while (Eat(TokenKind::kComma));
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRsquare, "']' after the iota device order"));
        if (AtName("T") && lexer_.NextCharIs('(')) {
          lexer_.Next();
          HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' after T"));
          do {
            int32_t p;
            HLOC_RETURN_IF_ERROR(ParseInt32(&p));
            iota->add_transpose_perm(p);
          } while (Eat(TokenKind::kComma));
          HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after the transpose"));
        }
      } else {
        do {
          int64_t id;
          HLOC_RETURN_IF_ERROR(ParseInt64(&id));
          mesh->add_device_ids(id);
        } while (Eat(TokenKind::kComma));
      }
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "',' or ')' in the mesh's device ids"));
    }
  }
  absl::Status valid = ValidateMeshAxesGroups(*list);  // The mesh alone, so far.
  if (!valid.ok()) return ErrorAt(start, valid.message());
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start the mesh axes of the groups"));
  if (!Eat(TokenKind::kRbrace)) {
    do {
      const size_t axis_offset = tok().offset;
      std::string name;
      HLOC_RETURN_IF_ERROR(ParseString(&name));
      int64_t index = -1;
      for (int i = 0; i < mesh->axes_size(); ++i) {
        if (mesh->axes(i).name() == name) index = i;
      }
      if (index < 0 && (!absl::SimpleAtoi(name, &index) || index < 0 ||
                        index >= mesh->axes_size())) {
        std::vector<std::string> names;
        for (const auto& axis : mesh->axes()) {
          names.push_back(absl::StrCat("'", absl::CEscape(axis.name()), "'"));
        }
        return ErrorAt(axis_offset, absl::StrCat("'", absl::CEscape(name),
                                                 "' is not an axis of the mesh (",
                                                 absl::StrJoin(names, ", "), ")"));
      }
      auto* ref = list->add_axes();
      ref->set_mesh_axis_index(index);
      if (Eat(TokenKind::kColon)) {
        int64_t pre, size;
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' to start a sub-axis pre-size"));
        HLOC_RETURN_IF_ERROR(ParseInt64(&pre));
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after a sub-axis pre-size"));
        HLOC_RETURN_IF_ERROR(ParseInt64(&size));
        ref->mutable_sub_axis_info()->set_pre_size(pre);
        ref->mutable_sub_axis_info()->set_size(size);
      }
      // Checked here so the error points at the axis that breaks a rule.
      valid = ValidateMeshAxesGroups(*list);
      if (!valid.ok()) return ErrorAt(axis_offset, valid.message());
    } while (Eat(TokenKind::kComma));
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "',' or '}' after a mesh axis"));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseReplicaGroups(HloAttributes* attrs) {
  if (AtName("mesh")) {
    xla::MeshAxesReplicaGroupListProto list;
    HLOC_RETURN_IF_ERROR(ParseMeshReplicaGroups(&list));
    attrs->mesh_replica_groups = std::move(list);
    return absl::OkStatus();
  }
  if (At(TokenKind::kLbrace)) {
    std::vector<std::vector<int64_t>> groups;
    HLOC_RETURN_IF_ERROR(ParseInt64ListList(&groups));
    attrs->replica_groups = std::move(groups);
    return absl::OkStatus();
  }
  if (!At(TokenKind::kLsquare)) {
    return Expected("replica groups such as {{0,1}}, [2,2]<=[4] or mesh['x'=2,'y'=2] {'y'}");
  }
  const size_t offset = tok().offset;
  std::vector<int64_t> dims, reshape, perm;
  bool is_iota;
  HLOC_RETURN_IF_ERROR(ParseIotaList(this, &dims, &reshape, &perm, &is_iota, nullptr));
  if (dims.size() != 2) {
    return ErrorAt(offset, "iota replica groups need two dimensions: [groups,group_size]");
  }
  xla::IotaReplicaGroupListProto iota;
  iota.set_num_replica_groups(dims[0]);
  iota.set_num_devices_per_group(dims[1]);
  for (int64_t d : reshape) iota.add_iota_reshape_dims(d);
  for (int64_t p : perm) iota.add_iota_transpose_perm(static_cast<int32_t>(p));
  attrs->iota_replica_groups = std::move(iota);
  return absl::OkStatus();
}

absl::Status Parser::ParseSharding(xla::OpSharding* sharding) {
  DepthGuard guard(this);
  HLOC_RETURN_IF_ERROR(CheckDepth());
  const size_t start = tok().offset;
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a sharding"));
  sharding->Clear();
  if (At(TokenKind::kLbrace) || At(TokenKind::kRbrace)) {
    // A tuple sharding: one single sharding per leaf.
    sharding->set_type(xla::OpSharding::TUPLE);
    if (!Eat(TokenKind::kRbrace)) {
      do {
        if (!At(TokenKind::kLbrace)) return Expected("'{' to start a tuple element's sharding");
        if (lexer_.PeekNext().kind == TokenKind::kLbrace) {
          return ErrorAt(tok().offset, "tuple shardings do not nest");
        }
        HLOC_RETURN_IF_ERROR(ParseSharding(sharding->add_tuple_shardings()));
      } while (Eat(TokenKind::kComma));
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "',' or '}' in a tuple sharding"));
    }
    return absl::OkStatus();
  }
  bool replicated = false, maximal = false, manual = false, unknown = false, unreduced = false;
  bool last_tile_dim_replicate = false;
  std::vector<int64_t> dims, reshape, perm, devices;
  bool has_devices = false, is_iota = false;
  while (!At(TokenKind::kRbrace)) {
    const Token key = tok();
    if (key.kind != TokenKind::kName || key.percent) return Expected("a sharding field or '}'");
    lexer_.Next();
    const absl::string_view k = key.text;
    if (k == "replicated") {
      replicated = true;
    } else if (k == "maximal") {
      maximal = true;
    } else if (k == "manual") {
      manual = true;
    } else if (k == "unknown") {
      unknown = true;
    } else if (k == "unreduced") {
      unreduced = true;
    } else if (k == "last_tile_dim_replicate") {
      last_tile_dim_replicate = true;
    } else if (k == "device") {
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after device"));
      int64_t d;
      HLOC_RETURN_IF_ERROR(ParseInt64(&d));
      devices = {d};
      has_devices = true;
    } else if (k == "devices") {
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after devices"));
      HLOC_RETURN_IF_ERROR(ParseIotaList(this, &dims, &reshape, &perm, &is_iota, &devices));
      has_devices = true;
    } else if (k == "last_tile_dims") {
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after last_tile_dims"));
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start last_tile_dims"));
      if (!At(TokenKind::kRbrace)) {
        do {
          xla::OpSharding::Type type;
          if (AtName("replicated"))
            type = xla::OpSharding::REPLICATED;
          else if (AtName("manual"))
            type = xla::OpSharding::MANUAL;
          else if (AtName("maximal"))
            type = xla::OpSharding::MAXIMAL;
          else if (AtName("unreduced"))
            type = xla::OpSharding::UNREDUCED;
          else
            return Expected("replicated, manual, maximal or unreduced");
          lexer_.Next();
          sharding->add_last_tile_dims(type);
        } while (Eat(TokenKind::kComma));
      }
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "',' or '}' in last_tile_dims"));
    } else if (k == "shard_as" || k == "shard_like") {
      int64_t id;
      HLOC_RETURN_IF_ERROR(ParseInt64(&id));
      sharding->set_is_shard_group(true);
      sharding->set_shard_group_id(id);
      sharding->set_shard_group_type(k == "shard_as" ? xla::OpSharding::AS : xla::OpSharding::LIKE);
    } else if (k == "metadata") {
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after metadata"));
      if (At(TokenKind::kLbrace) && lexer_.PeekNext().kind == TokenKind::kLbrace) {
        lexer_.Next();
        do {
          HLOC_RETURN_IF_ERROR(ParseMetadata(sharding->add_metadata()));
        } while (Eat(TokenKind::kComma));
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "',' or '}' in a metadata list"));
      } else {
        HLOC_RETURN_IF_ERROR(ParseMetadata(sharding->add_metadata()));
      }
    } else {
      return ErrorAt(key.offset, absl::StrCat("unknown sharding field '", k, "'"));
    }
  }
  lexer_.Next();
  const int kinds = replicated + maximal + manual + unknown + unreduced;
  if (kinds > 1) return ErrorAt(start, "a sharding can have only one kind");
  if (kinds == 1 && !maximal && has_devices) {
    return ErrorAt(start, "replicated, manual and unknown shardings take no devices");
  }
  if (replicated) {
    sharding->set_type(xla::OpSharding::REPLICATED);
  } else if (manual) {
    sharding->set_type(xla::OpSharding::MANUAL);
  } else if (unknown) {
    sharding->set_type(xla::OpSharding::UNKNOWN);
  } else if (unreduced) {
    sharding->set_type(xla::OpSharding::UNREDUCED);
  } else if (maximal) {
    if (devices.size() != 1 || !dims.empty()) {
      return ErrorAt(start, "a maximal sharding needs exactly one device=");
    }
    sharding->set_type(xla::OpSharding::MAXIMAL);
    sharding->add_tile_assignment_dimensions(1);
    sharding->add_tile_assignment_devices(devices[0]);
  } else {
    if (dims.empty()) {
      return ErrorAt(start, "a sharding needs replicated, maximal, manual or devices=[...]");
    }
    sharding->set_type(xla::OpSharding::OTHER);
    for (int64_t d : dims) sharding->add_tile_assignment_dimensions(d);
    if (is_iota) {
      for (int64_t d : reshape) sharding->add_iota_reshape_dims(d);
      for (int64_t p : perm) sharding->add_iota_transpose_perm(static_cast<int32_t>(p));
    } else {
      if (CheckedProduct(dims) != static_cast<int64_t>(devices.size())) {
        return ErrorAt(start, absl::StrCat("tile dimensions hold ", CheckedProduct(dims),
                                           " devices but ", devices.size(), " are listed"));
      }
      for (int64_t d : devices) sharding->add_tile_assignment_devices(d);
    }
    if (last_tile_dim_replicate) {
      if (sharding->last_tile_dims_size() > 0) {
        return ErrorAt(start, "last_tile_dim_replicate and last_tile_dims exclude each other");
      }
      sharding->set_replicate_on_last_tile_dim(true);
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseMetadata(xla::OpMetadata* metadata) {
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start metadata"));
  while (!At(TokenKind::kRbrace)) {
    Eat(TokenKind::kComma);
    const Token key = tok();
    if (key.kind != TokenKind::kName || key.percent) return Expected("a metadata field or '}'");
    lexer_.Next();
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after a metadata field"));
    const absl::string_view k = key.text;
    if (k == "op_name") {
      HLOC_RETURN_IF_ERROR(ParseString(metadata->mutable_op_name()));
    } else if (k == "op_type") {
      HLOC_RETURN_IF_ERROR(ParseString(metadata->mutable_op_type()));
    } else if (k == "source_file") {
      HLOC_RETURN_IF_ERROR(ParseString(metadata->mutable_source_file()));
    } else if (k == "deduplicated_name") {
      HLOC_RETURN_IF_ERROR(ParseString(metadata->mutable_deduplicated_name()));
    } else if (k == "scheduling_name") {
      HLOC_RETURN_IF_ERROR(ParseString(metadata->mutable_scheduling_name()));
    } else if (k == "profile_type") {
      std::vector<int64_t> types;
      const size_t offset = tok().offset;
      HLOC_RETURN_IF_ERROR(ParseInt64List(&types));
      for (int64_t t : types) {
        if (!xla::ProfileType_IsValid(static_cast<int>(t))) {
          return ErrorAt(offset, absl::StrCat("unknown profile type ", t));
        }
        metadata->add_profile_type(static_cast<xla::ProfileType>(t));
      }
    } else {
      int32_t value;
      if (k == "size_of_generated_code_in_bytes" || k == "size_of_memory_working_set_in_bytes") {
        int64_t wide;
        HLOC_RETURN_IF_ERROR(ParseInt64(&wide));
        if (k == "size_of_generated_code_in_bytes") {
          metadata->set_size_of_generated_code_in_bytes(wide);
        } else {
          metadata->set_size_of_memory_working_set_in_bytes(wide);
        }
        continue;
      }
      void (xla::OpMetadata::*setter)(int32_t) = nullptr;
      if (k == "source_line")
        setter = &xla::OpMetadata::set_source_line;
      else if (k == "source_end_line")
        setter = &xla::OpMetadata::set_source_end_line;
      else if (k == "source_column")
        setter = &xla::OpMetadata::set_source_column;
      else if (k == "source_end_column")
        setter = &xla::OpMetadata::set_source_end_column;
      else if (k == "stack_frame_id")
        setter = &xla::OpMetadata::set_stack_frame_id;
      if (setter == nullptr) {
        return ErrorAt(key.offset, absl::StrCat("unknown metadata field '", k, "'"));
      }
      HLOC_RETURN_IF_ERROR(ParseInt32(&value));
      (metadata->*setter)(value);
    }
  }
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status Parser::ParseFrontendAttributes(xla::FrontendAttributes* attributes) {
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start frontend attributes"));
  if (Eat(TokenKind::kRbrace)) return absl::OkStatus();
  std::string key;
  do {
    if (At(TokenKind::kString)) {
      HLOC_RETURN_IF_ERROR(ParseString(&key));
    } else if (At(TokenKind::kName) && !tok().percent) {
      key.assign(tok().text.data(), tok().text.size());
      lexer_.Next();
    } else {
      return Expected("a frontend attribute name");
    }
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after a frontend attribute name"));
    HLOC_RETURN_IF_ERROR(ParseStringOrBraced(&(*attributes->mutable_map())[key]));
  } while (Eat(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "',' or '}' in frontend attributes");
}

absl::Status Parser::ParseOutputOperandAliasing(std::vector<OutputOperandAlias>* aliasing) {
  aliasing->clear();
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start output_to_operand_aliasing"));
  if (Eat(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    OutputOperandAlias alias;
    HLOC_RETURN_IF_ERROR(ParseShapeIndex(&alias.output));
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after the output index"));
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' before the operand number"));
    HLOC_RETURN_IF_ERROR(ParseInt64(&alias.operand_number));
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' after the operand number"));
    HLOC_RETURN_IF_ERROR(ParseShapeIndex(&alias.operand_index));
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after the operand index"));
    aliasing->push_back(std::move(alias));
  } while (Eat(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "',' or '}' in output_to_operand_aliasing");
}

absl::Status Parser::ParseResultAccuracy(xla::ResultAccuracy* accuracy) {
  accuracy->Clear();
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start result_accuracy"));
  if (AtName("mode")) {
    lexer_.Next();
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after mode"));
    xla::ResultAccuracy::Mode mode;
    if (!At(TokenKind::kName) || !xla::ResultAccuracy::Mode_Parse(std::string(tok().text), &mode)) {
      return Expected("a result accuracy mode (DEFAULT or HIGHEST)");
    }
    lexer_.Next();
    accuracy->set_mode(mode);
  } else if (AtName("tolerance")) {
    lexer_.Next();
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after tolerance"));
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a tolerance"));
    xla::ResultAccuracy::Tolerance* tolerance = accuracy->mutable_tolerance();
    if (!At(TokenKind::kRbrace)) {
      do {
        const Token key = tok();
        if (key.kind != TokenKind::kName) return Expected("atol, rtol or ulps");
        lexer_.Next();
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' in a tolerance"));
        if (key.text == "ulps") {
          int64_t ulps;
          HLOC_RETURN_IF_ERROR(ParseInt64(&ulps));
          tolerance->set_ulps(ulps);
        } else if (key.text == "atol" || key.text == "rtol") {
          double v;
          HLOC_RETURN_IF_ERROR(ParseDouble(&v));
          key.text == "atol" ? tolerance->set_atol(v) : tolerance->set_rtol(v);
        } else {
          return ErrorAt(key.offset, absl::StrCat("unknown tolerance field '", key.text, "'"));
        }
      } while (Eat(TokenKind::kComma));
    }
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "',' or '}' in a tolerance"));
  } else {
    return Expected("mode= or tolerance=");
  }
  return Expect(TokenKind::kRbrace, "'}' to end result_accuracy");
}

absl::Status Parser::ParseStatistics(xla::StatisticsViz* statistics) {
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start statistics"));
  if (Eat(TokenKind::kRbrace)) return absl::OkStatus();
  if (!AtName("visualizing_index")) return Expected("visualizing_index=");
  lexer_.Next();
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after visualizing_index"));
  int64_t index;
  HLOC_RETURN_IF_ERROR(ParseInt64(&index));
  statistics->set_stat_index_to_visualize(index);
  while (Eat(TokenKind::kComma)) {
    if (!At(TokenKind::kName) || tok().percent) return Expected("a statistic name");
    xla::Statistic* stat = statistics->add_statistics();
    stat->set_stat_name(std::string(tok().text));
    lexer_.Next();
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after a statistic name"));
    double v;
    HLOC_RETURN_IF_ERROR(ParseDouble(&v));
    stat->set_stat_val(v);
  }
  return Expect(TokenKind::kRbrace, "',' or '}' in statistics");
}

absl::Status Parser::ParseOriginalValue(xla::OriginalValueProto* value) {
  value->Clear();
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start an original value"));
  ShapeIndex leaf;
  while (!At(TokenKind::kRbrace)) {
    if (Eat(TokenKind::kLparen)) {
      if (static_cast<int>(leaf.size()) >= kMaxNesting) {
        return ErrorAt(tok().offset, "original value nests too deep");
      }
      leaf.push_back(0);
    } else if (At(TokenKind::kRparen)) {
      if (leaf.empty()) return Expected("'{' or '('");
      lexer_.Next();
      leaf.pop_back();
    } else if (At(TokenKind::kComma)) {
      if (leaf.empty()) return Expected("'{' or '('");
      lexer_.Next();
      ++leaf.back();
    } else if (Eat(TokenKind::kLbrace)) {
      if (!At(TokenKind::kRbrace)) {
        xla::OriginalValueElementProto* element = value->add_elements();
        for (int64_t i : leaf) element->add_shape_index(i);
        HLOC_RETURN_IF_ERROR(
            ParseString(element->mutable_original_array()->mutable_instruction_name()));
        if (At(TokenKind::kLbrace)) {
          ShapeIndex index;
          HLOC_RETURN_IF_ERROR(ParseShapeIndex(&index));
          for (int64_t i : index) element->mutable_original_array()->add_shape_index(i);
        }
      }
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' after an original array"));
    } else {
      return Expected("'{', '(', ')' or ',' in an original value");
    }
  }
  if (!leaf.empty()) return Expected("')'");
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status Parser::ParseSparsity(xla::SparsityConfig* sparsity) {
  const size_t offset = tok().offset;
  absl::string_view word;
  HLOC_RETURN_IF_ERROR(ParseWordToken("a sparsity descriptor such as L.1@2:4", &word));
  sparsity->Clear();
  for (absl::string_view item : absl::StrSplit(word, '_')) {
    // <L|R>.<dimension>@<n>:<m>
    const size_t at = item.find('@');
    const size_t colon = item.find(':');
    int64_t dimension, n, m;
    if (item.size() < 3 || (item[0] != 'L' && item[0] != 'R') || item[1] != '.' ||
        at == absl::string_view::npos || colon == absl::string_view::npos || colon < at ||
        !absl::SimpleAtoi(item.substr(2, at - 2), &dimension) ||
        !absl::SimpleAtoi(item.substr(at + 1, colon - at - 1), &n) ||
        !absl::SimpleAtoi(item.substr(colon + 1), &m) || dimension < 0 || n < 1 || m <= n) {
      return ErrorAt(
          offset, absl::StrCat("invalid sparsity descriptor '", item, "' (expected like L.1@2:4)"));
    }
    xla::SparsityConfig::TensorSparsityConfig* side =
        item[0] == 'L' ? sparsity->mutable_lhs() : sparsity->mutable_rhs();
    side->set_dimension(dimension);
    side->set_num_non_zero(n);
    side->set_block_size(m);
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseProgramShape(ProgramShape* program_shape) {
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' to start the parameter shapes"));
  if (!Eat(TokenKind::kRparen)) {
    do {
      program_shape->parameters.emplace_back();
      HLOC_RETURN_IF_ERROR(ParseValidatedShape(&program_shape->parameters.back()));
    } while (Eat(TokenKind::kComma));
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "',' or ')' in the parameter shapes"));
  }
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' before the result shape"));
  return ParseValidatedShape(&program_shape->result);
}

}  // namespace text_internal
}  // namespace hloc
