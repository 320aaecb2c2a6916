#include "passes/algebraic_simplifier.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "hlo/shape.h"
#include "hlo/status_macros.h"

namespace hloc {

bool IsConstantSplat(const HloInstruction* i, double value) {
  while (i->opcode() == HloOpcode::kBroadcast || i->opcode() == HloOpcode::kReshape) {
    i = i->operand(0);
  }
  if (i->opcode() != HloOpcode::kConstant || !i->shape().IsArray()) return false;
  const Literal& literal = i->literal();
  PrimitiveType type = literal.shape().element_type();
  for (int64_t k = 0; k < literal.element_count(); ++k) {
    if (IsComplex(type)) {
      if (literal.GetAsComplex(k) != std::complex<double>(value, 0)) return false;
    } else if (literal.GetAsDouble(k) != value) {
      return false;
    }
  }
  return true;
}

namespace {

// Whether `i`'s value is read only by elementwise ops (not returned by its
// computation): its layout is then free to change, as they index each operand
// through its own layout.
bool ReadOnlyByElementwiseOps(const HloInstruction& i) {
  if (i.parent() != nullptr && i.parent()->root() == &i) return false;
  for (const HloInstruction* user : i.users()) {
    if (!user->IsElementwise()) return false;
  }
  return true;
}

bool IsIdentityPermutation(const std::vector<int64_t>& permutation) {
  for (size_t k = 0; k < permutation.size(); ++k) {
    if (permutation[k] != static_cast<int64_t>(k)) return false;
  }
  return true;
}

// Converting `from` to `to` and back gives the original value for every input.
bool IsExactWidening(PrimitiveType from, PrimitiveType to) {
  if (from == to) return true;
  if (IsFloatingPoint(from) && IsFloatingPoint(to)) {
    auto rank = [](PrimitiveType t) {
      switch (t) {
        case xla::F16: return 1;
        case xla::BF16: return 1;
        case xla::F32: return 2;
        case xla::F64: return 3;
        default: return 0;
      }
    };
    // f16 and bf16 both widen exactly to f32/f64, but not into each other.
    return rank(from) > 0 && rank(to) > rank(from);
  }
  if (IsInteger(from) && IsInteger(to)) {
    int from_bits = BitWidth(from), to_bits = BitWidth(to);
    if (IsSignedInteger(from) == IsSignedInteger(to)) return to_bits >= from_bits;
    return IsUnsignedInteger(from) && to_bits > from_bits;
  }
  if (from == xla::PRED) return IsInteger(to) || IsFloatingPoint(to);
  return false;
}

class Simplifier {
 public:
  explicit Simplifier(HloComputation* computation) : computation_(computation) {}

