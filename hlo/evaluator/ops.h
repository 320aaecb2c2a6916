// Internal interface between the evaluator's driver (evaluator.cc) and the
// files that compute each family of opcodes. Every op function takes the
// instruction, its already-evaluated operands and the context, and returns
// the instruction's value; none of them recurses into the graph except
// through EvalContext::Call.
#ifndef HLOC_HLO_EVALUATOR_OPS_H_
#define HLOC_HLO_EVALUATOR_OPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/literal.h"

namespace hloc {
namespace eval {

using Operands = absl::Span<const Literal* const>;

// What op functions may ask of the driver.
class EvalContext {
 public:
  virtual ~EvalContext() = default;
  virtual int num_threads() const = 0;
  // Evaluates `computation` (reducers, comparators, bodies) on `args`.
  virtual absl::StatusOr<Literal> Call(const HloComputation& computation, Operands args) = 0;
  // The next 64 bits of the deterministic stream behind `rng`.
  virtual uint64_t NextRandom() = 0;
};

// "instruction %name: message" as an InvalidArgument error.
template <typename... Args>
absl::Status InstructionError(const HloInstruction& hlo, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat("instruction %", hlo.name(), " (",
                                                 HloOpcodeName(hlo.opcode()), "): ", args...));
}
template <typename... Args>
absl::Status InstructionUnimplemented(const HloInstruction& hlo, const Args&... args) {
  return absl::UnimplementedError(absl::StrCat("instruction %", hlo.name(), " (",
                                               HloOpcodeName(hlo.opcode()), "): ", args...));
}

// Row-major strides (in elements) of an array of `dims`.
std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims);
// A zero-filled literal of `shape` (checked against Literal::kMaxBytes).
absl::StatusOr<Literal> NewLiteral(const HloInstruction& hlo, const Shape& shape);

// Elementwise families (elementwise.cc, convert.cc).
absl::StatusOr<Literal> EvalUnary(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalBinary(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalCompare(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalSelect(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalClamp(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalConvert(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalBitcastConvert(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalReducePrecision(const HloInstruction& hlo, Operands ops);
// stochastic-convert (stochastic_convert.cc).
absl::StatusOr<Literal> EvalStochasticConvert(const HloInstruction& hlo, Operands ops);
// Converts a whole literal to `type` with convert's rules.
absl::StatusOr<Literal> ConvertLiteral(const Literal& input, PrimitiveType type);

// Data movement (data_movement.cc).
absl::StatusOr<Literal> EvalBroadcast(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalReshape(const HloInstruction& hlo, Operands ops);
// bitcast: reinterprets the operand's physical (layout-ordered) elements as
// the result's physical order; a reshape when both layouts are row-major.
absl::StatusOr<Literal> EvalBitcast(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalTranspose(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalReverse(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalSlice(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalDynamicSlice(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalDynamicUpdateSlice(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalConcatenate(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalPad(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalIota(const HloInstruction& hlo);
absl::StatusOr<Literal> EvalGather(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalScatter(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
// A scalar literal holding element `index` of `array`, and the reverse.
Literal ElementAsScalar(const Literal& array, int64_t index);
void StoreElement(const Literal& scalar, Literal* array, int64_t index);
// Transposes `input` so that result dimension i is input dimension perm[i].
Literal TransposeLiteral(const Literal& input, absl::Span<const int64_t> perm);
// The same elements (row-major order) under a new shape with as many elements.
Literal ReshapeLiteral(const Literal& input, const Shape& shape);

// Linear algebra (dot.cc, convolution.cc, linalg.cc).
absl::StatusOr<Literal> EvalDot(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalConvolution(const HloInstruction& hlo, Operands ops,
                                        EvalContext& ctx);
absl::StatusOr<Literal> EvalCholesky(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalTriangularSolve(const HloInstruction& hlo, Operands ops);
absl::StatusOr<Literal> EvalFft(const HloInstruction& hlo, Operands ops);
// ragged-dot (ragged_dot.cc).
absl::StatusOr<Literal> EvalRaggedDot(const HloInstruction& hlo, Operands ops);

// Reductions and windows (reduce.cc, reduce_window.cc).
absl::StatusOr<Literal> EvalReduce(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalReduceWindow(const HloInstruction& hlo, Operands ops,
                                         EvalContext& ctx);
absl::StatusOr<Literal> EvalSelectAndScatter(const HloInstruction& hlo, Operands ops,
                                             EvalContext& ctx);
absl::StatusOr<Literal> EvalMap(const HloInstruction& hlo, Operands ops, EvalContext& ctx);

// scan (scan.cc).
absl::StatusOr<Literal> EvalScan(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
// Sorting (sort.cc).
absl::StatusOr<Literal> EvalSort(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalTopK(const HloInstruction& hlo, Operands ops);
// The k largest (or smallest) along the last dimension, as (values, s32
// indices); ties keep the lower index. Backs topk and the "TopK" custom call.
absl::StatusOr<Literal> TopK(const HloInstruction& hlo, const Literal& input, int64_t k,
                             bool largest);

// Batch norm (batch_norm.cc).
absl::StatusOr<Literal> EvalBatchNormInference(const HloInstruction& hlo, Operands ops,
                                               EvalContext& ctx);
absl::StatusOr<Literal> EvalBatchNormTraining(const HloInstruction& hlo, Operands ops,
                                              EvalContext& ctx);
absl::StatusOr<Literal> EvalBatchNormGrad(const HloInstruction& hlo, Operands ops,
                                          EvalContext& ctx);

// Random numbers (rng.cc).
absl::StatusOr<Literal> EvalRng(const HloInstruction& hlo, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalRngBitGenerator(const HloInstruction& hlo, Operands ops);

// A reducer computation recognised as one binary opcode applied to its two
// scalar parameters (add, multiply, maximum, minimum, and, or, xor), so hot
// loops can skip calling the computation per element.
struct SimpleReducer {
  HloOpcode opcode;
};
std::optional<SimpleReducer> MatchSimpleReducer(const HloComputation& computation);

// x <d> y for values of one compute type (compare, select-and-scatter).
template <typename T>
bool CompareValues(ComparisonDirection d, T x, T y) {
  switch (d) {
    case ComparisonDirection::kEq: return x == y;
    case ComparisonDirection::kNe: return x != y;
    case ComparisonDirection::kLt: return x < y;
    case ComparisonDirection::kLe: return x <= y;
    case ComparisonDirection::kGt: return x > y;
    case ComparisonDirection::kGe: return x >= y;
  }
  return false;
}

}  // namespace eval
}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_OPS_H_
