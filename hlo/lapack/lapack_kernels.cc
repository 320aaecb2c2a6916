// Running decoded LAPACK calls (see lapack_calls.h).
//
// Each batch element goes the same way: its input matrices are copied from
// hloc's row-major buffers into column-major scratch (LAPACK's order), the
// routine runs there (its workspace sized by LAPACK's own query, lwork = -1),
// and every output is copied back (trsm and potrf need no transposes: they
// run in the result's memory on the transposed problem, see each). All
// inputs of an element are read before any of its outputs is written, so
// results may share buffers with operands (JAX's output_to_operand_aliasing).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/lapack/lapack_calls.h"
#include "hlo/lapack/lapack_library.h"

namespace hloc {
namespace lapack {
namespace {

using Int = int;       // LAPACK's integer (LP64).
using Len = size_t;    // gfortran's hidden length of a character argument.

template <typename T> struct RealOf { using type = T; };
template <typename T> struct RealOf<std::complex<T>> { using type = T; };
template <typename T> using Real = typename RealOf<T>::type;
template <typename T> constexpr bool kIsComplex = !std::is_same_v<T, Real<T>>;

// A scratch vector with at least one element (LAPACK wants valid pointers
// and leading dimensions >= 1 even for empty matrices).
template <typename T>
std::vector<T> Scratch(int64_t n) {
  return std::vector<T>(static_cast<size_t>(std::max<int64_t>(n, 1)));
}

// out[c * rows + r] = in[r * cols + c], by tiles, so that neither side's
// accesses stride through more than a tile's lines at a time.
template <typename T>
void Transpose(const T* in, int64_t rows, int64_t cols, T* out) {
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
      }
    }
  }
}

template <typename T>
void ToColumnMajor(const T* row_major, int64_t rows, int64_t cols, T* out) {
  Transpose(row_major, rows, cols, out);
}

template <typename T>
void FromColumnMajor(const T* column_major, int64_t rows, int64_t cols, T* out) {
  Transpose(column_major, cols, rows, out);
}

template <typename T>
bool Overlaps(const T* a, int64_t a_count, const T* b, int64_t b_count) {
  const uintptr_t a0 = reinterpret_cast<uintptr_t>(a), b0 = reinterpret_cast<uintptr_t>(b);
  return a0 < b0 + sizeof(T) * b_count && b0 < a0 + sizeof(T) * a_count;
}

// Copies n elements from `from` to `to` unless they are the same memory.
template <typename T>
void CopyInto(const T* from, int64_t n, T* to) {
  if (from != to && n > 0) std::memmove(to, from, sizeof(T) * n);
}

// The frame's arrays, typed, one batch element at a time; this frame runs
// elements [begin, end) of `batch`.
class Frame {
 public:
  Frame(const CustomCallFrame& frame, int64_t batch, int64_t begin, int64_t end)
      : frame_(frame), batch_(batch), begin_(begin), end_(end) {}
  int64_t begin() const { return begin_; }
  int64_t end() const { return end_; }
  // Element `b` of operand `i`, which holds `per` elements per batch element.
  template <typename T>
  const T* In(size_t i, int64_t b) const {
    return static_cast<const T*>(frame_.operands[i].data) + b * Per(frame_.operands[i]);
  }
  template <typename T>
  T* Out(size_t i, int64_t b) const {
    return static_cast<T*>(frame_.results[i].data) + b * Per(frame_.results[i]);
  }
  // Result `i`'s bytes of element `b`, and how many there are.
  char* ResultBytes(size_t i, int64_t b) const {
    return static_cast<char*>(frame_.results[i].data) + b * ResultBytesPer(i);
  }
  int64_t ResultBytesPer(size_t i) const {
    return batch_ == 0 ? 0 : frame_.results[i].byte_size() / batch_;
  }
  absl::Span<const int64_t> OperandDims(size_t i) const { return frame_.operands[i].dims; }
  absl::Span<const int64_t> ResultDims(size_t i) const { return frame_.results[i].dims; }

 private:
  int64_t Per(const CustomCallArray& array) const {
    return batch_ == 0 ? 0 : array.element_count() / batch_;
  }
  const CustomCallFrame& frame_;
  int64_t batch_, begin_, end_;
};

