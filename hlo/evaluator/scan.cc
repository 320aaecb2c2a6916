// scan (see InferScanShape in hlo/shape_inference.h): step by step along the
// scanned dimension, forward or (is_reverse) from the last index down. Step i
// cuts slice i out of every input, calls to_apply on those slices and the
// current carries, writes the returned outputs into slice i of the stacked
// results and keeps the returned carries for the next step.
//
// Slices move as bytes: a literal stores its elements row-major at a fixed
// width, so slice i of dimension d of an array [outer..., n, inner...] is
// `outer` runs of `inner` elements, run o starting at element (o * n + i) *
// inner.
#include <cstring>
#include <vector>

#include "hlo/evaluator/ops.h"
#include "hlo/shape_inference.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

struct SliceGeometry {
  int64_t outer = 1;        // elements before the dimension, multiplied out
  int64_t length = 0;       // the dimension's size
  int64_t inner_bytes = 0;  // bytes of one run after the dimension
};

SliceGeometry GeometryOf(const Shape& stacked, int64_t dimension) {
  SliceGeometry g;
  int64_t inner = 1;
  for (int64_t d = 0; d < stacked.rank(); ++d) {
    if (d < dimension) g.outer *= stacked.dimensions(d);
    if (d > dimension) inner *= stacked.dimensions(d);
  }
  g.length = stacked.dimensions(dimension);
  g.inner_bytes = inner * ByteWidth(stacked.element_type());
  return g;
}

// Slice `index` of `stacked` into `step` (whose shape lacks the dimension).
void CopySliceOut(const Literal& stacked, const SliceGeometry& g, int64_t index, Literal* step) {
  for (int64_t o = 0; o < g.outer; ++o) {
    std::memcpy(step->mutable_raw() + o * g.inner_bytes,
                stacked.raw() + (o * g.length + index) * g.inner_bytes, g.inner_bytes);
  }
}

void CopySliceIn(const Literal& step, const SliceGeometry& g, int64_t index, Literal* stacked) {
  for (int64_t o = 0; o < g.outer; ++o) {
    std::memcpy(stacked->mutable_raw() + (o * g.length + index) * g.inner_bytes,
                step.raw() + o * g.inner_bytes, g.inner_bytes);
  }
}

}  // namespace

absl::StatusOr<Literal> EvalScan(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  const HloComputation* fn = hlo.to_apply();
  if (fn == nullptr) return InstructionError(hlo, "scan has no to_apply computation");
  if (hlo.dimensions().size() != 1) return InstructionError(hlo, "scan needs one dimension");
  const int64_t dimension = hlo.dimensions(0);
  const int64_t num_carries = hlo.attrs().num_carries;
  const int64_t inputs = static_cast<int64_t>(ops.size()) - num_carries;
  if (num_carries < 0 || inputs < 1 || dimension >= ops[0]->shape().rank()) {
    return InstructionError(hlo, "operands do not fit num_carries and the scan dimension");
  }
  const int64_t length = ops[0]->shape().dimensions(dimension);

  std::vector<Shape> results;
  if (hlo.shape().IsTuple()) {
    results = hlo.shape().tuple_shapes();
  } else {
    results.push_back(hlo.shape());
  }
  const int64_t outputs = static_cast<int64_t>(results.size()) - num_carries;
  if (outputs < 0) return InstructionError(hlo, "result has fewer elements than carries");

  std::vector<Literal> stacked;
  std::vector<SliceGeometry> output_geometry;
  for (int64_t j = 0; j < outputs; ++j) {
    HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, results[j]));
    output_geometry.push_back(GeometryOf(out.shape(), dimension));
    stacked.push_back(std::move(out));
  }
  std::vector<Literal> steps;
  std::vector<SliceGeometry> input_geometry;
  for (int64_t i = 0; i < inputs; ++i) {
    if (ops[i]->shape().rank() <= dimension || ops[i]->shape().dimensions(dimension) != length) {
      return InstructionError(hlo, "input ", i, " does not have the scan length ", length);
    }
    HLOC_ASSIGN_OR_RETURN(Literal step, NewLiteral(hlo, ScanStepShape(ops[i]->shape(), dimension)));
    input_geometry.push_back(GeometryOf(ops[i]->shape(), dimension));
    steps.push_back(std::move(step));
  }
  std::vector<Literal> carries;
  for (int64_t j = 0; j < num_carries; ++j) carries.push_back(*ops[inputs + j]);

  std::vector<const Literal*> args(ops.size());
  for (int64_t s = 0; s < length; ++s) {
    const int64_t index = hlo.attrs().is_reverse ? length - 1 - s : s;
    for (int64_t i = 0; i < inputs; ++i) {
      CopySliceOut(*ops[i], input_geometry[i], index, &steps[i]);
      args[i] = &steps[i];
    }
    for (int64_t j = 0; j < num_carries; ++j) args[inputs + j] = &carries[j];
    HLOC_ASSIGN_OR_RETURN(Literal r, ctx.Call(*fn, args));
    std::vector<Literal> returned;
    if (r.shape().IsTuple()) {
      returned = std::move(*r.mutable_tuple_elements());
    } else {
      returned.push_back(std::move(r));
    }
    if (static_cast<int64_t>(returned.size()) != outputs + num_carries) {
      return InstructionError(hlo, "to_apply returned ", returned.size(), " values, expected ",
                              outputs + num_carries);
    }
    for (int64_t j = 0; j < outputs; ++j) {
      const SliceGeometry& g = output_geometry[j];
      if (returned[j].shape().element_type() != stacked[j].shape().element_type() ||
          returned[j].size_bytes() != g.outer * g.inner_bytes) {
        return InstructionError(hlo, "to_apply output ", j, " does not fit the result");
      }
      CopySliceIn(returned[j], g, index, &stacked[j]);
    }
    for (int64_t j = 0; j < num_carries; ++j) {
      carries[j] = std::move(returned[outputs + j]);
    }
  }

  for (Literal& carry : carries) stacked.push_back(std::move(carry));
  if (!hlo.shape().IsTuple()) return std::move(stacked[0]);
  return Literal::Tuple(std::move(stacked));
}

}  // namespace eval
}  // namespace hloc
