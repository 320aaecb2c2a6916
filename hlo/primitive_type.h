// Element types of HLO arrays. The enum itself is xla::PrimitiveType from
// xla_data.proto, so the IR and the wire format share one numbering; this file
// adds the facts passes and backends ask about a type (name, width, class).
#ifndef HLOC_HLO_PRIMITIVE_TYPE_H_
#define HLOC_HLO_PRIMITIVE_TYPE_H_

#include <cstdint>
#include <optional>


#include "absl/strings/string_view.h"
#include "hlo/xla_data.pb.h"

namespace hloc {

using xla::PrimitiveType;

// Lower-case name as HLO text spells it ("f32", "bf16", "pred", "token").
absl::string_view PrimitiveTypeName(PrimitiveType type);
// Inverse of PrimitiveTypeName; nullopt for an unknown name.
std::optional<PrimitiveType> PrimitiveTypeFromName(absl::string_view name);

// Bits one element occupies in a dense array (4 for s4, 1 for pred's value is
// still stored in a byte: see ByteWidth). 0 for tuple, token and opaque.
int BitWidth(PrimitiveType type);
// Bytes one element takes in a host literal: sub-byte types take one byte each.
int ByteWidth(PrimitiveType type);

bool IsArrayType(PrimitiveType type);  // Has elements: not tuple/token/opaque.
bool IsFloatingPoint(PrimitiveType type);
bool IsComplex(PrimitiveType type);
bool IsSignedInteger(PrimitiveType type);
bool IsUnsignedInteger(PrimitiveType type);
inline bool IsInteger(PrimitiveType type) {
  return IsSignedInteger(type) || IsUnsignedInteger(type);
}
// f8, f6 and f4 float types: the interpreter computes them in float; the
// backends load, store and convert them (arithmetic is upcast by a pass).
bool IsNarrowFloat(PrimitiveType type);
// The real component type of a complex type (f32 for c64).
PrimitiveType ComplexComponentType(PrimitiveType type);

}  // namespace hloc

#endif  // HLOC_HLO_PRIMITIVE_TYPE_H_
