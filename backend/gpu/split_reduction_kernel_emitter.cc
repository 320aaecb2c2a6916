// Split reductions (see gpu_kernel_emitter.h): two kernel functions in one
// module, `name` (the partials kernel, the one launched first) and
// `name`_combine, both over the kernel's buffers plus a scratch pointer.
// The reduction emitter (reduction_kernel_emitter.cc, ReductionPhase)
// decides whether splitting pays and emits each body; this file sets up
// the two functions around it, and holds the emitter's split-only parts
// (GpuReductionEmitter, reduction_emitter_internal.h): the split plan, the
// partials' scratch slots and the combine kernel.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_kernel_emitter.h"
#include "backend/gpu/nvptx_ir.h"
#include "backend/gpu/reduction_emitter_internal.h"
#include "backend/llvm/array_leaves.h"
#include "hlo/status_macros.h"
#include "llvm/IR/Function.h"

namespace hloc {
namespace gpu {
namespace {

// One kernel function with its parameters bound: what a reduction phase
// emits into.
struct PhaseFunction {
  llvm::Function* function = nullptr;
  std::unique_ptr<llvm::IRBuilder<>> b;
  std::unique_ptr<codegen::ElementalIrEmitter> elemental;
  std::unique_ptr<codegen::FusedIrEmitter> fused;
  GpuKernelState state;
  int64_t num_buffers = 0;

