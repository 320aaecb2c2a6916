// Shape inference: the result shape of every HLO opcode from its operand
// shapes, attributes and called computations, with XLA's semantics.
//
// InferShape(instruction) is the entry point the verifier uses. The Infer*Shape
// helpers below are the same rules on plain shapes and attributes, for code
// that builds instructions (passes) or evaluates them (the interpreter).
//
// Conventions:
//  - No implicit broadcasting: elementwise operands have equal dimensions
//    (scalars are not broadcast either).
//  - Errors are InvalidArgument and say which operand or attribute is wrong and
//    why ("lhs contracting dimension 1 has size 3, rhs contracting dimension 0
//    has size 4"). InferShape prefixes them with "<opcode> %<name>: ".
//  - Layouts are never inferred: results carry none.
//  - Where XLA's rule depends on runtime configuration (replica counts for
//    collectives, custom-call targets, infeed data), the declared shape is
//    trusted after the checks that do not depend on it.
#ifndef HLOC_HLO_SHAPE_INFERENCE_H_
#define HLOC_HLO_SHAPE_INFERENCE_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/shape.h"

namespace hloc {

// The shape `instruction` must have given its operands, attributes and called
// computations. Dot, convolution and ragged-dot take the instruction's own
// element type as their preferred element type.
absl::StatusOr<Shape> InferShape(const HloInstruction& instruction);

// True when `a` and `b` agree ignoring layouts and dynamic-dimension flags
// (XLA's "compatible"); an unbounded dimension ("?") matches any size. With
// `ignore_fp_precision`, floating-point element types of different widths
// also match.
bool ShapesCompatible(const Shape& a, const Shape& b, bool ignore_fp_precision = false);

// ---- Elementwise ----
// abs, exponential, is-finite (-> pred), real/imag (complex -> component), ...
absl::StatusOr<Shape> InferUnaryShape(HloOpcode opcode, const Shape& operand);
// add, compare (-> pred), complex (float -> complex), shifts, atan2, ...
absl::StatusOr<Shape> InferBinaryShape(HloOpcode opcode, const Shape& lhs, const Shape& rhs);
// select(pred, on_true, on_false) and clamp(min, operand, max); clamp's bounds
// may be scalars.
absl::StatusOr<Shape> InferTernaryShape(HloOpcode opcode, const Shape& a, const Shape& b,
                                        const Shape& c);
absl::StatusOr<Shape> InferConvertShape(const Shape& operand, PrimitiveType new_type);
// Equal widths keep the dimensions; a narrower result adds a minor dimension
// of size (old bits / new bits); a wider one removes a minor dimension that
// must have size (new bits / old bits).
absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand, PrimitiveType new_type);
absl::StatusOr<Shape> InferStochasticConvertShape(const Shape& operand, const Shape& random,
                                                  PrimitiveType new_type);
absl::StatusOr<Shape> InferReducePrecisionShape(const Shape& operand, int64_t exponent_bits,
                                                int64_t mantissa_bits);

// ---- Data movement ----
// The result has `output_dimensions` and the operand's element type; operand
// dimension i maps to output dimension broadcast_dimensions[i].
absl::StatusOr<Shape> InferBroadcastShape(const Shape& operand,
                                          absl::Span<const int64_t> output_dimensions,
                                          absl::Span<const int64_t> broadcast_dimensions);
absl::StatusOr<Shape> InferReshapeShape(const Shape& operand,
                                        absl::Span<const int64_t> new_dimensions);
absl::StatusOr<Shape> InferTransposeShape(const Shape& operand,
                                          absl::Span<const int64_t> permutation);
absl::StatusOr<Shape> InferReverseShape(const Shape& operand, absl::Span<const int64_t> dimensions);
absl::StatusOr<Shape> InferSliceShape(const Shape& operand, absl::Span<const int64_t> starts,
                                      absl::Span<const int64_t> limits,
                                      absl::Span<const int64_t> strides);
// Start indices are either one scalar per dimension or a single rank-1 vector.
absl::StatusOr<Shape> InferDynamicSliceShape(const Shape& operand,
                                             absl::Span<const Shape* const> start_indices,
                                             absl::Span<const int64_t> slice_sizes);
absl::StatusOr<Shape> InferDynamicUpdateSliceShape(const Shape& operand, const Shape& update,
                                                   absl::Span<const Shape* const> start_indices);
absl::StatusOr<Shape> InferConcatenateShape(absl::Span<const Shape* const> operands,
                                            int64_t dimension);
absl::StatusOr<Shape> InferPadShape(const Shape& operand, const Shape& padding_value,
                                    const xla::PaddingConfig& padding_config);
// Checks the declared iota shape and dimension; returns the shape.
absl::StatusOr<Shape> InferIotaShape(const Shape& shape, int64_t iota_dimension);
absl::StatusOr<Shape> InferTupleShape(absl::Span<const Shape* const> elements);
absl::StatusOr<Shape> InferGetTupleElementShape(const Shape& tuple, int64_t index);
absl::StatusOr<Shape> InferGetDimensionSizeShape(const Shape& operand, int64_t dimension);
absl::StatusOr<Shape> InferSetDimensionSizeShape(const Shape& operand, const Shape& size,
                                                 int64_t dimension);

// ---- Reductions and windows ----
// `operands` are the N inputs followed by the N init values; `to_apply` takes
// 2N scalars (accumulators, then input elements) and returns N. One input
// gives an array, several give a tuple.
absl::StatusOr<Shape> InferReduceShape(absl::Span<const Shape* const> operands,
                                       absl::Span<const int64_t> dimensions,
                                       const ProgramShape& to_apply);
