// Complex arithmetic of the elemental emitter. A c64 (c128) value is an LLVM
// struct {float, float} ({double, double}) holding (real, imaginary), which
// is also std::complex's layout in memory, so arrays load and store whole
// elements.
//
// The interpreter (hlo/evaluator/elementwise.cc) defines each op through
// std::complex, i.e. the C library's complex functions; the formulas here
// are the textbook ones those functions use on finite arguments:
//   z * w   = (ac - bd, ad + bc)
//   z / w   c64: the same formula in double, rounded once (as libgcc divides
//           complex floats); c128: Smith's algorithm (scale by the larger
//           part of w); a zero divisor gives infinities (C99 Annex G)
//   |z|     hypot(a, b)
//   exp z   e^a (cos b, sin b)          log z  (log |z|, atan2(b, a))
//   sqrt z  t = sqrt((|a| + |z|) / 2); a >= 0: (t, b / 2t),
//           else (|b| / 2t, copysign(t, b))
//   sin z   (sin a cosh b, cos a sinh b)
//   cos z   (cos a cosh b, -sin a sinh b)
//   tanh z  (sinh 2a, sin 2b) / (cosh 2a + cos 2b), (sign a, 0) once
//           |a| is large enough that the quotient would overflow
//   tan z   -i tanh(iz)
//   z ^ w   exp(w log z); 1 when z = 1 or w = 0
//   atan2(y, x)  -i log((x + iy) / sqrt(x^2 + y^2)) (the interpreter's)
// expm1, log1p, logistic and rsqrt are built from those exactly as the
// interpreter builds them (exp(z) - 1, log(z + 1), 1 / (1 + exp(-z)),
// 1 / sqrt(z)). Results agree with the interpreter within rounding, not bit
// for bit. Order comparisons, min/max and clamp are not defined on complex
// numbers (XLA defines no order on them).
#include <cmath>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/llvm/elemental_ir_emitter.h"
#include "hlo/status_macros.h"
#include "llvm/IR/Intrinsics.h"

namespace hloc {
namespace codegen {
namespace {

absl::Status UnsupportedComplex(const HloInstruction& hlo) {
  return absl::UnimplementedError(
      absl::StrCat("instruction %", hlo.name(), " (", HloOpcodeName(hlo.opcode()), ") on ",
                   PrimitiveTypeName(hlo.operand(0)->shape().element_type()),
                   " is not supported by the elemental emitter"));
}

// Complex values as (re, im) pairs of scalars while computing.
struct Parts {
  llvm::Value* re;
  llvm::Value* im;
};

// The arithmetic on Parts, with the math library behind `math`.
class ComplexMath {
 public:
  using MathCall =
      std::function<absl::StatusOr<llvm::Value*>(MathFunction, absl::Span<llvm::Value* const>)>;
  ComplexMath(llvm::IRBuilder<>* b, llvm::Type* component, MathCall math)
      : b_(b), t_(component), math_(std::move(math)) {}

  llvm::Value* Fp(double v) const { return llvm::ConstantFP::get(t_, v); }
  llvm::Value* Abs(llvm::Value* x) { return b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
  llvm::Value* Sqrt(llvm::Value* x) { return b_->CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x); }
  llvm::Value* CopySign(llvm::Value* magnitude, llvm::Value* sign) {
    return b_->CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, sign);
  }
  absl::StatusOr<llvm::Value*> Call(MathFunction f, std::vector<llvm::Value*> args) {
    return math_(f, args);
  }

  Parts Add(Parts x, Parts y) { return {b_->CreateFAdd(x.re, y.re), b_->CreateFAdd(x.im, y.im)}; }
  Parts Sub(Parts x, Parts y) { return {b_->CreateFSub(x.re, y.re), b_->CreateFSub(x.im, y.im)}; }
  Parts Mul(Parts x, Parts y) {
    return {b_->CreateFSub(b_->CreateFMul(x.re, y.re), b_->CreateFMul(x.im, y.im)),
            b_->CreateFAdd(b_->CreateFMul(x.re, y.im), b_->CreateFMul(x.im, y.re))};
  }

