// VectorDotsAsMatrixDots: a float dot one of whose operands has no free
// dimension (a vector times a matrix, a matrix times a vector, batched or
// not) is not a gemm to the library patterns, so it stayed a generated
// elemental dot, fused with its epilogue: one scalar sum per output element,
// reading the matrix across its rows. This pass gives such an operand a free
// dimension of size 1 (a reshape, which moves no data) and reshapes the
// result back, so that outlining makes it a gemm library call (M = 1 or
// N = 1), as an RNN step's h @ W becomes.
//
//   lhs [b..., K] (no free dim)  ->  reshape to [b..., 1, K]
//   rhs [b..., K] (no free dim)  ->  reshape to [b..., K, 1]
//   dot result [b..., M..., N...] ->  the unit dims removed by a reshape
//
// Only f32 and f64 dots with leading batch dimensions on both sides, one
// contracting dimension each and at least one free dimension in all (a
// vector . vector product stays a reduction), and only from kMinMultiplies
// multiply-adds up: below that, the fused elemental loop costs less than a
// library call.
#ifndef HLOC_BACKEND_HOST_MATRIX_DOTS_H_
#define HLOC_BACKEND_HOST_MATRIX_DOTS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "passes/pass.h"

namespace hloc {
namespace host {

class VectorDotsAsMatrixDots : public HloPass {
 public:
  static constexpr int64_t kMinMultiplies = 16384;
  absl::string_view name() const override { return "vector-dots-as-matrix-dots"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_MATRIX_DOTS_H_
