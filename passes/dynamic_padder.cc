// DynamicPadder (dynamic_padder.h): the pass itself. Loops and branches
// are in dynamic_padder_calls.cc, the contract it leaves on the module in
// dynamic_padder_contract.cc (dynamic_padder_internal.h).
#include "passes/dynamic_padder.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/builder_custom_calls.h"
#include "hlo/status_macros.h"
#include "passes/dynamic_padder_internal.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace dynamic_padder_internal {

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
        i->opcode() == HloOpcode::kGetDimensionSize || DynamicCustomCallOf(*i)) {
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
    return ReplaceBySizedCopy(b, i, x, *out);
  }
  if (op == HloOpcode::kGetDimensionSize) {
    HloInstruction* size = SizeOrBound(b, i->operand(0), i->dimensions(0));
    HloInstruction* s32 = b.ConvertIfNeeded(size, i->shape().element_type());
    HLOC_RETURN_IF_ERROR(b.status());
    HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(s32));
    dead_.push_back(i);
    return absl::OkStatus();
  }
  if (std::optional<DynamicCustomCall> call = DynamicCustomCallOf(*i)) {
    return VisitDynamicCustomCall(i, *call, declared, out);
  }
  if (op == HloOpcode::kConstant || op == HloOpcode::kIota) return absl::OkStatus();
  if (op == HloOpcode::kTuple || op == HloOpcode::kGetTupleElement) return VisitTupleOps(i, out);
  if (op == HloOpcode::kWhile) return VisitWhile(i, declared);
  if (op == HloOpcode::kConditional) return VisitConditional(i, declared);
  if (op == HloOpcode::kSort) return VisitSort(i, out);
  if (op == HloOpcode::kReduce) return VisitReduce(i, out);
  if (op == HloOpcode::kReduceWindow) return VisitReduceWindow(i, out);
  if (!i->shape().IsArray()) {
    return Refuse(*i, "a tuple-valued instruction with runtime-sized elements and no rule for it "
                      "(tuple, get-tuple-element, sort and reduce have one)");
  }
  const int64_t rank = i->shape().rank();
  out->assign(rank, nullptr);
  if (IsElementwise(op)) {
    for (HloInstruction* operand : i->operands()) {
      const Sizes& s = SizesOf(operand);
      // Operands of the result's rank correspond dimension by dimension;
      // scalars (select, clamp) have none. A bitcast-convert between widths
      // adds or drops a minor dimension of the width ratio, which is never
      // runtime-sized: the dimensions before it correspond.
      int64_t shared = operand->shape().rank() == rank ? rank : 0;
      if (op == HloOpcode::kBitcastConvert) {
        shared = std::min<int64_t>(rank, operand->shape().rank());
      }
      for (int64_t d = 0; d < shared; ++d) Unify(b, *i, d, s[d], &(*out)[d]);
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
    case HloOpcode::kConvolution: return VisitConvolution(i, out);
    case HloOpcode::kReshape: return VisitReshape(i, declared, out);
    case HloOpcode::kSlice: return VisitSlice(i, declared, out);
    case HloOpcode::kGather: return VisitGather(i, out);
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice: return VisitDynamicSlicing(i, out);
    case HloOpcode::kScatter: return VisitScatter(i, out);
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
  SetSizesOfEveryResult(i, inputs, kept, out);
  return absl::OkStatus();
}

namespace {

bool TrivialWindow(const xla::WindowDimension& w) {
  return w.size() == 1 && w.stride() <= 1 && w.padding_low() == 0 && w.padding_high() == 0 &&
         w.base_dilation() <= 1 && w.window_dilation() <= 1;
}

// The runtime size of a windowed dimension's result for the input's runtime
// size `n` (an s32 scalar): max((n - 1) * base_dilation + 1, 0) elements,
// padded, then slid over by a window of `window_size` elements:
// max(padded - effective_window + stride, 0) / stride.
HloInstruction* WindowedSize(ExpansionBuilder& b, HloInstruction* n,
                             const xla::WindowDimension& w, int64_t window_size) {
  const int64_t base = std::max<int64_t>(w.base_dilation(), 1);
  const int64_t dilation = std::max<int64_t>(w.window_dilation(), 1);
  const int64_t stride = std::max<int64_t>(w.stride(), 1);
  HloInstruction* zero = b.IndexScalar(xla::S32, 0);
  HloInstruction* dilated = b.Binary(
      HloOpcode::kMaximum,
      b.Binary(HloOpcode::kAdd, b.Binary(HloOpcode::kMultiply, n, b.IndexScalar(xla::S32, base)),
               b.IndexScalar(xla::S32, 1 - base)),
      zero);
  const int64_t offset =
      w.padding_low() + w.padding_high() - ((window_size - 1) * dilation + 1) + stride;
  HloInstruction* span = b.Binary(HloOpcode::kAdd, dilated, b.IndexScalar(xla::S32, offset));
  return b.Binary(HloOpcode::kDivide, b.Binary(HloOpcode::kMaximum, span, zero),
                  b.IndexScalar(xla::S32, stride));
}

}  // namespace

// Windows over a runtime-sized dimension: the padding past the size holds
// each input's init value, which is what the op pads with, so every result
// element inside the runtime size sees what it would on the smaller array.
absl::Status ComputationPadder::VisitReduceWindow(HloInstruction* i, Sizes* out) {
  ExpansionBuilder b(computation_, i);
  const int64_t inputs = i->operand_count() / 2;
  const xla::Window& window = i->attrs().window;
  Sizes sizes = SizesOf(i->operand(0));
  for (int64_t k = 1; k < inputs; ++k) {
    const Sizes s = SizesOf(i->operand(k));
    for (size_t d = 0; d < sizes.size() && d < s.size(); ++d) {
      Unify(b, *i, static_cast<int64_t>(d), s[d], &sizes[d]);
    }
  }
  if (window.dimensions_size() != static_cast<int>(sizes.size())) {
    return Refuse(*i, "its window's rank is not its input's");
  }
  Sizes result(sizes.size(), nullptr);
  std::vector<HloInstruction*> masked(i->operands().begin(), i->operands().begin() + inputs);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == nullptr) continue;
    const xla::WindowDimension& w = window.dimensions(static_cast<int>(d));
    if (TrivialWindow(w)) {
      result[d] = sizes[d];
      continue;
    }
    for (int64_t k = 0; k < inputs; ++k) {
      masked[k] = Mask(b, masked[k], static_cast<int64_t>(d), sizes[d], i->operand(inputs + k));
    }
    result[d] = WindowedSize(b, sizes[d], w, w.size());
  }
  HLOC_RETURN_IF_ERROR(b.status());
  for (int64_t k = 0; k < inputs; ++k) {
    if (masked[k] != i->operand(k)) i->ReplaceOperandWith(k, masked[k]);
  }
  SetSizesOfEveryResult(i, inputs, result, out);
  return absl::OkStatus();
}

