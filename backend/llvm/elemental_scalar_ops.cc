// Scalar arithmetic of the elemental emitter: value types, f16/bf16
// rounding, and the elementwise opcodes (unary, binary, compare, convert,
// clamp, reduce-precision, stochastic-convert) on single values. Every rule
// mirrors hlo/evaluator/elementwise.cc, convert.cc and stochastic_convert.cc;
// see elemental_ir_emitter.h. Complex values and the f8/f4 converts have
// their own files (elemental_complex_ops.cc, elemental_narrow_floats.cc).
// Also holds LibmMathLowering, the host's MathLowering (a few lines, kept
// here to spare the build one more LLVM-including translation unit).
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "backend/llvm/elemental_ir_emitter.h"
#include "hlo/float_formats.h"
#include "llvm/IR/Intrinsics.h"

namespace hloc {
namespace codegen {
namespace {

bool IsSixteenBitFloat(PrimitiveType type) { return type == xla::F16 || type == xla::BF16; }

bool IsSupportedFloat(PrimitiveType type) {
  return type == xla::F16 || type == xla::BF16 || type == xla::F32 || type == xla::F64;
}

// Integer-like: pred and the integer types (pred computes as u8 0/1).
bool IsIntegral(PrimitiveType type) { return type == xla::PRED || IsInteger(type); }

// s4/u4 (and s1, s2, ...): one element per byte, sign- or zero-extended from
// its low bits, as literals hold them.
bool IsSubByteInteger(PrimitiveType type) { return IsInteger(type) && BitWidth(type) < 8; }

absl::Status Unsupported(const HloInstruction& hlo, PrimitiveType type) {
  return absl::UnimplementedError(absl::StrCat("instruction %", hlo.name(), " (",
                                               HloOpcodeName(hlo.opcode()), ") on ",
                                               PrimitiveTypeName(type),
                                               " is not supported by the elemental emitter"));
}

}  // namespace

// ---------------------------------------------------------------- types

absl::StatusOr<llvm::Type*> ElementalIrEmitter::ValueType(PrimitiveType type) {
  llvm::LLVMContext& c = context();
  switch (type) {
    case xla::PRED:
    case xla::S8:
    case xla::U8: return llvm::Type::getInt8Ty(c);
    case xla::S16:
    case xla::U16:
    case xla::F16:
    case xla::BF16: return llvm::Type::getInt16Ty(c);
    case xla::S32:
    case xla::U32: return llvm::Type::getInt32Ty(c);
    case xla::S64:
    case xla::U64: return llvm::Type::getInt64Ty(c);
    case xla::F32: return llvm::Type::getFloatTy(c);
    case xla::F64: return llvm::Type::getDoubleTy(c);
    case xla::C64: return llvm::StructType::get(llvm::Type::getFloatTy(c), llvm::Type::getFloatTy(c));
    case xla::C128:
      return llvm::StructType::get(llvm::Type::getDoubleTy(c), llvm::Type::getDoubleTy(c));
    default:
      // Sub-byte integers and the f8/f4 kinds: a byte each (see the header).
      if (IsSubByteInteger(type) || IsNarrowFloat(type)) return llvm::Type::getInt8Ty(c);
      return absl::UnimplementedError(absl::StrCat("element type ", PrimitiveTypeName(type),
                                                   " is not supported by the elemental emitter"));
  }
}

absl::StatusOr<llvm::Type*> ElementalIrEmitter::ShapeValueType(const Shape& shape) {
  if (!shape.IsTuple()) return ValueType(shape.element_type());
  std::vector<llvm::Type*> fields;
  for (const Shape& element : shape.tuple_shapes()) {
    absl::StatusOr<llvm::Type*> field = ShapeValueType(element);
    if (!field.ok()) return field.status();
    fields.push_back(*field);
  }
  return llvm::StructType::get(context(), fields);
}

llvm::Value* ElementalIrEmitter::ToCompute(llvm::Value* value, PrimitiveType type) {
  llvm::LLVMContext& c = context();
  if (type == xla::F16) {
    return b_->CreateFPExt(b_->CreateBitCast(value, llvm::Type::getHalfTy(c)),
                           llvm::Type::getFloatTy(c));
  }
  if (type == xla::BF16) {
    llvm::Value* wide = b_->CreateShl(b_->CreateZExt(value, b_->getInt32Ty()), 16);
    return b_->CreateBitCast(wide, llvm::Type::getFloatTy(c));
  }
  return value;
}

llvm::Value* ElementalIrEmitter::FromCompute(llvm::Value* value, PrimitiveType type) {
  if (type == xla::F16) {
    return b_->CreateBitCast(b_->CreateFPTrunc(value, llvm::Type::getHalfTy(context())),
                             b_->getInt16Ty());
  }
  if (type == xla::BF16) {
    // Round to nearest even on the float bits; NaN keeps its top bits, quieted.
    llvm::Value* bits = b_->CreateBitCast(value, b_->getInt32Ty());
    llvm::Value* high = b_->CreateLShr(bits, 16);
    llvm::Value* is_nan = b_->CreateFCmpUNO(value, value);
    llvm::Value* nan_bits = b_->CreateOr(high, 0x40);
    llvm::Value* lsb = b_->CreateAnd(high, 1);
    llvm::Value* rounded = b_->CreateLShr(b_->CreateAdd(bits, b_->CreateAdd(lsb, b_->getInt32(0x7fff))), 16);
    return b_->CreateTrunc(b_->CreateSelect(is_nan, nan_bits, rounded), b_->getInt16Ty());
  }
  return value;
}

// f64 -> f16/bf16 rounded once: round to float with "round to odd" (an inexact
// result gets an odd last bit), which float's 13+ spare bits make exact for
// the final round to nearest even.
static llvm::Value* DoubleToFloatRoundToOdd(llvm::IRBuilder<>* b, llvm::Value* d) {
  llvm::Value* f = b->CreateFPTrunc(d, b->getFloatTy());
  llvm::Value* back = b->CreateFPExt(f, b->getDoubleTy());
  llvm::Value* inexact = b->CreateFCmpONE(back, d);
  llvm::Value* bits = b->CreateBitCast(f, b->getInt32Ty());
  llvm::Value* even = b->CreateICmpEQ(b->CreateAnd(bits, 1), b->getInt32(0));
  llvm::Value* away = b->CreateFCmpOGT(b->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                       b->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d));
  llvm::Value* adjusted =
      b->CreateSelect(away, b->CreateSub(bits, b->getInt32(1)), b->CreateAdd(bits, b->getInt32(1)));
  llvm::Value* result = b->CreateSelect(b->CreateAnd(inexact, even), adjusted, bits);
  return b->CreateBitCast(result, b->getFloatTy());
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::ConstantOf(PrimitiveType type, double value) {
  absl::StatusOr<llvm::Type*> t = ValueType(type);
  if (!t.ok()) return t.status();
  switch (type) {
    case xla::F32: return llvm::ConstantFP::get(*t, static_cast<float>(value));
    case xla::F64: return llvm::ConstantFP::get(*t, value);
    case xla::F16: return b_->getInt16(DoubleToHalf(value));
    case xla::BF16: return b_->getInt16(DoubleToBFloat16(value));
    case xla::PRED: return b_->getInt8(value != 0);
    case xla::C64:
    case xla::C128: {
      llvm::Type* part = llvm::cast<llvm::StructType>(*t)->getElementType(0);
      return llvm::ConstantStruct::get(llvm::cast<llvm::StructType>(*t),
                                       {llvm::ConstantFP::get(part, value),
                                        llvm::ConstantFP::get(part, 0.0)});
    }
    default:
      return llvm::ConstantInt::get(*t, static_cast<uint64_t>(static_cast<int64_t>(value)),
                                    IsSignedInteger(type));
  }
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::LiteralElement(const Literal& literal,
                                                                int64_t index) {
  const PrimitiveType type = literal.shape().element_type();
  absl::StatusOr<llvm::Type*> t = ValueType(type);
  if (!t.ok()) return t.status();
  const uint8_t* raw = literal.raw() + index * ByteWidth(type);
  switch (type) {
    case xla::F32: {
      float v;
      std::memcpy(&v, raw, 4);
      return llvm::ConstantFP::get(*t, v);
    }
    case xla::F64: {
      double v;
      std::memcpy(&v, raw, 8);
      return llvm::ConstantFP::get(*t, v);
    }
    case xla::C64: {
      float v[2];
      std::memcpy(v, raw, 8);
      llvm::Type* part = b_->getFloatTy();
      return llvm::ConstantStruct::get(llvm::cast<llvm::StructType>(*t),
                                       {llvm::ConstantFP::get(part, v[0]),
                                        llvm::ConstantFP::get(part, v[1])});
    }
    case xla::C128: {
      double v[2];
      std::memcpy(v, raw, 16);
      llvm::Type* part = b_->getDoubleTy();
      return llvm::ConstantStruct::get(llvm::cast<llvm::StructType>(*t),
                                       {llvm::ConstantFP::get(part, v[0]),
                                        llvm::ConstantFP::get(part, v[1])});
    }
    default: {
      uint64_t bits = 0;
      std::memcpy(&bits, raw, ByteWidth(type));
      return llvm::ConstantInt::get(*t, bits);
    }
  }
}

// ---------------------------------------------------------------- helpers

absl::StatusOr<llvm::Value*> ElementalIrEmitter::CallMath(MathFunction function,
                                                          absl::Span<llvm::Value* const> args) {
  if (math_ == nullptr) return absl::FailedPreconditionError("no math lowering was given");
  return math_->Emit(*b_, function, args);
}

llvm::Value* ElementalIrEmitter::EmitMinMax(PrimitiveType type, bool is_max, llvm::Value* lhs,
                                            llvm::Value* rhs) {
  if (IsSupportedFloat(type)) {
    llvm::Value* a = ToCompute(lhs, type);
    llvm::Value* c = ToCompute(rhs, type);
    // max: a < b ? b : a;  min: b < a ? b : a; NaN operands win, lhs first.
    llvm::Value* take_rhs = is_max ? b_->CreateFCmpOLT(a, c) : b_->CreateFCmpOLT(c, a);
    llvm::Value* result = b_->CreateSelect(take_rhs, rhs, lhs);
    result = b_->CreateSelect(b_->CreateFCmpUNO(c, c), rhs, result);
    return b_->CreateSelect(b_->CreateFCmpUNO(a, a), lhs, result);
  }
  const bool is_signed = IsSignedInteger(type);
  llvm::Value* take_rhs = is_max ? (is_signed ? b_->CreateICmpSLT(lhs, rhs) : b_->CreateICmpULT(lhs, rhs))
                                 : (is_signed ? b_->CreateICmpSLT(rhs, lhs) : b_->CreateICmpULT(rhs, lhs));
  return b_->CreateSelect(take_rhs, rhs, lhs);
}

llvm::Value* ElementalIrEmitter::IntPower(llvm::Value* base, llvm::Value* exponent,
                                          bool is_signed) {
  llvm::Type* t = base->getType();
  const unsigned bits = t->getIntegerBitWidth();
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* result = one;
  llvm::Value* square = base;
  // Square and multiply over every exponent bit, branch-free.
  for (unsigned k = 0; k < bits; ++k) {
    llvm::Value* bit = b_->CreateTrunc(b_->CreateLShr(exponent, k), b_->getInt1Ty());
    result = b_->CreateSelect(bit, b_->CreateMul(result, square), result);
    if (k + 1 < bits) square = b_->CreateMul(square, square);
  }
  llvm::Value* trivial = b_->CreateOr(b_->CreateICmpEQ(base, one),
                                      b_->CreateICmpEQ(exponent, llvm::ConstantInt::get(t, 0)));
  if (is_signed) {
    llvm::Value* negative = b_->CreateICmpSLT(exponent, llvm::ConstantInt::get(t, 0));
    result = b_->CreateSelect(negative, llvm::ConstantInt::get(t, 0), result);
  }
  return b_->CreateSelect(trivial, one, result);
}

// ---------------------------------------------------------------- unary

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitUnaryOp(const HloInstruction& hlo,
                                                             llvm::Value* v) {
  const PrimitiveType type = hlo.operand(0)->shape().element_type();
  const PrimitiveType out_type = hlo.shape().element_type();
  const HloOpcode op = hlo.opcode();
  if (op == HloOpcode::kCopy) return v;
  if (op == HloOpcode::kConvert) return EmitConvert(type, out_type, v);
  if (op == HloOpcode::kBitcastConvert) return EmitBitcastConvert(type, out_type, v);
  if (op == HloOpcode::kReducePrecision) {
    return EmitReducePrecision(type, v, hlo.attrs().exponent_bits, hlo.attrs().mantissa_bits);
  }
  if (IsComplex(type)) return EmitComplexUnaryOp(hlo, v);
  if (IsNarrowFloat(type) && (op == HloOpcode::kReal || op == HloOpcode::kImag)) {
    // real(x) is x; imag(x) is 0 converted to the format (e8m0 has no zero).
    if (op == HloOpcode::kReal) return v;
    return EmitConvert(xla::F32, out_type, llvm::ConstantFP::get(b_->getFloatTy(), 0.0));
  }
  if (IsSubByteInteger(type) || IsNarrowFloat(type)) return Unsupported(hlo, type);
  if (type == xla::PRED) {
    if (op == HloOpcode::kNot) return b_->CreateXor(v, b_->getInt8(1));
    return Unsupported(hlo, type);
  }
  if (IsInteger(type)) {
    llvm::Type* t = v->getType();
    llvm::Value* zero = llvm::ConstantInt::get(t, 0);
    const bool is_signed = IsSignedInteger(type);
    switch (op) {
      case HloOpcode::kNegate: return b_->CreateSub(zero, v);
      case HloOpcode::kAbs:
        if (!is_signed) return v;
        return b_->CreateSelect(b_->CreateICmpSLT(v, zero), b_->CreateSub(zero, v), v);
      case HloOpcode::kNot: return b_->CreateNot(v);
      case HloOpcode::kSign:
        if (!is_signed) return b_->CreateZExt(b_->CreateICmpNE(v, zero), t);
        return b_->CreateSub(b_->CreateZExt(b_->CreateICmpSGT(v, zero), t),
                             b_->CreateZExt(b_->CreateICmpSLT(v, zero), t));
      case HloOpcode::kClz:
        return b_->CreateIntrinsic(llvm::Intrinsic::ctlz, {t}, {v, b_->getFalse()});
      case HloOpcode::kPopulationCount: return b_->CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, v);
      default: return Unsupported(hlo, type);
    }
  }
  if (!IsSupportedFloat(type)) return Unsupported(hlo, type);
  llvm::Value* x = ToCompute(v, type);
  llvm::Type* ct = x->getType();
  auto fp = [&](double c) { return llvm::ConstantFP::get(ct, c); };
  llvm::Value* r = nullptr;
  switch (op) {
    case HloOpcode::kNegate: r = b_->CreateFNeg(x); break;
    case HloOpcode::kAbs: r = b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); break;
    case HloOpcode::kSign: {
      llvm::Value* magnitude = b_->CreateUIToFP(b_->CreateFCmpUNE(x, fp(0)), ct);
      r = b_->CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, x);
      r = b_->CreateSelect(b_->CreateFCmpUNO(x, x), x, r);
      break;
    }
    case HloOpcode::kCeil: r = b_->CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x); break;
    case HloOpcode::kFloor: r = b_->CreateUnaryIntrinsic(llvm::Intrinsic::floor, x); break;
    case HloOpcode::kRoundNearestAfz:
      r = b_->CreateUnaryIntrinsic(llvm::Intrinsic::round, x);
      break;
    case HloOpcode::kRoundNearestEven:
      r = b_->CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
      break;
    case HloOpcode::kSqrt: r = b_->CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x); break;
    case HloOpcode::kRsqrt:
      r = b_->CreateFDiv(fp(1), b_->CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
      break;
    case HloOpcode::kIsFinite: {
      llvm::Value* a = b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      return b_->CreateZExt(b_->CreateFCmpONE(a, fp(INFINITY)), b_->getInt8Ty());
    }
    case HloOpcode::kReal: return v;
    case HloOpcode::kImag: r = fp(0); break;
    case HloOpcode::kLogistic: {
      absl::StatusOr<llvm::Value*> e = CallMath(MathFunction::kExp, {b_->CreateFNeg(x)});
      if (!e.ok()) return e.status();
      r = b_->CreateFDiv(fp(1), b_->CreateFAdd(fp(1), *e));
      break;
    }
    default: {
      MathFunction f;
      switch (op) {
        case HloOpcode::kExp: f = MathFunction::kExp; break;
        case HloOpcode::kExpm1: f = MathFunction::kExpm1; break;
        case HloOpcode::kLog: f = MathFunction::kLog; break;
        case HloOpcode::kLog1p: f = MathFunction::kLog1p; break;
        case HloOpcode::kSin: f = MathFunction::kSin; break;
        case HloOpcode::kCos: f = MathFunction::kCos; break;
        case HloOpcode::kTan: f = MathFunction::kTan; break;
        case HloOpcode::kTanh: f = MathFunction::kTanh; break;
        case HloOpcode::kErf: f = MathFunction::kErf; break;
        case HloOpcode::kCbrt: f = MathFunction::kCbrt; break;
        default: return Unsupported(hlo, type);
      }
      absl::StatusOr<llvm::Value*> result = CallMath(f, {x});
      if (!result.ok()) return result.status();
      r = *result;
    }
  }
  return FromCompute(r, type);
}

