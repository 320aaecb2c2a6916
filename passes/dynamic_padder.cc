#include "passes/dynamic_padder.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace {

using expanders::ExpansionBuilder;

// The lines of kDynamicResultAttribute.
constexpr absl::string_view kResultLine = "result ";
constexpr absl::string_view kParameterLine = "parameter ";
constexpr absl::string_view kCheckLine = "check ";

// Per dimension, the s32 scalar holding its runtime size; null: the bound.
using Sizes = std::vector<HloInstruction*>;
// A tuple-valued instruction's sized array leaves, by their index path
// ({1} the second element, {0, 2} the third element of the first).
using LeafSizes = std::map<std::vector<int64_t>, Sizes>;

void MakeStatic(Shape* shape) {
  if (shape->IsTuple()) {
    for (Shape& e : *shape->mutable_tuple_shapes()) MakeStatic(&e);
    return;
  }
  for (int64_t d = 0; d < shape->rank(); ++d) shape->set_dynamic_dimension(d, false);
}

bool HasDynamicShape(const HloComputation& computation) {
  for (const HloInstruction* i : computation.instructions()) {
    if (!i->shape().is_static()) return true;
    if (i->opcode() == HloOpcode::kSetDimensionSize ||
        i->opcode() == HloOpcode::kGetDimensionSize) {
      return true;
    }
  }
  return false;
}

bool AnySize(const Sizes& sizes) {
  return std::any_of(sizes.begin(), sizes.end(), [](HloInstruction* s) { return s != nullptr; });
}

absl::Status Refuse(const HloInstruction& i, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("dynamic-padder: instruction %", i.name(), " (",
                                               HloOpcodeName(i.opcode()), "): ", why));
}

// One dynamic dimension of a (possibly tuple) shape: the array leaf at
// `path`, its dimension and bound.
struct DynamicDim {
  std::vector<int64_t> path;
  int64_t dimension;
  int64_t bound;
};

void CollectDynamicDims(const Shape& shape, std::vector<int64_t>* path,
                        std::vector<DynamicDim>* out) {
  if (shape.IsTuple()) {
    for (int64_t k = 0; k < shape.tuple_shapes_size(); ++k) {
      path->push_back(k);
      CollectDynamicDims(shape.tuple_shapes(k), path, out);
      path->pop_back();
    }
    return;
  }
  if (!shape.IsArray()) return;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.is_dynamic_dimension(d)) out->push_back({*path, d, shape.dimensions(d)});
  }
}

std::vector<DynamicDim> DynamicDims(const Shape& shape) {
  std::vector<DynamicDim> dims;
  std::vector<int64_t> path;
  CollectDynamicDims(shape, &path, &dims);
  return dims;
}

bool HasUnbounded(const std::vector<DynamicDim>& dims) {
  return std::any_of(dims.begin(), dims.end(),
                     [](const DynamicDim& d) { return d.bound == Shape::kUnboundedSize; });
}

// Pads one computation: the entry (RunEntry), or a copy of a loop body,
// loop condition or branch made by PadCallee, whose parameter's sizes come
// in beside it.
class ComputationPadder {
 public:
  explicit ComputationPadder(HloComputation* computation) : computation_(computation) {}

  // The entry: parameters, instructions, then the root (result, sizes,
  // checks).
  absl::Status RunEntry();
  // Every instruction, in post order (sizes of parameters set beforehand).
  absl::Status PadInstructions();
  const std::vector<std::string>& checks() const { return check_messages_; }
  // Two per check: the value and the limit it must not exceed.
  const std::vector<HloInstruction*>& check_values() const { return checks_; }
  // The entry parameters' shapes before the pass; empty when none was dynamic.
  const std::vector<Shape>& declared_parameters() const { return declared_parameters_; }

 private:
  Sizes& SizesOf(const HloInstruction* i) {
    Sizes& s = sizes_[i];
    if (s.empty() && i->shape().IsArray()) s.assign(i->shape().rank(), nullptr);
    return s;
  }
  // x with the elements at index >= size along `dimension` replaced by `fill`.
  HloInstruction* Mask(ExpansionBuilder& b, HloInstruction* x, int64_t dimension,
                       HloInstruction* size, HloInstruction* fill) {
    const std::vector<int64_t>& dims = x->shape().dimensions();
    HloInstruction* iota = b.Iota(xla::S32, dims, dimension);
    HloInstruction* valid = b.Compare(iota, b.Splat(size, dims), ComparisonDirection::kLt);
    return b.Select(valid, x, b.Splat(fill, dims));
  }
  HloInstruction* SizeOrBound(ExpansionBuilder& b, HloInstruction* x, int64_t d) {
    HloInstruction* s = SizesOf(x)[d];
    return s != nullptr ? s : b.IndexScalar(xla::S32, x->shape().dimensions(d));
  }
  // Whether `i` (an array or a tuple) has a runtime-sized dimension.
  bool Sized(const HloInstruction* i) const {
    if (auto it = sizes_.find(i); it != sizes_.end() && AnySize(it->second)) return true;
    auto it = leaf_sizes_.find(i);
    return it != leaf_sizes_.end() && !it->second.empty();
  }
  // The sizes of the array leaf at `path` in `value` (all null: the bound).
  Sizes SizesAt(const HloInstruction* value, const std::vector<int64_t>& path) {
    if (path.empty()) return SizesOf(value);
    if (auto it = leaf_sizes_.find(value); it != leaf_sizes_.end()) {
      if (auto leaf = it->second.find(path); leaf != it->second.end()) return leaf->second;
    }
    const Shape* shape = &value->shape();
    for (int64_t k : path) shape = &shape->tuple_shapes(k);
    return Sizes(shape->IsArray() ? shape->rank() : 0, nullptr);
  }
  // Records the sized leaves of `from` (an array or a tuple) as the element
  // `index` of the tuple-valued `to`.
  void AddElementSizes(const HloInstruction* from, int64_t index, LeafSizes* to) {
    if (from->shape().IsArray()) {
      const Sizes& s = SizesOf(from);
      if (AnySize(s)) (*to)[{index}] = s;
      return;
    }
    auto it = leaf_sizes_.find(from);
    if (it == leaf_sizes_.end()) return;
    for (const auto& [path, s] : it->second) {
      std::vector<int64_t> nested = {index};
      nested.insert(nested.end(), path.begin(), path.end());
      (*to)[nested] = s;
    }
  }
  void AddCheck(ExpansionBuilder& b, HloInstruction* value, HloInstruction* limit,
                std::string message) {
    checks_.push_back(value);
    checks_.push_back(limit);
    check_messages_.push_back(std::move(message));
    (void)b;
  }

  // The runtime size of `dim` of `value` (its bound when not tracked).
  HloInstruction* SizeAt(ExpansionBuilder& b, const HloInstruction* value, const DynamicDim& dim) {
    HloInstruction* s = SizesAt(value, dim.path)[dim.dimension];
    return s != nullptr ? s : b.IndexScalar(xla::S32, dim.bound);
  }
  // Records `sizes[j]` as the size of dims[j] of `value`.
  void SetSizes(const HloInstruction* value, const std::vector<DynamicDim>& dims,
                const std::vector<HloInstruction*>& sizes) {
    for (size_t j = 0; j < dims.size(); ++j) {
      const DynamicDim& dim = dims[j];
      Sizes* leaf;
      if (dim.path.empty()) {
        leaf = &SizesOf(value);
      } else {
        leaf = &leaf_sizes_[value][dim.path];
        if (leaf->empty()) {
          const Shape* shape = &value->shape();
          for (int64_t k : dim.path) shape = &shape->tuple_shapes(k);
          leaf->assign(shape->rank(), nullptr);
        }
      }
      (*leaf)[dim.dimension] = sizes[j];
    }
  }

  // Dimension `d` of `i`'s result takes the size `size` of one of its
  // operands: `*slot` keeps the first such size; a second, different one
  // must equal it at run time (the interpreter refuses operands of
  // different runtime sizes), a check.
  void Unify(ExpansionBuilder& b, const HloInstruction& i, int64_t d, HloInstruction* size,
             HloInstruction** slot) {
    if (size == nullptr || size == *slot) return;
    if (*slot == nullptr) {
      *slot = size;
      return;
    }
    AddCheck(b, b.Binary(HloOpcode::kSubtract, *slot, size), b.IndexScalar(xla::S32, 0),
             absl::StrCat("instruction %", i.name(), " (", HloOpcodeName(i.opcode()),
                          "): operands have different runtime sizes in dimension ", d));
  }

