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
// double and round once (see ElementalIrEmitter::SumsInDouble). The
// exception, vector rows:
//
//   vector rows: a row reduction whose heroes are all sums, maxima or minima
//     (one input each) over a last reduced dimension of at least
//     2 * kVectorRowWidth elements keeps one accumulator per hero and has LLVM
//     vectorize the row loop at kVectorRowWidth lanes with
//     kVectorRowInterleave vectors in flight (its cost model alone picks 2
//     lanes of double for converted f16, 4.8x slower on a [2048,1024] f16
//     row sum). Integer sums, maxima and minima are exact in any order.
//     Float sums (in double) are marked reassociable, so a result rarely
//     differs from the sequential order and then in its last bit.
//
//     The interpreter's float max is sequential from the init value: a NaN
//     accumulator stays, else a NaN element wins, else `acc < x ? x : acc`
//     (min mirrors it); so its result is the row's first NaN if it has one,
//     else the first element equal to the maximum. A vector row computes
//     instead, as integers, the max (min) of each element's ordered key
//     (its bits with the magnitude flipped when negative: signed integers
//     in the floats' order, NaNs past the infinities, -0 just below +0; the
//     map is its own inverse) and the max of the magnitudes (bits without
//     the sign), past infinity's exactly when the row holds a NaN. Both are
//     exact in any order, and f16/bf16 keys need no conversion. Values that
//     compare equal have the same bits except +0/-0, so the key result is
//     the interpreter's unless the row holds a NaN (which one came first?)
//     or the result is a zero (which zero came first?); such a row is
//     reduced again in the interpreter's order (rare, and exact). Speed on a
//     [2048,1024] row max at 1 thread (host_bench): f32 0.51 -> 0.12 ms, f16
//     18.5 -> 0.12 ms (an f32 row sum takes 0.15 ms). The interpreter's rule
//     as a vector select chain (what lane rows did before) is a long
//     dependency per vector that LLVM will not reorder, and in f16 its
//     compares stay in half, which x86 without AVX512-FP16 does element by
//     element; llvm.maximum reorders
//     (it propagates NaN and orders -0 < +0) but its x86 lowering is five
//     dependent instructions a step: 0.25 ms.
//
// f16/bf16 max/min results that are NaN come out as the interpreter's float
// -> f16/bf16 rounding makes them: f16 the quiet NaN 0x7e00 with the first
// NaN's sign, bf16 the first NaN's bits with the quiet bit 0x40 set.
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

// Vector width and vectors in flight of a vector row's loop (see the top).
constexpr int kVectorRowWidth = 8;
constexpr int kVectorRowInterleave = 4;

// How a hero's steps may be reordered in a vector row (see the top).
enum class RowStep {
  kOrdered,   // Not at all: no vector rows.
  kFloatSum,  // Reassociable, in double.
  kExact,     // Integer sum, max or min: exact in any order.
  kFloatMax,  // Max of ordered keys; a sequential pass for zero or NaN results.
  kFloatMin,  // Min of ordered keys, likewise.
};

RowStep ClassifyRowStep(const HloInstruction& reduce, bool wide) {
  if (reduce.operand_count() != 2) return RowStep::kOrdered;
  const PrimitiveType type = reduce.operand(0)->shape().element_type();
  const bool is_float = type == xla::F16 || type == xla::BF16 || type == xla::F32 || type == xla::F64;
  const bool is_int = type == xla::S8 || type == xla::S16 || type == xla::S32 || type == xla::S64 ||
                      type == xla::U8 || type == xla::U16 || type == xla::U32 || type == xla::U64;
  if (wide) return RowStep::kFloatSum;
  if (!is_float && !is_int) return RowStep::kOrdered;
  const HloComputation* reducer = reduce.to_apply();
  if (reducer == nullptr || reducer->num_parameters() != 2) return RowStep::kOrdered;
  const HloInstruction* root = reducer->root();
  if (root == nullptr || root->operand_count() != 2 || !root->shape().IsArray() ||
      root->shape().rank() != 0 || root->shape().element_type() != type) {
    return RowStep::kOrdered;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter ||
      a->parameter_number() == b->parameter_number()) {
    return RowStep::kOrdered;
  }
  switch (root->opcode()) {
    case HloOpcode::kAdd: return is_int ? RowStep::kExact : RowStep::kOrdered;
    case HloOpcode::kMaximum: return is_int ? RowStep::kExact : RowStep::kFloatMax;
    case HloOpcode::kMinimum: return is_int ? RowStep::kExact : RowStep::kFloatMin;
    default: return RowStep::kOrdered;
  }
}
// Accumulator bytes a column tile may use (per work item, on the stack).
constexpr int64_t kAccumulatorBytes = 32 * 1024;

