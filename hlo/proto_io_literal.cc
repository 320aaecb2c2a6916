// Shapes and literals <-> XLA's ShapeProto / LiteralProto (see proto_io.h).
//
// XLA serializes a literal's array data in the order of its layout: element
// k of the data field is the k-th element in physical memory, walking
// minor_to_major[0] fastest. hloc literals are row-major whatever their
// layout, so both directions permute when the layout is not row-major.
#include <climits>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/proto_io.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

// Deeper tuple nesting than any real program uses; bounds recursion.
constexpr int kMaxTupleDepth = 64;
// Ranks beyond this are treated as corrupt input.
constexpr int64_t kMaxRank = 1024;

absl::Status ShapeError(const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat("bad ShapeProto: ", message));
}

absl::Status ShapeFromProtoImpl(const xla::ShapeProto& proto, int depth, Shape* out) {
  if (depth > kMaxTupleDepth) {
    return ShapeError(absl::StrCat("tuples nested deeper than ", kMaxTupleDepth));
  }
  const int raw_type = static_cast<int>(proto.element_type());
  if (!xla::PrimitiveType_IsValid(raw_type)) {
    return ShapeError(absl::StrCat("unknown primitive type enum value ", raw_type));
  }
  const PrimitiveType type = proto.element_type();
  if (type == xla::TUPLE) {
    if (proto.dimensions_size() != 0) return ShapeError("a tuple shape has dimensions");
    std::vector<Shape> elements(proto.tuple_shapes_size());
    for (int i = 0; i < proto.tuple_shapes_size(); ++i) {
      HLOC_RETURN_IF_ERROR(ShapeFromProtoImpl(proto.tuple_shapes(i), depth + 1, &elements[i]));
    }
    *out = Shape::Tuple(std::move(elements));
    return absl::OkStatus();
  }
  if (proto.tuple_shapes_size() != 0) {
    return ShapeError(absl::StrCat("a ", xla::PrimitiveType_Name(type), " shape has tuple elements"));
  }
  if (type == xla::TOKEN) {
    if (proto.dimensions_size() != 0) return ShapeError("a token shape has dimensions");
    *out = Shape::Token();
    return absl::OkStatus();
  }
  if (!IsArrayType(type)) {
    return ShapeError(
        absl::StrCat("element type ", xla::PrimitiveType_Name(type), " is not supported"));
  }
  if (proto.dimensions_size() > kMaxRank) {
    return ShapeError(absl::StrCat("rank ", proto.dimensions_size(), " exceeds ", kMaxRank));
  }
  if (proto.is_dynamic_dimension_size() != 0 &&
      proto.is_dynamic_dimension_size() != proto.dimensions_size()) {
    return ShapeError(absl::StrCat(proto.is_dynamic_dimension_size(),
                                   " is_dynamic_dimension flags for rank ",
                                   proto.dimensions_size()));
  }
  Shape shape(type, std::vector<int64_t>(proto.dimensions().begin(), proto.dimensions().end()));
  for (int i = 0; i < proto.is_dynamic_dimension_size(); ++i) {
    if (proto.is_dynamic_dimension(i)) shape.set_dynamic_dimension(i, true);
  }
  if (proto.has_layout()) {
    const xla::LayoutProto& lp = proto.layout();
    Layout layout;
    layout.minor_to_major.assign(lp.minor_to_major().begin(), lp.minor_to_major().end());
    for (const xla::TileProto& tp : lp.tiles()) {
      Tile tile;
      for (int64_t d : tp.dimensions()) {
        if (d <= 0 && d != Tile::kCombineDimension) {
          return ShapeError(absl::StrCat("tile dimension ", d, " is not positive"));
        }
        tile.dimensions.push_back(d);
      }
      layout.tiles.push_back(std::move(tile));
    }
    if (lp.element_size_in_bits() < 0) {
      return ShapeError(absl::StrCat("negative element_size_in_bits ", lp.element_size_in_bits()));
    }
    layout.element_size_in_bits = lp.element_size_in_bits();
    layout.memory_space = lp.memory_space();
    shape.set_layout(std::move(layout));
  }
  *out = std::move(shape);
  return absl::OkStatus();
}

bool IsRowMajor(const Shape& shape) {
  if (!shape.has_layout()) return true;
  const std::vector<int64_t>& m2m = shape.layout().minor_to_major;
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  }
  return true;
}