  // A simpler instruction computing the same value as `i`, or nullptr.
  absl::StatusOr<HloInstruction*> Simplify(HloInstruction* i) {
    const Shape& shape = i->shape();
    auto same = [&](HloInstruction* candidate) -> HloInstruction* {
      return candidate->shape().Compatible(shape) ? candidate : nullptr;
    };
    switch (i->opcode()) {
      case HloOpcode::kAdd:
        if (IsConstantSplat(i->operand(1), 0)) return same(i->operand(0));
        if (IsConstantSplat(i->operand(0), 0)) return same(i->operand(1));
        return nullptr;
      case HloOpcode::kSubtract:
        if (IsConstantSplat(i->operand(1), 0)) return same(i->operand(0));
        return nullptr;
      case HloOpcode::kMultiply:
        if (IsConstantSplat(i->operand(1), 1)) return same(i->operand(0));
        if (IsConstantSplat(i->operand(0), 1)) return same(i->operand(1));
        return nullptr;
      case HloOpcode::kDivide:
        if (IsConstantSplat(i->operand(1), 1)) return same(i->operand(0));
        return nullptr;
      case HloOpcode::kNegate:
      case HloOpcode::kNot:
        if (i->operand(0)->opcode() == i->opcode()) return same(i->operand(0)->operand(0));
        return nullptr;
      case HloOpcode::kCopy:
        if (i->operand(0)->shape() == shape) return i->operand(0);
        return nullptr;
      case HloOpcode::kConvert:
        return SimplifyConvert(i);
      case HloOpcode::kReshape:
        return SimplifyReshape(i);
      case HloOpcode::kBitcast:
        return BitcastAsReshape(i);
      case HloOpcode::kDot:
        return FoldOperandTransposes(i);
      case HloOpcode::kTranspose:
        return SimplifyTranspose(i);
      case HloOpcode::kBroadcast:
        return SimplifyBroadcast(i);
      case HloOpcode::kSlice:
        return SimplifySlice(i);
      case HloOpcode::kConcatenate:
        if (i->operand_count() == 1) return same(i->operand(0));
        return nullptr;
      case HloOpcode::kPad: {
        for (const auto& d : i->attrs().padding_config->dimensions()) {
          if (d.edge_padding_low() || d.edge_padding_high() || d.interior_padding()) return nullptr;
        }
        return same(i->operand(0));
      }
      case HloOpcode::kSetDimensionSize:
        // A static result (tf2xla's top_k and sort set the full size as a
        // constant) holds the operand's elements; only a dynamic one needs
        // the size.
        if (shape.IsArray() && shape.is_static()) return same(i->operand(0));
        return nullptr;
      case HloOpcode::kSelect: {
        const HloInstruction* pred = i->operand(0);
        if (!pred->shape().IsArray() || pred->shape().element_type() != xla::PRED) return nullptr;
        if (IsConstantSplat(pred, 1)) return same(i->operand(1));
        if (IsConstantSplat(pred, 0)) return same(i->operand(2));
        return nullptr;
      }
      default:
        return nullptr;
    }
  }

 private:
  HloInstruction* Add(std::unique_ptr<HloInstruction> instruction, const HloInstruction* like) {
    *instruction->mutable_metadata() = like->metadata();
    return computation_->AddInstruction(std::move(instruction));
  }

  HloInstruction* SimplifyConvert(HloInstruction* i) {
    HloInstruction* operand = i->operand(0);
    PrimitiveType to = i->shape().element_type();
    if (operand->shape().element_type() == to) return operand;
    if (operand->opcode() == HloOpcode::kConvert) {
      HloInstruction* source = operand->operand(0);
      PrimitiveType middle = operand->shape().element_type();
      if (source->shape().element_type() == to &&
          IsExactWidening(to, middle)) {
        return source;
      }
    }
    return nullptr;
  }

  absl::StatusOr<HloInstruction*> SimplifyReshape(HloInstruction* i) {
    HloInstruction* operand = i->operand(0);
    if (operand->shape().SameDimensions(i->shape()) &&
        operand->shape().element_type() == i->shape().element_type()) {
      return operand;
    }
    if (operand->opcode() == HloOpcode::kReshape) {
      return Add(HloInstruction::Create(HloOpcode::kReshape, i->shape(), {operand->operand(0)}), i);
    }
    if (HloInstruction* transpose = TransposeBehind(operand, /*sole_reader=*/true)) {
      return ReshapeBeforeTranspose(i, transpose);
    }
    return nullptr;
  }

  // The transpose that `value` is, looking through copies that only change
  // the layout (hloc stores every array row-major whatever its layout, so
  // such a copy is the identity); with `sole_reader`, only when each step
  // has no other reader. nullptr when there is none.
  static HloInstruction* TransposeBehind(HloInstruction* value, bool sole_reader) {
    while (true) {
      if (sole_reader && value->users().size() != 1) return nullptr;
      if (value->opcode() != HloOpcode::kCopy || value->operand_count() != 1 ||
          !value->operand(0)->shape().Compatible(value->shape())) {
        break;
      }
      value = value->operand(0);
    }
    return value->opcode() == HloOpcode::kTranspose ? value : nullptr;
  }

