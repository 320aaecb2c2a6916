// The library pattern registry: which subgraphs hloc outlines into named
// calls that backends map to library operations (cuBLAS/cuDNN-style gemm,
// convolution, softmax, layer norm, attention).
//
// Each entry is one row of a table:
//
//   name        stable composite.name ("hloc.gemm_bias_relu"); backends key on it
//   pattern     what the subgraph looks like (passes/pattern/matcher.h); its
//               members are what the call replaces, its inputs become operands
//   check       what the library needs beyond the shape of the graph: element
//               types, row-major layouts, a bias that really is a vector along
//               the output feature dimension, ... (a refusal says why)
//   attributes  what the library needs to know, written into
//               composite.attributes (dimension numbers, alpha/beta, epilogue)
//   priority    overlapping matches: higher priority wins, then the larger
//               match, then table order, then program order
//   numerics    how the library's result may differ from the HLO's
//   outside_uses  what to do when an intermediate value of the match is also
//               used outside it: return it as an extra tuple output, or refuse
//   operands    the values the library reads, in the call's operand order
//
// The table is assembled from one function per family (gemm, convolution,
// normalization); adding a pattern means adding one entry to one of them.
// LibraryEpilogueFusion (library_epilogue_fusion.h) later grows gemm and
// convolution calls by the epilogue steps of library_epilogues.h, which also
// lists the composite names that can make.
//
// ---- The composite.attributes schema (what backends read) ----
//
// Every library call is `call(operands...), to_apply=BODY, is_composite=true`
// with frontend attributes composite.name, composite.version ("1") and
// composite.attributes, an MLIR dictionary (composite_attributes.h). BODY
// computes exactly what the library must compute, within the pattern's
// numerics contract (the interpreter runs BODY; inlining BODY is always a
// correct fallback).
//
// gemm family: hloc.gemm[_bias][_relu|_gelu], hloc.batched_gemm[...]
//   operands: lhs, rhs, then the epilogue's vectors (below)
//   lhs_contracting_dims, rhs_contracting_dims, lhs_batch_dims,
//   rhs_batch_dims  array<i64>: the dot's dimension numbers. hloc.gemm's lhs
//                   may have several free dimensions (they fold into M);
//                   batch dimensions lead in hloc.batched_gemm.
//   alpha : f64     y = alpha * (lhs . rhs), before the epilogue steps
//   beta : f64      0 (the result is never accumulated into)
//   epilogue        "none" or steps joined by '_' (below)
// conv family: hloc.conv[_sub][_scale][_bias][_relu]
//   operands: input, kernel, then the epilogue's vectors
//   input_batch_dim, input_feature_dim, input_spatial_dims,
//   kernel_input_feature_dim, kernel_output_feature_dim, kernel_spatial_dims,
//   output_batch_dim, output_feature_dim, output_spatial_dims  (i64 / array)
//   window_size, window_strides, padding_low, padding_high, rhs_dilation
//                   array<i64>, one entry per spatial dimension
//   feature_group_count : i64
//   alpha : f64     y = alpha * conv(input, kernel), before the epilogue
//   epilogue        "none" or steps joined by '_'
// Epilogue steps, applied in this order to y, each at most once; v is the
// call's next vector operand (rank 1, y's element type, broadcast along the
// output feature dimension: the last one for gemms, output_feature_dim for
// convolutions):
//   sub         y = y - v                 conv only
//   scale       y = y * v                 conv only
//   bias        y = y + v
//   relu        y = max(y, 0)
//   gelu_tanh   y = y/2 (1 + tanh(sqrt(2/pi) (y + 0.044715 y^3)))   gemm only
//   gelu_erf    y = y/2 erfc(-y/sqrt(2))                             gemm only
// so hloc.conv_sub_scale_bias_relu (inference batch norm then relu) takes
// input, kernel, mean, scale, offset. A library may fold sub/scale/bias into
// one per-channel multiply-add, y*scale + (offset - mean*scale): the
// conv family's numerics contract allows that reformulation.
// hloc.softmax: operand x; axis : i64 (the last).
// hloc.layer_norm: operands x[, scale][, offset]; axis, epsilon, has_scale,
//   has_offset.
// hloc.attention: operands q, k, v[, mask]; scale (multiplies q.k^T),
//   has_mask, mask_dims, mask_fill.
// Layouts (every family): a library reads and writes strided arrays, so
// operands and results may have any dense layout (a permutation of the
// dimensions: LibraryCheckOptions::require_row_major_layouts). Where one is
// not row-major it is recorded as KEY = array<i64: minor_to_major...>, with
// KEY lhs_layout / rhs_layout (gemm), input_layout / kernel_layout (conv),
// q_layout / k_layout / v_layout (attention), x_layout (softmax, layer norm)
// and result_layout (all); an absent key means row-major. A backend that
// stores every array in logical row-major order whatever its layout (hloc's
// host backend and interpreter do) ignores these keys; one that lays buffers
// out as their layouts say derives each dimension's stride from them.
#ifndef HLOC_PASSES_OUTLINING_LIBRARY_PATTERNS_H_
#define HLOC_PASSES_OUTLINING_LIBRARY_PATTERNS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "passes/pattern/matcher.h"

