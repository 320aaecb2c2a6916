// Reduction kernels (see kernel_emitter.h).
//
// Applies when every output is a reduction "hero" or an elementwise
// epilogue over heroes evaluated at the output's own index, and all heroes
// reduce the same input dimensions over the same dimensions: then one loop
// nest over the reduced dimensions feeds every hero's accumulators, and the
// epilogue reads the accumulators where it would read the reduce.
//
//   row reduction (the input's last dimension is reduced): a work item is
//     one output element; its accumulators are scalars and the inner loop
//     walks the input's contiguous minor dimension.
//   column reduction (the input's last dimensions are kept): a work item is
//     a tile of adjacent outputs that differ only in those kept minor
//     dimensions; accumulators are arrays and the innermost loop runs over
//     the tile, reading contiguous input, so it vectorizes without
//     reordering any output's additions. The tile is as wide as the kept
//     minor block when its accumulators fit kAccumulatorBytes (else the
//     widest multiple of kTile that does): a narrow tile reads a few cache
//     lines of each input row and then jumps a whole row ahead, a new page
//     every row for rows of 4 KiB, which the hardware prefetcher does not
//     follow; a full-width tile streams the input row after row. (On
//     layer_norm_bwd_f16's [2048,1024] -> [1024] sums: 32 tiles of 32
//     columns 149 ms, 8 of 128 115 ms, one of 1024 64 ms at 1 thread.) The
//     price is fewer work items when few kept blocks lie outside the tile.
//
// Each output's accumulation order is row-major over the reduced indices in
// both cases, the same as the elemental reduce; float sums accumulate in
// double and round once (see ElementalIrEmitter::SumsInDouble). Two
// exceptions, sum rows and lane rows:
//
//   sum rows: a row reduction whose heroes are all sums (float sums in
//     double, or integer sums) over a last reduced dimension of at least
//     2 * kRowLanes elements keeps one accumulator per hero, marks float
//     additions reassociable, and has LLVM vectorize the row loop at
//     kSumRowWidth lanes with kSumRowInterleave vectors in flight (its cost
//     model alone picks 2 lanes of double for converted f16, 4.8x slower on
//     a [2048,1024] f16 row sum). Integer sums are exact in any order; float
//     sums are reordered as in lane rows below, in double, so a result
//     rarely differs from the sequential order and then in its last bit.
//
//   lane rows: a row reduction whose heroes are all sums, maxima or minima
//     (one input each), not all sums, over a last reduced dimension of at
//     least 2 * kRowLanes elements keeps kRowLanes partial accumulators per hero:
//     element i of a row goes to lane i % kRowLanes (the lane loop
//     vectorizes), the elements past the last whole group to lane 0, and
//     the lanes combine in order at the end of the row; lane 0 starts at the
//     init value, the others at the reducer's identity (-0 for sums, -inf /
//     +inf for float max / min, the type's extremes for integers). Integer
//     sums are exact in any order. Float sums (in double) are reordered:
//     results may differ from the sequential order in the last bit of the
//     rounded result. Float max/min are exact: values that compare equal are
//     the same bits except +0/-0, where the sequential order keeps the
//     first one seen, and NaN payloads; so a row whose lane result is a zero
//     or a NaN is reduced again sequentially (rare, and exact).
//
// Side outputs: an output that reads no reduce and has the heroes' input
// shape (the exp a softmax both stores and sums, after multi-output fusion)
// is stored inside the reduction loop, at each input element as the loop
// visits it. Work items partition the kept indices and the loop nest covers
// the reduced ones, so every element is stored exactly once, and the value
// the heroes consume at that index is computed once for both.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backend/host/kernel_emitter_internal.h"
#include "backend/llvm/reduction_heroes.h"
#include "hlo/primitive_type.h"

