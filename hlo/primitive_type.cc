#include "hlo/primitive_type.h"

#include <array>

namespace hloc {
namespace {

struct TypeInfo {
  PrimitiveType type;
  absl::string_view name;
  int bits;
};

// One row per element type HLO text can name.
constexpr std::array<TypeInfo, 34> kTypes = {{
    {xla::PRED, "pred", 8},
    {xla::S1, "s1", 1},
    {xla::S2, "s2", 2},
    {xla::S4, "s4", 4},
    {xla::S8, "s8", 8},
    {xla::S16, "s16", 16},
    {xla::S32, "s32", 32},
    {xla::S64, "s64", 64},
    {xla::U1, "u1", 1},
    {xla::U2, "u2", 2},
    {xla::U4, "u4", 4},
    {xla::U8, "u8", 8},
    {xla::U16, "u16", 16},
    {xla::U32, "u32", 32},
    {xla::U64, "u64", 64},
    {xla::F16, "f16", 16},
    {xla::BF16, "bf16", 16},
    {xla::F32, "f32", 32},
    {xla::F64, "f64", 64},
    {xla::C64, "c64", 64},
    {xla::C128, "c128", 128},
    {xla::F8E5M2, "f8e5m2", 8},
    {xla::F8E4M3FN, "f8e4m3fn", 8},
    {xla::F8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    {xla::F8E5M2FNUZ, "f8e5m2fnuz", 8},
    {xla::F8E4M3FNUZ, "f8e4m3fnuz", 8},
    {xla::F8E4M3, "f8e4m3", 8},
    {xla::F8E3M4, "f8e3m4", 8},
    {xla::F4E2M1FN, "f4e2m1fn", 4},
    {xla::F8E8M0FNU, "f8e8m0fnu", 8},
    {xla::F6E3M2FN, "f6e3m2fn", 6},
    {xla::F6E2M3FN, "f6e2m3fn", 6},
    {xla::TUPLE, "tuple", 0},
    {xla::TOKEN, "token", 0},
}};

// Shape::IsArray and the byte widths ask for every instruction: index by
// the enum value instead of searching the table.
const TypeInfo* Find(PrimitiveType type) {
  static const auto* const kByType = [] {
    auto* table = new std::array<const TypeInfo*, xla::PrimitiveType_MAX + 1>();
    for (const TypeInfo& info : kTypes) (*table)[info.type] = &info;
    return table;
  }();
  if (type < 0 || type > xla::PrimitiveType_MAX) return nullptr;
  return (*kByType)[type];
}

}  // namespace

absl::string_view PrimitiveTypeName(PrimitiveType type) {
  if (type == xla::OPAQUE_TYPE) return "opaque";
  const TypeInfo* info = Find(type);
  return info ? info->name : "invalid";
}

std::optional<PrimitiveType> PrimitiveTypeFromName(absl::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name) return info.type;
  }
  if (name == "opaque") return xla::OPAQUE_TYPE;
  return std::nullopt;
}

int BitWidth(PrimitiveType type) {
  if (type == xla::PRED) return 8;
  const TypeInfo* info = Find(type);
  return info ? info->bits : 0;
}

int ByteWidth(PrimitiveType type) {
  int bits = BitWidth(type);
  return bits == 0 ? 0 : (bits + 7) / 8;
}

bool IsArrayType(PrimitiveType type) {
  return type != xla::TUPLE && type != xla::TOKEN && type != xla::OPAQUE_TYPE &&
         Find(type) != nullptr;
}

bool IsFloatingPoint(PrimitiveType type) {
  switch (type) {
    case xla::F16:
    case xla::BF16:
    case xla::F32:
    case xla::F64:
      return true;
    default:
      return IsNarrowFloat(type);
  }
}

bool IsNarrowFloat(PrimitiveType type) {
  switch (type) {
    case xla::F8E5M2:
    case xla::F8E4M3FN:
    case xla::F8E4M3B11FNUZ:
    case xla::F8E5M2FNUZ:
    case xla::F8E4M3FNUZ:
    case xla::F8E4M3:
    case xla::F8E3M4:
    case xla::F4E2M1FN:
    case xla::F8E8M0FNU:
    case xla::F6E3M2FN:
    case xla::F6E2M3FN:
      return true;
    default:
      return false;
  }
}

bool IsComplex(PrimitiveType type) { return type == xla::C64 || type == xla::C128; }

bool IsSignedInteger(PrimitiveType type) {
  switch (type) {
    case xla::S1:
    case xla::S2:
    case xla::S4:
    case xla::S8:
    case xla::S16:
    case xla::S32:
    case xla::S64:
      return true;
    default:
      return false;
  }
}

bool IsUnsignedInteger(PrimitiveType type) {
  switch (type) {
    case xla::U1:
    case xla::U2:
    case xla::U4:
    case xla::U8:
    case xla::U16:
    case xla::U32:
    case xla::U64:
      return true;
    default:
      return false;
  }
}

PrimitiveType ComplexComponentType(PrimitiveType type) {
  return type == xla::C128 ? xla::F64 : xla::F32;
}

}  // namespace hloc
