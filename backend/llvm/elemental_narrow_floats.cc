// convert to and from the f8 and f4 kinds (f8e5m2, f8e4m3fn, f8e4m3fnuz,
// f8e5m2fnuz, f8e4m3, f8e3m4, f8e8m0fnu, f4e2m1fn, ...) in the elemental
// emitter. An element is a byte holding the format's bits in its low bits.
//
// hlo/float_formats.cc defines both directions, and this file follows it
// rule for rule rather than re-deriving each format's bit layout:
//   decode  a table of the 2^bits values (built with NarrowFloatToDouble when
//           the kernel is emitted), indexed by the element's bits;
//   encode  the same search EncodeBySearch does, as a loop over that table:
//           the nearest non-NaN finite value, ties to the even code, zero
//           keeping its sign where the format has -0; then NaN -> the first
//           NaN code, infinities to the format's infinity, beyond
//           max + ulp/2 to infinity (IEEE-like formats), infinities to NaN
//           where the format has NaN but no infinity.
// Other source and target types go through double (exact for every source
// the encoder sees, since f8/f4 values and f16/bf16/f32 all fit in double).
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/llvm/elemental_ir_emitter.h"
#include "hlo/float_formats.h"
#include "hlo/status_macros.h"
#include "llvm/IR/Intrinsics.h"