// Copies the `width`-byte elements of an array of `shape` between physical
// (layout) order and row-major order. The shape is valid with a layout.
void Permute(const Shape& shape, int width, const uint8_t* src, uint8_t* dst,
             bool physical_to_row_major) {
  const int64_t rank = shape.rank();
  const int64_t count = shape.element_count();
  if (count == 0) return;
  const std::vector<int64_t>& dims = shape.dimensions();
  const std::vector<int64_t>& m2m = shape.layout().minor_to_major;
  std::vector<int64_t> stride(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * dims[d + 1];
  std::vector<int64_t> index(rank, 0);
  int64_t logical = 0;
  for (int64_t physical = 0; physical < count; ++physical) {
    if (physical_to_row_major) {
      std::memcpy(dst + logical * width, src + physical * width, width);
    } else {
      std::memcpy(dst + physical * width, src + logical * width, width);
    }
    for (int64_t k = 0; k < rank; ++k) {
      const int64_t d = m2m[k];
      logical += stride[d];
      if (++index[d] < dims[d]) break;
      logical -= dims[d] * stride[d];
      index[d] = 0;
    }
  }
}

// The bytes field that holds elements of `type` (one byte per element, or
// two little-endian bytes for 16-bit types); nullptr for other types.
const std::string* BytesField(const xla::LiteralProto& p, PrimitiveType type) {
  switch (type) {
    case xla::S1: return &p.s1s();
    case xla::S2: return &p.s2s();
    case xla::S4: return &p.s4s();
    case xla::S8: return &p.s8s();
    case xla::U1: return &p.u1s();
    case xla::U2: return &p.u2s();
    case xla::U4: return &p.u4s();
    case xla::U8: return &p.u8s();
    case xla::S16: return &p.s16s();
    case xla::U16: return &p.u16s();
    case xla::F16: return &p.f16s();
    case xla::BF16: return &p.bf16s();
    case xla::F4E2M1FN: return &p.f4e2m1fns();
    case xla::F8E3M4: return &p.f8e3m4s();
    case xla::F8E4M3B11FNUZ: return &p.f8e4m3b11fnuzs();
    case xla::F8E4M3FN: return &p.f8e4m3fns();
    case xla::F8E4M3FNUZ: return &p.f8e4m3fnuzs();
    case xla::F8E4M3: return &p.f8e4m3s();
    case xla::F8E5M2FNUZ: return &p.f8e5m2fnuzs();
    case xla::F8E5M2: return &p.f8e5m2s();
    case xla::F8E8M0FNU: return &p.f8e8m0fnus();
    case xla::F6E3M2FN: return &p.f6e3m2fns();
    case xla::F6E2M3FN: return &p.f6e2m3fns();
    default: return nullptr;
  }
}

// Must go through mutable_*(): an unset field's const accessor returns
// protobuf's shared empty string.
std::string* MutableBytesField(xla::LiteralProto* p, PrimitiveType type) {
  switch (type) {
    case xla::S1: return p->mutable_s1s();
    case xla::S2: return p->mutable_s2s();
    case xla::S4: return p->mutable_s4s();
    case xla::S8: return p->mutable_s8s();
    case xla::U1: return p->mutable_u1s();
    case xla::U2: return p->mutable_u2s();
    case xla::U4: return p->mutable_u4s();
    case xla::U8: return p->mutable_u8s();
    case xla::S16: return p->mutable_s16s();
    case xla::U16: return p->mutable_u16s();
    case xla::F16: return p->mutable_f16s();
    case xla::BF16: return p->mutable_bf16s();
    case xla::F4E2M1FN: return p->mutable_f4e2m1fns();
    case xla::F8E3M4: return p->mutable_f8e3m4s();
    case xla::F8E4M3B11FNUZ: return p->mutable_f8e4m3b11fnuzs();
    case xla::F8E4M3FN: return p->mutable_f8e4m3fns();
    case xla::F8E4M3FNUZ: return p->mutable_f8e4m3fnuzs();
    case xla::F8E4M3: return p->mutable_f8e4m3s();
    case xla::F8E5M2FNUZ: return p->mutable_f8e5m2fnuzs();
    case xla::F8E5M2: return p->mutable_f8e5m2s();
    case xla::F8E8M0FNU: return p->mutable_f8e8m0fnus();
    case xla::F6E3M2FN: return p->mutable_f6e3m2fns();
    case xla::F6E2M3FN: return p->mutable_f6e2m3fns();
    default: return nullptr;
  }
}

// Number of elements of `type` the proto's data field holds, or an error
// when the field cannot hold whole elements.
absl::StatusOr<int64_t> ProtoElementCount(const xla::LiteralProto& p, PrimitiveType type) {
  if (const std::string* bytes = BytesField(p, type)) {
    const int64_t width = BitWidth(type) == 16 ? 2 : 1;
    if (static_cast<int64_t>(bytes->size()) % width != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("literal data of type ", PrimitiveTypeName(type), " has ", bytes->size(),
                       " bytes, not a multiple of ", width));
    }
    return static_cast<int64_t>(bytes->size()) / width;
  }
  switch (type) {
    case xla::PRED: return p.preds_size();
    case xla::S32: return p.s32s_size();
    case xla::S64: return p.s64s_size();
    case xla::U32: return p.u32s_size();
    case xla::U64: return p.u64s_size();
    case xla::F32: return p.f32s_size();
    case xla::F64: return p.f64s_size();
    case xla::C64:
    case xla::C128: {
      const int64_t n = type == xla::C64 ? p.c64s_size() : p.c128s_size();
      if (n % 2 != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("complex literal data has an odd number (", n, ") of components"));
      }
      return n / 2;
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("literals of type ", PrimitiveTypeName(type), " are not supported"));
  }
}

