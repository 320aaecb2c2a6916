// Row and column reduction kernels (see gpu_kernel_emitter.h).
//
// Which outputs qualify is decided as on the host (backend/llvm/
// reduction_heroes.h): reduction heroes over the same input and reduced
// dimensions, outputs that are the heroes or elementwise epilogues of them.
//
// Partial results. A thread folds the input elements it owns starting from
// its first element, not from the init value, and threads that own no
// element never contribute; each output applies its init value once, at the
// end: result = reducer(init, combined partials). So results agree with the
// interpreter for any init value, and the only reordering is the one
// associativity allows. Float sums carry doubles throughout.
//
//   row     warp per output (rows up to kWarpRowLimit), lanes striding the
//           row, then shfl.sync.down in log2(32) steps; or block per output,
//           each warp's total through shared memory to warp 0, which
//           shuffles again.
//   column  block of 32 x W threads per tile of 32 adjacent outputs: lane x
//           owns column x, warp y rows y, y + W, ...; the W partials of each
//           column meet in a W x 32 shared array and warp 0 folds them in
//           row order and stores the tile (coalesced).
//
// Split reductions (ReductionPhase, driven by split_reduction_kernel_emitter
// .cc). When the kernel above would launch fewer blocks than the device has
// SMs and the reduced extent is long, the reduced elements are cut into
// `chunks_` contiguous chunks: the partials kernel runs the row or column
// code over (output, chunk) pairs and stores each chunk's partial, not yet
// combined with the init value, in scratch (slot output * chunks + chunk per
// hero leaf); the combine kernel folds an output's partials in chunk order
// (a warp per output), applies the init value once and the epilogue, and
// stores the outputs. Deterministic, and any reducer works.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_kernel_emitter.h"
#include "backend/gpu/nvptx_ir.h"
#include "backend/gpu/reduction_emitter_internal.h"
#include "backend/llvm/reduction_heroes.h"

