// LibraryEpilogueFusion: an outlined gemm or convolution call absorbs the
// elementwise work next to it that its library op applies for free (the
// epilogue steps of library_epilogues.h, and the scalar alpha):
//
//   before                                   after
//   g = call(x, w), hloc.gemm                g = call(x, w, b), hloc.gemm_bias_relu
//   a = add(g, broadcast(b))                     body: dot, add(dot, broadcast(p2)),
//   r = maximum(a, 0)                                  maximum(add, 0)
//
// One absorption at a time, per call, until nothing more fits:
//  - consumer side, when the call's result has no other user and is not the
//    computation's result:
//      multiply(call, c) or divide(call, c), c a constant splat  -> alpha
//      add / subtract / multiply by a rank-1 vector broadcast along the
//        output feature dimension                    -> step bias / sub / scale
//      maximum(call, 0)                              -> step relu
//      a GELU of the call (tanh or erf form, recognised by evaluating the
//        cone as the gemm_bias_gelu pattern does; the call then has several
//        users, all inside the cone)                 -> step gelu_tanh / gelu_erf
//  - producer side: operand lhs/rhs (input/kernel) is multiply(x, c), c a
//    constant splat, used by nothing else        -> x is passed, alpha *= c
//
// The absorbed instructions move verbatim into the call's body (so the
// interpreter, and a backend that inlines the call, compute exactly what the
// HLO did); composite.name, composite.attributes (epilogue, alpha,
// result_layout) and the call's name follow, in the schema of
// library_patterns.h; a new vector becomes the call's last operand, as the
// schema orders them. A step the family does not fuse, or out of order (a
// scale after a bias, anything after an activation), is refused with the
// reason in the ledger (pass "library-epilogue-fusion"), as is a consumer
// the fusion rules forbid (FusionRules::Describe: opcode, name and
// _hloc_no_fusion overrides, extra rules). Running the pass again changes
// nothing. Numerics, per absorption (recorded in the ledger):
//   alpha from multiply(call, c): the library's alpha*acc is the same single
//     rounding as the HLO's multiply of the product;
//   alpha from divide(call, c): alpha = 1/c; within 2 ulp of the division,
//     exact when c is a power of two;
//   alpha from a scaled operand: (c*x).w as c*(x.w); the scaled operand is not
//     rounded (exact when c is a power of two);
//   bias, relu, GELU: as the gemm/conv patterns' contracts;
//   sub, scale (inference batch norm): a library may fold sub/scale/bias into
//     y*s + (b - m*s); the result is then within a few ulp of
//     max(|y*s|, |m*s|, |b|) (absolute: y close to m cancels).
//
// Batch norm: JAX spells inference batch norm (mean, variance, scale, offset
// as constants or parameters) as (y - broadcast(mean)) * broadcast(scale *
// rsqrt(var + eps)) + broadcast(offset); the per-channel scale vector stays
// outside as an operand, and the convolution absorbs sub, scale and bias
// (hloc.conv_sub_scale_bias[_relu]). Training-mode batch norm reduces the
// convolution's own result to its batch statistics, so that result has other
// users and nothing is absorbed ("N users" in the ledger); there is no
// hloc.batch_norm_* pattern: no zoo model trains, and the corpus's
// batch-norm-training modules are lone ops a library call would not speed up.
//
// The pass does nothing when FusionRules::fuse_library_epilogues() is off
// (or when a pipeline disables it by name, "library-epilogue-fusion").
#ifndef HLOC_PASSES_OUTLINING_LIBRARY_EPILOGUE_FUSION_H_
#define HLOC_PASSES_OUTLINING_LIBRARY_EPILOGUE_FUSION_H_

#include <cstdint>
#include <map>
#include <string>

#include "passes/fusion/fusion_ledger.h"
#include "passes/fusion/fusion_rules.h"
#include "passes/outlining/library_patterns.h"
#include "passes/pass.h"

namespace hloc {

struct LibraryEpilogueStats {
  // What was absorbed ("alpha", "bias", "sub", "scale", "relu", "gelu_tanh",
  // "gelu_erf", "operand alpha") -> how often.
  std::map<std::string, int64_t> absorbed;
  int64_t calls_grown = 0;
};

class LibraryEpilogueFusion : public HloPass {
 public:
  explicit LibraryEpilogueFusion(FusionRules rules = FusionRules(),
                                 LibraryCheckOptions check = {}, FusionLedger* ledger = nullptr);
  static constexpr absl::string_view kPassName = "library-epilogue-fusion";
  absl::string_view name() const override { return kPassName; }
  absl::StatusOr<bool> Run(HloModule& module) override;

  const LibraryEpilogueStats& stats() const { return stats_; }

 private:
  absl::StatusOr<bool> GrowCall(HloInstruction* call);
  void Record(const HloInstruction& call, bool accepted, absl::string_view rule,
              std::vector<std::string> subjects, std::string reason, std::string result = "");

  FusionRules rules_;
  LibraryCheckOptions check_;
  FusionLedger* ledger_;
  LibraryEpilogueStats stats_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_OUTLINING_LIBRARY_EPILOGUE_FUSION_H_