  // Every operand's size of each dimension but `skip` where `sizes` has a
  // runtime size must equal it, a static operand's being its bound (sort
  // and concatenate take operands of one runtime shape): checks.
  void RequireEqualSizes(ExpansionBuilder& b, const HloInstruction& i, const Sizes& sizes,
                         int64_t skip = -1) {
    for (const HloInstruction* operand : i.operands()) {
      const Sizes s = SizesOf(operand);
      const int64_t rank = static_cast<int64_t>(std::min(sizes.size(), s.size()));
      for (int64_t d = 0; d < rank; ++d) {
        if (d == skip || sizes[d] == nullptr || s[d] == sizes[d]) continue;
        HloInstruction* own =
            s[d] != nullptr ? s[d] : b.IndexScalar(xla::S32, operand->shape().dimensions(d));
        AddCheck(b, b.Binary(HloOpcode::kSubtract, sizes[d], own), b.IndexScalar(xla::S32, 0),
                 absl::StrCat("instruction %", i.name(), " (", HloOpcodeName(i.opcode()),
                              "): operands have different runtime sizes in dimension ", d));
      }
    }
  }

  // Rewrites one instruction; `out` gets its result's sizes.
  absl::Status Visit(HloInstruction* i, const Shape& declared, Sizes* out);
  absl::Status VisitReduce(HloInstruction* i, Sizes* out);
  absl::Status VisitDot(HloInstruction* i, Sizes* out);
  absl::Status VisitReshape(HloInstruction* i, const Shape& declared, Sizes* out);
  absl::Status VisitSlice(HloInstruction* i, const Shape& declared, Sizes* out);
  absl::Status VisitGather(HloInstruction* i, Sizes* out);
  absl::Status VisitReverse(HloInstruction* i, Sizes* out);
  absl::Status VisitSort(HloInstruction* i, Sizes* out);
  absl::Status VisitTupleOps(HloInstruction* i, Sizes* out);
  absl::Status VisitWhile(HloInstruction* i, const Shape& declared);
  absl::Status VisitConditional(HloInstruction* i, const Shape& declared);
  // A padded copy of a loop's or branch's computation (one parameter): it
  // takes `parameter`, which is (the parameter at its bound, its sizes...)
  // when the parameter is dynamic or `tuple_parameter`, and `padder` holds
  // the sizes and checks made inside.
  struct PaddedCallee {
    HloComputation* computation = nullptr;
    HloInstruction* parameter = nullptr;
    std::unique_ptr<ComputationPadder> padder;
  };
  absl::StatusOr<PaddedCallee> PadCallee(ExpansionBuilder& b, const HloInstruction& caller,
                                         const HloComputation& callee, bool tuple_parameter);
  // Makes the copy return (its result, the result's sizes at `dims`...,
  // `tail`...), or its result alone when both are empty.
  absl::Status FinishCallee(PaddedCallee& callee, const std::vector<DynamicDim>& dims,
                            const std::vector<HloInstruction*>& tail);
  // `value` followed by its sizes at `dims` and `tail`, as one tuple
  // (`value` alone when there are none).
  HloInstruction* WithSizes(ExpansionBuilder& b, HloInstruction* value,
                            const std::vector<DynamicDim>& dims,
                            const std::vector<HloInstruction*>& tail = {});
  // `padded` (a while or conditional built from padded callees, returning
  // (value, sizes..., check pairs...) when `wrapped`) standing for `i` (of
  // declared shape `declared`): its value, sizes recorded, checks added.
  absl::Status ReplaceByPadded(ExpansionBuilder& b, HloInstruction* i, const Shape& declared,
                               HloInstruction* padded, bool wrapped,
                               const std::vector<std::string>& check_messages);
  absl::Status FinishRoot(const Shape& declared);
  // Each dynamic entry parameter at its bound, its sizes new trailing s32
  // parameters.
  absl::Status PadParameters();
  absl::Status AddSizeParameters(HloInstruction* p, const Shape& shape,
                                 std::vector<int64_t>* path, int64_t* next_number);

  HloComputation* computation_;
  std::vector<Shape> declared_parameters_;
  absl::flat_hash_map<const HloInstruction*, Sizes> sizes_;
  absl::flat_hash_map<const HloInstruction*, LeafSizes> leaf_sizes_;
  std::vector<HloInstruction*> checks_;
  std::vector<std::string> check_messages_;
  std::vector<HloInstruction*> dead_;
};

bool IsElementwise(HloOpcode op) {
  return IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == HloOpcode::kSelect ||
         op == HloOpcode::kClamp || op == HloOpcode::kMap;
}

absl::Status ComputationPadder::Visit(HloInstruction* i, const Shape& declared, Sizes* out) {
  ExpansionBuilder b(computation_, i);
  const HloOpcode op = i->opcode();
  if (op == HloOpcode::kParameter) return absl::OkStatus();  // PadParameters sized it.
  if (op == HloOpcode::kSetDimensionSize) {
    HloInstruction* x = i->operand(0);
    HloInstruction* n = i->operand(1);
    const int64_t d = i->dimensions(0);
    HloInstruction* limit = SizeOrBound(b, x, d);
    AddCheck(b, n, limit,
             absl::StrCat("instruction %", i->name(), " (set-dimension-size): size is outside [0, ",
                          SizesOf(x)[d] != nullptr ? "the operand's runtime size" : "its bound",
                          " ", x->shape().dimensions(d), "]"));
    *out = SizesOf(x);
    (*out)[d] = n;
    HloInstruction* copy = b.Unary(HloOpcode::kCopy, x);
    HLOC_RETURN_IF_ERROR(b.status());
    sizes_[copy] = *out;
    HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(copy));
    dead_.push_back(i);
    return absl::OkStatus();
  }
  if (op == HloOpcode::kGetDimensionSize) {
    HloInstruction* size = SizeOrBound(b, i->operand(0), i->dimensions(0));
    HloInstruction* s32 = b.ConvertIfNeeded(size, i->shape().element_type());
    HLOC_RETURN_IF_ERROR(b.status());
    HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(s32));
    dead_.push_back(i);
    return absl::OkStatus();
  }
  if (op == HloOpcode::kConstant || op == HloOpcode::kIota) return absl::OkStatus();
  if (op == HloOpcode::kTuple || op == HloOpcode::kGetTupleElement) return VisitTupleOps(i, out);
  if (op == HloOpcode::kWhile) return VisitWhile(i, declared);
  if (op == HloOpcode::kConditional) return VisitConditional(i, declared);
  if (op == HloOpcode::kSort) return VisitSort(i, out);
  if (op == HloOpcode::kReduce) return VisitReduce(i, out);
  if (!i->shape().IsArray()) {
    return Refuse(*i, "a tuple-valued instruction with runtime-sized elements and no rule for it "
                      "(tuple, get-tuple-element, sort and reduce have one)");
  }
  const int64_t rank = i->shape().rank();
  out->assign(rank, nullptr);
  if (IsElementwise(op)) {
    for (HloInstruction* operand : i->operands()) {
      if (operand->shape().rank() != rank) continue;
      const Sizes& s = SizesOf(operand);
      for (int64_t d = 0; d < rank; ++d) Unify(b, *i, d, s[d], &(*out)[d]);
    }
    return b.status();
  }
  switch (op) {
    case HloOpcode::kBroadcast: {
      const Sizes& s = SizesOf(i->operand(0));
      for (size_t k = 0; k < s.size(); ++k) (*out)[i->dimensions(k)] = s[k];
      return absl::OkStatus();
    }
    case HloOpcode::kTranspose: {
      const Sizes& s = SizesOf(i->operand(0));
      for (int64_t d = 0; d < rank; ++d) (*out)[d] = s[i->dimensions(d)];
      return absl::OkStatus();
    }
    case HloOpcode::kReverse: return VisitReverse(i, out);
    case HloOpcode::kDot: return VisitDot(i, out);
    case HloOpcode::kReshape: return VisitReshape(i, declared, out);
    case HloOpcode::kSlice: return VisitSlice(i, declared, out);
    case HloOpcode::kGather: return VisitGather(i, out);
    case HloOpcode::kConcatenate: {
      const int64_t axis = i->dimensions(0);
      HloInstruction* size = nullptr;
      int64_t static_part = 0;
      for (int64_t k = 0; k < i->operand_count(); ++k) {
        const Sizes& s = SizesOf(i->operand(k));
        for (int64_t d = 0; d < rank; ++d) {
          if (d != axis && (*out)[d] == nullptr) (*out)[d] = s[d];
        }
        if (s[axis] == nullptr) {
          static_part += i->operand(k)->shape().dimensions(axis);
        } else if (k + 1 != i->operand_count()) {
          return Refuse(*i, "only the last operand may be runtime-sized along the axis");
        } else {
          size = s[axis];
        }
      }
      RequireEqualSizes(b, *i, *out, axis);
      if (size != nullptr) {
        (*out)[axis] = b.Binary(HloOpcode::kAdd, size, b.IndexScalar(xla::S32, static_part));
      }
      return b.status();
    }
    case HloOpcode::kPad: {
      const Sizes& s = SizesOf(i->operand(0));
      const xla::PaddingConfig& config = i->attrs().padding_config;
      for (int64_t d = 0; d < rank; ++d) {
        if (s[d] == nullptr) continue;
        const auto& pd = config.dimensions(d);
        if (pd.edge_padding_high() != 0 || pd.interior_padding() != 0 || pd.edge_padding_low() < 0) {
          return Refuse(*i, "pads a runtime-sized dimension other than at its low edge");
        }
        (*out)[d] = pd.edge_padding_low() == 0
                        ? s[d]
                        : b.Binary(HloOpcode::kAdd, s[d],
                                   b.IndexScalar(xla::S32, pd.edge_padding_low()));
      }
      return b.status();
    }
    default:
      return Refuse(*i, "has runtime-sized operands or result and the pass has no rule for it");
  }
}