namespace hloc {
namespace host {
namespace {

using codegen::ElementGenerator;
using codegen::IrIndex;

constexpr int64_t kTile = 32;
// Partial accumulators per hero in a lane row reduction.
constexpr int64_t kRowLanes = 8;

// Vector width and vectors in flight of a sum row's loop (see the top).
constexpr int kSumRowWidth = 8;
constexpr int kSumRowInterleave = 4;

// Reducers whose lanes may be combined in another order (see the top).
enum class LaneReducer { kNone, kFloatSum, kIntSum, kMax, kMin };

LaneReducer ClassifyForLanes(const HloInstruction& reduce, bool wide) {
  if (reduce.operand_count() != 2) return LaneReducer::kNone;
  const PrimitiveType type = reduce.operand(0)->shape().element_type();
  const bool is_float = type == xla::F16 || type == xla::BF16 || type == xla::F32 || type == xla::F64;
  const bool is_int = type == xla::S8 || type == xla::S16 || type == xla::S32 || type == xla::S64 ||
                      type == xla::U8 || type == xla::U16 || type == xla::U32 || type == xla::U64;
  if (wide) return LaneReducer::kFloatSum;
  if (!is_float && !is_int) return LaneReducer::kNone;
  const HloComputation* reducer = reduce.to_apply();
  if (reducer == nullptr || reducer->num_parameters() != 2) return LaneReducer::kNone;
  const HloInstruction* root = reducer->root();
  if (root == nullptr || root->operand_count() != 2 || !root->shape().IsArray() ||
      root->shape().rank() != 0 || root->shape().element_type() != type) {
    return LaneReducer::kNone;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter ||
      a->parameter_number() == b->parameter_number()) {
    return LaneReducer::kNone;
  }
  switch (root->opcode()) {
    case HloOpcode::kAdd: return is_int ? LaneReducer::kIntSum : LaneReducer::kNone;
    case HloOpcode::kMaximum: return LaneReducer::kMax;
    case HloOpcode::kMinimum: return LaneReducer::kMin;
    default: return LaneReducer::kNone;
  }
}
// Accumulator bytes a column tile may use (per work item, on the stack).
constexpr int64_t kAccumulatorBytes = 32 * 1024;

using codegen::ReduceResultDims;

struct HeroState {
  const HloInstruction* reduce;
  int64_t arity;                            // Inputs (= inits = result leaves).
  bool wide = false;                        // A float sum accumulating in double.
  LaneReducer lanes = LaneReducer::kNone;
  std::vector<llvm::Type*> types;           // Per leaf.
  std::vector<llvm::AllocaInst*> accumulators;  // Per leaf: scalar or [tile x type].
  std::vector<ElementGenerator> inputs, inits;
};

class ReductionEmitter {
 public:
  ReductionEmitter(KernelState& state, std::vector<const HloInstruction*> heroes,
                   std::vector<bool> is_side_output)
      : state_(state), e_(*state.elemental), b_(*state.b),
        is_side_output_(std::move(is_side_output)) {
    for (const HloInstruction* hero : heroes) {
      HeroState state{hero, hero->operand_count() / 2};
      state.wide = codegen::ElementalIrEmitter::SumsInDouble(*hero);
      state.lanes = ClassifyForLanes(*hero, state.wide);
      heroes_.push_back(std::move(state));
    }
  }

