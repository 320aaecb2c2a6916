// fft on the host (see fft_library.h).
#include "backend/host/fft_library.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/thread_pool.h"

namespace hloc {
namespace host {
namespace {

// a b without std::complex's operator*, whose inf/nan recovery (a call to
// __mulsc3) costs more than the product.
template <typename T>
inline std::complex<T> Mul(const std::complex<T>& a, const std::complex<T>& b) {
  return std::complex<T>(a.real() * b.real() - a.imag() * b.imag(),
                         a.real() * b.imag() + a.imag() * b.real());
}

// exp(sign 2 pi i k / n), computed in double.
template <typename T>
std::complex<T> Twiddle(int sign, int64_t k, int64_t n) {
  const double angle = sign * 2 * M_PI * static_cast<double>(k) / static_cast<double>(n);
  return std::complex<T>(static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle)));
}

// The transform of one line of length n in one direction.
template <typename T>
class LinePlan {
 public:
  using C = std::complex<T>;

  LinePlan(int64_t n, int sign) : n_(n), sign_(sign) {
    twiddles_.resize(n);
    for (int64_t j = 0; j < n; ++j) twiddles_[j] = Twiddle<T>(sign, j, n);
    int64_t rest = n;
    while (rest % 4 == 0) factors_.push_back(4), rest /= 4;
    while (rest % 2 == 0) factors_.push_back(2), rest /= 2;
    for (int64_t p = 3; p * p <= rest; p += 2) {
      while (rest % p == 0) factors_.push_back(p), rest /= p;
    }
    if (rest > 1) factors_.push_back(rest);
    for (int64_t p : factors_) largest_ = std::max(largest_, p);
  }

  int64_t length() const { return n_; }
  // Scratch `Run` needs: 2 * the largest factor.
  int64_t scratch() const { return 2 * largest_; }

  // out[0, n) = the transform of in[0], in[stride], ..., in[(n - 1) stride].
  void Run(const C* in, int64_t stride, C* out, C* scratch) const {
    if (n_ == 0) return;
    Step(in, stride, out, n_, 0, 1, scratch);
  }

 private:
  // out[0, n) = the length-n transform of in[0], in[s], ...; its twiddles
  // are every `step`-th of the plan's.
  void Step(const C* in, int64_t s, C* out, int64_t n, size_t f, int64_t step, C* scratch) const {
    if (n == 1) {
      out[0] = in[0];
      return;
    }
    const int64_t p = factors_[f];
    const int64_t m = n / p;
    if (m == 1) {
      for (int64_t r = 0; r < p; ++r) out[r] = in[r * s];
    } else {
      for (int64_t r = 0; r < p; ++r) {
        Step(in + r * s, s * p, out + r * m, m, f + 1, step * p, scratch);
      }
    }
    const C* w = twiddles_.data();
    if (p == 2) {
      for (int64_t k = 0; k < m; ++k) {
        const C a = out[k];
        const C b = Mul(out[m + k], w[k * step]);
        out[k] = a + b;
        out[m + k] = a - b;
      }
      return;
    }
    if (p == 4) {
      for (int64_t k = 0; k < m; ++k) {
        const C t0 = out[k];
        const C t1 = Mul(out[m + k], w[k * step]);
        const C t2 = Mul(out[2 * m + k], w[2 * k * step]);
        const C t3 = Mul(out[3 * m + k], w[3 * k * step]);
        const C a = t0 + t2, b = t0 - t2, c = t1 + t3, e = t1 - t3;
        // (sign i) e
        const C d = sign_ > 0 ? C(-e.imag(), e.real()) : C(e.imag(), -e.real());
        out[k] = a + c;
        out[m + k] = b + d;
        out[2 * m + k] = a - c;
        out[3 * m + k] = b - d;
      }
      return;
    }
    // Any p: X[k + m q] = sum_r (Y_r[k] W_n^{r k}) W_p^{r q}.
    C* t = scratch;
    C* x = scratch + p;
    const int64_t root = m * step;  // W_p^1 is twiddle `root`.
    for (int64_t k = 0; k < m; ++k) {
      for (int64_t r = 0; r < p; ++r) t[r] = Mul(out[r * m + k], w[r * k * step]);
      for (int64_t q = 0; q < p; ++q) {
        C acc = t[0];
        for (int64_t r = 1; r < p; ++r) acc += Mul(t[r], w[((r * q) % p) * root]);
        x[q] = acc;
      }
      for (int64_t q = 0; q < p; ++q) out[q * m + k] = x[q];
    }
  }