namespace hloc {

// How far the library's result may be from what the replaced HLO computes.
struct NumericsContract {
  enum class Kind {
    kBitIdentical,   // Same bits.
    kWithinUlp,      // Each element within `ulp` units in the last place.
    kReformulation,  // A mathematically equal formula, rounded differently
                     // (e.g. another summation order); `note` says which.
  };
  Kind kind = Kind::kReformulation;
  int64_t ulp = 0;
  std::string note;
  // "bit-identical", "within 2 ulp", "reformulation: summation order".
  std::string ToString() const;
};

enum class OutsideUsePolicy {
  kRefuse,        // An intermediate used outside the match refuses it.
  kExtraOutputs,  // Such intermediates become extra outputs of the call.
};

// What the checks may depend on besides the match.
struct LibraryCheckOptions {
  // False (the default): operands and results may have any dense layout, which
  // strides express (cuBLASLt, cuDNN and oneDNN take a stride per dimension);
  // non-row-major ones are recorded (see "Layouts" above). Tiled, sub-byte or
  // other-memory-space layouts are refused. True: only row-major (or none).
  bool require_row_major_layouts = false;
};

// nullopt: the match is acceptable; otherwise the reason it is refused.
using Refusal = std::optional<std::string>;

struct LibraryPattern {
  std::string name;
  int64_t version = 1;
  int priority = 0;
  pattern::Pattern pattern = pattern::Any();
  std::function<Refusal(const pattern::Match&, const LibraryCheckOptions&)> check;
  std::function<std::string(const pattern::Match&)> attributes;
  // Names of the entries `attributes` writes (documentation and tests).
  std::vector<std::string> recorded_attributes;
  NumericsContract numerics;
  OutsideUsePolicy outside_uses = OutsideUsePolicy::kRefuse;
  // The values the library reads, in the order the call passes them (the
  // schema above); null or empty: order of first use. A value in two roles
  // (dot(x, x)) is passed twice.
  std::function<std::vector<const HloInstruction*>(const pattern::Match&)> operands;
};

// Every pattern hloc knows, in table order.
std::vector<LibraryPattern> DefaultLibraryPatterns();

// The families (each in its own file).
void AppendGemmPatterns(std::vector<LibraryPattern>* table);           // gemm_patterns.cc
void AppendConvolutionPatterns(std::vector<LibraryPattern>* table);    // convolution_patterns.cc
void AppendNormalizationPatterns(std::vector<LibraryPattern>* table);  // normalization_patterns.cc

// ---- Reading a library call back (what backends do) ----
//
// One decoder for the schema above, next to the patterns that write it:
// every backend reads a call's composite.name and composite.attributes
// through DecodeLibraryCall, never the text itself.

enum class EpilogueStep;       // library_epilogues.h
struct LibraryEpilogueFamily;  // library_epilogues.h

struct LibraryCallDescriptor {
  std::string name;  // composite.name: "hloc.conv_sub_scale_bias_relu"
  // The epilogue family (hloc.gemm, hloc.batched_gemm, hloc.conv), or null
  // for the other composites (softmax, layer norm, attention).
  const LibraryEpilogueFamily* family = nullptr;
  // The `epilogue` steps in the order they apply (empty for "none"),
  // checked against the family's order and the name.
  std::vector<EpilogueStep> epilogue;
  double alpha = 1.0;  // y = alpha * product, before the epilogue.
  double beta = 0.0;
  // The i64 and array<i64> entries (dimension numbers, window, feature
  // group count, ...), by name.
  std::map<std::string, int64_t> ints;
  std::map<std::string, std::vector<int64_t>> int_arrays;

  std::optional<int64_t> Int(const std::string& key) const;
  std::optional<std::vector<int64_t>> Ints(const std::string& key) const;
  // The family's base name ("hloc.gemm"), or "" for none.
  std::string family_name() const;
};

// The descriptor of a composite call. InvalidArgument when `call` is not a
// composite call or its attributes do not parse; FailedPrecondition (the
// message says why) when the epilogue names an unknown step, breaks the
// family's order, or disagrees with composite.name.
absl::StatusOr<LibraryCallDescriptor> DecodeLibraryCall(const HloInstruction& call);

}  // namespace hloc

#endif  // HLOC_PASSES_OUTLINING_LIBRARY_PATTERNS_H_