// The identity of `reducer` for `type` when the reducer is add, multiply,
// maximum, minimum, and or or of its two scalar parameters: what padding
// must hold for the reduction to see only the valid elements whatever the
// init value (masking with a non-identity init would count it once per
// padding element). nullopt for any other reducer or type.
std::optional<Literal> ReducerIdentity(const HloComputation& reducer, PrimitiveType type) {
  if (reducer.num_parameters() != 2 || reducer.root() == nullptr) return std::nullopt;
  const HloInstruction* root = reducer.root();
  if (root->operand_count() != 2 || !root->shape().IsArray() || root->shape().rank() != 0) {
    return std::nullopt;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter ||
      a == b) {
    return std::nullopt;
  }
  const bool is_float = IsFloatingPoint(type) && !IsNarrowFloat(type);
  const bool is_int = (IsSignedInteger(type) || IsUnsignedInteger(type)) && BitWidth(type) >= 8 &&
                      !(IsUnsignedInteger(type) && BitWidth(type) == 64);
  const bool is_pred = type == xla::PRED;
  if (!is_float && !is_int && !is_pred) return std::nullopt;
  Literal identity(Shape::Scalar(type));
  const int bits = is_pred ? 1 : BitWidth(type);
  const bool is_signed = IsSignedInteger(type);
  // The integer extremes of `type` (pred: 0 and 1).
  const int64_t lowest = is_pred || !is_signed ? 0
                         : bits == 64          ? INT64_MIN
                                               : -(int64_t{1} << (bits - 1));
  const int64_t highest = is_pred ? 1
                          : is_signed ? (bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1)
                                      : (int64_t{1} << bits) - 1;
  switch (root->opcode()) {
    case HloOpcode::kAdd:
    case HloOpcode::kOr: identity.SetFromInt64(0, 0); break;
    case HloOpcode::kMultiply: identity.SetFromInt64(0, 1); break;
    case HloOpcode::kAnd:
      if (is_float) return std::nullopt;
      identity.SetFromInt64(0, is_pred ? 1 : (is_signed ? -1 : highest));
      break;
    case HloOpcode::kMaximum:
      if (is_float) {
        identity.SetFromDouble(0, -std::numeric_limits<double>::infinity());
      } else {
        identity.SetFromInt64(0, lowest);
      }
      break;
    case HloOpcode::kMinimum:
      if (is_float) {
        identity.SetFromDouble(0, std::numeric_limits<double>::infinity());
      } else {
        identity.SetFromInt64(0, highest);
      }
      break;
    default: return std::nullopt;
  }
  if (root->opcode() == HloOpcode::kOr && is_float) return std::nullopt;
  return identity;
}

absl::Status ComputationPadder::VisitReduce(HloInstruction* i, Sizes* out) {
  ExpansionBuilder b(computation_, i);
  const int64_t inputs = i->operand_count() / 2;
  const std::vector<int64_t>& reduced = i->dimensions();
  // One input: padding holds the reducer's identity where it has a known
  // one, else the init value (several inputs: the init values, which a
  // variadic reducer such as argmax's treats as its identity).
  std::optional<Literal> identity;
  if (inputs == 1) identity = ReducerIdentity(*i->to_apply(), i->shape().element_type());
  for (int64_t k = 0; k < inputs; ++k) {
    HloInstruction* x = i->operand(k);
    const Sizes s = SizesOf(x);
    HloInstruction* masked = x;
    HloInstruction* fill = nullptr;
    for (int64_t d : reduced) {
      if (s[d] == nullptr) continue;
      if (fill == nullptr) {
        fill = identity.has_value() ? b.Constant(*identity) : i->operand(inputs + k);
      }
      masked = Mask(b, masked, d, s[d], fill);
    }
    HLOC_RETURN_IF_ERROR(b.status());
    if (masked != x) i->ReplaceOperandWith(k, masked);
  }
  const Sizes s = SizesOf(i->operand(0));
  Sizes kept;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(s[d]);
  }
  if (i->shape().IsTuple()) {
    out->clear();
    if (AnySize(kept)) {
      LeafSizes& leaves = leaf_sizes_[i];
      for (int64_t k = 0; k < inputs; ++k) leaves[{k}] = kept;
    }
    return absl::OkStatus();
  }
  *out = kept;
  return absl::OkStatus();
}

absl::Status ComputationPadder::VisitDot(HloInstruction* i, Sizes* out) {
  ExpansionBuilder b(computation_, i);
  const xla::DotDimensionNumbers& dn = i->attrs().dot_dimension_numbers;
  HloInstruction* lhs = i->operand(0);
  HloInstruction* rhs = i->operand(1);
  const Sizes ls = SizesOf(lhs), rs = SizesOf(rhs);
  HloInstruction* masked_lhs = lhs;
  HloInstruction* masked_rhs = rhs;
  for (int k = 0; k < dn.lhs_contracting_dimensions_size(); ++k) {
    const int64_t ld = dn.lhs_contracting_dimensions(k), rd = dn.rhs_contracting_dimensions(k);
    HloInstruction* size = ls[ld] != nullptr ? ls[ld] : rs[rd];
    if (size == nullptr) continue;
    masked_lhs = Mask(b, masked_lhs, ld, size, b.Scalar(lhs->shape().element_type(), 0));
    masked_rhs = Mask(b, masked_rhs, rd, size, b.Scalar(rhs->shape().element_type(), 0));
  }
  HLOC_RETURN_IF_ERROR(b.status());
  if (masked_lhs != lhs) i->ReplaceOperandWith(0, masked_lhs);
  if (masked_rhs != rhs) i->ReplaceOperandWith(1, masked_rhs);
  auto contains = [](const auto& list, int64_t d) {
    return std::find(list.begin(), list.end(), d) != list.end();
  };
  out->clear();
  for (int k = 0; k < dn.lhs_batch_dimensions_size(); ++k) {
    HloInstruction* size = ls[dn.lhs_batch_dimensions(k)];
    Unify(b, *i, k, rs[dn.rhs_batch_dimensions(k)], &size);
    out->push_back(size);
  }
  for (int64_t d = 0; d < static_cast<int64_t>(ls.size()); ++d) {
    if (!contains(dn.lhs_batch_dimensions(), d) && !contains(dn.lhs_contracting_dimensions(), d)) {
      out->push_back(ls[d]);
    }
  }
  for (int64_t d = 0; d < static_cast<int64_t>(rs.size()); ++d) {
    if (!contains(dn.rhs_batch_dimensions(), d) && !contains(dn.rhs_contracting_dimensions(), d)) {
      out->push_back(rs[d]);
    }
  }
  return absl::OkStatus();
}

