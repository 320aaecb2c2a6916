// LibraryOperandSlices: a gemm call whose product operand is a contiguous
// slice of a larger array, seen through reshapes and bitcasts that keep
// row-major order, reads that array instead, and the slice moves into the
// call's body:
//
//   before                                   after
//   w = f32[8,256,512] parameter(2)          w = f32[8,256,512] parameter(2)
//   s = f32[1,256,512] slice(w), [3:4]...    g = call(x, w), hloc.gemm
//   r = f32[256,512] reshape(s)                body: p1 = f32[8,256,512] parameter(1)
//   g = call(x, r), hloc.gemm                        s = slice(p1); r = reshape(s)
//                                                    dot(p0, r)
//
// A backend whose library reads such an operand at a byte offset of the
// array's buffer (the host's oneDNN matmul: onednn_library.cc) then copies
// nothing: JAX's per-expert weights w[e] in a mixture of experts are such
// slices (moe_top2 copied 8 MiB of expert weights a step into fresh
// buffers). The body computes exactly what the HLO did, so the interpreter
// and a backend that runs the call's body as kernels give the same results.
//
// Applies to composite calls of the gemm families (composite.name
// "hloc.gemm..." or "hloc.batched_gemm...") whose body parameter feeds the
// body's dot directly and nothing else; a slice is contiguous when
// ContiguousSliceStart (hlo/shape_util.h) says so, on a row-major array of
// static shape. The slice and reshapes stay in the caller for their other
// users (dead code elimination removes them otherwise). A body shared by
// several calls is cloned first. Running the pass again changes nothing.
#ifndef HLOC_PASSES_OUTLINING_LIBRARY_OPERAND_SLICES_H_
#define HLOC_PASSES_OUTLINING_LIBRARY_OPERAND_SLICES_H_

#include <cstdint>

#include "passes/pass.h"

namespace hloc {

class LibraryOperandSlices : public HloPass {
 public:
  static constexpr absl::string_view kPassName = "library-operand-slices";
  absl::string_view name() const override { return kPassName; }
  absl::StatusOr<bool> Run(HloModule& module) override;

  // Operands rewritten by the last Run.
  int64_t operands_moved() const { return operands_moved_; }

 private:
  int64_t operands_moved_ = 0;
};

}  // namespace hloc

#endif  // HLOC_PASSES_OUTLINING_LIBRARY_OPERAND_SLICES_H_
