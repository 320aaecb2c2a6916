// rng: uniform and normal draws from the evaluator's deterministic stream
// (splitmix64 seeded by EvaluatorOptions::rng_seed). XLA does not define
// rng's bits, so values are reproducible run to run but not equal to XLA's.
// rng-bit-generator: XLA's counter-based generators (Threefry-2x32 with 20
// rounds, Philox-4x32 with 10 rounds), laid out exactly as XLA's expansion
// lays them out so the bits and the new state match XLA bit for bit.
#include <cmath>
#include <cstring>
#include <vector>

#include "hlo/evaluator/ops.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {

absl::StatusOr<Literal> EvalRng(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  if (ops.size() != 2 || ops[0]->element_count() != 1 || ops[1]->element_count() != 1) {
    return InstructionError(hlo, "rng needs two scalar parameters");
  }
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  const PrimitiveType type = hlo.shape().element_type();
  auto uniform01 = [&]() { return static_cast<double>(ctx.NextRandom() >> 11) * 0x1.0p-53; };
  switch (hlo.attrs().distribution) {
    case xla::RNG_UNIFORM:
      if (IsFloatingPoint(type)) {
        const double a = ops[0]->GetAsDouble(0), b = ops[1]->GetAsDouble(0);
        for (int64_t i = 0; i < out.element_count(); ++i) {
          double v = a + (b - a) * uniform01();
          out.SetFromDouble(i, v);
          if (out.GetAsDouble(i) >= b && b > a) out.SetFromDouble(i, a);  // Keep [a, b).
        }
      } else if (IsInteger(type)) {
        const int64_t a = ops[0]->GetAsInt64(0), b = ops[1]->GetAsInt64(0);
        const uint64_t range = static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
        for (int64_t i = 0; i < out.element_count(); ++i) {
          const uint64_t r = range == 0 ? 0 : ctx.NextRandom() % range;
          out.SetFromInt64(i, static_cast<int64_t>(static_cast<uint64_t>(a) + r));
        }
      } else if (type == xla::PRED) {
        for (int64_t i = 0; i < out.element_count(); ++i) out.SetFromInt64(i, ctx.NextRandom() & 1);
      } else {
        return InstructionUnimplemented(hlo, "uniform rng of ", PrimitiveTypeName(type));
      }
      return std::move(out);
    case xla::RNG_NORMAL: {
      if (!IsFloatingPoint(type)) return InstructionError(hlo, "normal rng needs a float type");
      const double mean = ops[0]->GetAsDouble(0), stddev = ops[1]->GetAsDouble(0);
      for (int64_t i = 0; i < out.element_count(); ++i) {
        // Box-Muller.
        const double u1 = 1.0 - uniform01(), u2 = uniform01();
        const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
        out.SetFromDouble(i, mean + stddev * z);
      }
      return std::move(out);
    }
    default:
      return InstructionError(hlo, "unknown rng distribution");
  }
}

