// Helpers the linear-algebra expanders share for batches of matrices, the
// two minor dimensions of an array [b..., rows, columns].
#ifndef HLOC_PASSES_EXPANDERS_MATRIX_BATCH_H_
#define HLOC_PASSES_EXPANDERS_MATRIX_BATCH_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "hlo/instruction.h"
#include "hlo/linalg_custom_calls.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace expanders {

// OK when `call`, a linear-algebra custom call of `kind`
// (hlo/linalg_custom_calls.h), has the result shape its operands give;
// else an error naming the instruction.
absl::Status CheckLinalgCustomCall(const HloInstruction& call, LinalgCustomCall kind);

// The type the expansion computes in: f32 for f16/bf16, else `type`.
PrimitiveType LinalgComputeType(PrimitiveType type);

// True for a static real floating-point array of rank >= 2.
bool IsRealMatrixBatch(const Shape& shape);

// Complex-aware scalar helpers: the identity (or x * x) for real types, so
// one expansion serves f32/f64 and c64/c128.
// conj(x).
HloInstruction* Conjugate(ExpansionBuilder& b, HloInstruction* x);
// Re(x), of the real component type.
HloInstruction* RealPart(ExpansionBuilder& b, HloInstruction* x);
// Im(x) (zeros for real x), of the real component type.
HloInstruction* ImagPart(ExpansionBuilder& b, HloInstruction* x);
// |x|^2, of the real component type.
HloInstruction* AbsSquared(ExpansionBuilder& b, HloInstruction* x);

class MatrixBatch {
 public:
  // `dims` is [b..., rows, columns].
  explicit MatrixBatch(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int64_t batch_rank() const { return static_cast<int64_t>(dims_.size()) - 2; }
  int64_t rows() const { return dims_[dims_.size() - 2]; }
  int64_t columns() const { return dims_.back(); }
  const std::vector<int64_t>& dims() const { return dims_; }
  // [b..., extra...]
  std::vector<int64_t> BatchPlus(std::vector<int64_t> extra) const;
  // 0, 1, ..., batch_rank - 1.
  std::vector<int64_t> BatchDimensions() const;
  // The permutation swapping the two minor dimensions.
  std::vector<int64_t> SwapMinor() const;

  // x[..., row, :] of x [b..., rows, columns]: [b..., 1, columns].
  static HloInstruction* Row(ExpansionBuilder& b, HloInstruction* x, HloInstruction* row);
  // x[..., :, column]: [b..., rows, 1].
  static HloInstruction* Column(ExpansionBuilder& b, HloInstruction* x, HloInstruction* column);
  // x[..., row, column]: [b..., 1, 1].
  static HloInstruction* Element(ExpansionBuilder& b, HloInstruction* x, HloInstruction* row,
                                 HloInstruction* column);
  // x with [b..., r, c] `update` written at (row, column) of the minor dims.
  static HloInstruction* Update(ExpansionBuilder& b, HloInstruction* x, HloInstruction* update,
                                HloInstruction* row, HloInstruction* column);
  // Batched product of [b..., p, q] and [b..., q, r] (or [b..., q]).
  static HloInstruction* MatMul(ExpansionBuilder& b, HloInstruction* lhs, HloInstruction* rhs);
  // A per-matrix value x [b..., k] broadcast to [b..., dims...], its last
  // dimension becoming result dimension batch_rank + `at`.
  HloInstruction* Spread(ExpansionBuilder& b, HloInstruction* x, std::vector<int64_t> dims,
                         int64_t at) const;
  // A per-matrix scalar x [b...] broadcast to [b..., dims...].
  HloInstruction* SpreadScalar(ExpansionBuilder& b, HloInstruction* x,
                               std::vector<int64_t> dims) const;

 private:
  std::vector<int64_t> dims_;
};

}  // namespace expanders
}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_MATRIX_BATCH_H_
