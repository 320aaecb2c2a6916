// The fast path for one HloInstructionProto: decoding its wire bytes into a
// FastInstruction and building the IR instruction from that, with no
// generated message for the instruction itself (see proto_fast_internal.h).
//
// The builder only succeeds where it can promise the IR InstructionFromProto
// would build: the reference reader's carried proto fields would stay empty
// (no unmodeled field, a shape ShapeToProto writes back unchanged, no
// message that a re-export would leave out) and the opcode's attributes are
// among the ones handled here. Everything else returns nullptr and goes the
// reference way; so do invalid instructions, whose error the reference path
// words. Small sub-messages that are IR members anyway (window, dimension
// numbers, metadata, sharding, ...) are parsed by protobuf into place.
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <utility>

#include "hlo/computation.h"
#include "hlo/proto_fast_internal.h"
#include "hlo/proto_fast_wire.h"
#include "hlo/proto_io.h"
#include "hlo/proto_io_internal.h"

namespace hloc {
namespace proto_fast_internal {
namespace {

// Tuples nested deeper than this are left to the reference reader (which
// refuses them past its own limit of 64).
constexpr int kMaxFastTupleDepth = 32;
constexpr int64_t kMaxRank = 1024;

// HloInstructionProto field numbers the fast path reads.
enum InstructionField : uint32_t {
  kName = 1, kOpcode = 2, kShape = 3, kMetadata = 7, kLiteral = 8, kParameterNumber = 9,
  kFusionKind = 11, kTupleIndex = 13, kDimensions = 14, kWindow = 15,
  kConvolutionDimensionNumbers = 16, kSliceDimensions = 17, kExponentBits = 18,
  kMantissaBits = 19, kDynamicSliceSizes = 20, kPaddingConfig = 21, kOutfeedConfig = 22,
  kDistribution = 23, kEpsilon = 24, kFeatureIndex = 25, kChannelId = 26, kInfeedConfig = 27,
  kCustomCallTarget = 28, kDotDimensionNumbers = 30, kFftType = 31, kFftLength = 32,
  kGatherDimensionNumbers = 33, kGatherSliceSizes = 34, kId = 35, kOperandIds = 36,
  kControlPredecessorIds = 37, kCalledComputationIds = 38, kSharding = 40, kBackendConfig = 43,
  kIsHostTransfer = 47, kScatterDimensionNumbers = 48, kFeatureGroupCount = 50,
  kPrecisionConfig = 51, kConstrainLayout = 56, kBatchGroupCount = 58, kIsStable = 60,
  kComparisonDirection = 63, kCustomCallHasSideEffect = 65, kIndicesAreSorted = 67,
  kFrontendAttributes = 68, kUniqueIndices = 69, kRngAlgorithm = 70, kUseGlobalDeviceIds = 71,
  kComparisonType = 72, kCustomCallSchedule = 76, kCustomCallApiVersion = 77,
  kAsyncExecutionThread = 79, kK = 81, kStatisticsViz = 82, kLargest = 85, kIsComposite = 89,
  kIsReverse = 94, kNumCarries = 95, kIsAssociative = 96,
};

// Varints in a packed payload: one per byte below 0x80.
size_t CountVarints(absl::string_view payload) {
  size_t n = 0;
  for (char c : payload) n += static_cast<unsigned char>(c) < 0x80;
  return n;
}

// Appends one occurrence of a repeated int64 field (packed or not).
template <typename Vector>
bool AppendInt64s(WireReader* reader, uint32_t wire_type, Vector* out) {
  if (wire_type == kVarint) {
    uint64_t v;
    if (!reader->ReadVarint(&v)) return false;
    out->push_back(static_cast<int64_t>(v));
    return true;
  }
  if (wire_type != kLengthDelimited) return false;
  absl::string_view payload;
  if (!reader->ReadLengthDelimited(&payload)) return false;
  out->reserve(out->size() + CountVarints(payload));  // One allocation, not one per doubling.
  return ForEachPackedVarint(payload,
                             [&](uint64_t v) { out->push_back(static_cast<int64_t>(v)); });
}

// The values of a packed repeated int64 field; false when malformed.
bool PackedInt64s(absl::string_view payload, std::vector<int64_t>* values) {
  values->clear();
  if (payload.empty()) return true;
  values->reserve(CountVarints(payload));
  return ForEachPackedVarint(payload,
                             [&](uint64_t v) { values->push_back(static_cast<int64_t>(v)); });
}

bool DecodeSlice(absl::string_view bytes, std::array<int64_t, 3>* slice) {
  *slice = {0, 0, 0};
  WireReader reader(bytes);
  while (!reader.done()) {
    uint32_t field, wire_type;
    uint64_t v;
    if (!reader.ReadTag(&field, &wire_type) || field > 3 || wire_type != kVarint ||
        !reader.ReadVarint(&v)) {
      return false;
    }
    (*slice)[field - 1] = static_cast<int64_t>(v);
  }
  return true;
}

// LayoutProto fields ShapeToProto writes; anything else is not canonical.
bool DecodeCanonicalLayout(absl::string_view bytes, Layout* layout) {
  WireReader reader(bytes);
  int64_t tail_padding = 0;
  while (!reader.done()) {
    uint32_t field, wire_type;
    if (!reader.ReadTag(&field, &wire_type)) return false;
    uint64_t v;
    switch (field) {
      case 1:  // minor_to_major
        if (!AppendInt64s(&reader, wire_type, &layout->minor_to_major)) return false;
        break;
      case 6: {  // tiles
        absl::string_view tile_bytes;
        if (wire_type != kLengthDelimited || !reader.ReadLengthDelimited(&tile_bytes)) return false;
        Tile tile;
        WireReader tile_reader(tile_bytes);
        while (!tile_reader.done()) {
          uint32_t tile_field, tile_wire_type;
          if (!tile_reader.ReadTag(&tile_field, &tile_wire_type) || tile_field != 1 ||
              !AppendInt64s(&tile_reader, tile_wire_type, &tile.dimensions)) {
            return false;
          }
        }
        for (int64_t d : tile.dimensions) {
          if (d <= 0 && d != Tile::kCombineDimension) return false;
        }
        layout->tiles.push_back(std::move(tile));
        break;
      }
      case 7:  // element_size_in_bits
      case 8:  // memory_space
      case 16:  // tail_padding_alignment_in_elements
        if (wire_type != kVarint || !reader.ReadVarint(&v)) return false;
        if (field == 7) layout->element_size_in_bits = static_cast<int64_t>(v);
        if (field == 8) layout->memory_space = static_cast<int64_t>(v);
        if (field == 16) tail_padding = static_cast<int64_t>(v);
        break;
      default:
        return false;
    }
  }
  return tail_padding == 1 && layout->element_size_in_bits >= 0;
}

// ValidateShape's checks for an array shape whose dimensions are all
// non-negative; false (leaving the verdict to the reference reader) for
// anything else.
bool ValidArray(PrimitiveType type, const std::vector<int64_t>& dimensions, const Layout* layout) {
  int64_t count = 1;
  for (int64_t d : dimensions) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) return false;
  }
  int64_t bytes;
  if (__builtin_mul_overflow(count, int64_t{ByteWidth(type)}, &bytes)) return false;
  if (layout == nullptr) return true;
  const std::vector<int64_t>& m2m = layout->minor_to_major;
  if (m2m.size() != dimensions.size() || m2m.size() > 64) return false;
  uint64_t seen = 0;
  for (int64_t d : m2m) {
    if (d < 0 || d >= static_cast<int64_t>(m2m.size()) || (seen >> d & 1)) return false;
    seen |= uint64_t{1} << d;
  }
  return true;
}

// Builds the shape in *out (which may be left half-built when it fails):
// the fields are located first, then each value is decoded into place, so
// no Shape, Layout or dimension vector is copied or moved on the way.
bool DecodeShapeImpl(absl::string_view bytes, int depth, Shape* out) {
  if (depth > kMaxFastTupleDepth) return false;
  WireReader reader(bytes);
  int32_t raw_type = 0;
  // Packed dimensions as one span; unpacked ones (legal, rare) in a vector.
  absl::string_view packed_dimensions;
  std::vector<int64_t> unpacked_dimensions;
  bool has_dimensions = false;
  absl::InlinedVector<int64_t, 8> dynamic;
  absl::InlinedVector<absl::string_view, 4> tuple_elements;
  bool has_layout = false;
  absl::string_view layout_bytes;
  while (!reader.done()) {
    uint32_t field, wire_type;
    if (!reader.ReadTag(&field, &wire_type)) return false;
    switch (field) {
      case 2: {  // element_type
        uint64_t v;
        if (wire_type != kVarint || !reader.ReadVarint(&v)) return false;
        raw_type = static_cast<int32_t>(v);
        break;
      }
      case 3:  // dimensions
        if (wire_type == kLengthDelimited && !has_dimensions) {
          if (!reader.ReadLengthDelimited(&packed_dimensions)) return false;
        } else {
          if (packed_dimensions.data() != nullptr) {
            if (!ForEachPackedVarint(packed_dimensions, [&](uint64_t v) {
                  unpacked_dimensions.push_back(static_cast<int64_t>(v));
                })) {
              return false;
            }
            packed_dimensions = absl::string_view();
          }
          if (!AppendInt64s(&reader, wire_type, &unpacked_dimensions)) return false;
        }
        has_dimensions = true;
        break;
      case 6:  // is_dynamic_dimension
        if (!AppendInt64s(&reader, wire_type, &dynamic)) return false;
        break;
      case 4: {  // tuple_shapes
        absl::string_view element;
        if (wire_type != kLengthDelimited || !reader.ReadLengthDelimited(&element)) return false;
        tuple_elements.push_back(element);
        break;
      }
      case 5:  // layout; a second one would be merged into the first
        if (wire_type != kLengthDelimited || has_layout ||
            !reader.ReadLengthDelimited(&layout_bytes)) {
          return false;
        }
        has_layout = true;
        break;
      default:
        return false;
    }
  }
  if (!xla::PrimitiveType_IsValid(raw_type)) return false;
  const auto type = static_cast<PrimitiveType>(raw_type);
  const bool any_dimension = !packed_dimensions.empty() || !unpacked_dimensions.empty();
  if (type == xla::TUPLE) {
    if (any_dimension || !dynamic.empty() || has_layout) return false;
    std::vector<Shape> elements(tuple_elements.size());
    for (size_t i = 0; i < tuple_elements.size(); ++i) {
      if (!DecodeShapeImpl(tuple_elements[i], depth + 1, &elements[i])) return false;
    }
    *out = Shape::Tuple(std::move(elements));
    return true;
  }
  if (!tuple_elements.empty()) return false;
  if (type == xla::TOKEN) {
    if (any_dimension || !dynamic.empty() || has_layout) return false;
    *out = Shape::Token();
    return true;
  }
  if (!IsArrayType(type)) return false;
  std::vector<int64_t> dimensions;
  if (packed_dimensions.data() != nullptr) {
    dimensions.reserve(CountVarints(packed_dimensions));
    if (!ForEachPackedVarint(packed_dimensions, [&](uint64_t v) {
          dimensions.push_back(static_cast<int64_t>(v));
        })) {
      return false;
    }
  } else {
    dimensions = std::move(unpacked_dimensions);
  }
  if (static_cast<int64_t>(dimensions.size()) > kMaxRank || dynamic.size() != dimensions.size()) {
    return false;
  }
  *out = Shape(type, std::move(dimensions));
  for (size_t i = 0; i < dynamic.size(); ++i) {
    if (dynamic[i] != 0) out->set_dynamic_dimension(static_cast<int64_t>(i), true);
  }
  if (has_layout) {
    out->set_layout(Layout());
    if (!DecodeCanonicalLayout(layout_bytes, out->mutable_layout())) return false;
  }
  return ValidArray(type, out->dimensions(), has_layout ? &out->layout() : nullptr);
}

bool IsRowMajor(const Shape& shape) {
  if (!shape.has_layout()) return true;
  const std::vector<int64_t>& m2m = shape.layout().minor_to_major;
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  }
  return true;
}