// Runtime-sized input batch, input features or input spatial dimensions,
// and kernel output features: the input is masked with zeros where it is
// read past a runtime size (the op pads with zeros), and so is the kernel
// along runtime-sized input features (garbage padding could be inf, and
// inf * 0 is nan). A runtime-sized kernel window, and runtime sizes mixed
// with feature or batch groups, are refused.
absl::Status ComputationPadder::VisitConvolution(HloInstruction* i, Sizes* out) {
  ExpansionBuilder b(computation_, i);
  const xla::ConvolutionDimensionNumbers& dn = i->attrs().convolution_dimension_numbers;
  const xla::Window& window = i->attrs().window;
  HloInstruction* lhs = i->operand(0);
  HloInstruction* rhs = i->operand(1);
  const Sizes ls = SizesOf(lhs), rs = SizesOf(rhs);
  const bool grouped = i->attrs().feature_group_count != 1 || i->attrs().batch_group_count != 1;
  for (int k = 0; k < dn.kernel_spatial_dimensions_size(); ++k) {
    if (rs[dn.kernel_spatial_dimensions(k)] != nullptr) {
      return Refuse(*i, "its kernel's window is runtime-sized");
    }
  }
  // Runtime-sized input features on either side: both sides' sizes must
  // agree at run time (a static side's is its bound).
  HloInstruction* features = nullptr;
  if (ls[dn.input_feature_dimension()] != nullptr ||
      rs[dn.kernel_input_feature_dimension()] != nullptr) {
    features = SizeOrBound(b, lhs, dn.input_feature_dimension());
    Unify(b, *i, dn.input_feature_dimension(),
          SizeOrBound(b, rhs, dn.kernel_input_feature_dimension()), &features);
  }
  if (grouped && (features != nullptr || ls[dn.input_batch_dimension()] != nullptr ||
                  rs[dn.kernel_output_feature_dimension()] != nullptr)) {
    return Refuse(*i, "runtime-sized batch or features with feature or batch groups");
  }
  HloInstruction* masked_lhs = lhs;
  HloInstruction* masked_rhs = rhs;
  if (features != nullptr) {
    masked_lhs = Mask(b, masked_lhs, dn.input_feature_dimension(), features,
                      b.Scalar(lhs->shape().element_type(), 0));
    masked_rhs = Mask(b, masked_rhs, dn.kernel_input_feature_dimension(), features,
                      b.Scalar(rhs->shape().element_type(), 0));
  }
  out->assign(i->shape().rank(), nullptr);
  (*out)[dn.output_batch_dimension()] = ls[dn.input_batch_dimension()];
  (*out)[dn.output_feature_dimension()] = rs[dn.kernel_output_feature_dimension()];
  for (int k = 0; k < dn.input_spatial_dimensions_size(); ++k) {
    const int64_t d = dn.input_spatial_dimensions(k);
    if (ls[d] == nullptr) continue;
    const xla::WindowDimension& w = window.dimensions(k);
    masked_lhs = Mask(b, masked_lhs, d, ls[d], b.Scalar(lhs->shape().element_type(), 0));
    (*out)[dn.output_spatial_dimensions(k)] =
        WindowedSize(b, ls[d], w, rhs->shape().dimensions(dn.kernel_spatial_dimensions(k)));
  }
  HLOC_RETURN_IF_ERROR(b.status());
  if (masked_lhs != lhs) i->ReplaceOperandWith(0, masked_lhs);
  if (masked_rhs != rhs) i->ReplaceOperandWith(1, masked_rhs);
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

// XLA's PadToStatic: (x at its bounds, its padding zeroed, each
// dimension's size). SliceToDynamic: x with the sizes its operands give the
// result's dynamic dimensions, each checked against x's (runtime) size.
absl::Status ComputationPadder::VisitDynamicCustomCall(HloInstruction* i, DynamicCustomCall call,
                                                       const Shape& declared, Sizes* out) {
  ExpansionBuilder b(computation_, i);
  HloInstruction* x = i->operand(0);
  const int64_t rank = x->shape().rank();
  if (call == DynamicCustomCall::kPadToStatic) {
    const Sizes sizes = SizesOf(x);
    HloInstruction* value = x;
    for (int64_t d = 0; d < rank; ++d) {
      if (sizes[d] == nullptr) continue;
      value = Mask(b, value, d, sizes[d], b.Scalar(x->shape().element_type(), 0));
    }
    std::vector<HloInstruction*> parts = {value};
    for (int64_t d = 0; d < rank; ++d) parts.push_back(SizeOrBound(b, x, d));
    HloInstruction* tuple = b.Tuple(parts);
    HLOC_RETURN_IF_ERROR(b.status());
    HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(tuple));
    dead_.push_back(i);
    return absl::OkStatus();
  }
  *out = SizesOf(x);
  for (int64_t d = 0; d < rank; ++d) {
    if (!declared.is_dynamic_dimension(d)) continue;
    HloInstruction* n = b.ConvertIfNeeded(i->operand(1 + d), xla::S32);
    AddCheck(b, n, SizeOrBound(b, x, d),
             absl::StrCat("instruction %", i->name(), " (custom-call SliceToDynamic): the size of "
                          "dimension ", d, " is outside [0, ", x->shape().dimensions(d), "]"));
    (*out)[d] = n;
  }
  return ReplaceBySizedCopy(b, i, x, *out);
}

