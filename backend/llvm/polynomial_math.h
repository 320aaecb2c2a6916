// Inline, vectorizable f32 transcendental functions: the host's default
// MathLowering. A call to libm's expf inside a kernel loop keeps LLVM's loop
// vectorizer out of the whole loop ("call instruction cannot be vectorized");
// the IR emitted here is straight-line arithmetic, compares, selects and
// integer bit operations, so a loop around it vectorizes like any other.
//
// Contract. These functions are NOT bit-identical to libm or to the
// interpreter (which calls libm): they are within the ULP bounds below of the
// correctly rounded result. Special values are exact: NaN in -> NaN out,
// exp(-inf) = +0, exp(+inf) = +inf, exp overflows to +inf and underflows
// through the denormals to +0 like the true function rounded, expm1(+-0) and
// tanh(+-0) keep the sign, tanh(+-inf) = +-1, log(+0) = -inf, log(x<0) = NaN,
// log(+inf) = +inf, and denormal inputs are handled (no flush to zero).
// KernelCompilerOptions::exact_math (env HLOC_HOST_EXACT_MATH=1) puts libm
// back, bit for bit with the interpreter, for bisecting a numerical
// difference.
//
// Algorithms (written for hloc; the coefficients are Taylor coefficients):
//   exp(x):   clamp x to [-104, 89] (beyond: the result is +0 / +inf anyway),
//             n = roundeven(x * log2(e)), r = x - n*ln2_hi - n*ln2_lo
//             (Cody-Waite: ln2_hi has 9 significant bits, so n*ln2_hi and the
//             subtraction are exact for |n| <= 150), |r| <= ln2/2;
//             exp(r) = 1 + (r + r^2 * P(r)) with P the Taylor series of
//             (e^r - 1 - r)/r^2 to degree 6 (truncation < 2^-31 relative);
//             scaled by 2^(n/2) and then 2^(n - n/2): each factor is a normal
//             float, the first product is exact, so results round once in
//             the normal range and overflow to +inf / underflow through the
//             denormals naturally.
//   expm1(x): the same reduction; expm1(x) = 2^n * expm1(r) + (2^n - 1),
//             exact-ish because 2^n - 1 is exact for n <= 24; n > 24 uses
//             exp's two-step scaling minus 1 (1 is below half an ulp there).
//             n = 0 (|x| < ln2/2) is the polynomial alone: no cancellation.
//   tanh(x):  e = expm1(2|x|), tanh = sign(x) * e / (e + 2), |x| clamped to
//             9.1 (tanh rounds to 1 beyond 9.01).
//   log(x):   x = 2^k * m with m in [sqrt(1/2), sqrt(2)) (denormals scaled by
//             2^23 first), f = m - 1 (exact), s = f / (2 + f),
//             log(1+f) = f - f^2/2 + s*(f^2/2 + R(s^2)),
//             R(z) = z*(2/3 + z*(2/5 + z*(2/7 + z*2/9))), the series of
//             2*atanh(s) - 2s; plus k*ln2 in hi/lo parts.
//   log1p(x): u = 1 + x rounded, log1p(x) = log(u) * (x / (u - 1)): u - 1
//             is exact, and the factor puts back what rounding 1 + x lost
//             (a classic identity of Goldberg's); u = 1 gives x itself.
//   erf(x):   below |x| = 0.921875 the Taylor series of erf to x^21, as
//             x + x * (series / x - 1) so that 2/sqrt(pi) - 1 carries the
//             leading coefficient's rounding; from there
//             sign(x) * (1 - exp(-x^2) * g(t)), where g approximates the
//             scaled complement erfc(x) e^(x^2) by a degree-12 polynomial
//             of t = |x| mapped onto [-1, 1] from [0.921875, 3.92], fitted
//             for hloc by least squares in relative error (scipy's erfcx as
//             the reference); |x| >= 3.92 gives +-1, the rounded value.
//   logistic is 1 / (1 + exp(-x)) in the elemental emitter, so it inlines
//   through exp.
//
// Measured accuracy (polynomial_math_test: every 97th f32 bit pattern of
// the whole line, ~44 million inputs per function, against the function
// computed in double by glibc, the error in ulps of the f32 result,
// ulp = 2^(exponent - 23), denormals with the denormal ulp; the test fails
// when a sweep exceeds the constants below). Worst cases seen with every
// 61st pattern (71 million inputs), 2026-11-25:
//   exp   0.972 ulp (x = -71.0052)     bound kExpMaxUlp   = 1
//   expm1 1.409 ulp (x = 17.0285)      bound kExpm1MaxUlp = 1.5
//   tanh  2.419 ulp (x = -0.00776718)  bound kTanhMaxUlp  = 2.5
//   log   0.826 ulp (x = 0.706149)     bound kLogMaxUlp   = 1
// and with every 97th (46 million inputs), 2026-11-27:
//   log1p 2.424 ulp (x = 0.00389069)   bound kLog1pMaxUlp = 3
//   erf   1.078 ulp (x = -0.97746)     bound kErfMaxUlp   = 1.5
// (libm's f32 functions are within about 0.5-1 ulp, so host and interpreter
// may differ by up to about 3 ulps.) logistic is within 2.5 ulps above
// x = -88.72; below, exp(-x) overflows and 1/(1+inf) = 0 where the function
// is a denormal, the same with libm. f16/bf16 compute in f32 and round once
// more to their type: within 1 ulp of their own type.
//
// Only f32 is inlined. f64, and sin, cos, tan, cbrt, pow, atan2
// (not in any measured hot loop yet) still call libm through `libm_`.
#ifndef HLOC_BACKEND_LLVM_POLYNOMIAL_MATH_H_
#define HLOC_BACKEND_LLVM_POLYNOMIAL_MATH_H_

#include "backend/llvm/math_lowering.h"

namespace hloc {
namespace codegen {

// Max error in f32 ulps of the correctly rounded result (see above).
inline constexpr double kExpMaxUlp = 1.0;
inline constexpr double kExpm1MaxUlp = 1.5;
inline constexpr double kTanhMaxUlp = 2.5;
inline constexpr double kLogMaxUlp = 1.0;
inline constexpr double kLog1pMaxUlp = 3;
inline constexpr double kErfMaxUlp = 1.5;

// True for the functions and types PolynomialMathLowering emits inline.
bool HasPolynomialForm(MathFunction function, llvm::Type* type);

class PolynomialMathLowering : public MathLowering {
 public:
  absl::StatusOr<llvm::Value*> Emit(llvm::IRBuilder<>& b, MathFunction function,
                                    absl::Span<llvm::Value* const> args) const override;

 private:
  LibmMathLowering libm_;
};

}  // namespace codegen
}  // namespace hloc

#endif  // HLOC_BACKEND_LLVM_POLYNOMIAL_MATH_H_