namespace {

uint32_t RotateLeft(uint32_t v, int distance) { return (v << distance) | (v >> (32 - distance)); }

// Threefry-2x32, 20 rounds, on the counter words (x0, x1) under key (k0, k1).
void Threefry2x32(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x0 += ks[0];
  x1 += ks[1];
  // Five groups of four rounds; after group g the key schedule word pair
  // (g+1, g+2) mod 3 is injected together with the group number.
  for (int group = 0; group < 5; ++group) {
    const int* rot = kRotations + 4 * (group % 2);
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = RotateLeft(x1, rot[r]) ^ x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
}

// Philox-4x32, 10 rounds, on the counter words x[0..3] under key (k0, k1).
void Philox4x32(uint32_t k0, uint32_t k1, uint32_t x[4]) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53u} * x[0];
    const uint64_t p1 = uint64_t{0xCD9E8D57u} * x[2];
    const uint32_t y0 = static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ k0;
    const uint32_t y2 = static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ k1;
    x[0] = y0;
    x[1] = static_cast<uint32_t>(p1);
    x[2] = y2;
    x[3] = static_cast<uint32_t>(p0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

// Stores the low BitWidth(type) bits of `bits` as element i of `out`:
// narrower types keep the low bits (sign-extended for signed sub-byte types,
// which the literal stores one per byte).
void StoreBits(Literal& out, int64_t i, uint64_t bits) {
  const PrimitiveType type = out.shape().element_type();
  const int width = BitWidth(type);
  const int bytes = ByteWidth(type);
  if (width < 8) {
    uint64_t v = bits & ((uint64_t{1} << width) - 1);
    if (IsSignedInteger(type) && (v >> (width - 1)) != 0) v |= ~((uint64_t{1} << width) - 1);
    const uint8_t b = static_cast<uint8_t>(v);
    std::memcpy(out.mutable_raw() + i, &b, 1);
    return;
  }
  // Little-endian host: the low `bytes` bytes of the word are its low bits.
  std::memcpy(out.mutable_raw() + i * bytes, &bits, bytes);
}

// Threefry bits as XLA's expansion produces them. For 64-bit outputs element
// i is Threefry(counter + i) with word 0 in the low half. For 32-bit and
// narrower outputs XLA halves one dimension (the first even one, else the
// first largest), draws one counter per element of the halved shape (row-major
// index added to the counter) and interleaves the two output words along that
// dimension, dropping the last one when the dimension is odd. Returns the
// number of counters used.
uint64_t ThreefryFill(uint64_t key, uint64_t counter, Literal& out) {
  const uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  const Shape& shape = out.shape();
  auto draw = [&](uint64_t c, uint32_t& x0, uint32_t& x1) {
    x0 = static_cast<uint32_t>(c);
    x1 = static_cast<uint32_t>(c >> 32);
    Threefry2x32(k0, k1, x0, x1);
  };
  if (BitWidth(shape.element_type()) == 64) {
    for (int64_t i = 0; i < out.element_count(); ++i) {
      uint32_t x0, x1;
      draw(counter + static_cast<uint64_t>(i), x0, x1);
      StoreBits(out, i, uint64_t{x0} | (uint64_t{x1} << 32));
    }
    return static_cast<uint64_t>(out.element_count());
  }
  const int64_t rank = shape.rank();
  if (rank == 0) {
    uint32_t x0, x1;
    draw(counter, x0, x1);
    StoreBits(out, 0, x0);
    return 1;
  }
  int64_t split = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (shape.dimensions(d) % 2 == 0) {
      split = d;
      break;
    }
  }
  if (split < 0) {
    for (int64_t d = 0; d < rank; ++d) {
      if (split < 0 || shape.dimensions(d) > shape.dimensions(split)) split = d;
    }
  }
  // Row-major view as [outer, n, inner] around the split dimension.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < split; ++d) outer *= shape.dimensions(d);
  for (int64_t d = split + 1; d < rank; ++d) inner *= shape.dimensions(d);
  const int64_t n = shape.dimensions(split), half = (n + 1) / 2;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t h = 0; h < half; ++h) {
      for (int64_t in = 0; in < inner; ++in) {
        const int64_t c = (o * half + h) * inner + in;
        uint32_t x0, x1;
        draw(counter + static_cast<uint64_t>(c), x0, x1);
        StoreBits(out, (o * n + 2 * h) * inner + in, x0);
        if (2 * h + 1 < n) StoreBits(out, (o * n + 2 * h + 1) * inner + in, x1);
      }
    }
  }
  return static_cast<uint64_t>(outer * half * inner);
}

