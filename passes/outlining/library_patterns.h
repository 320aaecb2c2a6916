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
//
// The table is assembled from one function per family (gemm, convolution,
// normalization); adding a pattern means adding one entry to one of them.
#ifndef HLOC_PASSES_OUTLINING_LIBRARY_PATTERNS_H_
#define HLOC_PASSES_OUTLINING_LIBRARY_PATTERNS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

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
  // Operands and results of library ops must have row-major (or no) layouts.
  bool require_row_major_layouts = true;
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
};

// Every pattern hloc knows, in table order.
std::vector<LibraryPattern> DefaultLibraryPatterns();

// The families (each in its own file).
void AppendGemmPatterns(std::vector<LibraryPattern>* table);           // gemm_patterns.cc
void AppendConvolutionPatterns(std::vector<LibraryPattern>* table);    // convolution_patterns.cc
void AppendNormalizationPatterns(std::vector<LibraryPattern>* table);  // normalization_patterns.cc

}  // namespace hloc

#endif  // HLOC_PASSES_OUTLINING_LIBRARY_PATTERNS_H_
