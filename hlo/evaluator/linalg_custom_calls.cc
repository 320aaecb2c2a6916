#include "hlo/evaluator/linalg_custom_calls.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <vector>

#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

using Complex = std::complex<double>;

// One matrix of a batch, row-major, in complex<double>.
class Matrix {
 public:
  Matrix(int64_t rows, int64_t columns) : rows_(rows), columns_(columns), data_(rows * columns) {}
  Complex& operator()(int64_t i, int64_t j) { return data_[i * columns_ + j]; }
  Complex operator()(int64_t i, int64_t j) const { return data_[i * columns_ + j]; }
  int64_t rows() const { return rows_; }
  int64_t columns() const { return columns_; }

  static Matrix Read(const Literal& literal, int64_t batch, int64_t rows, int64_t columns) {
    Matrix m(rows, columns);
    const int64_t base = batch * rows * columns;
    for (int64_t k = 0; k < rows * columns; ++k) m.data_[k] = literal.GetAsComplex(base + k);
    return m;
  }
  void Write(Literal& literal, int64_t batch) const {
    const int64_t base = batch * rows_ * columns_;
    for (int64_t k = 0; k < rows_ * columns_; ++k) literal.SetFromComplex(base + k, data_[k]);
  }

 private:
  int64_t rows_, columns_;
  std::vector<Complex> data_;
};

// ------------------------------------------------------------------ Qr

// Factors `a` in place into geqrf's packed form; returns the taus.
std::vector<Complex> HouseholderQr(Matrix& a) {
  const int64_t m = a.rows(), n = a.columns();
  std::vector<Complex> taus(std::min(m, n));
  for (int64_t j = 0; j < std::min(m, n); ++j) {
    const Complex alpha = a(j, j);
    double sigma = 0;  // |x[j+1:]|^2
    for (int64_t i = j + 1; i < m; ++i) sigma += std::norm(a(i, j));
    if (sigma == 0 && alpha.imag() == 0) continue;  // H_j = I.
    const double mu = std::sqrt(std::norm(alpha) + sigma);
    const double beta = alpha.real() >= 0 ? -mu : mu;
    const Complex tau((beta - alpha.real()) / beta, -alpha.imag() / beta);
    const Complex scale = 1.0 / (alpha - beta);
    for (int64_t i = j + 1; i < m; ++i) a(i, j) *= scale;
    a(j, j) = beta;
    taus[j] = tau;
    // A[j:, j+1:] = H_j^H A[j:, j+1:], H_j^H = I - conj(tau) v v^H, v[j] = 1.
    for (int64_t c = j + 1; c < n; ++c) {
      Complex dot = a(j, c);
      for (int64_t i = j + 1; i < m; ++i) dot += std::conj(a(i, j)) * a(i, c);
      const Complex f = std::conj(tau) * dot;
      a(j, c) -= f;
      for (int64_t i = j + 1; i < m; ++i) a(i, c) -= f * a(i, j);
    }
  }
  return taus;
}

absl::StatusOr<Literal> EvalQr(const HloInstruction& hlo, const Literal& in) {
  const Shape& s = in.shape();
  const int64_t m = s.dimensions(s.rank() - 2), n = s.dimensions(s.rank() - 1);
  const int64_t k = std::min(m, n);
  const int64_t batches = m * n == 0 ? 0 : in.element_count() / (m * n);
  HLOC_ASSIGN_OR_RETURN(Literal factors, NewLiteral(hlo, hlo.shape().tuple_shapes(0)));
  HLOC_ASSIGN_OR_RETURN(Literal taus, NewLiteral(hlo, hlo.shape().tuple_shapes(1)));
  for (int64_t b = 0; b < batches; ++b) {
    Matrix a = Matrix::Read(in, b, m, n);
    std::vector<Complex> t = HouseholderQr(a);
    a.Write(factors, b);
    for (int64_t j = 0; j < k; ++j) taus.SetFromComplex(b * k + j, t[j]);
  }
  std::vector<Literal> elements;
  elements.push_back(std::move(factors));
  elements.push_back(std::move(taus));
  return Literal::Tuple(std::move(elements));
}

absl::StatusOr<Literal> EvalHouseholderProduct(const HloInstruction& hlo, const Literal& in,
                                               const Literal& taus) {
  const Shape& s = in.shape();
  const int64_t m = s.dimensions(s.rank() - 2), n = s.dimensions(s.rank() - 1);
  const int64_t k = taus.shape().dimensions(taus.shape().rank() - 1);
  const int64_t batches = m * n == 0 ? 0 : in.element_count() / (m * n);
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  for (int64_t b = 0; b < batches; ++b) {
    const Matrix a = Matrix::Read(in, b, m, n);
    Matrix q(m, n);
    for (int64_t j = 0; j < n; ++j) q(j, j) = 1;
    // Q = H_0 (H_1 (... (H_{k-1} I))): the last reflector first.
    for (int64_t i = k - 1; i >= 0; --i) {
      const Complex tau = taus.GetAsComplex(b * k + i);
      auto v = [&](int64_t r) { return r == i ? Complex(1) : a(r, i); };
      for (int64_t c = 0; c < n; ++c) {
        Complex dot = 0;
        for (int64_t r = i; r < m; ++r) dot += std::conj(v(r)) * q(r, c);
        const Complex f = tau * dot;
        for (int64_t r = i; r < m; ++r) q(r, c) -= f * v(r);
      }
    }
    q.Write(out, b);
  }
  return std::move(out);
}

// ------------------------------------------------------------------ Eigh