  // reshape(transpose(x, p)) whose reshape only merges runs of the
  // transpose's dimensions that are runs of x's dimensions, in order, is
  // transpose(reshape(x)):
  //   f32[512,256] reshape(f32[512,4,64] transpose(f32[4,64,512] x), {2,0,1})
  //   = f32[512,256] transpose(f32[256,512] reshape(x)), {1,0}
  // (XLA's weight gradients), which moves the transpose next to the dot
  // reading it, where FoldOperandTransposes removes it.
  HloInstruction* ReshapeBeforeTranspose(HloInstruction* reshape, HloInstruction* transpose) {
    const Shape& mid = transpose->shape();
    const Shape& out = reshape->shape();
    HloInstruction* x = transpose->operand(0);
    if (!mid.IsArray() || !out.IsArray() || !mid.is_static() || !out.is_static() ||
        mid.element_type() != out.element_type() || out.rank() >= mid.rank()) {
      return nullptr;
    }
    const std::vector<int64_t>& p = transpose->dimensions();
    // Result dimension d is transpose dimensions [first[d], first[d + 1]).
    std::vector<int64_t> first;
    int64_t k = 0;
    for (int64_t d = 0; d < out.rank(); ++d) {
      first.push_back(k);
      int64_t size = 1;
      while (k < mid.rank() && size < out.dimensions(d)) {
        if (mid.dimensions(k) < 2) return nullptr;  // Size-1 dimensions group ambiguously.
        if (k > first.back() && p[k] != p[k - 1] + 1) return nullptr;
        size *= mid.dimensions(k++);
      }
      if (size != out.dimensions(d) || k == first.back()) return nullptr;
    }
    if (k != mid.rank()) return nullptr;
    // The groups in x's order: x merged accordingly, then transposed back.
    std::vector<int64_t> order(out.rank());
    for (int64_t d = 0; d < out.rank(); ++d) order[d] = d;
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return p[first[a]] < p[first[b]]; });
    std::vector<int64_t> merged_dims, permutation(out.rank());
    for (int64_t j = 0; j < out.rank(); ++j) {
      merged_dims.push_back(out.dimensions(order[j]));
      permutation[order[j]] = j;
    }
    Shape merged = x->shape();
    merged.set_dimensions(merged_dims);
    if (merged.has_layout()) merged.set_layout(Layout::RowMajor(out.rank()));
    HloInstruction* merge = Add(HloInstruction::Create(HloOpcode::kReshape, merged, {x}), reshape);
    auto result = HloInstruction::Create(HloOpcode::kTranspose, out, {merge});
    result->mutable_attrs()->dimensions = permutation;
    return Add(std::move(result), reshape);
  }

  // dot(transpose(a), b) whose transpose swaps the last two dimensions of a
  // matrix (or of every matrix of a batch whose dimensions lead) is dot(a, b)
  // with that side's contracting and free dimension swapped: gemm libraries
  // read a transposed matrix through its strides, and the transpose kernel
  // goes (`x.T @ y`, weight gradients). Likewise for b.
  HloInstruction* FoldOperandTransposes(HloInstruction* dot) {
    if (dot->operand_count() != 2) return nullptr;
    xla::DotDimensionNumbers dn = dot->attrs().dot_dimension_numbers;
    std::vector<HloInstruction*> operands = {dot->operand(0), dot->operand(1)};
    bool folded = false;
    for (int side = 0; side < 2; ++side) {
      HloInstruction* transpose = TransposeBehind(operands[side], /*sole_reader=*/false);
      if (transpose == nullptr) continue;
      const std::vector<int64_t>& p = transpose->dimensions();
      const int64_t rank = static_cast<int64_t>(p.size());
      auto* batch = side == 0 ? dn.mutable_lhs_batch_dimensions() : dn.mutable_rhs_batch_dimensions();
      auto* contracting =
          side == 0 ? dn.mutable_lhs_contracting_dimensions() : dn.mutable_rhs_contracting_dimensions();
      if (rank < 2 || batch->size() != rank - 2 || contracting->size() != 1) continue;
      bool swap_of_last_two = p[rank - 2] == rank - 1 && p[rank - 1] == rank - 2;
      for (int64_t d = 0; d < rank - 2; ++d) swap_of_last_two &= p[d] == d && (*batch)[d] == d;
      if (!swap_of_last_two) continue;
      contracting->Set(0, p[contracting->Get(0)]);
      operands[side] = transpose->operand(0);
      folded = true;
    }
    if (!folded) return nullptr;
    auto result = dot->CloneWithNewOperands(dot->shape(), operands, ".folded");
    result->mutable_attrs()->dot_dimension_numbers = std::move(dn);
    return Add(std::move(result), dot);
  }