absl::Status ComputationPadder::VisitReshape(HloInstruction* i, const Shape& declared, Sizes* out) {
  ExpansionBuilder b(computation_, i);
  const Sizes& s = SizesOf(i->operand(0));
  if (!AnySize(s)) return absl::OkStatus();
  const Shape& in = i->operand(0)->shape();
  const Shape& result = i->shape();
  // Only static unit dimensions inserted or removed ([<=5] -> [1,<=5]): the
  // other dimensions correspond one to one and keep their sizes.
  std::vector<int64_t> in_kept, out_kept;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (in.dimensions(d) != 1 || s[d] != nullptr) in_kept.push_back(d);
  }
  for (int64_t d = 0; d < result.rank(); ++d) {
    if (result.dimensions(d) != 1 || declared.is_dynamic_dimension(d)) out_kept.push_back(d);
  }
  bool unit_only = in_kept.size() == out_kept.size();
  for (size_t k = 0; unit_only && k < in_kept.size(); ++k) {
    unit_only = in.dimensions(in_kept[k]) == result.dimensions(out_kept[k]);
  }
  if (unit_only) {
    for (size_t k = 0; k < in_kept.size(); ++k) (*out)[out_kept[k]] = s[in_kept[k]];
    return absl::OkStatus();
  }
  int64_t in_inner = 1, out_inner = 1;
  for (int64_t d = 1; d < in.rank(); ++d) in_inner *= in.dimensions(d);
  for (int64_t d = 1; d < result.rank(); ++d) out_inner *= result.dimensions(d);
  for (int64_t d = 1; d < in.rank(); ++d) {
    if (s[d] != nullptr) return Refuse(*i, "reshapes a runtime-sized dimension other than the major one");
  }
  if (result.rank() == 0 || out_inner == 0 || in_inner % out_inner != 0) {
    return Refuse(*i, "the major runtime-sized dimension does not map onto the result's major one");
  }
  const int64_t factor = in_inner / out_inner;
  (*out)[0] = factor == 1 ? s[0] : b.Binary(HloOpcode::kMultiply, s[0], b.IndexScalar(xla::S32, factor));
  return b.status();
}

absl::Status ComputationPadder::VisitSlice(HloInstruction* i, const Shape& declared, Sizes* out) {
  ExpansionBuilder b(computation_, i);
  const Sizes& s = SizesOf(i->operand(0));
  const HloAttributes& a = i->attrs();
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (s[d] == nullptr) continue;
    const int64_t start = a.slice_starts[d], limit = a.slice_limits[d];
    const int64_t stride = a.slice_strides.empty() ? 1 : a.slice_strides[d];
    if (!declared.is_dynamic_dimension(d)) {
      AddCheck(b, b.IndexScalar(xla::S32, limit), s[d],
               absl::StrCat("instruction %", i->name(), " (slice): the static slice of dimension ",
                            d, " reads past its runtime size"));
      continue;
    }
    if (stride != 1) return Refuse(*i, "a strided slice of a runtime-sized dimension");
    HloInstruction* end = b.Binary(HloOpcode::kMinimum, s[d], b.IndexScalar(xla::S32, limit));
    HloInstruction* size = b.Binary(HloOpcode::kSubtract, end, b.IndexScalar(xla::S32, start));
    (*out)[d] = b.Binary(HloOpcode::kMaximum, size, b.IndexScalar(xla::S32, 0));
  }
  return b.status();
}

// Reversing a sized dimension of bound B and size n: the operand first
// rotated by n (x' = concat(x, x)[n : n + B]) so that its n valid elements
// end at B; reversed, they start at 0.
absl::Status ComputationPadder::VisitReverse(HloInstruction* i, Sizes* out) {
  ExpansionBuilder b(computation_, i);
  HloInstruction* x = i->operand(0);
  *out = SizesOf(x);
  const std::vector<int64_t>& dims = x->shape().dimensions();
  std::vector<HloInstruction*> starts(dims.size(), nullptr);
  HloInstruction* doubled = x;
  bool rotated = false;
  for (int64_t d : i->dimensions()) {
    if ((*out)[d] == nullptr) continue;
    doubled = b.Concatenate({doubled, doubled}, d);
    starts[d] = (*out)[d];
    rotated = true;
  }
  if (!rotated) return absl::OkStatus();
  for (HloInstruction*& start : starts) {
    if (start == nullptr) start = b.IndexScalar(xla::S32, 0);
  }
  HloInstruction* shifted = b.DynamicSlice(doubled, starts, dims);
  HLOC_RETURN_IF_ERROR(b.status());
  i->ReplaceOperandWith(0, shifted);
  return absl::OkStatus();
}

// Sorting along a sized dimension: one more operand keys the padding
// (0 valid, 1 past the size) and the comparator puts the lower key first,
// the original comparator deciding between equal keys; the padding ends up
// last, the valid elements sorted before it, and every operand (values
// sorted with keys, argsort's iota) is permuted alike.
absl::Status ComputationPadder::VisitSort(HloInstruction* i, Sizes* out) {
  ExpansionBuilder b(computation_, i);
  const int64_t n = i->operand_count();
  const int64_t d = i->dimensions(0);
  // The operands share their dimensions; any of them may carry the sizes
  // (argsort's iota carries none).
  out->assign(i->operand(0)->shape().rank(), nullptr);
  for (HloInstruction* operand : i->operands()) {
    const Sizes& s = SizesOf(operand);
    for (size_t k = 0; k < out->size() && k < s.size(); ++k) {
      if ((*out)[k] == nullptr) (*out)[k] = s[k];
    }
  }
  RequireEqualSizes(b, *i, *out);
  HLOC_RETURN_IF_ERROR(b.status());
  if ((*out)[d] == nullptr) {
    if (i->shape().IsTuple()) {
      if (AnySize(*out)) {
        for (int64_t k = 0; k < n; ++k) leaf_sizes_[i][{k}] = *out;
      }
      out->clear();
    }
    return absl::OkStatus();
  }
  const std::vector<int64_t>& dims = i->operand(0)->shape().dimensions();
  HloInstruction* valid = b.Compare(b.Iota(xla::S32, dims, d), b.Splat((*out)[d], dims),
                                    ComparisonDirection::kLt);
  HloInstruction* key = b.Select(valid, b.Splat(b.IndexScalar(xla::S32, 0), dims),
                                 b.Splat(b.IndexScalar(xla::S32, 1), dims));
  HloComputation* comparator = b.NewComputation("padding_last");
  ExpansionBuilder c = b.ForComputation(comparator);
  const Shape s32 = Shape::Scalar(xla::S32);
  std::vector<HloInstruction*> pairs;
  for (int64_t k = 0; k < n; ++k) {
    const Shape element = Shape::Scalar(i->operand(k)->shape().element_type());
    pairs.push_back(c.Parameter(2 * k, element, absl::StrCat("lhs", k)));
    pairs.push_back(c.Parameter(2 * k + 1, element, absl::StrCat("rhs", k)));
  }
  HloInstruction* ka = c.Parameter(2 * n, s32, "lhs_key");
  HloInstruction* kb = c.Parameter(2 * n + 1, s32, "rhs_key");
  HloInstruction* original = c.Inline(*i->to_apply(), pairs);
  HloInstruction* root = c.Select(c.Compare(ka, kb, ComparisonDirection::kNe),
                                  c.Compare(ka, kb, ComparisonDirection::kLt), original);
  HLOC_RETURN_IF_ERROR(c.status());
  comparator->set_root(root);
  std::vector<HloInstruction*> operands(i->operands().begin(), i->operands().end());
  operands.push_back(key);
  HloInstruction* sort = b.Build(HloOpcode::kSort, operands, [&](HloInstruction& built) {
    *built.mutable_attrs() = i->attrs();
    built.AppendCalledComputation(comparator);
  });
  HloInstruction* sorted;
  if (i->shape().IsArray()) {
    sorted = b.GetTupleElement(sort, 0);
    HLOC_RETURN_IF_ERROR(b.status());
    sizes_[sorted] = *out;
  } else {
    std::vector<HloInstruction*> elements;
    for (int64_t k = 0; k < n; ++k) elements.push_back(b.GetTupleElement(sort, k));
    sorted = b.Tuple(elements);
    HLOC_RETURN_IF_ERROR(b.status());
    for (int64_t k = 0; k < n; ++k) {
      sizes_[elements[k]] = *out;
      leaf_sizes_[sorted][{k}] = *out;
    }
    out->clear();
  }
  HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(sorted));
  dead_.push_back(i);
  return absl::OkStatus();
}