// `i` replaced by a copy of `x` of runtime sizes `sizes`.
absl::Status ComputationPadder::ReplaceBySizedCopy(ExpansionBuilder& b, HloInstruction* i,
                                                   HloInstruction* x, const Sizes& sizes) {
  HloInstruction* copy = b.Unary(HloOpcode::kCopy, x);
  HLOC_RETURN_IF_ERROR(b.status());
  sizes_[copy] = sizes;
  HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(copy));
  dead_.push_back(i);
  return absl::OkStatus();
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

// The start index along operand dimension `d` of `i` (a gather or a
// dynamic slice or update of x) clamped as the interpreter does on x at its
// runtime size: into [0, size - window]. A window larger than the runtime
// size is a size check.
HloInstruction* ComputationPadder::RuntimeLimit(ExpansionBuilder& b, const HloInstruction& i,
                                                HloInstruction* x, int64_t d, int64_t window,
                                                PrimitiveType index_type) {
  HloInstruction* size = SizesOf(x)[d];
  HloInstruction* w = b.IndexScalar(xla::S32, window);
  if (size != nullptr) {
    AddCheck(b, w, size,
             absl::StrCat("instruction %", i.name(), " (", HloOpcodeName(i.opcode()),
                          "): its window of ", window, " along dimension ", d,
                          " is larger than the operand's runtime size"));
  }
  HloInstruction* limit = size != nullptr
                              ? b.Binary(HloOpcode::kSubtract, size, w)
                              : b.IndexScalar(xla::S32, x->shape().dimensions(d) - window);
  return b.ConvertIfNeeded(limit, index_type);
}