  absl::StatusOr<std::optional<std::pair<int64_t, const char*>>> Emit() {
    const HloInstruction& first = *heroes_[0].reduce;
    input_dims_ = first.operand(0)->shape().dimensions();
    reduced_ = first.dimensions();
    std::sort(reduced_.begin(), reduced_.end());
    output_dims_ = ReduceResultDims(first);
    for (const HeroState& hero : heroes_) {
      std::vector<int64_t> dims = hero.reduce->dimensions();
      std::sort(dims.begin(), dims.end());
      if (hero.reduce->operand(0)->shape().dimensions() != input_dims_ || dims != reduced_) {
        return std::optional<std::pair<int64_t, const char*>>();
      }
    }
    for (size_t k = 0; k < state_.outputs.size(); ++k) {
      const std::vector<int64_t>& want = is_side_output_[k] ? input_dims_ : output_dims_;
      if (state_.outputs[k].shape->dimensions() != want) {
        return std::optional<std::pair<int64_t, const char*>>();
      }
    }
    // Kept input dimensions after the last reduced one form the column block.
    const int64_t last_reduced = reduced_.empty() ? -1 : reduced_.back();
    column_block_ = 1;
    for (int64_t d = 0; d < static_cast<int64_t>(input_dims_.size()); ++d) {
      const bool kept = !std::binary_search(reduced_.begin(), reduced_.end(), d);
      if (!kept) continue;
      if (d > last_reduced) {
        minor_kept_dims_.push_back(input_dims_[d]);
        column_block_ *= input_dims_[d];
      } else {
        outer_kept_dims_.push_back(input_dims_[d]);
      }
    }
    const bool column = column_block_ > 1 && last_reduced >= 0;
    tile_ = column ? ColumnTile() : 1;
    if (!column && !reduced_.empty() && input_dims_[reduced_.back()] >= 2 * kRowLanes) {
      // Sums only: sum rows; sums, maxima and minima: lane rows (see the top).
      bool all_sums = true, all_lanes = true;
      for (const HeroState& hero : heroes_) {
        all_sums &= hero.lanes == LaneReducer::kFloatSum || hero.lanes == LaneReducer::kIntSum;
        all_lanes &= hero.lanes != LaneReducer::kNone;
      }
      sum_rows_ = all_sums;
      row_lanes_ = all_lanes && !all_sums;
      if (row_lanes_) tile_ = kRowLanes;
    }

    absl::Status prepared = Prepare(column || row_lanes_);
    if (!prepared.ok()) return prepared;
    int64_t outputs = 1;
    for (int64_t d : output_dims_) outputs *= d;
    if (outputs == 0) return std::make_optional(std::make_pair(int64_t{0}, "row-reduction"));
    if (!column) {
      absl::Status status = row_lanes_ ? EmitLaneRowReduction() : EmitRowReduction();
      if (!status.ok()) return status;
      return std::make_optional(std::make_pair(outputs, "row-reduction"));
    }
    const int64_t tiles_per_block = (column_block_ + tile_ - 1) / tile_;
    const int64_t tiles = (outputs / column_block_) * tiles_per_block;
    absl::Status status = EmitColumnReduction(tiles_per_block);
    if (!status.ok()) return status;
    return std::make_optional(std::make_pair(tiles, "column-reduction"));
  }

 private:
  // Outputs per column tile: the whole kept minor block if every hero's
  // accumulators for it fit kAccumulatorBytes, else the widest multiple of
  // kTile that fits (at least kTile).
  int64_t ColumnTile() const {
    int64_t slot_bytes = 0;
    for (const HeroState& hero : heroes_) {
      for (int64_t i = 0; i < hero.arity; ++i) {
        slot_bytes += hero.wide ? 8 : std::max(1, ByteWidth(hero.reduce->operand(i)->shape().element_type()));
      }
    }
    const int64_t fits = kAccumulatorBytes / std::max<int64_t>(slot_bytes, 1);
    if (column_block_ <= fits) return column_block_;
    return std::min(column_block_, std::max(kTile, fits / kTile * kTile));
  }