// A tuple's sized leaves are its operands'; a get-tuple-element's, the
// element's.
absl::Status ComputationPadder::VisitTupleOps(HloInstruction* i, Sizes* out) {
  if (i->opcode() == HloOpcode::kTuple) {
    LeafSizes leaves;
    for (int64_t k = 0; k < i->operand_count(); ++k) AddElementSizes(i->operand(k), k, &leaves);
    if (!leaves.empty()) leaf_sizes_[i] = std::move(leaves);
    return absl::OkStatus();
  }
  const int64_t index = i->tuple_index();
  if (i->shape().IsArray()) {
    *out = SizesAt(i->operand(0), {index});
    return absl::OkStatus();
  }
  auto it = leaf_sizes_.find(i->operand(0));
  if (it == leaf_sizes_.end()) return absl::OkStatus();
  LeafSizes leaves;
  for (const auto& [path, s] : it->second) {
    if (path.size() > 1 && path[0] == index) {
      leaves[std::vector<int64_t>(path.begin() + 1, path.end())] = s;
    }
  }
  if (!leaves.empty()) leaf_sizes_[i] = std::move(leaves);
  return absl::OkStatus();
}

HloInstruction* ComputationPadder::WithSizes(ExpansionBuilder& b, HloInstruction* value,
                                             const std::vector<DynamicDim>& dims,
                                             const std::vector<HloInstruction*>& tail) {
  if (dims.empty() && tail.empty()) return value;
  std::vector<HloInstruction*> parts = {value};
  for (const DynamicDim& dim : dims) parts.push_back(SizeAt(b, value, dim));
  parts.insert(parts.end(), tail.begin(), tail.end());
  return b.Tuple(parts);
}

absl::StatusOr<ComputationPadder::PaddedCallee> ComputationPadder::PadCallee(
    ExpansionBuilder& b, const HloInstruction& caller, const HloComputation& callee,
    bool tuple_parameter) {
  if (callee.num_parameters() != 1) {
    return Refuse(caller, absl::StrCat("calls ", callee.name(), " with ",
                                       callee.num_parameters(), " parameters"));
  }
  const Shape declared_parameter = callee.parameter(0)->shape();
  const std::vector<DynamicDim> in = DynamicDims(declared_parameter);
  if (HasUnbounded(in) || HasUnbounded(DynamicDims(callee.root()->shape()))) {
    return Refuse(caller, absl::StrCat(callee.name(), " has an unbounded dynamic dimension"));
  }
  PaddedCallee padded;
  padded.computation = b.NewComputation(absl::StrCat(callee.name(), ".padded"));
  ExpansionBuilder c = b.ForComputation(padded.computation);
  Shape parameter = declared_parameter;
  MakeStatic(&parameter);
  const bool wrapped = tuple_parameter || !in.empty();
  if (wrapped) {
    std::vector<Shape> parts = {parameter};
    parts.resize(1 + in.size(), Shape::Scalar(xla::S32));
    parameter = Shape::Tuple(std::move(parts));
  }
  padded.parameter = c.Parameter(0, parameter, "padded");
  HloInstruction* value = wrapped ? c.GetTupleElement(padded.parameter, 0) : padded.parameter;
  std::vector<HloInstruction*> sizes;
  for (size_t j = 0; j < in.size(); ++j) {
    sizes.push_back(c.GetTupleElement(padded.parameter, 1 + j));
  }
  HloInstruction* root = c.Inline(callee, {value});
  HLOC_RETURN_IF_ERROR(c.status());
  padded.computation->set_root(root);
  padded.padder = std::make_unique<ComputationPadder>(padded.computation);
  padded.padder->SetSizes(value, in, sizes);
  HLOC_RETURN_IF_ERROR(padded.padder->PadInstructions());
  return padded;
}

absl::Status ComputationPadder::FinishCallee(PaddedCallee& callee,
                                             const std::vector<DynamicDim>& dims,
                                             const std::vector<HloInstruction*>& tail) {
  if (dims.empty() && tail.empty()) return absl::OkStatus();
  ExpansionBuilder r(callee.computation, callee.computation->root());
  HloInstruction* root = callee.padder->WithSizes(r, callee.computation->root(), dims, tail);
  HLOC_RETURN_IF_ERROR(r.status());
  callee.computation->set_root(root);
  return absl::OkStatus();
}

absl::Status ComputationPadder::ReplaceByPadded(ExpansionBuilder& b, HloInstruction* i,
                                                const Shape& declared, HloInstruction* padded,
                                                bool wrapped,
                                                const std::vector<std::string>& check_messages) {
  const std::vector<DynamicDim> dims = DynamicDims(declared);
  HloInstruction* value = wrapped ? b.GetTupleElement(padded, 0) : padded;
  std::vector<HloInstruction*> sizes;
  for (size_t j = 0; j < dims.size(); ++j) sizes.push_back(b.GetTupleElement(padded, 1 + j));
  const int64_t first_check = 1 + static_cast<int64_t>(dims.size());
  for (size_t c = 0; c < check_messages.size(); ++c) {
    AddCheck(b, b.GetTupleElement(padded, first_check + 2 * c),
             b.GetTupleElement(padded, first_check + 2 * c + 1), check_messages[c]);
  }
  HLOC_RETURN_IF_ERROR(b.status());
  SetSizes(value, dims, sizes);
  HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(value));
  dead_.push_back(i);
  return absl::OkStatus();
}

// Appends `count` s32 scalars to the tuple shape of `parameter`.
void AppendScalars(HloInstruction* parameter, size_t count) {
  std::vector<Shape> parts = parameter->shape().tuple_shapes();
  parts.resize(parts.size() + count, Shape::Scalar(xla::S32));
  *parameter->mutable_shape() = Shape::Tuple(std::move(parts));
}