namespace hloc {
namespace codegen {
namespace {

// The decoded values of every code of `type`, and facts the encoder needs.
struct NarrowFormat {
  std::vector<double> values;  // Indexed by code.
  uint32_t nan_code = 0;       // First code decoding to NaN (0 if none).
  bool has_nan = false;
  int64_t pos_inf_code = -1, neg_inf_code = -1;
  bool has_negative_zero = false;
  double max_finite = 0;
  double top_ulp = 0;  // Spacing below max_finite.
};

NarrowFormat DescribeFormat(PrimitiveType type) {
  NarrowFormat f;
  const uint32_t count = 1u << BitWidth(type);
  double below_max = 0;
  for (uint32_t code = 0; code < count; ++code) {
    const double v = NarrowFloatToDouble(type, static_cast<uint8_t>(code));
    f.values.push_back(v);
    if (std::isnan(v)) {
      if (!f.has_nan) f.nan_code = code;
      f.has_nan = true;
    } else if (std::isinf(v)) {
      (v > 0 ? f.pos_inf_code : f.neg_inf_code) = code;
    } else if (v == 0 && std::signbit(v)) {
      f.has_negative_zero = true;
    }
  }
  for (double v : f.values) {
    if (std::isfinite(v) && v > f.max_finite) f.max_finite = v;
  }
  for (double v : f.values) {
    if (std::isfinite(v) && v < f.max_finite && v > below_max) below_max = v;
  }
  f.top_ulp = f.max_finite - below_max;
  return f;
}

// A module-level constant [count x double] of the format's values.
llvm::GlobalVariable* DecodeTable(llvm::Module* module, PrimitiveType type,
                                  const NarrowFormat& f) {
  const std::string name = absl::StrCat("hloc_", PrimitiveTypeName(type), "_values");
  if (llvm::GlobalVariable* existing = module->getGlobalVariable(name, /*AllowInternal=*/true)) {
    return existing;
  }
  llvm::LLVMContext& c = module->getContext();
  llvm::ArrayType* type_of_table = llvm::ArrayType::get(llvm::Type::getDoubleTy(c), f.values.size());
  std::vector<llvm::Constant*> elements;
  for (double v : f.values) elements.push_back(llvm::ConstantFP::get(llvm::Type::getDoubleTy(c), v));
  return new llvm::GlobalVariable(*module, type_of_table, /*isConstant=*/true,
                                  llvm::GlobalValue::InternalLinkage,
                                  llvm::ConstantArray::get(type_of_table, elements), name);
}

}  // namespace

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitNarrowFloatConvert(PrimitiveType from,
                                                                        PrimitiveType to,
                                                                        llvm::Value* v) {
  llvm::Type* f64 = b_->getDoubleTy();
  // The source as a double.
  llvm::Value* value;
  if (IsNarrowFloat(from)) {
    const NarrowFormat f = DescribeFormat(from);
    llvm::GlobalVariable* table = DecodeTable(module_, from, f);
    llvm::Value* code = b_->CreateZExt(
        b_->CreateAnd(v, b_->getInt8(static_cast<uint8_t>(f.values.size() - 1))), b_->getInt64Ty());
    value = b_->CreateLoad(f64, b_->CreateInBoundsGEP(table->getValueType(), table,
                                                      {Int64(0), code}));
    if (!IsNarrowFloat(to)) return EmitConvert(xla::F64, to, value);
  } else {
    HLOC_ASSIGN_OR_RETURN(value, EmitConvert(from, xla::F64, v));
  }

  // Encode `value` as `to`.
  const NarrowFormat f = DescribeFormat(to);
  llvm::GlobalVariable* table = DecodeTable(module_, to, f);
  llvm::Value* inf = llvm::ConstantFP::getInfinity(f64);
  llvm::AllocaInst* best = EntryAlloca(b_->getInt64Ty(), "narrow.best");
  llvm::AllocaInst* best_error = EntryAlloca(f64, "narrow.best_error");
  b_->CreateStore(Int64(0), best);
  b_->CreateStore(inf, best_error);
  llvm::Value* zero = llvm::ConstantFP::get(f64, 0.0);
  auto negative = [&](llvm::Value* x) {
    return b_->CreateICmpSLT(b_->CreateBitCast(x, b_->getInt64Ty()), Int64(0));
  };
  HLOC_RETURN_IF_ERROR(EmitLoop(
      "narrow.search", Int64(0), Int64(static_cast<int64_t>(f.values.size())),
      [&](llvm::Value* code) -> absl::Status {
        llvm::Value* candidate = b_->CreateLoad(
            f64, b_->CreateInBoundsGEP(table->getValueType(), table, {Int64(0), code}));
        llvm::Value* magnitude = b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, candidate);
        llvm::Value* finite = b_->CreateFCmpOLT(magnitude, inf);  // False for NaN too.
        llvm::Value* error =
            b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, b_->CreateFSub(candidate, value));
        llvm::Value* current = b_->CreateLoad(b_->getInt64Ty(), best);
        llvm::Value* current_error = b_->CreateLoad(f64, best_error);
        llvm::Value* code_even = b_->CreateICmpEQ(b_->CreateAnd(code, Int64(1)), Int64(0));
        llvm::Value* current_odd = b_->CreateICmpNE(b_->CreateAnd(current, Int64(1)), Int64(0));
        llvm::Value* better = b_->CreateOr(
            b_->CreateFCmpOLT(error, current_error),
            b_->CreateAnd(b_->CreateFCmpOEQ(error, current_error),
                          b_->CreateAnd(code_even, current_odd)));
        llvm::Value* take = b_->CreateAnd(finite, better);
        if (f.has_negative_zero) {
          llvm::Value* wrong_zero = b_->CreateAnd(
              b_->CreateAnd(b_->CreateFCmpOEQ(candidate, zero), b_->CreateFCmpOEQ(value, zero)),
              b_->CreateICmpNE(negative(candidate), negative(value)));
          take = b_->CreateAnd(take, b_->CreateNot(wrong_zero));
        }
        b_->CreateStore(b_->CreateSelect(take, code, current), best);
        b_->CreateStore(b_->CreateSelect(take, error, current_error), best_error);
        return absl::OkStatus();
      }));
  llvm::Value* result = b_->CreateLoad(b_->getInt64Ty(), best);
  llvm::Value* abs_value = b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value);
  llvm::Value* out_of_range = b_->CreateFCmpOGT(abs_value, llvm::ConstantFP::get(f64, f.max_finite));
  if (f.pos_inf_code >= 0 && f.neg_inf_code >= 0) {
    llvm::Value* overflows = b_->CreateAnd(
        out_of_range,
        b_->CreateFCmpOGE(abs_value, llvm::ConstantFP::get(f64, f.max_finite + f.top_ulp / 2)));
    llvm::Value* inf_code =
        b_->CreateSelect(negative(value), Int64(f.neg_inf_code), Int64(f.pos_inf_code));
    result = b_->CreateSelect(overflows, inf_code, result);
  } else if (f.has_nan) {
    result = b_->CreateSelect(b_->CreateFCmpOEQ(abs_value, inf), Int64(f.nan_code), result);
  }
  result = b_->CreateSelect(b_->CreateFCmpUNO(value, value), Int64(f.nan_code), result);
  return b_->CreateTrunc(result, b_->getInt8Ty());
}

}  // namespace codegen
}  // namespace hloc
