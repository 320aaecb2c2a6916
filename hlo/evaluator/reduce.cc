// reduce (any dimensions, several operands), map, and recognising reducer
// computations that are a single binary op.
//
// A single-operand reduce whose reducer is add/multiply/max/min/and/or/xor
// runs as a typed loop; float sums (f16, bf16, f32) accumulate in double and
// round once, which is at least as accurate as any summation order XLA's
// backends use. Other reducers call the computation per element, in
// row-major order of the reduced indices, starting from the init value.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/algorithm/container.h"
#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/ops.h"
#include "hlo/evaluator/parallel.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {

std::optional<SimpleReducer> MatchSimpleReducer(const HloComputation& computation) {
  if (computation.num_parameters() != 2) return std::nullopt;
  const HloInstruction* root = computation.root();
  if (root == nullptr || root->operand_count() != 2 || !root->shape().IsScalar()) {
    return std::nullopt;
  }
  switch (root->opcode()) {
    case HloOpcode::kAdd:
    case HloOpcode::kMultiply:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      break;
    default:
      return std::nullopt;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter ||
      a->parameter_number() == b->parameter_number()) {
    return std::nullopt;
  }
  for (const HloInstruction* p : {a, b}) {
    if (p->shape().element_type() != root->shape().element_type()) return std::nullopt;
  }
  return SimpleReducer{root->opcode()};
}

namespace {

// How a reduction walks its input: output element o reads
// base(o) + outer_offsets[j] + i for every j and i < inner_len.
struct ReducePlan {
  std::vector<int64_t> out_dims;          // Kept dims' sizes.
  std::vector<int64_t> kept_strides;      // Input strides of kept dims.
  std::vector<int64_t> outer_offsets;     // Offsets of the non-contiguous reduced part.
  int64_t inner_len = 1;                  // Contiguous reduced run length.
  int64_t out_count = 1;
};

absl::StatusOr<ReducePlan> PlanReduce(const HloInstruction& hlo, const Shape& in,
                                      absl::Span<const int64_t> reduce_dims) {
  ReducePlan p;
  const int64_t rank = in.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t d : reduce_dims) {
    if (d < 0 || d >= rank || reduced[d]) return InstructionError(hlo, "bad reduce dimension ", d);
    reduced[d] = true;
  }
  const std::vector<int64_t> strides = RowMajorStrides(in.dimensions());
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      p.out_dims.push_back(in.dimensions(d));
      p.kept_strides.push_back(strides[d]);
      p.out_count *= in.dimensions(d);
    }
  }
  // The trailing run of reduced dims is contiguous.
  int64_t first_inner = rank;
  while (first_inner > 0 && reduced[first_inner - 1]) --first_inner;
  for (int64_t d = first_inner; d < rank; ++d) p.inner_len *= in.dimensions(d);
  std::vector<int64_t> outer_dims, outer_strides;
  for (int64_t d = 0; d < first_inner; ++d) {
    if (reduced[d]) {
      outer_dims.push_back(in.dimensions(d));
      outer_strides.push_back(strides[d]);
    }
  }
  int64_t outer_count = 1;
  for (int64_t s : outer_dims) outer_count *= s;
  p.outer_offsets.reserve(outer_count);
  if (outer_count > 0) {
    std::vector<int64_t> idx(outer_dims.size(), 0);
    while (true) {
      int64_t off = 0;
      for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * outer_strides[i];
      p.outer_offsets.push_back(off);
      int64_t d = static_cast<int64_t>(idx.size()) - 1;
      for (; d >= 0; --d) {
        if (++idx[d] < outer_dims[d]) break;
        idx[d] = 0;
      }
      if (d < 0) break;
    }
  }
  return p;
}

// Input offset of output element `o` (row-major over the kept dims).
int64_t BaseOffset(const ReducePlan& p, int64_t o) {
  int64_t base = 0;
  for (int64_t d = static_cast<int64_t>(p.out_dims.size()) - 1; d >= 0; --d) {
    base += (o % p.out_dims[d]) * p.kept_strides[d];
    o /= p.out_dims[d];
  }
  return base;
}