absl::Status ComputationPadder::VisitDynamicSlicing(HloInstruction* i, Sizes* out) {
  ExpansionBuilder b(computation_, i);
  HloInstruction* x = i->operand(0);
  const bool update = i->opcode() == HloOpcode::kDynamicUpdateSlice;
  if (update && AnySize(SizesOf(i->operand(1)))) {
    return Refuse(*i, "updates with a runtime-sized update");
  }
  const int64_t first = update ? 2 : 1;
  const Sizes sizes = SizesOf(x);
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (sizes[d] == nullptr) continue;
    const int64_t window =
        update ? i->operand(1)->shape().dimensions(d) : i->attrs().dynamic_slice_sizes[d];
    HloInstruction* start = i->operand(first + d);
    const PrimitiveType type = start->shape().element_type();
    HloInstruction* limit = RuntimeLimit(b, *i, x, d, window, type);
    HloInstruction* clamped =
        b.Binary(HloOpcode::kMaximum, b.Binary(HloOpcode::kMinimum, start, limit),
                 b.IndexScalar(type, 0));
    HLOC_RETURN_IF_ERROR(b.status());
    i->ReplaceOperandWith(first + d, clamped);
  }
  // A slice has the static window's shape; an update keeps x's sizes.
  if (update) *out = sizes;
  return b.status();
}