// Off-diagonal and total squared Frobenius norms.
void Norms(const Matrix& a, double* off, double* total) {
  *off = *total = 0;
  for (int64_t i = 0; i < a.rows(); ++i) {
    for (int64_t j = 0; j < a.columns(); ++j) {
      const double x = std::norm(a(i, j));
      *total += x;
      if (i != j) *off += x;
    }
  }
}

// Diagonalizes Hermitian `a` in place by cyclic Jacobi rotations,
// accumulating them in `v` (a_in = v a_out v^H).
void JacobiEigen(Matrix& a, Matrix& v) {
  const int64_t n = a.rows();
  constexpr int kMaxSweeps = 100;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    double off, total;
    Norms(a, &off, &total);
    if (off <= 1e-30 * total || off == 0) return;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        const Complex b = a(p, q);
        const double magnitude = std::abs(b);
        if (magnitude == 0) continue;
        // The rotation J = [[c, s w], [-s conj(w), c]] makes the (p, q)
        // entry of J^H a J zero: a real rotation after the phase w.
        const Complex w = b / magnitude;
        const double app = a(p, p).real(), aqq = a(q, q).real();
        const double tau = (aqq - app) / (2 * magnitude);
        const double t = (tau >= 0 ? 1.0 : -1.0) / (std::abs(tau) + std::sqrt(1 + tau * tau));
        const double c = 1 / std::sqrt(1 + t * t);
        const double s = t * c;
        for (int64_t r = 0; r < n; ++r) {  // a J
          const Complex x = a(r, p), y = a(r, q);
          a(r, p) = c * x - s * std::conj(w) * y;
          a(r, q) = s * w * x + c * y;
        }
        for (int64_t r = 0; r < n; ++r) {  // J^H (a J)
          const Complex x = a(p, r), y = a(q, r);
          a(p, r) = c * x - s * w * y;
          a(q, r) = s * std::conj(w) * x + c * y;
        }
        a(p, p) = app - t * magnitude;
        a(q, q) = aqq + t * magnitude;
        a(p, q) = a(q, p) = 0;
        for (int64_t r = 0; r < n; ++r) {  // v J
          const Complex x = v(r, p), y = v(r, q);
          v(r, p) = c * x - s * std::conj(w) * y;
          v(r, q) = s * w * x + c * y;
        }
      }
    }
  }
}

absl::StatusOr<Literal> EvalEigh(const HloInstruction& hlo, const Literal& in) {
  HLOC_ASSIGN_OR_RETURN(EighConfig config, ParseEighConfig(hlo));
  const Shape& s = in.shape();
  const int64_t n = s.dimensions(s.rank() - 1);
  const int64_t batches = n == 0 ? 0 : in.element_count() / (n * n);
  HLOC_ASSIGN_OR_RETURN(Literal vectors, NewLiteral(hlo, hlo.shape().tuple_shapes(0)));
  HLOC_ASSIGN_OR_RETURN(Literal values, NewLiteral(hlo, hlo.shape().tuple_shapes(1)));
  for (int64_t b = 0; b < batches; ++b) {
    const Matrix raw = Matrix::Read(in, b, n, n);
    // The Hermitian matrix the named triangle describes.
    Matrix a(n, n);
    for (int64_t i = 0; i < n; ++i) {
      a(i, i) = raw(i, i).real();
      for (int64_t j = 0; j < i; ++j) {
        const Complex x = config.lower ? raw(i, j) : std::conj(raw(j, i));
        a(i, j) = x;
        a(j, i) = std::conj(x);
      }
    }
    Matrix v(n, n);
    for (int64_t i = 0; i < n; ++i) v(i, i) = 1;
    JacobiEigen(a, v);
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    if (config.sort) {
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t x, int64_t y) { return a(x, x).real() < a(y, y).real(); });
    }
    for (int64_t j = 0; j < n; ++j) {
      values.SetFromDouble(b * n + j, a(order[j], order[j]).real());
      for (int64_t i = 0; i < n; ++i) vectors.SetFromComplex(b * n * n + i * n + j, v(i, order[j]));
    }
  }
  std::vector<Literal> elements;
  elements.push_back(std::move(vectors));
  elements.push_back(std::move(values));
  return Literal::Tuple(std::move(elements));
}

}  // namespace

absl::StatusOr<Literal> EvalLinalgCustomCall(LinalgCustomCall kind, const HloInstruction& hlo,
                                             Operands ops) {
  // The same rule the verifier applies: malformed calls are errors here too
  // when the module was not verified.
  std::vector<const Shape*> shapes;
  for (const Literal* op : ops) shapes.push_back(&op->shape());
  absl::StatusOr<Shape> shape = InferLinalgCustomCallShape(kind, hlo, shapes);
  if (!shape.ok()) return InstructionError(hlo, shape.status().message());
  if (!shape->Compatible(hlo.shape())) {
    return InstructionError(hlo, "declared shape ", hlo.shape().ToString(false), " but ",
                            hlo.attrs().custom_call_target, " of its operands gives ",
                            shape->ToString(false));
  }
  switch (kind) {
    case LinalgCustomCall::kQr:
      return EvalQr(hlo, *ops[0]);
    case LinalgCustomCall::kHouseholderProduct:
      return EvalHouseholderProduct(hlo, *ops[0], *ops[1]);
    case LinalgCustomCall::kEigh:
      return EvalEigh(hlo, *ops[0]);
  }
  return InstructionError(hlo, "unknown linear-algebra custom call");
}

}  // namespace eval
}  // namespace hloc
