// Tolerance-aware comparison of literals (backs `hloc compare` and the
// corpus tests). An element passes when |actual - expected| <= atol + rtol *
// |expected|; NaN matches only NaN, infinities must match exactly, integers
// and pred must be equal. Tuples compare element by element.
#ifndef HLOC_HLO_EVALUATOR_COMPARE_H_
#define HLOC_HLO_EVALUATOR_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/literal.h"

namespace hloc {

struct Tolerance {
  // Unset: the default for the element type (DefaultTolerance).
  std::optional<double> rtol;
  std::optional<double> atol;
};

// Per element type: f64 1e-9/1e-12, f32 and c64 1e-5/1e-6, f16 1e-3/1e-4,
// bf16 1e-2/1e-3, narrow floats 1e-1/1e-2; integers exact.
Tolerance DefaultTolerance(PrimitiveType type);

struct ComparisonReport {
  bool ok = true;
  int64_t elements = 0;
  int64_t mismatches = 0;
  double max_abs_error = 0;   // Over finite pairs.
  double max_rel_error = 0;   // |a - e| / max(|e|, tiny) over finite pairs.
  // The element that is furthest past its tolerance (or the worst one when
  // all pass): tuple path, index, values.
  std::vector<int64_t> worst_tuple_index;
  std::vector<int64_t> worst_index;
  std::string worst_expected, worst_actual;
  std::string message;  // Shape mismatch or summary; empty when ok.
  std::string ToString() const;
};

ComparisonReport CompareLiterals(const Literal& expected, const Literal& actual,
                                 const Tolerance& tolerance = {});

}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_COMPARE_H_
