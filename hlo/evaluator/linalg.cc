// cholesky and triangular-solve on batches of matrices (the two minor
// dimensions), computed in double (real types) and rounded once; fft (all
// four types, 1-3 dimensions) by direct DFT sums in complex<double>.
#include <cmath>
#include <complex>
#include <vector>

#include "hlo/evaluator/ops.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {

absl::StatusOr<Literal> EvalCholesky(const HloInstruction& hlo, Operands ops) {
  const Literal& a = *ops[0];
  const Shape& s = a.shape();
  if (!s.IsArray() || s.rank() < 2 || s.dimensions(s.rank() - 1) != s.dimensions(s.rank() - 2) ||
      IsComplex(s.element_type()) || !IsFloatingPoint(s.element_type())) {
    return InstructionError(hlo, "cholesky needs real square matrices");
  }
  const int64_t n = s.dimensions(s.rank() - 1);
  const int64_t batches = n == 0 ? 0 : a.element_count() / (n * n);
  const bool lower = hlo.attrs().cholesky_options->lower();
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  std::vector<double> l(n * n);
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t base = b * n * n;
    // Read the triangle named by `lower` as a lower-triangular matrix.
    auto at = [&](int64_t i, int64_t j) {
      return lower ? a.GetAsDouble(base + i * n + j) : a.GetAsDouble(base + j * n + i);
    };
    std::fill(l.begin(), l.end(), 0.0);
    for (int64_t j = 0; j < n; ++j) {
      double d = at(j, j);
      for (int64_t k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
      const double ljj = std::sqrt(d);  // NaN when not positive definite.
      l[j * n + j] = ljj;
      for (int64_t i = j + 1; i < n; ++i) {
        double v = at(i, j);
        for (int64_t k = 0; k < j; ++k) v -= l[i * n + k] * l[j * n + k];
        l[i * n + j] = v / ljj;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        out.SetFromDouble(base + i * n + j, lower ? l[i * n + j] : l[j * n + i]);
      }
    }
  }
  return std::move(out);
}

absl::StatusOr<Literal> EvalTriangularSolve(const HloInstruction& hlo, Operands ops) {
  const Literal& a = *ops[0];
  const Literal& b = *ops[1];
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  if (!as.IsArray() || as.rank() < 2 || bs.rank() != as.rank() ||
      IsComplex(as.element_type()) || !IsFloatingPoint(as.element_type())) {
    return InstructionError(hlo, "triangular-solve needs real matrices of equal rank");
  }
  const xla::TriangularSolveOptions& opt = hlo.attrs().triangular_solve_options;
  const int64_t r = as.rank();
  const int64_t m = bs.dimensions(r - 2), n = bs.dimensions(r - 1);
  const int64_t k = opt.left_side() ? m : n;
  if (as.dimensions(r - 1) != k || as.dimensions(r - 2) != k) {
    return InstructionError(hlo, "a is not a square matrix matching b");
  }
  const int64_t batches = (m == 0 || n == 0) ? 0 : b.element_count() / (m * n);
  const bool transpose = opt.transpose_a() == xla::TriangularSolveOptions::TRANSPOSE ||
                         opt.transpose_a() == xla::TriangularSolveOptions::ADJOINT;
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  std::vector<double> t(k * k), x(m * n);
  for (int64_t bt = 0; bt < batches; ++bt) {
    // t = op(a) restricted to its triangle, as an explicit k x k matrix.
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        const bool in_triangle = opt.lower() ? j <= i : j >= i;
        double v = in_triangle ? a.GetAsDouble(bt * k * k + i * k + j) : 0.0;
        if (i == j && opt.unit_diagonal()) v = 1.0;
        if (transpose) {
          t[j * k + i] = v;
        } else {
          t[i * k + j] = v;
        }
      }
    }
    const bool t_lower = opt.lower() != transpose;
    for (int64_t i = 0; i < m * n; ++i) x[i] = b.GetAsDouble(bt * m * n + i);
    if (opt.left_side()) {
      // t x = b, column by column.
      for (int64_t c = 0; c < n; ++c) {
        for (int64_t s = 0; s < m; ++s) {
          const int64_t i = t_lower ? s : m - 1 - s;
          double v = x[i * n + c];
          for (int64_t j = 0; j < m; ++j) {
            if (j != i && (t_lower ? j < i : j > i)) v -= t[i * k + j] * x[j * n + c];
          }
          x[i * n + c] = v / t[i * k + i];
        }
      }
    } else {
      // x t = b, row by row: x[row][j] for j in the order the triangle allows.
      for (int64_t row = 0; row < m; ++row) {
        for (int64_t s = 0; s < n; ++s) {
          const int64_t j = t_lower ? n - 1 - s : s;
          double v = x[row * n + j];
          for (int64_t i = 0; i < n; ++i) {
            if (i != j && (t_lower ? i > j : i < j)) v -= x[row * n + i] * t[i * k + j];
          }
          x[row * n + j] = v / t[j * k + j];
        }
      }
    }
    for (int64_t i = 0; i < m * n; ++i) out.SetFromDouble(bt * m * n + i, x[i]);
  }
  return std::move(out);
}

