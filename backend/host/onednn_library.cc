// Composite calls, dots and convolutions -> oneDNN library calls (see
// onednn_library.h).
#include "backend/host/onednn_library.h"

#include <algorithm>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "backend/host/onednn_operations.h"
#include "hlo/computation.h"
#include "hlo/shape_util.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/library_epilogues.h"
#include "passes/outlining/library_patterns.h"

namespace hloc {
namespace host {
namespace {

// The composite families the host runs (HostLibraryCapabilities lists the
// epilogues each takes).
const char* const kGemmFamilies[] = {"hloc.gemm", "hloc.batched_gemm"};
const char kConvolutionFamily[] = "hloc.conv";

std::vector<int64_t> ToVector(const google::protobuf::RepeatedField<int64_t>& field) {
  return std::vector<int64_t>(field.begin(), field.end());
}

// The body's only instruction with `opcode`, or null.
const HloInstruction* OnlyOp(const HloComputation& body, HloOpcode opcode) {
  const HloInstruction* found = nullptr;
  for (const HloInstruction* i : body.instructions()) {
    if (i->opcode() != opcode) continue;
    if (found != nullptr) return nullptr;
    found = i;
  }
  return found;
}

// The call operand (buffer index) a body value is, or -1.
int OperandIndex(const HloInstruction& call, const HloInstruction* value) {
  if (value->opcode() != HloOpcode::kParameter) return -1;
  const int64_t number = value->parameter_number();
  return number >= 0 && number < call.operand_count() ? static_cast<int>(number) : -1;
}

// The call operand (buffer index) a dot operand in the body reads, and the
// byte offset there of its first element: a parameter, or a contiguous slice
// of one seen through reshapes and bitcasts that keep row-major order (as
// LibraryOperandSlices leaves a sliced weight), all in row-major layouts; -1
// otherwise.
int OperandView(const HloInstruction& call, const HloInstruction* value, int64_t* offset_bytes) {
  *offset_bytes = 0;
  const PrimitiveType type = value->shape().element_type();
  while (KeepsRowMajorOrder(*value)) value = value->operand(0);
  if (value->opcode() == HloOpcode::kSlice && value->operand_count() == 1 &&
      IsRowMajorArray(value->shape())) {
    const HloAttributes& a = value->attrs();
    std::optional<int64_t> start = ContiguousSliceStart(
        value->operand(0)->shape(), a.slice_starts, a.slice_limits, a.slice_strides);
    if (!start.has_value()) return -1;
    *offset_bytes = *start * ByteWidth(type);
    value = value->operand(0);
  }
  const int index = OperandIndex(call, value);
  if (index < 0 || (*offset_bytes != 0 && !IsRowMajorArray(call.operand(index)->shape()))) return -1;
  return index;
}

// Reads alpha and the epilogue of a call whose product takes the call
// operands `product_operands`; the epilogue's vectors are the other
// operands, in order, each a vector of `features` elements of the result's
// type.
OneDnnRefusal ReadEpilogue(const HloInstruction& call, const LibraryCallDescriptor& descriptor,
                           std::vector<int> product_operands, int64_t features,
                           OneDnnEpilogue* epilogue) {
  epilogue->alpha = descriptor.alpha;
  epilogue->vector_type = call.shape().element_type();
  std::vector<int> vectors;
  for (int i = 0; i < static_cast<int>(call.operand_count()); ++i) {
    if (std::count(product_operands.begin(), product_operands.end(), i) == 0) vectors.push_back(i);
  }
  size_t next = 0;
  for (OneDnnStep kind : descriptor.epilogue) {
    OneDnnEpilogue::Step step;
    step.kind = kind;
    if (OneDnnStepTakesVector(kind)) {
      if (next >= vectors.size()) return "fewer vector operands than epilogue steps take";
      step.buffer = vectors[next++];
      const Shape& v = call.operand(step.buffer)->shape();
      if (v.rank() != 1 || v.dimensions(0) != features ||
          v.element_type() != epilogue->vector_type) {
        return absl::StrCat("operand ", step.buffer, " of the ", OneDnnStepName(kind),
                            " step is not a vector of ", features, " result-typed elements");
      }
    }
    epilogue->steps.push_back(step);
  }
  if (next != vectors.size()) return "more operands than the product and epilogue take";
  return std::nullopt;
}

OneDnnRefusal ReadGemmCall(const HloInstruction& call, const LibraryCallDescriptor& descriptor,
                           MatmulSpec* spec) {
  const std::string family = descriptor.family_name();
  const HloInstruction* dot = OnlyOp(*call.to_apply(), HloOpcode::kDot);
  if (dot == nullptr) return "the body does not hold exactly one dot";
  if (OneDnnRefusal r = MatmulFromDot(*dot, spec)) return r;
  spec->a_buffer = OperandView(call, dot->operand(0), &spec->a_offset);
  spec->b_buffer = OperandView(call, dot->operand(1), &spec->b_offset);
  if (spec->a_buffer < 0 || spec->b_buffer < 0) {
    return "the dot's operands are not call operands or contiguous slices of them";
  }
  if (spec->batched != (family == "hloc.batched_gemm")) {
    return "batch dimensions disagree with the composite name";
  }
  const xla::DotDimensionNumbers& dn = dot->attrs().dot_dimension_numbers;
  const std::pair<const char*, std::vector<int64_t>> dims[] = {
      {"lhs_contracting_dims", ToVector(dn.lhs_contracting_dimensions())},
      {"rhs_contracting_dims", ToVector(dn.rhs_contracting_dimensions())},
      {"lhs_batch_dims", ToVector(dn.lhs_batch_dimensions())},
      {"rhs_batch_dims", ToVector(dn.rhs_batch_dimensions())}};
  for (const auto& [name, actual] : dims) {
    std::optional<std::vector<int64_t>> recorded = descriptor.Ints(name);
    if (!recorded) return absl::StrCat("no ", name, " recorded");
    if (*recorded != actual) return absl::StrCat("recorded ", name, " differ from the body's dot");
  }
  if (descriptor.beta != 0.0) {
    return "beta != 0 (the call has no accumulator operand)";
  }
  if (spec->output_type != call.shape().element_type()) return "the epilogue changes the type";
  spec->out_buffer = static_cast<int>(call.operand_count());
  return ReadEpilogue(call, descriptor, {spec->a_buffer, spec->b_buffer}, spec->n,
                      &spec->epilogue);
}

OneDnnRefusal ReadConvolutionCall(const HloInstruction& call,
                                  const LibraryCallDescriptor& descriptor, ConvolutionSpec* spec) {
  const HloInstruction* conv = OnlyOp(*call.to_apply(), HloOpcode::kConvolution);
  if (conv == nullptr) return "the body does not hold exactly one convolution";
  if (OneDnnRefusal r = ConvolutionFromHlo(*conv, spec)) return r;
  spec->input_buffer = OperandIndex(call, conv->operand(0));
  spec->kernel_buffer = OperandIndex(call, conv->operand(1));
  if (spec->input_buffer < 0 || spec->kernel_buffer < 0) {
    return "the convolution's operands are not call operands";
  }
  const HloAttributes& a = conv->attrs();
  const xla::ConvolutionDimensionNumbers& dn = a.convolution_dimension_numbers;
  std::vector<int64_t> size, stride, pad_low, pad_high, rhs_dilation;
  for (const xla::WindowDimension& w : a.window->dimensions()) {
    size.push_back(w.size());
    stride.push_back(w.stride() == 0 ? 1 : w.stride());
    pad_low.push_back(w.padding_low());
    pad_high.push_back(w.padding_high());
    rhs_dilation.push_back(w.window_dilation() == 0 ? 1 : w.window_dilation());
  }
  const std::pair<const char*, int64_t> ints[] = {
      {"input_batch_dim", dn.input_batch_dimension()},
      {"input_feature_dim", dn.input_feature_dimension()},
      {"kernel_input_feature_dim", dn.kernel_input_feature_dimension()},
      {"kernel_output_feature_dim", dn.kernel_output_feature_dimension()},
      {"output_batch_dim", dn.output_batch_dimension()},
      {"output_feature_dim", dn.output_feature_dimension()},
      {"feature_group_count", a.feature_group_count}};
  for (const auto& [name, actual] : ints) {
    std::optional<int64_t> recorded = descriptor.Int(name);
    if (!recorded) return absl::StrCat("no ", name, " recorded");
    if (*recorded != actual) return absl::StrCat("recorded ", name, " differs from the body's");
  }
  const std::pair<const char*, std::vector<int64_t>> lists[] = {
      {"input_spatial_dims", ToVector(dn.input_spatial_dimensions())},
      {"kernel_spatial_dims", ToVector(dn.kernel_spatial_dimensions())},
      {"output_spatial_dims", ToVector(dn.output_spatial_dimensions())},
      {"window_size", size},
      {"window_strides", stride},
      {"padding_low", pad_low},
      {"padding_high", pad_high},
      {"rhs_dilation", rhs_dilation}};
  for (const auto& [name, actual] : lists) {
    std::optional<std::vector<int64_t>> recorded = descriptor.Ints(name);
    if (!recorded) return absl::StrCat("no ", name, " recorded");
    if (*recorded != actual) return absl::StrCat("recorded ", name, " differ from the body's");
  }
  if (spec->output_type != call.shape().element_type()) return "the epilogue changes the type";
  spec->out_buffer = static_cast<int>(call.operand_count());
  return ReadEpilogue(call, descriptor, {spec->input_buffer, spec->kernel_buffer},
                      spec->dst_dims[1], &spec->epilogue);
}

// Creates the primitives for a spec now (split for the default thread
// count) and wraps them into a library-call function.
template <typename Spec, typename Build>
OneDnnLowering Lower(const Spec& spec, Build build, const std::shared_ptr<OneDnnContext>& context,
                     const std::string& note) {
  OneDnnLowering lowering;
  OneDnnBuilder builder = [spec, build](const dnnl::engine& engine) { return build(spec, engine); };
  const std::string key = spec.Key();
  absl::StatusOr<std::shared_ptr<const OneDnnOperation>> operation =
      context->GetOrBuild(key, builder);
  if (!operation.ok()) {
    lowering.refusal = std::string(operation.status().message());
    return lowering;
  }
  lowering.description = absl::StrCat((*operation)->Describe(), " (", note, ")");
  lowering.function = OneDnnContext::MakeCall(context, key, *operation);
  return lowering;
}

std::string MatmulNote(const MatmulSpec& s) {
  const std::string epilogue = s.epilogue.ToString();
  return absl::StrCat(PrimitiveTypeName(s.input_type), "->", PrimitiveTypeName(s.output_type), " ",
                      s.batch, "x", s.m, "x", s.n, "x", s.k, s.a_transposed ? " A^T" : "",
                      s.b_transposed ? " B^T" : "", epilogue.empty() ? "" : " ", epilogue,
                      s.a_offset ? absl::StrCat(" A at +", s.a_offset, " B") : "",
                      s.b_offset ? absl::StrCat(" B at +", s.b_offset, " B") : "");
}

std::string ConvolutionNote(const ConvolutionSpec& s) {
  const std::string epilogue = s.epilogue.ToString();
  return absl::StrCat(PrimitiveTypeName(s.input_type), " src ", absl::StrJoin(s.src_dims, "x"),
                      " weights ", absl::StrJoin(s.weights_dims, "x"),
                      s.groups > 1 ? absl::StrCat(" groups=", s.groups) : "",
                      epilogue.empty() ? "" : " ", epilogue);
}

OneDnnLowering Refused(std::string reason) {
  OneDnnLowering lowering;
  lowering.refusal = std::move(reason);
  return lowering;
}

}  // namespace

LibraryCapabilities HostLibraryCapabilities() {
  LibraryCapabilities capabilities;
  using S = OneDnnStep;
  const std::vector<std::vector<S>> gemm_steps = {
      {}, {S::kBias}, {S::kRelu}, {S::kGeluTanh}, {S::kBias, S::kRelu}, {S::kBias, S::kGeluTanh}};
  for (const char* family : kGemmFamilies) {
    for (const std::vector<S>& steps : gemm_steps) {
      capabilities.names.insert(EpilogueCompositeName(*FindEpilogueFamily(family), steps));
    }
  }
  // Every subset of sub, scale, bias (in that order), with or without relu.
  for (int mask = 0; mask < 16; ++mask) {
    std::vector<S> steps;
    if (mask & 1) steps.push_back(S::kSub);
    if (mask & 2) steps.push_back(S::kScale);
    if (mask & 4) steps.push_back(S::kBias);
    if (mask & 8) steps.push_back(S::kRelu);
    capabilities.names.insert(EpilogueCompositeName(*FindEpilogueFamily(kConvolutionFamily), steps));
  }
  return capabilities;
}

absl::StatusOr<OneDnnLowering> LowerToOneDnn(const HloInstruction& hlo,
                                             const std::shared_ptr<OneDnnContext>& context) {
  switch (hlo.opcode()) {
    case HloOpcode::kDot: {
      MatmulSpec spec;
      if (OneDnnRefusal r = MatmulFromDot(hlo, &spec)) return Refused(*r);
      return Lower(spec, BuildMatmul, context, MatmulNote(spec));
    }
    case HloOpcode::kConvolution: {
      ConvolutionSpec spec;
      if (OneDnnRefusal r = ConvolutionFromHlo(hlo, &spec)) return Refused(*r);
      return Lower(spec, BuildConvolution, context, ConvolutionNote(spec));
    }
    case HloOpcode::kCall: break;
    default: return Refused("not a dot, convolution or composite call");
  }
  const std::string* name = hlo.is_composite() ? hlo.FindFrontendAttribute(kCompositeName) : nullptr;
  if (name == nullptr) return Refused("not a composite call");
  static const LibraryCapabilities* const kHost = new LibraryCapabilities(HostLibraryCapabilities());
  if (!kHost->Implements(*name)) {
    return Refused("not a host library operation (runs as generated kernels)");
  }
  if (hlo.to_apply() == nullptr || hlo.to_apply()->root() == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("composite call %", hlo.name(), " has no body"));
  }
  if (!hlo.shape().IsArray()) return Refused("the call returns a tuple");
  for (const HloInstruction* operand : hlo.operands()) {
    if (!operand->shape().IsArray()) return Refused("an operand is a tuple");
  }
  if (hlo.FindFrontendAttribute(kCompositeAttributes) == nullptr) {
    return Refused("no composite.attributes");
  }
  absl::StatusOr<LibraryCallDescriptor> descriptor = DecodeLibraryCall(hlo);
  if (!descriptor.ok()) return Refused(std::string(descriptor.status().message()));
  const Shape& root = hlo.to_apply()->root()->shape();
  if (root.element_type() != hlo.shape().element_type() ||
      root.dimensions() != hlo.shape().dimensions()) {
    return Refused("the body's result differs from the call's");
  }
  if (descriptor->family_name() != kConvolutionFamily) {
    MatmulSpec spec;
    if (OneDnnRefusal r = ReadGemmCall(hlo, *descriptor, &spec)) return Refused(*r);
    return Lower(spec, BuildMatmul, context, MatmulNote(spec));
  }
  ConvolutionSpec spec;
  if (OneDnnRefusal r = ReadConvolutionCall(hlo, *descriptor, &spec)) return Refused(*r);
  return Lower(spec, BuildConvolution, context, ConvolutionNote(spec));
}

}  // namespace host
}  // namespace hloc
