// The elemental emitter's dispatch, its index-only ops (broadcast, reshape,
// transpose, slice, pad, concatenate, iota, reverse, dynamic-slice,
// dynamic-update-slice, tuples, select, clamp, map), scalar computations, and
// the loop / branch / memory helpers the other parts build on.
#include "backend/llvm/elemental_ir_emitter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

#include "hlo/shape.h"

namespace hloc {
namespace codegen {
namespace {

absl::Status NotElemental(const HloInstruction& hlo) {
  return absl::UnimplementedError(absl::StrCat("instruction %", hlo.name(), " (",
                                               HloOpcodeName(hlo.opcode()),
                                               ") has no elemental implementation"));
}

std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

}  // namespace

// ---------------------------------------------------------------- helpers

llvm::Value* ElementalIrEmitter::Int64(int64_t value) { return b_->getInt64(value); }

absl::StatusOr<llvm::Value*> ElementalIrEmitter::LinearIndex(absl::Span<const int64_t> dims,
                                                             const IrIndex& index) {
  if (index.linear != nullptr) return index.linear;
  if (index.dims.size() != dims.size()) {
    return absl::InternalError(absl::StrCat("an index of ", index.dims.size(),
                                            " dimensions for an array of rank ", dims.size()));
  }
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  llvm::Value* linear = Int64(0);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    linear = b_->CreateAdd(linear, b_->CreateMul(index.dims[i], Int64(strides[i])), "",
                           /*HasNUW=*/true, /*HasNSW=*/true);
  }
  return linear;
}

IrIndex ElementalIrEmitter::Delinearize(llvm::Value* linear, absl::Span<const int64_t> dims) {
  IrIndex index;
  index.linear = linear;
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) {
      index.dims.push_back(Int64(0));
      continue;
    }
    llvm::Value* v = b_->CreateUDiv(linear, Int64(strides[i]));
    if (i > 0) v = b_->CreateURem(v, Int64(dims[i]));
    index.dims.push_back(v);
  }
  return index;
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitArrayLoad(llvm::Value* base,
                                                               const Shape& shape,
                                                               const IrIndex& index) {
  absl::StatusOr<llvm::Type*> type = ValueType(shape.element_type());
  if (!type.ok()) return type.status();
  absl::StatusOr<llvm::Value*> linear = LinearIndex(shape.dimensions(), index);
  if (!linear.ok()) return linear.status();
  return b_->CreateLoad(*type, b_->CreateInBoundsGEP(*type, base, *linear));
}

absl::Status ElementalIrEmitter::EmitArrayStore(llvm::Value* base, const Shape& shape,
                                                const IrIndex& index, llvm::Value* value) {
  absl::StatusOr<llvm::Type*> type = ValueType(shape.element_type());
  if (!type.ok()) return type.status();
  absl::StatusOr<llvm::Value*> linear = LinearIndex(shape.dimensions(), index);
  if (!linear.ok()) return linear.status();
  b_->CreateStore(value, b_->CreateInBoundsGEP(*type, base, *linear));
  return absl::OkStatus();
}

llvm::AllocaInst* ElementalIrEmitter::EntryAlloca(llvm::Type* type, absl::string_view name,
                                                  llvm::Value* count) {
  llvm::Function* function = b_->GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  return entry.CreateAlloca(type, count, llvm::StringRef(name.data(), name.size()));
}

