// sort (several operands sorted together along one dimension by a
// comparator computation) and topk. Sorting is always stable, which is one
// of the orders an unstable sort may produce. A comparator that is a single
// LT/GT compare of operand 0's two parameters runs as a typed comparison;
// any other comparator is called per comparison.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/ops.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

template <typename T>
int64_t OrderKey(T v) {
  if constexpr (std::is_same<T, float>::value) {
    int32_t bits;
    std::memcpy(&bits, &v, 4);
    if (bits < 0) bits ^= 0x7fffffff;
    return bits;
  } else if constexpr (std::is_same<T, double>::value) {
    int64_t bits;
    std::memcpy(&bits, &v, 8);
    if (bits < 0) bits ^= INT64_C(0x7fffffffffffffff);
    return bits;
  } else {
    return 0;
  }
}

// Sorts `perm` (indices into one row: element i at base + i*stride) with a
// typed less-than on operand 0.
template <typename Tag>
void TypedSort(const Literal& keys, int64_t base, int64_t stride, bool greater, bool total_order,
               std::vector<int64_t>& perm) {
  using C = typename Tag::Compute;
  const auto* src = reinterpret_cast<const typename Tag::Storage*>(keys.raw());
  auto load = [&](int64_t i) { return Tag::Load(src[base + i * stride]); };
  if constexpr (kIsFloat<Tag>) {
    if (total_order) {
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
        const int64_t ka = OrderKey<C>(load(a)), kb = OrderKey<C>(load(b));
        return greater ? ka > kb : ka < kb;
      });
      return;
    }
  }
  if constexpr (!kIsComplex<Tag>) {
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
      const C va = load(a), vb = load(b);
      return greater ? vb < va : va < vb;
    });
  }
}

}  // namespace

absl::StatusOr<Literal> EvalSort(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  if (ops.empty() || hlo.dimensions().size() != 1) {
    return InstructionError(hlo, "sort needs operands and one dimension");
  }
  const Shape& shape = ops[0]->shape();
  const int64_t dim = hlo.dimensions(0);
  if (dim < 0 || dim >= shape.rank()) return InstructionError(hlo, "bad sort dimension");
  for (const Literal* op : ops) {
    if (!op->shape().SameDimensions(shape)) return InstructionError(hlo, "operands differ in shape");
  }
  const HloComputation* cmp = hlo.to_apply();
  if (cmp == nullptr) return InstructionError(hlo, "sort has no comparator");
  const HloInstruction* root = cmp->root();
  const bool simple =
      root->opcode() == HloOpcode::kCompare && root->operand(0)->opcode() == HloOpcode::kParameter &&
      root->operand(1)->opcode() == HloOpcode::kParameter &&
      ((root->operand(0)->parameter_number() == 0 && root->operand(1)->parameter_number() == 1) ||
       (root->operand(0)->parameter_number() == 1 && root->operand(1)->parameter_number() == 0)) &&
      (root->attrs().comparison_direction == ComparisonDirection::kLt ||
       root->attrs().comparison_direction == ComparisonDirection::kGt) &&
      !IsComplex(shape.element_type()) && shape.element_type() != xla::PRED;
  bool greater = false;
  if (simple) {
    greater = root->attrs().comparison_direction == ComparisonDirection::kGt;
    if (root->operand(0)->parameter_number() == 1) greater = !greater;
  }
  const bool total_order = simple && root->attrs().comparison_type == ComparisonType::kTotalOrder;

  std::vector<Literal> outs;
  for (const Literal* op : ops) outs.push_back(*op);
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  const int64_t n = shape.dimensions(dim), stride = strides[dim];
  const int64_t rows = n == 0 ? 0 : shape.element_count() / n;
  std::vector<int64_t> perm(n);
  std::vector<Literal> args(2 * ops.size());
  std::vector<const Literal*> arg_ptrs(2 * ops.size());
  for (int64_t r = 0; r < rows; ++r) {
    // Base offset of row r: r enumerates all indices except `dim`.
    const int64_t outer = r / stride, inner = r % stride;
    const int64_t base = outer * stride * n + inner;
    std::iota(perm.begin(), perm.end(), 0);
    if (simple) {
      HLOC_RETURN_IF_ERROR(DispatchType(shape.element_type(), [&](auto tag) {
        TypedSort<decltype(tag)>(*ops[0], base, stride, greater, total_order, perm);
        return absl::OkStatus();
      }));
    } else {
      absl::Status status;
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
        if (!status.ok()) return false;
        for (size_t i = 0; i < ops.size(); ++i) {
          args[2 * i] = ElementAsScalar(*ops[i], base + a * stride);
          args[2 * i + 1] = ElementAsScalar(*ops[i], base + b * stride);
        }
        for (size_t i = 0; i < args.size(); ++i) arg_ptrs[i] = &args[i];
        absl::StatusOr<Literal> res = ctx.Call(*cmp, arg_ptrs);
        if (!res.ok()) {
          status = res.status();
          return false;
        }
        return res->element_count() == 1 && res->GetAsInt64(0) != 0;
      });
      HLOC_RETURN_IF_ERROR(status);
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      const int w = ByteWidth(ops[i]->shape().element_type());
      for (int64_t j = 0; j < n; ++j) {
        std::memcpy(outs[i].mutable_raw() + (base + j * stride) * w,
                    ops[i]->raw() + (base + perm[j] * stride) * w, w);
      }
    }
  }
  if (hlo.shape().IsTuple()) return Literal::Tuple(std::move(outs));
  return std::move(outs[0]);
}

absl::StatusOr<Literal> EvalTopK(const HloInstruction& hlo, Operands ops) {
  return TopK(hlo, *ops[0], hlo.attrs().k, hlo.attrs().largest);
}

absl::StatusOr<Literal> TopK(const HloInstruction& hlo, const Literal& in, int64_t k,
                             bool largest) {
  const Shape& shape = in.shape();
  if (shape.rank() < 1 || k < 0 || k > shape.dimensions(shape.rank() - 1) ||
      !hlo.shape().IsTuple() || hlo.shape().tuple_shapes_size() != 2) {
    return InstructionError(hlo, "bad topk operand, k or result shape");
  }
  const int64_t n = shape.dimensions(shape.rank() - 1);
  const int64_t rows = n == 0 ? 0 : shape.element_count() / n;
  HLOC_ASSIGN_OR_RETURN(Literal values, NewLiteral(hlo, hlo.shape().tuple_shapes(0)));
  HLOC_ASSIGN_OR_RETURN(Literal indices, NewLiteral(hlo, hlo.shape().tuple_shapes(1)));
  if (values.element_count() != rows * k || indices.element_count() != rows * k) {
    return InstructionError(hlo, "result shapes do not match k");
  }
  const int w = ByteWidth(shape.element_type());
  std::vector<int64_t> perm(n);
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(perm.begin(), perm.end(), 0);
    HLOC_RETURN_IF_ERROR(DispatchType<false>(shape.element_type(), [&](auto tag) {
      TypedSort<decltype(tag)>(in, r * n, 1, largest, /*total_order=*/true, perm);
      return absl::OkStatus();
    }));
    for (int64_t j = 0; j < k; ++j) {
      std::memcpy(values.mutable_raw() + (r * k + j) * w, in.raw() + (r * n + perm[j]) * w, w);
      indices.SetFromInt64(r * k + j, perm[j]);
    }
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(values));
  parts.push_back(std::move(indices));
  return Literal::Tuple(std::move(parts));
}

}  // namespace eval
}  // namespace hloc