// The shape a window of `window` slid over `base` produces, with element
// type `element_type` (padding, dilations and strides applied).
absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base, const xla::Window& window,
                                             PrimitiveType element_type);
absl::StatusOr<Shape> InferReduceWindowShape(absl::Span<const Shape* const> operands,
                                             const xla::Window& window,
                                             const ProgramShape& to_apply);
absl::StatusOr<Shape> InferSelectAndScatterShape(const Shape& operand, const ProgramShape& select,
                                                 const xla::Window& window, const Shape& source,
                                                 const Shape& init_value,
                                                 const ProgramShape& scatter);
// Checks that `computation` is a reducer over scalars of `accumulator_types`
// with element inputs `input_types` (XLA's reduce/reduce-window/scatter
// combiner rule): 2N scalar parameters and N scalar results.
absl::Status CheckReducerSignature(const ProgramShape& computation,
                                   absl::Span<const PrimitiveType> accumulator_types,
                                   absl::Span<const PrimitiveType> input_types);

// ---- Contractions ----
// Result dimensions: batch dimensions (in lhs order), then lhs free
// dimensions, then rhs free dimensions. Without a preferred element type the
// operands must have the same type; with one the result has it.
absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs,
                                    const xla::DotDimensionNumbers& dnums,
                                    std::optional<PrimitiveType> preferred_element_type);
absl::StatusOr<Shape> InferRaggedDotShape(const Shape& lhs, const Shape& rhs,
                                          const Shape& group_sizes,
                                          const xla::RaggedDotDimensionNumbers& dnums,
                                          std::optional<PrimitiveType> preferred_element_type);
absl::StatusOr<Shape> InferConvolutionShape(const Shape& lhs, const Shape& rhs,
                                            int64_t feature_group_count, int64_t batch_group_count,
                                            const xla::Window& window,
                                            const xla::ConvolutionDimensionNumbers& dnums,
                                            std::optional<PrimitiveType> preferred_element_type);
absl::StatusOr<Shape> InferGatherShape(const Shape& operand, const Shape& start_indices,
                                       const xla::GatherDimensionNumbers& dnums,
                                       absl::Span<const int64_t> slice_sizes);
// `operands` are the N operands, the indices, then the N updates.
absl::StatusOr<Shape> InferScatterShape(absl::Span<const Shape* const> operands,
                                        const ProgramShape& to_apply,
                                        const xla::ScatterDimensionNumbers& dnums);

// ---- Sorting and mapping ----
absl::StatusOr<Shape> InferSortShape(absl::Span<const Shape* const> operands, int64_t dimension,
                                     const ProgramShape& comparator);
absl::StatusOr<Shape> InferTopKShape(const Shape& operand, int64_t k);
absl::StatusOr<Shape> InferMapShape(absl::Span<const Shape* const> operands,
                                    const ProgramShape& to_apply,
                                    absl::Span<const int64_t> dimensions);

// scan (newer XLA; JAX emits it for cumulative sums and friends). Operands
// are N inputs then `num_carries` initial carries. Step i takes slice i of
// every input along `dimension` (that dimension removed) and the current
// carries, and to_apply returns (outputs..., new carries...) or one bare
// value. The result is (stacked outputs..., final carries...): each output's
// steps stacked along a new `dimension` of the inputs' length; bare when
// to_apply's result is.
absl::StatusOr<Shape> InferScanShape(absl::Span<const Shape* const> operands, int64_t dimension,
                                     int64_t num_carries, const ProgramShape& to_apply);
// One step's slice of a scan input: `input` without `dimension`.
Shape ScanStepShape(const Shape& input, int64_t dimension);

// ---- Control flow and calls ----
absl::StatusOr<Shape> InferWhileShape(const ProgramShape& condition, const ProgramShape& body,
                                      const Shape& init);
absl::StatusOr<Shape> InferConditionalShape(const Shape& branch_index,
                                            absl::Span<const ProgramShape> branches,
                                            absl::Span<const Shape* const> branch_operands);
// call and fusion: parameters agree with operands; result is the root's shape.
absl::StatusOr<Shape> InferCallShape(absl::Span<const Shape* const> operands,
                                     const ProgramShape& callee);

// ---- Linear algebra, FFT, random numbers, batch norm ----
absl::StatusOr<Shape> InferCholeskyShape(const Shape& a);
absl::StatusOr<Shape> InferTriangularSolveShape(const Shape& a, const Shape& b,
                                                const xla::TriangularSolveOptions& options);
absl::StatusOr<Shape> InferFftShape(const Shape& operand, xla::FftType fft_type,
                                    absl::Span<const int64_t> fft_length);
// rng's result dimensions are its own (`shape`); the parameters fix the type.
absl::StatusOr<Shape> InferRngShape(const Shape& a, const Shape& b,
                                    xla::RandomDistribution distribution, const Shape& shape);
// The result is (new state, random bits of `output`'s shape).
absl::StatusOr<Shape> InferRngBitGeneratorShape(const Shape& state, const Shape& output);
absl::StatusOr<Shape> InferBatchNormTrainingShape(const Shape& operand, const Shape& scale,
                                                  const Shape& offset, int64_t feature_index);
absl::StatusOr<Shape> InferBatchNormInferenceShape(const Shape& operand, const Shape& scale,
                                                   const Shape& offset, const Shape& mean,
                                                   const Shape& variance, int64_t feature_index);
absl::StatusOr<Shape> InferBatchNormGradShape(const Shape& operand, const Shape& scale,
                                              const Shape& mean, const Shape& variance,
                                              const Shape& output_grad, int64_t feature_index);

}  // namespace hloc

#endif  // HLOC_HLO_SHAPE_INFERENCE_H_
