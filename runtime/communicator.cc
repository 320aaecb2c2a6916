// Element types, reductions and the one-device communicator (see
// communicator.h).
#include "runtime/communicator.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace runtime {
namespace {

template <typename T>
T Apply(ReductionKind kind, T a, T b) {
  switch (kind) {
    case ReductionKind::kSum: return static_cast<T>(a + b);
    case ReductionKind::kProduct: return static_cast<T>(a * b);
    case ReductionKind::kMin: return std::min(a, b);
    case ReductionKind::kMax: return std::max(a, b);
    case ReductionKind::kAnd:
    case ReductionKind::kOr:
      break;
  }
  return a;
}

template <typename T>
T ApplyBits(ReductionKind kind, T a, T b) {
  if (kind == ReductionKind::kAnd) return static_cast<T>(a & b);
  if (kind == ReductionKind::kOr) return static_cast<T>(a | b);
  return Apply(kind, a, b);
}

template <typename T>
void ReduceTyped(ReductionKind kind, void* accumulator, const void* value, int64_t count,
                 bool bits) {
  T* acc = static_cast<T*>(accumulator);
  const T* in = static_cast<const T*>(value);
  if (kind == ReductionKind::kSum) {  // The common case, kept a plain loop.
    for (int64_t i = 0; i < count; ++i) acc[i] = static_cast<T>(acc[i] + in[i]);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    if constexpr (std::is_integral_v<T>) {
      acc[i] = bits ? ApplyBits(kind, acc[i], in[i]) : Apply(kind, acc[i], in[i]);
    } else {
      acc[i] = Apply(kind, acc[i], in[i]);
    }
  }
}

float Bf16ToFloat(uint16_t v) {
  const uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // Round to nearest even.
  return static_cast<uint16_t>(bits >> 16);
}

// IEEE binary16 <-> binary32, subnormals included.
float F16ToFloat(uint16_t v) {
  const uint32_t sign = static_cast<uint32_t>(v & 0x8000u) << 16;
  uint32_t exponent = (v >> 10) & 0x1fu;
  uint32_t mantissa = v & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // Inf / NaN.
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal: shift the leading 1 up into the implicit bit.
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN.
  if (magnitude >= 0x47800000u) {
    // At or above 65536: infinity. Below it, values that round up to 65536
    // are caught by the carry into the exponent further down.
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (magnitude < 0x38800000u) {
    // Below the smallest normal (2^-14): a subnormal, rounded to nearest even.
    if (magnitude < 0x33000000u) return sign;  // Below half the smallest subnormal.
    const uint32_t exponent = magnitude >> 23;
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    // The value is mantissa * 2^(exponent - 150); in units of 2^-24, the
    // smallest subnormal, that is mantissa >> (126 - exponent).
    const uint32_t shift = 126 - exponent;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t rounded = magnitude - 0x38000000u;  // Rebias 127 -> 15.
  rounded += 0xfffu + ((rounded >> 13) & 1u);  // Round to nearest even.
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void ReduceHalfWidth(ReductionKind kind, void* accumulator, const void* value, int64_t count) {
  uint16_t* acc = static_cast<uint16_t*>(accumulator);
  const uint16_t* in = static_cast<const uint16_t*>(value);
  for (int64_t i = 0; i < count; ++i) {
    acc[i] = FromFloat(Apply(kind, ToFloat(acc[i]), ToFloat(in[i])));
  }
}

}  // namespace

int ElementBytes(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kU8: return 1;
    case ElementType::kS16:
    case ElementType::kU16:
    case ElementType::kF16:
    case ElementType::kBF16: return 2;
    case ElementType::kS32:
    case ElementType::kU32:
    case ElementType::kF32: return 4;
    case ElementType::kS64:
    case ElementType::kU64:
    case ElementType::kF64: return 8;
  }
  return 1;
}

absl::string_view ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kPred: return "pred";
    case ElementType::kS8: return "s8";
    case ElementType::kS16: return "s16";
    case ElementType::kS32: return "s32";
    case ElementType::kS64: return "s64";
    case ElementType::kU8: return "u8";
    case ElementType::kU16: return "u16";
    case ElementType::kU32: return "u32";
    case ElementType::kU64: return "u64";
    case ElementType::kF16: return "f16";
    case ElementType::kBF16: return "bf16";
    case ElementType::kF32: return "f32";
    case ElementType::kF64: return "f64";
  }
  return "?";
}

absl::string_view ReductionKindName(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::kSum: return "sum";
    case ReductionKind::kProduct: return "product";
    case ReductionKind::kMin: return "min";
    case ReductionKind::kMax: return "max";
    case ReductionKind::kAnd: return "and";
    case ReductionKind::kOr: return "or";
  }
  return "?";
}

absl::Status CheckReduction(ElementType type, ReductionKind kind) {
  const bool floating = type == ElementType::kF32 || type == ElementType::kF64 ||
                        type == ElementType::kF16 || type == ElementType::kBF16;
  if ((kind == ReductionKind::kAnd || kind == ReductionKind::kOr) && floating) {
    return absl::InvalidArgumentError(absl::StrCat("reduction ", ReductionKindName(kind),
                                                   " over ", ElementTypeName(type)));
  }
  return absl::OkStatus();
}