// Names of the data fields that are set, for error messages.
std::string DataFieldsPresent(const xla::LiteralProto& p) {
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  p.GetReflection()->ListFields(p, &fields);
  std::vector<std::string> names;
  for (const auto* f : fields) {
    if (f->name() == "shape" || f->name() == "tuple_literals") continue;
    names.push_back(f->name());
  }
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

// Keeps the low `bits` of a byte, sign-extending for signed types.
uint8_t NarrowToByte(PrimitiveType type, uint8_t raw) {
  const int bits = BitWidth(type);
  if (bits >= 8) return raw;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  uint8_t low = raw & mask;
  if (IsSignedInteger(type) && ((low >> (bits - 1)) & 1)) low |= static_cast<uint8_t>(~mask);
  return low;
}

// Decodes `count` elements (already checked against the field) into `dst`
// in the IR's element storage, keeping the proto's element order.
void DecodeData(const xla::LiteralProto& p, PrimitiveType type, int64_t count, uint8_t* dst) {
  if (const std::string* bytes = BytesField(p, type)) {
    const auto* src = reinterpret_cast<const uint8_t*>(bytes->data());
    if (BitWidth(type) == 16) {
      for (int64_t i = 0; i < count; ++i) {
        const uint16_t v = static_cast<uint16_t>(src[2 * i] | (src[2 * i + 1] << 8));
        std::memcpy(dst + 2 * i, &v, 2);
      }
    } else {
      for (int64_t i = 0; i < count; ++i) dst[i] = NarrowToByte(type, src[i]);
    }
    return;
  }
  auto copy = [&](const void* src, size_t element_bytes) {
    if (count > 0) std::memcpy(dst, src, count * element_bytes);
  };
  switch (type) {
    case xla::PRED:
      for (int64_t i = 0; i < count; ++i) dst[i] = p.preds(static_cast<int>(i)) ? 1 : 0;
      return;
    case xla::S32: return copy(p.s32s().data(), 4);
    case xla::S64: return copy(p.s64s().data(), 8);
    case xla::U32: return copy(p.u32s().data(), 4);
    case xla::U64: return copy(p.u64s().data(), 8);
    case xla::F32: return copy(p.f32s().data(), 4);
    case xla::F64: return copy(p.f64s().data(), 8);
    case xla::C64: return copy(p.c64s().data(), 8);
    case xla::C128: return copy(p.c128s().data(), 16);
    default: return;
  }
}

template <typename T>
void PutRepeated(const uint8_t* src, int64_t count, int components,
                 google::protobuf::RepeatedField<T>* out) {
  const int64_t n = count * components;
  if (n > INT_MAX) return;  // Larger than any proto can hold.
  out->Resize(static_cast<int>(n), T());
  if (n > 0) std::memcpy(out->mutable_data(), src, n * sizeof(T));
}

// Encodes `count` elements of IR storage at `src` (already in the order the
// proto wants) into the data field of `type`.
void EncodeData(PrimitiveType type, const uint8_t* src, int64_t count, xla::LiteralProto* p) {
  if (std::string* bytes = MutableBytesField(p, type)) {
    const int bits = BitWidth(type);
    if (bits == 16) {
      bytes->resize(2 * count);
      for (int64_t i = 0; i < count; ++i) {
        uint16_t v;
        std::memcpy(&v, src + 2 * i, 2);
        (*bytes)[2 * i] = static_cast<char>(v & 0xff);
        (*bytes)[2 * i + 1] = static_cast<char>(v >> 8);
      }
    } else {
      // XLA keeps sub-byte values in the low bits with the high bits clear.
      const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>((1u << bits) - 1);
      bytes->resize(count);
      for (int64_t i = 0; i < count; ++i) (*bytes)[i] = static_cast<char>(src[i] & mask);
    }
    return;
  }
  switch (type) {
    case xla::PRED:
      if (count > INT_MAX) return;
      p->mutable_preds()->Reserve(static_cast<int>(count));
      for (int64_t i = 0; i < count; ++i) p->add_preds(src[i] != 0);
      return;
    case xla::S32: return PutRepeated(src, count, 1, p->mutable_s32s());
    case xla::S64: return PutRepeated(src, count, 1, p->mutable_s64s());
    case xla::U32: return PutRepeated(src, count, 1, p->mutable_u32s());
    case xla::U64: return PutRepeated(src, count, 1, p->mutable_u64s());
    case xla::F32: return PutRepeated(src, count, 1, p->mutable_f32s());
    case xla::F64: return PutRepeated(src, count, 1, p->mutable_f64s());
    case xla::C64: return PutRepeated(src, count, 2, p->mutable_c64s());
    case xla::C128: return PutRepeated(src, count, 2, p->mutable_c128s());
    default: return;
  }
}

absl::StatusOr<Literal> LiteralFromProtoImpl(const xla::LiteralProto& proto, int depth) {
  if (depth > kMaxTupleDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("literal tuples nested deeper than ", kMaxTupleDepth));
  }
  if (!proto.has_shape()) return absl::InvalidArgumentError("LiteralProto has no shape");
  HLOC_ASSIGN_OR_RETURN(Shape shape, ShapeFromProto(proto.shape()));
  if (shape.IsTuple()) {
    if (proto.tuple_literals_size() != shape.tuple_shapes_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tuple literal of shape ", shape.ToString(), " has ",
                       proto.tuple_literals_size(), " elements"));
    }
    std::vector<Literal> elements;
    elements.reserve(proto.tuple_literals_size());
    for (int i = 0; i < proto.tuple_literals_size(); ++i) {
      auto element = LiteralFromProtoImpl(proto.tuple_literals(i), depth + 1);
      if (!element.ok()) {
        return absl::Status(element.status().code(),
                            absl::StrCat("tuple element ", i, ": ", element.status().message()));
      }
      if (!element->shape().Compatible(shape.tuple_shapes(i))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tuple element ", i, " has shape ", element->shape().ToString(),
            ", the tuple shape says ", shape.tuple_shapes(i).ToString()));
      }
      elements.push_back(*std::move(element));
    }
    return Literal::Tuple(std::move(elements));
  }
  if (proto.tuple_literals_size() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("literal of non-tuple shape ", shape.ToString(), " has tuple elements"));
  }
  if (shape.IsToken()) return Literal(shape);
  if (!shape.is_static() || proto.dynamic_sizes_size() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("literal of dynamic shape ", shape.ToString(), " is not supported"));
  }
  // Check the data against the shape before allocating anything.
  const int64_t expected = shape.element_count();  // ValidateShape bounded it.
  HLOC_ASSIGN_OR_RETURN(int64_t present, ProtoElementCount(proto, shape.element_type()));
  if (present != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("literal of shape ", shape.ToString(), " needs ", expected,
                     " elements, its data holds ", present, " (fields set: ",
                     DataFieldsPresent(proto), ")"));
  }
  HLOC_ASSIGN_OR_RETURN(Literal literal, Literal::Create(shape));
  if (IsRowMajor(shape)) {
    DecodeData(proto, shape.element_type(), expected, literal.mutable_raw());
  } else {
    const int width = ByteWidth(shape.element_type());
    std::vector<uint8_t> physical(static_cast<size_t>(expected) * width);
    DecodeData(proto, shape.element_type(), expected, physical.data());
    Permute(shape, width, physical.data(), literal.mutable_raw(), /*physical_to_row_major=*/true);
  }
  return literal;
}