// Philox bits as XLA's expansion produces them: a flat stream of 32-bit words,
// four per 128-bit counter (counter + j for the j-th block, carrying into the
// high half). 64-bit elements take two consecutive words, low word first;
// narrower elements take the low bits of one word. Returns the number of
// counters used.
uint64_t PhiloxFill(uint64_t key, uint64_t counter_lo, uint64_t counter_hi, Literal& out) {
  const uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  const bool wide = BitWidth(out.shape().element_type()) == 64;
  const int64_t n = out.element_count();
  const int64_t words = wide ? 2 * n : n;
  const int64_t blocks = (words + 3) / 4;
  for (int64_t j = 0; j < blocks; ++j) {
    const uint64_t lo = counter_lo + static_cast<uint64_t>(j);
    const uint64_t hi = lo < counter_lo ? counter_hi + 1 : counter_hi;
    uint32_t x[4] = {static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32),
                     static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32)};
    Philox4x32(k0, k1, x);
    if (wide) {
      for (int64_t w = 0; w < 2; ++w) {
        const int64_t i = 2 * j + w;
        if (i < n) StoreBits(out, i, uint64_t{x[2 * w]} | (uint64_t{x[2 * w + 1]} << 32));
      }
    } else {
      for (int64_t w = 0; w < 4; ++w) {
        const int64_t i = 4 * j + w;
        if (i < n) StoreBits(out, i, x[w]);
      }
    }
  }
  return static_cast<uint64_t>(blocks);
}

}  // namespace

absl::StatusOr<Literal> EvalRngBitGenerator(const HloInstruction& hlo, Operands ops) {
  const Shape& shape = hlo.shape();
  if (ops.size() != 1 || !shape.IsTuple() || shape.tuple_shapes().size() != 2) {
    return InstructionError(hlo, "rng-bit-generator needs one state operand and a (state, bits) tuple shape");
  }
  const Literal& state = *ops[0];
  if (state.shape().element_type() != xla::U64 || state.shape().rank() != 1) {
    return InstructionError(hlo, "rng-bit-generator state must be a u64 vector");
  }
  const Shape& bits_shape = shape.tuple_shapes(1);
  const PrimitiveType type = bits_shape.element_type();
  if (!IsInteger(type) || BitWidth(type) > 64) {
    return InstructionUnimplemented(hlo, "rng-bit-generator of ", PrimitiveTypeName(type));
  }
  if (shape.tuple_shapes(0).element_type() != xla::U64 ||
      shape.tuple_shapes(0).dimensions() != state.shape().dimensions()) {
    return InstructionError(hlo, "rng-bit-generator result state shape differs from the operand's");
  }
  const int64_t state_size = state.element_count();
  absl::Span<const uint64_t> s = state.data<uint64_t>();
  HLOC_ASSIGN_OR_RETURN(Literal bits, NewLiteral(hlo, bits_shape));
  Literal new_state(state.shape());
  absl::Span<uint64_t> ns = new_state.mutable_data<uint64_t>();
  xla::RandomAlgorithm algorithm = hlo.attrs().rng_algorithm;
  // XLA's CPU and GPU backends expand the default algorithm as Philox.
  if (algorithm == xla::RNG_DEFAULT) algorithm = xla::RNG_PHILOX;
  switch (algorithm) {
    case xla::RNG_THREE_FRY: {
      if (state_size != 2) return InstructionError(hlo, "three-fry state must be u64[2]");
      ns[0] = s[0];
      ns[1] = s[1] + ThreefryFill(s[0], s[1], bits);
      break;
    }
    case xla::RNG_PHILOX: {
      // u64[3]: key, then the 128-bit counter low word first. u64[2]: XLA
      // reads the state reversed, so the counter is (s[1], high = s[0]) and
      // only its low word is written back.
      if (state_size != 2 && state_size != 3) {
        return InstructionError(hlo, "philox state must be u64[2] or u64[3]");
      }
      const uint64_t lo = s[1], hi = state_size == 3 ? s[2] : s[0];
      const uint64_t used = PhiloxFill(s[0], lo, hi, bits);
      ns[0] = s[0];
      ns[1] = lo + used;
      if (state_size == 3) ns[2] = ns[1] < lo ? hi + 1 : hi;
      break;
    }
    default:
      return InstructionError(hlo, "unknown rng-bit-generator algorithm");
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(new_state));
  parts.push_back(std::move(bits));
  return Literal::Tuple(std::move(parts));
}

}  // namespace eval
}  // namespace hloc