  Parts Div(Parts x, Parts y) {
    Parts q;
    if (t_->isFloatTy()) {
      // In double: no overflow or underflow of c^2 + d^2 for float inputs.
      llvm::Type* d = b_->getDoubleTy();
      llvm::Value* a = b_->CreateFPExt(x.re, d);
      llvm::Value* bb = b_->CreateFPExt(x.im, d);
      llvm::Value* c = b_->CreateFPExt(y.re, d);
      llvm::Value* dd = b_->CreateFPExt(y.im, d);
      llvm::Value* denom = b_->CreateFAdd(b_->CreateFMul(c, c), b_->CreateFMul(dd, dd));
      llvm::Value* re = b_->CreateFDiv(b_->CreateFAdd(b_->CreateFMul(a, c), b_->CreateFMul(bb, dd)), denom);
      llvm::Value* im = b_->CreateFDiv(b_->CreateFSub(b_->CreateFMul(bb, c), b_->CreateFMul(a, dd)), denom);
      q = {b_->CreateFPTrunc(re, t_), b_->CreateFPTrunc(im, t_)};
    } else {
      // Smith: divide through by the larger of |c| and |d|.
      llvm::Value* c_larger = b_->CreateFCmpOGE(Abs(y.re), Abs(y.im));
      llvm::Value* big = b_->CreateSelect(c_larger, y.re, y.im);
      llvm::Value* small = b_->CreateSelect(c_larger, y.im, y.re);
      llvm::Value* ratio = b_->CreateFDiv(small, big);
      llvm::Value* denom = b_->CreateFAdd(big, b_->CreateFMul(small, ratio));
      // c larger: ((a + b r), (b - a r)) / denom; d larger: ((a r + b), (b r - a)) / denom.
      llvm::Value* re_l = b_->CreateFAdd(x.re, b_->CreateFMul(x.im, ratio));
      llvm::Value* im_l = b_->CreateFSub(x.im, b_->CreateFMul(x.re, ratio));
      llvm::Value* re_s = b_->CreateFAdd(b_->CreateFMul(x.re, ratio), x.im);
      llvm::Value* im_s = b_->CreateFSub(b_->CreateFMul(x.im, ratio), x.re);
      q = {b_->CreateFDiv(b_->CreateSelect(c_larger, re_l, re_s), denom),
           b_->CreateFDiv(b_->CreateSelect(c_larger, im_l, im_s), denom)};
    }
    // x / 0 with x not NaN: infinities with the signs of x's parts.
    llvm::Value* zero_divisor =
        b_->CreateAnd(b_->CreateFCmpOEQ(y.re, Fp(0)), b_->CreateFCmpOEQ(y.im, Fp(0)));
    llvm::Value* x_number =
        b_->CreateOr(b_->CreateFCmpORD(x.re, x.re), b_->CreateFCmpORD(x.im, x.im));
    llvm::Value* q_nan = b_->CreateAnd(b_->CreateFCmpUNO(q.re, q.re), b_->CreateFCmpUNO(q.im, q.im));
    llvm::Value* fix = b_->CreateAnd(b_->CreateAnd(zero_divisor, x_number), q_nan);
    llvm::Value* inf = CopySign(Fp(INFINITY), y.re);
    return {b_->CreateSelect(fix, b_->CreateFMul(inf, x.re), q.re),
            b_->CreateSelect(fix, b_->CreateFMul(inf, x.im), q.im)};
  }

  absl::StatusOr<llvm::Value*> Modulus(Parts z) { return Call(MathFunction::kHypot, {z.re, z.im}); }

  absl::StatusOr<Parts> Exp(Parts z) {
    HLOC_ASSIGN_OR_RETURN(llvm::Value * e, Call(MathFunction::kExp, {z.re}));
    HLOC_ASSIGN_OR_RETURN(llvm::Value * c, Call(MathFunction::kCos, {z.im}));
    HLOC_ASSIGN_OR_RETURN(llvm::Value * s, Call(MathFunction::kSin, {z.im}));
    // A zero imaginary part stays exactly zero (exp of a real number).
    llvm::Value* real_arg = b_->CreateFCmpOEQ(z.im, Fp(0));
    return Parts{b_->CreateSelect(real_arg, e, b_->CreateFMul(e, c)),
                 b_->CreateSelect(real_arg, z.im, b_->CreateFMul(e, s))};
  }

  absl::StatusOr<Parts> Log(Parts z) {
    HLOC_ASSIGN_OR_RETURN(llvm::Value * m, Modulus(z));
    HLOC_ASSIGN_OR_RETURN(llvm::Value * re, Call(MathFunction::kLog, {m}));
    HLOC_ASSIGN_OR_RETURN(llvm::Value * im, Call(MathFunction::kAtan2, {z.im, z.re}));
    return Parts{re, im};
  }