template <typename Tag>
absl::Status SimpleReduceTyped(HloOpcode op, const Literal& in, const Literal& init,
                               const ReducePlan& p, Literal* out, int threads) {
  using C = typename Tag::Compute;
  using S = typename Tag::Storage;
  const S* src = reinterpret_cast<const S*>(in.raw());
  S* dst = reinterpret_cast<S*>(out->mutable_raw());
  const C init_v = Tag::Load(reinterpret_cast<const S*>(init.raw())[0]);
  const int64_t per_out = p.inner_len * static_cast<int64_t>(p.outer_offsets.size());
  auto run = [&](auto acc_zero, auto f) {
    using A = decltype(acc_zero);
    ParallelFor(threads, p.out_count, per_out + 1, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const int64_t base = BaseOffset(p, o);
        A acc = static_cast<A>(init_v);
        for (int64_t off : p.outer_offsets) {
          const S* run_ptr = src + base + off;
          for (int64_t i = 0; i < p.inner_len; ++i) acc = f(acc, static_cast<A>(Tag::Load(run_ptr[i])));
        }
        dst[o] = Tag::Store(static_cast<C>(acc));
      }
    });
  };
  if constexpr (kIsPred<Tag>) {
    switch (op) {
      case HloOpcode::kAnd:
      case HloOpcode::kMultiply:
      case HloOpcode::kMinimum: run(bool{}, [](bool a, bool b) { return a && b; }); break;
      case HloOpcode::kOr:
      case HloOpcode::kAdd:
      case HloOpcode::kMaximum: run(bool{}, [](bool a, bool b) { return a || b; }); break;
      case HloOpcode::kXor: run(bool{}, [](bool a, bool b) { return a != b; }); break;
      default: return absl::InternalError("unexpected reducer");
    }
  } else if constexpr (kIsInt<Tag>) {
    using U = std::make_unsigned_t<C>;
    using W = std::conditional_t<(sizeof(C) < 8), uint32_t, uint64_t>;
    switch (op) {
      case HloOpcode::kAdd: run(C{}, [](C a, C b) { return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b))); }); break;
      case HloOpcode::kMultiply:
        run(C{}, [](C a, C b) {
          return static_cast<C>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b)));
        });
        break;
      case HloOpcode::kMaximum: run(C{}, [](C a, C b) { return a < b ? b : a; }); break;
      case HloOpcode::kMinimum: run(C{}, [](C a, C b) { return b < a ? b : a; }); break;
      case HloOpcode::kAnd: run(C{}, [](C a, C b) { return static_cast<C>(a & b); }); break;
      case HloOpcode::kOr: run(C{}, [](C a, C b) { return static_cast<C>(a | b); }); break;
      case HloOpcode::kXor: run(C{}, [](C a, C b) { return static_cast<C>(a ^ b); }); break;
      default: return absl::InternalError("unexpected reducer");
    }
  } else if constexpr (kIsFloat<Tag>) {
    switch (op) {
      case HloOpcode::kAdd: run(double{}, [](double a, double b) { return a + b; }); break;
      case HloOpcode::kMultiply: run(C{}, [](C a, C b) { return a * b; }); break;
      case HloOpcode::kMaximum:
        run(C{}, [](C a, C b) { return std::isnan(a) ? a : (std::isnan(b) ? b : (a < b ? b : a)); });
        break;
      case HloOpcode::kMinimum:
        run(C{}, [](C a, C b) { return std::isnan(a) ? a : (std::isnan(b) ? b : (b < a ? b : a)); });
        break;
      default: return absl::InternalError("unexpected reducer");
    }
  } else {
    switch (op) {
      case HloOpcode::kAdd: run(C{}, [](C a, C b) { return a + b; }); break;
      case HloOpcode::kMultiply: run(C{}, [](C a, C b) { return a * b; }); break;
      default: return absl::InternalError("unexpected reducer");
    }
  }
  return absl::OkStatus();
}

bool SimpleReducerApplies(HloOpcode op, PrimitiveType type) {
  const bool bitwise = op == HloOpcode::kAnd || op == HloOpcode::kOr || op == HloOpcode::kXor;
  if (IsComplex(type)) return op == HloOpcode::kAdd || op == HloOpcode::kMultiply;
  if (IsFloatingPoint(type)) return !bitwise;
  return true;
}

}  // namespace