  int64_t n_;
  int sign_;
  int64_t largest_ = 1;
  std::vector<int64_t> factors_;
  std::vector<C> twiddles_;
};

// Runs task(begin, end) over `lines` lines of length n, split over the pool
// with enough work per task to be worth a thread.
void ForLines(int64_t lines, int64_t n, runtime::ThreadPool* pool,
              const std::function<void(int64_t, int64_t)>& task) {
  if (pool != nullptr && lines > 1) {
    pool->ParallelFor(lines, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), task);
  } else {
    task(0, lines);
  }
}

// Transforms `data` (dims, row-major) along `axis` in place.
template <typename T>
void TransformAxis(std::complex<T>* data, const std::vector<int64_t>& dims, size_t axis,
                   const LinePlan<T>& plan, runtime::ThreadPool* pool) {
  using C = std::complex<T>;
  const int64_t n = dims[axis];
  int64_t inner = 1, outer = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  for (size_t d = 0; d < axis; ++d) outer *= dims[d];
  const int64_t lines = outer * inner;
  if (n <= 1 || lines == 0) return;
  auto task = [&](int64_t begin, int64_t end) {
    std::vector<C> line(n), scratch(plan.scratch());
    for (int64_t l = begin; l < end; ++l) {
      C* base = data + (l / inner) * n * inner + (l % inner);
      plan.Run(base, inner, line.data(), scratch.data());
      for (int64_t j = 0; j < n; ++j) base[j * inner] = line[j];
    }
  };
  ForLines(lines, n, pool, task);
}

template <typename T>
void Scale(std::complex<T>* data, int64_t count, double factor) {
  const T f = static_cast<T>(factor);
  for (int64_t i = 0; i < count; ++i) data[i] *= f;
}

// An even-length real transform as a complex one of half the length:
// z[j] = x[2j] + i x[2j+1] and Z = FFT_h(z) give the even and odd samples'
// spectra E[k] = (Z[k] + conj Z[h-k]) / 2 and O[k] = (Z[k] - conj Z[h-k]) / 2i,
// and X[k] = E[k] + W_n^k O[k] for k = 0..h. The inverse runs it backwards:
// E[k] = (X[k] + conj X[h-k]) / 2, O[k] = (X[k] - conj X[h-k]) W_n^-k / 2,
// z = IFFT_h(E + i O) (unscaled: times 2 / n).
template <typename T>
struct HalfLength {
  HalfLength(int64_t n, int sign) : plan(n / 2, sign), twiddles(n / 2 + 1) {
    for (int64_t k = 0; k <= n / 2; ++k) twiddles[k] = Twiddle<T>(sign, k, n);
  }
  LinePlan<T> plan;
  std::vector<std::complex<T>> twiddles;  // W_n^(sign k), k = 0..h
};

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