  absl::StatusOr<Parts> SquareRoot(Parts z) {
    HLOC_ASSIGN_OR_RETURN(llvm::Value * m, Modulus(z));
    llvm::Value* t = Sqrt(b_->CreateFMul(b_->CreateFAdd(Abs(z.re), m), Fp(0.5)));
    llvm::Value* other = b_->CreateFDiv(Abs(z.im), b_->CreateFMul(t, Fp(2)));
    llvm::Value* non_negative = b_->CreateFCmpOGE(z.re, Fp(0));
    llvm::Value* re = b_->CreateSelect(non_negative, t, other);
    llvm::Value* im = CopySign(b_->CreateSelect(non_negative, other, t), z.im);
    // sqrt(+-0 + bi) with b = +-0: (+0, b).
    llvm::Value* zero = b_->CreateAnd(b_->CreateFCmpOEQ(z.re, Fp(0)), b_->CreateFCmpOEQ(z.im, Fp(0)));
    return Parts{b_->CreateSelect(zero, Fp(0), re), b_->CreateSelect(zero, z.im, im)};
  }

  // cosh and sinh of a real x; sinh through expm1 keeps small x accurate.
  absl::Status CoshSinh(llvm::Value* x, llvm::Value** cosh, llvm::Value** sinh) {
    HLOC_ASSIGN_OR_RETURN(llvm::Value * ep, Call(MathFunction::kExp, {x}));
    HLOC_ASSIGN_OR_RETURN(llvm::Value * en, Call(MathFunction::kExp, {b_->CreateFNeg(x)}));
    HLOC_ASSIGN_OR_RETURN(llvm::Value * mp, Call(MathFunction::kExpm1, {x}));
    HLOC_ASSIGN_OR_RETURN(llvm::Value * mn, Call(MathFunction::kExpm1, {b_->CreateFNeg(x)}));
    *cosh = b_->CreateFMul(b_->CreateFAdd(ep, en), Fp(0.5));
    *sinh = b_->CreateFMul(b_->CreateFSub(mp, mn), Fp(0.5));
    return absl::OkStatus();
  }

  absl::StatusOr<Parts> SinCos(Parts z, bool cosine) {
    HLOC_ASSIGN_OR_RETURN(llvm::Value * s, Call(MathFunction::kSin, {z.re}));
    HLOC_ASSIGN_OR_RETURN(llvm::Value * c, Call(MathFunction::kCos, {z.re}));
    llvm::Value *ch, *sh;
    HLOC_RETURN_IF_ERROR(CoshSinh(z.im, &ch, &sh));
    if (!cosine) return Parts{b_->CreateFMul(s, ch), b_->CreateFMul(c, sh)};
    return Parts{b_->CreateFMul(c, ch), b_->CreateFNeg(b_->CreateFMul(s, sh))};
  }

  absl::StatusOr<Parts> Tanh(Parts z) {
    llvm::Value* two_a = b_->CreateFMul(z.re, Fp(2));
    llvm::Value* two_b = b_->CreateFMul(z.im, Fp(2));
    llvm::Value *ch, *sh;
    HLOC_RETURN_IF_ERROR(CoshSinh(two_a, &ch, &sh));
    HLOC_ASSIGN_OR_RETURN(llvm::Value * s, Call(MathFunction::kSin, {two_b}));
    HLOC_ASSIGN_OR_RETURN(llvm::Value * c, Call(MathFunction::kCos, {two_b}));
    llvm::Value* denom = b_->CreateFAdd(ch, c);
    llvm::Value* re = b_->CreateFDiv(sh, denom);
    llvm::Value* im = b_->CreateFDiv(s, denom);
    // Past |a| = 40 (float) or 360 (double) tanh's real part is +-1 to the
    // last bit and the imaginary part below the smallest normal.
    llvm::Value* large = b_->CreateFCmpOGT(Abs(z.re), Fp(t_->isFloatTy() ? 40.0 : 360.0));
    return Parts{b_->CreateSelect(large, CopySign(Fp(1), z.re), re),
                 b_->CreateSelect(large, CopySign(Fp(0), s), im)};
  }