  // Accumulator storage, the heroes' input generators, and generators that
  // make every hero read as its accumulator (at slot `slot_`).
  absl::Status Prepare(bool arrays) {
    for (HeroState& hero : heroes_) {
      for (int64_t i = 0; i < hero.arity; ++i) {
        absl::StatusOr<llvm::Type*> type = e_.ValueType(hero.reduce->operand(i)->shape().element_type());
        if (!type.ok()) return type.status();
        hero.types.push_back(hero.wide ? b_.getDoubleTy() : *type);
        llvm::Type* storage = arrays ? llvm::ArrayType::get(hero.types.back(), tile_) : hero.types.back();
        hero.accumulators.push_back(e_.EntryAlloca(storage, "acc"));
        absl::StatusOr<ElementGenerator> input = state_.fused->GetGenerator(*hero.reduce->operand(i));
        if (!input.ok()) return input.status();
        hero.inputs.push_back(*std::move(input));
        absl::StatusOr<ElementGenerator> init =
            state_.fused->GetGenerator(*hero.reduce->operand(hero.arity + i));
        if (!init.ok()) return init.status();
        hero.inits.push_back(*std::move(init));
      }
    }
    for (HeroState& hero : heroes_) {
      HeroState* h = &hero;
      state_.fused->OverrideGenerator(
          *hero.reduce, [this, h](const IrIndex&) -> absl::StatusOr<llvm::Value*> {
            std::vector<llvm::Value*> values;
            for (int64_t i = 0; i < h->arity; ++i) values.push_back(ResultValue(*h, i));
            if (!h->reduce->shape().IsTuple()) return values[0];
            absl::StatusOr<llvm::Type*> type = e_.ShapeValueType(h->reduce->shape());
            if (!type.ok()) return type.status();
            llvm::Value* result = llvm::UndefValue::get(*type);
            for (int64_t i = 0; i < h->arity; ++i) {
              result = b_.CreateInsertValue(result, values[i], {static_cast<unsigned>(i)});
            }
            return result;
          });
    }
    for (const KernelOutput& output : state_.outputs) {
      absl::StatusOr<ElementGenerator> g = OutputGenerator(state_, output);
      if (!g.ok()) return g.status();
      output_generators_.push_back(*std::move(g));
    }
    return absl::OkStatus();
  }

  llvm::Value* AccumulatorAddress(const HeroState& hero, int64_t i) {
    llvm::AllocaInst* a = hero.accumulators[i];
    if (slot_ == nullptr) return a;
    return b_.CreateInBoundsGEP(a->getAllocatedType(), a, {e_.Int64(0), slot_});
  }
  llvm::Value* LoadAccumulator(const HeroState& hero, int64_t i) {
    return b_.CreateLoad(hero.types[i], AccumulatorAddress(hero, i));
  }
  // The hero's result leaf i from its accumulator.
  llvm::Value* ResultValue(const HeroState& hero, int64_t i) {
    llvm::Value* acc = LoadAccumulator(hero, i);
    if (!hero.wide) return acc;
    return e_.NarrowSum(acc, hero.reduce->operand(0)->shape().element_type());
  }

  absl::Status InitAccumulators(const HeroState* only = nullptr) {
    const IrIndex scalar{{}, e_.Int64(0)};
    for (HeroState& hero : heroes_) {
      if (only != nullptr && &hero != only) continue;
      for (int64_t i = 0; i < hero.arity; ++i) {
        absl::StatusOr<llvm::Value*> init = hero.inits[i](scalar);
        if (!init.ok()) return init.status();
        llvm::Value* value = *init;
        if (hero.wide) value = e_.WidenForSum(value, hero.reduce->operand(0)->shape().element_type());
        b_.CreateStore(value, AccumulatorAddress(hero, i));
      }
    }
    return absl::OkStatus();
  }

