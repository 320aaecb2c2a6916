// The store an update-in-place kernel makes (backend/common/
// kernel_variant.h), for every target's kernel emitters: for a computation
// whose root is a dynamic-update-slice of a parameter,
//   out[start + u] = update[u]   for each element u of the update,
// with the start indices clamped as dynamic-update-slice clamps them. The
// output buffer already holds the updated operand's bytes (the program
// builder copies them, or shares the buffer). Host and GPU kernels differ
// only in how they walk the update's elements.
#ifndef HLOC_BACKEND_LLVM_UPDATE_IN_PLACE_H_
#define HLOC_BACKEND_LLVM_UPDATE_IN_PLACE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "backend/llvm/elemental_ir_emitter.h"
#include "backend/llvm/fused_ir_emitter.h"
#include "hlo/computation.h"

namespace hloc {
namespace codegen {

class UpdateInPlaceStore {
 public:
  // Emits the clamped start indices at the builder's insertion point (once,
  // before the loop). Unimplemented for a computation that is not a
  // dynamic-update-slice of a parameter (UpdateInPlaceParameter).
  static absl::StatusOr<UpdateInPlaceStore> Prepare(const HloComputation& computation,
                                                    FusedIrEmitter& fused,
                                                    ElementalIrEmitter& elemental);

  // The update's dimensions: the index space to walk.
  const std::vector<int64_t>& update_dims() const { return *update_dims_; }
  int64_t items() const;
  // Stores update[index] at out[start + index].
  absl::Status Store(const IrIndex& index, llvm::Value* out) const;

 private:
  ElementalIrEmitter* elemental_ = nullptr;
  const Shape* shape_ = nullptr;  // The result's.
  const std::vector<int64_t>* update_dims_ = nullptr;
  ElementGenerator update_;
  std::vector<llvm::Value*> starts_;
};

}  // namespace codegen
}  // namespace hloc

#endif  // HLOC_BACKEND_LLVM_UPDATE_IN_PLACE_H_
