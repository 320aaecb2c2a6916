// Inline f32 exp, expm1, tanh, log, log1p and erf (algorithms and bounds in the header).
#include "backend/llvm/polynomial_math.h"

#include <cmath>
#include <initializer_list>
#include <vector>

#include "absl/types/span.h"

#include "llvm/IR/Intrinsics.h"

namespace hloc {
namespace codegen {
namespace {

// ln(2) split so that n * kLn2Hi is exact for |n| < 2^15 (9 significant
// bits) and kLn2Hi + kLn2Lo = ln(2) to f32 precision of the sum's tail.
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kLog2E = 1.44269504088896341f;
// erf: the Taylor series below kErfSplit, the erfc fit up to kErfOne.
constexpr float kErfSplit = 0.921875f;
constexpr float kErfOne = 3.92f;

// Builds the IR of one function on a float (or float-vector) value.
class Emitter {
 public:
  Emitter(llvm::IRBuilder<>& b, llvm::Type* type)
      : b_(b), t_(type), i32_(type->getWithNewType(b.getInt32Ty())) {}

  llvm::Value* Exp(llvm::Value* x) {
    llvm::Value* xc = Clamp(x, -104.0f, 89.0f);
    Reduced red = Reduce(xc);
    llvm::Value* p = b_.CreateFAdd(F(1), Expm1OfReduced(red.r));
    llvm::Value* result = ScaleTwoSteps(p, red.n);
    return IfNan(x, result);
  }

  llvm::Value* Expm1(llvm::Value* x) {
    // Below -87 (n = -126 at most, 2^n normal) the result is -1 already.
    llvm::Value* xc = Clamp(x, -87.0f, 89.0f);
    Reduced red = Reduce(xc);
    llvm::Value* em = Expm1OfReduced(red.r);
    // n <= 24: 2^n * em + (2^n - 1), both terms close to exact.
    llvm::Value* small_n = Select(b_.CreateICmpSGT(red.n, I(24)), I(24), red.n);
    llvm::Value* s = Pow2(small_n);
    llvm::Value* small = FmulAdd(s, em, b_.CreateFSub(s, F(1)));
    // n > 24: exp(x) - 1, with exp's overflow-safe scaling.
    llvm::Value* big = b_.CreateFSub(ScaleTwoSteps(b_.CreateFAdd(F(1), em), red.n), F(1));
    llvm::Value* result = Select(b_.CreateICmpSGT(red.n, I(24)), big, small);
    // expm1(-0) = -0 (the polynomial gives +0).
    result = Select(b_.CreateFCmpOEQ(x, F(0)), x, result);
    return IfNan(x, result);
  }

  llvm::Value* Tanh(llvm::Value* x) {
    llvm::Value* a = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    // tanh(9.1) rounds to 1; NaN also maps to 9.1 here and is put back below.
    llvm::Value* ac = Select(b_.CreateFCmpOLT(a, F(9.1f)), a, F(9.1f));
    llvm::Value* two_a = b_.CreateFMul(ac, F(2));
    Reduced red = Reduce(two_a);
    llvm::Value* em = Expm1OfReduced(red.r);
    // 2|x| <= 18.2, so n <= 27; 2^n - 1 is exact up to n = 24 and is rounded
    // above, where tanh is 1 within half an ulp anyway.
    llvm::Value* s = Pow2(red.n);
    llvm::Value* e = FmulAdd(s, em, b_.CreateFSub(s, F(1)));
    llvm::Value* t = b_.CreateFDiv(e, b_.CreateFAdd(e, F(2)));
    llvm::Value* result = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, t, x);
    return IfNan(x, result);
  }