// A while whose carried value holds runtime-sized arrays carries their
// sizes too: (value, sizes..., check pairs...) through a padded condition
// and body; the body returns the sizes its result has. A size check in the
// body is carried as a (value, limit) pair that keeps the first failing
// one, and checked after the loop.
absl::Status ComputationPadder::VisitWhile(HloInstruction* i, const Shape& declared) {
  ExpansionBuilder b(computation_, i);
  const std::vector<DynamicDim> dims = DynamicDims(declared);
  if (HasUnbounded(dims)) return Refuse(*i, "carries an unbounded dynamic dimension");
  const HloComputation& condition_callee = *i->called_computations()[0];
  HLOC_ASSIGN_OR_RETURN(PaddedCallee condition, PadCallee(b, *i, condition_callee, true));
  HLOC_ASSIGN_OR_RETURN(PaddedCallee body, PadCallee(b, *i, *i->called_computations()[1], true));
  if (!condition.padder->checks().empty()) {
    return Refuse(*i, absl::StrCat("a runtime size check in its condition ",
                                   condition_callee.name(), " (",
                                   condition.padder->checks().front(), ")"));
  }
  const std::vector<std::string> messages = body.padder->checks();
  const std::vector<HloInstruction*>& values = body.padder->check_values();
  AppendScalars(body.parameter, values.size());
  AppendScalars(condition.parameter, values.size());
  ExpansionBuilder c(body.computation, body.computation->root());
  std::vector<HloInstruction*> carried;
  const int64_t first_check = 1 + static_cast<int64_t>(dims.size());
  for (size_t k = 0; k < messages.size(); ++k) {
    HloInstruction* old_value = c.GetTupleElement(body.parameter, first_check + 2 * k);
    HloInstruction* old_limit = c.GetTupleElement(body.parameter, first_check + 2 * k + 1);
    HloInstruction* failed =
        c.Binary(HloOpcode::kOr,
                 c.Compare(old_value, c.IndexScalar(xla::S32, 0), ComparisonDirection::kLt),
                 c.Compare(old_value, old_limit, ComparisonDirection::kGt));
    carried.push_back(c.Select(failed, old_value, values[2 * k]));
    carried.push_back(c.Select(failed, old_limit, values[2 * k + 1]));
  }
  HLOC_RETURN_IF_ERROR(c.status());
  HLOC_RETURN_IF_ERROR(FinishCallee(body, dims, carried));
  std::vector<HloInstruction*> passing(values.size(), b.IndexScalar(xla::S32, 0));
  HloInstruction* init = i->operand(0);
  std::vector<HloInstruction*> parts = {init};
  for (const DynamicDim& dim : dims) parts.push_back(SizeAt(b, init, dim));
  parts.insert(parts.end(), passing.begin(), passing.end());
  HloInstruction* loop = b.Build(
      HloOpcode::kWhile, {b.Tuple(parts)},
      [&](HloInstruction& built) {
        *built.mutable_attrs() = i->attrs();
        built.AppendCalledComputation(condition.computation);
        built.AppendCalledComputation(body.computation);
      },
      Shape(), "padded");
  HLOC_RETURN_IF_ERROR(b.status());
  return ReplaceByPadded(b, i, declared, loop, /*wrapped=*/true, messages);
}

// A conditional: each branch operand with its sizes, each branch padded to
// return its result's sizes and one (value, limit) pair per size check of
// any branch ((0, 0), which passes, for the other branches' checks).
absl::Status ComputationPadder::VisitConditional(HloInstruction* i, const Shape& declared) {
  ExpansionBuilder b(computation_, i);
  const std::vector<HloComputation*> callees = i->called_computations();
  if (i->operand_count() != static_cast<int64_t>(callees.size()) + 1) {
    return Refuse(*i, "operands do not match its branches");
  }
  std::vector<HloInstruction*> operands = {i->operand(0)};
  std::vector<PaddedCallee> branches;
  std::vector<std::string> messages;
  for (size_t k = 0; k < callees.size(); ++k) {
    HLOC_ASSIGN_OR_RETURN(PaddedCallee branch, PadCallee(b, *i, *callees[k], false));
    const std::vector<std::string>& checks = branch.padder->checks();
    messages.insert(messages.end(), checks.begin(), checks.end());
    branches.push_back(std::move(branch));
    const std::vector<DynamicDim> dims = DynamicDims(callees[k]->parameter(0)->shape());
    operands.push_back(WithSizes(b, i->operand(1 + k), dims));
  }
  const std::vector<DynamicDim> out = DynamicDims(declared);
  size_t first = 0;
  for (PaddedCallee& branch : branches) {
    ExpansionBuilder c(branch.computation, branch.computation->root());
    const std::vector<HloInstruction*>& values = branch.padder->check_values();
    std::vector<HloInstruction*> tail(2 * messages.size(), nullptr);
    for (HloInstruction*& slot : tail) slot = c.IndexScalar(xla::S32, 0);
    for (size_t v = 0; v < values.size(); ++v) tail[2 * first + v] = values[v];
    first += values.size() / 2;
    HLOC_RETURN_IF_ERROR(c.status());
    HLOC_RETURN_IF_ERROR(FinishCallee(branch, out, tail));
  }
  HloInstruction* conditional = b.Build(
      HloOpcode::kConditional, operands,
      [&](HloInstruction& built) {
        *built.mutable_attrs() = i->attrs();
        for (const PaddedCallee& branch : branches) {
          built.AppendCalledComputation(branch.computation);
        }
      },
      Shape(), "padded");
  HLOC_RETURN_IF_ERROR(b.status());
  return ReplaceByPadded(b, i, declared, conditional, !out.empty() || !messages.empty(),
                         messages);
}

absl::Status ComputationPadder::VisitGather(HloInstruction* i, Sizes* out) {
  if (AnySize(SizesOf(i->operand(0)))) {
    return Refuse(*i, "gathers from a runtime-sized operand");
  }
  const xla::GatherDimensionNumbers& dn = i->attrs().gather_dimension_numbers;
  const Sizes& s = SizesOf(i->operand(1));
  Sizes batch;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (d != dn.index_vector_dim()) batch.push_back(s[d]);
  }
  size_t next = 0;
  const auto& offsets = dn.offset_dims();
  for (int64_t d = 0; d < i->shape().rank(); ++d) {
    if (std::find(offsets.begin(), offsets.end(), d) != offsets.end()) continue;
    if (next < batch.size()) (*out)[d] = batch[next++];
  }
  return absl::OkStatus();
}

absl::Status ComputationPadder::FinishRoot(const Shape& declared) {
  HloInstruction* root = computation_->root();
  ExpansionBuilder b(computation_, root);
  std::vector<HloInstruction*> sizes;
  auto add_leaf = [&](const Sizes& s, const Shape& shape) {
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (!shape.is_dynamic_dimension(d)) continue;
      sizes.push_back(s[d] != nullptr ? s[d] : b.IndexScalar(xla::S32, shape.dimensions(d)));
    }
  };
  if (declared.IsArray()) {
    add_leaf(SizesOf(root), declared);
  } else if (declared.IsTuple() && !declared.is_static()) {
    for (int64_t k = 0; k < declared.tuple_shapes_size(); ++k) {
      const Shape& element = declared.tuple_shapes(k);
      if (element.IsTuple() && !element.is_static()) {
        return Refuse(*root, "a nested tuple with runtime-sized elements in the entry result");
      }
      if (element.IsArray()) add_leaf(SizesAt(root, {k}), element);
    }
  }
  HloInstruction* new_root = b.Tuple({root, b.Tuple(sizes), b.Tuple(checks_)});
  HLOC_RETURN_IF_ERROR(b.status());
  computation_->set_root(new_root);
  return absl::OkStatus();
}

// Walks the array leaves of parameter `p` (`shape` at `path`), adding a
// trailing s32 parameter per dynamic dimension.
absl::Status ComputationPadder::AddSizeParameters(HloInstruction* p, const Shape& shape,
                                            std::vector<int64_t>* path, int64_t* next_number) {
  if (shape.IsTuple()) {
    for (int64_t k = 0; k < shape.tuple_shapes_size(); ++k) {
      path->push_back(k);
      HLOC_RETURN_IF_ERROR(AddSizeParameters(p, shape.tuple_shapes(k), path, next_number));
      path->pop_back();
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray() || shape.is_static()) return absl::OkStatus();
  Sizes sizes(shape.rank(), nullptr);
  std::string prefix = p->name();
  for (int64_t k : *path) absl::StrAppend(&prefix, ".", k);
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (!shape.is_dynamic_dimension(d)) continue;
    if (shape.dimensions(d) == Shape::kUnboundedSize) {
      return Refuse(*p, absl::StrCat("an entry parameter of unbounded dynamic shape ",
                                     p->shape().ToString(false), " has no bound to pad to"));
    }
    sizes[d] = computation_->AddInstruction(HloInstruction::CreateParameter(
        (*next_number)++, Shape::Scalar(xla::S32), absl::StrCat(prefix, ".size", d)));
  }
  if (path->empty()) {
    sizes_[p] = std::move(sizes);
  } else {
    leaf_sizes_[p][*path] = std::move(sizes);
  }
  return absl::OkStatus();
}

absl::Status ComputationPadder::PadParameters() {
  const std::vector<HloInstruction*> parameters = computation_->parameters();
  bool any = false;
  for (const HloInstruction* p : parameters) any = any || !p->shape().is_static();
  if (!any) return absl::OkStatus();
  int64_t next_number = static_cast<int64_t>(parameters.size());
  for (HloInstruction* p : parameters) {
    declared_parameters_.push_back(p->shape());
    if (p->shape().is_static()) continue;
    std::vector<int64_t> path;
    HLOC_RETURN_IF_ERROR(AddSizeParameters(p, p->shape(), &path, &next_number));
    MakeStatic(p->mutable_shape());
  }
  return absl::OkStatus();
}