  // One step of every hero (or only `only`, without side outputs) at input
  // index `input`.
  absl::Status Accumulate(const IrIndex& input, const HeroState* only = nullptr) {
    for (HeroState& hero : heroes_) {
      if (only != nullptr && &hero != only) continue;
      std::vector<llvm::Value*> args;
      for (int64_t i = 0; i < hero.arity; ++i) args.push_back(LoadAccumulator(hero, i));
      for (int64_t i = 0; i < hero.arity; ++i) {
        absl::StatusOr<llvm::Value*> v = hero.inputs[i](input);
        if (!v.ok()) return v.status();
        args.push_back(*v);
      }
      if (hero.wide) {
        llvm::Value* x = e_.WidenForSum(args[1], hero.reduce->operand(0)->shape().element_type());
        llvm::Value* sum = b_.CreateFAdd(args[0], x);
        if (sum_rows_) llvm::cast<llvm::Instruction>(sum)->setHasAllowReassoc(true);
        b_.CreateStore(sum, AccumulatorAddress(hero, 0));
        continue;
      }
      absl::StatusOr<std::vector<llvm::Value*>> next =
          e_.EmitScalarComputation(*hero.reduce->to_apply(), args);
      if (!next.ok()) return next.status();
      if (static_cast<int64_t>(next->size()) != hero.arity) {
        return absl::InvalidArgumentError(absl::StrCat("reducer of %", hero.reduce->name(),
                                                       " returns the wrong arity"));
      }
      for (int64_t i = 0; i < hero.arity; ++i) b_.CreateStore((*next)[i], AccumulatorAddress(hero, i));
    }
    for (size_t k = 0; k < state_.outputs.size() && only == nullptr; ++k) {
      if (!is_side_output_[k]) continue;
      absl::StatusOr<llvm::Value*> value = output_generators_[k](input);
      if (!value.ok()) return value.status();
      absl::Status stored =
          e_.EmitArrayStore(state_.outputs[k].buffer, *state_.outputs[k].shape, input, *value);
      if (!stored.ok()) return stored;
    }
    return absl::OkStatus();
  }

  absl::Status StoreOutputs(const IrIndex& index) {
    for (size_t k = 0; k < state_.outputs.size(); ++k) {
      if (is_side_output_[k]) continue;
      absl::StatusOr<llvm::Value*> value = output_generators_[k](index);
      if (!value.ok()) return value.status();
      absl::Status stored =
          e_.EmitArrayStore(state_.outputs[k].buffer, *state_.outputs[k].shape, index, *value);
      if (!stored.ok()) return stored;
    }
    return absl::OkStatus();
  }

  // The input index of output `kept` (indices of kept dims in order) and
  // reduced indices `ivs`.
  IrIndex InputIndex(const std::vector<llvm::Value*>& kept, const std::vector<llvm::Value*>& ivs) {
    IrIndex input;
    size_t k = 0, r = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(input_dims_.size()); ++d) {
      if (r < reduced_.size() && reduced_[r] == d) {
        input.dims.push_back(ivs[r++]);
      } else {
        input.dims.push_back(kept[k++]);
      }
    }
    return input;
  }

  std::vector<int64_t> ReducedSizes() const {
    std::vector<int64_t> sizes;
    for (int64_t d : reduced_) sizes.push_back(input_dims_[d]);
    return sizes;
  }

  absl::Status EmitRowReduction() {
    return e_.EmitLoop("output", state_.begin, state_.end, [&](llvm::Value* o) -> absl::Status {
      IrIndex out = e_.Delinearize(o, output_dims_);
      absl::Status status = InitAccumulators();
      if (!status.ok()) return status;
      status = e_.EmitLoopNest(
          "reduce", ReducedSizes(),
          [&](const std::vector<llvm::Value*>& ivs) {
            return Accumulate(InputIndex(out.dims, ivs));
          },
          sum_rows_ ? kSumRowWidth : 0, sum_rows_ ? kSumRowInterleave : 0);
      if (!status.ok()) return status;
      return StoreOutputs(out);
    });
  }

  // The reducer's identity in the accumulator's type (see the top).
  llvm::Value* LaneIdentity(const HeroState& hero) {
    llvm::Type* t = hero.types[0];
    const PrimitiveType type = hero.reduce->operand(0)->shape().element_type();
    const bool is_max = hero.lanes == LaneReducer::kMax;
    switch (hero.lanes) {
      case LaneReducer::kFloatSum: return llvm::ConstantFP::get(t, -0.0);
      case LaneReducer::kIntSum: return llvm::ConstantInt::get(t, 0);
      default: break;
    }
    if (t->isFloatingPointTy()) return llvm::ConstantFP::getInfinity(t, /*Negative=*/is_max);
    const unsigned bits = t->getIntegerBitWidth();
    if (type == xla::F16) return llvm::ConstantInt::get(t, is_max ? 0xFC00 : 0x7C00);
    if (type == xla::BF16) return llvm::ConstantInt::get(t, is_max ? 0xFF80 : 0x7F80);
    if (IsSignedInteger(type)) {
      return llvm::ConstantInt::get(t, is_max ? llvm::APInt::getSignedMinValue(bits)
                                              : llvm::APInt::getSignedMaxValue(bits));
    }
    return llvm::ConstantInt::get(t, is_max ? llvm::APInt::getMinValue(bits)
                                            : llvm::APInt::getMaxValue(bits));
  }