// One scalar limit per index-vector component, broadcast to the indices'
// shape `ishape` along `index_vector_dim` (a trailing implicit index vector
// takes exactly one).
absl::StatusOr<HloInstruction*> ComputationPadder::IndexLimits(
    ExpansionBuilder& b, const HloInstruction& i, const std::vector<HloInstruction*>& limits,
    const Shape& ishape, int64_t index_vector_dim) {
  if (index_vector_dim >= ishape.rank()) {
    if (limits.size() != 1) return Refuse(i, "an implicit index vector of several components");
    return b.Splat(limits[0], ishape.dimensions());
  }
  std::vector<HloInstruction*> vectors;
  for (HloInstruction* limit : limits) vectors.push_back(b.Reshape(limit, {1}));
  return b.Broadcast(b.Concatenate(vectors, 0), ishape.dimensions(), {index_vector_dim});
}

// A scatter into a (possibly runtime-sized) operand from runtime-sized
// indices and updates: index vectors in the padding, and start indices past
// the operand's runtime size less the window, are made out of bounds, so the
// scatter skips them as the interpreter does (it sees no padding, and skips
// a window that does not fit the runtime size).
absl::Status ComputationPadder::VisitScatter(HloInstruction* i, Sizes* out) {
  const xla::ScatterDimensionNumbers& dn = i->attrs().scatter_dimension_numbers;
  if (i->operand_count() != 3) return Refuse(*i, "a runtime-sized scatter of several operands");
  if (dn.input_batching_dims_size() > 0) {
    return Refuse(*i, "a runtime-sized scatter with batching dimensions");
  }
  ExpansionBuilder b(computation_, i);
  HloInstruction* operand = i->operand(0);
  HloInstruction* indices = i->operand(1);
  HloInstruction* updates = i->operand(2);
  const Shape& ishape = indices->shape();
  const PrimitiveType type = ishape.element_type();
  const int64_t ivd = dn.index_vector_dim();
  const Sizes isizes = SizesOf(indices);
  const Sizes usizes = SizesOf(updates);
  const auto& window_dims = dn.update_window_dims();
  // The updates' scatter dimensions follow the indices' batch dimensions.
  int64_t batch = 0;
  for (int64_t d = 0; d < updates->shape().rank(); ++d) {
    const bool window = std::find(window_dims.begin(), window_dims.end(), d) != window_dims.end();
    if (window) {
      if (usizes[d] != nullptr) return Refuse(*i, "runtime-sized update windows");
      continue;
    }
    if (batch == ivd) ++batch;
    HloInstruction* own = batch < ishape.rank() ? isizes[batch] : nullptr;
    if (usizes[d] != own) {
      HloInstruction* a = usizes[d] != nullptr ? usizes[d]
                                               : b.IndexScalar(xla::S32, updates->shape().dimensions(d));
      HloInstruction* c = own != nullptr ? own : b.IndexScalar(xla::S32, ishape.dimensions(batch));
      AddCheck(b, b.Binary(HloOpcode::kSubtract, a, c), b.IndexScalar(xla::S32, 0),
               absl::StrCat("instruction %", i->name(), " (scatter): updates and indices have "
                            "different runtime sizes"));
    }
    ++batch;
  }
  // Window size per operand dimension (1 where inserted).
  std::vector<int64_t> window_size(operand->shape().rank(), 1);
  size_t next = 0;
  for (int64_t d = 0; d < operand->shape().rank(); ++d) {
    const auto& inserted = dn.inserted_window_dims();
    if (std::find(inserted.begin(), inserted.end(), d) != inserted.end()) continue;
    if (next < static_cast<size_t>(window_dims.size())) {
      window_size[d] = updates->shape().dimensions(window_dims[next++]);
    }
  }
  // Valid: inside the indices' runtime box, and each component no more than
  // its operand dimension's runtime size less the window.
  const std::vector<int64_t>& dims = ishape.dimensions();
  HloInstruction* valid = nullptr;
  auto both = [&](HloInstruction* p) { valid = valid == nullptr ? p : b.Binary(HloOpcode::kAnd, valid, p); };
  for (int64_t e = 0; e < ishape.rank(); ++e) {
    if (e == ivd || isizes[e] == nullptr) continue;
    both(b.Compare(b.Iota(xla::S32, dims, e), b.Splat(isizes[e], dims), ComparisonDirection::kLt));
  }
  const Sizes osizes = SizesOf(operand);
  if (AnySize(osizes)) {
    std::vector<HloInstruction*> limits;
    for (int64_t d : dn.scatter_dims_to_operand_dims()) {
      HloInstruction* limit =
          osizes[d] != nullptr
              ? b.Binary(HloOpcode::kSubtract, osizes[d], b.IndexScalar(xla::S32, window_size[d]))
              : b.IndexScalar(xla::S32, operand->shape().dimensions(d));
      limits.push_back(b.ConvertIfNeeded(limit, xla::S64));
    }
    HLOC_ASSIGN_OR_RETURN(HloInstruction * limit, IndexLimits(b, *i, limits, ishape, ivd));
    both(b.Compare(b.ConvertIfNeeded(indices, xla::S64), limit, ComparisonDirection::kLe));
  }
  *out = osizes;
  if (valid == nullptr) return b.status();
  // Out of bounds: -1 for signed indices, all ones for unsigned ones.
  HloInstruction* zero = b.IndexScalar(type, 0);
  HloInstruction* outside = IsUnsignedInteger(type) ? b.Unary(HloOpcode::kNot, zero)
                                                     : b.IndexScalar(type, -1);
  HloInstruction* masked = b.Select(valid, indices, b.Splat(outside, dims));
  HLOC_RETURN_IF_ERROR(b.status());
  i->ReplaceOperandWith(1, masked);
  sizes_[masked] = isizes;
  return absl::OkStatus();
}

