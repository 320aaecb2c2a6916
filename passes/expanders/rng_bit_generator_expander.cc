#include "passes/expanders/rng_bit_generator_expander.h"

#include <cstdint>
#include <vector>

#include "hlo/status_macros.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace {

using expanders::ExpansionBuilder;

bool CanExpand(const HloInstruction& rng) {
  if (!rng.control_predecessors().empty() || !rng.control_successors().empty()) return false;
  const Shape& shape = rng.shape();
  const Shape& state = rng.operand(0)->shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2 || !state.IsArray() ||
      state.element_type() != xla::U64 || state.rank() != 1 || !state.is_static()) {
    return false;
  }
  const Shape& bits = shape.tuple_shapes(1);
  if (!bits.IsArray() || !bits.is_static() || !IsInteger(bits.element_type()) ||
      BitWidth(bits.element_type()) < 8 || BitWidth(bits.element_type()) > 64) {
    return false;
  }
  const int64_t size = state.dimensions(0);
  switch (rng.attrs().rng_algorithm) {
    case xla::RNG_THREE_FRY: return size == 2;
    case xla::RNG_PHILOX:
    case xla::RNG_DEFAULT: return size == 2 || size == 3;
    default: return false;
  }
}

// Unsigned integer arithmetic on arrays of one shape (scalars broadcast).
class Bits {
 public:
  Bits(ExpansionBuilder& b, std::vector<int64_t> dims) : b_(b), dims_(std::move(dims)) {}

  HloInstruction* Constant(PrimitiveType type, uint64_t value) {
    Literal literal(Shape::Scalar(type));
    literal.SetFromUint64(0, value);
    return b_.Constant(std::move(literal));
  }
  // A scalar broadcast to the shape.
  HloInstruction* Splat(HloInstruction* scalar) { return b_.Splat(scalar, dims_); }
  HloInstruction* Splat(PrimitiveType type, uint64_t value) { return Splat(Constant(type, value)); }
  HloInstruction* Op(HloOpcode opcode, HloInstruction* a, HloInstruction* c) {
    return b_.Binary(opcode, a, c);
  }
  HloInstruction* Lo32(HloInstruction* x) { return b_.Convert(x, xla::U32); }
  HloInstruction* Hi32(HloInstruction* x) {
    return b_.Convert(Op(HloOpcode::kShiftRightLogical, x, SplatLike(x, 32)), xla::U32);
  }
  HloInstruction* Wide(HloInstruction* x) { return b_.Convert(x, xla::U64); }
  HloInstruction* RotateLeft(HloInstruction* x, int distance) {
    return Op(HloOpcode::kOr, Op(HloOpcode::kShiftLeft, x, Splat(xla::U32, distance)),
              Op(HloOpcode::kShiftRightLogical, x, Splat(xla::U32, 32 - distance)));
  }

 private:
  // `value` as a constant of x's type and shape (x may be a scalar).
  HloInstruction* SplatLike(HloInstruction* x, uint64_t value) {
    if (x == nullptr) return nullptr;
    HloInstruction* c = Constant(x->shape().element_type(), value);
    return x->shape().rank() == 0 ? c : b_.Splat(c, x->shape().dimensions());
  }

  ExpansionBuilder& b_;
  std::vector<int64_t> dims_;
};

// The u64 state element i as a scalar.
HloInstruction* StateWord(ExpansionBuilder& b, HloInstruction* state, int64_t i) {
  return b.Reshape(b.Slice(state, {i}, {i + 1}), {});
}

HloInstruction* StateOf(ExpansionBuilder& b, const std::vector<HloInstruction*>& words) {
  std::vector<HloInstruction*> parts;
  for (HloInstruction* w : words) parts.push_back(b.Reshape(w, {1}));
  return b.Concatenate(parts, 0);
}

// Output words (u32 [words] or u64 [elements]) as the bits shape's type.
HloInstruction* AsBits(ExpansionBuilder& b, HloInstruction* words, const Shape& bits) {
  return b.Convert(b.Reshape(words, bits.dimensions()), bits.element_type());
}