// ---------------------------------------------------------------- binary

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitBinaryOp(const HloInstruction& hlo,
                                                              llvm::Value* lhs,
                                                              llvm::Value* rhs) {
  const PrimitiveType type = hlo.operand(0)->shape().element_type();
  const HloOpcode op = hlo.opcode();
  if (op == HloOpcode::kComplex || IsComplex(type)) return EmitComplexBinaryOp(hlo, lhs, rhs);
  // Arithmetic on sub-byte integers would have to wrap at their width, and
  // on f8/f4 round once per op: the pipelines upcast both beforehand
  // (passes/expanders/narrow_type_upcasting.h). Order (maximum/minimum) is
  // exact.
  if ((IsSubByteInteger(type) && op != HloOpcode::kMaximum && op != HloOpcode::kMinimum) ||
      IsNarrowFloat(type)) {
    return Unsupported(hlo, type);
  }
  if (op == HloOpcode::kMaximum || op == HloOpcode::kMinimum) {
    if (!IsIntegral(type) && !IsSupportedFloat(type)) return Unsupported(hlo, type);
    return EmitMinMax(type, op == HloOpcode::kMaximum, lhs, rhs);
  }
  if (type == xla::PRED) {
    switch (op) {
      case HloOpcode::kAnd:
      case HloOpcode::kMultiply: return b_->CreateAnd(lhs, rhs);
      case HloOpcode::kOr:
      case HloOpcode::kAdd: return b_->CreateOr(lhs, rhs);
      case HloOpcode::kXor:
      case HloOpcode::kSubtract: return b_->CreateXor(lhs, rhs);
      // One-bit unsigned integer rules (hlo/evaluator/elementwise.cc).
      case HloOpcode::kDivide:
      case HloOpcode::kPower: return b_->CreateOr(lhs, b_->CreateXor(rhs, b_->getInt8(1)));
      case HloOpcode::kRemainder: return b_->CreateAnd(lhs, b_->CreateXor(rhs, b_->getInt8(1)));
      default: return Unsupported(hlo, type);
    }
  }
  if (IsInteger(type)) {
    llvm::Type* t = lhs->getType();
    const unsigned bits = t->getIntegerBitWidth();
    const bool is_signed = IsSignedInteger(type);
    llvm::Value* zero = llvm::ConstantInt::get(t, 0);
    llvm::Value* one = llvm::ConstantInt::get(t, 1);
    llvm::Value* all_ones = llvm::ConstantInt::get(t, -1, true);
    switch (op) {
      case HloOpcode::kAdd: return b_->CreateAdd(lhs, rhs);
      case HloOpcode::kSubtract: return b_->CreateSub(lhs, rhs);
      case HloOpcode::kMultiply: return b_->CreateMul(lhs, rhs);
      case HloOpcode::kAnd: return b_->CreateAnd(lhs, rhs);
      case HloOpcode::kOr: return b_->CreateOr(lhs, rhs);
      case HloOpcode::kXor: return b_->CreateXor(lhs, rhs);
      case HloOpcode::kDivide:
      case HloOpcode::kRemainder: {
        const bool divide = op == HloOpcode::kDivide;
        llvm::Value* by_zero = b_->CreateICmpEQ(rhs, zero);
        llvm::Value* overflow = b_->getFalse();
        if (is_signed) {
          llvm::Value* min = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(bits));
          overflow = b_->CreateAnd(b_->CreateICmpEQ(lhs, min), b_->CreateICmpEQ(rhs, all_ones));
        }
        // Divide by a safe divisor, then patch the special cases in.
        llvm::Value* safe = b_->CreateSelect(b_->CreateOr(by_zero, overflow), one, rhs);
        llvm::Value* q = divide ? (is_signed ? b_->CreateSDiv(lhs, safe) : b_->CreateUDiv(lhs, safe))
                                : (is_signed ? b_->CreateSRem(lhs, safe) : b_->CreateURem(lhs, safe));
        if (divide) {
          q = b_->CreateSelect(overflow, lhs, q);
          return b_->CreateSelect(by_zero, all_ones, q);
        }
        q = b_->CreateSelect(overflow, zero, q);
        return b_->CreateSelect(by_zero, lhs, q);
      }
      case HloOpcode::kPower: return IntPower(lhs, rhs, is_signed);
      case HloOpcode::kShiftLeft:
      case HloOpcode::kShiftRightLogical:
      case HloOpcode::kShiftRightArithmetic: {
        llvm::Value* width = llvm::ConstantInt::get(t, bits);
        llvm::Value* too_far = b_->CreateICmpUGE(rhs, width);
        llvm::Value* amount = b_->CreateSelect(too_far, zero, rhs);
        if (op == HloOpcode::kShiftLeft) {
          return b_->CreateSelect(too_far, zero, b_->CreateShl(lhs, amount));
        }
        if (op == HloOpcode::kShiftRightLogical) {
          return b_->CreateSelect(too_far, zero, b_->CreateLShr(lhs, amount));
        }
        llvm::Value* fill = b_->CreateAShr(lhs, llvm::ConstantInt::get(t, bits - 1));
        return b_->CreateSelect(too_far, fill, b_->CreateAShr(lhs, amount));
      }
      default: return Unsupported(hlo, type);
    }
  }
  if (!IsSupportedFloat(type)) return Unsupported(hlo, type);
  llvm::Value* x = ToCompute(lhs, type);
  llvm::Value* y = ToCompute(rhs, type);
  llvm::Type* ct = x->getType();
  llvm::Value* r;
  switch (op) {
    case HloOpcode::kAdd: r = b_->CreateFAdd(x, y); break;
    case HloOpcode::kSubtract: r = b_->CreateFSub(x, y); break;
    case HloOpcode::kMultiply: r = b_->CreateFMul(x, y); break;
    case HloOpcode::kDivide: r = b_->CreateFDiv(x, y); break;
    case HloOpcode::kRemainder: r = b_->CreateFRem(x, y); break;
    case HloOpcode::kPower: {
      absl::StatusOr<llvm::Value*> p = CallMath(MathFunction::kPow, {x, y});
      if (!p.ok()) return p.status();
      llvm::Value* one = llvm::ConstantFP::get(ct, 1.0);
      llvm::Value* trivial = b_->CreateOr(b_->CreateFCmpOEQ(x, one),
                                          b_->CreateFCmpOEQ(y, llvm::ConstantFP::get(ct, 0.0)));
      r = b_->CreateSelect(trivial, one, *p);
      break;
    }
    case HloOpcode::kAtan2: {
      absl::StatusOr<llvm::Value*> a = CallMath(MathFunction::kAtan2, {x, y});
      if (!a.ok()) return a.status();
      r = *a;
      break;
    }
    default: return Unsupported(hlo, type);
  }
  return FromCompute(r, type);
}