 private:
  llvm::IRBuilder<>* b_;
  llvm::Type* t_;
  MathCall math_;
};

}  // namespace

// ---------------------------------------------------------------- helpers

namespace {

Parts Split(llvm::IRBuilder<>* b, llvm::Value* v) {
  return {b->CreateExtractValue(v, {0}), b->CreateExtractValue(v, {1})};
}

llvm::Value* Join(llvm::IRBuilder<>* b, Parts p) {
  llvm::Type* t = llvm::StructType::get(p.re->getType(), p.re->getType());
  llvm::Value* v = b->CreateInsertValue(llvm::UndefValue::get(t), p.re, {0});
  return b->CreateInsertValue(v, p.im, {1});
}

llvm::Type* ComponentLlvmType(llvm::IRBuilder<>* b, PrimitiveType complex_type) {
  return complex_type == xla::C64 ? b->getFloatTy() : b->getDoubleTy();
}

}  // namespace

llvm::Value* ElementalIrEmitter::ComplexMultiplyAdd(llvm::Value* acc, llvm::Value* x,
                                                    llvm::Value* y) {
  ComplexMath m(b_, x->getType()->getStructElementType(0), nullptr);
  return Join(b_, m.Add(Split(b_, acc), m.Mul(Split(b_, x), Split(b_, y))));
}

// ---------------------------------------------------------------- unary

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitComplexUnaryOp(const HloInstruction& hlo,
                                                                    llvm::Value* v) {
  const PrimitiveType type = hlo.operand(0)->shape().element_type();
  ComplexMath m(b_, ComponentLlvmType(b_, type),
                [this](MathFunction f, absl::Span<llvm::Value* const> args) {
                  return CallMath(f, args);
                });
  const Parts z = Split(b_, v);
  auto join = [&](absl::StatusOr<Parts> p) -> absl::StatusOr<llvm::Value*> {
    if (!p.ok()) return p.status();
    return Join(b_, *p);
  };
  const Parts one{m.Fp(1), m.Fp(0)};
  switch (hlo.opcode()) {
    case HloOpcode::kNegate: return Join(b_, {b_->CreateFNeg(z.re), b_->CreateFNeg(z.im)});
    case HloOpcode::kReal: return z.re;
    case HloOpcode::kImag: return z.im;
    case HloOpcode::kAbs: return m.Modulus(z);
    case HloOpcode::kIsFinite: {
      auto finite = [&](llvm::Value* x) { return b_->CreateFCmpONE(m.Abs(x), m.Fp(INFINITY)); };
      return b_->CreateZExt(b_->CreateAnd(finite(z.re), finite(z.im)), b_->getInt8Ty());
    }
    case HloOpcode::kSign: {
      HLOC_ASSIGN_OR_RETURN(llvm::Value * r, m.Modulus(z));
      llvm::Value* zero = b_->CreateFCmpOEQ(r, m.Fp(0));
      return Join(b_, {b_->CreateSelect(zero, m.Fp(0), b_->CreateFDiv(z.re, r)),
                       b_->CreateSelect(zero, m.Fp(0), b_->CreateFDiv(z.im, r))});
    }
    case HloOpcode::kExp: return join(m.Exp(z));
    case HloOpcode::kExpm1: {
      HLOC_ASSIGN_OR_RETURN(Parts e, m.Exp(z));
      return Join(b_, m.Sub(e, one));
    }
    case HloOpcode::kLog: return join(m.Log(z));
    case HloOpcode::kLog1p: return join(m.Log(m.Add(z, one)));
    case HloOpcode::kLogistic: {
      HLOC_ASSIGN_OR_RETURN(Parts e, m.Exp({b_->CreateFNeg(z.re), b_->CreateFNeg(z.im)}));
      return Join(b_, m.Div(one, m.Add(one, e)));
    }
    case HloOpcode::kSqrt: return join(m.SquareRoot(z));
    case HloOpcode::kRsqrt: {
      HLOC_ASSIGN_OR_RETURN(Parts s, m.SquareRoot(z));
      return Join(b_, m.Div(one, s));
    }
    case HloOpcode::kSin: return join(m.SinCos(z, /*cosine=*/false));
    case HloOpcode::kCos: return join(m.SinCos(z, /*cosine=*/true));
    case HloOpcode::kTanh: return join(m.Tanh(z));
    case HloOpcode::kTan: {
      // tan z = -i tanh(iz), iz = (-b, a); -i (x + iy) = (y, -x).
      HLOC_ASSIGN_OR_RETURN(Parts t, m.Tanh({b_->CreateFNeg(z.im), z.re}));
      return Join(b_, {t.im, b_->CreateFNeg(t.re)});
    }
    default: return UnsupportedComplex(hlo);
  }
}

// ---------------------------------------------------------------- binary

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitComplexBinaryOp(const HloInstruction& hlo,
                                                                     llvm::Value* lhs,
                                                                     llvm::Value* rhs) {
  if (hlo.opcode() == HloOpcode::kComplex) {
    const PrimitiveType from = hlo.operand(0)->shape().element_type();
    const PrimitiveType component = ComplexComponentType(hlo.shape().element_type());
    HLOC_ASSIGN_OR_RETURN(llvm::Value * re, EmitConvert(from, component, lhs));
    HLOC_ASSIGN_OR_RETURN(llvm::Value * im, EmitConvert(from, component, rhs));
    return Join(b_, {re, im});
  }
  const PrimitiveType type = hlo.operand(0)->shape().element_type();
  ComplexMath m(b_, ComponentLlvmType(b_, type),
                [this](MathFunction f, absl::Span<llvm::Value* const> args) {
                  return CallMath(f, args);
                });
  const Parts x = Split(b_, lhs), y = Split(b_, rhs);
  switch (hlo.opcode()) {
    case HloOpcode::kAdd: return Join(b_, m.Add(x, y));
    case HloOpcode::kSubtract: return Join(b_, m.Sub(x, y));
    case HloOpcode::kMultiply: return Join(b_, m.Mul(x, y));
    case HloOpcode::kDivide: return Join(b_, m.Div(x, y));
    case HloOpcode::kPower: {
      HLOC_ASSIGN_OR_RETURN(Parts log_x, m.Log(x));
      HLOC_ASSIGN_OR_RETURN(Parts p, m.Exp(m.Mul(y, log_x)));
      llvm::Value* x_one =
          b_->CreateAnd(b_->CreateFCmpOEQ(x.re, m.Fp(1)), b_->CreateFCmpOEQ(x.im, m.Fp(0)));
      llvm::Value* y_zero =
          b_->CreateAnd(b_->CreateFCmpOEQ(y.re, m.Fp(0)), b_->CreateFCmpOEQ(y.im, m.Fp(0)));
      llvm::Value* trivial = b_->CreateOr(x_one, y_zero);
      return Join(b_, {b_->CreateSelect(trivial, m.Fp(1), p.re),
                       b_->CreateSelect(trivial, m.Fp(0), p.im)});
    }
    case HloOpcode::kAtan2: {
      // atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)), the interpreter's
      // definition; here y = lhs, x = rhs.
      const Parts i_y{b_->CreateFNeg(x.im), x.re};
      HLOC_ASSIGN_OR_RETURN(Parts root, m.SquareRoot(m.Add(m.Mul(y, y), m.Mul(x, x))));
      HLOC_ASSIGN_OR_RETURN(Parts l, m.Log(m.Div(m.Add(y, i_y), root)));
      return Join(b_, {l.im, b_->CreateFNeg(l.re)});
    }
    default: return UnsupportedComplex(hlo);
  }
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitComplexCompare(ComparisonDirection direction,
                                                                    llvm::Value* lhs,
                                                                    llvm::Value* rhs) {
  if (direction != ComparisonDirection::kEq && direction != ComparisonDirection::kNe) {
    return absl::InvalidArgumentError("complex numbers compare only for EQ and NE");
  }
  const Parts x = Split(b_, lhs), y = Split(b_, rhs);
  llvm::Value* equal =
      b_->CreateAnd(b_->CreateFCmpOEQ(x.re, y.re), b_->CreateFCmpOEQ(x.im, y.im));
  llvm::Value* result = direction == ComparisonDirection::kEq ? equal : b_->CreateNot(equal);
  return b_->CreateZExt(result, b_->getInt8Ty());
}

// ---------------------------------------------------------------- convert

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitComplexConvert(PrimitiveType from,
                                                                    PrimitiveType to,
                                                                    llvm::Value* v) {
  if (IsComplex(from)) {
    const Parts z = Split(b_, v);
    const PrimitiveType component = ComplexComponentType(from);
    if (IsComplex(to)) {
      const PrimitiveType to_component = ComplexComponentType(to);
      HLOC_ASSIGN_OR_RETURN(llvm::Value * re, EmitConvert(component, to_component, z.re));
      HLOC_ASSIGN_OR_RETURN(llvm::Value * im, EmitConvert(component, to_component, z.im));
      return Join(b_, {re, im});
    }
    if (to == xla::PRED) {
      llvm::Value* zero = llvm::ConstantFP::get(z.re->getType(), 0.0);
      llvm::Value* nonzero = b_->CreateOr(b_->CreateFCmpUNE(z.re, zero), b_->CreateFCmpUNE(z.im, zero));
      return b_->CreateZExt(nonzero, b_->getInt8Ty());
    }
    return EmitConvert(component, to, z.re);
  }
  const PrimitiveType component = ComplexComponentType(to);
  HLOC_ASSIGN_OR_RETURN(llvm::Value * re, EmitConvert(from, component, v));
  return Join(b_, {re, llvm::ConstantFP::get(re->getType(), 0.0)});
}

}  // namespace codegen
}  // namespace hloc
