// Sorting by keys (see key_sort.h).
#include "backend/host/key_sort.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>

namespace hloc {
namespace host {
namespace {

// Sign bit and exponent field of a float type's bits (exponent all ones
// with a non-zero fraction is NaN); nullopt for other types.
struct FloatBits {
  uint64_t sign;
  uint64_t exponent;
};
std::optional<FloatBits> FloatBitsOf(PrimitiveType type) {
  switch (type) {
    case xla::F16: return FloatBits{0x8000, 0x7c00};
    case xla::BF16: return FloatBits{0x8000, 0x7f80};
    case xla::F32: return FloatBits{0x80000000u, 0x7f800000u};
    case xla::F64: return FloatBits{uint64_t{1} << 63, 0x7ff0000000000000u};
    default: return std::nullopt;
  }
}

}  // namespace

bool HasOrderKeys(PrimitiveType type) {
  if (FloatBitsOf(type)) return true;
  switch (type) {
    case xla::PRED:
    case xla::S8: case xla::S16: case xla::S32: case xla::S64:
    case xla::U8: case xla::U16: case xla::U32: case xla::U64:
      return true;
    default:
      return false;
  }
}

namespace {

uint64_t ScalarBits(const Literal& literal) {
  uint64_t bits = 0;
  const size_t width = ByteWidth(literal.shape().element_type());
  std::memcpy(&bits, literal.raw(), std::min(sizeof(bits), width));
  return bits;
}

bool IsScalarConstant(const HloInstruction* i) {
  return i->opcode() == HloOpcode::kConstant && i->shape().IsScalar();
}

// The parameter a comparator side reads: p itself, or JAX's
// select(p != p, NaN, select(p == 0, 0, p)) of it (canonical = true).
std::optional<std::pair<const HloInstruction*, bool>> SideOf(const HloInstruction* side) {
  if (side->opcode() == HloOpcode::kParameter) return std::make_pair(side, false);
  if (side->opcode() != HloOpcode::kSelect) return std::nullopt;
  const HloInstruction* is_nan = side->operand(0);
  const HloInstruction* nan = side->operand(1);
  const HloInstruction* inner = side->operand(2);
  if (inner->opcode() != HloOpcode::kSelect) return std::nullopt;
  const HloInstruction* p = inner->operand(2);
  const HloInstruction* is_zero = inner->operand(0);
  const HloInstruction* zero = inner->operand(1);
  if (p->opcode() != HloOpcode::kParameter) return std::nullopt;
  const std::optional<FloatBits> f = FloatBitsOf(p->shape().element_type());
  if (!f || !IsScalarConstant(nan) || !IsScalarConstant(zero)) return std::nullopt;
  // A positive NaN (all NaNs then sort last, together) and a zero of
  // either sign (all zeros then tie between the negatives and positives).
  const uint64_t nan_bits = ScalarBits(nan->literal());
  const uint64_t zero_bits = ScalarBits(zero->literal()) & ~f->sign;
  if ((nan_bits & f->sign) != 0 || nan_bits <= f->exponent || zero_bits != 0) {
    return std::nullopt;
  }
  if (is_nan->opcode() != HloOpcode::kCompare ||
      is_nan->attrs().comparison_direction != ComparisonDirection::kNe ||
      is_nan->operand(0) != p || is_nan->operand(1) != p) {
    return std::nullopt;
  }
  if (is_zero->opcode() != HloOpcode::kCompare ||
      is_zero->attrs().comparison_direction != ComparisonDirection::kEq ||
      is_zero->operand(0) != p || !IsScalarConstant(is_zero->operand(1)) ||
      (ScalarBits(is_zero->operand(1)->literal()) & ~f->sign) != 0) {
    return std::nullopt;
  }
  return std::make_pair(p, true);
}

}  // namespace

std::optional<KeyOrder> ClassifySortComparator(const HloComputation& comparator,
                                               int64_t operands) {
  const HloInstruction* root = comparator.root();
  if (root == nullptr || root->opcode() != HloOpcode::kCompare ||
      comparator.num_parameters() != 2 * operands) {
    return std::nullopt;
  }
  ComparisonDirection direction = root->attrs().comparison_direction;
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kGt) {
    return std::nullopt;
  }
  auto lhs = SideOf(root->operand(0));
  auto rhs = SideOf(root->operand(1));
  if (!lhs || !rhs || lhs->second != rhs->second) return std::nullopt;
  int64_t a = lhs->first->parameter_number(), b = rhs->first->parameter_number();
  if (a % 2 == 1) {  // compare(K(p[2k+1]), K(p[2k])): the other direction.
    std::swap(a, b);
    direction = direction == ComparisonDirection::kLt ? ComparisonDirection::kGt
                                                      : ComparisonDirection::kLt;
  }
  if (a % 2 != 0 || b != a + 1) return std::nullopt;
  KeyOrder order;
  order.operand = a / 2;
  order.type = lhs->first->shape().element_type();
  order.descending = direction == ComparisonDirection::kGt;
  order.canonical = lhs->second;
  if (!HasOrderKeys(order.type) || rhs->first->shape().element_type() != order.type) {
    return std::nullopt;
  }
  const ComparisonType type = root->attrs().comparison_type;
  if (FloatBitsOf(order.type)) {
    if (type != ComparisonType::kTotalOrder) return std::nullopt;
  } else if (type == ComparisonType::kFloat || type == ComparisonType::kTotalOrder ||
             (type == ComparisonType::kSigned && !IsSignedInteger(order.type)) ||
             (type == ComparisonType::kUnsigned && IsSignedInteger(order.type))) {
    return std::nullopt;
  }
  return order;
}

namespace {

// keys[j] = the unsigned order key of element j (see key_sort.h), for
// elements of UInt's width.
template <typename UInt>
void LoadKeys(const KeyOrder& order, const uint8_t* data, int64_t base, int64_t stride,
              int64_t n, uint64_t* keys) {
  constexpr int kBits = 8 * sizeof(UInt);
  const std::optional<FloatBits> f = FloatBitsOf(order.type);
  const UInt sign = static_cast<UInt>(UInt{1} << (kBits - 1));
  const UInt exponent = f ? static_cast<UInt>(f->exponent) : 0;
  // Canonical values as JAX's comparator makes them: one positive NaN (which
  // one does not change the order), one zero.
  const UInt canonical_nan = static_cast<UInt>(exponent | ((exponent >> 1) & ~exponent));
  const bool is_float = f.has_value(), canonical = order.canonical && is_float;
  const bool is_signed = IsSignedInteger(order.type);
  const UInt flip = order.descending ? static_cast<UInt>(~UInt{0}) : UInt{0};
  for (int64_t j = 0; j < n; ++j) {
    UInt bits;  // A fixed-size copy: one load.
    std::memcpy(&bits, data + (base + j * stride) * sizeof(UInt), sizeof(UInt));
    if (is_float) {
      if (canonical) {
        const UInt magnitude = static_cast<UInt>(bits & ~sign);
        if (magnitude > exponent) bits = canonical_nan;
        if (magnitude == 0) bits = 0;
      }
      // Sign-magnitude to an unsigned order: negatives flipped whole,
      // positives above them.
      bits = (bits & sign) ? static_cast<UInt>(~bits) : static_cast<UInt>(bits | sign);
    } else if (is_signed) {
      bits ^= sign;
    }
    keys[j] = static_cast<UInt>(bits ^ flip);
  }
}

}  // namespace

void LoadOrderKeys(const KeyOrder& order, const uint8_t* data, int64_t base, int64_t stride,
                   int64_t n, uint64_t* keys) {
  switch (ByteWidth(order.type)) {
    case 1: LoadKeys<uint8_t>(order, data, base, stride, n, keys); break;
    case 2: LoadKeys<uint16_t>(order, data, base, stride, n, keys); break;
    case 4: LoadKeys<uint32_t>(order, data, base, stride, n, keys); break;
    default: LoadKeys<uint64_t>(order, data, base, stride, n, keys); break;
  }
}

void KeySorter::SortRow(const uint8_t* data, int64_t base, int64_t stride, int64_t n,
                        std::vector<int64_t>* perm) {
  const int width = ByteWidth(order_.type);
  keys_.resize(n);
  LoadOrderKeys(order_, data, base, stride, n, keys_.data());
  perm->resize(n);
  std::iota(perm->begin(), perm->end(), 0);
  if (n < 64) {
    std::stable_sort(perm->begin(), perm->end(),
                     [&](int64_t a, int64_t b) { return keys_[a] < keys_[b]; });
    return;
  }
  if (width <= 4 && n <= (int64_t{1} << 32)) {
    // Key and index in one word (key above, index below): each pass moves
    // 8 bytes per element, and the index rides along.
    for (int64_t j = 0; j < n; ++j) keys_[j] = keys_[j] << 32 | static_cast<uint64_t>(j);
    keys_scratch_.resize(n);
    uint64_t* words = RadixPasses(keys_.data(), keys_scratch_.data(), nullptr, nullptr, n,
                                  /*first_bit=*/32, width);
    for (int64_t j = 0; j < n; ++j) (*perm)[j] = static_cast<int64_t>(words[j] & 0xffffffffu);
    return;
  }
  keys_scratch_.resize(n);
  index_scratch_.resize(n);
  RadixPasses(keys_.data(), keys_scratch_.data(), perm->data(), index_scratch_.data(), n,
              /*first_bit=*/0, width);
}

bool KeySorter::SortRowValues(const uint8_t* data, uint8_t* out, int64_t base, int64_t stride,
                              int64_t n) {
  const int width = ByteWidth(order_.type);
  if (width > 4) return false;
  keys_.resize(n);
  LoadOrderKeys(order_, data, base, stride, n, keys_.data());
  for (int64_t j = 0; j < n; ++j) {
    uint32_t bits = 0;
    std::memcpy(&bits, data + (base + j * stride) * width, width);
    keys_[j] = keys_[j] << 32 | bits;
  }
  keys_scratch_.resize(n);
  // Equal keys keep their order (the passes are stable), so the carried
  // elements come out as the stable sort leaves them.
  const uint64_t* words = RadixPasses(keys_.data(), keys_scratch_.data(), nullptr, nullptr, n,
                                      /*first_bit=*/32, width);
  for (int64_t j = 0; j < n; ++j) {
    const uint32_t bits = static_cast<uint32_t>(words[j]);
    std::memcpy(out + (base + j * stride) * width, &bits, width);
  }
  return true;
}

uint64_t* KeySorter::RadixPasses(uint64_t* keys, uint64_t* keys_out, int64_t* index,
                                 int64_t* index_out, int64_t n, int first_bit, int digits) {
  int64_t* const index_result = index;
  // Counts of every digit of every key, in one pass.
  std::vector<std::array<int64_t, 256>> counts(digits);
  for (auto& c : counts) c.fill(0);
  for (int64_t j = 0; j < n; ++j) {
    for (int d = 0; d < digits; ++d) ++counts[d][(keys[j] >> (first_bit + 8 * d)) & 0xff];
  }
  for (int d = 0; d < digits; ++d) {
    std::array<int64_t, 256>& c = counts[d];
    if (*std::max_element(c.begin(), c.end()) == n) continue;  // Every key shares it.
    int64_t offset = 0;
    for (int64_t& count : c) {
      const int64_t here = count;
      count = offset;
      offset += here;
    }
    const int shift = first_bit + 8 * d;
    if (index == nullptr) {
      for (int64_t j = 0; j < n; ++j) keys_out[c[(keys[j] >> shift) & 0xff]++] = keys[j];
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t to = c[(keys[j] >> shift) & 0xff]++;
        keys_out[to] = keys[j];
        index_out[to] = index[j];
      }
      std::swap(index, index_out);
    }
    std::swap(keys, keys_out);
  }
  if (index != nullptr && index != index_result) std::copy(index, index + n, index_result);
  return keys;
}

}  // namespace host
}  // namespace hloc
