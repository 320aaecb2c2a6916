// Scatter kernels (see gpu_kernel_emitter.h). The launcher first copies each
// operand into its result (GpuKernel::copy_before); the kernel then combines
// update elements into the results in place, with the update computation.
// Semantics follow the interpreter: an update window whose start puts any of
// it out of bounds is skipped whole, and updates apply in row-major order of
// the updates. The strategy depends on whether two updates can meet:
//
//   scatter          unique_indices: one thread per update element, plain
//                    read-combine-write.
//   scatter-atomic   one result and a commutative combiner (add, multiply,
//                    min, max, and, or, xor): one thread per update element,
//                    combined with a compare-and-swap loop (on the aligned
//                    32-bit word holding 8- and 16-bit elements).
//   scatter-ordered  otherwise, when the indices only pick inserted (size-1)
//                    dimensions, so two window offsets never meet: one
//                    thread per window element, each walking the scatter
//                    positions in order; the order matches the interpreter.
//   scatter-serial   otherwise: one thread does everything in order (correct
//                    for any combiner, slow).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_kernel_emitter.h"
#include "backend/gpu/nvptx_ir.h"
#include "backend/llvm/array_leaves.h"

namespace hloc {
namespace gpu {
namespace {

absl::Status Unimplemented(const HloInstruction& hlo, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("instruction %", hlo.name(), " (",
                                               HloOpcodeName(hlo.opcode()),
                                               "): no GPU scatter kernel: ", why));
}

bool Contains(const google::protobuf::RepeatedField<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

// Whether combining with `combiner` (two scalar parameters) is commutative
// and associative, so concurrent updates may apply in any order.
bool IsCommutativeCombiner(const HloComputation& combiner) {
  const HloInstruction* root = combiner.root();
  if (root == nullptr || combiner.num_parameters() != 2 || root->operand_count() != 2) return false;
  switch (root->opcode()) {
    case HloOpcode::kAdd:
    case HloOpcode::kMultiply:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor: break;
    default: return false;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  return a->opcode() == HloOpcode::kParameter && b->opcode() == HloOpcode::kParameter &&
         a->parameter_number() != b->parameter_number();
}

}  // namespace

absl::StatusOr<std::optional<EmittedGpuKernel>> TryEmitScatterKernel(
    const HloComputation& computation, const std::string& name, llvm::Module* module,
    const codegen::MathLowering* math, const GpuTarget& target) {
  const HloInstruction& op = *computation.root();
  if (op.opcode() != HloOpcode::kScatter) return std::optional<EmittedGpuKernel>();
  const int64_t n = (op.operand_count() - 1) / 2;
  if (n < 1 || op.operand_count() != 2 * n + 1 || op.to_apply() == nullptr) {
    return Unimplemented(op, "expects n operands, indices, n updates and a combiner");
  }
  if (computation.num_parameters() != op.operand_count()) {
    return Unimplemented(op, "parameters are not the operands");
  }
  std::vector<const Shape*> buffer_shapes;
  for (int64_t i = 0; i < op.operand_count(); ++i) {
    const HloInstruction* operand = op.operand(i);
    if (operand->opcode() != HloOpcode::kParameter || operand->parameter_number() != i ||
        !operand->shape().IsArray()) {
      return Unimplemented(op, "operands must be the array parameters in order");
    }
    buffer_shapes.push_back(&operand->shape());
  }
  const Shape& operand = op.operand(0)->shape();
  const Shape& indices = op.operand(n)->shape();
  const Shape& updates = op.operand(n + 1)->shape();
  if (!IsInteger(indices.element_type())) return Unimplemented(op, "indices are not integers");
  std::vector<const Shape*> outputs;
  for (const ArrayLeaf& leaf : ArrayLeaves(op.shape())) outputs.push_back(leaf.shape);
  if (static_cast<int64_t>(outputs.size()) != n) return Unimplemented(op, "result count");
  for (int64_t i = 0; i < n; ++i) {
    if (!op.operand(i)->shape().SameDimensions(operand) ||
        !op.operand(n + 1 + i)->shape().SameDimensions(updates) ||
        !outputs[i]->SameDimensions(operand) ||
        outputs[i]->element_type() != op.operand(i)->shape().element_type()) {
      return Unimplemented(op, "operands, updates or results differ in shape");
    }
  }
  const xla::ScatterDimensionNumbers& dn = op.attrs().scatter_dimension_numbers;
  const int64_t rank = operand.rank();
  const int64_t vector_dim = dn.index_vector_dim();
  if (vector_dim < 0 || vector_dim > indices.rank()) return Unimplemented(op, "index_vector_dim");
  const int64_t length = vector_dim < indices.rank() ? indices.dimensions(vector_dim) : 1;
  if (length != dn.scatter_dims_to_operand_dims_size()) {
    return Unimplemented(op, "index vector length");
  }
  for (int64_t d : dn.scatter_dims_to_operand_dims()) {
    if (d < 0 || d >= rank) return Unimplemented(op, "scatter_dims_to_operand_dims");
  }
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(dn.inserted_window_dims(), d) && !Contains(dn.input_batching_dims(), d)) {
      window_operand_dims.push_back(d);
    }
  }
  if (static_cast<int64_t>(window_operand_dims.size()) != dn.update_window_dims_size()) {
    return Unimplemented(op, "update_window_dims");
  }
  std::vector<int64_t> update_scatter_dims, index_batch_dims;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (!Contains(dn.update_window_dims(), d)) update_scatter_dims.push_back(d);
  }
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d != vector_dim) index_batch_dims.push_back(d);
  }
  if (update_scatter_dims.size() != index_batch_dims.size()) {
    return Unimplemented(op, "scatter dims of updates and indices differ");
  }
  std::vector<int64_t> scatter_sizes;
  for (size_t k = 0; k < update_scatter_dims.size(); ++k) {
    scatter_sizes.push_back(updates.dimensions(update_scatter_dims[k]));
    if (scatter_sizes.back() != indices.dimensions(index_batch_dims[k])) {
      return Unimplemented(op, "scatter dims of updates and indices differ");
    }
  }
  std::vector<int64_t> batching_pos;
  for (int64_t d : dn.scatter_indices_batching_dims()) {
    auto it = std::find(index_batch_dims.begin(), index_batch_dims.end(), d);
    if (it == index_batch_dims.end()) return Unimplemented(op, "scatter_indices_batching_dims");
    batching_pos.push_back(it - index_batch_dims.begin());
  }
  if (batching_pos.size() != static_cast<size_t>(dn.input_batching_dims_size())) {
    return Unimplemented(op, "input_batching_dims");
  }
  for (int64_t d : dn.input_batching_dims()) {
    if (d < 0 || d >= rank) return Unimplemented(op, "input_batching_dims");
  }
  std::vector<int64_t> window_size(rank, 1), window_dims;
  for (size_t j = 0; j < window_operand_dims.size(); ++j) {
    const int64_t update_dim = dn.update_window_dims(j);
    if (update_dim < 0 || update_dim >= updates.rank()) return Unimplemented(op, "window dims");
    window_size[window_operand_dims[j]] = updates.dimensions(update_dim);
    window_dims.push_back(window_size[window_operand_dims[j]]);
  }
  const int64_t update_count = ElementCount(updates);
  int64_t window_count = 1, scatter_count = 1;
  for (int64_t s : window_dims) window_count *= s;
  for (int64_t s : scatter_sizes) scatter_count *= s;
  bool any_fits = true;
  for (int64_t d = 0; d < rank; ++d) any_fits = any_fits && window_size[d] <= operand.dimensions(d);

  // Strategy.
  bool ordered_safe = true;
  for (int64_t d : dn.scatter_dims_to_operand_dims()) {
    if (!Contains(dn.inserted_window_dims(), d)) ordered_safe = false;
  }
  std::string strategy;
  if (op.attrs().unique_indices) {
    strategy = "scatter";
  } else if (n == 1 && IsCommutativeCombiner(*op.to_apply()) &&
             !IsComplex(outputs[0]->element_type())) {
    // (Complex elements are two words: no single compare-and-swap.)
    strategy = "scatter-atomic";
  } else if (ordered_safe) {
    strategy = "scatter-ordered";
  } else {
    strategy = "scatter-serial";
  }
  const bool per_update = strategy == "scatter" || strategy == "scatter-atomic";
  const int64_t work = !any_fits || update_count == 0
                           ? 0
                           : per_update ? update_count
                                        : strategy == "scatter-ordered" ? window_count : 1;
  const int64_t threads = std::min<int64_t>(256, std::max<int64_t>(1, (work + 31) / 32 * 32));
  const int64_t blocks = work == 0 ? 0 : GridBlocks(target, work, threads);

  const int64_t num_inputs = op.operand_count();
  for (const Shape* output : outputs) buffer_shapes.push_back(output);
  llvm::Function* kernel = CreateKernelFunction(module, name, buffer_shapes, num_inputs,
                                                /*outputs_read=*/true, /*scratch=*/false);
  llvm::LLVMContext& context = module->getContext();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", kernel));
  codegen::ElementalIrEmitter e(&b, module, math);
  EmittedGpuKernel result;
  result.strategy = strategy;
  result.num_buffers = static_cast<int64_t>(kernel->arg_size());
  result.num_inputs = num_inputs;
  for (int64_t i = 0; i < n; ++i) result.copy_before.emplace_back(i, num_inputs + i);
  result.launch.grid[0] = blocks;
  result.launch.block[0] = work == 0 ? 0 : threads;
  if (work == 0) {
    b.CreateRetVoid();
    AnnotateKernel(kernel, result.launch);
    return std::optional<EmittedGpuKernel>(result);
  }
  std::vector<llvm::Type*> value_types;
  for (int64_t i = 0; i < n; ++i) {
    absl::StatusOr<llvm::Type*> t = e.ValueType(outputs[i]->element_type());
    if (!t.ok()) return t.status();
    value_types.push_back(*t);
    absl::StatusOr<llvm::Type*> u = e.ValueType(op.operand(n + 1 + i)->shape().element_type());
    if (!u.ok()) return u.status();
  }

  const std::vector<int64_t> op_strides = RowMajorStrides(operand.dimensions());
  const std::vector<int64_t> up_strides = RowMajorStrides(updates.dimensions());
  const std::vector<int64_t> index_strides = RowMajorStrides(indices.dimensions());
  const bool index_signed = IsSignedInteger(indices.element_type());
  llvm::Type* i64 = b.getInt64Ty();

  // Combines update element (g, w) into the results; skipped when its
  // window does not fit.
  auto combine = [&](const std::vector<llvm::Value*>& g,
                     const std::vector<llvm::Value*>& w) -> absl::Status {
    llvm::Value* index_base = e.Int64(0);
    for (size_t k = 0; k < g.size(); ++k) {
      index_base = b.CreateAdd(index_base, b.CreateMul(g[k], e.Int64(index_strides[index_batch_dims[k]])));
    }
    std::vector<llvm::Value*> start(rank, e.Int64(0));
    for (int64_t k = 0; k < length; ++k) {
      llvm::Value* at = vector_dim < indices.rank()
                            ? b.CreateAdd(index_base, e.Int64(k * index_strides[vector_dim]))
                            : index_base;
      absl::StatusOr<llvm::Value*> raw =
          e.EmitArrayLoad(kernel->getArg(n), indices, codegen::IrIndex{{}, at});
      if (!raw.ok()) return raw.status();
      start[dn.scatter_dims_to_operand_dims(k)] =
          index_signed ? b.CreateSExtOrTrunc(*raw, i64) : b.CreateZExtOrTrunc(*raw, i64);
    }
    for (size_t i = 0; i < batching_pos.size(); ++i) {
      start[dn.input_batching_dims(i)] = g[batching_pos[i]];
    }
    llvm::Value* fits = b.getTrue();
    llvm::Value* o = e.Int64(0);
    for (int64_t d = 0; d < rank; ++d) {
      // 0 <= start <= dim - window, as one unsigned compare.
      fits = b.CreateAnd(fits, b.CreateICmpULE(start[d], e.Int64(operand.dimensions(d) - window_size[d])));
      o = b.CreateAdd(o, b.CreateMul(start[d], e.Int64(op_strides[d])));
    }
    llvm::Value* u = e.Int64(0);
    for (size_t k = 0; k < g.size(); ++k) {
      u = b.CreateAdd(u, b.CreateMul(g[k], e.Int64(up_strides[update_scatter_dims[k]])));
    }
    for (size_t j = 0; j < w.size(); ++j) {
      o = b.CreateAdd(o, b.CreateMul(w[j], e.Int64(op_strides[window_operand_dims[j]])));
      u = b.CreateAdd(u, b.CreateMul(w[j], e.Int64(up_strides[dn.update_window_dims(j)])));
    }
    return e.EmitIf(fits, [&]() -> absl::Status {
      std::vector<llvm::Value*> update_values;
      for (int64_t i = 0; i < n; ++i) {
        absl::StatusOr<llvm::Value*> v = e.EmitArrayLoad(
            kernel->getArg(n + 1 + i), op.operand(n + 1 + i)->shape(), codegen::IrIndex{{}, u});
        if (!v.ok()) return v.status();
        update_values.push_back(*v);
      }
      auto apply = [&](const std::vector<llvm::Value*>& old) -> absl::StatusOr<std::vector<llvm::Value*>> {
        std::vector<llvm::Value*> args = old;
        args.insert(args.end(), update_values.begin(), update_values.end());
        absl::StatusOr<std::vector<llvm::Value*>> r = e.EmitScalarComputation(*op.to_apply(), args);
        if (!r.ok()) return r.status();
        if (static_cast<int64_t>(r->size()) != n) return Unimplemented(op, "combiner result count");
        for (int64_t i = 0; i < n; ++i) {
          if ((*r)[i]->getType() != value_types[i]) return Unimplemented(op, "combiner result type");
        }
        return r;
      };
      if (strategy != "scatter-atomic") {
        std::vector<llvm::Value*> old;
        for (int64_t i = 0; i < n; ++i) {
          absl::StatusOr<llvm::Value*> v = e.EmitArrayLoad(kernel->getArg(num_inputs + i),
                                                           *outputs[i], codegen::IrIndex{{}, o});
          if (!v.ok()) return v.status();
          old.push_back(*v);
        }
        absl::StatusOr<std::vector<llvm::Value*>> fresh = apply(old);
        if (!fresh.ok()) return fresh.status();
        for (int64_t i = 0; i < n; ++i) {
          absl::Status st = e.EmitArrayStore(kernel->getArg(num_inputs + i), *outputs[i],
                                             codegen::IrIndex{{}, o}, (*fresh)[i]);
          if (!st.ok()) return st;
        }
        return absl::OkStatus();
      }
      // Compare-and-swap loop on the element (32/64-bit) or on the aligned
      // 32-bit word holding it (8/16-bit).
      llvm::Type* type = value_types[0];
      const unsigned bits = type->getPrimitiveSizeInBits().getFixedValue();
      llvm::Type* int_type = b.getIntNTy(bits);
      llvm::Value* element =
          b.CreateInBoundsGEP(type, kernel->getArg(num_inputs), o, "element");
      const bool narrow = bits < 32;
      llvm::Type* word_type = narrow ? b.getInt32Ty() : int_type;
      llvm::Value* word = element;
      llvm::Value* shift = nullptr;
      if (narrow) {
        llvm::Value* address = b.CreatePtrToInt(element, i64);
        word = b.CreateIntToPtr(b.CreateAnd(address, e.Int64(~int64_t{3})), element->getType());
        shift = b.CreateTrunc(b.CreateShl(b.CreateAnd(address, e.Int64(3)), e.Int64(3)),
                              b.getInt32Ty());
      }
      llvm::Value* first = b.CreateLoad(word_type, word);
      llvm::Function* function = b.GetInsertBlock()->getParent();
      llvm::BasicBlock* entry_block = b.GetInsertBlock();
      llvm::BasicBlock* loop = llvm::BasicBlock::Create(context, "cas.loop", function);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "cas.done", function);
      b.CreateBr(loop);
      b.SetInsertPoint(loop);
      llvm::PHINode* current = b.CreatePHI(word_type, 2, "cas.current");
      current->addIncoming(first, entry_block);
      llvm::Value* old_bits =
          narrow ? b.CreateTrunc(b.CreateLShr(current, shift), int_type) : current;
      llvm::Value* old_value = type->isIntegerTy() ? old_bits : b.CreateBitCast(old_bits, type);
      e.PushCacheScope();
      absl::StatusOr<std::vector<llvm::Value*>> fresh = apply({old_value});
      e.PopCacheScope();
      if (!fresh.ok()) return fresh.status();
      llvm::Value* new_bits =
          type->isIntegerTy() ? (*fresh)[0] : b.CreateBitCast((*fresh)[0], int_type);
      llvm::Value* new_word = new_bits;
      if (narrow) {
        llvm::Value* mask = b.CreateShl(b.getInt32((uint32_t{1} << bits) - 1), shift);
        new_word = b.CreateOr(b.CreateAnd(current, b.CreateNot(mask)),
                              b.CreateShl(b.CreateZExt(new_bits, word_type), shift));
      }
      llvm::Value* exchange = b.CreateAtomicCmpXchg(word, current, new_word, llvm::MaybeAlign(),
                                                    llvm::AtomicOrdering::Monotonic,
                                                    llvm::AtomicOrdering::Monotonic);
      llvm::Value* seen = b.CreateExtractValue(exchange, {0});
      llvm::Value* swapped = b.CreateExtractValue(exchange, {1});
      current->addIncoming(seen, b.GetInsertBlock());
      b.CreateCondBr(swapped, done, loop);
      b.SetInsertPoint(done);
      return absl::OkStatus();
    });
  };

  llvm::Value* tid = ToIndex(b, ReadSpecialRegister(b, SpecialRegister::kThreadIdX));
  llvm::Value* bid = ToIndex(b, ReadSpecialRegister(b, SpecialRegister::kBlockIdX));
  llvm::Value* first = b.CreateAdd(b.CreateMul(bid, e.Int64(threads)), tid);
  llvm::Value* total = e.Int64(threads * blocks);
  absl::Status status;
  if (per_update) {
    status = EmitStridedLoop(e, "update", first, e.Int64(update_count), total,
                             [&](llvm::Value* linear) -> absl::Status {
                               codegen::IrIndex index = e.Delinearize(linear, updates.dimensions());
                               std::vector<llvm::Value*> g, w;
                               for (int64_t d : update_scatter_dims) g.push_back(index.dims[d]);
                               for (int64_t d : dn.update_window_dims()) w.push_back(index.dims[d]);
                               return combine(g, w);
                             });
  } else {
    // One thread (serial) or one per window element (ordered); scatter
    // positions in row-major order.
    llvm::Value* thread_work = b.CreateICmpSLT(first, e.Int64(strategy == "scatter-serial" ? 1 : window_count));
    status = e.EmitIf(thread_work, [&]() -> absl::Status {
      return e.EmitLoop("position", e.Int64(0), e.Int64(scatter_count), [&](llvm::Value* gl) {
        codegen::IrIndex g = e.Delinearize(gl, scatter_sizes);
        llvm::Value* begin = strategy == "scatter-serial" ? e.Int64(0) : first;
        llvm::Value* step = strategy == "scatter-serial" ? e.Int64(1) : total;
        return EmitStridedLoop(e, "window", begin, e.Int64(window_count), step,
                               [&](llvm::Value* wl) -> absl::Status {
                                 codegen::IrIndex w = e.Delinearize(wl, window_dims);
                                 return combine(g.dims, w.dims);
                               });
      });
    });
  }
  if (!status.ok()) return status;
  b.CreateRetVoid();
  AnnotateKernel(kernel, result.launch);
  return std::optional<EmittedGpuKernel>(result);
}

}  // namespace gpu
}  // namespace hloc
