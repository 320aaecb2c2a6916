// ProgramShapeProto wire bytes for the fast proto reader: a check that
// protobuf would accept them (each computation carries a program shape that
// the IR recomputes, so only its validity matters) and a decoder into a
// ProgramShape (the module's host_program_shape, one shape per parameter of
// the entry). Neither builds protobuf's generated messages, which for a
// module with hundreds of parameters cost thousands of allocations.
//
// Both are strict in the way of proto_fast_wire.h: `true` promises protobuf's
// own reading succeeds with the same result; `false` only means "ask
// protobuf", which has the final word on errors.
#include <vector>

#include "hlo/proto_fast_internal.h"
#include "hlo/proto_fast_wire.h"

namespace hloc {
namespace proto_fast_internal {
namespace {

// Deeper nesting is left to protobuf (whose own limit is 100).
constexpr int kMaxWellFormedDepth = 32;

// A repeated varint field's occurrence, packed or not.
bool SkipVarints(WireReader* reader, uint32_t wire_type) {
  uint64_t unused;
  if (wire_type == kVarint) return reader->ReadVarint(&unused);
  absl::string_view payload;
  return wire_type == kLengthDelimited && reader->ReadLengthDelimited(&payload) &&
         ForEachPackedVarint(payload, [](uint64_t) {});
}

// TileProto: dimensions (1) only.
bool WellFormedTile(absl::string_view bytes) {
  WireReader reader(bytes);
  while (!reader.done()) {
    uint32_t field, wire_type;
    if (!reader.ReadTag(&field, &wire_type) || field != 1 || !SkipVarints(&reader, wire_type)) {
      return false;
    }
  }
  return true;
}

// LayoutProto with the fields ShapeToProto writes: minor_to_major (1),
// tiles (6), element_size_in_bits (7), memory_space (8),
// tail_padding_alignment_in_elements (16).
bool WellFormedLayout(absl::string_view bytes) {
  WireReader reader(bytes);
  while (!reader.done()) {
    uint32_t field, wire_type;
    if (!reader.ReadTag(&field, &wire_type)) return false;
    uint64_t unused;
    absl::string_view payload;
    bool ok = false;
    switch (field) {
      case 1: ok = SkipVarints(&reader, wire_type); break;
      case 6:
        ok = wire_type == kLengthDelimited && reader.ReadLengthDelimited(&payload) &&
             WellFormedTile(payload);
        break;
      case 7: case 8: case 16: ok = wire_type == kVarint && reader.ReadVarint(&unused); break;
      default: break;
    }
    if (!ok) return false;
  }
  return true;
}

// ShapeProto: element_type (2), dimensions (3), tuple_shapes (4), layout
// (5), is_dynamic_dimension (6).
bool WellFormedShape(absl::string_view bytes, int depth) {
  if (depth > kMaxWellFormedDepth) return false;
  WireReader reader(bytes);
  while (!reader.done()) {
    uint32_t field, wire_type;
    if (!reader.ReadTag(&field, &wire_type)) return false;
    uint64_t unused;
    absl::string_view payload;
    bool ok = false;
    switch (field) {
      case 2: ok = wire_type == kVarint && reader.ReadVarint(&unused); break;
      case 3: case 6: ok = SkipVarints(&reader, wire_type); break;
      case 4:
        ok = wire_type == kLengthDelimited && reader.ReadLengthDelimited(&payload) &&
             WellFormedShape(payload, depth + 1);
        break;
      case 5:
        ok = wire_type == kLengthDelimited && reader.ReadLengthDelimited(&payload) &&
             WellFormedLayout(payload);
        break;
      default: break;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool WellFormedProgramShape(absl::string_view bytes) {
  WireReader reader(bytes);
  while (!reader.done()) {
    uint32_t field, wire_type;
    absl::string_view payload;
    if (!reader.ReadTag(&field, &wire_type) || wire_type != kLengthDelimited ||
        !reader.ReadLengthDelimited(&payload)) {
      return false;
    }
    if (field == 1 || field == 2) {
      if (!WellFormedShape(payload, 1)) return false;
    } else if (field != 3 || !IsAscii(payload)) {  // parameter_names
      return false;
    }
  }
  return true;
}

bool DecodeProgramShape(absl::string_view bytes, ProgramShape* out) {
  WireReader reader(bytes);
  std::vector<absl::string_view> parameters, names;
  bool has_result = false;
  while (!reader.done()) {
    uint32_t field, wire_type;
    absl::string_view payload;
    if (!reader.ReadTag(&field, &wire_type) || wire_type != kLengthDelimited ||
        !reader.ReadLengthDelimited(&payload)) {
      return false;
    }
    switch (field) {
      case 1:
        parameters.push_back(payload);
        break;
      case 2:  // A second result would be merged into the first.
        if (has_result || !DecodeCanonicalShape(payload, &out->result)) return false;
        has_result = true;
        break;
      case 3:
        if (!IsAscii(payload)) return false;
        names.push_back(payload);
        break;
      default:
        return false;
    }
  }
  // ProgramShapeFromProto words the error for more names than parameters.
  if (!has_result || names.size() > parameters.size()) return false;
  out->parameters.resize(parameters.size());  // Decoded in place, never moved.
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (!DecodeCanonicalShape(parameters[i], &out->parameters[i])) return false;
  }
  out->parameter_names.reserve(out->parameters.size());
  for (size_t i = 0; i < out->parameters.size(); ++i) {
    out->parameter_names.emplace_back(i < names.size() ? names[i] : absl::string_view());
  }
  return true;
}

}  // namespace proto_fast_internal
}  // namespace hloc
