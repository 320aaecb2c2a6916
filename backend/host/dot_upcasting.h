// UpcastDotsForHostGemm: dots whose element types the host's gemm libraries
// cannot multiply fast become f32 dots between converts, so they reach
// oneDNN's f32 matmul (or the blocked f32 GEMM) instead of the generated
// elemental dot (one scalar multiply-add loop per output element):
//
//   bf16/f16 x bf16/f16 -> T          convert<T>(dot<f32>(convert a, convert b))
//   s8 x s8 -> s32, K <= 1024         convert<s32>(dot<f32>(convert a, convert b))
//
// The operand converts fuse into their producers and the result convert into
// its consumers (fusion runs later), so no extra pass over memory remains
// when the producers are elementwise.
//
// Exactness: bf16/f16 dots are defined with f32 accumulation here as in the
// interpreter, and rounding the f32 sum to T is what a bf16 dot does. An s8
// dot is exact in f32 while every partial sum is an integer of magnitude at
// most 2^24: |a*b| <= 2^14, so K <= 1024 keeps any summation order exact;
// longer dots keep the integer path.
//
// Types the CPU's oneDNN multiplies natively (bf16 on AVX-512 BF16 or AMX,
// f16 on AVX-512 FP16) stay as they are, and so do s8 dots on CPUs where the
// exact integer GEMM (eval::GemmS8, AVX2) is faster; `UpcastOptions` says
// which.
//
// Where bf16 is native, the pass also undoes what a module arrives with when
// another compiler upcast it (XLA:CPU's optimized modules, on CPUs without
// bf16 matmuls, convert every bf16 dot's operands to f32):
//
//   dot<f32>(convert<f32>(a:bf16), convert<f32>(b:bf16))  ->  dot<f32>(a, b)
//
// (an operand may also be a reshape of such a convert, which becomes the
// same reshape of a).
// The same value: a product of two bf16 values is exact in f32, and oneDNN's
// bf16 matmul accumulates in f32 as the f32 one does. (f16 is left alone:
// not every native f16 matmul accumulates in f32.)
#ifndef HLOC_BACKEND_HOST_DOT_UPCASTING_H_
#define HLOC_BACKEND_HOST_DOT_UPCASTING_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hlo/instruction.h"
#include "passes/pass.h"

namespace hloc {
namespace host {

struct UpcastOptions {
  bool upcast_bf16 = true;
  bool upcast_f16 = true;
  bool upcast_s8 = true;
};

// A dot of two s8 arrays into s32 (the ones eval::GemmS8 computes).
bool IsS8ToS32Dot(const HloInstruction& hlo);

// What this CPU's oneDNN lacks: bf16/f16 upcast unless oneDNN builds a
// native matmul primitive for the type (probed once per process).
UpcastOptions HostUpcastOptions();

class UpcastDotsForHostGemm : public HloPass {
 public:
  explicit UpcastDotsForHostGemm(UpcastOptions options = {}) : options_(options) {}
  absl::string_view name() const override { return "upcast-dots-for-host-gemm"; }
  // Upcasts (and, where bf16 is native, narrows) every dot that needs it.
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  UpcastOptions options_;
};

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_DOT_UPCASTING_H_