  // A bitcast that keeps the element type and reads its operand as a
  // row-major reshape would (XLA's optimized modules write their reshapes
  // so) is that reshape, which the rules for reshapes (chains, sinking,
  // fusion) then see.
  HloInstruction* BitcastAsReshape(HloInstruction* i) {
    const Shape& from = i->operand(0)->shape();
    const Shape& to = i->shape();
    if (!from.IsArray() || !to.IsArray() || !from.is_static() || !to.is_static() ||
        from.element_type() != to.element_type() || !BitcastIsRowMajorReshape(from, to)) {
      return nullptr;
    }
    return Add(HloInstruction::Create(HloOpcode::kReshape, to, {i->operand(0)}), i);
  }

  // transpose(dot(a, b)) that swaps the two free blocks of the dot's result
  // ([batch, a's free, b's free] -> [batch, b's free, a's free]) is dot(b, a):
  // the same products summed in the same order, with no strided copy of the
  // result (backward passes transpose their weight gradients so).
  HloInstruction* SwapDotOperands(HloInstruction* transpose, HloInstruction* dot) {
    if (dot->operand_count() != 2 || dot->users().size() != 1) return nullptr;
    const xla::DotDimensionNumbers& dn = dot->attrs().dot_dimension_numbers;
    const int64_t batch = dn.lhs_batch_dimensions_size();
    const int64_t contracting = dn.lhs_contracting_dimensions_size();
    const int64_t lhs_free = dot->operand(0)->shape().rank() - batch - contracting;
    const int64_t rhs_free = dot->operand(1)->shape().rank() - batch - contracting;
    if (lhs_free <= 0 || rhs_free <= 0 ||
        static_cast<int64_t>(transpose->dimensions().size()) != batch + lhs_free + rhs_free) {
      return nullptr;
    }
    for (int64_t k = 0; k < batch + lhs_free + rhs_free; ++k) {
      const int64_t expected = k < batch              ? k
                               : k < batch + rhs_free ? k + lhs_free
                                                      : k - rhs_free;
      if (transpose->dimensions(k) != expected) return nullptr;
    }
    // JAX gives its transposes the layout that makes them bitcasts ({0,1} for
    // a matrix): kept, the swapped dot would write the same column-major
    // bytes and every reader would walk them strided. When only elementwise
    // ops read the result (gradient accumulation), it is written row-major.
    Shape shape = transpose->shape();
    if (ReadOnlyByElementwiseOps(*transpose) && shape.IsArray()) {
      shape.set_layout(Layout::RowMajor(shape.rank()));
    }
    auto swapped = dot->CloneWithNewOperands(shape, {dot->operand(1), dot->operand(0)}, ".swapped");
    xla::DotDimensionNumbers numbers;
    *numbers.mutable_lhs_batch_dimensions() = dn.rhs_batch_dimensions();
    *numbers.mutable_rhs_batch_dimensions() = dn.lhs_batch_dimensions();
    *numbers.mutable_lhs_contracting_dimensions() = dn.rhs_contracting_dimensions();
    *numbers.mutable_rhs_contracting_dimensions() = dn.lhs_contracting_dimensions();
    swapped->mutable_attrs()->dot_dimension_numbers = std::move(numbers);
    return Add(std::move(swapped), transpose);
  }