absl::Status ElementalIrEmitter::EmitLoop(absl::string_view name, llvm::Value* begin,
                                          llvm::Value* end,
                                          const std::function<absl::Status(llvm::Value*)>& body,
                                          bool vectorize, int vector_width, int interleave) {
  llvm::Function* function = b_->GetInsertBlock()->getParent();
  const std::string n(name.data(), name.size());
  llvm::BasicBlock* preheader = b_->GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context(), n + ".header", function);
  llvm::BasicBlock* body_block = llvm::BasicBlock::Create(context(), n + ".body", function);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(context(), n + ".exit", function);
  b_->CreateBr(header);
  b_->SetInsertPoint(header);
  llvm::PHINode* iv = b_->CreatePHI(b_->getInt64Ty(), 2, n + ".iv");
  iv->addIncoming(begin, preheader);
  b_->CreateCondBr(b_->CreateICmpSLT(iv, end), body_block, exit);
  b_->SetInsertPoint(body_block);
  PushCacheScope();
  absl::Status status = body(iv);
  PopCacheScope();
  if (!status.ok()) return status;
  llvm::Value* next = b_->CreateAdd(iv, Int64(1), n + ".next", /*HasNUW=*/true, /*HasNSW=*/true);
  iv->addIncoming(next, b_->GetInsertBlock());
  llvm::BranchInst* latch = b_->CreateBr(header);
  if (vectorize) {
    llvm::LLVMContext& c = context();
    llvm::Metadata* enable[] = {llvm::MDString::get(c, "llvm.loop.vectorize.enable"),
                                llvm::ConstantAsMetadata::get(b_->getTrue())};
    llvm::Metadata* no_unroll[] = {llvm::MDString::get(c, "llvm.loop.unroll.disable")};
    std::vector<llvm::Metadata*> properties = {nullptr, llvm::MDNode::get(c, enable),
                                               llvm::MDNode::get(c, no_unroll)};
    auto count = [&](const char* key, int value) {
      llvm::Metadata* entry[] = {llvm::MDString::get(c, key),
                                 llvm::ConstantAsMetadata::get(b_->getInt32(value))};
      properties.push_back(llvm::MDNode::get(c, entry));
    };
    if (vector_width > 0) count("llvm.loop.vectorize.width", vector_width);
    if (interleave > 0) count("llvm.loop.interleave.count", interleave);
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(c, properties);
    loop_id->replaceOperandWith(0, loop_id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  }
  b_->SetInsertPoint(exit);
  return absl::OkStatus();
}

