// NVPTX IR helpers (see nvptx_ir.h).
#include "backend/gpu/nvptx_ir.h"

#include <string>

#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"

namespace hloc {
namespace gpu {

llvm::Value* ReadSpecialRegister(llvm::IRBuilder<>& b, SpecialRegister reg) {
  llvm::Intrinsic::ID id = llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x;
  switch (reg) {
    case SpecialRegister::kThreadIdX: id = llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x; break;
    case SpecialRegister::kThreadIdY: id = llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y; break;
    case SpecialRegister::kThreadIdZ: id = llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z; break;
    case SpecialRegister::kBlockIdX: id = llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x; break;
    case SpecialRegister::kBlockIdY: id = llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y; break;
    case SpecialRegister::kBlockIdZ: id = llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z; break;
    case SpecialRegister::kBlockDimX: id = llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x; break;
    case SpecialRegister::kGridDimX: id = llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x; break;
  }
  return b.CreateIntrinsic(id, {}, {});
}

void EmitBarrier(llvm::IRBuilder<>& b) {
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
}

namespace {

llvm::Value* ShuffleI32(llvm::IRBuilder<>& b, llvm::Value* v, int offset) {
  // clamp = 0x1f: the whole warp is one segment.
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_down_i32, {},
                           {b.getInt32(0xffffffffu), v, b.getInt32(offset), b.getInt32(0x1f)});
}

}  // namespace

llvm::Value* EmitShuffleDown(llvm::IRBuilder<>& b, llvm::Value* value, int offset) {
  llvm::Type* type = value->getType();
  if (auto* st = llvm::dyn_cast<llvm::StructType>(type)) {
    llvm::Value* result = llvm::UndefValue::get(st);
    for (unsigned i = 0; i < st->getNumElements(); ++i) {
      llvm::Value* field = EmitShuffleDown(b, b.CreateExtractValue(value, {i}), offset);
      result = b.CreateInsertValue(result, field, {i});
    }
    return result;
  }
  const unsigned bits = type->getPrimitiveSizeInBits().getFixedValue();
  llvm::Type* int_type = b.getIntNTy(bits);
  llvm::Value* as_int = type->isIntegerTy() ? value : b.CreateBitCast(value, int_type);
  llvm::Value* shuffled;
  if (bits <= 32) {
    llvm::Value* wide = bits == 32 ? as_int : b.CreateZExt(as_int, b.getInt32Ty());
    llvm::Value* s = ShuffleI32(b, wide, offset);
    shuffled = bits == 32 ? s : b.CreateTrunc(s, int_type);
  } else {  // 64 bits: two halves.
    llvm::Value* lo = b.CreateTrunc(as_int, b.getInt32Ty());
    llvm::Value* hi = b.CreateTrunc(b.CreateLShr(as_int, 32), b.getInt32Ty());
    lo = b.CreateZExt(ShuffleI32(b, lo, offset), b.getInt64Ty());
    hi = b.CreateZExt(ShuffleI32(b, hi, offset), b.getInt64Ty());
    shuffled = b.CreateOr(lo, b.CreateShl(hi, 32));
  }
  return type->isIntegerTy() ? shuffled : b.CreateBitCast(shuffled, type);
}

llvm::GlobalVariable* AddSharedArray(llvm::Module* module, llvm::Type* element_type, int64_t count,
                                     absl::string_view name) {
  llvm::ArrayType* type = llvm::ArrayType::get(element_type, static_cast<uint64_t>(count));
  auto* global = new llvm::GlobalVariable(
      *module, type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
      llvm::UndefValue::get(type), llvm::StringRef(name.data(), name.size()), nullptr,
      llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
  global->setAlignment(llvm::Align(16));
  return global;
}

void AnnotateKernel(llvm::Function* kernel, const LaunchDims& launch) {
  llvm::Module* module = kernel->getParent();
  llvm::LLVMContext& context = module->getContext();
  llvm::NamedMDNode* annotations = module->getOrInsertNamedMetadata("nvvm.annotations");
  auto add = [&](const char* key, int64_t value) {
    llvm::Metadata* operands[] = {llvm::ValueAsMetadata::get(kernel),
                                  llvm::MDString::get(context, key),
                                  llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(
                                      llvm::Type::getInt32Ty(context), value))};
    annotations->addOperand(llvm::MDNode::get(context, operands));
  };
  add("kernel", 1);
  add("maxntidx", launch.block[0]);
  add("maxntidy", launch.block[1]);
  add("maxntidz", launch.block[2]);
}

absl::Status EmitStridedLoop(codegen::ElementalIrEmitter& e, absl::string_view name,
                             llvm::Value* begin, llvm::Value* end, llvm::Value* step,
                             const std::function<absl::Status(llvm::Value*)>& body) {
  llvm::IRBuilder<>& b = *e.builder();
  llvm::Function* function = b.GetInsertBlock()->getParent();
  const std::string n(name.data(), name.size());
  llvm::LLVMContext& context = e.context();
  llvm::BasicBlock* preheader = b.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context, n + ".header", function);
  llvm::BasicBlock* body_block = llvm::BasicBlock::Create(context, n + ".body", function);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(context, n + ".exit", function);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* iv = b.CreatePHI(begin->getType(), 2, n + ".iv");
  iv->addIncoming(begin, preheader);
  b.CreateCondBr(b.CreateICmpSLT(iv, end), body_block, exit);
  b.SetInsertPoint(body_block);
  e.PushCacheScope();
  absl::Status status = body(iv);
  e.PopCacheScope();
  if (!status.ok()) return status;
  llvm::Value* next = b.CreateAdd(iv, step, n + ".next", /*HasNUW=*/true, /*HasNSW=*/true);
  iv->addIncoming(next, b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(exit);
  return absl::OkStatus();
}

llvm::Value* ToIndex(llvm::IRBuilder<>& b, llvm::Value* value) {
  if (value->getType()->isIntegerTy(64)) return value;
  return b.CreateZExt(value, b.getInt64Ty(), "", /*IsNonNeg=*/true);
}

}  // namespace gpu
}  // namespace hloc
