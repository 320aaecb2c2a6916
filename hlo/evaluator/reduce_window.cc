// reduce-window (several operands, padding, base and window dilation) and
// select-and-scatter. Window positions that fall in padding or in a
// base-dilation hole are skipped (they contribute the init value, which a
// well-formed reducer ignores). Per-dimension tables map (window index,
// output index) to an input index or -1.
#include <algorithm>
#include <cmath>
#include <vector>

#include "hlo/evaluator/element_types.h"
#include "hlo/evaluator/ops.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {
namespace {

struct WindowPlan {
  std::vector<int64_t> in_dims, win_dims, out_dims;
  std::vector<int64_t> in_strides;
  // tables[d][w * out_dims[d] + y]: input index, or -1.
  std::vector<std::vector<int64_t>> tables;
  int64_t window_count = 1, out_count = 1;
};

absl::StatusOr<WindowPlan> PlanWindow(const HloInstruction& hlo, const Shape& in,
                                      const Shape& out) {
  const xla::Window& window = hlo.attrs().window;
  const int64_t rank = in.rank();
  if (window.dimensions_size() != rank || out.rank() != rank) {
    return InstructionError(hlo, "window rank differs from operand rank");
  }
  WindowPlan p;
  p.in_dims = in.dimensions();
  p.in_strides = RowMajorStrides(p.in_dims);
  p.tables.resize(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const xla::WindowDimension& wd = window.dimensions(d);
    const int64_t size = wd.size();
    const int64_t stride = wd.stride() > 0 ? wd.stride() : 1;
    const int64_t wdil = wd.window_dilation() > 0 ? wd.window_dilation() : 1;
    const int64_t bdil = wd.base_dilation() > 0 ? wd.base_dilation() : 1;
    const int64_t padded =
        (p.in_dims[d] > 0 ? (p.in_dims[d] - 1) * bdil + 1 : 0) + wd.padding_low() + wd.padding_high();
    const int64_t span = size > 0 ? (size - 1) * wdil + 1 : 0;
    const int64_t expected = (size <= 0 || padded < span) ? 0 : (padded - span) / stride + 1;
    if (expected != out.dimensions(d)) {
      return InstructionError(hlo, "window gives output size ", expected, " in dimension ", d,
                              ", result has ", out.dimensions(d));
    }
    p.win_dims.push_back(size);
    p.out_dims.push_back(expected);
    p.window_count *= size;
    p.out_count *= expected;
    std::vector<int64_t>& t = p.tables[d];
    t.assign(size * expected, -1);
    for (int64_t w = 0; w < size; ++w) {
      for (int64_t y = 0; y < expected; ++y) {
        int64_t x = y * stride - wd.padding_low() + w * wdil;
        if (x < 0 || x % bdil != 0) continue;
        x /= bdil;
        if (x < p.in_dims[d]) t[w * expected + y] = x;
      }
    }
  }
  return p;
}

// Calls fn(input_linear_index) for each valid window position of output
// index `y`, in row-major window order.
template <typename Fn>
void ForEachWindowElement(const WindowPlan& p, const std::vector<int64_t>& y,
                          std::vector<int64_t>& w, Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(p.win_dims.size());
  if (p.window_count == 0) return;
  std::fill(w.begin(), w.end(), 0);
  while (true) {
    int64_t linear = 0;
    bool valid = true;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t x = p.tables[d][w[d] * p.out_dims[d] + y[d]];
      if (x < 0) {
        valid = false;
        break;
      }
      linear += x * p.in_strides[d];
    }
    if (valid) fn(linear);
    int64_t d = rank - 1;
    for (; d >= 0; --d) {
      if (++w[d] < p.win_dims[d]) break;
      w[d] = 0;
    }
    if (d < 0) return;
  }
}

bool NextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (int64_t d = static_cast<int64_t>(idx.size()) - 1; d >= 0; --d) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