  llvm::Value* Log(llvm::Value* x) {
    // Denormals: scale by 2^23 into the normal range, take 23 off k.
    llvm::Value* denormal = b_.CreateFCmpOLT(x, F(0x1p-126f));
    llvm::Value* xs = Select(denormal, b_.CreateFMul(x, F(0x1p23f)), x);
    llvm::Value* bits = b_.CreateBitCast(xs, i32_);
    llvm::Value* k = b_.CreateSub(b_.CreateAnd(b_.CreateLShr(bits, I(23)), I(0xff)), I(127));
    k = b_.CreateSub(k, Select(denormal, I(23), I(0)));
    llvm::Value* m =
        b_.CreateBitCast(b_.CreateOr(b_.CreateAnd(bits, I(0x7fffff)), I(0x3f800000)), t_);
    // m in [1, 2): halve above sqrt(2) so that |f| <= sqrt(2) - 1.
    llvm::Value* above = b_.CreateFCmpOGT(m, F(1.41421356f));
    m = Select(above, b_.CreateFMul(m, F(0.5f)), m);
    k = b_.CreateAdd(k, Select(above, I(1), I(0)));
    llvm::Value* f = b_.CreateFSub(m, F(1));  // Exact (Sterbenz).
    llvm::Value* s = b_.CreateFDiv(f, b_.CreateFAdd(f, F(2)));
    llvm::Value* z = b_.CreateFMul(s, s);
    llvm::Value* rz = b_.CreateFMul(z, Horner(z, {2.0f / 3, 2.0f / 5, 2.0f / 7, 2.0f / 9}));
    llvm::Value* hfsq = b_.CreateFMul(F(0.5f), b_.CreateFMul(f, f));
    llvm::Value* kf = b_.CreateSIToFP(k, t_);
    // log = k*ln2_hi + (f - (hfsq - (s*(hfsq + R) + k*ln2_lo)))
    llvm::Value* tail = FmulAdd(s, b_.CreateFAdd(hfsq, rz), b_.CreateFMul(kf, F(kLn2Lo)));
    llvm::Value* result = b_.CreateFAdd(b_.CreateFMul(kf, F(kLn2Hi)),
                                        b_.CreateFSub(f, b_.CreateFSub(hfsq, tail)));
    result = Select(b_.CreateFCmpOEQ(x, F(INFINITY)), x, result);
    result = Select(b_.CreateFCmpOEQ(x, F(0)), F(-INFINITY), result);
    result = Select(b_.CreateFCmpOLT(x, F(0)), F(NAN), result);
    return IfNan(x, result);
  }

  llvm::Value* Erf(llvm::Value* x) {
    llvm::Value* a = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    // Near 0: x * (2/sqrt(pi)) * sum (-x^2)^n / (n! (2n + 1)), n <= 10, as
    // x + x * (that sum - 1): the leading 2/sqrt(pi) = 1.128... would be
    // rounded to f32 as a whole, its excess over 1 keeps 3 more bits.
    std::vector<float> taylor;
    double term = 2 / std::sqrt(M_PI);
    for (int n = 0; n <= 10; ++n) {
      taylor.push_back(static_cast<float>(term / (2 * n + 1) - (n == 0 ? 1 : 0)));
      term *= -1.0 / (n + 1);
    }
    llvm::Value* near_zero = FmulAdd(a, Horner(b_.CreateFMul(a, a), taylor), a);
    // Beyond: 1 - exp(-x^2) * g(x), g(x) = erfc(x) e^(x^2) fitted by least
    // squares (in relative error) as a polynomial of t in [-1, 1] over
    // [kErfSplit, kErfOne]; erf(x) rounds to 1 above kErfOne.
    llvm::Value* ac = Select(b_.CreateFCmpOLT(a, F(kErfOne)), a, F(kErfOne));
    llvm::Value* t = b_.CreateFMul(b_.CreateFSub(b_.CreateFMul(ac, F(2)), F(kErfSplit + kErfOne)),
                                   F(1 / (kErfOne - kErfSplit)));
    llvm::Value* g = Horner(t, {0.216844395f, -0.117595062f, 0.0605216362f, -0.0297450852f,
                                0.0140276924f, -0.00636988226f, 0.00279864296f, -0.00120225095f,
                                0.000492723833f, -0.000177437469f, 7.34692585e-05f,
                                -4.57322894e-05f, 1.56904061e-05f});
    llvm::Value* minus_square = b_.CreateFNeg(b_.CreateFMul(ac, ac));
    llvm::Value* far = b_.CreateFSub(F(1), b_.CreateFMul(Exp(minus_square), g));
    llvm::Value* result = Select(b_.CreateFCmpOLT(a, F(kErfSplit)), near_zero, far);
    result = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, result, x);
    return IfNan(x, result);
  }

  llvm::Value* Log1p(llvm::Value* x) {
    llvm::Value* u = b_.CreateFAdd(F(1), x);
    llvm::Value* d = b_.CreateFSub(u, F(1));  // Exact: what of x the sum kept.
    llvm::Value* result = b_.CreateFMul(Log(u), b_.CreateFDiv(x, d));
    // 1 + x rounded to 1: log1p(x) = x to within half an ulp (and -0 stays).
    result = Select(b_.CreateFCmpOEQ(d, F(0)), x, result);
    // x = +inf (x / d would be inf / inf).
    result = Select(b_.CreateFCmpOEQ(u, F(INFINITY)), u, result);
    return IfNan(x, result);
  }