// ---------------------------------------------------------------- compare

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitCompare(ComparisonDirection direction,
                                                             ComparisonType comparison_type,
                                                             PrimitiveType type,
                                                             llvm::Value* lhs, llvm::Value* rhs) {
  if (IsComplex(type)) return EmitComplexCompare(direction, lhs, rhs);
  llvm::Value* result;
  if (IsIntegral(type) ||
      (IsSupportedFloat(type) && comparison_type == ComparisonType::kTotalOrder)) {
    bool is_signed = IsSignedInteger(type);
    if (IsSupportedFloat(type)) {
      // Sign-magnitude bits -> two's complement order: flip the magnitude of
      // negative values, then compare as signed integers.
      llvm::Type* int_type = IsSixteenBitFloat(type) ? b_->getInt16Ty()
                             : type == xla::F32      ? b_->getInt32Ty()
                                                     : b_->getInt64Ty();
      auto key = [&](llvm::Value* v) {
        llvm::Value* bits = b_->CreateBitCast(v, int_type);
        llvm::Value* magnitude_mask =
            llvm::ConstantInt::get(int_type, llvm::APInt::getSignedMaxValue(int_type->getIntegerBitWidth()));
        llvm::Value* negative = b_->CreateICmpSLT(bits, llvm::ConstantInt::get(int_type, 0));
        return b_->CreateSelect(negative, b_->CreateXor(bits, magnitude_mask), bits);
      };
      lhs = key(lhs);
      rhs = key(rhs);
      is_signed = true;
    }
    llvm::CmpInst::Predicate p;
    switch (direction) {
      case ComparisonDirection::kEq: p = llvm::CmpInst::ICMP_EQ; break;
      case ComparisonDirection::kNe: p = llvm::CmpInst::ICMP_NE; break;
      case ComparisonDirection::kLt: p = is_signed ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_ULT; break;
      case ComparisonDirection::kLe: p = is_signed ? llvm::CmpInst::ICMP_SLE : llvm::CmpInst::ICMP_ULE; break;
      case ComparisonDirection::kGt: p = is_signed ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_UGT; break;
      case ComparisonDirection::kGe: p = is_signed ? llvm::CmpInst::ICMP_SGE : llvm::CmpInst::ICMP_UGE; break;
      default: return absl::InvalidArgumentError("bad comparison direction");
    }
    result = b_->CreateICmp(p, lhs, rhs);
  } else if (IsSupportedFloat(type)) {
    llvm::Value* x = ToCompute(lhs, type);
    llvm::Value* y = ToCompute(rhs, type);
    llvm::CmpInst::Predicate p;
    switch (direction) {
      case ComparisonDirection::kEq: p = llvm::CmpInst::FCMP_OEQ; break;
      case ComparisonDirection::kNe: p = llvm::CmpInst::FCMP_UNE; break;
      case ComparisonDirection::kLt: p = llvm::CmpInst::FCMP_OLT; break;
      case ComparisonDirection::kLe: p = llvm::CmpInst::FCMP_OLE; break;
      case ComparisonDirection::kGt: p = llvm::CmpInst::FCMP_OGT; break;
      case ComparisonDirection::kGe: p = llvm::CmpInst::FCMP_OGE; break;
      default: return absl::InvalidArgumentError("bad comparison direction");
    }
    result = b_->CreateFCmp(p, x, y);
  } else {
    return absl::UnimplementedError(absl::StrCat("compare on ", PrimitiveTypeName(type),
                                                 " is not supported by the elemental emitter"));
  }
  return b_->CreateZExt(result, b_->getInt8Ty());
}