template <typename T>
absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeTyped(
    xla::FftType type, const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
    const std::vector<int64_t>& lengths) {
  using C = std::complex<T>;
  using Plans = std::vector<std::shared_ptr<const LinePlan<T>>>;
  const size_t rank = in_dims.size();
  const size_t first = rank - lengths.size();
  const int sign = type == xla::FFT || type == xla::RFFT ? -1 : 1;
  Plans plans;
  for (int64_t n : lengths) plans.push_back(std::make_shared<LinePlan<T>>(n, sign));
  double count = 1;
  for (int64_t n : lengths) count *= static_cast<double>(n);
  const double scale = count > 0 ? 1 / count : 1;
  const int64_t in_count = Product(in_dims), out_count = Product(out_dims);
  using Function = runtime::LibraryCallThunk::Function;
  // RFFT and IRFFT of an even length go through a half-length transform.
  std::shared_ptr<const HalfLength<T>> halved;
  if ((type == xla::RFFT || type == xla::IRFFT) && lengths.back() >= 2 && lengths.back() % 2 == 0) {
    halved = std::make_shared<HalfLength<T>>(lengths.back(), sign);
  }

  if (type == xla::FFT || type == xla::IFFT) {
    return std::optional<Function>(
        [=](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
          C* out = static_cast<C*>(buffers[1]);
          if (buffers[0] != buffers[1] && in_count > 0) {
            std::memcpy(out, buffers[0], in_count * sizeof(C));
          }
          for (size_t k = 0; k < plans.size(); ++k)
            TransformAxis(out, out_dims, first + k, *plans[k], pool);
          if (type == xla::IFFT) Scale(out, out_count, scale);
          return absl::OkStatus();
        });
  }
  if (type == xla::RFFT) {
    return std::optional<Function>(
        [=](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
          const T* in = static_cast<const T*>(buffers[0]);
          C* out = static_cast<C*>(buffers[1]);
          const LinePlan<T>& last = *plans.back();
          const int64_t n = last.length(), half = out_dims.back();
          const int64_t rows = n == 0 ? 0 : in_count / n;
          auto task = [&](int64_t begin, int64_t end) {
            std::vector<C> row(n), line(n), scratch(last.scratch());
            for (int64_t r = begin; r < end; ++r) {
              for (int64_t j = 0; j < n; ++j) row[j] = C(in[r * n + j], 0);
              last.Run(row.data(), 1, line.data(), scratch.data());
              std::memcpy(out + r * half, line.data(), half * sizeof(C));
            }
          };
          auto halved_task = [&](int64_t begin, int64_t end) {
            const int64_t h = n / 2;
            std::vector<C> z(h), spectrum(h), scratch(halved->plan.scratch());
            for (int64_t r = begin; r < end; ++r) {
              for (int64_t j = 0; j < h; ++j) z[j] = C(in[r * n + 2 * j], in[r * n + 2 * j + 1]);
              halved->plan.Run(z.data(), 1, spectrum.data(), scratch.data());
              for (int64_t k = 0; k <= h; ++k) {
                const C a = spectrum[k % h], b = std::conj(spectrum[(h - k) % h]);
                const C even = (a + b) * static_cast<T>(0.5);
                const C odd = Mul(a - b, C(0, static_cast<T>(-0.5)));
                out[r * half + k] = even + Mul(halved->twiddles[k], odd);
              }
            }
          };
          if (halved != nullptr) {
            ForLines(rows, n, pool, halved_task);
          } else {
            ForLines(rows, n, pool, task);
          }
          for (size_t k = 0; k + 1 < plans.size(); ++k) {
            TransformAxis(out, out_dims, first + k, *plans[k], pool);
          }
          return absl::OkStatus();
        });
  }
  // IRFFT.
  return std::optional<Function>(
      [=](absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
        std::vector<C> spectrum(static_cast<const C*>(buffers[0]),
                                static_cast<const C*>(buffers[0]) + in_count);
        for (size_t k = 0; k + 1 < plans.size(); ++k) {
          TransformAxis(spectrum.data(), in_dims, first + k, *plans[k], pool);
        }
        T* out = static_cast<T*>(buffers[1]);
        const LinePlan<T>& last = *plans.back();
        const int64_t n = last.length(), half = in_dims.back();
        const int64_t rows = half == 0 ? 0 : in_count / half;
        auto task = [&](int64_t begin, int64_t end) {
          std::vector<C> full(n), line(n), scratch(last.scratch());
          for (int64_t r = begin; r < end; ++r) {
            const C* x = spectrum.data() + r * half;
            for (int64_t k = 0; k < n; ++k) {
              full[k] = k < half ? x[k] : std::conj(x[n - k]);
            }
            last.Run(full.data(), 1, line.data(), scratch.data());
            for (int64_t j = 0; j < n; ++j) out[r * n + j] = static_cast<T>(line[j].real() * scale);
          }
        };
        auto halved_task = [&](int64_t begin, int64_t end) {
          const int64_t h = n / 2;
          std::vector<C> packed(h), z(h), scratch(halved->plan.scratch());
          for (int64_t r = begin; r < end; ++r) {
            const C* x = spectrum.data() + r * half;
            // The imaginary parts of X[0] and X[h] count for nothing.
            auto at = [&](int64_t k) { return k == 0 || k == h ? C(x[k].real(), 0) : x[k]; };
            for (int64_t k = 0; k < h; ++k) {
              const C a = at(k), b = std::conj(at(h - k));
              const C even = (a + b) * static_cast<T>(0.5);
              const C odd = Mul(a - b, halved->twiddles[k]) * static_cast<T>(0.5);
              packed[k] = even + C(-odd.imag(), odd.real());
            }
            halved->plan.Run(packed.data(), 1, z.data(), scratch.data());
            const T twice = static_cast<T>(2 * scale);
            for (int64_t j = 0; j < h; ++j) {
              out[r * n + 2 * j] = z[j].real() * twice;
              out[r * n + 2 * j + 1] = z[j].imag() * twice;
            }
          }
        };
        if (halved != nullptr) {
          ForLines(rows, n, pool, halved_task);
        } else {
          ForLines(rows, n, pool, task);
        }
        return absl::OkStatus();
      });
}

}  // namespace

absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeFft(
    const HloInstruction& hlo) {
  using Result = std::optional<runtime::LibraryCallThunk::Function>;
  if (hlo.opcode() != HloOpcode::kFft || hlo.operand_count() != 1 || !hlo.shape().IsArray() ||
      !hlo.operand(0)->shape().IsArray()) {
    return Result();
  }
  const Shape& in = hlo.operand(0)->shape();
  const Shape& out = hlo.shape();
  const std::vector<int64_t>& lengths = hlo.attrs().fft_length;
  if (!in.is_static() || !out.is_static() || lengths.empty() ||
      lengths.size() > in.dimensions().size() ||
      in.dimensions().size() != out.dimensions().size()) {
    return Result();
  }
  const xla::FftType type = hlo.attrs().fft_type;
  const size_t first = in.dimensions().size() - lengths.size();
  for (size_t k = 0; k < lengths.size(); ++k) {
    const int64_t d = first + k;
    const bool last = k + 1 == lengths.size();
    const int64_t in_n = in.dimensions(d), out_n = out.dimensions(d);
    const bool fits = !last || type == xla::FFT || type == xla::IFFT
                          ? in_n == lengths[k] && out_n == lengths[k]
                      : type == xla::RFFT ? in_n == lengths[k] && out_n == lengths[k] / 2 + 1
                                          : out_n == lengths[k] && in_n == lengths[k] / 2 + 1;
    if (!fits) return Result();
  }
  const PrimitiveType from = in.element_type(), to = out.element_type();
  const bool complex_to_complex = type == xla::FFT || type == xla::IFFT;
  if (complex_to_complex && from == xla::C64 && to == xla::C64) {
    return MakeTyped<float>(type, in.dimensions(), out.dimensions(), lengths);
  }
  if (complex_to_complex && from == xla::C128 && to == xla::C128) {
    return MakeTyped<double>(type, in.dimensions(), out.dimensions(), lengths);
  }
  if (type == xla::RFFT && from == xla::F32 && to == xla::C64) {
    return MakeTyped<float>(type, in.dimensions(), out.dimensions(), lengths);
  }
  if (type == xla::RFFT && from == xla::F64 && to == xla::C128) {
    return MakeTyped<double>(type, in.dimensions(), out.dimensions(), lengths);
  }
  if (type == xla::IRFFT && from == xla::C64 && to == xla::F32) {
    return MakeTyped<float>(type, in.dimensions(), out.dimensions(), lengths);
  }
  if (type == xla::IRFFT && from == xla::C128 && to == xla::F64) {
    return MakeTyped<double>(type, in.dimensions(), out.dimensions(), lengths);
  }
  return Result();
}

}  // namespace host
}  // namespace hloc