absl::Status ComputationPadder::VisitGather(HloInstruction* i, Sizes* out) {
  const xla::GatherDimensionNumbers& dn = i->attrs().gather_dimension_numbers;
  if (AnySize(SizesOf(i->operand(0)))) {
    // Each index vector clamped to the operand's runtime sizes, component
    // by component (the interpreter clamps into the runtime-sized operand).
    ExpansionBuilder b(computation_, i);
    HloInstruction* indices = i->operand(1);
    const Sizes index_sizes = SizesOf(indices);
    const Shape& ishape = indices->shape();
    const PrimitiveType type = ishape.element_type();
    std::vector<HloInstruction*> limits;
    for (int64_t d : dn.start_index_map()) {
      HloInstruction* limit =
          RuntimeLimit(b, *i, i->operand(0), d, i->attrs().gather_slice_sizes[d], type);
      limits.push_back(limit);
    }
    HLOC_ASSIGN_OR_RETURN(HloInstruction * limit,
                          IndexLimits(b, *i, limits, ishape, dn.index_vector_dim()));
    HloInstruction* clamped =
        b.Binary(HloOpcode::kMaximum, b.Binary(HloOpcode::kMinimum, indices, limit),
                 b.Splat(b.IndexScalar(type, 0), ishape.dimensions()));
    HLOC_RETURN_IF_ERROR(b.status());
    i->ReplaceOperandWith(1, clamped);
    sizes_[clamped] = index_sizes;
  }
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
  // A runtime-sized value in a result dimension declared static: the
  // interpreter returns it at its runtime size, a padded program could only
  // return the bound with padding in it.
  auto check_leaf = [&](const Sizes& s, const Shape& shape, const std::string& where) {
    for (int64_t d = 0; d < shape.rank() && d < static_cast<int64_t>(s.size()); ++d) {
      if (s[d] == nullptr || shape.is_dynamic_dimension(d)) continue;
      return Refuse(*root, absl::StrCat(where, "dimension ", d, " is declared static (",
                                        shape.ToString(false), ") but holds a runtime-sized value; "
                                        "declare it dynamic (<=", shape.dimensions(d), ")"));
    }
    return absl::OkStatus();
  };
  if (declared.IsArray()) {
    HLOC_RETURN_IF_ERROR(check_leaf(SizesOf(root), declared, "the entry result's "));
  } else if (declared.IsTuple()) {
    for (int64_t k = 0; k < declared.tuple_shapes_size(); ++k) {
      const Shape& element = declared.tuple_shapes(k);
      if (!element.IsArray()) continue;
      HLOC_RETURN_IF_ERROR(check_leaf(SizesAt(root, {k}), element,
                                      absl::StrCat("the entry result's element ", k, " ")));
    }
  }
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
    const bool size_op = op == HloOpcode::kSetDimensionSize ||
                         op == HloOpcode::kGetDimensionSize || DynamicCustomCallOf(*i);
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

// Calls whose callee has dynamic shapes, in any computation, inlined (the
// sizes then flow through the callee's instructions like any others).
absl::StatusOr<bool> InlineDynamicCalls(HloModule& module) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (HloComputation* c : module.computations()) {
      for (HloInstruction* i : c->MakeInstructionPostOrder()) {
        // Calls, and XlaBuilder calls with their decomposition attached.
        const bool call = (i->opcode() == HloOpcode::kCall && i->called_computations().size() == 1) ||
                          BuilderDecomposition(*i) != nullptr;
        if (!call) continue;
        const HloComputation& callee = *i->called_computations()[0];
        if (!HasDynamicShape(callee)) continue;
        ExpansionBuilder b(c, i);
        const std::vector<HloInstruction*> operands(i->operands().begin(), i->operands().end());
        HloInstruction* inlined = b.Inline(callee, operands);
        HLOC_RETURN_IF_ERROR(b.status());
        HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(inlined));
        HLOC_RETURN_IF_ERROR(c->RemoveInstruction(i));
        changed = again = true;
      }
    }
  }
  return changed;
}

}  // namespace dynamic_padder_internal