namespace {

using Complex = std::complex<double>;

// In-place 1-D DFT along axis `axis` of a row-major complex array (direct
// O(n^2) sums; inverse includes the 1/n scale).
void DftAlongAxis(std::vector<Complex>& data, const std::vector<int64_t>& dims, int64_t axis,
                  bool inverse) {
  const int64_t n = dims[axis];
  if (n <= 1) return;
  int64_t inner = 1, outer = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  std::vector<Complex> twiddle(n), line(n);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k) {
    const double angle = sign * 2.0 * M_PI * static_cast<double>(k) / static_cast<double>(n);
    twiddle[k] = Complex(std::cos(angle), std::sin(angle));
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      Complex* base = data.data() + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) {
        Complex sum = 0;
        for (int64_t t = 0; t < n; ++t) sum += base[t * inner] * twiddle[(k * t) % n];
        line[k] = inverse ? sum / static_cast<double>(n) : sum;
      }
      for (int64_t k = 0; k < n; ++k) base[k * inner] = line[k];
    }
  }
}

}  // namespace

absl::StatusOr<Literal> EvalFft(const HloInstruction& hlo, Operands ops) {
  const Literal& in = *ops[0];
  const Shape& in_shape = in.shape();
  const Shape& out_shape = hlo.shape();
  const std::vector<int64_t>& lengths = hlo.attrs().fft_length;
  const int64_t k = static_cast<int64_t>(lengths.size());
  const int64_t rank = in_shape.rank();
  if (k < 1 || k > 3 || k > rank || !out_shape.IsArray() || out_shape.rank() != rank) {
    return InstructionError(hlo, "fft_length must name 1 to 3 trailing dimensions");
  }
  const xla::FftType type = hlo.attrs().fft_type;
  const bool real_in = type == xla::RFFT, real_out = type == xla::IRFFT;
  if (real_in == IsComplex(in_shape.element_type()) ||
      real_out == IsComplex(out_shape.element_type())) {
    return InstructionError(hlo, "operand/result types do not fit the fft type");
  }
  // Work on the input's dims; for IRFFT the last dim holds n/2+1 values.
  std::vector<int64_t> dims = in_shape.dimensions();
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = rank - k + i;
    const int64_t expected = (real_out && i == k - 1) ? lengths[i] / 2 + 1 : lengths[i];
    if (dims[d] != expected ||
        out_shape.dimensions(d) != (real_in && i == k - 1 ? lengths[i] / 2 + 1 : lengths[i])) {
      return InstructionError(hlo, "dimension ", d, " does not match fft_length");
    }
  }
  std::vector<Complex> data(in.element_count());
  for (int64_t i = 0; i < in.element_count(); ++i) data[i] = in.GetAsComplex(i);
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, out_shape));
  const bool inverse = type == xla::IFFT || type == xla::IRFFT;
  if (!real_out) {
    for (int64_t d = rank - k; d < rank; ++d) DftAlongAxis(data, dims, d, inverse);
    if (real_in) {
      // Keep the first n/2+1 entries of the last dimension.
      const int64_t n = dims[rank - 1], kept = out_shape.dimensions(rank - 1);
      for (int64_t i = 0; i < out.element_count(); ++i) {
        out.SetFromComplex(i, data[(i / kept) * n + i % kept]);
      }
    } else {
      for (int64_t i = 0; i < out.element_count(); ++i) out.SetFromComplex(i, data[i]);
    }
    return std::move(out);
  }
  // IRFFT: inverse transforms on the outer fft dims, then a Hermitian
  // complex-to-real inverse along the last one.
  for (int64_t d = rank - k; d < rank - 1; ++d) DftAlongAxis(data, dims, d, true);
  const int64_t half = dims[rank - 1], n = lengths[k - 1];
  const int64_t rows = half == 0 ? 0 : static_cast<int64_t>(data.size()) / half;
  for (int64_t r = 0; r < rows; ++r) {
    const Complex* x = data.data() + r * half;
    for (int64_t t = 0; t < n; ++t) {
      Complex sum = 0;
      for (int64_t f = 0; f < n; ++f) {
        const Complex coef = f < half ? x[f] : std::conj(x[n - f]);
        const double angle = 2.0 * M_PI * static_cast<double>((f * t) % n) / static_cast<double>(n);
        sum += coef * Complex(std::cos(angle), std::sin(angle));
      }
      out.SetFromDouble(r * n + t, sum.real() / static_cast<double>(n));
    }
  }
  return std::move(out);
}

}  // namespace eval
}  // namespace hloc
