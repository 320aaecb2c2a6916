// HLO text for the GPU tests, shared so that the code generation, compiler,
// emulation and device tests do not each spell out the same reducers,
// softmaxes, reductions, scatters and library-call patterns. Each function
// returns the text of one computation (name and braces included; a name of
// "ENTRY main" makes it a module's entry) or of a whole module; the shapes
// are parameters because each test wants its own sizes.
#ifndef HLOC_BACKEND_GPU_GPU_TEST_MODULES_H_
#define HLOC_BACKEND_GPU_GPU_TEST_MODULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace hloc {
namespace gpu {
namespace test_modules {

// `name`(a, b) = `op`(a, b) on scalars of `type` (add, maximum, ...). The
// root is named `name`_result so that it cannot take a name the tests use.
std::string Binary(absl::string_view name, absl::string_view op, absl::string_view type);

// `name`(a, b) = compare(a, b) on scalars of `type`; `attributes` are added
// after the direction (", type=TOTALORDER").
std::string Compare(absl::string_view name, absl::string_view type, absl::string_view direction,
                    absl::string_view attributes = "");

// The (f32, s32) argmax reducer: the larger value, the smaller index on ties.
std::string ArgmaxReducer(absl::string_view name);

// reduce(x: `operand` (a shape such as "f32[4,3000]"), init) over
// `dimensions` ("1", "0,2") with `reducer`, of shape `result`; `init` is the
// initial value's literal ("0", "-inf").
std::string Reduce(absl::string_view name, absl::string_view operand, absl::string_view result,
                   absl::string_view dimensions, absl::string_view init,
                   absl::string_view reducer);

// (max, argmax) of an f32 array of dimensions `dims` along its last
// dimension, with ArgmaxReducer `reducer`.
std::string ArgmaxRows(absl::string_view name, const std::vector<int64_t>& dims,
                       absl::string_view reducer);

// sum, max and sum / max of the rows of an f32[rows, cols] array (reducers
// "add" and "max"): a multi-output reduction.
std::string MultiOutputRows(absl::string_view name, int64_t rows, int64_t cols);

// sort(x: `shape`) along `dimension` with `comparator`.
std::string Sort(absl::string_view name, absl::string_view shape, int64_t dimension,
                 absl::string_view comparator);

// (negate(f32[square, square]), abs(s32[length])): outputs of two shapes.
std::string TwoShapes(absl::string_view name, int64_t square, int64_t length);

// softmax over the rows of a `type`[rows, cols] array, with the reducers
// named `max` and `add`.
std::string Softmax(absl::string_view name, absl::string_view type, int64_t rows, int64_t cols,
                    absl::string_view max, absl::string_view add);

// scatter of `updates` rows of a `type`[rows, cols] operand (s32[updates, 1]
// indices) with `combiner`; `attributes` are added at the end
// (", unique_indices=true").
std::string ScatterRows(absl::string_view name, absl::string_view type, int64_t rows,
                        int64_t cols, int64_t updates, absl::string_view combiner,
                        absl::string_view attributes = "");

// A module named `name` holding `computations` and a trivial entry: the
// tests look the computations up by name.
std::string Library(const std::vector<std::string>& computations,
                    absl::string_view name = "m");

// Modules whose entry is a library-call pattern: dot(x[m,k], w[k,n]) + bias
// then relu, and an NHWC convolution (HWIO filter, 3x3, padding 1) + bias
// then relu.
std::string GemmBiasReluModule(absl::string_view name, int64_t m, int64_t k, int64_t n);
// dot(a, b) of two f32[n, n] matrices.
std::string SquareGemmModule(absl::string_view name, int64_t n);
std::string ConvNhwcBiasReluModule(absl::string_view name, int64_t batch, int64_t size,
                                   int64_t in, int64_t out);

}  // namespace test_modules
}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_TEST_MODULES_H_