 private:
  struct Reduced {
    llvm::Value* r;  // x - n*ln2, |r| <= ln2/2 (a little more from rounding).
    llvm::Value* n;  // i32
  };

  // `x` must be finite and within [-104, 89].
  Reduced Reduce(llvm::Value* x) {
    llvm::Value* nf =
        b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, b_.CreateFMul(x, F(kLog2E)));
    llvm::Value* r = b_.CreateFSub(x, b_.CreateFMul(nf, F(kLn2Hi)));  // Exact.
    r = b_.CreateFSub(r, b_.CreateFMul(nf, F(kLn2Lo)));
    return {r, b_.CreateFPToSI(nf, i32_)};
  }

  // e^r - 1 for |r| <= ~0.35: r + r^2 * (1/2! + r/3! + ... + r^6/8!).
  llvm::Value* Expm1OfReduced(llvm::Value* r) {
    llvm::Value* q = Horner(r, {1.0f / 2, 1.0f / 6, 1.0f / 24, 1.0f / 120, 1.0f / 720,
                                1.0f / 5040, 1.0f / 40320});
    return FmulAdd(b_.CreateFMul(r, r), q, r);
  }

  // c0 + x*(c1 + x*(c2 + ...)).
  llvm::Value* Horner(llvm::Value* x, absl::Span<const float> coefficients) {
    const float* c = coefficients.end();
    llvm::Value* acc = F(*--c);
    while (c != coefficients.begin()) acc = FmulAdd(acc, x, F(*--c));
    return acc;
  }
  llvm::Value* Horner(llvm::Value* x, std::initializer_list<float> coefficients) {
    return Horner(x, absl::Span<const float>(coefficients.begin(), coefficients.size()));
  }

  // 2^n for n in [-126, 127], as a float.
  llvm::Value* Pow2(llvm::Value* n) {
    return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(n, I(127)), I(23)), t_);
  }

  // p * 2^n for n in [-151, 129] in two normal factors.
  llvm::Value* ScaleTwoSteps(llvm::Value* p, llvm::Value* n) {
    llvm::Value* half = b_.CreateAShr(n, I(1));
    return b_.CreateFMul(b_.CreateFMul(p, Pow2(half)), Pow2(b_.CreateSub(n, half)));
  }

  // x clamped to [lo, hi]; NaN becomes `hi` (callers put NaN back).
  llvm::Value* Clamp(llvm::Value* x, float lo, float hi) {
    llvm::Value* upper = Select(b_.CreateFCmpOLT(x, F(hi)), x, F(hi));
    return Select(b_.CreateFCmpOGT(upper, F(lo)), upper, F(lo));
  }

  llvm::Value* IfNan(llvm::Value* x, llvm::Value* result) {
    return Select(b_.CreateFCmpUNO(x, x), x, result);
  }

  llvm::Value* FmulAdd(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t_}, {a, b, c});
  }
  llvm::Value* Select(llvm::Value* c, llvm::Value* a, llvm::Value* b) {
    return b_.CreateSelect(c, a, b);
  }
  llvm::Value* F(float v) { return llvm::ConstantFP::get(t_, v); }
  llvm::Value* I(int32_t v) { return llvm::ConstantInt::get(i32_, v, /*IsSigned=*/true); }

  llvm::IRBuilder<>& b_;
  llvm::Type* t_;
  llvm::Type* i32_;
};

}  // namespace

bool HasPolynomialForm(MathFunction function, llvm::Type* type) {
  if (!type->getScalarType()->isFloatTy()) return false;
  switch (function) {
    case MathFunction::kExp:
    case MathFunction::kExpm1:
    case MathFunction::kTanh:
    case MathFunction::kLog:
    case MathFunction::kLog1p:
    case MathFunction::kErf:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<llvm::Value*> PolynomialMathLowering::Emit(
    llvm::IRBuilder<>& b, MathFunction function, absl::Span<llvm::Value* const> args) const {
  if (args.size() != 1 || !HasPolynomialForm(function, args[0]->getType())) {
    return libm_.Emit(b, function, args);
  }
  Emitter emitter(b, args[0]->getType());
  switch (function) {
    case MathFunction::kExp: return emitter.Exp(args[0]);
    case MathFunction::kExpm1: return emitter.Expm1(args[0]);
    case MathFunction::kTanh: return emitter.Tanh(args[0]);
    case MathFunction::kLog: return emitter.Log(args[0]);
    case MathFunction::kLog1p: return emitter.Log1p(args[0]);
    case MathFunction::kErf: return emitter.Erf(args[0]);
    default: return libm_.Emit(b, function, args);
  }
}

}  // namespace codegen
}  // namespace hloc