  // a (+) b with the hero's reducer.
  absl::StatusOr<llvm::Value*> Combine(HeroState& hero, llvm::Value* a, llvm::Value* b) {
    if (hero.wide) return b_.CreateFAdd(a, b);
    absl::StatusOr<std::vector<llvm::Value*>> next =
        e_.EmitScalarComputation(*hero.reduce->to_apply(), {a, b});
    if (!next.ok()) return next.status();
    if (next->size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("reducer of %", hero.reduce->name(),
                                                     " returns the wrong arity"));
    }
    return (*next)[0];
  }

  // True when a float max/min result is +-0 or NaN (its lanes' order matters).
  llvm::Value* NeedsSequentialOrder(const HeroState& hero, llvm::Value* value) {
    const PrimitiveType type = hero.reduce->operand(0)->shape().element_type();
    if (hero.lanes != LaneReducer::kMax && hero.lanes != LaneReducer::kMin) return nullptr;
    if (!IsFloatingPoint(type)) return nullptr;
    llvm::Value* x = e_.ToCompute(value, type);
    return b_.CreateFCmpUEQ(x, llvm::ConstantFP::get(x->getType(), 0.0));
  }

  absl::Status EmitLaneRowReduction() {
    const int64_t row = input_dims_[reduced_.back()];
    const int64_t groups = row / kRowLanes;
    std::vector<int64_t> outer = ReducedSizes();
    outer.pop_back();
    return e_.EmitLoop("output", state_.begin, state_.end, [&](llvm::Value* o) -> absl::Status {
      IrIndex out = e_.Delinearize(o, output_dims_);
      for (HeroState& hero : heroes_) {
        for (int64_t lane = 1; lane < kRowLanes; ++lane) {
          slot_ = e_.Int64(lane);
          b_.CreateStore(LaneIdentity(hero), AccumulatorAddress(hero, 0));
        }
      }
      slot_ = e_.Int64(0);
      absl::Status status = InitAccumulators();
      if (!status.ok()) return status;
      auto at = [&](const std::vector<llvm::Value*>& outer_ivs, llvm::Value* i) {
        std::vector<llvm::Value*> ivs = outer_ivs;
        ivs.push_back(i);
        return InputIndex(out.dims, ivs);
      };
      status = e_.EmitLoopNest("reduce", outer, [&](const std::vector<llvm::Value*>& outer_ivs) {
        absl::Status s = e_.EmitLoop("group", e_.Int64(0), e_.Int64(groups), [&](llvm::Value* g) {
          llvm::Value* first = b_.CreateMul(g, e_.Int64(kRowLanes));
          return e_.EmitLoop(
              "lane", e_.Int64(0), e_.Int64(kRowLanes),
              [&](llvm::Value* lane) {
                slot_ = lane;
                absl::Status a = Accumulate(at(outer_ivs, b_.CreateAdd(first, lane)));
                slot_ = nullptr;
                return a;
              },
              /*vectorize=*/true);
        });
        if (!s.ok()) return s;
        return e_.EmitLoop("tail", e_.Int64(groups * kRowLanes), e_.Int64(row), [&](llvm::Value* i) {
          slot_ = e_.Int64(0);
          absl::Status a = Accumulate(at(outer_ivs, i));
          slot_ = nullptr;
          return a;
        });
      });
      if (!status.ok()) return status;
      // Lanes in order into lane 0; rows whose max/min order matters again.
      for (HeroState& hero : heroes_) {
        slot_ = e_.Int64(0);
        llvm::Value* acc = LoadAccumulator(hero, 0);
        for (int64_t lane = 1; lane < kRowLanes; ++lane) {
          slot_ = e_.Int64(lane);
          absl::StatusOr<llvm::Value*> next = Combine(hero, acc, LoadAccumulator(hero, 0));
          if (!next.ok()) return next.status();
          acc = *next;
        }
        slot_ = e_.Int64(0);
        b_.CreateStore(acc, AccumulatorAddress(hero, 0));
        llvm::Value* again = NeedsSequentialOrder(hero, acc);
        if (again == nullptr) continue;
        HeroState* h = &hero;
        status = e_.EmitIf(again, [&]() -> absl::Status {
          slot_ = e_.Int64(0);
          absl::Status s = InitAccumulators(h);
          if (!s.ok()) return s;
          s = e_.EmitLoopNest("sequential", ReducedSizes(),
                              [&](const std::vector<llvm::Value*>& ivs) {
                                slot_ = e_.Int64(0);
                                return Accumulate(InputIndex(out.dims, ivs), h);
                              });
          return s;
        });
        if (!status.ok()) return status;
      }
      slot_ = e_.Int64(0);
      status = StoreOutputs(out);
      slot_ = nullptr;
      return status;
    });
  }