// Whether `i` is a loop or branch whose computations have dynamic shapes
// (a while of static shape may still size values inside its body).
bool CallsDynamic(const HloInstruction& i) {
  if (i.opcode() != HloOpcode::kWhile && i.opcode() != HloOpcode::kConditional) return false;
  for (const HloComputation* c : i.called_computations()) {
    if (HasDynamicShape(*c)) return true;
  }
  return false;
}

absl::Status ComputationPadder::PadInstructions() {
  for (HloInstruction* i : computation_->MakeInstructionPostOrder()) {
    const Shape declared = i->shape();
    bool sized_operand = false;
    for (HloInstruction* operand : i->operands()) sized_operand = sized_operand || Sized(operand);
    const HloOpcode op = i->opcode();
    const bool size_op = op == HloOpcode::kSetDimensionSize || op == HloOpcode::kGetDimensionSize;
    if (!sized_operand && declared.is_static() && !size_op && !CallsDynamic(*i)) continue;
    MakeStatic(i->mutable_shape());
    Sizes out;
    HLOC_RETURN_IF_ERROR(Visit(i, declared, &out));
    if (AnySize(out)) sizes_[i] = std::move(out);
  }
  for (HloInstruction* i : dead_) HLOC_RETURN_IF_ERROR(computation_->RemoveInstruction(i));
  dead_.clear();
  return absl::OkStatus();
}

absl::Status ComputationPadder::RunEntry() {
  const Shape declared_root = computation_->root()->shape();
  HLOC_RETURN_IF_ERROR(PadParameters());
  HLOC_RETURN_IF_ERROR(PadInstructions());
  return FinishRoot(declared_root);
}

// set-dimension-size whose result dimension is static, and
// get-dimension-size of a static dimension, in any computation: the operand
// and the bound (TF emits both around ops whose size is known).
absl::StatusOr<bool> RemoveStaticSizeOps(HloModule& module) {
  bool changed = false;
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      const bool set = i->opcode() == HloOpcode::kSetDimensionSize;
      const bool get = i->opcode() == HloOpcode::kGetDimensionSize;
      if (!set && !get) continue;
      if (i->dimensions().size() != 1 || !i->operand(0)->shape().IsArray()) continue;
      const int64_t d = i->dimensions(0);
      if (set && i->shape().IsArray() && !i->shape().is_dynamic_dimension(d) &&
          i->operand(0)->shape().is_static()) {
        HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(i->operand(0)));
      } else if (get && !i->operand(0)->shape().is_dynamic_dimension(d)) {
        ExpansionBuilder b(c, i);
        HloInstruction* bound = b.Convert(
            b.IndexScalar(xla::S32, i->operand(0)->shape().dimensions(d)), i->shape().element_type());
        HLOC_RETURN_IF_ERROR(b.status());
        HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(bound));
      } else {
        continue;
      }
      HLOC_RETURN_IF_ERROR(c->RemoveInstruction(i));
      changed = true;
    }
  }
  return changed;
}

// The computations the entry calls, directly or not, and the entry.
absl::flat_hash_set<const HloComputation*> Reachable(const HloModule& module) {
  absl::flat_hash_set<const HloComputation*> seen = {module.entry()};
  std::vector<const HloComputation*> stack = {module.entry()};
  while (!stack.empty()) {
    const HloComputation* c = stack.back();
    stack.pop_back();
    for (const HloInstruction* i : c->instructions()) {
      for (const HloComputation* callee : i->called_computations()) {
        if (seen.insert(callee).second) stack.push_back(callee);
      }
    }
  }
  return seen;
}

// " (called by %w (while))": the first instruction calling `callee`, for
// messages.
std::string CalledBy(const HloModule& module, const HloComputation* callee) {
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      const auto& called = i->called_computations();
      if (std::find(called.begin(), called.end(), callee) != called.end()) {
        return absl::StrCat(" (called by %", i->name(), " (", HloOpcodeName(i->opcode()), "))");
      }
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<bool> DynamicPadder::Run(HloModule& module) {
  if (module.entry() == nullptr) return false;
  HLOC_ASSIGN_OR_RETURN(const bool removed, RemoveStaticSizeOps(module));
  bool dynamic = false;
  for (const HloComputation* c : Reachable(module)) dynamic = dynamic || HasDynamicShape(*c);
  if (!dynamic) return removed;
  if (module.config().input_output_alias.entries_size() > 0) {
    return absl::UnimplementedError(
        "dynamic-padder: a module with dynamic shapes and input/output aliasing");
  }
  const Shape declared = module.entry()->root()->shape();
  ComputationPadder padder(module.entry());
  HLOC_RETURN_IF_ERROR(padder.RunEntry());
  // The loops and branches now call padded copies; the originals go.
  std::vector<HloComputation*> unreachable;
  const absl::flat_hash_set<const HloComputation*> reachable = Reachable(module);
  for (HloComputation* c : module.computations()) {
    if (!reachable.contains(c)) unreachable.push_back(c);
  }
  HLOC_RETURN_IF_ERROR(module.RemoveComputations(unreachable));
  for (HloComputation* c : module.computations()) {
    if (c == module.entry() || !HasDynamicShape(*c)) continue;
    return absl::UnimplementedError(absl::StrCat(
        "dynamic-padder: computation ", c->name(), CalledBy(module, c),
        " has dynamic shapes; runtime sizes are carried into while loops and conditional "
        "branches only"));
  }
  HloModuleConfig* config = module.mutable_config();
  if (config->entry_computation_layout.has_value()) {
    ProgramShape& layout = *config->entry_computation_layout;
    layout.result = module.entry()->root()->shape();
    // Parameters at their bounds, the sizes appended.
    const std::vector<HloInstruction*>& parameters = module.entry()->parameters();
    for (size_t k = 0; k < parameters.size(); ++k) {
      if (k < layout.parameters.size()) {
        MakeStatic(&layout.parameters[k]);
      } else {
        layout.parameters.push_back(parameters[k]->shape());
        if (!layout.parameter_names.empty()) {
          layout.parameter_names.push_back(parameters[k]->name());
        }
      }
    }
  }
  // One line each: "result SHAPE", "parameter NAME SHAPE" (every entry
  // parameter as declared, when one was dynamic), "check MESSAGE".
  std::vector<std::string> lines = {
      absl::StrCat(kResultLine, declared.ToString(/*print_layout=*/false))};
  for (size_t k = 0; k < padder.declared_parameters().size(); ++k) {
    lines.push_back(absl::StrCat(kParameterLine, module.entry()->parameter(k)->name(), " ",
                                 padder.declared_parameters()[k].ToString(/*print_layout=*/false)));
  }
  for (const std::string& check : padder.checks()) lines.push_back(absl::StrCat(kCheckLine, check));
  (*config->frontend_attributes.mutable_map())[kDynamicResultAttribute] =
      absl::StrJoin(lines, "\n");
  return true;
}

absl::StatusOr<std::optional<DynamicResultContract>> FindDynamicResultContract(
    const HloModule& module) {
  const auto& map = module.config().frontend_attributes.map();
  auto it = map.find(kDynamicResultAttribute);
  if (it == map.end()) return std::nullopt;
  DynamicResultContract contract;
  bool have_result = false;
  for (absl::string_view line : absl::StrSplit(it->second, '\n')) {
    if (absl::ConsumePrefix(&line, kResultLine)) {
      HLOC_ASSIGN_OR_RETURN(contract.declared, ParseShape(line));
      have_result = true;
    } else if (absl::ConsumePrefix(&line, kParameterLine)) {
      const size_t space = line.find(' ');
      if (space == absl::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat(
            "frontend attribute ", kDynamicResultAttribute, ": no shape in \"", line, "\""));
      }
      HLOC_ASSIGN_OR_RETURN(Shape parameter, ParseShape(line.substr(space + 1)));
      contract.parameter_names.emplace_back(line.substr(0, space));
      contract.parameters.push_back(std::move(parameter));
    } else if (absl::ConsumePrefix(&line, kCheckLine)) {
      contract.checks.emplace_back(line);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("frontend attribute ", kDynamicResultAttribute,
                                                     ": unknown line \"", line, "\""));
    }
  }
  if (!have_result) {
    return absl::InvalidArgumentError(
        absl::StrCat("frontend attribute ", kDynamicResultAttribute, " has no result line"));
  }
  return contract;
}

