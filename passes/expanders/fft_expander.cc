#include "passes/expanders/fft_expander.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace {

using expanders::ExpansionBuilder;

// Lengths up to this are one matrix product; longer composite ones split
// (fft_expander.h says why 8).
constexpr int64_t kDirectLength = 8;

PrimitiveType RealTypeOf(PrimitiveType complex) {
  return complex == xla::C128 ? xla::F64 : xla::F32;
}

// exp(sign 2 pi i (a b mod n) / n) over the [rows, cols] grid of (a, b), in
// `complex`'s precision.
HloInstruction* Twiddles(ExpansionBuilder& b, int64_t rows, int64_t cols, int64_t n, int sign,
                         PrimitiveType complex) {
  const std::vector<int64_t> dims = {rows, cols};
  HloInstruction* product =
      b.Binary(HloOpcode::kMultiply, b.Iota(xla::S64, dims, 0), b.Iota(xla::S64, dims, 1));
  HloInstruction* turns =
      b.Convert(b.Binary(HloOpcode::kRemainder, product, b.Splat(b.IndexScalar(xla::S64, n), dims)),
                xla::F64);
  HloInstruction* angle =
      b.Binary(HloOpcode::kMultiply, turns,
               b.Splat(b.Scalar(xla::F64, sign * 2 * M_PI / static_cast<double>(n)), dims));
  const PrimitiveType real = RealTypeOf(complex);
  return b.Binary(HloOpcode::kComplex, b.ConvertIfNeeded(b.Unary(HloOpcode::kCos, angle), real),
                  b.ConvertIfNeeded(b.Unary(HloOpcode::kSin, angle), real));
}

// The largest factor of n up to sqrt(n) (1 for primes).
int64_t SplitFactor(int64_t n) {
  int64_t best = 1;
  for (int64_t f = 2; f * f <= n; ++f) {
    if (n % f == 0) best = f;
  }
  return best;
}

// The length-n transform of complex `x` along `axis`.
HloInstruction* Transform(ExpansionBuilder& b, HloInstruction* x, int64_t axis, int sign) {
  if (x == nullptr) return b.MissingOperand();
  const std::vector<int64_t> dims = x->shape().dimensions();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t n = dims[axis];
  const PrimitiveType complex = x->shape().element_type();
  if (n <= 1) return x;
  const int64_t n1 = SplitFactor(n);
  if (n <= kDirectLength || n1 == 1) {
    // x . W along the axis, whose result dimension comes last: moved back.
    xla::DotDimensionNumbers numbers;
    numbers.add_lhs_contracting_dimensions(axis);
    numbers.add_rhs_contracting_dimensions(0);
    HloInstruction* product = b.Dot(x, Twiddles(b, n, n, n, sign, complex), numbers);
    if (axis == rank - 1) return product;
    // permutation[d]: which product dimension becomes dimension d.
    std::vector<int64_t> permutation;
    for (int64_t d = 0; d < axis; ++d) permutation.push_back(d);
    permutation.push_back(rank - 1);
    for (int64_t d = axis; d < rank - 1; ++d) permutation.push_back(d);
    return b.Transpose(product, permutation);
  }
  // Four steps over [n1, n2], j = n2 j1 + j2 and k = k1 + n1 k2.
  const int64_t n2 = n / n1;
  std::vector<int64_t> split = dims;
  split[axis] = n1;
  split.insert(split.begin() + axis + 1, n2);
  HloInstruction* y = Transform(b, b.Reshape(x, split), axis, sign);  // j1 -> k1
  HloInstruction* twiddles =
      b.Broadcast(Twiddles(b, n1, n2, n, sign, complex), split, {axis, axis + 1});
  y = Transform(b, b.Binary(HloOpcode::kMultiply, y, twiddles), axis + 1, sign);  // j2 -> k2
  std::vector<int64_t> swap;
  for (int64_t d = 0; d <= rank; ++d) swap.push_back(d);
  std::swap(swap[axis], swap[axis + 1]);
  return b.Reshape(b.Transpose(y, swap), dims);
}

HloInstruction* Scale(ExpansionBuilder& b, HloInstruction* x, double factor) {
  if (x == nullptr) return b.MissingOperand();
  const PrimitiveType type = x->shape().element_type();
  const bool complex = type == xla::C64 || type == xla::C128;
  HloInstruction* scalar = b.Scalar(complex ? RealTypeOf(type) : type, factor);
  if (complex) {
    scalar = b.Binary(HloOpcode::kComplex, scalar, b.Scalar(RealTypeOf(type), 0));
  }
  return b.Binary(HloOpcode::kMultiply, x, b.Splat(scalar, x->shape().dimensions()));
}