using codegen::ReduceResultDims;

struct HeroState {
  const HloInstruction* reduce;
  int64_t arity;                            // Inputs (= inits = result leaves).
  bool wide = false;                        // A float sum accumulating in double.
  RowStep step = RowStep::kOrdered;
  bool float_max_min = false;               // step is kFloatMax or kFloatMin.
  // A vector row's float max/min accumulators (see the top): the max/min
  // of the ordered keys and the max of the magnitudes, as integers.
  llvm::AllocaInst* key_accumulator = nullptr;
  llvm::AllocaInst* magnitude_accumulator = nullptr;
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
      state.step = ClassifyRowStep(*hero, state.wide);
      state.float_max_min = state.step == RowStep::kFloatMax || state.step == RowStep::kFloatMin;
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
    if (!column && !reduced_.empty() && input_dims_[reduced_.back()] >= 2 * kVectorRowWidth) {
      vector_rows_ = std::all_of(heroes_.begin(), heroes_.end(),
                                 [](const HeroState& hero) { return hero.step != RowStep::kOrdered; });
    }

    absl::Status prepared = Prepare(column);
    if (!prepared.ok()) return prepared;
    int64_t outputs = 1;
    for (int64_t d : output_dims_) outputs *= d;
    if (outputs == 0) return std::make_optional(std::make_pair(int64_t{0}, "row-reduction"));
    if (!column) {
      absl::Status status = EmitRowReduction();
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
        if (vector_rows_ && hero.float_max_min) {
          llvm::Type* bits = b_.getIntNTy((*type)->getPrimitiveSizeInBits());
          hero.key_accumulator = e_.EntryAlloca(bits, "key_acc");
          hero.magnitude_accumulator = e_.EntryAlloca(bits, "magnitude_acc");
        }
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
  static PrimitiveType ElementType(const HeroState& hero) {
    return hero.reduce->operand(0)->shape().element_type();
  }

  // The hero's result leaf i from its accumulator.
  llvm::Value* ResultValue(const HeroState& hero, int64_t i) {
    llvm::Value* acc = LoadAccumulator(hero, i);
    if (hero.wide) return e_.NarrowSum(acc, ElementType(hero));
    if (hero.float_max_min) return InterpreterNan(acc, ElementType(hero));
    return acc;
  }

  // f16/bf16 bits with a NaN as the interpreter's rounding from float
  // leaves it (see the top); other types unchanged.
  llvm::Value* InterpreterNan(llvm::Value* bits, PrimitiveType type) {
    if (type != xla::F16 && type != xla::BF16) return bits;
    const bool f16 = type == xla::F16;
    llvm::Value* magnitude = b_.CreateAnd(bits, 0x7fff);
    llvm::Value* is_nan = b_.CreateICmpUGT(magnitude, b_.getInt16(f16 ? 0x7c00 : 0x7f80));
    llvm::Value* nan = f16 ? b_.CreateOr(b_.CreateAnd(bits, 0x8000), 0x7e00) : b_.CreateOr(bits, 0x40);
    return b_.CreateSelect(is_nan, nan, bits);
  }

  absl::Status InitAccumulators(const HeroState* only = nullptr) {
    const IrIndex scalar{{}, e_.Int64(0)};
    for (HeroState& hero : heroes_) {
      if (only != nullptr && &hero != only) continue;
      for (int64_t i = 0; i < hero.arity; ++i) {
        absl::StatusOr<llvm::Value*> init = hero.inits[i](scalar);
        if (!init.ok()) return init.status();
        llvm::Value* value = *init;
        if (hero.wide) value = e_.WidenForSum(value, ElementType(hero));
        b_.CreateStore(value, AccumulatorAddress(hero, i));
        if (hero.key_accumulator != nullptr) {
          llvm::Value* bits = Bits(value);
          b_.CreateStore(OrderedKey(bits), hero.key_accumulator);
          b_.CreateStore(Magnitude(bits), hero.magnitude_accumulator);
        }
      }
    }
    return absl::OkStatus();
  }

  // One step of every hero (or only `only`, in its interpreter's order and
  // without side outputs) at input index `input`.
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
        llvm::Value* x = e_.WidenForSum(args[1], ElementType(hero));
        llvm::Value* sum = b_.CreateFAdd(args[0], x);
        if (vector_rows_) llvm::cast<llvm::Instruction>(sum)->setHasAllowReassoc(true);
        b_.CreateStore(sum, AccumulatorAddress(hero, 0));
        continue;
      }
      if (hero.key_accumulator != nullptr && only == nullptr) {
        llvm::Value* bits = Bits(args[1]);
        llvm::AllocaInst* k = hero.key_accumulator;
        llvm::AllocaInst* m = hero.magnitude_accumulator;
        const llvm::Intrinsic::ID extreme =
            hero.step == RowStep::kFloatMax ? llvm::Intrinsic::smax : llvm::Intrinsic::smin;
        b_.CreateStore(b_.CreateBinaryIntrinsic(extreme, b_.CreateLoad(k->getAllocatedType(), k),
                                                OrderedKey(bits)),
                       k);
        b_.CreateStore(b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax,
                                                b_.CreateLoad(m->getAllocatedType(), m), Magnitude(bits)),
                       m);
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
          vector_rows_ ? kVectorRowWidth : 0, vector_rows_ ? kVectorRowInterleave : 0);
      if (!status.ok()) return status;
      for (HeroState& hero : heroes_) {
        if (hero.key_accumulator == nullptr) continue;
        status = FinishVectorMaxMin(hero, out);
        if (!status.ok()) return status;
      }
      return StoreOutputs(out);
    });
  }

  // A float's bits as an integer of its width.
  llvm::Value* Bits(llvm::Value* value) {
    if (value->getType()->isIntegerTy()) return value;
    return b_.CreateBitCast(value, b_.getIntNTy(value->getType()->getPrimitiveSizeInBits()));
  }
  llvm::Value* MagnitudeMask(llvm::Type* t) {
    return llvm::ConstantInt::get(t, llvm::APInt::getSignedMaxValue(t->getIntegerBitWidth()));
  }
  llvm::Value* Magnitude(llvm::Value* bits) { return b_.CreateAnd(bits, MagnitudeMask(bits->getType())); }
  // Float bits -> a signed integer ordered as the floats are (NaNs past the
  // infinities, -0 just below +0), and back: the map is its own inverse.
  llvm::Value* OrderedKey(llvm::Value* bits) {
    const unsigned width = bits->getType()->getIntegerBitWidth();
    llvm::Value* sign = b_.CreateAShr(bits, width - 1);
    return b_.CreateXor(bits, b_.CreateAnd(sign, MagnitudeMask(bits->getType())));
  }

  // A vector row's float max/min result into the hero's accumulator: the
  // key result, or for a zero or a row with a NaN the sequential one (see
  // the top).
  absl::Status FinishVectorMaxMin(HeroState& hero, const IrIndex& out) {
    llvm::AllocaInst* k = hero.key_accumulator;
    llvm::AllocaInst* m = hero.magnitude_accumulator;
    llvm::Value* bits = OrderedKey(b_.CreateLoad(k->getAllocatedType(), k));
    llvm::Value* magnitude = b_.CreateLoad(m->getAllocatedType(), m);
    llvm::Type* value_type = hero.types[0];
    b_.CreateStore(value_type->isIntegerTy() ? bits : b_.CreateBitCast(bits, value_type),
                   AccumulatorAddress(hero, 0));
    const PrimitiveType type = ElementType(hero);
    const uint64_t infinity = type == xla::F16    ? 0x7c00
                              : type == xla::BF16 ? 0x7f80
                              : type == xla::F32  ? 0x7f800000
                                                  : 0x7ff0000000000000;
    llvm::Value* has_nan = b_.CreateICmpUGT(magnitude, llvm::ConstantInt::get(magnitude->getType(), infinity));
    llvm::Value* is_zero = b_.CreateICmpEQ(Magnitude(bits), llvm::ConstantInt::get(bits->getType(), 0));
    HeroState* h = &hero;
    return e_.EmitIf(b_.CreateOr(has_nan, is_zero), [&]() -> absl::Status {
      absl::Status status = InitAccumulators(h);
      if (!status.ok()) return status;
      return e_.EmitLoopNest("sequential", ReducedSizes(), [&](const std::vector<llvm::Value*>& ivs) {
        return Accumulate(InputIndex(out.dims, ivs), h);
      });
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
  int64_t tile_ = 1;              // Column tile.
  bool vector_rows_ = false;      // A vector row reduction (see the top).
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