template <typename T>
Int WorkspaceSize(const T& queried) {
  return std::max<Int>(1, static_cast<Int>(std::real(queried)));
}

// LAPACK's workspace query (lwork = -1) through `call(work, lwork, info)`,
// then a workspace of the size it asked for; `*lwork` is set to that size.
template <typename T, typename Call>
std::vector<T> QueriedWorkspace(const Call& call, Int* lwork) {
  T query{};
  Int info = 0;
  *lwork = -1;
  call(&query, lwork, &info);
  *lwork = WorkspaceSize(query);
  return Scratch<T>(*lwork);
}

template <typename T>
bool AllFinite(const T* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kIsComplex<T>) {
      if (!std::isfinite(data[i].real()) || !std::isfinite(data[i].imag())) return false;
    } else {
      if (!std::isfinite(data[i])) return false;
    }
  }
  return true;
}

// Per routine: `dims` are operand 0's, `f` the routine's address.
template <typename T>
class Kernels {
 public:
  using R = Real<T>;
  Kernels(const LapackCall& call, const Frame& frame, int64_t m, int64_t n)
      : call_(call), frame_(frame), m_(m), n_(n), mi_(static_cast<Int>(m)),
        ni_(static_cast<Int>(n)), lda_(std::max<Int>(1, static_cast<Int>(m))) {}

  absl::Status Run(void* f) {
    switch (call_.routine) {
      case Routine::kTrsm: return Trsm(f);
      case Routine::kGetrf: return Getrf(f);
      case Routine::kGeqrf: return Geqrf(f);
      case Routine::kGeqp3: return Geqp3(f);
      case Routine::kOrgqr: return Orgqr(f);
      case Routine::kPotrf: return Potrf(f);
      case Routine::kGesdd: return Svd(f, /*divide_and_conquer=*/true);
      case Routine::kGesvd: return Svd(f, /*divide_and_conquer=*/false);
      case Routine::kSyevd: return Syevd(f);
      case Routine::kGeev: return Geev(f);
      case Routine::kGees: return Gees(f);
      case Routine::kGehrd: return Gehrd(f);
      case Routine::kSytrd: return Sytrd(f);
      case Routine::kGtsv: return Gtsv(f);
    }
    return absl::InternalError("unknown LAPACK routine");
  }

 private:
  // Loads operand `i`'s matrix of element `b` (rows x cols) column-major.
  void Load(size_t i, int64_t b, int64_t rows, int64_t cols, std::vector<T>& out) const {
    ToColumnMajor(frame_.In<T>(i, b), rows, cols, out.data());
  }
  void Store(const std::vector<T>& in, int64_t rows, int64_t cols, size_t i, int64_t b) const {
    FromColumnMajor(in.data(), rows, cols, frame_.Out<T>(i, b));
  }
  template <typename U>
  void StoreVector(const U* in, int64_t n, size_t i, int64_t b) const {
    if (n > 0) std::memcpy(frame_.Out<U>(i, b), in, sizeof(U) * n);
  }
  void StoreInfo(Int info, size_t i, int64_t b) const { *frame_.Out<int32_t>(i, b) = info; }
  void Zero(size_t i, int64_t b) const {
    const int64_t bytes = frame_.ResultBytesPer(i);
    if (bytes > 0) std::memset(frame_.ResultBytes(i, b), 0, static_cast<size_t>(bytes));
  }