// LiteralProto's data field for `type` when the simple literal decoder
// handles it, with its element width in the proto: 0 for varints.
struct DataField {
  uint32_t number;
  uint32_t proto_width;
};
std::optional<DataField> SimpleDataField(PrimitiveType type) {
  switch (type) {
    case xla::PRED: return DataField{2, 0};
    case xla::S32: return DataField{4, 0};
    case xla::S64: return DataField{5, 0};
    case xla::U32: return DataField{6, 0};
    case xla::U64: return DataField{7, 0};
    case xla::F32: return DataField{8, 4};
    case xla::F64: return DataField{9, 8};
    case xla::U8: return DataField{3, 1};
    case xla::S8: return DataField{15, 1};
    case xla::F16: return DataField{11, 2};
    case xla::BF16: return DataField{13, 2};
    case xla::U16: return DataField{16, 2};
    case xla::S16: return DataField{17, 2};
    default: return std::nullopt;
  }
}

bool Parse(absl::string_view bytes, google::protobuf::MessageLite* message) {
  return ParseProtoQuietly(bytes, message);
}

// OpMetadata with only its string and int32 fields, set directly (what
// protobuf's parser would set); false for anything else, which the caller
// leaves to protobuf.
bool DecodeSimpleMetadata(absl::string_view bytes, xla::OpMetadata* metadata) {
  WireReader reader(bytes);
  while (!reader.done()) {
    uint32_t field, wire_type;
    if (!reader.ReadTag(&field, &wire_type)) return false;
    absl::string_view text;
    uint64_t value;
    if (wire_type == kLengthDelimited) {
      if (!reader.ReadLengthDelimited(&text) || !IsAscii(text)) return false;
      switch (field) {
        case 1: metadata->set_op_type(std::string(text)); break;
        case 2: metadata->set_op_name(std::string(text)); break;
        case 3: metadata->set_source_file(std::string(text)); break;
        case 12: metadata->set_deduplicated_name(std::string(text)); break;
        case 16: metadata->set_scheduling_name(std::string(text)); break;
        default: return false;
      }
    } else if (wire_type == kVarint) {
      if (!reader.ReadVarint(&value)) return false;
      const auto v = static_cast<int32_t>(value);
      switch (field) {
        case 4: metadata->set_source_line(v); break;
        case 15: metadata->set_stack_frame_id(v); break;
        case 17: metadata->set_source_end_line(v); break;
        case 18: metadata->set_source_column(v); break;
        case 19: metadata->set_source_end_column(v); break;
        default: return false;
      }
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

bool DecodeCanonicalShape(absl::string_view bytes, Shape* shape) {
  return DecodeShapeImpl(bytes, 0, shape);
}

std::optional<Literal> DecodeSimpleLiteral(absl::string_view bytes) {
  WireReader reader(bytes);
  absl::string_view shape_bytes, data;
  bool has_shape = false, has_data = false;
  uint32_t data_number = 0;
  while (!reader.done()) {
    uint32_t field, wire_type;
    if (!reader.ReadTag(&field, &wire_type) || wire_type != kLengthDelimited) return std::nullopt;
    absl::string_view payload;
    if (!reader.ReadLengthDelimited(&payload)) return std::nullopt;
    if (field == 1) {
      if (has_shape) return std::nullopt;
      has_shape = true;
      shape_bytes = payload;
    } else {
      if (has_data) return std::nullopt;
      has_data = true;
      data_number = field;
      data = payload;
    }
  }
  Shape shape;
  if (!has_shape || !DecodeCanonicalShape(shape_bytes, &shape) || !shape.IsArray() ||
      !shape.is_static() || !IsRowMajor(shape)) {
    return std::nullopt;
  }
  const std::optional<DataField> field = SimpleDataField(shape.element_type());
  if (!field || (has_data && data_number != field->number)) return std::nullopt;
  const int64_t count = shape.element_count();
  if (field->proto_width != 0) {
    if (data.size() != static_cast<uint64_t>(count) * field->proto_width) return std::nullopt;
  } else if (data.size() < static_cast<uint64_t>(count) ||
             data.size() > static_cast<uint64_t>(count) * 10) {
    return std::nullopt;  // Cannot hold `count` varints.
  }
  absl::StatusOr<Literal> literal = Literal::Create(shape);
  if (!literal.ok()) return std::nullopt;
  uint8_t* dst = literal->mutable_raw();
  if (field->proto_width != 0) {
    if (count > 0) std::memcpy(dst, data.data(), data.size());  // Little-endian host.
    return *std::move(literal);
  }
  int64_t i = 0;
  const bool ok = ForEachPackedVarint(data, [&](uint64_t v) {
    if (i < count) {
      switch (shape.element_type()) {
        case xla::PRED: dst[i] = v != 0; break;
        case xla::S32: {
          const int32_t x = static_cast<int32_t>(v);
          std::memcpy(dst + 4 * i, &x, 4);
          break;
        }
        case xla::U32: {
          const uint32_t x = static_cast<uint32_t>(v);
          std::memcpy(dst + 4 * i, &x, 4);
          break;
        }
        default: std::memcpy(dst + 8 * i, &v, 8); break;  // s64, u64
      }
    }
    ++i;
  });
  if (!ok || i != count) return std::nullopt;
  return *std::move(literal);
}

bool DecodeInstruction(absl::string_view bytes, FastInstruction* out) {
  FastInstruction& p = *out;
  p.bytes = bytes;
  WireReader reader(bytes);
  // A singular message field seen twice is merged by protobuf; leave that
  // to the reference path.
  auto message = [&](uint32_t wire_type, absl::string_view* span) {
    if (wire_type != kLengthDelimited) return false;
    if (span->data() != nullptr) p.needs_reference = true;
    return reader.ReadLengthDelimited(span);
  };
  auto ascii = [&](uint32_t wire_type, absl::string_view* span) {
    if (wire_type != kLengthDelimited || !reader.ReadLengthDelimited(span)) return false;
    if (!IsAscii(*span)) p.needs_reference = true;
    return true;
  };
  auto packed_once = [&](uint32_t wire_type, absl::string_view* span) {
    if (wire_type != kLengthDelimited) return false;
    if (span->data() != nullptr) p.needs_reference = true;
    return reader.ReadLengthDelimited(span);
  };
  auto varint = [&](uint32_t wire_type, auto* value) {
    uint64_t v;
    if (wire_type != kVarint || !reader.ReadVarint(&v)) return false;
    *value = static_cast<std::remove_pointer_t<decltype(value)>>(v);
    return true;
  };
  auto boolean = [&](uint32_t wire_type, bool* value) {
    uint64_t v;
    if (wire_type != kVarint || !reader.ReadVarint(&v)) return false;
    *value = v != 0;
    return true;
  };
  while (!reader.done()) {
    uint32_t field, wire_type;
    if (!reader.ReadTag(&field, &wire_type)) return false;
    bool ok = false;
    bool attribute = true;
    switch (field) {
      case kName: ok = ascii(wire_type, &p.name_); attribute = false; break;
      case kOpcode: ok = ascii(wire_type, &p.opcode_); attribute = false; break;
      case kShape: ok = message(wire_type, &p.shape); attribute = false; break;
      case kMetadata: ok = message(wire_type, &p.metadata); attribute = false; break;
      case kLiteral: ok = message(wire_type, &p.literal); break;
      case kParameterNumber: ok = varint(wire_type, &p.parameter_number_); break;
      case kFusionKind: ok = ascii(wire_type, &p.fusion_kind); break;
      case kTupleIndex: ok = varint(wire_type, &p.tuple_index); break;
      case kDimensions: ok = packed_once(wire_type, &p.dimensions); break;
      case kWindow: ok = message(wire_type, &p.window); break;
      case kConvolutionDimensionNumbers:
        ok = message(wire_type, &p.convolution_dimension_numbers);
        break;
      case kSliceDimensions: {
        absl::string_view slice_bytes;
        ok = wire_type == kLengthDelimited && reader.ReadLengthDelimited(&slice_bytes);
        if (ok) {
          p.slices.emplace_back();
          if (!DecodeSlice(slice_bytes, &p.slices.back())) p.needs_reference = true;
        }
        break;
      }
      case kExponentBits: ok = varint(wire_type, &p.exponent_bits); break;
      case kMantissaBits: ok = varint(wire_type, &p.mantissa_bits); break;
      case kDynamicSliceSizes: ok = packed_once(wire_type, &p.dynamic_slice_sizes); break;
      case kPaddingConfig: ok = message(wire_type, &p.padding_config); break;
      case kOutfeedConfig:
        ok = wire_type == kLengthDelimited && reader.ReadLengthDelimited(&p.outfeed_config);
        break;
      case kDistribution: ok = varint(wire_type, &p.distribution); break;
      case kEpsilon: ok = wire_type == kFixed32 && reader.ReadFixed32(&p.epsilon_bits); break;
      case kFeatureIndex: ok = varint(wire_type, &p.feature_index); break;
      case kChannelId: ok = varint(wire_type, &p.channel_id); break;
      case kInfeedConfig:
        ok = wire_type == kLengthDelimited && reader.ReadLengthDelimited(&p.infeed_config);
        break;
      case kCustomCallTarget: ok = ascii(wire_type, &p.custom_call_target); break;
      case kDotDimensionNumbers: ok = message(wire_type, &p.dot_dimension_numbers); break;
      case kFftType: ok = varint(wire_type, &p.fft_type); break;
      case kFftLength: ok = packed_once(wire_type, &p.fft_length); break;
      case kGatherDimensionNumbers: ok = message(wire_type, &p.gather_dimension_numbers); break;
      case kGatherSliceSizes: ok = packed_once(wire_type, &p.gather_slice_sizes); break;
      case kId: ok = varint(wire_type, &p.id_); attribute = false; break;
      case kOperandIds:
        ok = AppendInt64s(&reader, wire_type, &p.operand_ids_);
        attribute = false;
        break;
      case kControlPredecessorIds:
        ok = AppendInt64s(&reader, wire_type, &p.control_predecessor_ids_);
        attribute = false;
        break;
      case kCalledComputationIds:
        ok = AppendInt64s(&reader, wire_type, &p.called_computation_ids_);
        attribute = false;
        break;
      case kSharding: ok = message(wire_type, &p.sharding); attribute = false; break;
      case kBackendConfig:
        ok = wire_type == kLengthDelimited && reader.ReadLengthDelimited(&p.backend_config);
        attribute = false;
        break;
      case kIsHostTransfer: ok = boolean(wire_type, &p.is_host_transfer); break;
      case kScatterDimensionNumbers: ok = message(wire_type, &p.scatter_dimension_numbers); break;
      case kFeatureGroupCount: ok = varint(wire_type, &p.feature_group_count); break;
      case kPrecisionConfig: ok = message(wire_type, &p.precision_config); break;
      case kConstrainLayout: ok = boolean(wire_type, &p.constrain_layout); break;
      case kBatchGroupCount: ok = varint(wire_type, &p.batch_group_count); break;
      case kIsStable: ok = boolean(wire_type, &p.is_stable); break;
      case kComparisonDirection: ok = ascii(wire_type, &p.comparison_direction); break;
      case kCustomCallHasSideEffect: ok = boolean(wire_type, &p.custom_call_has_side_effect); break;
      case kIndicesAreSorted: ok = boolean(wire_type, &p.indices_are_sorted); break;
      case kFrontendAttributes:
        ok = message(wire_type, &p.frontend_attributes);
        attribute = false;
        break;
      case kUniqueIndices: ok = boolean(wire_type, &p.unique_indices); break;
      case kRngAlgorithm: ok = varint(wire_type, &p.rng_algorithm); break;
      case kUseGlobalDeviceIds: ok = boolean(wire_type, &p.use_global_device_ids); break;
      case kComparisonType: ok = ascii(wire_type, &p.comparison_type); break;
      case kCustomCallSchedule: ok = varint(wire_type, &p.custom_call_schedule); break;
      case kCustomCallApiVersion: ok = varint(wire_type, &p.custom_call_api_version); break;
      case kAsyncExecutionThread: ok = ascii(wire_type, &p.async_execution_thread); break;
      case kK: ok = varint(wire_type, &p.k); break;
      case kStatisticsViz: {
        absl::string_view statistics;
        ok = wire_type == kLengthDelimited && reader.ReadLengthDelimited(&statistics);
        // An empty one is what the writer always adds; anything else is carried.
        if (!statistics.empty()) p.needs_reference = true;
        attribute = false;
        break;
      }
      case kLargest: ok = boolean(wire_type, &p.largest); break;
      case kIsComposite: ok = boolean(wire_type, &p.is_composite); attribute = false; break;
      case kIsReverse: ok = boolean(wire_type, &p.is_reverse); break;
      case kNumCarries: ok = varint(wire_type, &p.num_carries); break;
      case kIsAssociative: ok = varint(wire_type, &p.is_associative); break;
      default:
        break;
    }
    if (!ok) {
      // A field the fast path does not read, or one of its fields with an
      // unexpected wire type (which protobuf keeps as an unknown field).
      // The reader has not moved past the tag in either case.
      p.needs_reference = true;
      if (!reader.Skip(wire_type)) return false;
    }
    if (attribute) p.has_attributes = true;
  }
  return true;
}

std::unique_ptr<HloInstruction> BuildFastInstruction(
    const FastInstruction& p, absl::Span<HloInstruction* const> operands,
    absl::Span<HloComputation* const> called_computations, MetadataCache* metadata_cache) {
  if (p.needs_reference) return nullptr;
  const std::optional<HloOpcode> found = HloOpcodeFromName(p.opcode_);
  if (!found) return nullptr;
  const HloOpcode opcode = *found;
  switch (opcode) {
    // Opcodes whose attributes only the reference reader handles.
    case HloOpcode::kIota:
    case HloOpcode::kCustomCall:
    case HloOpcode::kTopK:
    case HloOpcode::kCopyStart:
    case HloOpcode::kDomain:
      return nullptr;
    default:
      break;
  }
  const int arity = HloOpcodeArity(opcode);
  if (arity >= 0 && arity != static_cast<int>(operands.size())) return nullptr;
  const int expected_called = proto_io_internal::ExpectedCalledCount(opcode);
  if ((expected_called > 0 && static_cast<int>(called_computations.size()) != expected_called) ||
      (expected_called < 0 && called_computations.empty())) {
    return nullptr;
  }
  // Fields the reference reader would keep in the carried proto fields.
  if ((p.parameter_number_ != 0 && opcode != HloOpcode::kParameter) ||
      (p.tuple_index != 0 && opcode != HloOpcode::kGetTupleElement) ||
      (!p.fusion_kind.empty() && opcode != HloOpcode::kFusion) ||
      ((!p.comparison_direction.empty() || !p.comparison_type.empty()) &&
       opcode != HloOpcode::kCompare) ||
      p.custom_call_api_version != 0 || p.largest || p.channel_id < 0) {
    return nullptr;
  }
  // Enum numbers XLA never defined (proto enums are open) have no text form:
  // the reference reader names the field in its error.
  if (!xla::CustomCallSchedule_IsValid(static_cast<int>(p.custom_call_schedule)) ||
      !xla::RandomDistribution_IsValid(static_cast<int>(p.distribution)) ||
      !xla::RandomAlgorithm_IsValid(static_cast<int>(p.rng_algorithm)) ||
      !xla::FftType_IsValid(static_cast<int>(p.fft_type))) {
    return nullptr;
  }
  // scan's fields: carried on other opcodes; out-of-range values get the
  // reference reader's error.
  if (opcode == HloOpcode::kScan
          ? p.num_carries < 0 || p.is_associative < 0 || p.is_associative > xla::TriState_MAX
          : p.is_reverse || p.num_carries != 0 || p.is_associative != 0) {
    return nullptr;
  }
  if (p.shape.data() == nullptr) return nullptr;
  Shape shape;
  if (!DecodeCanonicalShape(p.shape, &shape)) return nullptr;

  // Per-opcode checks and values, as ReadAttributes does them.
  if (opcode == HloOpcode::kParameter && p.parameter_number_ < 0) return nullptr;
  if (opcode == HloOpcode::kGetTupleElement) {
    const Shape& tuple = operands[0]->shape();
    if (!tuple.IsTuple() || p.tuple_index < 0 || p.tuple_index >= tuple.tuple_shapes_size()) {
      return nullptr;
    }
  }
  std::optional<Literal> literal;
  if (p.literal.data() != nullptr) {
    literal = DecodeSimpleLiteral(p.literal);
    if (!literal) {
      xla::LiteralProto literal_proto;
      if (!Parse(p.literal, &literal_proto)) return nullptr;
      absl::StatusOr<Literal> decoded = LiteralFromProto(literal_proto);
      if (!decoded.ok()) return nullptr;
      literal = *std::move(decoded);
    }
    if (opcode == HloOpcode::kConstant && !literal->shape().Compatible(shape)) return nullptr;
  } else if (opcode == HloOpcode::kConstant) {
    return nullptr;
  }
  std::optional<ComparisonDirection> direction;
  ComparisonType comparison_type = ComparisonType::kDefault;
  if (opcode == HloOpcode::kCompare) {
    direction = ComparisonDirectionFromName(p.comparison_direction);
    if (!direction) return nullptr;
    if (!p.comparison_type.empty()) {
      std::optional<ComparisonType> type = ComparisonTypeFromName(p.comparison_type);
      if (!type) return nullptr;
      if (*type != proto_io_internal::DefaultComparisonType(
                       operands[0]->shape().element_type())) {
        comparison_type = *type;
      }
    }
  }
  std::optional<FusionKind> fusion_kind;
  if (opcode == HloOpcode::kFusion) {
    fusion_kind = FusionKindFromName(p.fusion_kind);
    if (!fusion_kind) return nullptr;
  }

  std::unique_ptr<HloInstruction> instruction =
      HloInstruction::Create(opcode, std::move(shape), operands);
  // Create made the instruction a user of its operands: a refusal below
  // (this reader gives the proto to the reference reader) must take that
  // back before the instruction is freed, or the operands keep a dangling
  // user (the proto fuzzer found one: metadata with an unknown enum).
  struct DetachUnlessReturned {
    HloInstruction* instruction;
    bool returned = false;
    ~DetachUnlessReturned() {
      if (!returned) instruction->DetachOperands();
    }
  } detach_unless_returned{instruction.get()};
  instruction->set_name(std::string(p.name_));
  if (opcode == HloOpcode::kWhile) {
    // XLA's order is (body, condition); the IR's is (condition, body).
    instruction->AppendCalledComputation(called_computations[1]);
    instruction->AppendCalledComputation(called_computations[0]);
  } else {
    for (HloComputation* c : called_computations) instruction->AppendCalledComputation(c);
  }
  if (!p.metadata.empty()) {
    std::shared_ptr<const xla::OpMetadata> metadata;
    if (metadata_cache != nullptr) {
      if (metadata_cache->last != nullptr && metadata_cache->last_bytes == p.metadata) {
        metadata = metadata_cache->last;
      } else {
        auto it = metadata_cache->by_bytes.find(p.metadata);
        if (it != metadata_cache->by_bytes.end()) metadata = it->second;
      }
    }
    if (metadata == nullptr) {
      auto decoded = std::make_shared<xla::OpMetadata>();
      if (!DecodeSimpleMetadata(p.metadata, decoded.get()) &&
          (!Parse(p.metadata, decoded.get()) ||  // Parse clears first.
           !proto_io_internal::UnknownEnumValue(*decoded).empty())) {
        return nullptr;
      }
      metadata = std::move(decoded);
      if (metadata_cache != nullptr) metadata_cache->by_bytes.emplace(p.metadata, metadata);
    }
    if (metadata_cache != nullptr) {
      metadata_cache->last_bytes = p.metadata;
      metadata_cache->last = metadata;
    }
    instruction->set_shared_metadata(std::move(metadata));
  }
  if (!p.frontend_attributes.empty() &&
      !Parse(p.frontend_attributes, instruction->mutable_frontend_attributes())) {
    return nullptr;
  }
  if (!p.backend_config.empty()) instruction->set_backend_config(std::string(p.backend_config));
  if (p.sharding.data() != nullptr) {
    xla::OpSharding sharding;
    // An enum number XLA does not define: the reference reader names it.
    if (!Parse(p.sharding, &sharding) || !proto_io_internal::UnknownEnumValue(sharding).empty()) {
      return nullptr;
    }
    instruction->set_sharding(std::move(sharding));
  }
  instruction->set_is_composite(p.is_composite);
  if (!p.has_attributes) {
    detach_unless_returned.returned = true;
    return instruction;
  }

  HloAttributes* a = instruction->mutable_attrs();
  a->parameter_number = opcode == HloOpcode::kParameter ? p.parameter_number_ : 0;
  if (opcode == HloOpcode::kGetTupleElement) a->tuple_index = p.tuple_index;
  a->literal = std::move(literal);
  if (!PackedInt64s(p.dimensions, &a->dimensions) ||
      !PackedInt64s(p.dynamic_slice_sizes, &a->dynamic_slice_sizes) ||
      !PackedInt64s(p.gather_slice_sizes, &a->gather_slice_sizes) ||
      !PackedInt64s(p.fft_length, &a->fft_length)) {
    return nullptr;
  }
  for (const auto& [start, limit, stride] : p.slices) {
    a->slice_starts.push_back(start);
    a->slice_limits.push_back(limit);
    a->slice_strides.push_back(stride);
  }
  // A sub-message present but empty comes back only where the writer adds
  // it for the opcode; elsewhere the reference reader carries a marker.
  auto sub_message = [&](absl::string_view bytes, auto* box,
                         std::initializer_list<HloOpcode> written_for) {
    if (bytes.data() == nullptr) return true;
    auto* target = box->mutable_value();  // allocated only when present
    if (!Parse(bytes, target)) return false;
    if (target->ByteSizeLong() > 0) return true;
    return std::find(written_for.begin(), written_for.end(), opcode) != written_for.end();
  };
  a->has_window = p.window.data() != nullptr;
  if (a->has_window && !Parse(p.window, a->window.mutable_value())) return nullptr;
  if (!sub_message(p.convolution_dimension_numbers, &a->convolution_dimension_numbers,
                   {HloOpcode::kConvolution}) ||
      !sub_message(p.dot_dimension_numbers, &a->dot_dimension_numbers, {HloOpcode::kDot}) ||
      !sub_message(p.precision_config, &a->precision_config,
                   {HloOpcode::kDot, HloOpcode::kRaggedDot, HloOpcode::kConvolution,
                    HloOpcode::kCustomCall}) ||
      !sub_message(p.gather_dimension_numbers, &a->gather_dimension_numbers,
                   {HloOpcode::kGather}) ||
      !sub_message(p.scatter_dimension_numbers, &a->scatter_dimension_numbers,
                   {HloOpcode::kScatter}) ||
      !sub_message(p.padding_config, &a->padding_config, {HloOpcode::kPad})) {
    return nullptr;
  }
  a->feature_group_count = p.feature_group_count == 0 ? 1 : p.feature_group_count;
  a->batch_group_count = p.batch_group_count == 0 ? 1 : p.batch_group_count;
  a->indices_are_sorted = p.indices_are_sorted;
  a->unique_indices = p.unique_indices;
  if (direction) {
    a->comparison_direction = *direction;
    a->comparison_type = comparison_type;
  }
  if (fusion_kind) a->fusion_kind = *fusion_kind;
  a->custom_call_target = std::string(p.custom_call_target);
  a->custom_call_has_side_effect = p.custom_call_has_side_effect;
  a->custom_call_schedule = static_cast<xla::CustomCallSchedule>(p.custom_call_schedule);
  a->constrain_layout = p.constrain_layout;
  a->distribution = static_cast<xla::RandomDistribution>(p.distribution);
  a->rng_algorithm = static_cast<xla::RandomAlgorithm>(p.rng_algorithm);
  a->exponent_bits = p.exponent_bits;
  a->mantissa_bits = p.mantissa_bits;
  a->fft_type = static_cast<xla::FftType>(p.fft_type);
  a->is_stable = p.is_stable;
  a->is_reverse = p.is_reverse;
  a->num_carries = p.num_carries;
  a->is_associative = static_cast<xla::TriState>(p.is_associative);
  a->k = p.k;
  std::memcpy(&a->epsilon, &p.epsilon_bits, sizeof(float));
  a->feature_index = p.feature_index;
  if (p.channel_id > 0) a->channel_id = p.channel_id;
  a->use_global_device_ids = p.use_global_device_ids;
  a->is_host_transfer = p.is_host_transfer;
  a->infeed_config = std::string(p.infeed_config);
  a->outfeed_config = std::string(p.outfeed_config);
  a->async_execution_thread = std::string(p.async_execution_thread);
  detach_unless_returned.returned = true;
  return instruction;
}

}  // namespace proto_fast_internal
}  // namespace hloc