  HloInstruction* SimplifyTranspose(HloInstruction* i) {
    HloInstruction* operand = i->operand(0);
    if (IsIdentityPermutation(i->dimensions())) return operand;
    if (operand->opcode() == HloOpcode::kDot) return SwapDotOperands(i, operand);
    if (operand->opcode() == HloOpcode::kTranspose) {
      // transpose(transpose(x, p), q): output dim k reads x's dim p[q[k]].
      std::vector<int64_t> composed(i->dimensions().size());
      for (size_t k = 0; k < composed.size(); ++k) {
        composed[k] = operand->dimensions(i->dimensions(k));
      }
      auto t = HloInstruction::Create(HloOpcode::kTranspose, i->shape(), {operand->operand(0)});
      t->mutable_attrs()->dimensions = composed;
      return Add(std::move(t), i);
    }
    return nullptr;
  }

  HloInstruction* SimplifyBroadcast(HloInstruction* i) {
    HloInstruction* operand = i->operand(0);
    if (operand->shape().SameDimensions(i->shape()) && IsIdentityPermutation(i->dimensions())) {
      return operand;
    }
    if (operand->opcode() == HloOpcode::kBroadcast) {
      // broadcast(broadcast(x, d1), d2): x's dim k lands at d2[d1[k]].
      std::vector<int64_t> composed;
      for (int64_t d : operand->dimensions()) composed.push_back(i->dimensions(d));
      return Add(HloInstruction::CreateBroadcast(i->shape(), operand->operand(0), composed), i);
    }
    return nullptr;
  }

  HloInstruction* SimplifySlice(HloInstruction* i) {
    HloInstruction* operand = i->operand(0);
    const HloAttributes& a = i->attrs();
    bool full = true;
    for (int64_t d = 0; d < operand->shape().rank(); ++d) {
      full &= a.slice_starts[d] == 0 && a.slice_limits[d] == operand->shape().dimensions(d) &&
              a.slice_strides[d] == 1;
    }
    if (full) return operand;
    if (operand->opcode() != HloOpcode::kSlice) return nullptr;
    // slice(slice(x, s1, l1, t1), s2, l2, t2): start s1 + s2*t1, stride t1*t2.
    const HloAttributes& inner = operand->attrs();
    auto merged = HloInstruction::Create(HloOpcode::kSlice, i->shape(), {operand->operand(0)});
    HloAttributes* m = merged->mutable_attrs();
    for (int64_t d = 0; d < i->shape().rank(); ++d) {
      int64_t stride = inner.slice_strides[d] * a.slice_strides[d];
      int64_t start = inner.slice_starts[d] + a.slice_starts[d] * inner.slice_strides[d];
      m->slice_starts.push_back(start);
      m->slice_strides.push_back(stride);
      // The last element read is start + (n-1)*stride; limit one past it.
      int64_t n = i->shape().dimensions(d);
      m->slice_limits.push_back(n == 0 ? start : start + (n - 1) * stride + 1);
    }
    return Add(std::move(merged), i);
  }

  HloComputation* computation_;
};

}  // namespace

absl::StatusOr<bool> AlgebraicSimplifier::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    Simplifier simplifier(computation);
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (!i->control_predecessors().empty() || !i->control_successors().empty()) continue;
      HLOC_ASSIGN_OR_RETURN(HloInstruction* replacement, simplifier.Simplify(i));
      if (replacement == nullptr || replacement == i) continue;
      // Keep the layout the users were promised, unless they are elementwise
      // ops, which read every operand in its own layout.
      if (replacement->shape() != i->shape() && i->shape().has_layout() &&
          replacement->shape().has_layout() && !ReadOnlyByElementwiseOps(*i)) {
        if (replacement->parent() == computation && replacement->users().empty() &&
            replacement != computation->root()) {
          HLOC_RETURN_IF_ERROR(computation->RemoveInstruction(replacement));
        }
        continue;
      }
      HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(replacement));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