void ReduceInto(ElementType type, ReductionKind kind, void* accumulator, const void* value,
                int64_t count) {
  switch (type) {
    case ElementType::kPred: {
      // pred: sum is or, product is and (XLA's add/multiply over pred).
      uint8_t* acc = static_cast<uint8_t*>(accumulator);
      const uint8_t* in = static_cast<const uint8_t*>(value);
      for (int64_t i = 0; i < count; ++i) {
        const bool a = acc[i] != 0, b = in[i] != 0;
        switch (kind) {
          case ReductionKind::kSum:
          case ReductionKind::kMax:
          case ReductionKind::kOr: acc[i] = a || b; break;
          case ReductionKind::kProduct:
          case ReductionKind::kMin:
          case ReductionKind::kAnd: acc[i] = a && b; break;
        }
      }
      return;
    }
    case ElementType::kS8: return ReduceTyped<int8_t>(kind, accumulator, value, count, true);
    case ElementType::kS16: return ReduceTyped<int16_t>(kind, accumulator, value, count, true);
    case ElementType::kS32: return ReduceTyped<int32_t>(kind, accumulator, value, count, true);
    case ElementType::kS64: return ReduceTyped<int64_t>(kind, accumulator, value, count, true);
    case ElementType::kU8: return ReduceTyped<uint8_t>(kind, accumulator, value, count, true);
    case ElementType::kU16: return ReduceTyped<uint16_t>(kind, accumulator, value, count, true);
    case ElementType::kU32: return ReduceTyped<uint32_t>(kind, accumulator, value, count, true);
    case ElementType::kU64: return ReduceTyped<uint64_t>(kind, accumulator, value, count, true);
    case ElementType::kF32: return ReduceTyped<float>(kind, accumulator, value, count, false);
    case ElementType::kF64: return ReduceTyped<double>(kind, accumulator, value, count, false);
    case ElementType::kF16:
      return ReduceHalfWidth<F16ToFloat, FloatToF16>(kind, accumulator, value, count);
    case ElementType::kBF16:
      return ReduceHalfWidth<Bf16ToFloat, FloatToBf16>(kind, accumulator, value, count);
  }
}

absl::Status CheckGroup(const CollectiveKey& key, DeviceGroup group, int64_t rank, int64_t size,
                        int64_t* index) {
  *index = -1;
  std::vector<bool> seen(static_cast<size_t>(size), false);
  for (size_t i = 0; i < group.size(); ++i) {
    const int64_t d = group[i];
    if (d < 0 || d >= size || seen[static_cast<size_t>(d)]) {
      return absl::InvalidArgumentError(
          absl::StrCat(key.name, ": device group {", absl::StrJoin(group, ","),
                       "} is not a set of device ids below ", size));
    }
    seen[static_cast<size_t>(d)] = true;
    if (d == rank) *index = static_cast<int64_t>(i);
  }
  if (*index < 0) {
    return absl::InvalidArgumentError(absl::StrCat(key.name, ": device ", rank,
                                                   " is not in its group {",
                                                   absl::StrJoin(group, ","), "}"));
  }
  return absl::OkStatus();
}

absl::Status SelfCommunicator::AllReduce(const CollectiveKey& key, DeviceGroup group,
                                         ElementType type, ReductionKind kind,
                                         const void* input, void* output, int64_t count) {
  int64_t index;
  if (absl::Status s = CheckGroup(key, group, 0, 1, &index); !s.ok()) return s;
  if (input != output) std::memcpy(output, input, static_cast<size_t>(count * ElementBytes(type)));
  return CheckReduction(type, kind);
}

absl::Status SelfCommunicator::AllGather(const CollectiveKey& key, DeviceGroup group,
                                         const void* input, void* output, int64_t bytes) {
  int64_t index;
  if (absl::Status s = CheckGroup(key, group, 0, 1, &index); !s.ok()) return s;
  if (input != output) std::memcpy(output, input, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

absl::Status SelfCommunicator::ReduceScatter(const CollectiveKey& key, DeviceGroup group,
                                             ElementType type, ReductionKind kind,
                                             const void* input, void* output, int64_t count) {
  return AllReduce(key, group, type, kind, input, output, count);
}

absl::Status SelfCommunicator::AllToAll(const CollectiveKey& key, DeviceGroup group,
                                        const void* input, void* output, int64_t bytes) {
  return AllGather(key, group, input, output, bytes);
}

absl::Status SelfCommunicator::CollectivePermute(
    const CollectiveKey& key, absl::Span<const std::pair<int64_t, int64_t>> pairs,
    const void* input, void* output, int64_t bytes) {
  bool received = false;
  for (const auto& [source, target] : pairs) {
    if (source != 0 || target != 0) {
      return absl::InvalidArgumentError(absl::StrCat(key.name, ": pair {", source, ",", target,
                                                     "} names a device other than 0"));
    }
    received = true;
  }
  if (!received) {
    std::memset(output, 0, static_cast<size_t>(bytes));
  } else if (input != output) {
    std::memcpy(output, input, static_cast<size_t>(bytes));
  }
  return absl::OkStatus();
}

absl::Status SelfCommunicator::Broadcast(const CollectiveKey& key, DeviceGroup group,
                                         int64_t root, const void* input, void* output,
                                         int64_t bytes) {
  if (root != 0) {
    return absl::InvalidArgumentError(absl::StrCat(key.name, ": root ", root, " out of range"));
  }
  return AllGather(key, group, input, output, bytes);
}

}  // namespace runtime
}  // namespace hloc