absl::Status ElementalIrEmitter::EmitLoopNest(
    absl::string_view name, absl::Span<const int64_t> sizes,
    const std::function<absl::Status(const std::vector<llvm::Value*>&)>& body, int vector_width,
    int interleave) {
  std::vector<llvm::Value*> ivs;
  std::function<absl::Status(size_t)> level = [&](size_t depth) -> absl::Status {
    if (depth == sizes.size()) return body(ivs);
    if (sizes[depth] == 1) {
      ivs.push_back(Int64(0));
      absl::Status status = level(depth + 1);
      ivs.pop_back();
      return status;
    }
    const bool innermost = depth + 1 == sizes.size();
    return EmitLoop(
        absl::StrCat(name, depth), Int64(0), Int64(sizes[depth]),
        [&](llvm::Value* iv) -> absl::Status {
          ivs.push_back(iv);
          absl::Status status = level(depth + 1);
          ivs.pop_back();
          return status;
        },
        /*vectorize=*/innermost && vector_width > 0, innermost ? vector_width : 0,
        innermost ? interleave : 0);
  };
  return level(0);
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitIfThenElse(
    llvm::Value* condition, const std::function<absl::StatusOr<llvm::Value*>()>& then_fn,
    const std::function<absl::StatusOr<llvm::Value*>()>& else_fn) {
  llvm::Function* function = b_->GetInsertBlock()->getParent();
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(context(), "then", function);
  llvm::BasicBlock* else_block = llvm::BasicBlock::Create(context(), "else", function);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(context(), "merge", function);
  b_->CreateCondBr(condition, then_block, else_block);
  b_->SetInsertPoint(then_block);
  PushCacheScope();
  absl::StatusOr<llvm::Value*> then_value = then_fn();
  PopCacheScope();
  if (!then_value.ok()) return then_value.status();
  llvm::BasicBlock* then_end = b_->GetInsertBlock();
  b_->CreateBr(merge);
  b_->SetInsertPoint(else_block);
  PushCacheScope();
  absl::StatusOr<llvm::Value*> else_value = else_fn();
  PopCacheScope();
  if (!else_value.ok()) return else_value.status();
  llvm::BasicBlock* else_end = b_->GetInsertBlock();
  b_->CreateBr(merge);
  b_->SetInsertPoint(merge);
  if ((*then_value)->getType() != (*else_value)->getType()) {
    return absl::InternalError("branches of a conditional value differ in type");
  }
  llvm::PHINode* phi = b_->CreatePHI((*then_value)->getType(), 2);
  phi->addIncoming(*then_value, then_end);
  phi->addIncoming(*else_value, else_end);
  return phi;
}

absl::Status ElementalIrEmitter::EmitIf(llvm::Value* condition,
                                        const std::function<absl::Status()>& then_fn) {
  llvm::Function* function = b_->GetInsertBlock()->getParent();
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(context(), "if.then", function);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(context(), "if.end", function);
  b_->CreateCondBr(condition, then_block, merge);
  b_->SetInsertPoint(then_block);
  PushCacheScope();
  absl::Status status = then_fn();
  PopCacheScope();
  if (!status.ok()) return status;
  b_->CreateBr(merge);
  b_->SetInsertPoint(merge);
  return absl::OkStatus();
}

// ---------------------------------------------------------------- memoization

ElementGenerator ElementalIrEmitter::Memoize(const HloInstruction* hlo,
                                             ElementGenerator generator) {
  return [this, hlo, generator = std::move(generator)](
             const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    CacheKey key{hlo, index.dims};
    for (auto scope = cache_scopes_.rbegin(); scope != cache_scopes_.rend(); ++scope) {
      auto it = scope->find(key);
      if (it != scope->end()) return it->second;
    }
    absl::StatusOr<llvm::Value*> value = generator(index);
    if (value.ok()) cache_scopes_.back()[std::move(key)] = *value;
    return value;
  };
}

void ElementalIrEmitter::PushCacheScope() { cache_scopes_.emplace_back(); }
void ElementalIrEmitter::PopCacheScope() {
  if (cache_scopes_.size() > 1) cache_scopes_.pop_back();
}

// ---------------------------------------------------------------- dispatch

absl::StatusOr<llvm::Value*> ElementalIrEmitter::LoadIndexScalar(const ElementGenerator& generator,
                                                                 PrimitiveType type,
                                                                 const IrIndex& index) {
  if (!IsInteger(type)) return absl::InvalidArgumentError("index operands must be integers");
  absl::StatusOr<llvm::Value*> v = generator(index);
  if (!v.ok()) return v.status();
  if (type == xla::U64) {
    // min(value, INT64_MAX), as the interpreter reads unsigned indices.
    llvm::Value* big = b_->CreateICmpSLT(*v, Int64(0));
    return b_->CreateSelect(big, Int64(INT64_MAX), *v);
  }
  return b_->CreateIntCast(*v, b_->getInt64Ty(), IsSignedInteger(type));
}

absl::StatusOr<ElementGenerator> ElementalIrEmitter::MakeElementGenerator(
    const HloInstruction& hlo, std::vector<ElementGenerator> operands) {
  if (static_cast<int64_t>(operands.size()) != hlo.operand_count()) {
    return absl::InternalError(absl::StrCat("instruction %", hlo.name(), " got ",
                                            operands.size(), " operand generators"));
  }
  const HloOpcode op = hlo.opcode();
  if (op == HloOpcode::kBitcastConvert &&
      !hlo.operand(0)->shape().SameDimensions(hlo.shape())) {
    return MakeWidthChangingBitcastGenerator(hlo, std::move(operands));
  }
  if (IsElementwiseUnary(op)) {
    return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
      absl::StatusOr<llvm::Value*> v = operands[0](index);
      if (!v.ok()) return v.status();
      return EmitUnaryOp(hlo, *v);
    });
  }
  if (IsElementwiseBinary(op)) {
    if (op == HloOpcode::kStochasticConvert) {
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        absl::StatusOr<llvm::Value*> value = operands[0](index);
        if (!value.ok()) return value.status();
        absl::StatusOr<llvm::Value*> random = operands[1](index);
        if (!random.ok()) return random.status();
        return EmitStochasticConvert(hlo.operand(0)->shape().element_type(),
                                     hlo.shape().element_type(), *value, *random);
      });
    }
    return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
      absl::StatusOr<llvm::Value*> lhs = operands[0](index);
      if (!lhs.ok()) return lhs.status();
      absl::StatusOr<llvm::Value*> rhs = operands[1](index);
      if (!rhs.ok()) return rhs.status();
      if (hlo.opcode() == HloOpcode::kCompare) {
        return EmitCompare(hlo.attrs().comparison_direction, hlo.attrs().comparison_type,
                           hlo.operand(0)->shape().element_type(), *lhs, *rhs);
      }
      return EmitBinaryOp(hlo, *lhs, *rhs);
    });
  }
  switch (op) {
    case HloOpcode::kReduce: return MakeReduceGenerator(hlo, std::move(operands));
    case HloOpcode::kReduceWindow: return MakeReduceWindowGenerator(hlo, std::move(operands));
    case HloOpcode::kDot: return MakeDotGenerator(hlo, std::move(operands));
    case HloOpcode::kConvolution: return MakeConvolutionGenerator(hlo, std::move(operands));
    case HloOpcode::kGather: return MakeGatherGenerator(hlo, std::move(operands));
    default: return MakeIndexingGenerator(hlo, std::move(operands));
  }
}

