// The row-normalization kernel (see row_normalization.h and
// gpu_kernel_emitter.h): softmax, layer norm and their kin in one launch.
//
// A block holds `rows_per_block` row slots of `threads_per_row` threads:
// a warp per row for rows up to kWarpRowLimit elements (several rows per
// block), else one block per row. For each row, each reduction in turn:
//
//   fold     thread t folds elements t, t + T, ... of the reduction's input,
//            evaluated through the fused computation's generators; inputs
//            that read an earlier reduction read its finished value
//   combine  warp shuffles; block per row: each warp's total through
//            shared memory to warp 0, which shuffles again
//   finish   the row's leader applies the init value once and publishes the
//            result in shared memory; after a barrier every thread of the
//            row keeps it in a register, which is what broadcasts read
//
// Then every output element of the row is computed once and stored: row-
// shaped outputs by all the row's threads, per-row outputs by the leader.
// Partial results combine as in the reduction emitter (init applied once,
// float sums carried in double), so results agree with the interpreter the
// same way.
//
// Registers: thread t owns the row's elements t + kT for k < K = ceil(R/T)
// (K <= 16), and every pass over them is unrolled over k. Each row-shaped
// parameter is loaded once per row into K registers; the passes read those
// (a generator asked for the parameter at the pass's own index gets the
// register, any other index still reads memory).
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_kernel_emitter.h"
#include "backend/gpu/nvptx_ir.h"
#include "backend/gpu/row_normalization.h"

namespace hloc {
namespace gpu {
namespace {

using codegen::ElementGenerator;
using codegen::IrIndex;

constexpr int64_t kWarpSize = 32;
constexpr int64_t kWarpRowLimit = 512;
// Elements a thread may own in one row (registers per cached parameter).
constexpr int64_t kMaxPerThread = 16;

// A row-shaped parameter kept in registers: slot k holds element t + kT.
struct CachedParameter {
  const HloInstruction* parameter;
  ElementGenerator load;  // Reads memory.
  std::vector<llvm::AllocaInst*> slots;
};

struct Reduction {
  const HloInstruction* reduce;
  bool wide = false;  // A float sum carried in double.
  PrimitiveType input_type;
  llvm::Type* value_type = nullptr;
  llvm::Type* acc_type = nullptr;
  ElementGenerator input, init;
  llvm::AllocaInst* partial = nullptr;
  llvm::AllocaInst* result = nullptr;
  llvm::GlobalVariable* warp_partials = nullptr;  // Block per row only.
  llvm::GlobalVariable* results = nullptr;        // One per row slot.
};

class RowNormalizationEmitter {
 public:
  RowNormalizationEmitter(const HloComputation& computation, GpuKernelState& state,
                          RowNormalizationPlan plan)
      : computation_(computation),
        state_(state),
        e_(*state.elemental),
        b_(*state.b),
        plan_(std::move(plan)) {}

  // The launch shape; false when a thread would own too many elements.
  bool Plan() {
    const int64_t R = plan_.row_length;
    const GpuTarget& target = *state_.target;
    if (R <= kWarpRowLimit) {
      threads_per_row_ = kWarpSize;
      rows_per_block_ = std::min<int64_t>(8, plan_.rows);
    } else {
      const int64_t per_thread = 8;
      const int64_t most = std::max<int64_t>(
          kWarpSize, std::min<int64_t>(1024, target.max_threads_per_block) / kWarpSize * kWarpSize);
      threads_per_row_ = std::clamp<int64_t>(
          ((R + per_thread - 1) / per_thread + kWarpSize - 1) / kWarpSize * kWarpSize,
          std::min<int64_t>(128, most), most);
      rows_per_block_ = 1;
    }
    per_thread_ = (R + threads_per_row_ - 1) / threads_per_row_;
    return per_thread_ <= kMaxPerThread;
  }

  absl::Status Emit() {
    groups_ = (plan_.rows + rows_per_block_ - 1) / rows_per_block_;
    blocks_ = GridBlocks(*state_.target, groups_, 1);
    EmittedGpuKernel& result = state_.result;
    result.strategy = "row-normalization";
    result.launch.block[0] = threads_per_row_ * rows_per_block_;
    result.launch.grid[0] = blocks_;
    absl::Status prepared = Prepare();
    if (!prepared.ok()) return prepared;
    return EmitRows();
  }