void LiteralToProtoImpl(const Literal& literal, xla::LiteralProto* proto) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    xla::ShapeProto* tuple_shape = proto->mutable_shape();
    tuple_shape->set_element_type(xla::TUPLE);
    for (const Literal& element : literal.tuple_elements()) {
      xla::LiteralProto* element_proto = proto->add_tuple_literals();
      LiteralToProtoImpl(element, element_proto);
      *tuple_shape->add_tuple_shapes() = element_proto->shape();
    }
    return;
  }
  if (!shape.IsArray()) {
    *proto->mutable_shape() = ShapeToProto(shape);
    return;
  }
  if (shape.has_layout()) {
    *proto->mutable_shape() = ShapeToProto(shape);
  } else {
    Shape with_layout = shape;
    with_layout.set_layout(Layout::RowMajor(shape.rank()));
    *proto->mutable_shape() = ShapeToProto(with_layout);
  }
  const int64_t count = literal.element_count();
  if (count == 0 || literal.raw() == nullptr) return;
  if (IsRowMajor(shape)) {
    EncodeData(shape.element_type(), literal.raw(), count, proto);
    return;
  }
  const int width = ByteWidth(shape.element_type());
  std::vector<uint8_t> physical(static_cast<size_t>(count) * width);
  Permute(shape, width, literal.raw(), physical.data(), /*physical_to_row_major=*/false);
  EncodeData(shape.element_type(), physical.data(), count, proto);
}

}  // namespace