// Philox-4x32-10 over `blocks` counters; the u32 words x0..x3 per block.
std::vector<HloInstruction*> Philox(ExpansionBuilder& b, HloInstruction* key, HloInstruction* lo0,
                                    HloInstruction* hi0, int64_t blocks) {
  Bits x(b, {blocks});
  HloInstruction* lo = x.Op(HloOpcode::kAdd, x.Splat(lo0), b.Iota(xla::U64, {blocks}, 0));
  HloInstruction* carry = b.Compare(lo, x.Splat(lo0), ComparisonDirection::kLt);
  HloInstruction* hi =
      b.Select(carry, x.Splat(b.Binary(HloOpcode::kAdd, hi0, x.Constant(xla::U64, 1))),
               x.Splat(hi0));
  std::vector<HloInstruction*> w = {x.Lo32(lo), x.Hi32(lo), x.Lo32(hi), x.Hi32(hi)};
  HloInstruction* k0 = x.Lo32(key);
  HloInstruction* k1 = x.Hi32(key);
  for (int round = 0; round < 10; ++round) {
    HloInstruction* p0 = x.Op(HloOpcode::kMultiply, x.Wide(w[0]), x.Splat(xla::U64, 0xD2511F53u));
    HloInstruction* p1 = x.Op(HloOpcode::kMultiply, x.Wide(w[2]), x.Splat(xla::U64, 0xCD9E8D57u));
    HloInstruction* y0 = x.Op(HloOpcode::kXor, x.Op(HloOpcode::kXor, x.Hi32(p1), w[1]), x.Splat(k0));
    HloInstruction* y2 = x.Op(HloOpcode::kXor, x.Op(HloOpcode::kXor, x.Hi32(p0), w[3]), x.Splat(k1));
    w = {y0, x.Lo32(p1), y2, x.Lo32(p0)};
    k0 = b.Binary(HloOpcode::kAdd, k0, x.Constant(xla::U32, 0x9E3779B9u));
    k1 = b.Binary(HloOpcode::kAdd, k1, x.Constant(xla::U32, 0xBB67AE85u));
  }
  return w;
}

// Threefry-2x32-20 of the u64 counters `counters` (any shape); (x0, x1).
std::vector<HloInstruction*> Threefry(ExpansionBuilder& b, HloInstruction* key,
                                      HloInstruction* counters) {
  if (counters == nullptr) return {nullptr, nullptr};
  Bits x(b, counters->shape().dimensions());
  HloInstruction* k0 = x.Lo32(key);
  HloInstruction* k1 = x.Hi32(key);
  HloInstruction* k2 = b.Binary(HloOpcode::kXor, b.Binary(HloOpcode::kXor, k0, k1),
                                x.Constant(xla::U32, 0x1BD11BDAu));
  HloInstruction* const ks[3] = {k0, k1, k2};
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  HloInstruction* x0 = x.Op(HloOpcode::kAdd, x.Lo32(counters), x.Splat(k0));
  HloInstruction* x1 = x.Op(HloOpcode::kAdd, x.Hi32(counters), x.Splat(k1));
  for (int group = 0; group < 5; ++group) {
    const int* rotation = kRotations + 4 * (group % 2);
    for (int r = 0; r < 4; ++r) {
      x0 = x.Op(HloOpcode::kAdd, x0, x1);
      x1 = x.Op(HloOpcode::kXor, x.RotateLeft(x1, rotation[r]), x0);
    }
    x0 = x.Op(HloOpcode::kAdd, x0, x.Splat(ks[(group + 1) % 3]));
    x1 = x.Op(HloOpcode::kAdd, x1,
              x.Splat(b.Binary(HloOpcode::kAdd, ks[(group + 2) % 3],
                               x.Constant(xla::U32, static_cast<uint64_t>(group + 1)))));
  }
  return {x0, x1};
}

// counter + iota over `dims` (row-major), as u64.
HloInstruction* Counters(ExpansionBuilder& b, HloInstruction* counter,
                         const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return b.Binary(HloOpcode::kAdd, b.Splat(counter, dims),
                  b.Reshape(b.Iota(xla::U64, {count}, 0), dims));
}