// A bitcast reinterprets memory as its layouts arrange it, while hloc
// stores every array row-major: the result's element at a logical index
// sits at the place in memory its layout gives it, and that place holds the
// operand's element whose index the operand's layout maps there. So: the
// result index in the result's memory order, its offset, that offset as an
// index in the operand's memory order, and back to the operand's logical
// order. The element type may change (same width), as for a reshape.
ElementGenerator ElementalIrEmitter::MakeLayoutBitcastGenerator(const HloInstruction& hlo,
                                                                ElementGenerator operand) {
  const Shape& in = hlo.operand(0)->shape();
  const Shape& out = hlo.shape();
  const std::vector<int64_t> in_order = MajorToMinorOrder(in);
  const std::vector<int64_t> out_order = MajorToMinorOrder(out);
  std::vector<int64_t> in_memory_dims, out_memory_dims;
  for (int64_t d : in_order) in_memory_dims.push_back(in.dimensions(d));
  for (int64_t d : out_order) out_memory_dims.push_back(out.dimensions(d));
  return ElementGenerator([this, &in, &out, operand, in_order, out_order, in_memory_dims,
                           out_memory_dims](const IrIndex& result) -> absl::StatusOr<llvm::Value*> {
    // A caller may pass only the row-major linear index.
    const IrIndex index = result.dims.size() == out_order.size() || result.linear == nullptr
                              ? result
                              : Delinearize(result.linear, out.dimensions());
    if (index.dims.size() != out_order.size()) {
      return absl::InternalError(absl::StrCat("an index of ", index.dims.size(),
                                              " dimensions for a bitcast of rank ",
                                              out_order.size()));
    }
    IrIndex result_memory{{}, nullptr};
    for (int64_t d : out_order) result_memory.dims.push_back(index.dims[d]);
    absl::StatusOr<llvm::Value*> offset = LinearIndex(out_memory_dims, result_memory);
    if (!offset.ok()) return offset.status();
    const IrIndex operand_memory = Delinearize(*offset, in_memory_dims);
    IrIndex operand_index{std::vector<llvm::Value*>(in_order.size()), nullptr};
    for (size_t k = 0; k < in_order.size(); ++k) {
      operand_index.dims[in_order[k]] = operand_memory.dims[k];
    }
    absl::StatusOr<llvm::Value*> value = operand(operand_index);
    if (!value.ok() || in.element_type() == out.element_type()) return value;
    return EmitBitcastConvert(in.element_type(), out.element_type(), *value);
  });
}