// ---------------------------------------------------------------- convert

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitConvert(PrimitiveType from, PrimitiveType to,
                                                             llvm::Value* v) {
  absl::StatusOr<llvm::Type*> to_type = ValueType(to);
  if (!to_type.ok()) return to_type.status();
  absl::StatusOr<llvm::Type*> from_type = ValueType(from);
  if (!from_type.ok()) return from_type.status();
  if (from == to) return v;
  if (IsNarrowFloat(from) || IsNarrowFloat(to)) return EmitNarrowFloatConvert(from, to, v);
  if (IsComplex(from) || IsComplex(to)) return EmitComplexConvert(from, to, v);
  if (IsSubByteInteger(to)) {
    // Through the byte-wide type; integers then wrap to the low bits, floats
    // saturate to the narrow range (NaN -> 0).
    const int bits = BitWidth(to);
    const bool is_signed = IsSignedInteger(to);
    absl::StatusOr<llvm::Value*> byte = EmitConvert(from, is_signed ? xla::S8 : xla::U8, v);
    if (!byte.ok()) return byte.status();
    if (IsIntegral(from)) {
      llvm::Value* high = b_->CreateShl(*byte, 8 - bits);
      return is_signed ? b_->CreateAShr(high, 8 - bits) : b_->CreateLShr(high, 8 - bits);
    }
    const int lo = is_signed ? -(1 << (bits - 1)) : 0;
    const int hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
    llvm::Value* r = *byte;
    r = b_->CreateSelect(is_signed ? b_->CreateICmpSLT(r, b_->getInt8(lo)) : b_->getFalse(),
                         b_->getInt8(lo), r);
    return b_->CreateSelect(is_signed ? b_->CreateICmpSGT(r, b_->getInt8(hi))
                                      : b_->CreateICmpUGT(r, b_->getInt8(hi)),
                            b_->getInt8(hi), r);
  }
  if (to == xla::PRED) {
    llvm::Value* nonzero;
    if (IsSupportedFloat(from)) {
      llvm::Value* x = ToCompute(v, from);
      nonzero = b_->CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
    } else {
      nonzero = b_->CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
    }
    return b_->CreateZExt(nonzero, b_->getInt8Ty());
  }
  const bool from_signed = IsSignedInteger(from);  // pred converts as unsigned 0/1
  if (IsIntegral(from)) {
    if (IsInteger(to)) return b_->CreateIntCast(v, *to_type, from_signed);
    if (to == xla::F32 || to == xla::F64) {
      return from_signed ? b_->CreateSIToFP(v, *to_type) : b_->CreateUIToFP(v, *to_type);
    }
    // f16/bf16: through double as the interpreter does (exact below 2^53).
    llvm::Value* d = from_signed ? b_->CreateSIToFP(v, b_->getDoubleTy())
                                 : b_->CreateUIToFP(v, b_->getDoubleTy());
    return FromCompute(DoubleToFloatRoundToOdd(b_, d), to);
  }
  // Floating-point source.
  llvm::Value* x = ToCompute(v, from);
  if (IsInteger(to)) {
    const llvm::Intrinsic::ID id = IsSignedInteger(to) ? llvm::Intrinsic::fptosi_sat
                                                       : llvm::Intrinsic::fptoui_sat;
    return b_->CreateIntrinsic(id, {*to_type, x->getType()}, {x});
  }
  switch (to) {
    case xla::F32:
      return from == xla::F64 ? b_->CreateFPTrunc(x, *to_type) : x;
    case xla::F64:
      return from == xla::F64 ? x : b_->CreateFPExt(x, *to_type);
    case xla::F16:
    case xla::BF16:
      if (from == xla::F64) return FromCompute(DoubleToFloatRoundToOdd(b_, x), to);
      return FromCompute(x, to);
    default:
      return absl::UnimplementedError(absl::StrCat("convert to ", PrimitiveTypeName(to)));
  }
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitBitcastConvert(PrimitiveType from,
                                                                    PrimitiveType to,
                                                                    llvm::Value* v) {
  if (from == xla::PRED || to == xla::PRED || IsComplex(from) || IsComplex(to) ||
      BitWidth(from) < 8 || BitWidth(from) != BitWidth(to)) {
    return absl::UnimplementedError(absl::StrCat("bitcast-convert from ", PrimitiveTypeName(from),
                                                 " to ", PrimitiveTypeName(to),
                                                 " is not supported by the elemental emitter"));
  }
  absl::StatusOr<llvm::Type*> to_type = ValueType(to);
  if (!to_type.ok()) return to_type.status();
  return b_->CreateBitCast(v, *to_type);
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitStochasticConvert(PrimitiveType from,
                                                                       PrimitiveType to,
                                                                       llvm::Value* v,
                                                                       llvm::Value* random) {
  if (!IsSupportedFloat(from) || !IsSignedInteger(to) || IsSubByteInteger(to) ||
      !random->getType()->isIntegerTy(BitWidth(from))) {
    return absl::UnimplementedError(absl::StrCat("stochastic-convert from ", PrimitiveTypeName(from),
                                                 " to ", PrimitiveTypeName(to),
                                                 " is not supported by the elemental emitter"));
  }
  absl::StatusOr<llvm::Type*> out_type = ValueType(to);
  if (!out_type.ok()) return out_type.status();
  llvm::Type* t = *out_type;
  const unsigned out_bits = t->getIntegerBitWidth();
  llvm::Type* bits_type = random->getType();
  const unsigned word_bits = bits_type->getIntegerBitWidth();
  // The result's limits as values of the operand type (rounded as it rounds).
  auto limit = [&](bool is_max) {
    const double exact = is_max ? std::ldexp(1.0, out_bits - 1) - 1 : -std::ldexp(1.0, out_bits - 1);
    switch (from) {
      case xla::F16: return static_cast<double>(HalfToFloat(DoubleToHalf(exact)));
      case xla::BF16: return static_cast<double>(BFloat16ToFloat(DoubleToBFloat16(exact)));
      case xla::F32: return static_cast<double>(static_cast<float>(exact));
      default: return exact;
    }
  };
  llvm::Type* f64 = b_->getDoubleTy();
  absl::StatusOr<llvm::Value*> wide = EmitConvert(from, xla::F64, v);
  if (!wide.ok()) return wide.status();
  llvm::Value* d = *wide;
  llvm::Value* max = llvm::ConstantInt::get(t, llvm::APInt::getSignedMaxValue(out_bits));
  llvm::Value* min = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(out_bits));
  llvm::Value* magnitude = b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d);
  llvm::Value* whole = b_->CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {t, f64}, {magnitude});
  llvm::Value* fraction = b_->CreateFSub(magnitude, b_->CreateSIToFP(whole, f64));
  // The fraction as a fixed-point number of the random word's width (exact).
  llvm::Value* fixed = b_->CreateIntrinsic(
      llvm::Intrinsic::fptoui_sat, {bits_type, f64},
      {b_->CreateFMul(fraction, llvm::ConstantFP::get(f64, std::ldexp(1.0, word_bits)))});
  llvm::Value* up = b_->CreateICmpULT(random, fixed);
  // whole + 1 wraps past the maximum, as the interpreter's rule does.
  whole = b_->CreateAdd(whole, b_->CreateZExt(up, t));
  llvm::Value* negative = b_->CreateICmpSLT(b_->CreateBitCast(d, b_->getInt64Ty()), b_->getInt64(0));
  llvm::Value* r = b_->CreateSelect(negative, b_->CreateSub(llvm::ConstantInt::get(t, 0), whole), whole);
  r = b_->CreateSelect(b_->CreateFCmpOLE(d, llvm::ConstantFP::get(f64, limit(false))), min, r);
  r = b_->CreateSelect(b_->CreateFCmpOGE(d, llvm::ConstantFP::get(f64, limit(true))), max, r);
  return b_->CreateSelect(b_->CreateFCmpUNO(d, d), llvm::ConstantInt::get(t, 0), r);
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitClamp(PrimitiveType type, llvm::Value* lo,
                                                           llvm::Value* x, llvm::Value* hi) {
  if (!IsIntegral(type) && !IsSupportedFloat(type)) {
    return absl::UnimplementedError(absl::StrCat("clamp on ", PrimitiveTypeName(type),
                                                 " is not supported by the elemental emitter"));
  }
  llvm::Value* clamped = EmitMinMax(type, /*is_max=*/false, hi, EmitMinMax(type, true, x, lo));
  if (!IsSupportedFloat(type)) return clamped;
  // NaN bounds and operand pass through, in the order lo, x, hi.
  llvm::Value* l = ToCompute(lo, type);
  llvm::Value* v = ToCompute(x, type);
  llvm::Value* h = ToCompute(hi, type);
  llvm::Value* r = b_->CreateSelect(b_->CreateFCmpUNO(h, h), hi, clamped);
  r = b_->CreateSelect(b_->CreateFCmpUNO(v, v), x, r);
  r = b_->CreateSelect(b_->CreateFCmpUNO(l, l), lo, r);
  return r;
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitReducePrecision(PrimitiveType type,
                                                                     llvm::Value* v,
                                                                     int exponent_bits,
                                                                     int mantissa_bits) {
  if (!IsSupportedFloat(type)) {
    return absl::InvalidArgumentError("reduce-precision needs a floating-point operand");
  }
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return absl::InvalidArgumentError("exponent_bits must be >= 1 and mantissa_bits >= 0");
  }
  llvm::Value* x = ToCompute(v, type);
  const bool is_double = type == xla::F64;
  const int src_exp = is_double ? 11 : 8;
  const int src_mant = is_double ? 52 : 23;
  const int e = std::min(exponent_bits, src_exp);
  const int m = std::min(mantissa_bits, src_mant);
  llvm::Type* it = is_double ? b_->getInt64Ty() : b_->getInt32Ty();
  auto c = [&](uint64_t value) { return llvm::ConstantInt::get(it, value); };
  llvm::Value* bits = b_->CreateBitCast(x, it);
  if (m < src_mant) {
    const int shift = src_mant - m;
    const uint64_t last_bit = uint64_t{1} << shift;
    llvm::Value* bias = b_->CreateAdd(c((last_bit >> 1) - 1),
                                      b_->CreateLShr(b_->CreateAnd(bits, c(last_bit)), shift));
    bits = b_->CreateAnd(b_->CreateAdd(bits, bias), c(~(last_bit - 1)));
  }
  if (e < src_exp) {
    const int total = is_double ? 64 : 32;
    const uint64_t sign_mask = uint64_t{1} << (total - 1);
    const uint64_t exp_mask = ((uint64_t{1} << src_exp) - 1) << src_mant;
    const uint64_t exponent_bias = (uint64_t{1} << (src_exp - 1)) - 1;
    const uint64_t reduced_bias = (uint64_t{1} << (e - 1)) - 1;
    const uint64_t max_exp = exponent_bias + reduced_bias;
    const uint64_t min_exp = exponent_bias - reduced_bias;
    llvm::Value* x_exp = b_->CreateAnd(bits, c(exp_mask));
    llvm::Value* sign = b_->CreateAnd(bits, c(sign_mask));
    llvm::Value* overflow = b_->CreateICmpUGT(x_exp, c(max_exp << src_mant));
    llvm::Value* underflow = b_->CreateICmpULE(x_exp, c(min_exp << src_mant));
    bits = b_->CreateSelect(overflow, b_->CreateOr(sign, c(exp_mask)),
                            b_->CreateSelect(underflow, sign, bits));
  }
  llvm::Value* r = b_->CreateBitCast(bits, x->getType());
  llvm::Value* nan_result = x;
  if (m == 0) {
    nan_result = b_->CreateBinaryIntrinsic(llvm::Intrinsic::copysign,
                                           llvm::ConstantFP::getInfinity(x->getType()), x);
  }
  r = b_->CreateSelect(b_->CreateFCmpUNO(x, x), nan_result, r);
  return FromCompute(r, type);
}