namespace hloc {
namespace gpu {
namespace reduction_internal {

absl::StatusOr<bool> GpuReductionEmitter::Emit() {
  const HloInstruction& first = *heroes_[0].reduce;
  input_dims_ = first.operand(0)->shape().dimensions();
  reduced_ = first.dimensions();
  std::sort(reduced_.begin(), reduced_.end());
  output_dims_ = codegen::ReduceResultDims(first);
  if (reduced_.empty()) return false;
  for (const Hero& hero : heroes_) {
    std::vector<int64_t> dims = hero.reduce->dimensions();
    std::sort(dims.begin(), dims.end());
    if (hero.reduce->operand(0)->shape().dimensions() != input_dims_ || dims != reduced_) {
      return false;
    }
  }
  for (const codegen::KernelOutput& output : state_.outputs) {
    if (output.shape->dimensions() != output_dims_) return false;
  }
  const int64_t last_reduced = reduced_.back();
  for (int64_t d = 0; d < static_cast<int64_t>(input_dims_.size()); ++d) {
    if (std::binary_search(reduced_.begin(), reduced_.end(), d)) {
      reduced_sizes_.push_back(input_dims_[d]);
    } else if (d > last_reduced) {
      minor_kept_dims_.push_back(input_dims_[d]);
      column_block_ *= input_dims_[d];
    } else {
      outer_kept_dims_.push_back(input_dims_[d]);
    }
  }
  for (int64_t s : reduced_sizes_) reduced_count_ *= s;
  for (int64_t d : output_dims_) output_count_ *= d;
  // Shared memory for the partials: a column tile holds warps x 32 of
  // them; fewer warps when they would not fit (decided before emitting).
  int64_t partial_bytes = 0;
  for (const Hero& hero : heroes_) {
    for (int64_t i = 0; i < hero.arity; ++i) {
      partial_bytes +=
          hero.wide ? 8 : std::max(1, ByteWidth(hero.reduce->operand(i)->shape().element_type()));
    }
  }
  const int64_t shared_limit = state_.target->max_shared_memory_per_block;
  if (column_block_ > 1) {
    const int64_t tiles =
        (output_count_ / column_block_) * ((column_block_ + kWarpSize - 1) / kWarpSize);
    column_warps_ = tiles < 2 * state_.target->sm_count && reduced_count_ >= 256 ? 32 : 8;
    column_warps_ = std::max<int64_t>(1, std::min(column_warps_, reduced_count_));
    column_warps_ =
        std::min<int64_t>(column_warps_, state_.target->max_threads_per_block / kWarpSize);
    while (column_warps_ > 1 && column_warps_ * kWarpSize * partial_bytes > shared_limit) {
      column_warps_ /= 2;
    }
    if (column_warps_ * kWarpSize * partial_bytes > shared_limit) return false;
  } else if (kWarpSize * partial_bytes > shared_limit) {
    return false;
  }
  if (phase_ != ReductionPhase::kWhole && !PlanSplit()) return false;
  absl::Status prepared = Prepare();
  if (!prepared.ok()) return prepared;
  EmittedGpuKernel& result = state_.result;
  if (output_count_ == 0) {
    result.strategy = "row-reduction";
    result.launch.grid[0] = 0;
    return true;
  }
  absl::Status status = phase_ == ReductionPhase::kCombine ? EmitCombine()
                        : column_block_ > 1                ? EmitColumnReduction()
                                                           : EmitRowReduction();
  if (!status.ok()) return status;
  return true;
}

absl::Status GpuReductionEmitter::Prepare() {
  for (Hero& hero : heroes_) {
    for (int64_t i = 0; i < hero.arity; ++i) {
      absl::StatusOr<llvm::Type*> type =
          e_.ValueType(hero.reduce->operand(i)->shape().element_type());
      if (!type.ok()) return type.status();
      hero.value_types.push_back(*type);
      hero.acc_types.push_back(hero.wide ? b_.getDoubleTy() : *type);
      hero.partial.push_back(e_.EntryAlloca(hero.acc_types.back(), "partial"));
      hero.result.push_back(e_.EntryAlloca(*type, "result"));
      absl::StatusOr<ElementGenerator> input =
          state_.fused->GetGenerator(*hero.reduce->operand(i));
      if (!input.ok()) return input.status();
      hero.inputs.push_back(*std::move(input));
      absl::StatusOr<ElementGenerator> init =
          state_.fused->GetGenerator(*hero.reduce->operand(hero.arity + i));
      if (!init.ok()) return init.status();
      hero.inits.push_back(*std::move(init));
    }
  }
  // The epilogue reads every hero as its final value.
  for (Hero& hero : heroes_) {
    Hero* h = &hero;
    state_.fused->OverrideGenerator(
        *hero.reduce, [this, h](const IrIndex&) -> absl::StatusOr<llvm::Value*> {
          std::vector<llvm::Value*> values;
          for (int64_t i = 0; i < h->arity; ++i) {
            values.push_back(b_.CreateLoad(h->value_types[i], h->result[i]));
          }
          if (!h->reduce->shape().IsTuple()) return values[0];
          absl::StatusOr<llvm::Type*> type = e_.ShapeValueType(h->reduce->shape());
          if (!type.ok()) return type.status();
          llvm::Value* tuple = llvm::UndefValue::get(*type);
          for (int64_t i = 0; i < h->arity; ++i) {
            tuple = b_.CreateInsertValue(tuple, values[i], {static_cast<unsigned>(i)});
          }
          return tuple;
        });
  }
  for (const codegen::KernelOutput& output : state_.outputs) {
    absl::StatusOr<ElementGenerator> g =
        codegen::KernelOutputGenerator(*state_.fused, &b_, output);
    if (!g.ok()) return g.status();
    output_generators_.push_back(*std::move(g));
  }
  if (phase_ != ReductionPhase::kWhole) {
    // Scratch: per hero leaf, output_count * chunks partials, each array
    // starting 16-byte aligned.
    const llvm::DataLayout& layout = e_.module()->getDataLayout();
    int64_t offset = 0;
    for (const Hero& hero : heroes_) {
      scratch_offsets_.emplace_back();
      for (int64_t i = 0; i < hero.arity; ++i) {
        scratch_offsets_.back().push_back(offset);
        const int64_t bytes = output_count_ * chunks_ *
                              static_cast<int64_t>(layout.getTypeAllocSize(hero.acc_types[i]));
        offset += (bytes + 15) / 16 * 16;
      }
    }
    state_.result.scratch_bytes = offset;
  }
  return absl::OkStatus();
}

// ---- Split plans (the rest in split_reduction_kernel_emitter.cc).

// Elements a lane of a row fold with `stride` lanes reads per step (a
// vector load), and whether the reduced dimensions are the input's minor
// ones (contiguous rows).
int64_t GpuReductionEmitter::RowWidth(int64_t stride, bool* contiguous) const {
  *contiguous = true;
  for (size_t i = 0; i < reduced_.size(); ++i) {
    *contiguous = *contiguous &&
                  reduced_[i] == static_cast<int64_t>(input_dims_.size() - reduced_.size() + i);
  }
  if (!*contiguous) return 1;
  int64_t widest = 1;
  for (const Hero& hero : heroes_) {
    for (int64_t i = 0; i < hero.arity; ++i) {
      widest =
          std::max<int64_t>(widest, ByteWidth(hero.reduce->operand(i)->shape().element_type()));
    }
  }
  int64_t width = std::min<int64_t>(4, 16 / widest);
  while (width > 1 && (reduced_count_ % width != 0 || reduced_count_ < stride * width)) {
    width /= 2;
  }
  return width;
}

// ---- Partials.

absl::StatusOr<GpuReductionEmitter::Partial> GpuReductionEmitter::ReadInput(Hero& hero,
                                                                            const IrIndex& index) {
  Partial values;
  for (int64_t i = 0; i < hero.arity; ++i) {
    absl::StatusOr<llvm::Value*> v = hero.inputs[i](index);
    if (!v.ok()) return v.status();
    values.push_back(hero.wide ? e_.WidenForSum(*v, hero.element_type) : *v);
  }
  return values;
}

absl::StatusOr<GpuReductionEmitter::Partial> GpuReductionEmitter::Combine(Hero& hero,
                                                                          const Partial& a,
                                                                          const Partial& b) {
  if (hero.wide) return Partial{b_.CreateFAdd(a[0], b[0])};
  std::vector<llvm::Value*> args(a.begin(), a.end());
  args.insert(args.end(), b.begin(), b.end());
  absl::StatusOr<std::vector<llvm::Value*>> next =
      e_.EmitScalarComputation(*hero.reduce->to_apply(), args);
  if (!next.ok()) return next.status();
  if (static_cast<int64_t>(next->size()) != hero.arity) {
    return absl::InvalidArgumentError(
        absl::StrCat("reducer of %", hero.reduce->name(), " returns the wrong arity"));
  }
  return *next;
}

GpuReductionEmitter::Partial GpuReductionEmitter::LoadPartial(const Hero& hero) {
  Partial values;
  for (int64_t i = 0; i < hero.arity; ++i) {
    values.push_back(b_.CreateLoad(hero.acc_types[i], hero.partial[i]));
  }
  return values;
}

void GpuReductionEmitter::StorePartial(const Hero& hero, const Partial& values) {
  for (int64_t i = 0; i < hero.arity; ++i) b_.CreateStore(values[i], hero.partial[i]);
}

// partial := the fold of the input elements in units u = begin,
// begin + step, ... < end (i64, at most R / width), unit u being the
// `width` adjacent elements u * width + k (adjacent addresses in a row
// reduction, so the loads become vector loads), at input index
// `index_of(r)`. Only called when begin < end.
absl::Status GpuReductionEmitter::FoldStrided(
    llvm::Value* begin, int64_t step, int64_t width, llvm::Value* end,
    const std::function<IrIndex(llvm::Value*)>& index_of) {
  auto fold_unit = [&](llvm::Value* unit, bool first) -> absl::Status {
    llvm::Value* base = width == 1 ? unit : b_.CreateMul(unit, e_.Int64(width), "", true, true);
    for (int64_t k = 0; k < width; ++k) {
      llvm::Value* r = k == 0 ? base : b_.CreateAdd(base, e_.Int64(k), "", true, true);
      IrIndex index = index_of(r);
      for (Hero& hero : heroes_) {
        absl::StatusOr<Partial> x = ReadInput(hero, index);
        if (!x.ok()) return x.status();
        if (first && k == 0) {
          StorePartial(hero, *x);
          continue;
        }
        absl::StatusOr<Partial> next = Combine(hero, LoadPartial(hero), *x);
        if (!next.ok()) return next.status();
        StorePartial(hero, *next);
      }
    }
    return absl::OkStatus();
  };
  absl::Status status = fold_unit(begin, true);
  if (!status.ok()) return status;
  // 32-bit induction variable when the row fits (cheaper on the GPU; the
  // zero-extension lets LLVM narrow the index arithmetic too).
  const int64_t units = reduced_count_ / width;
  const bool narrow = units + step < (int64_t{1} << 31);
  llvm::Type* type = narrow ? b_.getInt32Ty() : b_.getInt64Ty();
  llvm::Value* next = b_.CreateAdd(narrow ? b_.CreateTrunc(begin, type) : begin,
                                   llvm::ConstantInt::get(type, step), "", true, true);
  return EmitStridedLoop(e_, "fold", next, narrow ? b_.CreateTrunc(end, type) : end,
                         llvm::ConstantInt::get(type, step),
                         [&](llvm::Value* u) { return fold_unit(ToIndex(b_, u), false); });
}

// Warp tree: after it, lane 0's partial combines the partials of lanes
// whose `lane_valid(lane)` holds (a prefix of the warp: lanes < `valid`).
absl::Status GpuReductionEmitter::WarpCombine(llvm::Value* lane, llvm::Value* valid) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    llvm::Value* source = b_.CreateAdd(lane, b_.getInt32(offset));
    // Signed: `valid` is negative for warps past the valid lanes.
    llvm::Value* take = b_.CreateAnd(b_.CreateICmpSLT(source, b_.getInt32(kWarpSize)),
                                     b_.CreateICmpSLT(source, valid));
    std::vector<Partial> theirs;
    for (Hero& hero : heroes_) {
      Partial mine = LoadPartial(hero);
      Partial shuffled;
      for (llvm::Value* v : mine) shuffled.push_back(EmitShuffleDown(b_, v, offset));
      theirs.push_back(std::move(shuffled));
    }
    absl::Status status = e_.EmitIf(take, [&]() -> absl::Status {
      for (size_t h = 0; h < heroes_.size(); ++h) {
        absl::StatusOr<Partial> next = Combine(heroes_[h], LoadPartial(heroes_[h]), theirs[h]);
        if (!next.ok()) return next.status();
        StorePartial(heroes_[h], *next);
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// result := reducer(init, partial) when any element was folded, else init.
absl::Status GpuReductionEmitter::Finish(bool any) {
  const IrIndex scalar{{}, e_.Int64(0)};
  for (Hero& hero : heroes_) {
    Partial init;
    for (int64_t i = 0; i < hero.arity; ++i) {
      absl::StatusOr<llvm::Value*> v = hero.inits[i](scalar);
      if (!v.ok()) return v.status();
      init.push_back(*v);
    }
    if (!any) {
      for (int64_t i = 0; i < hero.arity; ++i) b_.CreateStore(init[i], hero.result[i]);
      continue;
    }
    if (hero.wide) {
      llvm::Value* sum =
          b_.CreateFAdd(e_.WidenForSum(init[0], hero.element_type), LoadPartial(hero)[0]);
      b_.CreateStore(e_.NarrowSum(sum, hero.element_type), hero.result[0]);
      continue;
    }
    absl::StatusOr<Partial> total = Combine(hero, init, LoadPartial(hero));
    if (!total.ok()) return total.status();
    for (int64_t i = 0; i < hero.arity; ++i) b_.CreateStore((*total)[i], hero.result[i]);
  }
  return absl::OkStatus();
}

absl::Status GpuReductionEmitter::StoreOutputs(const IrIndex& index) {
  for (size_t k = 0; k < state_.outputs.size(); ++k) {
    absl::StatusOr<llvm::Value*> value = output_generators_[k](index);
    if (!value.ok()) return value.status();
    absl::Status stored =
        e_.EmitArrayStore(state_.outputs[k].buffer, *state_.outputs[k].shape, index, *value);
    if (!stored.ok()) return stored;
  }
  return absl::OkStatus();
}

// The input index for kept indices `kept` (input order) and linear
// reduced index `r`.
IrIndex GpuReductionEmitter::InputIndex(const std::vector<llvm::Value*>& kept, llvm::Value* r) {
  IrIndex reduced = e_.Delinearize(r, reduced_sizes_);
  IrIndex input;
  size_t k = 0, i = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(input_dims_.size()); ++d) {
    if (i < reduced_.size() && reduced_[i] == d) {
      input.dims.push_back(reduced.dims[i++]);
    } else {
      input.dims.push_back(kept[k++]);
    }
  }
  return input;
}

// Shared arrays of `count` partials per hero leaf.
std::vector<std::vector<llvm::GlobalVariable*>> GpuReductionEmitter::SharedPartials(int64_t count) {
  std::vector<std::vector<llvm::GlobalVariable*>> shared;
  for (const Hero& hero : heroes_) {
    shared.emplace_back();
    for (int64_t i = 0; i < hero.arity; ++i) {
      shared.back().push_back(AddSharedArray(e_.module(), hero.acc_types[i], count,
                                             absl::StrCat("partials.", hero.reduce->name())));
      shared_bytes_ += count * e_.module()->getDataLayout().getTypeAllocSize(hero.acc_types[i]);
    }
  }
  return shared;
}

llvm::Value* GpuReductionEmitter::SharedSlot(llvm::GlobalVariable* array, llvm::Value* slot) {
  return b_.CreateInBoundsGEP(array->getValueType(), array, {b_.getInt32(0), slot});
}

void GpuReductionEmitter::StorePartialTo(
    const std::vector<std::vector<llvm::GlobalVariable*>>& shared, llvm::Value* slot) {
  for (size_t h = 0; h < heroes_.size(); ++h) {
    Partial values = LoadPartial(heroes_[h]);
    for (int64_t i = 0; i < heroes_[h].arity; ++i) {
      b_.CreateStore(values[i], SharedSlot(shared[h][i], slot));
    }
  }
}

std::vector<GpuReductionEmitter::Partial> GpuReductionEmitter::LoadPartialsFrom(
    const std::vector<std::vector<llvm::GlobalVariable*>>& shared, llvm::Value* slot) {
  std::vector<Partial> all;
  for (size_t h = 0; h < heroes_.size(); ++h) {
    Partial values;
    for (int64_t i = 0; i < heroes_[h].arity; ++i) {
      values.push_back(b_.CreateLoad(heroes_[h].acc_types[i], SharedSlot(shared[h][i], slot)));
    }
    all.push_back(std::move(values));
  }
  return all;
}

absl::Status GpuReductionEmitter::EmitRowReduction() {
  EmittedGpuKernel& result = state_.result;
  const bool split = phase_ == ReductionPhase::kPartials;
  result.strategy = split ? "row-reduction-split" : "row-reduction";
  const int64_t R = reduced_count_;
  const bool warp_per_row = !split && R <= kWarpRowLimit;
  const int64_t threads =
      split ? std::min<int64_t>(kSplitRowThreads, state_.target->max_threads_per_block)
      : warp_per_row
          ? std::min<int64_t>(256, output_count_ * kWarpSize)
          : std::clamp<int64_t>((R / 4 + kWarpSize - 1) / kWarpSize * kWarpSize, 64,
                                std::min(1024, state_.target->max_threads_per_block));
  const int64_t rows_per_block = warp_per_row ? threads / kWarpSize : 1;
  // Work items: outputs, or (output, chunk) pairs when split.
  const int64_t work = output_count_ * chunks_;
  const int64_t blocks = GridBlocks(*state_.target, work, rows_per_block);
  result.launch.block[0] = threads;
  result.launch.grid[0] = blocks;
  const int64_t stride = warp_per_row ? kWarpSize : threads;
  const int64_t warps = threads / kWarpSize;
  // Reduced dimensions that are the input's minor ones form contiguous
  // rows: a lane reads `width` adjacent elements per step (16 bytes of the
  // widest input), when rows split evenly and every lane gets a step.
  bool contiguous = true;
  const int64_t width = RowWidth(stride, &contiguous);
  const int64_t units = R / width;
  const int64_t chunk_units = split ? chunk_units_ : units;
  result.vector_width = width;

  llvm::Value* tid = ReadSpecialRegister(b_, SpecialRegister::kThreadIdX);
  llvm::Value* lane = b_.CreateAnd(tid, b_.getInt32(kWarpSize - 1), "lane");
  llvm::Value* warp = b_.CreateLShr(tid, b_.getInt32(5), "warp");
  llvm::Value* block = ToIndex(b_, ReadSpecialRegister(b_, SpecialRegister::kBlockIdX));
  // The thread's offset in its row (chunk): its lane (warp per row) or its
  // thread index (block per row).
  llvm::Value* offset = ToIndex(b_, warp_per_row ? lane : tid);
  llvm::Value* first_item =
      warp_per_row
          ? b_.CreateAdd(b_.CreateMul(block, e_.Int64(rows_per_block)), ToIndex(b_, warp))
          : block;
  const int64_t item_stride = blocks * rows_per_block;
  std::vector<std::vector<llvm::GlobalVariable*>> shared;
  if (!warp_per_row) shared = SharedPartials(warps);

  return EmitStridedLoop(
      e_, "row", first_item, e_.Int64(work), e_.Int64(item_stride),
      [&](llvm::Value* item) -> absl::Status {
        auto [row, chunk] = SplitWork(item);
        IrIndex out = e_.Delinearize(row, output_dims_);
        llvm::Value* row_start =
            contiguous ? b_.CreateMul(row, e_.Int64(R), "row_start", true, true) : nullptr;
        auto index_of = [&](llvm::Value* r) {
          IrIndex index = InputIndex(out.dims, r);
          if (contiguous) index.linear = b_.CreateAdd(row_start, r, "", true, true);
          return index;
        };
        // This chunk's units [begin, end); lanes (threads) that own units:
        // the first min(end - begin, stride).
        llvm::Value* begin = b_.CreateMul(chunk, e_.Int64(chunk_units), "", true, true);
        llvm::Value* end = e_.Int64(units);
        llvm::Value* valid_lanes = b_.getInt32(static_cast<uint32_t>(std::min(units, stride)));
        if (split) {
          llvm::Value* chunk_end = b_.CreateAdd(begin, e_.Int64(chunk_units), "", true, true);
          end = b_.CreateSelect(b_.CreateICmpSLT(chunk_end, end), chunk_end, end);
          llvm::Value* length = b_.CreateSub(end, begin);
          length = b_.CreateSelect(b_.CreateICmpSLT(length, e_.Int64(stride)), length,
                                   e_.Int64(stride));
          valid_lanes = b_.CreateTrunc(length, b_.getInt32Ty());
        }
        llvm::Value* first = b_.CreateAdd(begin, offset, "", true, true);
        if (R > 0) {
          absl::Status status = e_.EmitIf(b_.CreateICmpSLT(first, end), [&] {
            return FoldStrided(first, stride, width, end, index_of);
          });
          if (!status.ok()) return status;
          if (warp_per_row) {
            status = WarpCombine(lane, valid_lanes);
          } else {
            // Lanes of warp w own units when 32w + lane < valid_lanes.
            llvm::Value* in_warp =
                b_.CreateSub(valid_lanes, b_.CreateMul(warp, b_.getInt32(kWarpSize)));
            status = WarpCombine(lane, in_warp);
            if (!status.ok()) return status;
            status = e_.EmitIf(b_.CreateICmpEQ(lane, b_.getInt32(0)), [&]() -> absl::Status {
              StorePartialTo(shared, warp);
              return absl::OkStatus();
            });
            if (!status.ok()) return status;
            EmitBarrier(b_);
            llvm::Value* valid_warps = b_.CreateLShr(
                b_.CreateAdd(valid_lanes, b_.getInt32(kWarpSize - 1)), b_.getInt32(5));
            status = e_.EmitIf(b_.CreateICmpEQ(warp, b_.getInt32(0)), [&]() -> absl::Status {
              absl::Status s =
                  e_.EmitIf(b_.CreateICmpULT(lane, valid_warps), [&]() -> absl::Status {
                    std::vector<Partial> loaded = LoadPartialsFrom(shared, lane);
                    for (size_t h = 0; h < heroes_.size(); ++h)
                      StorePartial(heroes_[h], loaded[h]);
                    return absl::OkStatus();
                  });
              if (!s.ok()) return s;
              return WarpCombine(lane, valid_warps);
            });
            if (!status.ok()) return status;
          }
          if (!status.ok()) return status;
        }
        llvm::Value* leader = b_.CreateICmpEQ(warp_per_row ? lane : tid, b_.getInt32(0));
        absl::Status status = e_.EmitIf(leader, [&]() -> absl::Status {
          if (split) {
            // The chunk's partial, its slot being the work item.
            StorePartialsToScratch(item);
            return absl::OkStatus();
          }
          absl::Status s = Finish(R > 0);
          if (!s.ok()) return s;
          return StoreOutputs(out);
        });
        if (!status.ok()) return status;
        // The shared partials are rewritten by the next row.
        if (!warp_per_row) EmitBarrier(b_);
        return absl::OkStatus();
      });
}

absl::Status GpuReductionEmitter::EmitColumnReduction() {
  EmittedGpuKernel& result = state_.result;
  const bool split = phase_ == ReductionPhase::kPartials;
  result.strategy = split ? "column-reduction-split" : "column-reduction";
  const int64_t R = reduced_count_;
  const int64_t tiles_per_block_row = (column_block_ + kWarpSize - 1) / kWarpSize;
  const int64_t tiles = (output_count_ / column_block_) * tiles_per_block_row;
  const int64_t warps = column_warps_;
  // Work items: tiles, or (tile, chunk) pairs when split.
  const int64_t work = tiles * chunks_;
  const int64_t chunk_rows = split ? chunk_units_ : R;
  const int64_t blocks = GridBlocks(*state_.target, work, 1);
  result.launch.block[0] = kWarpSize;
  result.launch.block[1] = warps;
  result.launch.grid[0] = blocks;
  std::vector<std::vector<llvm::GlobalVariable*>> shared = SharedPartials(warps * kWarpSize);

  llvm::Value* lane = ReadSpecialRegister(b_, SpecialRegister::kThreadIdX);
  llvm::Value* row = ReadSpecialRegister(b_, SpecialRegister::kThreadIdY);
  llvm::Value* block = ToIndex(b_, ReadSpecialRegister(b_, SpecialRegister::kBlockIdX));
  llvm::Value* slot = b_.CreateAdd(b_.CreateMul(row, b_.getInt32(kWarpSize)), lane, "slot");
  const int64_t rows_folded = std::min(chunk_rows, warps);

  return EmitStridedLoop(
      e_, "tile", block, e_.Int64(work), e_.Int64(blocks),
      [&](llvm::Value* item) -> absl::Status {
        auto [tile, chunk] = SplitWork(item);
        llvm::Value* outer_linear = b_.CreateUDiv(tile, e_.Int64(tiles_per_block_row));
        llvm::Value* column = b_.CreateAdd(
            b_.CreateMul(b_.CreateURem(tile, e_.Int64(tiles_per_block_row)), e_.Int64(kWarpSize)),
            ToIndex(b_, lane), "column");
        llvm::Value* column_valid = b_.CreateICmpSLT(column, e_.Int64(column_block_));
        IrIndex outer = e_.Delinearize(outer_linear, outer_kept_dims_);
        IrIndex minor = e_.Delinearize(column, minor_kept_dims_);
        // Input index: the kept dims in input order are the outer ones, then
        // the minor ones (every minor kept dim follows the last reduced dim).
        std::vector<llvm::Value*> kept = outer.dims;
        kept.insert(kept.end(), minor.dims.begin(), minor.dims.end());
        auto index_of = [&](llvm::Value* r) { return InputIndex(kept, r); };
        // This chunk's rows [begin, end).
        llvm::Value* begin = b_.CreateMul(chunk, e_.Int64(chunk_rows), "", true, true);
        llvm::Value* end = e_.Int64(R);
        if (split) {
          llvm::Value* chunk_end = b_.CreateAdd(begin, e_.Int64(chunk_rows), "", true, true);
          end = b_.CreateSelect(b_.CreateICmpSLT(chunk_end, end), chunk_end, end);
        }
        llvm::Value* first = b_.CreateAdd(begin, ToIndex(b_, row), "", true, true);
        if (R > 0) {
          absl::Status status =
              e_.EmitIf(b_.CreateAnd(column_valid, b_.CreateICmpSLT(first, end)),
                        [&]() -> absl::Status {
                          absl::Status s = FoldStrided(first, warps, 1, end, index_of);
                          if (!s.ok()) return s;
                          StorePartialTo(shared, slot);
                          return absl::OkStatus();
                        });
          if (!status.ok()) return status;
          EmitBarrier(b_);
        }
        llvm::Value* leader = b_.CreateAnd(b_.CreateICmpEQ(row, b_.getInt32(0)), column_valid);
        llvm::Value* output_linear =
            b_.CreateAdd(b_.CreateMul(outer_linear, e_.Int64(column_block_)), column);
        absl::Status status = e_.EmitIf(leader, [&]() -> absl::Status {
          if (R > 0) {
            // Row 0's partial is already in registers; fold rows 1.. in
            // order (those of the chunk: a split's last chunk may be short).
            for (int64_t y = 1; y < rows_folded; ++y) {
              auto fold_row = [&]() -> absl::Status {
                std::vector<Partial> loaded =
                    LoadPartialsFrom(shared, b_.CreateAdd(lane, b_.getInt32(y * kWarpSize)));
                for (size_t h = 0; h < heroes_.size(); ++h) {
                  absl::StatusOr<Partial> next =
                      Combine(heroes_[h], LoadPartial(heroes_[h]), loaded[h]);
                  if (!next.ok()) return next.status();
                  StorePartial(heroes_[h], *next);
                }
                return absl::OkStatus();
              };
              absl::Status s =
                  split ? e_.EmitIf(b_.CreateICmpSLT(b_.CreateAdd(begin, e_.Int64(y)), end),
                                    fold_row)
                        : fold_row();
              if (!s.ok()) return s;
            }
          }
          if (split) {
            StorePartialsToScratch(b_.CreateAdd(
                b_.CreateMul(output_linear, e_.Int64(chunks_), "", true, true), chunk));
            return absl::OkStatus();
          }
          absl::Status s = Finish(R > 0);
          if (!s.ok()) return s;
          IrIndex out;
          out.dims = kept;
          out.linear = output_linear;
          return StoreOutputs(out);
        });
        if (!status.ok()) return status;
        if (R > 0) EmitBarrier(b_);
        return absl::OkStatus();
      });
}

}  // namespace reduction_internal

absl::StatusOr<bool> TryEmitReductionPhase(GpuKernelState& state, ReductionPhase phase,
                                           llvm::Value* scratch) {
  if (state.outputs.empty()) return false;
  codegen::ReductionHeroFinder finder;
  const std::vector<int64_t>& dims = state.outputs[0].shape->dimensions();
  for (const codegen::KernelOutput& output : state.outputs) {
    if (!finder.Collect(output.producer, dims)) return false;
  }
  if (finder.heroes().empty()) return false;
  // Heroes that feed each other cannot share one pass.
  for (const HloInstruction* hero : finder.heroes()) {
    for (const HloInstruction* operand : hero->operands()) {
      if (finder.ContainsReduce(operand)) return false;
    }
  }
  // Too many heroes' partials would not fit in shared memory: a loop kernel
  // (a thread per output) still computes them.
  if (finder.heroes().size() > 8) return false;
  reduction_internal::GpuReductionEmitter emitter(state, finder.heroes(), phase, scratch);
  return emitter.Emit();
}

absl::StatusOr<bool> TryEmitReductionKernel(GpuKernelState& state) {
  return TryEmitReductionPhase(state, ReductionPhase::kWhole, nullptr);
}

}  // namespace gpu
}  // namespace hloc