using dynamic_padder_internal::CalledBy;
using dynamic_padder_internal::ComputationPadder;
using dynamic_padder_internal::EncodeDynamicResultContract;
using dynamic_padder_internal::HasDynamicShape;
using dynamic_padder_internal::InlineDynamicCalls;
using dynamic_padder_internal::MakeStatic;
using dynamic_padder_internal::Reachable;
using dynamic_padder_internal::RemoveStaticSizeOps;

absl::StatusOr<bool> DynamicPadder::Run(HloModule& module) {
  if (module.entry() == nullptr) return false;
  HLOC_ASSIGN_OR_RETURN(const bool removed, RemoveStaticSizeOps(module));
  HLOC_ASSIGN_OR_RETURN(const bool inlined, InlineDynamicCalls(module));
  bool dynamic = false;
  for (const HloComputation* c : Reachable(module)) dynamic = dynamic || HasDynamicShape(*c);
  if (!dynamic) return removed || inlined;
  const Shape declared = module.entry()->root()->shape();
  ComputationPadder padder(module.entry());
  HLOC_RETURN_IF_ERROR(padder.RunEntry());
  // The result is now element 0 of (result, sizes, checks); parameters keep
  // their numbers (sizes come after them), so an alias moves under {0}.
  for (xla::HloInputOutputAliasProto::AliasEntryProto& entry :
       *module.mutable_config()->input_output_alias.mutable_entries()) {
    google::protobuf::RepeatedField<int64_t>& index = *entry.mutable_output_shape_index();
    index.Add(0);
    std::rotate(index.begin(), index.end() - 1, index.end());
  }
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
        " has dynamic shapes; runtime sizes are carried into while loops, conditional "
        "branches and calls only"));
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
  std::vector<std::string> names;
  for (size_t k = 0; k < padder.declared_parameters().size(); ++k) {
    names.push_back(module.entry()->parameter(k)->name());
  }
  (*config->frontend_attributes.mutable_map())[kDynamicResultAttribute] =
      EncodeDynamicResultContract(declared, names, padder.declared_parameters(), padder.checks());
  return true;
}

}  // namespace hloc
