// Host kernel functions: the ABI wrapper, output collection, loop kernels
// and update-in-place kernels (see kernel_emitter.h). Reduction kernels live in
// reduction_kernel_emitter.cc.
#include "backend/host/kernel_emitter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backend/host/kernel_compiler.h"
#include "backend/host/kernel_emitter_internal.h"
#include "backend/llvm/array_leaves.h"
#include "backend/llvm/update_in_place.h"
#include "hlo/primitive_type.h"
#include "llvm/IR/Function.h"

namespace hloc {
namespace host {
namespace {

using codegen::ElementGenerator;
using codegen::IrIndex;

int64_t ElementCount(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape.dimensions()) n *= d;
  return n;
}

// Calls `body` for elements [lo, hi) of an array of `dims` in row-major
// order: a loop over rows, and inside it a loop along the last dimension.
absl::Status EmitElementLoop(KernelState& state, const std::vector<int64_t>& dims,
                             llvm::Value* lo, llvm::Value* hi,
                             const std::function<absl::Status(const IrIndex&)>& body) {
  codegen::ElementalIrEmitter& e = *state.elemental;
  llvm::IRBuilder<>& b = *state.b;
  if (dims.empty()) {
    return e.EmitIf(b.CreateICmpSLT(lo, hi), [&] { return body(IrIndex{{}, e.Int64(0)}); });
  }
  const int64_t inner = dims.back();
  const std::vector<int64_t> outer_dims(dims.begin(), dims.end() - 1);
  llvm::Value* first_row = b.CreateSDiv(lo, e.Int64(inner));
  llvm::Value* end_row = b.CreateSDiv(b.CreateAdd(hi, e.Int64(inner - 1)), e.Int64(inner));
  return e.EmitLoop("row", first_row, end_row, [&](llvm::Value* row) -> absl::Status {
    llvm::Value* row_start = b.CreateMul(row, e.Int64(inner), "row_start", true, true);
    llvm::Value* col_begin = b.CreateSub(lo, row_start);
    col_begin = b.CreateSelect(b.CreateICmpSLT(col_begin, e.Int64(0)), e.Int64(0), col_begin);
    llvm::Value* col_end = b.CreateSub(hi, row_start);
    col_end = b.CreateSelect(b.CreateICmpSGT(col_end, e.Int64(inner)), e.Int64(inner), col_end);
    IrIndex outer = e.Delinearize(row, outer_dims);
    return e.EmitLoop("col", col_begin, col_end, [&](llvm::Value* col) -> absl::Status {
      IrIndex index;
      index.dims = outer.dims;
      index.dims.push_back(col);
      index.linear = b.CreateAdd(row_start, col, "linear", true, true);
      return body(index);
    });
  });
}

// [begin, end) of `primary` items scaled to an output of `count` elements.
std::pair<llvm::Value*, llvm::Value*> ScaleRange(KernelState& state, int64_t count,
                                                 int64_t primary) {
  if (count == primary) return {state.begin, state.end};
  llvm::IRBuilder<>& b = *state.b;
  llvm::Type* wide = b.getInt128Ty();
  auto scale = [&](llvm::Value* v) {
    llvm::Value* product = b.CreateMul(b.CreateZExt(v, wide), llvm::ConstantInt::get(wide, count));
    return b.CreateTrunc(b.CreateUDiv(product, llvm::ConstantInt::get(wide, primary)),
                         b.getInt64Ty());
  };
  return {scale(state.begin), scale(state.end)};
}

absl::StatusOr<int64_t> EmitLoopKernel(KernelState& state) {
  int64_t primary = 0;
  for (const KernelOutput& output : state.outputs) {
    primary = std::max(primary, ElementCount(*output.shape));
  }
  // Outputs with the same dimensions share one loop nest (and the values
  // they have in common).
  std::vector<std::vector<const KernelOutput*>> groups;
  for (const KernelOutput& output : state.outputs) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& group) {
      return group[0]->shape->dimensions() == output.shape->dimensions();
    });
    if (it == groups.end()) {
      groups.push_back({&output});
    } else {
      it->push_back(&output);
    }
  }
  for (const auto& group : groups) {
    const int64_t count = ElementCount(*group[0]->shape);
    if (count == 0) continue;
    std::vector<ElementGenerator> generators;
    for (const KernelOutput* output : group) {
      absl::StatusOr<ElementGenerator> g = OutputGenerator(state, *output);
      if (!g.ok()) return g.status();
      generators.push_back(*std::move(g));
    }
    auto [lo, hi] = ScaleRange(state, count, primary);
    absl::Status status = EmitElementLoop(
        state, group[0]->shape->dimensions(), lo, hi, [&](const IrIndex& index) -> absl::Status {
          for (size_t i = 0; i < group.size(); ++i) {
            absl::StatusOr<llvm::Value*> value = generators[i](index);
            if (!value.ok()) return value.status();
            absl::Status stored = state.elemental->EmitArrayStore(group[i]->buffer, *group[i]->shape,
                                                                  index, *value);
            if (!stored.ok()) return stored;
          }
          return absl::OkStatus();
        });
    if (!status.ok()) return status;
  }
  return primary;
}

// The update-in-place kernel (kernel_emitter.h): the shared store
// (codegen::UpdateInPlaceStore) over this call's range of update elements.
absl::StatusOr<int64_t> EmitUpdateInPlaceKernel(KernelState& state,
                                                const HloComputation& computation) {
  if (state.outputs.size() != 1) {
    return absl::UnimplementedError("an update in place writes one output");
  }
  absl::StatusOr<codegen::UpdateInPlaceStore> store =
      codegen::UpdateInPlaceStore::Prepare(computation, *state.fused, *state.elemental);
  if (!store.ok()) return store.status();
  const int64_t items = store->items();
  if (items == 0) return int64_t{0};
  llvm::Value* buffer = state.outputs[0].buffer;
  absl::Status status = EmitElementLoop(
      state, store->update_dims(), state.begin, state.end,
      [&](const IrIndex& index) { return store->Store(index, buffer); });
  if (!status.ok()) return status;
  return items;
}

}  // namespace