// XLA's bitcast-convert between element types of different widths: the
// narrow elements of one wide element lie along an extra minor dimension of
// the narrow side, in memory order (little-endian, as the interpreter copies
// bytes). Narrow to wide ORs the k narrow parts into place; wide to narrow
// shifts the part the minor index names down and truncates.
absl::StatusOr<ElementGenerator> ElementalIrEmitter::MakeWidthChangingBitcastGenerator(
    const HloInstruction& hlo, std::vector<ElementGenerator> operands) {
  const Shape& in = hlo.operand(0)->shape();
  const Shape& out = hlo.shape();
  const PrimitiveType from = in.element_type(), to = out.element_type();
  for (PrimitiveType t : {from, to}) {
    if (t == xla::PRED || IsComplex(t) || BitWidth(t) % 8 != 0) {
      return absl::UnimplementedError(absl::StrCat(
          "bitcast-convert %", hlo.name(), " from ", PrimitiveTypeName(from), " to ",
          PrimitiveTypeName(to), ": the elemental emitter changes widths of whole-byte "
          "integer and float elements only"));
    }
  }
  const bool widen = BitWidth(from) < BitWidth(to);
  const Shape& narrow = widen ? in : out;
  const Shape& wide = widen ? out : in;
  const int64_t parts = widen ? BitWidth(to) / BitWidth(from) : BitWidth(from) / BitWidth(to);
  if (narrow.rank() != wide.rank() + 1 || narrow.dimensions(narrow.rank() - 1) != parts ||
      BitWidth(widen ? to : from) != parts * BitWidth(widen ? from : to)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bitcast-convert %", hlo.name(), ": ", in.ToString(), " to ", out.ToString(),
        " does not add or drop a minor dimension of the width ratio"));
  }
  llvm::Type* narrow_bits = b_->getIntNTy(static_cast<unsigned>(BitWidth(narrow.element_type())));
  llvm::Type* wide_bits = b_->getIntNTy(static_cast<unsigned>(BitWidth(wide.element_type())));
  // Values in and out of their bits (same width: a no-op for integers).
  auto to_bits = [this](llvm::Value* v, llvm::Type* bits) {
    return v->getType() == bits ? v : b_->CreateBitCast(v, bits);
  };
  absl::StatusOr<llvm::Type*> out_type = ValueType(to);
  if (!out_type.ok()) return out_type.status();
  llvm::Type* result_type = *out_type;
  // The result index with its dimensions (a caller may pass only the linear
  // index); the operand's row-major linear index follows from it.
  auto with_dims = [this, dims = out.dimensions()](const IrIndex& index) {
    if (index.dims.size() == dims.size() || index.linear == nullptr) return index;
    return Delinearize(index.linear, dims);
  };
  if (widen) {
    return ElementGenerator([this, operands, parts, narrow_bits, wide_bits, result_type, to_bits,
                             with_dims](const IrIndex& result) -> absl::StatusOr<llvm::Value*> {
      const IrIndex index = with_dims(result);
      IrIndex part_index{index.dims, nullptr};
      part_index.dims.push_back(nullptr);
      llvm::Value* first =
          index.linear == nullptr ? nullptr : b_->CreateMul(index.linear, Int64(parts));
      llvm::Value* bits = llvm::ConstantInt::get(wide_bits, 0);
      for (int64_t j = 0; j < parts; ++j) {
        part_index.dims.back() = Int64(j);
        if (first != nullptr) part_index.linear = j == 0 ? first : b_->CreateAdd(first, Int64(j));
        absl::StatusOr<llvm::Value*> part = operands[0](part_index);
        if (!part.ok()) return part.status();
        llvm::Value* wide_part = b_->CreateZExt(to_bits(*part, narrow_bits), wide_bits);
        const uint64_t shift = static_cast<uint64_t>(j) * narrow_bits->getIntegerBitWidth();
        if (shift != 0) wide_part = b_->CreateShl(wide_part, shift);
        bits = b_->CreateOr(bits, wide_part);
      }
      return to_bits(bits, result_type);
    });
  }
  return ElementGenerator([this, operands, parts, narrow_bits, wide_bits, result_type, to_bits,
                           with_dims](const IrIndex& result) -> absl::StatusOr<llvm::Value*> {
    const IrIndex index = with_dims(result);
    if (index.dims.empty()) {
      return absl::InternalError("width-narrowing bitcast-convert indexed without dimensions");
    }
    IrIndex whole_index{std::vector<llvm::Value*>(index.dims.begin(), index.dims.end() - 1),
                        nullptr};
    if (index.linear != nullptr) whole_index.linear = b_->CreateUDiv(index.linear, Int64(parts));
    absl::StatusOr<llvm::Value*> whole = operands[0](whole_index);
    if (!whole.ok()) return whole.status();
    llvm::Value* shift = b_->CreateMul(
        b_->CreateZExtOrTrunc(index.dims.back(), wide_bits),
        llvm::ConstantInt::get(wide_bits, narrow_bits->getIntegerBitWidth()));
    llvm::Value* part = b_->CreateTrunc(b_->CreateLShr(to_bits(*whole, wide_bits), shift),
                                        narrow_bits);
    return to_bits(part, result_type);
  });
}