 private:
  bool block_per_row() const { return threads_per_row_ > kWarpSize; }

  absl::Status Prepare() {
    const int64_t warps = threads_per_row_ * rows_per_block_ / kWarpSize;
    // Row-shaped parameters: registers, read at the pass's own index.
    for (int64_t i = 0; i < computation_.num_parameters(); ++i) {
      const HloInstruction* parameter = computation_.parameter(i);
      if (parameter == nullptr || !parameter->shape().IsArray() ||
          parameter->shape().dimensions() != plan_.row_shape) {
        continue;
      }
      absl::StatusOr<ElementGenerator> load = state_.fused->GetGenerator(*parameter);
      if (!load.ok()) return load.status();
      absl::StatusOr<llvm::Type*> type = e_.ValueType(parameter->shape().element_type());
      if (!type.ok()) return type.status();
      auto cached = std::make_unique<CachedParameter>();
      cached->parameter = parameter;
      cached->load = *std::move(load);
      for (int64_t k = 0; k < per_thread_; ++k) {
        cached->slots.push_back(e_.EntryAlloca(*type, absl::StrCat(parameter->name(), ".", k)));
      }
      const CachedParameter* c = cached.get();
      state_.fused->OverrideGenerator(
          *parameter, [this, c](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
            if (current_k_ >= 0 && index.linear != nullptr && index.linear == current_linear_) {
              return b_.CreateLoad(c->slots[current_k_]->getAllocatedType(),
                                   c->slots[current_k_]);
            }
            return c->load(index);
          });
      cached_.push_back(std::move(cached));
    }
    for (const HloInstruction* reduce : plan_.reductions) {
      Reduction r;
      r.reduce = reduce;
      r.wide = codegen::ElementalIrEmitter::SumsInDouble(*reduce);
      r.input_type = reduce->operand(0)->shape().element_type();
      absl::StatusOr<llvm::Type*> type = e_.ValueType(reduce->shape().element_type());
      if (!type.ok()) return type.status();
      r.value_type = *type;
      r.acc_type = r.wide ? b_.getDoubleTy() : *type;
      r.partial = e_.EntryAlloca(r.acc_type, "partial");
      r.result = e_.EntryAlloca(r.value_type, "result");
      if (block_per_row()) {
        r.warp_partials = AddSharedArray(e_.module(), r.acc_type, warps,
                                         absl::StrCat("warp_partials.", reduce->name()));
      }
      r.results = AddSharedArray(e_.module(), r.value_type, rows_per_block_,
                                 absl::StrCat("row_results.", reduce->name()));
      reductions_.push_back(std::move(r));
    }
    // Every read of a reduction (through broadcasts back along the row) is
    // its finished value for the current row. Set before any generator that
    // reads one is built.
    for (Reduction& r : reductions_) {
      const Reduction* p = &r;
      state_.fused->OverrideGenerator(
          *r.reduce, [this, p](const IrIndex&) -> absl::StatusOr<llvm::Value*> {
            return b_.CreateLoad(p->value_type, p->result);
          });
    }
    for (Reduction& r : reductions_) {
      absl::StatusOr<ElementGenerator> input = state_.fused->GetGenerator(*r.reduce->operand(0));
      if (!input.ok()) return input.status();
      r.input = *std::move(input);
      absl::StatusOr<ElementGenerator> init = state_.fused->GetGenerator(*r.reduce->operand(1));
      if (!init.ok()) return init.status();
      r.init = *std::move(init);
    }
    for (const codegen::KernelOutput& output : state_.outputs) {
      absl::StatusOr<ElementGenerator> g =
          codegen::KernelOutputGenerator(*state_.fused, &b_, output);
      if (!g.ok()) return g.status();
      outputs_.push_back(*std::move(g));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<llvm::Value*> Combine(const Reduction& r, llvm::Value* a, llvm::Value* b) {
    if (r.wide) return b_.CreateFAdd(a, b);
    absl::StatusOr<std::vector<llvm::Value*>> next =
        e_.EmitScalarComputation(*r.reduce->to_apply(), {a, b});
    if (!next.ok()) return next.status();
    if (next->size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("reducer of %", r.reduce->name(), " returns the wrong arity"));
    }
    return (*next)[0];
  }

  absl::StatusOr<llvm::Value*> ReadInput(const Reduction& r, const IrIndex& index) {
    absl::StatusOr<llvm::Value*> v = r.input(index);
    if (!v.ok()) return v.status();
    return r.wide ? e_.WidenForSum(*v, r.input_type) : *v;
  }

  // After it, lane 0's partial combines those of the lanes below `valid`
  // (signed: negative for warps with no valid lane).
  absl::Status WarpCombine(const Reduction& r, llvm::Value* lane, llvm::Value* valid) {
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
      llvm::Value* source = b_.CreateAdd(lane, b_.getInt32(offset));
      llvm::Value* take = b_.CreateAnd(b_.CreateICmpSLT(source, b_.getInt32(kWarpSize)),
                                       b_.CreateICmpSLT(source, valid));
      llvm::Value* theirs = EmitShuffleDown(b_, b_.CreateLoad(r.acc_type, r.partial), offset);
      absl::Status status = e_.EmitIf(take, [&]() -> absl::Status {
        absl::StatusOr<llvm::Value*> next =
            Combine(r, b_.CreateLoad(r.acc_type, r.partial), theirs);
        if (!next.ok()) return next.status();
        b_.CreateStore(*next, r.partial);
        return absl::OkStatus();
      });
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  llvm::Value* Slot(llvm::GlobalVariable* array, llvm::Value* i) {
    return b_.CreateInBoundsGEP(array->getValueType(), array, {b_.getInt32(0), i});
  }

  absl::Status EmitRows() {
    const int64_t R = plan_.row_length;
    const int64_t T = threads_per_row_;
    llvm::Value* tid = ReadSpecialRegister(b_, SpecialRegister::kThreadIdX);
    llvm::Value* lane = b_.CreateAnd(tid, b_.getInt32(kWarpSize - 1), "lane");
    llvm::Value* warp = b_.CreateLShr(tid, b_.getInt32(5), "warp");
    llvm::Value* slot = block_per_row() ? b_.getInt32(0) : warp;
    llvm::Value* t32 = block_per_row() ? tid : lane;
    llvm::Value* t = ToIndex(b_, t32);
    llvm::Value* block = ToIndex(b_, ReadSpecialRegister(b_, SpecialRegister::kBlockIdX));
    // Threads of a row that own elements: the first min(R, T).
    const int64_t owners = std::min(R, T);
    const int64_t valid_warps = (owners + kWarpSize - 1) / kWarpSize;

    return EmitStridedLoop(
        e_, "rows", block, e_.Int64(groups_), e_.Int64(blocks_),
        [&](llvm::Value* group) -> absl::Status {
          llvm::Value* row = b_.CreateAdd(b_.CreateMul(group, e_.Int64(rows_per_block_)),
                                          ToIndex(b_, slot), "row");
          llvm::Value* row_valid = b_.CreateICmpSLT(row, e_.Int64(plan_.rows), "row_valid");
          const IrIndex outer = e_.Delinearize(row, plan_.outer_dims);
          llvm::Value* row_start = b_.CreateMul(row, e_.Int64(R), "row_start", true, true);
          auto index_of = [&](llvm::Value* c) {
            IrIndex index;
            index.dims = outer.dims;
            IrIndex inner = e_.Delinearize(c, plan_.row_dims);
            index.dims.insert(index.dims.end(), inner.dims.begin(), inner.dims.end());
            index.linear = b_.CreateAdd(row_start, c, "", true, true);
            return index;
          };
          // The row's parameters into registers.
          if (!cached_.empty()) {
            absl::Status loaded = ForEachOwned(
                row_valid, t, index_of, /*use_registers=*/false,
                [&](int64_t k, const IrIndex& index) -> absl::Status {
                  for (const std::unique_ptr<CachedParameter>& c : cached_) {
                    absl::StatusOr<llvm::Value*> v = c->load(index);
                    if (!v.ok()) return v.status();
                    b_.CreateStore(*v, c->slots[k]);
                  }
                  return absl::OkStatus();
                });
            if (!loaded.ok()) return loaded;
          }
          for (Reduction& r : reductions_) {
            absl::Status status = EmitReduction(r, row_valid, t, t32, lane, warp, slot, owners,
                                                valid_warps, index_of);
            if (!status.ok()) return status;
          }
          // Outputs: each element once.
          std::vector<size_t> row_outputs, per_row_outputs;
          for (size_t k = 0; k < state_.outputs.size(); ++k) {
            (state_.outputs[k].shape->dimensions() == plan_.row_shape ? row_outputs
                                                                     : per_row_outputs)
                .push_back(k);
          }
          absl::Status status = absl::OkStatus();
          if (!row_outputs.empty()) {
            status = ForEachOwned(row_valid, t, index_of, /*use_registers=*/true,
                                  [&](int64_t, const IrIndex& index) -> absl::Status {
                                    for (size_t k : row_outputs) {
                                      absl::Status s = Store(k, index);
                                      if (!s.ok()) return s;
                                    }
                                    return absl::OkStatus();
                                  });
            if (!status.ok()) return status;
          }
          if (!per_row_outputs.empty()) {
            llvm::Value* leader = b_.CreateAnd(row_valid, b_.CreateICmpEQ(t32, b_.getInt32(0)));
            status = e_.EmitIf(leader, [&]() -> absl::Status {
              for (size_t k : per_row_outputs) {
                IrIndex index = e_.Delinearize(row, state_.outputs[k].shape->dimensions());
                index.linear = row;
                absl::Status s = Store(k, index);
                if (!s.ok()) return s;
              }
              return absl::OkStatus();
            });
            if (!status.ok()) return status;
          }
          // The row slots' shared results are rewritten for the next rows
          // (only when a block handles more than one group).
          if (blocks_ < groups_) EmitBarrier(b_);
          return absl::OkStatus();
        });
  }

  // body(k, index of element t + kT) for each element the thread owns, k in
  // order, unrolled; with `use_registers`, cached parameters read at that
  // index come from slot k.
  absl::Status ForEachOwned(llvm::Value* row_valid, llvm::Value* t,
                            const std::function<IrIndex(llvm::Value*)>& index_of,
                            bool use_registers,
                            const std::function<absl::Status(int64_t, const IrIndex&)>& body) {
    const int64_t R = plan_.row_length;
    const int64_t T = threads_per_row_;
    for (int64_t k = 0; k < per_thread_; ++k) {
      llvm::Value* c = k == 0 ? t : b_.CreateAdd(t, e_.Int64(k * T), "", true, true);
      llvm::Value* owned = row_valid;
      if ((k + 1) * T > R) owned = b_.CreateAnd(owned, b_.CreateICmpSLT(c, e_.Int64(R)));
      absl::Status status = e_.EmitIf(owned, [&]() -> absl::Status {
        const IrIndex index = index_of(c);
        if (use_registers) {
          current_k_ = k;
          current_linear_ = index.linear;
        }
        absl::Status s = body(k, index);
        current_k_ = -1;
        current_linear_ = nullptr;
        return s;
      });
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  absl::Status Store(size_t k, const IrIndex& index) {
    absl::StatusOr<llvm::Value*> value = outputs_[k](index);
    if (!value.ok()) return value.status();
    return e_.EmitArrayStore(state_.outputs[k].buffer, *state_.outputs[k].shape, index, *value);
  }

  absl::Status EmitReduction(Reduction& r, llvm::Value* row_valid, llvm::Value* t,
                             llvm::Value* t32, llvm::Value* lane, llvm::Value* warp,
                             llvm::Value* slot, int64_t owners, int64_t valid_warps,
                             const std::function<IrIndex(llvm::Value*)>& index_of) {
    // Element k = 0 starts the partial (a thread owning element k owns
    // every element before it).
    absl::Status status = ForEachOwned(
        row_valid, t, index_of, /*use_registers=*/true,
        [&](int64_t k, const IrIndex& index) -> absl::Status {
          absl::StatusOr<llvm::Value*> x = ReadInput(r, index);
          if (!x.ok()) return x.status();
          if (k == 0) {
            b_.CreateStore(*x, r.partial);
            return absl::OkStatus();
          }
          absl::StatusOr<llvm::Value*> sum = Combine(r, b_.CreateLoad(r.acc_type, r.partial), *x);
          if (!sum.ok()) return sum.status();
          b_.CreateStore(*sum, r.partial);
          return absl::OkStatus();
        });
    if (!status.ok()) return status;
    // Lanes of this warp that own elements: 32 * warp + lane < owners (none
    // on a row past the end).
    llvm::Value* owners_here =
        b_.CreateSelect(row_valid, b_.getInt32(static_cast<uint32_t>(owners)), b_.getInt32(0));
    llvm::Value* valid = block_per_row()
                             ? b_.CreateSub(owners_here, b_.CreateMul(warp, b_.getInt32(kWarpSize)))
                             : owners_here;
    status = WarpCombine(r, lane, valid);
    if (!status.ok()) return status;
    if (block_per_row()) {
      status = e_.EmitIf(b_.CreateICmpEQ(lane, b_.getInt32(0)), [&]() -> absl::Status {
        b_.CreateStore(b_.CreateLoad(r.acc_type, r.partial), Slot(r.warp_partials, warp));
        return absl::OkStatus();
      });
      if (!status.ok()) return status;
      EmitBarrier(b_);
      status = e_.EmitIf(b_.CreateICmpEQ(warp, b_.getInt32(0)), [&]() -> absl::Status {
        absl::Status s = e_.EmitIf(
            b_.CreateICmpULT(lane, b_.getInt32(static_cast<uint32_t>(valid_warps))),
            [&]() -> absl::Status {
              b_.CreateStore(b_.CreateLoad(r.acc_type, Slot(r.warp_partials, lane)), r.partial);
              return absl::OkStatus();
            });
        if (!s.ok()) return s;
        return WarpCombine(r, lane, b_.getInt32(static_cast<uint32_t>(valid_warps)));
      });
      if (!status.ok()) return status;
    }
    // The leader finishes: result = reducer(init, partial), published to
    // the row's threads through shared memory.
    llvm::Value* leader = b_.CreateAnd(row_valid, b_.CreateICmpEQ(t32, b_.getInt32(0)));
    status = e_.EmitIf(leader, [&]() -> absl::Status {
      absl::StatusOr<llvm::Value*> init = r.init(IrIndex{{}, e_.Int64(0)});
      if (!init.ok()) return init.status();
      llvm::Value* partial = b_.CreateLoad(r.acc_type, r.partial);
      llvm::Value* value;
      if (r.wide) {
        value = e_.NarrowSum(b_.CreateFAdd(e_.WidenForSum(*init, r.input_type), partial),
                             r.input_type);
      } else {
        absl::StatusOr<llvm::Value*> total = Combine(r, *init, partial);
        if (!total.ok()) return total.status();
        value = *total;
      }
      b_.CreateStore(value, Slot(r.results, slot));
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    EmitBarrier(b_);
    b_.CreateStore(b_.CreateLoad(r.value_type, Slot(r.results, slot)), r.result);
    return absl::OkStatus();
  }

  const HloComputation& computation_;
  GpuKernelState& state_;
  codegen::ElementalIrEmitter& e_;
  llvm::IRBuilder<>& b_;
  RowNormalizationPlan plan_;
  int64_t threads_per_row_ = kWarpSize;
  int64_t rows_per_block_ = 1;
  int64_t groups_ = 1;
  int64_t blocks_ = 1;
  int64_t per_thread_ = 1;  // Elements of a row a thread owns, at most.
  // The element index a pass is at (see ForEachOwned); -1 outside passes.
  int64_t current_k_ = -1;
  llvm::Value* current_linear_ = nullptr;
  std::vector<std::unique_ptr<CachedParameter>> cached_;
  std::vector<Reduction> reductions_;
  std::vector<ElementGenerator> outputs_;
};

}  // namespace

absl::StatusOr<bool> TryEmitRowNormalizationKernel(const HloComputation& computation,
                                                   GpuKernelState& state) {
  absl::StatusOr<RowNormalizationPlan> plan = AnalyzeRowNormalization(computation);
  if (!plan.ok()) return false;
  for (const codegen::KernelOutput& output : state.outputs) {
    if (output.shape->dimensions() != plan->row_shape &&
        !IsPerRowShape(*plan, output.shape->dimensions())) {
      return false;
    }
  }
  RowNormalizationEmitter emitter(computation, state, *std::move(plan));
  if (!emitter.Plan()) return false;
  absl::Status status = emitter.Emit();
  if (!status.ok()) return status;
  return true;
}

}  // namespace gpu
}  // namespace hloc