  absl::Status EmitColumnReduction(int64_t tiles_per_block) {
    return e_.EmitLoop("tile", state_.begin, state_.end, [&](llvm::Value* tile) -> absl::Status {
      llvm::Value* block = b_.CreateUDiv(tile, e_.Int64(tiles_per_block));
      llvm::Value* start = b_.CreateMul(b_.CreateURem(tile, e_.Int64(tiles_per_block)), e_.Int64(tile_));
      llvm::Value* remaining = b_.CreateSub(e_.Int64(column_block_), start);
      llvm::Value* count = b_.CreateSelect(b_.CreateICmpSLT(remaining, e_.Int64(tile_)), remaining,
                                           e_.Int64(tile_));
      IrIndex outer = e_.Delinearize(block, outer_kept_dims_);
      llvm::Value* first_output = b_.CreateAdd(b_.CreateMul(block, e_.Int64(column_block_)), start);
      // Output index of tile slot j: outer kept dims, then the minor block.
      auto output_index = [&](llvm::Value* j) {
        IrIndex minor = e_.Delinearize(b_.CreateAdd(start, j), minor_kept_dims_);
        IrIndex index;
        index.dims = outer.dims;
        index.dims.insert(index.dims.end(), minor.dims.begin(), minor.dims.end());
        index.linear = b_.CreateAdd(first_output, j);
        return index;
      };
      absl::Status status = e_.EmitLoop("init", e_.Int64(0), count, [&](llvm::Value* j) {
        slot_ = j;
        absl::Status s = InitAccumulators();
        slot_ = nullptr;
        return s;
      });
      if (!status.ok()) return status;
      status = e_.EmitLoopNest("reduce", ReducedSizes(), [&](const std::vector<llvm::Value*>& ivs) {
        return e_.EmitLoop(
            "column", e_.Int64(0), count,
            [&](llvm::Value* j) {
              slot_ = j;
              absl::Status s = Accumulate(InputIndex(output_index(j).dims, ivs));
              slot_ = nullptr;
              return s;
            },
            /*vectorize=*/true);
      });
      if (!status.ok()) return status;
      return e_.EmitLoop("epilogue", e_.Int64(0), count, [&](llvm::Value* j) {
        slot_ = j;
        absl::Status s = StoreOutputs(output_index(j));
        slot_ = nullptr;
        return s;
      });
    });
  }

