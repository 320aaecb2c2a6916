// Generators for every instruction of a fused (or one-op) computation.
// Parameters read from buffers the kernel binds, constants become LLVM
// constants (scalars) or private global arrays, and everything else is built
// by the ElementalIrEmitter on its operands' generators, memoized so that a
// value used twice at the same index is computed once.
#ifndef HLOC_BACKEND_LLVM_FUSED_IR_EMITTER_H_
#define HLOC_BACKEND_LLVM_FUSED_IR_EMITTER_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "backend/llvm/array_leaves.h"
#include "backend/llvm/elemental_ir_emitter.h"
#include "hlo/computation.h"

namespace hloc {
namespace codegen {

class FusedIrEmitter {
 public:
  explicit FusedIrEmitter(ElementalIrEmitter* elemental) : elemental_(elemental) {}

  // Parameter `number` lives in `leaves` (one pointer per array leaf of its
  // shape, in leaf order: just one for an array parameter).
  void BindParameter(int64_t number, std::vector<llvm::Value*> leaves) {
    parameters_[number] = std::move(leaves);
  }
  // Makes `hlo` read through `generator` (a kernel that computes it some
  // other way, such as a reduction's accumulator). Must precede building
  // any generator that uses `hlo`.
  void OverrideGenerator(const HloInstruction& hlo, ElementGenerator generator) {
    generators_[&hlo] = std::move(generator);
  }
  // The generator of `hlo`, an instruction of the computation being emitted.
  absl::StatusOr<ElementGenerator> GetGenerator(const HloInstruction& hlo);

 private:
  absl::StatusOr<ElementGenerator> MakeGenerator(const HloInstruction& hlo);
  // The leaf pointer a chain of get-tuple-elements on a parameter names.
  absl::StatusOr<llvm::Value*> ParameterLeaf(const HloInstruction& hlo, const Shape** leaf_shape);

  ElementalIrEmitter* elemental_;
  absl::flat_hash_map<int64_t, std::vector<llvm::Value*>> parameters_;
  absl::flat_hash_map<const HloInstruction*, ElementGenerator> generators_;
};

}  // namespace codegen
}  // namespace hloc

#endif  // HLOC_BACKEND_LLVM_FUSED_IR_EMITTER_H_