// ---------------------------------------------------------------- libm

absl::StatusOr<llvm::FunctionCallee> DeclareMathFunction(llvm::IRBuilder<>& b,
                                                         MathFunction function,
                                                         absl::Span<llvm::Value* const> args,
                                                         absl::string_view prefix,
                                                         absl::string_view library) {
  if (args.empty()) return absl::InvalidArgumentError("math function without arguments");
  llvm::Type* t = args[0]->getType();
  const bool is_float = t->isFloatTy();
  if (!is_float && !t->isDoubleTy()) {
    return absl::InvalidArgumentError(absl::StrCat(library, " functions take float or double"));
  }
  const char* name = nullptr;
  switch (function) {
    case MathFunction::kExp: name = "exp"; break;
    case MathFunction::kExpm1: name = "expm1"; break;
    case MathFunction::kLog: name = "log"; break;
    case MathFunction::kLog1p: name = "log1p"; break;
    case MathFunction::kSin: name = "sin"; break;
    case MathFunction::kCos: name = "cos"; break;
    case MathFunction::kTan: name = "tan"; break;
    case MathFunction::kTanh: name = "tanh"; break;
    case MathFunction::kErf: name = "erf"; break;
    case MathFunction::kCbrt: name = "cbrt"; break;
    case MathFunction::kPow: name = "pow"; break;
    case MathFunction::kAtan2: name = "atan2"; break;
    case MathFunction::kHypot: name = "hypot"; break;
  }
  const size_t arity = (function == MathFunction::kPow || function == MathFunction::kAtan2 ||
                        function == MathFunction::kHypot)
                           ? 2
                           : 1;
  if (args.size() != arity) return absl::InvalidArgumentError("wrong number of math arguments");
  const std::string symbol = absl::StrCat(prefix, name, is_float ? "f" : "");
  llvm::Module* module = b.GetInsertBlock()->getModule();
  std::vector<llvm::Type*> params(arity, t);
  llvm::FunctionCallee callee =
      module->getOrInsertFunction(symbol, llvm::FunctionType::get(t, params, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // Pure functions of their arguments (errno is never read).
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();
    f->addFnAttr(llvm::Attribute::WillReturn);
  }
  return callee;
}

absl::StatusOr<llvm::Value*> LibmMathLowering::Emit(llvm::IRBuilder<>& b, MathFunction function,
                                                    absl::Span<llvm::Value* const> args) const {
  absl::StatusOr<llvm::FunctionCallee> declared =
      DeclareMathFunction(b, function, args, /*prefix=*/"", "libm");
  if (!declared.ok()) return declared.status();
  const llvm::FunctionCallee callee = *declared;
  llvm::Type* t = args[0]->getType();
  const bool is_float = t->isFloatTy();
  const std::vector<llvm::Value*> call_args(args.begin(), args.end());
  if (function != MathFunction::kExp) return b.CreateCall(callee, call_args);
  // exp of anything below ln(2^-150) (float) or ln(2^-1075) (double) rounds
  // to +0, and libm reaches that result through its slow underflow path
  // (errno, floating-point exceptions): masked softmax logits at the lowest
  // float take it for every masked element. Branch around the call there;
  // the result is the same +0 (NaN compares false and still reaches the
  // call). The call is marked nobuiltin so that LLVM does not turn it into
  // its exp intrinsic, which it would speculate out of the branch.
  llvm::Value* x = args[0];
  llvm::Value* underflows =
      b.CreateFCmpOLT(x, llvm::ConstantFP::get(t, is_float ? -104.0 : -746.0), "exp_underflows");
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::Function* parent = before->getParent();
  llvm::BasicBlock* call_block = llvm::BasicBlock::Create(b.getContext(), "exp_call", parent);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b.getContext(), "exp_done", parent);
  b.CreateCondBr(underflows, done, call_block);
  b.SetInsertPoint(call_block);
  llvm::CallInst* called = b.CreateCall(callee, call_args);
  called->addFnAttr(llvm::Attribute::NoBuiltin);
  b.CreateBr(done);
  b.SetInsertPoint(done);
  llvm::PHINode* result = b.CreatePHI(t, 2, "exp");
  result->addIncoming(llvm::ConstantFP::get(t, 0.0), before);
  result->addIncoming(called, call_block);
  return result;
}

}  // namespace codegen
}  // namespace hloc