  KernelState& state_;
  codegen::ElementalIrEmitter& e_;
  llvm::IRBuilder<>& b_;
  std::vector<HeroState> heroes_;
  std::vector<int64_t> input_dims_, reduced_, output_dims_;
  std::vector<int64_t> outer_kept_dims_, minor_kept_dims_;
  int64_t column_block_ = 1;
  int64_t tile_ = 1;              // Column tile, or kRowLanes for lane rows.
  bool row_lanes_ = false;        // A lane row reduction (see the top).
  bool sum_rows_ = false;         // A sum row reduction (see the top).
  llvm::Value* slot_ = nullptr;   // Tile slot or lane the accumulators are read at.
  std::vector<bool> is_side_output_;  // Per output: stored in the reduction loop.
  std::vector<ElementGenerator> output_generators_;
};


// Whether `hlo` is a reshape or bitcast that only inserts or removes
// dimensions of size 1 between row-major (or layout-free) arrays of one
// element type: its elements sit at the same linear offsets as its
// operand's, so a kernel may store the operand's value at the operand's
// index into the reshape's buffer.
bool IsDegenerateRowMajorReshape(const HloInstruction& hlo) {
  if ((hlo.opcode() != HloOpcode::kReshape && hlo.opcode() != HloOpcode::kBitcast) ||
      hlo.operand_count() != 1) {
    return false;
  }
  const Shape& out = hlo.shape();
  const Shape& in = hlo.operand(0)->shape();
  if (!out.IsArray() || !in.IsArray() || out.element_type() != in.element_type()) return false;
  auto row_major = [](const Shape& shape) {
    return !shape.has_layout() || shape.layout() == Layout::RowMajor(shape.rank());
  };
  auto non_unit = [](const Shape& shape) {
    std::vector<int64_t> dims;
    for (int64_t d : shape.dimensions()) {
      if (d != 1) dims.push_back(d);
    }
    return dims;
  };
  return row_major(out) && row_major(in) && non_unit(out) == non_unit(in);
}

}  // namespace

absl::StatusOr<std::optional<std::pair<int64_t, const char*>>> TryEmitReductionKernel(
    KernelState& state) {
  if (state.outputs.empty()) return std::optional<std::pair<int64_t, const char*>>();
  // An output that is a reduce seen through a size-1 reshape (JAX's
  // keepdims: f32[512] -> f32[1,512]) is stored as the reduce itself: same
  // bytes, and the reduce's index space is the one the heroes share.
  const std::vector<codegen::KernelOutput> original_outputs = state.outputs;
  codegen::ReductionHeroFinder finder;
  for (codegen::KernelOutput& output : state.outputs) {
    const HloInstruction* producer = output.producer;
    if (output.struct_field.has_value() || !IsDegenerateRowMajorReshape(*producer) ||
        !finder.ContainsReduce(producer->operand(0))) {
      continue;
    }
    output.producer = producer->operand(0);
    output.shape = &producer->operand(0)->shape();
  }
  auto decline = [&] {
    state.outputs = original_outputs;
    return std::optional<std::pair<int64_t, const char*>>();
  };
  // The reduction's output dimensions: those of the first output that reads
  // a reduce. Outputs of other dimensions reading no reduce are candidate
  // side outputs (the emitter checks they have the heroes' input shape).
  const std::vector<int64_t>* dims = nullptr;
  for (const KernelOutput& output : state.outputs) {
    if (finder.ContainsReduce(output.producer)) {
      dims = &output.shape->dimensions();
      break;
    }
  }
  if (dims == nullptr) return decline();
  std::vector<bool> is_side_output;
  for (const KernelOutput& output : state.outputs) {
    const bool side = output.shape->dimensions() != *dims && !finder.ContainsReduce(output.producer);
    is_side_output.push_back(side);
    if (!side && !finder.Collect(output.producer, *dims)) return decline();
  }
  if (finder.heroes().empty()) return decline();
  // Heroes that feed each other cannot share one pass.
  for (const HloInstruction* hero : finder.heroes()) {
    for (const HloInstruction* operand : hero->operands()) {
      if (finder.ContainsReduce(operand)) return decline();
    }
  }
  ReductionEmitter emitter(state, finder.heroes(), std::move(is_side_output));
  absl::StatusOr<std::optional<std::pair<int64_t, const char*>>> emitted = emitter.Emit();
  if (emitted.ok() && !emitted->has_value()) return decline();
  return emitted;
}

}  // namespace host
}  // namespace hloc