  ~PhaseFunction() {
    // The emitters must go before the function they point into.
    fused.reset();
    elemental.reset();
    b.reset();
  }
  void Erase() {
    if (function == nullptr) return;
    fused.reset();
    elemental.reset();
    b.reset();
    function->dropAllReferences();
    function->eraseFromParent();
    function = nullptr;
  }
};

absl::Status SetUp(const HloComputation& computation, const std::string& name,
                   llvm::Module* module, const codegen::MathLowering* math,
                   const GpuTarget& target, PhaseFunction* out) {
  GpuKernelState& state = out->state;
  KernelBuffers buffers;
  HLOC_RETURN_IF_ERROR(CollectKernelBuffers(computation, &state.outputs, &buffers));
  const int64_t num_inputs = buffers.num_inputs;
  out->num_buffers = static_cast<int64_t>(buffers.shapes.size()) + 1;
  out->function = CreateKernelFunction(module, name, buffers.shapes, num_inputs,
                                       /*outputs_read=*/false, /*scratch=*/true);
  out->b = std::make_unique<llvm::IRBuilder<>>(
      llvm::BasicBlock::Create(module->getContext(), "entry", out->function));
  out->elemental = std::make_unique<codegen::ElementalIrEmitter>(out->b.get(), module, math);
  out->fused = std::make_unique<codegen::FusedIrEmitter>(out->elemental.get());
  BindKernelBuffers(out->function, buffers, out->fused.get(), &state.outputs);
  state.b = out->b.get();
  state.elemental = out->elemental.get();
  state.fused = out->fused.get();
  state.target = &target;
  state.num_inputs = num_inputs;
  return absl::OkStatus();
}

// Emits `phase` into a new function `name`; false (function removed) when
// the emitter declines.
absl::StatusOr<bool> EmitPhase(const HloComputation& computation, const std::string& name,
                               llvm::Module* module, const codegen::MathLowering* math,
                               const GpuTarget& target, ReductionPhase phase,
                               PhaseFunction* out) {
  absl::Status set_up = SetUp(computation, name, module, math, target, out);
  if (!set_up.ok()) {
    out->Erase();
    return set_up;
  }
  llvm::Value* scratch = out->function->getArg(static_cast<unsigned>(out->num_buffers - 1));
  absl::StatusOr<bool> done = TryEmitReductionPhase(out->state, phase, scratch);
  if (!done.ok() || !*done) {
    out->Erase();
    return done;
  }
  out->b->CreateRetVoid();
  AnnotateKernel(out->function, out->state.result.launch);
  return true;
}

}  // namespace

namespace reduction_internal {

// Whether splitting pays, and how: sets chunks_ and chunk_units_ (units
// of a row chunk, rows of a column chunk). Only when the unsplit kernel
// would leave SMs idle (a block per row with fewer rows than SMs, or
// fewer column tiles than SMs) and its blocks each read a lot.
bool GpuReductionEmitter::PlanSplit() {
  const int64_t sms = std::max(1, state_.target->sm_count);
  const int64_t R = reduced_count_;
  if (output_count_ == 0 || R == 0) return false;
  if (R * std::min(column_block_, kWarpSize) < kSplitMinElementsPerBlock) return false;
  if (column_block_ > 1) {
    const int64_t tiles =
        (output_count_ / column_block_) * ((column_block_ + kWarpSize - 1) / kWarpSize);
    if (tiles >= sms) return false;
    const int64_t warps = column_warps_;
    const int64_t target_blocks = sms * std::max<int64_t>(1, 2048 / (warps * kWarpSize));
    const int64_t chunks = (target_blocks + tiles - 1) / tiles;
    int64_t rows = (R + chunks - 1) / chunks;
    rows = (rows + warps - 1) / warps * warps;
    chunk_units_ = std::max(rows, warps * kSplitMinRowsPerWarp);
    chunks_ = (R + chunk_units_ - 1) / chunk_units_;
  } else {
    if (R <= kWarpRowLimit || output_count_ >= sms) return false;
    const int64_t threads =
        std::min<int64_t>(kSplitRowThreads, state_.target->max_threads_per_block);
    bool contiguous = false;
    const int64_t units = R / RowWidth(threads, &contiguous);
    const int64_t target_blocks = sms * std::max<int64_t>(1, 2048 / threads);
    const int64_t chunks = (target_blocks + output_count_ - 1) / output_count_;
    int64_t per_chunk = (units + chunks - 1) / chunks;
    per_chunk = (per_chunk + threads - 1) / threads * threads;
    chunk_units_ = std::max(per_chunk, threads * kSplitMinStepsPerThread);
    chunks_ = (units + chunk_units_ - 1) / chunk_units_;
  }
  return chunks_ >= 2;
}

// Where hero `h`'s leaf `i` keeps partial `slot` in scratch.
llvm::Value* GpuReductionEmitter::ScratchSlot(size_t h, int64_t i, llvm::Value* slot) {
  llvm::Value* base =
      b_.CreateInBoundsGEP(b_.getInt8Ty(), scratch_, e_.Int64(scratch_offsets_[h][i]));
  return b_.CreateInBoundsGEP(heroes_[h].acc_types[i], base, slot);
}

void GpuReductionEmitter::StorePartialsToScratch(llvm::Value* slot) {
  for (size_t h = 0; h < heroes_.size(); ++h) {
    Partial values = LoadPartial(heroes_[h]);
    for (int64_t i = 0; i < heroes_[h].arity; ++i) {
      b_.CreateStore(values[i], ScratchSlot(h, i, slot));
    }
  }
}

std::vector<GpuReductionEmitter::Partial> GpuReductionEmitter::LoadPartialsFromScratch(
    llvm::Value* slot) {
  std::vector<Partial> all;
  for (size_t h = 0; h < heroes_.size(); ++h) {
    Partial values;
    for (int64_t i = 0; i < heroes_[h].arity; ++i) {
      values.push_back(b_.CreateLoad(heroes_[h].acc_types[i], ScratchSlot(h, i, slot)));
    }
    all.push_back(std::move(values));
  }
  return all;
}

// The (output, chunk) of work item `w`: chunk w % chunks, output w /
// chunks (w itself when not split).
std::pair<llvm::Value*, llvm::Value*> GpuReductionEmitter::SplitWork(llvm::Value* w) {
  if (chunks_ == 1) return {w, e_.Int64(0)};
  return {b_.CreateUDiv(w, e_.Int64(chunks_)), b_.CreateURem(w, e_.Int64(chunks_))};
}

// The combine kernel of a split: a warp per output folds its chunks'
// partials (lane l: chunks l, l + 32, ...; then the warp tree), and lane
// 0 applies the init value and stores the outputs.
absl::Status GpuReductionEmitter::EmitCombine() {
  EmittedGpuKernel& result = state_.result;
  result.strategy = "reduction-combine";
  const int64_t threads = std::min<int64_t>(256, output_count_ * kWarpSize);
  const int64_t rows_per_block = threads / kWarpSize;
  const int64_t blocks = GridBlocks(*state_.target, output_count_, rows_per_block);
  result.launch.block[0] = threads;
  result.launch.grid[0] = blocks;
  llvm::Value* tid = ReadSpecialRegister(b_, SpecialRegister::kThreadIdX);
  llvm::Value* lane = b_.CreateAnd(tid, b_.getInt32(kWarpSize - 1), "lane");
  llvm::Value* warp = b_.CreateLShr(tid, b_.getInt32(5), "warp");
  llvm::Value* block = ToIndex(b_, ReadSpecialRegister(b_, SpecialRegister::kBlockIdX));
  llvm::Value* first_row =
      b_.CreateAdd(b_.CreateMul(block, e_.Int64(rows_per_block)), ToIndex(b_, warp));
  llvm::Value* first = ToIndex(b_, lane);
  return EmitStridedLoop(
      e_, "output", first_row, e_.Int64(output_count_), e_.Int64(blocks * rows_per_block),
      [&](llvm::Value* row) -> absl::Status {
        llvm::Value* base = b_.CreateMul(row, e_.Int64(chunks_), "", true, true);
        auto take = [&](llvm::Value* chunk, bool initial) -> absl::Status {
          std::vector<Partial> loaded =
              LoadPartialsFromScratch(b_.CreateAdd(base, chunk, "", true, true));
          for (size_t h = 0; h < heroes_.size(); ++h) {
            if (initial) {
              StorePartial(heroes_[h], loaded[h]);
              continue;
            }
            absl::StatusOr<Partial> next =
                Combine(heroes_[h], LoadPartial(heroes_[h]), loaded[h]);
            if (!next.ok()) return next.status();
            StorePartial(heroes_[h], *next);
          }
          return absl::OkStatus();
        };
        absl::Status status =
            e_.EmitIf(b_.CreateICmpSLT(first, e_.Int64(chunks_)), [&]() -> absl::Status {
              absl::Status s = take(first, true);
              if (!s.ok()) return s;
              return EmitStridedLoop(
                  e_, "chunk", b_.CreateAdd(first, e_.Int64(kWarpSize)), e_.Int64(chunks_),
                  e_.Int64(kWarpSize), [&](llvm::Value* c) { return take(c, false); });
            });
        if (!status.ok()) return status;
        status = WarpCombine(
            lane, b_.getInt32(static_cast<uint32_t>(std::min<int64_t>(chunks_, kWarpSize))));
        if (!status.ok()) return status;
        return e_.EmitIf(b_.CreateICmpEQ(lane, b_.getInt32(0)), [&]() -> absl::Status {
          absl::Status s = Finish(true);
          if (!s.ok()) return s;
          return StoreOutputs(e_.Delinearize(row, output_dims_));
        });
      });
}

}  // namespace reduction_internal

absl::StatusOr<std::optional<EmittedGpuKernel>> TryEmitSplitReductionKernel(
    const HloComputation& computation, const std::string& name, llvm::Module* module,
    const codegen::MathLowering* math, const GpuTarget& target) {
  if (computation.root() == nullptr) return std::nullopt;
  // Only computations with a reduce in them are candidates.
  bool any_reduce = false;
  for (const HloInstruction* hlo : computation.instructions()) {
    any_reduce = any_reduce || hlo->opcode() == HloOpcode::kReduce;
  }
  if (!any_reduce) return std::nullopt;
  PhaseFunction partials;
  absl::StatusOr<bool> done =
      EmitPhase(computation, name, module, math, target, ReductionPhase::kPartials, &partials);
  if (!done.ok()) return done.status();
  if (!*done) return std::nullopt;
  PhaseFunction combine;
  const std::string combine_name = absl::StrCat(name, "_combine");
  done = EmitPhase(computation, combine_name, module, math, target, ReductionPhase::kCombine,
                   &combine);
  if (!done.ok() || !*done) {
    partials.Erase();
    if (!done.ok()) return done.status();
    return absl::InternalError(
        absl::StrCat(computation.name(), ": split reduction without a combine kernel"));
  }
  EmittedGpuKernel result = partials.state.result;
  if (result.scratch_bytes != combine.state.result.scratch_bytes) {
    partials.Erase();
    combine.Erase();
    return absl::InternalError(
        absl::StrCat(computation.name(), ": split reduction phases disagree on scratch"));
  }
  result.num_buffers = partials.num_buffers;
  result.num_inputs = partials.state.num_inputs;
  result.second_name = combine_name;
  result.second_launch = combine.state.result.launch;
  return result;
}

}  // namespace gpu
}  // namespace hloc