  absl::Status Trsm(void* f) {
    using Fn = void (*)(const char*, const char*, const char*, const char*, const Int*,
                        const Int*, const T*, const T*, const Int*, T*, const Int*, Len, Len,
                        Len, Len);
    // Operand 0 is the triangular matrix; the result has operand 1's shape.
    // No transposes: a row-major matrix is its transpose in column-major
    // order, and op(A) X = B (side L) holds exactly when X^T op(A)^T = B^T,
    // where op(A)^T is op applied to A^T with the other triangle. So LAPACK
    // solves, in the result's own memory, with the side and the triangle
    // swapped (trans and diag stay).
    const absl::Span<const int64_t> x = frame_.ResultDims(0);
    const int64_t rows = x[x.size() - 2], cols = x[x.size() - 1];
    const int64_t k = call_.side == 'L' ? rows : cols;
    const char side = call_.side == 'L' ? 'R' : 'L', uplo = call_.uplo == 'L' ? 'U' : 'L';
    const Int mi = static_cast<Int>(cols), ni = static_cast<Int>(rows);
    const Int lda = std::max<Int>(1, static_cast<Int>(k)), ldb = std::max<Int>(1, mi);
    const T one(1);
    if (rows == 0 || cols == 0) return absl::OkStatus();
    std::vector<T> a_copy;
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      const T* a = frame_.In<T>(0, b);
      T* out = frame_.Out<T>(0, b);
      // The result may share memory with b (JAX aliases them) and, where
      // one value is both operands, with the triangle too: read it first.
      if (Overlaps(a, k * k, out, rows * cols)) {
        a_copy.assign(a, a + k * k);
        a = a_copy.data();
      }
      CopyInto(frame_.In<T>(1, b), rows * cols, out);
      reinterpret_cast<Fn>(f)(&side, &uplo, &call_.trans, &call_.diag, &mi, &ni, &one, a, &lda,
                              out, &ldb, 1, 1, 1, 1);
    }
    return absl::OkStatus();
  }

  absl::Status Getrf(void* f) {
    using Fn = void (*)(const Int*, const Int*, T*, const Int*, Int*, Int*);
    std::vector<T> a = Scratch<T>(m_ * n_);
    std::vector<Int> ipiv = Scratch<Int>(std::min(m_, n_));
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      Load(0, b, m_, n_, a);
      Int info = 0;
      reinterpret_cast<Fn>(f)(&mi_, &ni_, a.data(), &lda_, ipiv.data(), &info);
      Store(a, m_, n_, 0, b);
      StoreVector(ipiv.data(), std::min(m_, n_), 1, b);
      StoreInfo(info, 2, b);
    }
    return absl::OkStatus();
  }

  absl::Status Geqrf(void* f) {
    using Fn = void (*)(const Int*, const Int*, T*, const Int*, T*, T*, const Int*, Int*);
    std::vector<T> a = Scratch<T>(m_ * n_), tau = Scratch<T>(std::min(m_, n_));
    T query;
    Int lwork = -1, info = 0;
    reinterpret_cast<Fn>(f)(&mi_, &ni_, a.data(), &lda_, tau.data(), &query, &lwork, &info);
    lwork = WorkspaceSize(query);
    std::vector<T> work = Scratch<T>(lwork);
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      Load(0, b, m_, n_, a);
      reinterpret_cast<Fn>(f)(&mi_, &ni_, a.data(), &lda_, tau.data(), work.data(), &lwork,
                              &info);
      Store(a, m_, n_, 0, b);
      StoreVector(tau.data(), std::min(m_, n_), 1, b);
    }
    return absl::OkStatus();
  }

  absl::Status Geqp3(void* f) {
    std::vector<T> a = Scratch<T>(m_ * n_), tau = Scratch<T>(std::min(m_, n_));
    std::vector<Int> jpvt = Scratch<Int>(n_);
    std::vector<R> rwork = Scratch<R>(2 * n_);
    auto call = [&](T* work, Int* lwork, Int* info) {
      if constexpr (kIsComplex<T>) {
        using Fn = void (*)(const Int*, const Int*, T*, const Int*, Int*, T*, T*, const Int*, R*,
                            Int*);
        reinterpret_cast<Fn>(f)(&mi_, &ni_, a.data(), &lda_, jpvt.data(), tau.data(), work, lwork,
                                rwork.data(), info);
      } else {
        using Fn = void (*)(const Int*, const Int*, T*, const Int*, Int*, T*, T*, const Int*,
                            Int*);
        reinterpret_cast<Fn>(f)(&mi_, &ni_, a.data(), &lda_, jpvt.data(), tau.data(), work, lwork,
                                info);
      }
    };
    Int lwork = 0, info = 0;
    std::vector<T> work = QueriedWorkspace<T>(call, &lwork);
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      Load(0, b, m_, n_, a);
      if (n_ > 0) std::memcpy(jpvt.data(), frame_.In<int32_t>(1, b), sizeof(Int) * n_);
      call(work.data(), &lwork, &info);
      Store(a, m_, n_, 0, b);
      StoreVector(jpvt.data(), n_, 1, b);
      StoreVector(tau.data(), std::min(m_, n_), 2, b);
    }
    return absl::OkStatus();
  }

  absl::Status Orgqr(void* f) {
    using Fn = void (*)(const Int*, const Int*, const Int*, T*, const Int*, const T*, T*,
                        const Int*, Int*);
    const int64_t k = frame_.OperandDims(1).back();  // Reflectors per matrix.
    const Int ki = static_cast<Int>(k);
    std::vector<T> a = Scratch<T>(m_ * n_), tau = Scratch<T>(k);
    T query;
    Int lwork = -1, info = 0;
    reinterpret_cast<Fn>(f)(&mi_, &ni_, &ki, a.data(), &lda_, tau.data(), &query, &lwork, &info);
    lwork = WorkspaceSize(query);
    std::vector<T> work = Scratch<T>(lwork);
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      Load(0, b, m_, n_, a);
      if (k > 0) std::memcpy(tau.data(), frame_.In<T>(1, b), sizeof(T) * k);
      reinterpret_cast<Fn>(f)(&mi_, &ni_, &ki, a.data(), &lda_, tau.data(), work.data(), &lwork,
                              &info);
      Store(a, m_, n_, 0, b);
    }
    return absl::OkStatus();
  }

  absl::Status Potrf(void* f) {
    // No transposes: the row-major matrix is A^T in column-major order, and
    // the factor of A's lower triangle, L L^H = A, read column-major is the
    // factor U^H U = A^T (conj(A) for complex A) of the upper triangle of
    // that matrix; so LAPACK factors the other triangle in place.
    using Fn = void (*)(const char*, const Int*, T*, const Int*, Int*, Len);
    const char uplo = call_.uplo == 'L' ? 'U' : 'L';
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      T* a = frame_.Out<T>(0, b);
      CopyInto(frame_.In<T>(0, b), n_ * n_, a);
      Int info = 0;
      reinterpret_cast<Fn>(f)(&uplo, &ni_, a, &lda_, &info, 1);
      StoreInfo(info, 1, b);
    }
    return absl::OkStatus();
  }

  absl::Status Svd(void* f, bool divide_and_conquer) {
    const int64_t mn = std::min(m_, n_), mx = std::max(m_, n_);
    const char mode = call_.mode;
    const int64_t u_cols = mode == 'A' ? m_ : mn, vt_rows = mode == 'A' ? n_ : mn;
    const bool vectors = mode != 'N';
    const Int ldu = std::max<Int>(1, mi_);
    const Int ldvt = std::max<Int>(1, static_cast<Int>(vectors ? vt_rows : 1));
    std::vector<T> a = Scratch<T>(m_ * n_);
    std::vector<R> s = Scratch<R>(mn);
    std::vector<T> u = Scratch<T>(vectors ? m_ * u_cols : 1);
    std::vector<T> vt = Scratch<T>(vectors ? vt_rows * n_ : 1);
    std::vector<Int> iwork = Scratch<Int>(8 * mn);
    std::vector<R> rwork = Scratch<R>(
        divide_and_conquer ? std::max(5 * mn * mn + 7 * mn, 2 * mx * mn + 2 * mn * mn + mn)
                           : 5 * mn);
    auto call = [&](T* work, Int* lwork, Int* info) {
      if (divide_and_conquer) {
        if constexpr (kIsComplex<T>) {
          using Fn = void (*)(const char*, const Int*, const Int*, T*, const Int*, R*, T*,
                              const Int*, T*, const Int*, T*, const Int*, R*, Int*, Int*, Len);
          reinterpret_cast<Fn>(f)(&mode, &mi_, &ni_, a.data(), &lda_, s.data(), u.data(), &ldu,
                                  vt.data(), &ldvt, work, lwork, rwork.data(), iwork.data(), info,
                                  1);
        } else {
          using Fn = void (*)(const char*, const Int*, const Int*, T*, const Int*, R*, T*,
                              const Int*, T*, const Int*, T*, const Int*, Int*, Int*, Len);
          reinterpret_cast<Fn>(f)(&mode, &mi_, &ni_, a.data(), &lda_, s.data(), u.data(), &ldu,
                                  vt.data(), &ldvt, work, lwork, iwork.data(), info, 1);
        }
      } else {
        if constexpr (kIsComplex<T>) {
          using Fn = void (*)(const char*, const char*, const Int*, const Int*, T*, const Int*, R*,
                              T*, const Int*, T*, const Int*, T*, const Int*, R*, Int*, Len, Len);
          reinterpret_cast<Fn>(f)(&mode, &mode, &mi_, &ni_, a.data(), &lda_, s.data(), u.data(),
                                  &ldu, vt.data(), &ldvt, work, lwork, rwork.data(), info, 1, 1);
        } else {
          using Fn = void (*)(const char*, const char*, const Int*, const Int*, T*, const Int*, R*,
                              T*, const Int*, T*, const Int*, T*, const Int*, Int*, Len, Len);
          reinterpret_cast<Fn>(f)(&mode, &mode, &mi_, &ni_, a.data(), &lda_, s.data(), u.data(),
                                  &ldu, vt.data(), &ldvt, work, lwork, info, 1, 1);
        }
      }
    };
    Int lwork = 0, info = 0;
    std::vector<T> work = QueriedWorkspace<T>(call, &lwork);
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      Load(0, b, m_, n_, a);
      call(work.data(), &lwork, &info);
      Store(a, m_, n_, 0, b);
      StoreVector(s.data(), mn, 1, b);
      if (vectors) {
        Store(u, m_, u_cols, 2, b);
        Store(vt, vt_rows, n_, 3, b);
      } else {
        Zero(2, b);
        Zero(3, b);
      }
      StoreInfo(info, 4, b);
    }
    return absl::OkStatus();
  }

  absl::Status Syevd(void* f) {
    std::vector<T> a = Scratch<T>(n_ * n_);
    std::vector<R> w = Scratch<R>(n_);
    auto call = [&](T* work, Int* lwork, R* rwork, Int* lrwork, Int* iwork, Int* liwork,
                    Int* info) {
      if constexpr (kIsComplex<T>) {
        using Fn = void (*)(const char*, const char*, const Int*, T*, const Int*, R*, T*,
                            const Int*, R*, const Int*, Int*, const Int*, Int*, Len, Len);
        reinterpret_cast<Fn>(f)(&call_.mode, &call_.uplo, &ni_, a.data(), &lda_, w.data(), work,
                                lwork, rwork, lrwork, iwork, liwork, info, 1, 1);
      } else {
        using Fn = void (*)(const char*, const char*, const Int*, T*, const Int*, R*, T*,
                            const Int*, Int*, const Int*, Int*, Len, Len);
        (void)rwork;
        (void)lrwork;
        reinterpret_cast<Fn>(f)(&call_.mode, &call_.uplo, &ni_, a.data(), &lda_, w.data(), work,
                                lwork, iwork, liwork, info, 1, 1);
      }
    };
    T work_query;
    R rwork_query = 0;
    Int iwork_query = 0, lwork = -1, lrwork = -1, liwork = -1, info = 0;
    call(&work_query, &lwork, &rwork_query, &lrwork, &iwork_query, &liwork, &info);
    lwork = WorkspaceSize(work_query);
    lrwork = std::max<Int>(1, static_cast<Int>(rwork_query));
    liwork = std::max<Int>(1, iwork_query);
    std::vector<T> work = Scratch<T>(lwork);
    std::vector<R> rwork = Scratch<R>(lrwork);
    std::vector<Int> iwork = Scratch<Int>(liwork);
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      Load(0, b, n_, n_, a);
      call(work.data(), &lwork, rwork.data(), &lrwork, iwork.data(), &liwork, &info);
      Store(a, n_, n_, 0, b);
      StoreVector(w.data(), n_, 1, b);
      StoreInfo(info, 2, b);
    }
    return absl::OkStatus();
  }

  // LAPACK's real eigenvectors, complex pairs in consecutive columns, as
  // complex columns (row-major out).
  static void UnpackEigenvectors(const R* packed, const R* wi, int64_t n,
                                 std::complex<R>* out) {
    for (int64_t j = 0; j < n; ++j) {
      if (wi[j] != 0 && j + 1 < n) {
        for (int64_t r = 0; r < n; ++r) {
          const R re = packed[j * n + r], im = packed[(j + 1) * n + r];
          out[r * n + j] = std::complex<R>(re, im);
          out[r * n + j + 1] = std::complex<R>(re, -im);
        }
        ++j;
      } else {
        for (int64_t r = 0; r < n; ++r) out[r * n + j] = std::complex<R>(packed[j * n + r], 0);
      }
    }
  }

  absl::Status Geev(void* f) {
    const char jl = call_.left, jr = call_.right;
    const Int ldvl = jl == 'V' ? std::max<Int>(1, ni_) : 1, ldvr = jr == 'V' ? std::max<Int>(1, ni_) : 1;
    std::vector<T> a = Scratch<T>(n_ * n_), vl = Scratch<T>(n_ * n_), vr = Scratch<T>(n_ * n_);
    std::vector<T> w = Scratch<T>(n_), wi = Scratch<T>(n_);  // wi: real only.
    std::vector<R> rwork = Scratch<R>(2 * n_);
    auto call = [&](T* work, Int* lwork, Int* info) {
      if constexpr (kIsComplex<T>) {
        using Fn = void (*)(const char*, const char*, const Int*, T*, const Int*, T*, T*,
                            const Int*, T*, const Int*, T*, const Int*, R*, Int*, Len, Len);
        reinterpret_cast<Fn>(f)(&jl, &jr, &ni_, a.data(), &lda_, w.data(), vl.data(), &ldvl,
                                vr.data(), &ldvr, work, lwork, rwork.data(), info, 1, 1);
      } else {
        using Fn = void (*)(const char*, const char*, const Int*, T*, const Int*, T*, T*, T*,
                            const Int*, T*, const Int*, T*, const Int*, Int*, Len, Len);
        reinterpret_cast<Fn>(f)(&jl, &jr, &ni_, a.data(), &lda_, w.data(), wi.data(), vl.data(),
                                &ldvl, vr.data(), &ldvr, work, lwork, info, 1, 1);
      }
    };
    Int lwork = 0, info = 0;
    std::vector<T> work = QueriedWorkspace<T>(call, &lwork);
    const size_t left = kIsComplex<T> ? 1 : 2, right = left + 1, info_out = right + 1;
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      Load(0, b, n_, n_, a);
      for (size_t r = 0; r <= info_out; ++r) Zero(r, b);
      // XLA:CPU's rule: a matrix with a NaN or infinity is not decomposed (info -4).
      if (!AllFinite(a.data(), n_ * n_)) {
        StoreInfo(-4, info_out, b);
        continue;
      }
      call(work.data(), &lwork, &info);
      StoreVector(w.data(), n_, 0, b);
      if constexpr (!kIsComplex<T>) StoreVector(wi.data(), n_, 1, b);
      if (info == 0) {
        if constexpr (kIsComplex<T>) {
          if (jl == 'V') Store(vl, n_, n_, left, b);
          if (jr == 'V') Store(vr, n_, n_, right, b);
        } else {
          using C = std::complex<R>;
          if (jl == 'V') UnpackEigenvectors(vl.data(), wi.data(), n_, frame_.Out<C>(left, b));
          if (jr == 'V') UnpackEigenvectors(vr.data(), wi.data(), n_, frame_.Out<C>(right, b));
        }
      }
      StoreInfo(info, info_out, b);
    }
    return absl::OkStatus();
  }

  absl::Status Gees(void* f) {
    const char jobvs = call_.mode, sort = 'N';
    const Int ldvs = jobvs == 'V' ? std::max<Int>(1, ni_) : 1;
    std::vector<T> a = Scratch<T>(n_ * n_), vs = Scratch<T>(n_ * n_);
    std::vector<T> w = Scratch<T>(n_), wi = Scratch<T>(n_);
    std::vector<R> rwork = Scratch<R>(n_);
    std::vector<Int> bwork = Scratch<Int>(n_);
    Int sdim = 0;
    auto call = [&](T* work, Int* lwork, Int* info) {
      if constexpr (kIsComplex<T>) {
        using Fn = void (*)(const char*, const char*, void*, const Int*, T*, const Int*, Int*, T*,
                            T*, const Int*, T*, const Int*, R*, Int*, Int*, Len, Len);
        reinterpret_cast<Fn>(f)(&jobvs, &sort, nullptr, &ni_, a.data(), &lda_, &sdim, w.data(),
                                vs.data(), &ldvs, work, lwork, rwork.data(), bwork.data(), info,
                                1, 1);
      } else {
        using Fn = void (*)(const char*, const char*, void*, const Int*, T*, const Int*, Int*, T*,
                            T*, T*, const Int*, T*, const Int*, Int*, Int*, Len, Len);
        reinterpret_cast<Fn>(f)(&jobvs, &sort, nullptr, &ni_, a.data(), &lda_, &sdim, w.data(),
                                wi.data(), vs.data(), &ldvs, work, lwork, bwork.data(), info, 1,
                                1);
      }
    };
    Int lwork = 0, info = 0;
    std::vector<T> work = QueriedWorkspace<T>(call, &lwork);
    const size_t eig = 2, sdim_out = kIsComplex<T> ? 3 : 4, info_out = sdim_out + 1;
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      Load(0, b, n_, n_, a);
      call(work.data(), &lwork, &info);
      Store(a, n_, n_, 0, b);
      if (jobvs == 'V') {
        Store(vs, n_, n_, 1, b);
      } else {
        Zero(1, b);
      }
      StoreVector(w.data(), n_, eig, b);
      if constexpr (!kIsComplex<T>) StoreVector(wi.data(), n_, eig + 1, b);
      StoreInfo(sdim, sdim_out, b);
      StoreInfo(info, info_out, b);
    }
    return absl::OkStatus();
  }

  absl::Status Gehrd(void* f) {
    using Fn = void (*)(const Int*, const Int*, const Int*, T*, const Int*, T*, T*, const Int*,
                        Int*);
    std::vector<T> a = Scratch<T>(n_ * n_), tau = Scratch<T>(n_ - 1);
    T query;
    Int lwork = -1, info = 0;
    reinterpret_cast<Fn>(f)(&ni_, &call_.low, &call_.high, a.data(), &lda_, tau.data(), &query,
                            &lwork, &info);
    lwork = WorkspaceSize(query);
    std::vector<T> work = Scratch<T>(lwork);
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      Load(0, b, n_, n_, a);
      reinterpret_cast<Fn>(f)(&ni_, &call_.low, &call_.high, a.data(), &lda_, tau.data(),
                              work.data(), &lwork, &info);
      Store(a, n_, n_, 0, b);
      StoreVector(tau.data(), n_ - 1, 1, b);
      StoreInfo(info, 2, b);
    }
    return absl::OkStatus();
  }

  absl::Status Sytrd(void* f) {
    using Fn = void (*)(const char*, const Int*, T*, const Int*, R*, R*, T*, T*, const Int*, Int*,
                        Len);
    std::vector<T> a = Scratch<T>(n_ * n_), tau = Scratch<T>(n_ - 1);
    std::vector<R> d = Scratch<R>(n_), e = Scratch<R>(n_ - 1);
    T query;
    Int lwork = -1, info = 0;
    reinterpret_cast<Fn>(f)(&call_.uplo, &ni_, a.data(), &lda_, d.data(), e.data(), tau.data(),
                            &query, &lwork, &info, 1);
    lwork = WorkspaceSize(query);
    std::vector<T> work = Scratch<T>(lwork);
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      Load(0, b, n_, n_, a);
      reinterpret_cast<Fn>(f)(&call_.uplo, &ni_, a.data(), &lda_, d.data(), e.data(), tau.data(),
                              work.data(), &lwork, &info, 1);
      Store(a, n_, n_, 0, b);
      StoreVector(d.data(), n_, 1, b);
      StoreVector(e.data(), n_ - 1, 2, b);
      StoreVector(tau.data(), n_ - 1, 3, b);
      StoreInfo(info, 4, b);
    }
    return absl::OkStatus();
  }

  absl::Status Gtsv(void* f) {
    using Fn = void (*)(const Int*, const Int*, T*, T*, T*, T*, const Int*, Int*);
    // n_ is the system's size (the diagonals' length), operand 3 holds the
    // right-hand sides.
    const int64_t rows = n_, cols = frame_.OperandDims(3).back();
    const Int ri = static_cast<Int>(rows), ci = static_cast<Int>(cols);
    const Int ldb = std::max<Int>(1, ri);
    std::vector<T> dl = Scratch<T>(rows + 1), d = Scratch<T>(rows), du = Scratch<T>(rows);
    std::vector<T> x = Scratch<T>(rows * cols);
    for (int64_t b = frame_.begin(); b < frame_.end(); ++b) {
      if (rows > 0) {
        std::memcpy(dl.data(), frame_.In<T>(0, b), sizeof(T) * rows);
        std::memcpy(d.data(), frame_.In<T>(1, b), sizeof(T) * rows);
        std::memcpy(du.data(), frame_.In<T>(2, b), sizeof(T) * rows);
      }
      Load(3, b, rows, cols, x);
      Int info = 0;
      // dl[0] is outside the matrix (JAX's convention): LAPACK gets dl[1:].
      reinterpret_cast<Fn>(f)(&ri, &ci, dl.data() + 1, d.data(), du.data(), x.data(), &ldb, &info);
      StoreVector(dl.data(), rows, 0, b);
      StoreVector(d.data(), rows, 1, b);
      StoreVector(du.data(), rows, 2, b);
      Store(x, rows, cols, 3, b);
      StoreInfo(info, 4, b);
    }
    return absl::OkStatus();
  }

  const LapackCall& call_;
  const Frame& frame_;
  const int64_t m_, n_;
  const Int mi_, ni_, lda_;
};