absl::StatusOr<ElementGenerator> ElementalIrEmitter::MakeIndexingGenerator(
    const HloInstruction& hlo, std::vector<ElementGenerator> operands) {
  switch (hlo.opcode()) {
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
      // Operands may be scalars standing for a broadcast.
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        llvm::Value* values[3];
        for (int i = 0; i < 3; ++i) {
          IrIndex scalar{{}, Int64(0)};
          const bool is_scalar = hlo.operand(i)->shape().rank() == 0 && hlo.shape().rank() != 0;
          absl::StatusOr<llvm::Value*> v = operands[i](is_scalar ? scalar : index);
          if (!v.ok()) return v.status();
          values[i] = *v;
        }
        if (hlo.opcode() == HloOpcode::kSelect) {
          return b_->CreateSelect(b_->CreateICmpNE(values[0], b_->getInt8(0)), values[1], values[2]);
        }
        return EmitClamp(hlo.shape().element_type(), values[0], values[1], values[2]);
      });
    case HloOpcode::kBroadcast: {
      const bool identity = hlo.operand(0)->shape().dimensions() == hlo.shape().dimensions();
      return ElementGenerator([this, &hlo, operands, identity](const IrIndex& index) {
        if (identity) return operands[0](index);
        IrIndex operand_index;
        for (int64_t d : hlo.dimensions()) operand_index.dims.push_back(index.dims[d]);
        return operands[0](operand_index);
      });
    }
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
      // A bitcast may also change the element type (same width): the bits of
      // the element at the same place in memory. Arrays are row-major in
      // memory; a bitcast whose layouts put elements elsewhere than a
      // reshape would reads through them (MakeLayoutBitcastGenerator).
      if (hlo.opcode() == HloOpcode::kBitcast &&
          !BitcastIsRowMajorReshape(hlo.operand(0)->shape(), hlo.shape())) {
        return MakeLayoutBitcastGenerator(hlo, operands[0]);
      }
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        const Shape& in = hlo.operand(0)->shape();
        absl::StatusOr<llvm::Value*> value;
        if (in.dimensions() == hlo.shape().dimensions()) {
          value = operands[0](index);
        } else {
          absl::StatusOr<llvm::Value*> linear = LinearIndex(hlo.shape().dimensions(), index);
          if (!linear.ok()) return linear.status();
          value = operands[0](Delinearize(*linear, in.dimensions()));
        }
        if (!value.ok() || in.element_type() == hlo.shape().element_type()) return value;
        return EmitBitcastConvert(in.element_type(), hlo.shape().element_type(), *value);
      });
    case HloOpcode::kTranspose:
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) {
        IrIndex operand_index;
        operand_index.dims.resize(index.dims.size());
        for (size_t i = 0; i < index.dims.size(); ++i) {
          operand_index.dims[hlo.dimensions(i)] = index.dims[i];
        }
        return operands[0](operand_index);
      });
    case HloOpcode::kSlice:
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) {
        IrIndex operand_index;
        const HloAttributes& a = hlo.attrs();
        for (size_t i = 0; i < index.dims.size(); ++i) {
          llvm::Value* v = index.dims[i];
          if (a.slice_strides[i] != 1) v = b_->CreateMul(v, Int64(a.slice_strides[i]));
          if (a.slice_starts[i] != 0) v = b_->CreateAdd(v, Int64(a.slice_starts[i]));
          operand_index.dims.push_back(v);
        }
        return operands[0](operand_index);
      });
    case HloOpcode::kReverse:
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) {
        IrIndex operand_index{index.dims, nullptr};
        for (int64_t d : hlo.dimensions()) {
          operand_index.dims[d] = b_->CreateSub(Int64(hlo.shape().dimensions(d) - 1), index.dims[d]);
        }
        return operands[0](operand_index);
      });
    case HloOpcode::kIota:
      return ElementGenerator([this, &hlo](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        const int64_t d = hlo.attrs().iota_dimension;
        if (d < 0 || d >= static_cast<int64_t>(index.dims.size())) {
          return absl::InvalidArgumentError(absl::StrCat("iota %", hlo.name(),
                                                         ": iota_dimension out of range"));
        }
        return EmitConvert(xla::S64, hlo.shape().element_type(), index.dims[d]);
      });
    case HloOpcode::kPad:
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        const Shape& in = hlo.operand(0)->shape();
        const xla::PaddingConfig& config = hlo.attrs().padding_config;
        llvm::Value* valid = b_->getTrue();
        IrIndex operand_index;
        for (int64_t d = 0; d < in.rank(); ++d) {
          const auto& dim = config.dimensions(d);
          const int64_t step = dim.interior_padding() + 1;
          llvm::Value* t = b_->CreateSub(index.dims[d], Int64(dim.edge_padding_low()));
          llvm::Value* ok = b_->CreateICmpSGE(t, Int64(0));
          llvm::Value* q = t;
          if (step != 1) {
            ok = b_->CreateAnd(ok, b_->CreateICmpEQ(b_->CreateSRem(t, Int64(step)), Int64(0)));
            q = b_->CreateSDiv(t, Int64(step));
          }
          ok = b_->CreateAnd(ok, b_->CreateICmpSLT(q, Int64(in.dimensions(d))));
          valid = b_->CreateAnd(valid, ok);
          operand_index.dims.push_back(q);
        }
        return EmitIfThenElse(
            valid, [&] { return operands[0](operand_index); },
            [&] { return operands[1](IrIndex{{}, Int64(0)}); });
      });
    case HloOpcode::kConcatenate:
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        const int64_t d = hlo.dimensions(0);
        // Operand k covers [offset_k, offset_k + size_k) along d; test in order.
        std::function<absl::StatusOr<llvm::Value*>(int64_t, int64_t)> pick =
            [&](int64_t k, int64_t offset) -> absl::StatusOr<llvm::Value*> {
          IrIndex operand_index{index.dims, nullptr};
          operand_index.dims[d] = b_->CreateSub(index.dims[d], Int64(offset));
          if (k + 1 == hlo.operand_count()) return operands[k](operand_index);
          const int64_t size = hlo.operand(k)->shape().dimensions(d);
          llvm::Value* here = b_->CreateICmpSLT(index.dims[d], Int64(offset + size));
          return EmitIfThenElse(
              here, [&] { return operands[k](operand_index); },
              [&] { return pick(k + 1, offset + size); });
        };
        return pick(0, 0);
      });
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        const bool is_update = hlo.opcode() == HloOpcode::kDynamicUpdateSlice;
        const Shape& in = hlo.operand(0)->shape();
        const int64_t first = is_update ? 2 : 1;
        const std::vector<int64_t> sizes =
            is_update ? hlo.operand(1)->shape().dimensions() : hlo.attrs().dynamic_slice_sizes;
        if (static_cast<int64_t>(sizes.size()) != in.rank()) {
          return absl::InvalidArgumentError(absl::StrCat("%", hlo.name(), ": slice sizes"));
        }
        const bool vector_form = hlo.operand_count() == first + 1 &&
                                 hlo.operand(first)->shape().rank() == 1;
        std::vector<llvm::Value*> starts;
        for (int64_t d = 0; d < in.rank(); ++d) {
          const HloInstruction* start_op = hlo.operand(vector_form ? first : first + d);
          IrIndex at = vector_form ? IrIndex{{Int64(d)}, Int64(d)} : IrIndex{{}, Int64(0)};
          absl::StatusOr<llvm::Value*> s =
              LoadIndexScalar(operands[vector_form ? first : first + d],
                              start_op->shape().element_type(), at);
          if (!s.ok()) return s.status();
          // clamp(start, 0, dim - size)
          llvm::Value* hi = Int64(in.dimensions(d) - sizes[d]);
          llvm::Value* v = b_->CreateSelect(b_->CreateICmpSLT(*s, Int64(0)), Int64(0), *s);
          starts.push_back(b_->CreateSelect(b_->CreateICmpSGT(v, hi), hi, v));
        }
        if (!is_update) {
          IrIndex operand_index;
          for (int64_t d = 0; d < in.rank(); ++d) {
            operand_index.dims.push_back(b_->CreateAdd(index.dims[d], starts[d]));
          }
          return operands[0](operand_index);
        }
        llvm::Value* inside = b_->getTrue();
        IrIndex update_index;
        for (int64_t d = 0; d < in.rank(); ++d) {
          llvm::Value* t = b_->CreateSub(index.dims[d], starts[d]);
          inside = b_->CreateAnd(inside, b_->CreateICmpSGE(t, Int64(0)));
          inside = b_->CreateAnd(inside, b_->CreateICmpSLT(t, Int64(sizes[d])));
          update_index.dims.push_back(t);
        }
        return EmitIfThenElse(
            inside, [&] { return operands[1](update_index); },
            [&] { return operands[0](index); });
      });
    case HloOpcode::kGetTupleElement:
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        absl::StatusOr<llvm::Value*> tuple = operands[0](index);
        if (!tuple.ok()) return tuple.status();
        return b_->CreateExtractValue(*tuple, {static_cast<unsigned>(hlo.tuple_index())});
      });
    case HloOpcode::kTuple:
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        absl::StatusOr<llvm::Type*> type = ShapeValueType(hlo.shape());
        if (!type.ok()) return type.status();
        llvm::Value* result = llvm::UndefValue::get(*type);
        for (int64_t i = 0; i < hlo.operand_count(); ++i) {
          absl::StatusOr<llvm::Value*> v = operands[i](index);
          if (!v.ok()) return v.status();
          result = b_->CreateInsertValue(result, *v, {static_cast<unsigned>(i)});
        }
        return result;
      });
    case HloOpcode::kMap:
      return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
        std::vector<llvm::Value*> args;
        for (const ElementGenerator& g : operands) {
          absl::StatusOr<llvm::Value*> v = g(index);
          if (!v.ok()) return v.status();
          args.push_back(*v);
        }
        absl::StatusOr<std::vector<llvm::Value*>> r = EmitScalarComputation(*hlo.to_apply(), args);
        if (!r.ok()) return r.status();
        return (*r)[0];
      });
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAddDependency:
    case HloOpcode::kSetDimensionSize:  // Sizes are not tracked: the operand's elements.
      return operands[0];
    default:
      return NotElemental(hlo);
  }
}