// (new state, bits) for philox.
std::vector<HloInstruction*> ExpandPhilox(ExpansionBuilder& b, HloInstruction* state,
                                          int64_t state_size, const Shape& bits) {
  const bool wide = BitWidth(bits.element_type()) == 64;
  const int64_t n = bits.element_count();
  const int64_t words = wide ? 2 * n : n;
  const int64_t blocks = (words + 3) / 4;
  HloInstruction* key = StateWord(b, state, 0);
  HloInstruction* lo0 = StateWord(b, state, 1);
  HloInstruction* hi0 = StateWord(b, state, state_size == 3 ? 2 : 0);
  std::vector<HloInstruction*> w = Philox(b, key, lo0, hi0, blocks);
  std::vector<HloInstruction*> columns;
  for (HloInstruction* word : w) columns.push_back(b.Reshape(word, {blocks, 1}));
  HloInstruction* stream = b.Reshape(b.Concatenate(columns, 1), {4 * blocks});
  if (4 * blocks != words) stream = b.Slice(stream, {0}, {words});
  if (wide) {
    Bits x(b, {n});
    HloInstruction* pairs = b.Reshape(stream, {n, 2});
    HloInstruction* low = x.Wide(b.Reshape(b.Slice(pairs, {0, 0}, {n, 1}), {n}));
    HloInstruction* high = x.Wide(b.Reshape(b.Slice(pairs, {0, 1}, {n, 2}), {n}));
    stream = x.Op(HloOpcode::kOr, low, x.Op(HloOpcode::kShiftLeft, high, x.Splat(xla::U64, 32)));
  }
  Bits scalar(b, {});
  HloInstruction* used = scalar.Constant(xla::U64, static_cast<uint64_t>(blocks));
  HloInstruction* lo = b.Binary(HloOpcode::kAdd, lo0, used);
  std::vector<HloInstruction*> new_state = {key, lo};
  if (state_size == 3) {
    new_state.push_back(b.Select(b.Compare(lo, lo0, ComparisonDirection::kLt),
                                 b.Binary(HloOpcode::kAdd, hi0, scalar.Constant(xla::U64, 1)),
                                 hi0));
  }
  return {StateOf(b, new_state), AsBits(b, stream, bits)};
}

// (new state, bits) for three-fry.
std::vector<HloInstruction*> ExpandThreefry(ExpansionBuilder& b, HloInstruction* state,
                                            const Shape& bits) {
  HloInstruction* key = StateWord(b, state, 0);
  HloInstruction* counter = StateWord(b, state, 1);
  Bits scalar(b, {});
  HloInstruction* out = nullptr;
  uint64_t used = 0;
  if (BitWidth(bits.element_type()) == 64) {
    const int64_t n = bits.element_count();
    std::vector<HloInstruction*> x = Threefry(b, key, Counters(b, counter, {n}));
    Bits v(b, {n});
    out = v.Op(HloOpcode::kOr, v.Wide(x[0]),
               v.Op(HloOpcode::kShiftLeft, v.Wide(x[1]), v.Splat(xla::U64, 32)));
    used = static_cast<uint64_t>(n);
  } else if (bits.rank() == 0) {
    out = Threefry(b, key, counter)[0];
    used = 1;
  } else {
    // Halve the first even dimension (else the first largest) and interleave.
    int64_t split = -1;
    for (int64_t d = 0; d < bits.rank() && split < 0; ++d) {
      if (bits.dimensions(d) % 2 == 0) split = d;
    }
    if (split < 0) {
      for (int64_t d = 0; d < bits.rank(); ++d) {
        if (split < 0 || bits.dimensions(d) > bits.dimensions(split)) split = d;
      }
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < split; ++d) outer *= bits.dimensions(d);
    for (int64_t d = split + 1; d < bits.rank(); ++d) inner *= bits.dimensions(d);
    const int64_t n = bits.dimensions(split), half = (n + 1) / 2;
    std::vector<HloInstruction*> x = Threefry(b, key, Counters(b, counter, {outer, half, inner}));
    HloInstruction* pairs = b.Concatenate({b.Reshape(x[0], {outer, half, 1, inner}),
                                           b.Reshape(x[1], {outer, half, 1, inner})},
                                          2);
    out = b.Reshape(pairs, {outer, 2 * half, inner});
    if (2 * half != n) out = b.Slice(out, {0, 0, 0}, {outer, n, inner});
    used = static_cast<uint64_t>(outer * half * inner);
  }
  HloInstruction* new_counter =
      b.Binary(HloOpcode::kAdd, counter, scalar.Constant(xla::U64, used));
  return {StateOf(b, {key, new_counter}), AsBits(b, out, bits)};
}

absl::Status Expand(HloInstruction* rng) {
  ExpansionBuilder b(rng->parent(), rng);
  HloInstruction* state = rng->operand(0);
  const Shape& bits = rng->shape().tuple_shapes(1);
  std::vector<HloInstruction*> result =
      rng->attrs().rng_algorithm == xla::RNG_THREE_FRY
          ? ExpandThreefry(b, state, bits)
          : ExpandPhilox(b, state, state->shape().dimensions(0), bits);
  HloInstruction* tuple = b.Tuple(result);
  HLOC_RETURN_IF_ERROR(b.status());
  return expanders::ReplaceInstruction(rng, tuple);
}

}  // namespace

absl::StatusOr<bool> RngBitGeneratorExpander::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* rng : computation->MakeInstructionPostOrder()) {
      if (rng->opcode() != HloOpcode::kRngBitGenerator || !CanExpand(*rng)) continue;
      HLOC_RETURN_IF_ERROR(Expand(rng));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