template <typename T>
absl::Status RunTyped(const LapackCall& call, const CustomCallFrame& frame, void* f) {
  // Operand 0 is each routine's matrix [..., m, n] (trsm: the k x k
  // triangle), or gtsv's first diagonal [..., n]; the dimensions before those
  // are the batch.
  const absl::Span<const int64_t> dims = frame.operands[0].dims;
  const size_t core = call.routine == Routine::kGtsv ? 1 : 2;
  int64_t batch = 1;
  for (size_t i = 0; i + core < dims.size(); ++i) batch *= dims[i];
  const int64_t m = core == 2 ? dims[dims.size() - 2] : 1, n = dims.back();
  if (batch == 0) return absl::OkStatus();
  // Elements are independent: a range of them per task, each with its own
  // scratch and workspace, so results do not depend on the thread count.
  auto run_range = [&](int64_t begin, int64_t end) {
    Frame typed(frame, batch, begin, end);
    Kernels<T> kernels(call, typed, m, n);
    return kernels.Run(f);
  };
  // About m*n*min(m,n) operations per element: ranges of at least 2^16 of
  // them, so that handing a range to a worker costs little next to it.
  const int64_t work = std::max<int64_t>(1, m * n * std::max<int64_t>(1, std::min(m, n)));
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / work);
  if (frame.parallel == nullptr || batch <= grain) return run_range(0, batch);
  std::mutex mu;
  absl::Status first;
  (*frame.parallel)(batch, grain, [&](int64_t begin, int64_t end) {
    absl::Status status = run_range(begin, end);
    if (status.ok()) return;
    std::lock_guard<std::mutex> lock(mu);
    if (first.ok()) first = std::move(status);
  });
  return first;
}

}  // namespace

absl::Status RunLapackCall(const LapackCall& call, const CustomCallFrame& frame) {
  absl::StatusOr<const LapackLibrary*> library = LapackLibrary::Get();
  if (!library.ok()) return library.status();
  absl::StatusOr<void*> routine = (*library)->Routine(call.name);
  if (!routine.ok()) return routine.status();
  switch (call.type) {
    case xla::F32: return RunTyped<float>(call, frame, *routine);
    case xla::F64: return RunTyped<double>(call, frame, *routine);
    case xla::C64: return RunTyped<std::complex<float>>(call, frame, *routine);
    case xla::C128: return RunTyped<std::complex<double>>(call, frame, *routine);
    default:
      return absl::InternalError(absl::StrCat("LAPACK call on ", PrimitiveTypeName(call.type)));
  }
}

}  // namespace lapack
}  // namespace hloc
