// Recognising an elementwise function of one value by evaluating it. Frontends
// spell activations in many equivalent ways (JAX expands erfc into ~80
// polynomial and select ops), so rather than matching each spelling, a
// library pattern matches the shape "elementwise cone over one input" and
// then asks here whether that cone computes a known function: the cone is
// evaluated in double precision at sample points and compared with a
// reference. Only ops with exact scalar meaning are evaluated; anything else
// (a non-splat constant, an integer bit trick) means "not recognised".
#ifndef HLOC_PASSES_OUTLINING_ELEMENTWISE_FUNCTION_H_
#define HLOC_PASSES_OUTLINING_ELEMENTWISE_FUNCTION_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/instruction.h"

namespace hloc {

// Values of `root` when `input` takes each of `xs`: every instruction between
// them must be elementwise, a splat constant or a broadcast of a scalar
// constant (what pattern::ElementwiseOf accepts).
absl::StatusOr<std::vector<double>> EvaluateElementwiseCone(const HloInstruction* root,
                                                            const HloInstruction* input,
                                                            absl::Span<const double> xs);

struct ReferenceFunction {
  std::string name;  // "gelu_tanh"
  std::function<double(double)> f;
};

// The two GELU forms JAX emits: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// and x/2 erfc(-x/sqrt(2)).
const std::vector<ReferenceFunction>& GeluReferences();

struct Identification {
  std::string name;              // The reference recognised; empty when none is within tolerance.
  std::string closest;           // The closest reference, recognised or not.
  double max_error = 0;          // Its largest relative error over the samples.
  std::string ToString() const;  // "gelu_tanh (max relative error 3e-08)"
};

// Which of `references` the cone root(input) computes: the one with the
// smallest largest relative error, if that error is within the tolerance of
// `root`'s element type (1e-5 for f32/f64, 2e-2 for 16-bit floats).
absl::StatusOr<Identification> IdentifyElementwiseFunction(
    const HloInstruction* root, const HloInstruction* input,
    const std::vector<ReferenceFunction>& references);

}  // namespace hloc

#endif  // HLOC_PASSES_OUTLINING_ELEMENTWISE_FUNCTION_H_