absl::StatusOr<Literal> EvalReduce(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  if (ops.empty() || ops.size() % 2 != 0) return InstructionError(hlo, "reduce needs 2N operands");
  const size_t n = ops.size() / 2;
  const Shape& in_shape = ops[0]->shape();
  for (size_t i = 0; i < n; ++i) {
    if (!ops[i]->shape().IsArray() || !ops[i]->shape().SameDimensions(in_shape)) {
      return InstructionError(hlo, "reduce inputs differ in shape");
    }
    if (ops[n + i]->element_count() != 1 ||
        ops[n + i]->shape().element_type() != ops[i]->shape().element_type()) {
      return InstructionError(hlo, "init value ", i, " is not a scalar of the input's type");
    }
  }
  HLOC_ASSIGN_OR_RETURN(ReducePlan plan, PlanReduce(hlo, in_shape, hlo.dimensions()));
  const HloComputation* reducer = hlo.to_apply();
  if (reducer == nullptr) return InstructionError(hlo, "reduce has no to_apply computation");
  std::vector<Literal> outs;
  for (size_t i = 0; i < n; ++i) {
    HLOC_ASSIGN_OR_RETURN(
        Literal o, NewLiteral(hlo, Shape(ops[i]->shape().element_type(), plan.out_dims)));
    outs.push_back(std::move(o));
  }
  std::optional<SimpleReducer> simple = MatchSimpleReducer(*reducer);
  if (n == 1 && simple && SimpleReducerApplies(simple->opcode, in_shape.element_type())) {
    HLOC_RETURN_IF_ERROR(DispatchType(in_shape.element_type(), [&](auto tag) {
      return SimpleReduceTyped<decltype(tag)>(simple->opcode, *ops[0], *ops[1], plan, &outs[0],
                                              ctx.num_threads());
    }));
  } else {
    std::vector<Literal> acc(n), args(2 * n);
    std::vector<const Literal*> arg_ptrs(2 * n);
    for (int64_t o = 0; o < plan.out_count; ++o) {
      const int64_t base = BaseOffset(plan, o);
      for (size_t i = 0; i < n; ++i) acc[i] = *ops[n + i];
      for (int64_t off : plan.outer_offsets) {
        for (int64_t j = 0; j < plan.inner_len; ++j) {
          for (size_t i = 0; i < n; ++i) {
            args[i] = std::move(acc[i]);
            args[n + i] = ElementAsScalar(*ops[i], base + off + j);
          }
          for (size_t i = 0; i < 2 * n; ++i) arg_ptrs[i] = &args[i];
          HLOC_ASSIGN_OR_RETURN(Literal r, ctx.Call(*reducer, arg_ptrs));
          if (r.shape().IsTuple()) {
            if (r.tuple_elements().size() != n) {
              return InstructionError(hlo, "reducer returned the wrong number of values");
            }
            for (size_t i = 0; i < n; ++i) acc[i] = std::move((*r.mutable_tuple_elements())[i]);
          } else {
            if (n != 1) return InstructionError(hlo, "reducer must return a tuple");
            acc[0] = std::move(r);
          }
        }
      }
      for (size_t i = 0; i < n; ++i) {
        if (acc[i].shape().element_type() != outs[i].shape().element_type() ||
            acc[i].element_count() != 1) {
          return InstructionError(hlo, "reducer result has the wrong type");
        }
        StoreElement(acc[i], &outs[i], o);
      }
    }
  }
  if (hlo.shape().IsTuple()) return Literal::Tuple(std::move(outs));
  if (n != 1) return InstructionError(hlo, "multi-operand reduce must return a tuple");
  if (hlo.shape().has_layout()) outs[0].set_layout(hlo.shape().layout());
  return std::move(outs[0]);
}

absl::StatusOr<Literal> EvalMap(const HloInstruction& hlo, Operands ops, EvalContext& ctx) {
  const HloComputation* fn = hlo.to_apply();
  if (fn == nullptr) return InstructionError(hlo, "map has no to_apply computation");
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  for (const Literal* op : ops) {
    if (op->element_count() != out.element_count()) {
      return InstructionError(hlo, "map operands differ in size from the result");
    }
  }
  std::vector<Literal> args(ops.size());
  std::vector<const Literal*> arg_ptrs(ops.size());
  for (int64_t e = 0; e < out.element_count(); ++e) {
    for (size_t i = 0; i < ops.size(); ++i) {
      args[i] = ElementAsScalar(*ops[i], e);
      arg_ptrs[i] = &args[i];
    }
    HLOC_ASSIGN_OR_RETURN(Literal r, ctx.Call(*fn, arg_ptrs));
    if (r.shape().element_type() != out.shape().element_type() || r.element_count() != 1) {
      return InstructionError(hlo, "mapped computation returned the wrong type");
    }
    StoreElement(r, &out, e);
  }
  return std::move(out);
}

}  // namespace eval
}  // namespace hloc