template <typename Tag>
void SimpleReduceWindow(HloOpcode op, const Literal& in, const Literal& init,
                        const WindowPlan& p, Literal* out) {
  using C = typename Tag::Compute;
  using S = typename Tag::Storage;
  const S* src = reinterpret_cast<const S*>(in.raw());
  S* dst = reinterpret_cast<S*>(out->mutable_raw());
  const C init_v = Tag::Load(reinterpret_cast<const S*>(init.raw())[0]);
  auto run = [&](auto f) {
    std::vector<int64_t> y(p.out_dims.size(), 0), w(p.win_dims.size());
    if (p.out_count == 0) return;
    int64_t o = 0;
    do {
      C acc = init_v;
      ForEachWindowElement(p, y, w, [&](int64_t i) { acc = f(acc, Tag::Load(src[i])); });
      dst[o++] = Tag::Store(acc);
    } while (NextIndex(y, p.out_dims));
  };
  if constexpr (kIsPred<Tag>) {
    switch (op) {
      case HloOpcode::kAnd: case HloOpcode::kMultiply: case HloOpcode::kMinimum:
        run([](bool a, bool b) { return a && b; }); break;
      case HloOpcode::kXor: run([](bool a, bool b) { return a != b; }); break;
      default: run([](bool a, bool b) { return a || b; }); break;
    }
  } else if constexpr (kIsComplex<Tag>) {
    if (op == HloOpcode::kMultiply) {
      run([](C a, C b) { return a * b; });
    } else {
      run([](C a, C b) { return a + b; });
    }
  } else {
    switch (op) {
      case HloOpcode::kAdd:
        if constexpr (kIsInt<Tag>) {
          using U = std::make_unsigned_t<C>;
          run([](C a, C b) { return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b))); });
        } else {
          run([](C a, C b) { return a + b; });
        }
        break;
      case HloOpcode::kMultiply: run([](C a, C b) { return static_cast<C>(a * b); }); break;
      case HloOpcode::kMaximum:
        run([](C a, C b) {
          if constexpr (kIsFloat<Tag>) {
            if (std::isnan(a)) return a;
            if (std::isnan(b)) return b;
          }
          return a < b ? b : a;
        });
        break;
      case HloOpcode::kMinimum:
        run([](C a, C b) {
          if constexpr (kIsFloat<Tag>) {
            if (std::isnan(a)) return a;
            if (std::isnan(b)) return b;
          }
          return b < a ? b : a;
        });
        break;
      default:
        if constexpr (kIsInt<Tag>) {
          if (op == HloOpcode::kAnd) run([](C a, C b) { return static_cast<C>(a & b); });
          if (op == HloOpcode::kOr) run([](C a, C b) { return static_cast<C>(a | b); });
          if (op == HloOpcode::kXor) run([](C a, C b) { return static_cast<C>(a ^ b); });
        }
        break;
    }
  }
}

}  // namespace

absl::StatusOr<Literal> EvalReduceWindow(const HloInstruction& hlo, Operands ops,
                                         EvalContext& ctx) {
  if (ops.empty() || ops.size() % 2 != 0) {
    return InstructionError(hlo, "reduce-window needs 2N operands");
  }
  const size_t n = ops.size() / 2;
  const Shape& in_shape = ops[0]->shape();
  for (size_t i = 0; i < n; ++i) {
    if (!ops[i]->shape().IsArray() || !ops[i]->shape().SameDimensions(in_shape) ||
        ops[n + i]->element_count() != 1 ||
        ops[n + i]->shape().element_type() != ops[i]->shape().element_type()) {
      return InstructionError(hlo, "inputs or init values do not match");
    }
  }
  const Shape& out0 = hlo.shape().IsTuple() ? hlo.shape().tuple_shapes(0) : hlo.shape();
  HLOC_ASSIGN_OR_RETURN(WindowPlan plan, PlanWindow(hlo, in_shape, out0));
  const HloComputation* reducer = hlo.to_apply();
  if (reducer == nullptr) return InstructionError(hlo, "reduce-window has no to_apply");
  std::vector<Literal> outs;
  for (size_t i = 0; i < n; ++i) {
    HLOC_ASSIGN_OR_RETURN(Literal o,
                          NewLiteral(hlo, Shape(ops[i]->shape().element_type(), plan.out_dims)));
    outs.push_back(std::move(o));
  }
  std::optional<SimpleReducer> simple = MatchSimpleReducer(*reducer);
  const PrimitiveType type = in_shape.element_type();
  const bool bitwise = simple && (simple->opcode == HloOpcode::kAnd ||
                                  simple->opcode == HloOpcode::kOr ||
                                  simple->opcode == HloOpcode::kXor);
  const bool simple_ok =
      n == 1 && simple &&
      (IsComplex(type) ? (simple->opcode == HloOpcode::kAdd || simple->opcode == HloOpcode::kMultiply)
                       : !(IsFloatingPoint(type) && bitwise));
  if (simple_ok) {
    HLOC_RETURN_IF_ERROR(DispatchType(type, [&](auto tag) {
      SimpleReduceWindow<decltype(tag)>(simple->opcode, *ops[0], *ops[1], plan, &outs[0]);
      return absl::OkStatus();
    }));
  } else if (plan.out_count > 0) {
    std::vector<int64_t> y(plan.out_dims.size(), 0), w(plan.win_dims.size());
    std::vector<Literal> acc(n), args(2 * n);
    std::vector<const Literal*> arg_ptrs(2 * n);
    int64_t o = 0;
    absl::Status status;
    do {
      for (size_t i = 0; i < n; ++i) acc[i] = *ops[n + i];
      ForEachWindowElement(plan, y, w, [&](int64_t e) {
        if (!status.ok()) return;
        for (size_t i = 0; i < n; ++i) {
          args[i] = std::move(acc[i]);
          args[n + i] = ElementAsScalar(*ops[i], e);
        }
        for (size_t i = 0; i < 2 * n; ++i) arg_ptrs[i] = &args[i];
        absl::StatusOr<Literal> r = ctx.Call(*reducer, arg_ptrs);
        if (!r.ok()) {
          status = r.status();
          return;
        }
        if (r->shape().IsTuple()) {
          for (size_t i = 0; i < n && i < r->tuple_elements().size(); ++i) {
            acc[i] = std::move((*r->mutable_tuple_elements())[i]);
          }
        } else {
          acc[0] = std::move(*r);
        }
      });
      HLOC_RETURN_IF_ERROR(status);
      for (size_t i = 0; i < n; ++i) {
        if (acc[i].element_count() != 1 ||
            acc[i].shape().element_type() != outs[i].shape().element_type()) {
          return InstructionError(hlo, "reducer result has the wrong type");
        }
        StoreElement(acc[i], &outs[i], o);
      }
      ++o;
    } while (NextIndex(y, plan.out_dims));
  }
  if (hlo.shape().IsTuple()) return Literal::Tuple(std::move(outs));
  return std::move(outs[0]);
}

