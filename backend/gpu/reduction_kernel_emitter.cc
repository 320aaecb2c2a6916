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
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_kernel_emitter.h"
#include "backend/gpu/nvptx_ir.h"
#include "backend/llvm/reduction_heroes.h"

namespace hloc {
namespace gpu {
namespace {

using codegen::ElementGenerator;
using codegen::IrIndex;

constexpr int64_t kWarpRowLimit = 512;
constexpr int64_t kWarpSize = 32;

struct Hero {
  const HloInstruction* reduce;
  int64_t arity;                         // Inputs (= inits = result leaves).
  bool wide = false;                     // A float sum carried in double.
  PrimitiveType element_type;            // Of input 0.
  std::vector<llvm::Type*> acc_types;    // Per leaf: the partial's type.
  std::vector<llvm::Type*> value_types;  // Per leaf: the result's type.
  std::vector<ElementGenerator> inputs, inits;
  std::vector<llvm::AllocaInst*> partial;  // Per leaf: the running partial.
  std::vector<llvm::AllocaInst*> result;   // Per leaf: the final value.
};

class GpuReductionEmitter {
 public:
  GpuReductionEmitter(GpuKernelState& state, const std::vector<const HloInstruction*>& heroes)
      : state_(state), e_(*state.elemental), b_(*state.b) {
    for (const HloInstruction* reduce : heroes) {
      Hero hero;
      hero.reduce = reduce;
      hero.arity = reduce->operand_count() / 2;
      hero.wide = codegen::ElementalIrEmitter::SumsInDouble(*reduce);
      hero.element_type = reduce->operand(0)->shape().element_type();
      heroes_.push_back(std::move(hero));
    }
  }

  absl::StatusOr<bool> Emit() {
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
    absl::Status prepared = Prepare();
    if (!prepared.ok()) return prepared;
    EmittedGpuKernel& result = state_.result;
    if (output_count_ == 0) {
      result.strategy = "row-reduction";
      result.launch.grid[0] = 0;
      return true;
    }
    absl::Status status = column_block_ > 1 ? EmitColumnReduction() : EmitRowReduction();
    if (!status.ok()) return status;
    return true;
  }

 private:
  absl::Status Prepare() {
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
    return absl::OkStatus();
  }

  // ---- Partials: per hero, one value per leaf.
  using Partial = std::vector<llvm::Value*>;

  absl::StatusOr<Partial> ReadInput(Hero& hero, const IrIndex& index) {
    Partial values;
    for (int64_t i = 0; i < hero.arity; ++i) {
      absl::StatusOr<llvm::Value*> v = hero.inputs[i](index);
      if (!v.ok()) return v.status();
      values.push_back(hero.wide ? e_.WidenForSum(*v, hero.element_type) : *v);
    }
    return values;
  }

