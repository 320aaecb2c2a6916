// Internal to the reduction kernel emitters: GpuReductionEmitter, which
// emits row and column reductions (reduction_kernel_emitter.cc) and the two
// phases of a split reduction, its plan and its combine kernel
// (split_reduction_kernel_emitter.cc). Not part of any public interface.
#ifndef HLOC_BACKEND_GPU_REDUCTION_EMITTER_INTERNAL_H_
#define HLOC_BACKEND_GPU_REDUCTION_EMITTER_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backend/gpu/gpu_kernel_emitter.h"
#include "hlo/instruction.h"

namespace hloc {
namespace gpu {
namespace reduction_internal {

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

// Split plans: the smallest number of input elements a block's chunk covers
// per thread (row) or rows per warp (column), so that the extra kernel and
// the partials' traffic stay small next to the reading.
constexpr int64_t kSplitMinStepsPerThread = 4;
constexpr int64_t kSplitMinRowsPerWarp = 8;
constexpr int64_t kSplitRowThreads = 512;
// Nor below this many input elements per block of the unsplit kernel: its
// blocks finish within about a kernel launch anyway.
constexpr int64_t kSplitMinElementsPerBlock = 1 << 16;

class GpuReductionEmitter {
 public:
  GpuReductionEmitter(GpuKernelState& state, const std::vector<const HloInstruction*>& heroes,
                      ReductionPhase phase, llvm::Value* scratch)
      : state_(state), e_(*state.elemental), b_(*state.b), phase_(phase), scratch_(scratch) {
    for (const HloInstruction* reduce : heroes) {
      Hero hero;
      hero.reduce = reduce;
      hero.arity = reduce->operand_count() / 2;
      hero.wide = codegen::ElementalIrEmitter::SumsInDouble(*reduce);
      hero.element_type = reduce->operand(0)->shape().element_type();
      heroes_.push_back(std::move(hero));
    }
  }

  absl::StatusOr<bool> Emit();

 private:
  // A partial result: per hero, one value per leaf.
  using Partial = std::vector<llvm::Value*>;

  // ---- Shared by every phase (reduction_kernel_emitter.cc).
  absl::Status Prepare();
  int64_t RowWidth(int64_t stride, bool* contiguous) const;
  absl::StatusOr<Partial> ReadInput(Hero& hero, const IrIndex& index);
  absl::StatusOr<Partial> Combine(Hero& hero, const Partial& a, const Partial& b);
  Partial LoadPartial(const Hero& hero);
  void StorePartial(const Hero& hero, const Partial& values);
  absl::Status FoldStrided(llvm::Value* begin, int64_t step, int64_t width, llvm::Value* end,
                           const std::function<IrIndex(llvm::Value*)>& index_of);
  absl::Status WarpCombine(llvm::Value* lane, llvm::Value* valid);
  absl::Status Finish(bool any);
  absl::Status StoreOutputs(const IrIndex& index);
  IrIndex InputIndex(const std::vector<llvm::Value*>& kept, llvm::Value* r);
  std::vector<std::vector<llvm::GlobalVariable*>> SharedPartials(int64_t count);
  llvm::Value* SharedSlot(llvm::GlobalVariable* array, llvm::Value* slot);
  void StorePartialTo(const std::vector<std::vector<llvm::GlobalVariable*>>& shared,
                      llvm::Value* slot);
  std::vector<Partial> LoadPartialsFrom(
      const std::vector<std::vector<llvm::GlobalVariable*>>& shared, llvm::Value* slot);
  absl::Status EmitRowReduction();
  absl::Status EmitColumnReduction();

  // ---- Split reductions (split_reduction_kernel_emitter.cc).
  bool PlanSplit();
  llvm::Value* ScratchSlot(size_t h, int64_t i, llvm::Value* slot);
  void StorePartialsToScratch(llvm::Value* slot);
  std::vector<Partial> LoadPartialsFromScratch(llvm::Value* slot);
  std::pair<llvm::Value*, llvm::Value*> SplitWork(llvm::Value* w);
  absl::Status EmitCombine();

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
  const ReductionPhase phase_;
  llvm::Value* scratch_;  // The scratch argument (split phases).
  // Split plan (PlanSplit): chunks per output, and the units (row) or rows
  // (column) of every chunk but the last.
  int64_t chunks_ = 1;
  int64_t chunk_units_ = 0;
  std::vector<std::vector<int64_t>> scratch_offsets_;  // Per hero leaf.
};

}  // namespace reduction_internal
}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_REDUCTION_EMITTER_INTERNAL_H_