namespace {

// Copies the leading box `box` (no larger than either) of `from` into `to`,
// both dense row-major arrays of one element type.
void CopyLeadingBox(const Literal& from, const std::vector<int64_t>& box, Literal* to) {
  const int64_t rank = static_cast<int64_t>(box.size());
  int64_t count = 1;
  for (int64_t n : box) count *= n;
  if (count == 0) return;
  const int width = ByteWidth(from.shape().element_type());
  auto strides = [rank](const Shape& shape) {
    std::vector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape.dimensions(d + 1);
    return strides;
  };
  const std::vector<int64_t> from_strides = strides(from.shape());
  const std::vector<int64_t> to_strides = strides(to->shape());
  std::vector<int64_t> index(rank, 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t source = 0, target = 0;
    for (int64_t d = 0; d < rank; ++d) {
      source += index[d] * from_strides[d];
      target += index[d] * to_strides[d];
    }
    std::memcpy(to->mutable_raw() + target * width, from.raw() + source * width, width);
    for (int64_t d = rank - 1; d >= 0 && ++index[d] == box[d]; --d) index[d] = 0;
  }
}

// Copies the leading box of `in` given by the runtime sizes.
Literal CutToSizes(const Literal& in, const std::vector<int64_t>& dims) {
  Literal out(Shape(in.shape().element_type(), dims));
  CopyLeadingBox(in, dims, &out);
  return out;
}

// `argument` (`which`, for messages) for the entry parameter (or tuple
// element of one) `declared`: at its bound, the sizes of its dynamic
// dimensions appended to `sizes` in leaf then dimension order.
absl::StatusOr<Literal> PadValue(const Literal& argument, const std::string& which,
                                 const Shape& declared, std::vector<Literal>* sizes) {
  const Shape& shape = argument.shape();
  auto mismatch = [&]() {
    return absl::InvalidArgumentError(absl::StrCat(which, " has shape ", shape.ToString(false),
                                                   ", the parameter is ",
                                                   declared.ToString(false)));
  };
  if (declared.IsTuple()) {
    if (!shape.IsTuple() || shape.tuple_shapes_size() != declared.tuple_shapes_size()) {
      return mismatch();
    }
    std::vector<Literal> elements;
    for (int64_t k = 0; k < declared.tuple_shapes_size(); ++k) {
      HLOC_ASSIGN_OR_RETURN(Literal element,
                            PadValue(argument.tuple_elements()[k],
                                     absl::StrCat(which, " tuple element ", k),
                                     declared.tuple_shapes(k), sizes));
      elements.push_back(std::move(element));
    }
    return Literal::Tuple(std::move(elements));
  }
  if (declared.is_static()) {
    if (!shape.Compatible(declared)) return mismatch();
    return argument;
  }
  if (!shape.IsArray() || shape.element_type() != declared.element_type() ||
      shape.rank() != declared.rank()) {
    return mismatch();
  }
  for (int64_t d = 0; d < declared.rank(); ++d) {
    const int64_t size = shape.dimensions(d), bound = declared.dimensions(d);
    if (size < 0) {
      return absl::InvalidArgumentError(absl::StrCat(which, " dimension ", d,
                                                     " has negative size ", size));
    }
    if (!declared.is_dynamic_dimension(d)) {
      if (size != bound) {
        return absl::InvalidArgumentError(absl::StrCat(which, " dimension ", d, " has size ", size,
                                                       ", the parameter's is ", bound, " (",
                                                       declared.ToString(false), ")"));
      }
      continue;
    }
    if (size > bound) {
      return absl::InvalidArgumentError(absl::StrCat(which, " dimension ", d, " has size ", size,
                                                     ", above its bound ", bound, " (",
                                                     declared.ToString(false), ")"));
    }
    sizes->push_back(Literal::Scalar<int32_t>(xla::S32, static_cast<int32_t>(size)));
  }
  Shape bound_shape = declared;
  for (int64_t d = 0; d < bound_shape.rank(); ++d) bound_shape.set_dynamic_dimension(d, false);
  Literal padded(bound_shape);
  CopyLeadingBox(argument, shape.dimensions(), &padded);
  return padded;
}

}  // namespace

absl::StatusOr<std::vector<Literal>> PadDynamicArguments(absl::Span<const Literal> arguments,
                                                         const DynamicResultContract& contract) {
  const std::vector<Shape>& parameters = contract.parameters;
  if (arguments.size() != parameters.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the entry computation takes ",
                                                   parameters.size(), " arguments, got ",
                                                   arguments.size()));
  }
  std::vector<Literal> padded, sizes;
  padded.reserve(arguments.size());
  for (size_t k = 0; k < arguments.size(); ++k) {
    if (parameters[k].is_static()) {
      if (!arguments[k].shape().Compatible(parameters[k])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "argument ", k, " has shape ", arguments[k].shape().ToString(false),
            ", the parameter is ", parameters[k].ToString(false)));
      }
      padded.push_back(arguments[k]);
      continue;
    }
    const std::string name = k < contract.parameter_names.size() ? contract.parameter_names[k] : "";
    HLOC_ASSIGN_OR_RETURN(Literal argument,
                          PadValue(arguments[k],
                                   absl::StrCat("argument ", k, " (parameter %", name, ")"),
                                   parameters[k], &sizes));
    padded.push_back(std::move(argument));
  }
  for (Literal& size : sizes) padded.push_back(std::move(size));
  return padded;
}

absl::StatusOr<Literal> ShrinkDynamicResult(const Literal& padded,
                                            const DynamicResultContract& contract) {
  if (!padded.shape().IsTuple() || padded.tuple_elements().size() != 3) {
    return absl::InternalError("a dynamic-padded result is not (result, sizes, checks)");
  }
  const Literal& result = padded.tuple_elements()[0];
  const std::vector<Literal>& sizes = padded.tuple_elements()[1].tuple_elements();
  const std::vector<Literal>& checks = padded.tuple_elements()[2].tuple_elements();
  if (checks.size() != 2 * contract.checks.size()) {
    return absl::InternalError("dynamic-padded result: checks do not match the contract");
  }
  for (size_t k = 0; k < contract.checks.size(); ++k) {
    const int64_t value = checks[2 * k].GetAsInt64(0), limit = checks[2 * k + 1].GetAsInt64(0);
    if (value < 0 || value > limit) {
      return absl::InvalidArgumentError(
          absl::StrCat(contract.checks[k], " (value ", value, ", limit ", limit, ")"));
    }
  }
  size_t next = 0;
  auto shrink_leaf = [&](const Literal& leaf, const Shape& declared) -> absl::StatusOr<Literal> {
    if (!declared.IsArray() || declared.is_static()) return leaf;
    std::vector<int64_t> dims = leaf.shape().dimensions();
    for (int64_t d = 0; d < declared.rank(); ++d) {
      if (!declared.is_dynamic_dimension(d)) continue;
      if (next >= sizes.size()) return absl::InternalError("dynamic-padded result: sizes missing");
      dims[d] = std::clamp<int64_t>(sizes[next++].GetAsInt64(0), 0, dims[d]);
    }
    return CutToSizes(leaf, dims);
  };
  if (contract.declared.IsTuple()) {
    std::vector<Literal> elements;
    for (size_t k = 0; k < result.tuple_elements().size(); ++k) {
      HLOC_ASSIGN_OR_RETURN(Literal e, shrink_leaf(result.tuple_elements()[k],
                                                   contract.declared.tuple_shapes(k)));
      elements.push_back(std::move(e));
    }
    return Literal::Tuple(std::move(elements));
  }
  return shrink_leaf(result, contract.declared);
}

}  // namespace hloc
