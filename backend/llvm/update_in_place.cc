// The update-in-place store (see update_in_place.h).
#include "backend/llvm/update_in_place.h"

#include "absl/strings/str_cat.h"
#include "backend/common/kernel_variant.h"

namespace hloc {
namespace codegen {

absl::StatusOr<UpdateInPlaceStore> UpdateInPlaceStore::Prepare(const HloComputation& computation,
                                                               FusedIrEmitter& fused,
                                                               ElementalIrEmitter& e) {
  if (backend::UpdateInPlaceParameter(computation) < 0) {
    return absl::UnimplementedError(absl::StrCat("computation ", computation.name(),
                                                 " is not a dynamic-update-slice of a parameter"));
  }
  const HloInstruction& root = *computation.root();
  llvm::IRBuilder<>& b = *e.builder();
  UpdateInPlaceStore store;
  store.elemental_ = &e;
  store.shape_ = &root.shape();
  const HloInstruction& update = *root.operand(1);
  store.update_dims_ = &update.shape().dimensions();
  const std::vector<int64_t>& sizes = update.shape().dimensions();
  const int64_t rank = root.shape().rank();
  const bool vector_form = root.operand_count() == 3 && root.operand(2)->shape().rank() == 1;
  if (static_cast<int64_t>(sizes.size()) != rank ||
      (!vector_form && root.operand_count() != 2 + rank)) {
    return absl::InvalidArgumentError(absl::StrCat("%", root.name(), ": start indices"));
  }
  for (int64_t d = 0; d < rank; ++d) {
    const HloInstruction& start = *root.operand(vector_form ? 2 : 2 + d);
    const PrimitiveType type = start.shape().element_type();
    if (!IsInteger(type) || sizes[d] > root.shape().dimensions(d)) {
      return absl::InvalidArgumentError(absl::StrCat("%", root.name(), ": start index ", d));
    }
    absl::StatusOr<ElementGenerator> g = fused.GetGenerator(start);
    if (!g.ok()) return g.status();
    absl::StatusOr<llvm::Value*> v =
        (*g)(vector_form ? IrIndex{{e.Int64(d)}, e.Int64(d)} : IrIndex{{}, e.Int64(0)});
    if (!v.ok()) return v.status();
    llvm::Value* s = IsSignedInteger(type) ? b.CreateSExtOrTrunc(*v, b.getInt64Ty())
                                           : b.CreateZExtOrTrunc(*v, b.getInt64Ty());
    llvm::Value* hi = e.Int64(root.shape().dimensions(d) - sizes[d]);
    s = b.CreateSelect(b.CreateICmpSLT(s, e.Int64(0)), e.Int64(0), s);
    store.starts_.push_back(b.CreateSelect(b.CreateICmpSGT(s, hi), hi, s));
  }
  absl::StatusOr<ElementGenerator> values = fused.GetGenerator(update);
  if (!values.ok()) return values.status();
  store.update_ = *std::move(values);
  return store;
}

int64_t UpdateInPlaceStore::items() const {
  int64_t n = 1;
  for (int64_t d : *update_dims_) n *= d;
  return n;
}

absl::Status UpdateInPlaceStore::Store(const IrIndex& index, llvm::Value* out) const {
  absl::StatusOr<llvm::Value*> value = update_(index);
  if (!value.ok()) return value.status();
  llvm::IRBuilder<>& b = *elemental_->builder();
  IrIndex target;
  for (size_t d = 0; d < starts_.size(); ++d) {
    target.dims.push_back(b.CreateAdd(index.dims[d], starts_[d], "", true, true));
  }
  return elemental_->EmitArrayStore(out, *shape_, target, *value);
}

}  // namespace codegen
}  // namespace hloc