  absl::StatusOr<Partial> Combine(Hero& hero, const Partial& a, const Partial& b) {
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

  Partial LoadPartial(const Hero& hero) {
    Partial values;
    for (int64_t i = 0; i < hero.arity; ++i) {
      values.push_back(b_.CreateLoad(hero.acc_types[i], hero.partial[i]));
    }
    return values;
  }
  void StorePartial(const Hero& hero, const Partial& values) {
    for (int64_t i = 0; i < hero.arity; ++i) b_.CreateStore(values[i], hero.partial[i]);
  }

  // partial := the fold of the input elements in units u = begin,
  // begin + step, ... < R / width, unit u being the `width` adjacent
  // elements u * width + k (adjacent addresses in a row reduction, so the
  // loads become vector loads), at input index `index_of(r)`. Only called
  // when begin < R / width.
  absl::Status FoldStrided(llvm::Value* begin, int64_t step, int64_t width,
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
    return EmitStridedLoop(e_, "fold", next, llvm::ConstantInt::get(type, units),
                           llvm::ConstantInt::get(type, step),
                           [&](llvm::Value* u) { return fold_unit(ToIndex(b_, u), false); });
  }

  // Warp tree: after it, lane 0's partial combines the partials of lanes
  // whose `lane_valid(lane)` holds (a prefix of the warp: lanes < `valid`).
  absl::Status WarpCombine(llvm::Value* lane, llvm::Value* valid) {
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
  absl::Status Finish(bool any) {
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

  absl::Status StoreOutputs(const IrIndex& index) {
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
  IrIndex InputIndex(const std::vector<llvm::Value*>& kept, llvm::Value* r) {
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
  std::vector<std::vector<llvm::GlobalVariable*>> SharedPartials(int64_t count) {
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
  llvm::Value* SharedSlot(llvm::GlobalVariable* array, llvm::Value* slot) {
    return b_.CreateInBoundsGEP(array->getValueType(), array, {b_.getInt32(0), slot});
  }
  void StorePartialTo(const std::vector<std::vector<llvm::GlobalVariable*>>& shared,
                      llvm::Value* slot) {
    for (size_t h = 0; h < heroes_.size(); ++h) {
      Partial values = LoadPartial(heroes_[h]);
      for (int64_t i = 0; i < heroes_[h].arity; ++i) {
        b_.CreateStore(values[i], SharedSlot(shared[h][i], slot));
      }
    }
  }
  std::vector<Partial> LoadPartialsFrom(
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

  absl::Status EmitRowReduction() {
    EmittedGpuKernel& result = state_.result;
    result.strategy = "row-reduction";
    const int64_t R = reduced_count_;
    const bool warp_per_row = R <= kWarpRowLimit;
    const int64_t threads =
        warp_per_row ? std::min<int64_t>(256, output_count_ * kWarpSize)
                     : std::clamp<int64_t>((R / 4 + kWarpSize - 1) / kWarpSize * kWarpSize, 64,
                                           std::min(1024, state_.target->max_threads_per_block));
    const int64_t rows_per_block = warp_per_row ? threads / kWarpSize : 1;
    const int64_t blocks = GridBlocks(*state_.target, output_count_, rows_per_block);
    result.launch.block[0] = threads;
    result.launch.grid[0] = blocks;
    const int64_t stride = warp_per_row ? kWarpSize : threads;
    const int64_t warps = threads / kWarpSize;
    // Reduced dimensions that are the input's minor ones form contiguous
    // rows: a lane reads `width` adjacent elements per step (16 bytes of the
    // widest input), when rows split evenly and every lane gets a step.
    bool contiguous = true;
    for (size_t i = 0; i < reduced_.size(); ++i) {
      contiguous = contiguous &&
                   reduced_[i] == static_cast<int64_t>(input_dims_.size() - reduced_.size() + i);
    }
    int64_t width = 1;
    if (contiguous) {
      int64_t widest = 1;
      for (const Hero& hero : heroes_) {
        for (int64_t i = 0; i < hero.arity; ++i) {
          widest =
              std::max<int64_t>(widest, ByteWidth(hero.reduce->operand(i)->shape().element_type()));
        }
      }
      width = std::min<int64_t>(4, 16 / widest);
      while (width > 1 && (R % width != 0 || R < stride * width)) width /= 2;
    }
    const int64_t units = R / width;
    result.vector_width = width;

    llvm::Value* tid = ReadSpecialRegister(b_, SpecialRegister::kThreadIdX);
    llvm::Value* lane = b_.CreateAnd(tid, b_.getInt32(kWarpSize - 1), "lane");
    llvm::Value* warp = b_.CreateLShr(tid, b_.getInt32(5), "warp");
    llvm::Value* block = ToIndex(b_, ReadSpecialRegister(b_, SpecialRegister::kBlockIdX));
    // The thread's first reduced element: its lane (warp per row) or its
    // thread index (block per row).
    llvm::Value* first = ToIndex(b_, warp_per_row ? lane : tid);
    llvm::Value* first_row =
        warp_per_row
            ? b_.CreateAdd(b_.CreateMul(block, e_.Int64(rows_per_block)), ToIndex(b_, warp))
            : block;
    const int64_t row_stride = blocks * rows_per_block;
    std::vector<std::vector<llvm::GlobalVariable*>> shared;
    if (!warp_per_row) shared = SharedPartials(warps);
    // Lanes (threads) that own elements: the first min(units, stride).
    llvm::Value* valid_lanes = b_.getInt32(static_cast<uint32_t>(std::min(units, stride)));

    return EmitStridedLoop(
        e_, "row", first_row, e_.Int64(output_count_), e_.Int64(row_stride),
        [&](llvm::Value* row) -> absl::Status {
          IrIndex out = e_.Delinearize(row, output_dims_);
          llvm::Value* row_start =
              contiguous ? b_.CreateMul(row, e_.Int64(R), "row_start", true, true) : nullptr;
          auto index_of = [&](llvm::Value* r) {
            IrIndex index = InputIndex(out.dims, r);
            if (contiguous) index.linear = b_.CreateAdd(row_start, r, "", true, true);
            return index;
          };
          if (R > 0) {
            absl::Status status = e_.EmitIf(b_.CreateICmpSLT(first, e_.Int64(units)), [&] {
              return FoldStrided(first, stride, width, index_of);
            });
            if (!status.ok()) return status;
            if (warp_per_row) {
              status = WarpCombine(lane, valid_lanes);
            } else {
              // Lanes of warp w own units when 32w + lane < min(units, threads).
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
              const int64_t valid_warps = (std::min(units, threads) + kWarpSize - 1) / kWarpSize;
              status = e_.EmitIf(b_.CreateICmpEQ(warp, b_.getInt32(0)), [&]() -> absl::Status {
                absl::Status s = e_.EmitIf(
                    b_.CreateICmpULT(lane, b_.getInt32(valid_warps)), [&]() -> absl::Status {
                      std::vector<Partial> loaded = LoadPartialsFrom(shared, lane);
                      for (size_t h = 0; h < heroes_.size(); ++h)
                        StorePartial(heroes_[h], loaded[h]);
                      return absl::OkStatus();
                    });
                if (!s.ok()) return s;
                return WarpCombine(lane, b_.getInt32(static_cast<uint32_t>(valid_warps)));
              });
              if (!status.ok()) return status;
            }
            if (!status.ok()) return status;
          }
          llvm::Value* leader = b_.CreateICmpEQ(warp_per_row ? lane : tid, b_.getInt32(0));
          absl::Status status = e_.EmitIf(leader, [&]() -> absl::Status {
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

  absl::Status EmitColumnReduction() {
    EmittedGpuKernel& result = state_.result;
    result.strategy = "column-reduction";
    const int64_t R = reduced_count_;
    const int64_t tiles_per_block_row = (column_block_ + kWarpSize - 1) / kWarpSize;
    const int64_t tiles = (output_count_ / column_block_) * tiles_per_block_row;
    const int64_t warps = column_warps_;
    const int64_t blocks = GridBlocks(*state_.target, tiles, 1);
    result.launch.block[0] = kWarpSize;
    result.launch.block[1] = warps;
    result.launch.grid[0] = blocks;
    std::vector<std::vector<llvm::GlobalVariable*>> shared = SharedPartials(warps * kWarpSize);

    llvm::Value* lane = ReadSpecialRegister(b_, SpecialRegister::kThreadIdX);
    llvm::Value* row = ReadSpecialRegister(b_, SpecialRegister::kThreadIdY);
    llvm::Value* block = ToIndex(b_, ReadSpecialRegister(b_, SpecialRegister::kBlockIdX));
    llvm::Value* slot = b_.CreateAdd(b_.CreateMul(row, b_.getInt32(kWarpSize)), lane, "slot");
    const int64_t rows_folded = std::min(R, warps);

    return EmitStridedLoop(
        e_, "tile", block, e_.Int64(tiles), e_.Int64(blocks),
        [&](llvm::Value* tile) -> absl::Status {
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
          llvm::Value* first = ToIndex(b_, row);
          if (R > 0) {
            absl::Status status =
                e_.EmitIf(b_.CreateAnd(column_valid, b_.CreateICmpSLT(first, e_.Int64(R))),
                          [&]() -> absl::Status {
                            absl::Status s = FoldStrided(first, warps, 1, index_of);
                            if (!s.ok()) return s;
                            StorePartialTo(shared, slot);
                            return absl::OkStatus();
                          });
            if (!status.ok()) return status;
            EmitBarrier(b_);
          }
          llvm::Value* leader = b_.CreateAnd(b_.CreateICmpEQ(row, b_.getInt32(0)), column_valid);
          absl::Status status = e_.EmitIf(leader, [&]() -> absl::Status {
            if (R > 0) {
              // Row 0's partial is already in registers; fold rows 1.. in order.
              for (int64_t y = 1; y < rows_folded; ++y) {
                std::vector<Partial> loaded =
                    LoadPartialsFrom(shared, b_.CreateAdd(lane, b_.getInt32(y * kWarpSize)));
                for (size_t h = 0; h < heroes_.size(); ++h) {
                  absl::StatusOr<Partial> next =
                      Combine(heroes_[h], LoadPartial(heroes_[h]), loaded[h]);
                  if (!next.ok()) return next.status();
                  StorePartial(heroes_[h], *next);
                }
              }
            }
            absl::Status s = Finish(R > 0);
            if (!s.ok()) return s;
            IrIndex out;
            out.dims = kept;
            out.linear = b_.CreateAdd(b_.CreateMul(outer_linear, e_.Int64(column_block_)), column);
            return StoreOutputs(out);
          });
          if (!status.ok()) return status;
          if (R > 0) EmitBarrier(b_);
          return absl::OkStatus();
        });
  }

  GpuKernelState& state_;
  codegen::ElementalIrEmitter& e_;
  llvm::IRBuilder<>& b_;
  std::vector<Hero> heroes_;
  std::vector<int64_t> input_dims_, reduced_, output_dims_, reduced_sizes_;
  std::vector<int64_t> outer_kept_dims_, minor_kept_dims_;
  int64_t column_block_ = 1;
  int64_t reduced_count_ = 1;
  int64_t output_count_ = 1;
  int64_t shared_bytes_ = 0;
  int64_t column_warps_ = 8;
  std::vector<ElementGenerator> output_generators_;
};

}  // namespace

absl::StatusOr<bool> TryEmitReductionKernel(GpuKernelState& state) {
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
  GpuReductionEmitter emitter(state, finder.heroes());
  return emitter.Emit();
}

}  // namespace gpu
}  // namespace hloc