absl::StatusOr<Shape> ShapeFromProto(const xla::ShapeProto& proto) {
  Shape shape;
  HLOC_RETURN_IF_ERROR(ShapeFromProtoImpl(proto, 0, &shape));
  absl::Status status = ValidateShape(shape);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("bad ShapeProto: ", status.message()));
  }
  return shape;
}

xla::ShapeProto ShapeToProto(const Shape& shape) {
  xla::ShapeProto proto;
  proto.set_element_type(shape.element_type());
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      *proto.add_tuple_shapes() = ShapeToProto(element);
    }
    return proto;
  }
  for (int64_t i = 0; i < shape.rank(); ++i) {
    proto.add_dimensions(shape.dimensions(i));
    proto.add_is_dynamic_dimension(shape.is_dynamic_dimension(i));
  }
  if (shape.has_layout() && !shape.IsToken()) {
    const Layout& layout = shape.layout();
    xla::LayoutProto* lp = proto.mutable_layout();
    for (int64_t d : layout.minor_to_major) lp->add_minor_to_major(d);
    for (const Tile& tile : layout.tiles) {
      xla::TileProto* tp = lp->add_tiles();
      for (int64_t d : tile.dimensions) tp->add_dimensions(d);
    }
    lp->set_element_size_in_bits(layout.element_size_in_bits);
    lp->set_memory_space(layout.memory_space);
    lp->set_tail_padding_alignment_in_elements(1);  // What XLA always writes.
  }
  return proto;
}

absl::StatusOr<ProgramShape> ProgramShapeFromProto(const xla::ProgramShapeProto& proto) {
  if (proto.parameter_names_size() > proto.parameters_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("program shape has ", proto.parameter_names_size(), " parameter names for ",
                     proto.parameters_size(), " parameters"));
  }
  ProgramShape program;
  for (int i = 0; i < proto.parameters_size(); ++i) {
    auto shape = ShapeFromProto(proto.parameters(i));
    if (!shape.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("program shape parameter ", i, ": ", shape.status().message()));
    }
    program.parameters.push_back(*std::move(shape));
    program.parameter_names.push_back(i < proto.parameter_names_size() ? proto.parameter_names(i)
                                                                       : "");
  }
  auto result = ShapeFromProto(proto.result());
  if (!result.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("program shape result: ", result.status().message()));
  }
  program.result = *std::move(result);
  return program;
}

xla::ProgramShapeProto ProgramShapeToProto(const ProgramShape& program) {
  xla::ProgramShapeProto proto;
  for (size_t i = 0; i < program.parameters.size(); ++i) {
    *proto.add_parameters() = ShapeToProto(program.parameters[i]);
    proto.add_parameter_names(i < program.parameter_names.size() ? program.parameter_names[i]
                                                                 : "");
  }
  *proto.mutable_result() = ShapeToProto(program.result);
  return proto;
}

absl::StatusOr<Literal> LiteralFromProto(const xla::LiteralProto& proto) {
  return LiteralFromProtoImpl(proto, 0);
}

xla::LiteralProto LiteralToProto(const Literal& literal) {
  xla::LiteralProto proto;
  LiteralToProtoImpl(literal, &proto);
  return proto;
}

}  // namespace hloc