// ---------------------------------------------------------------- scalar computations

absl::StatusOr<std::vector<llvm::Value*>> ElementalIrEmitter::EmitScalarComputation(
    const HloComputation& computation, absl::Span<llvm::Value* const> args) {
  if (static_cast<int64_t>(args.size()) != computation.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("computation ", computation.name(), " takes ",
                                                   computation.num_parameters(),
                                                   " parameters, got ", args.size()));
  }
  absl::flat_hash_map<const HloInstruction*, llvm::Value*> values;
  const IrIndex scalar{{}, Int64(0)};
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    const Shape& shape = instruction->shape();
    if (shape.IsArray() && shape.rank() != 0) {
      return absl::UnimplementedError(absl::StrCat("instruction %", instruction->name(), " in ",
                                                   computation.name(),
                                                   " is not a scalar; only scalar computations "
                                                   "are inlined"));
    }
    llvm::Value* value = nullptr;
    if (instruction->opcode() == HloOpcode::kParameter) {
      value = args[instruction->parameter_number()];
    } else if (instruction->opcode() == HloOpcode::kConstant) {
      if (!shape.IsArray()) return NotElemental(*instruction);
      absl::StatusOr<llvm::Value*> c = LiteralElement(instruction->literal(), 0);
      if (!c.ok()) return c.status();
      value = *c;
    } else {
      std::vector<ElementGenerator> operand_generators;
      for (const HloInstruction* operand : instruction->operands()) {
        llvm::Value* v = values.at(operand);
        operand_generators.push_back([v](const IrIndex&) -> absl::StatusOr<llvm::Value*> { return v; });
      }
      absl::StatusOr<ElementGenerator> generator =
          MakeElementGenerator(*instruction, std::move(operand_generators));
      if (!generator.ok()) return generator.status();
      absl::StatusOr<llvm::Value*> v = (*generator)(scalar);
      if (!v.ok()) return v.status();
      value = *v;
    }
    values[instruction] = value;
  }
  llvm::Value* root = values.at(computation.root());
  if (!computation.root()->shape().IsTuple()) return std::vector<llvm::Value*>{root};
  std::vector<llvm::Value*> leaves;
  for (int64_t i = 0; i < computation.root()->shape().tuple_shapes_size(); ++i) {
    leaves.push_back(b_->CreateExtractValue(root, {static_cast<unsigned>(i)}));
  }
  return leaves;
}

}  // namespace codegen
}  // namespace hloc