absl::StatusOr<Literal> EvalSelectAndScatter(const HloInstruction& hlo, Operands ops,
                                             EvalContext& ctx) {
  const Literal& operand = *ops[0];
  const Literal& source = *ops[1];
  const Literal& init = *ops[2];
  if (hlo.called_computations().size() != 2) {
    return InstructionError(hlo, "needs select and scatter computations");
  }
  const HloComputation* select = hlo.called_computations()[0];
  const HloComputation* scatter = hlo.called_computations()[1];
  HLOC_ASSIGN_OR_RETURN(WindowPlan plan, PlanWindow(hlo, operand.shape(), source.shape()));
  HLOC_ASSIGN_OR_RETURN(Literal out, NewLiteral(hlo, hlo.shape()));
  const int w = ByteWidth(out.shape().element_type());
  if (init.element_count() != 1 || out.element_count() != operand.element_count()) {
    return InstructionError(hlo, "init value or result shape does not fit");
  }
  for (int64_t i = 0; i < out.element_count(); ++i) {
    std::memcpy(out.mutable_raw() + i * w, init.raw(), w);
  }
  // Fast select: compare(p0, p1) with a fixed direction.
  const HloInstruction* sroot = select->root();
  const bool fast_select =
      sroot->opcode() == HloOpcode::kCompare && sroot->operand(0)->opcode() == HloOpcode::kParameter &&
      sroot->operand(1)->opcode() == HloOpcode::kParameter &&
      sroot->operand(0)->parameter_number() == 0 && sroot->operand(1)->parameter_number() == 1 &&
      sroot->attrs().comparison_type != ComparisonType::kTotalOrder &&
      !IsComplex(operand.shape().element_type());
  std::optional<SimpleReducer> fast_scatter = MatchSimpleReducer(*scatter);
  std::vector<int64_t> y(plan.out_dims.size(), 0), wi(plan.win_dims.size());
  if (plan.out_count == 0) return std::move(out);
  int64_t s = 0;
  absl::Status status;
  do {
    int64_t selected = -1;
    Literal selected_value;
    ForEachWindowElement(plan, y, wi, [&](int64_t e) {
      if (!status.ok()) return;
      if (selected < 0) {
        selected = e;
        return;
      }
      bool keep;
      if (fast_select) {
        // Integers compare as integers: 64-bit values past 2^53 are not
        // distinct as doubles. Every float type is exact as a double.
        const ComparisonDirection d = sroot->attrs().comparison_direction;
        const PrimitiveType type = operand.shape().element_type();
        if (type == xla::U64) {
          keep = CompareValues(d, operand.GetAsUint64(selected), operand.GetAsUint64(e));
        } else if (IsInteger(type) || type == xla::PRED) {
          keep = CompareValues(d, operand.GetAsInt64(selected), operand.GetAsInt64(e));
        } else {
          keep = CompareValues(d, operand.GetAsDouble(selected), operand.GetAsDouble(e));
        }
      } else {
        Literal a = ElementAsScalar(operand, selected), b = ElementAsScalar(operand, e);
        const Literal* args[] = {&a, &b};
        absl::StatusOr<Literal> r = ctx.Call(*select, args);
        if (!r.ok()) {
          status = r.status();
          return;
        }
        keep = r->element_count() == 1 && r->GetAsInt64(0) != 0;
      }
      if (!keep) selected = e;
    });
    HLOC_RETURN_IF_ERROR(status);
    if (selected >= 0) {
      if (fast_scatter && fast_scatter->opcode == HloOpcode::kAdd &&
          IsFloatingPoint(out.shape().element_type())) {
        out.SetFromDouble(selected, out.GetAsDouble(selected) + source.GetAsDouble(s));
      } else {
        Literal a = ElementAsScalar(out, selected), b = ElementAsScalar(source, s);
        const Literal* args[] = {&a, &b};
        HLOC_ASSIGN_OR_RETURN(Literal r, ctx.Call(*scatter, args));
        StoreElement(r, &out, selected);
      }
    }
    ++s;
  } while (NextIndex(y, plan.out_dims));
  return std::move(out);
}

}  // namespace eval
}  // namespace hloc