// Whether it replaced `fft` (shapes it has no rule for stay).
absl::StatusOr<bool> Expand(HloInstruction* fft) {
  const HloAttributes& attrs = fft->attrs();
  const std::vector<int64_t>& lengths = attrs.fft_length;
  HloInstruction* x = fft->operand(0);
  if (!fft->shape().IsArray() || !x->shape().IsArray() || lengths.empty() ||
      static_cast<int64_t>(lengths.size()) > x->shape().rank()) {
    return false;
  }
  const int64_t rank = x->shape().rank();
  const int64_t first = rank - static_cast<int64_t>(lengths.size());
  // Shapes with no rule are declined before anything is built: a real RFFT
  // operand, and an IRFFT whose missing tail (n - m of its n) mirrors what
  // the operand's m hold.
  if (attrs.fft_type == xla::RFFT && x->shape().element_type() != xla::F32 &&
      x->shape().element_type() != xla::F64) {
    return false;
  }
  if (attrs.fft_type == xla::IRFFT &&
      lengths.back() - x->shape().dimensions(rank - 1) + 1 > x->shape().dimensions(rank - 1)) {
    return false;
  }
  double count = 1;
  for (int64_t n : lengths) count *= static_cast<double>(n);
  ExpansionBuilder b(fft->parent(), fft);
  HloInstruction* out = nullptr;
  switch (attrs.fft_type) {
    case xla::FFT:
    case xla::IFFT: {
      const int sign = attrs.fft_type == xla::FFT ? -1 : 1;
      out = x;
      for (int64_t d = first; d < rank; ++d) out = Transform(b, out, d, sign);
      if (attrs.fft_type == xla::IFFT && count > 0) out = Scale(b, out, 1 / count);
      break;
    }
    case xla::RFFT: {
      const PrimitiveType real = x->shape().element_type();
      out = b.Binary(HloOpcode::kComplex, x, b.Splat(b.Scalar(real, 0), x->shape().dimensions()));
      for (int64_t d = first; d < rank; ++d) out = Transform(b, out, d, -1);
      std::vector<int64_t> limits = fft->shape().dimensions();
      out = b.Slice(out, std::vector<int64_t>(rank, 0), limits);
      break;
    }
    case xla::IRFFT: {
      out = x;
      for (int64_t d = first; d < rank - 1; ++d) out = Transform(b, out, d, 1);
      // The full last dimension: X[0 .. m) then conj X[n - k] for k in [m, n).
      const int64_t n = lengths.back();
      const int64_t m = x->shape().dimensions(rank - 1);
      if (n - m > 0) {
        std::vector<int64_t> starts(rank, 0), limits = x->shape().dimensions();
        starts[rank - 1] = 1;
        limits[rank - 1] = n - m + 1;
        HloInstruction* tail = b.Build(
            HloOpcode::kReverse, {b.Slice(out, starts, limits)},
            [&](HloInstruction& reverse) { reverse.mutable_attrs()->dimensions = {rank - 1}; });
        HloInstruction* conj =
            b.Binary(HloOpcode::kComplex, b.Unary(HloOpcode::kReal, tail),
                     b.Unary(HloOpcode::kNegate, b.Unary(HloOpcode::kImag, tail)));
        out = b.Concatenate({out, conj}, rank - 1);
      } else if (n < m) {
        std::vector<int64_t> limits = x->shape().dimensions();
        limits[rank - 1] = n;
        out = b.Slice(out, std::vector<int64_t>(rank, 0), limits);
      }
      out = Transform(b, out, rank - 1, 1);
      out = b.Unary(HloOpcode::kReal, out);
      if (count > 0) out = Scale(b, out, 1 / count);
      break;
    }
    default:
      return false;
  }
  HLOC_RETURN_IF_ERROR(b.status());
  if (out == nullptr || out->shape().dimensions() != fft->shape().dimensions() ||
      out->shape().element_type() != fft->shape().element_type()) {
    return absl::InternalError(absl::StrCat(
        "fft-expander: the expansion of %", fft->name(), " has shape ",
        out == nullptr ? "none" : out->shape().ToString(), ", not ", fft->shape().ToString()));
  }
  HLOC_RETURN_IF_ERROR(expanders::ReplaceInstruction(fft, out));
  return true;
}

}  // namespace

absl::StatusOr<bool> FftExpander::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* fft : computation->MakeInstructionPostOrder()) {
      if (fft->opcode() != HloOpcode::kFft || fft->operand_count() != 1) continue;
      if (!fft->control_predecessors().empty() || !fft->control_successors().empty()) continue;
      HLOC_ASSIGN_OR_RETURN(const bool expanded, Expand(fft));
      changed = changed || expanded;
    }
  }
  return changed;
}

}  // namespace hloc