absl::StatusOr<ElementGenerator> OutputGenerator(KernelState& state, const KernelOutput& output) {
  return codegen::KernelOutputGenerator(*state.fused, state.b, output);
}

absl::StatusOr<EmittedKernel> EmitHostKernel(const HloComputation& computation,
                                             const std::string& name, llvm::Module* module,
                                             const codegen::MathLowering* math,
                                             bool update_in_place, bool tiled_transposes) {
  llvm::LLVMContext& context = module->getContext();
  if (computation.root() == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("computation ", computation.name(),
                                                   " has no root"));
  }
  std::vector<std::vector<ArrayLeaf>> parameter_leaves;
  int64_t num_buffers = 0;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const HloInstruction* parameter = computation.parameter(i);
    if (parameter == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("computation ", computation.name(),
                                                     " lacks parameter ", i));
    }
    parameter_leaves.push_back(ArrayLeaves(parameter->shape()));
    num_buffers += static_cast<int64_t>(parameter_leaves.back().size());
  }
  const int64_t num_inputs = num_buffers;
  KernelState state;
  absl::Status collected = codegen::CollectKernelOutputs(*computation.root(), &state.outputs);
  if (!collected.ok()) return collected;
  num_buffers += static_cast<int64_t>(state.outputs.size());

  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  llvm::Function* entry = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, i64, i64}, false),
      llvm::GlobalValue::ExternalLinkage, name, module);
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  std::vector<llvm::Type*> body_params(num_buffers, ptr);
  body_params.push_back(i64);
  body_params.push_back(i64);
  llvm::Function* body = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), body_params, false),
      llvm::GlobalValue::InternalLinkage, name + ".body", module);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  body->addFnAttr(llvm::Attribute::NoUnwind);
  for (int64_t i = 0; i < num_buffers; ++i) {
    // Outputs never share memory with each other. An output may share one
    // with an input: a donated parameter, an update in place, a loop result
    // written over its state leaf (buffer_sharing.cc). The planner allows that
    // only where the kernel reads the input at the index it writes and for
    // that output alone (elementwise_operands.h), so every load of an element
    // precedes, through a data dependency, the one store to it, and no
    // reordering that noalias permits can change what is read. Inputs are only
    // read, so noalias holds among them even when two name the same buffer.
    body->addParamAttr(i, llvm::Attribute::NoAlias);
    body->addParamAttr(i, llvm::Attribute::NoCapture);
    body->addParamAttr(i, i < num_inputs ? llvm::Attribute::ReadOnly : llvm::Attribute::WriteOnly);
  }

  {  // The ABI wrapper: unpack the buffer table and call the body.
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", entry));
    std::vector<llvm::Value*> args;
    for (int64_t i = 0; i < num_buffers; ++i) {
      llvm::Value* slot = b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i);
      llvm::LoadInst* load = b.CreateLoad(ptr, slot, absl::StrCat("buffer", i));
      load->setMetadata(llvm::LLVMContext::MD_nonnull, llvm::MDNode::get(context, {}));
      args.push_back(load);
    }
    args.push_back(entry->getArg(1));
    args.push_back(entry->getArg(2));
    b.CreateCall(body, args);
    b.CreateRetVoid();
  }

  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", body));
  codegen::ElementalIrEmitter elemental(&b, module, math);
  codegen::FusedIrEmitter fused(&elemental);
  int64_t next = 0;
  for (size_t p = 0; p < parameter_leaves.size(); ++p) {
    std::vector<llvm::Value*> leaves;
    for (size_t l = 0; l < parameter_leaves[p].size(); ++l) leaves.push_back(body->getArg(next++));
    fused.BindParameter(static_cast<int64_t>(p), std::move(leaves));
  }
  for (KernelOutput& output : state.outputs) output.buffer = body->getArg(next++);
  state.b = &b;
  state.elemental = &elemental;
  state.fused = &fused;
  state.begin = body->getArg(num_buffers);
  state.end = body->getArg(num_buffers + 1);

  EmittedKernel result;
  result.num_buffers = num_buffers;
  if (update_in_place) {
    absl::StatusOr<int64_t> items = EmitUpdateInPlaceKernel(state, computation);
    if (!items.ok()) return items.status();
    result.work_items = *items;
    result.strategy = "update-in-place";
    b.CreateRetVoid();
    return result;
  }
  absl::StatusOr<std::optional<std::pair<int64_t, const char*>>> reduction =
      TryEmitReductionKernel(state);
  if (!reduction.ok()) return reduction.status();
  if (reduction->has_value()) {
    result.work_items = (*reduction)->first;
    result.strategy = (*reduction)->second;
  } else {
    std::optional<int64_t> tiles;
    if (tiled_transposes) {
      absl::StatusOr<std::optional<int64_t>> transpose = TryEmitTransposeKernel(state);
      if (!transpose.ok()) return transpose.status();
      tiles = *transpose;
    }
    if (tiles.has_value()) {
      result.work_items = *tiles;
      result.strategy = "transpose";
    } else {
      absl::StatusOr<int64_t> items = EmitLoopKernel(state);
      if (!items.ok()) return items.status();
      result.work_items = *items;
    }
  }
  b.CreateRetVoid();
  return result;
}

}  // namespace host
}  // namespace hloc
