// Mapping composite library calls to cuBLASLt / cuDNN parameters (see
// gpu_library_calls.h).
//
// Gemm. The dot's operands are row-major; cuBLASLt reads a matrix either as
// stored or transposed, so each side is one of
//   lhs [batch.., M.., K] (contracting last)   or [batch.., K, M] (transposed)
//   rhs [batch.., K, N]   (contracting first)  or [batch.., N, K] (transposed)
// and the result [batch.., M.., N] is the row-major [batch][M][N] matrix the
// runtime's GemmConfig describes (a left side with several free dimensions
// folds them into M, which row-major storage allows when K is last).
//
// Convolution. cuDNN's tensors are batch-major with features first (NCHW)
// or last (NHWC); dimension numbers outside those two are refused. The
// filter must be OIHW for NCHW and OHWI for NHWC; any other filter order
// (JAX's HWIO, for one) is transposed by a generated kernel first.
#include "backend/gpu/gpu_library_calls.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "hlo/computation.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/library_epilogues.h"
#include "passes/outlining/library_patterns.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "runtime/cuda/cudnn_conv.h"

namespace hloc {
namespace gpu {
namespace {

using cuda::ConvConfig;
using cuda::GemmConfig;
using cuda::GpuDataType;

absl::Status Refuse(absl::string_view why) { return absl::FailedPreconditionError(why); }

std::optional<GpuDataType> DataType(PrimitiveType type) {
  switch (type) {
    case xla::F32:
      return GpuDataType::kF32;
    case xla::F16:
      return GpuDataType::kF16;
    case xla::BF16:
      return GpuDataType::kBF16;
    default:
      return std::nullopt;
  }
}

int64_t Product(const std::vector<int64_t>& dims, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

// The single instruction of `opcode` in `computation`.
absl::StatusOr<const HloInstruction*> FindOnly(const HloComputation& computation,
                                               HloOpcode opcode) {
  const HloInstruction* found = nullptr;
  for (const HloInstruction* i : computation.MakeInstructionPostOrder()) {
    if (i->opcode() != opcode) continue;
    if (found != nullptr) {
      return Refuse(
          absl::StrCat(computation.name(), " holds more than one ", HloOpcodeName(opcode)));
    }
    found = i;
  }
  if (found == nullptr) {
    return Refuse(absl::StrCat(computation.name(), " holds no ", HloOpcodeName(opcode)));
  }
  return found;
}

absl::StatusOr<CalleeValue> ValueOf(const HloInstruction* value, absl::string_view what) {
  CalleeValue v;
  if (value->opcode() == HloOpcode::kParameter) {
    v.parameter = value->parameter_number();
  } else if (value->opcode() == HloOpcode::kConstant) {
    v.constant = value;
  } else {
    return Refuse(absl::StrCat(what, " %", value->name(), " is computed inside the call (",
                               HloOpcodeName(value->opcode()), ")"));
  }
  return v;
}

// The epilogue's vector operands, in order: from the product, follow the
// single-user chain of binary ops (subtract, multiply, add, maximum, ...)
// and record each whose other operand broadcasts a rank-1 value, with the
// op. Scalars (alpha, relu's zero) are skipped; the walk stops where the
// chain branches (the GELU cone) or at the root.
struct VectorStep {
  HloOpcode op;
  const HloInstruction* vector;
};
std::vector<VectorStep> EpilogueVectors(const HloInstruction* product, const HloInstruction* root) {
  std::vector<VectorStep> steps;
  const HloInstruction* x = product;
  while (x != root && x->user_count() == 1) {
    const HloInstruction* user = x->users()[0];
    if (user->operand_count() != 2) break;
    const HloInstruction* other = user->operand(0) == x ? user->operand(1) : user->operand(0);
    if (other->opcode() == HloOpcode::kBroadcast) {
      const HloInstruction* source = other->operand(0);
      while (source->opcode() == HloOpcode::kBroadcast || source->opcode() == HloOpcode::kReshape ||
             source->opcode() == HloOpcode::kBitcast) {
        source = source->operand(0);
      }
      if (source->shape().IsArray() && source->shape().rank() == 1) {
        steps.push_back({user->opcode(), source});
      }
    }
    x = user;
  }
  return steps;
}

bool AllDefaultPrecision(const HloInstruction& hlo) {
  for (int p : hlo.attrs().precision_config->operand_precision()) {
    if (p != xla::PrecisionConfig::DEFAULT) return false;
  }
  return true;
}

struct CallAttributes {
  std::vector<std::string> steps;
  double alpha = 1.0;
  double beta = 0.0;
};

// The call's epilogue steps (as their tokens), alpha and beta, from its
// descriptor (passes/outlining/library_patterns.h).
absl::StatusOr<CallAttributes> ReadAttributes(const HloInstruction& call) {
  absl::StatusOr<LibraryCallDescriptor> descriptor = DecodeLibraryCall(call);
  if (!descriptor.ok()) return descriptor.status();
  CallAttributes a;
  for (EpilogueStep step : descriptor->epilogue) {
    a.steps.push_back(std::string(EpilogueStepToken(step)));
  }
  a.alpha = descriptor->alpha;
  a.beta = descriptor->beta;
  return a;
}

absl::StatusOr<LibraryCallPlan> PlanGemm(const HloInstruction& call, const CallAttributes& attrs,
                                         bool batched, const LibraryCallOptions& options) {
  const HloComputation& callee = *call.to_apply();
  absl::StatusOr<const HloInstruction*> found = FindOnly(callee, HloOpcode::kDot);
  if (!found.ok()) return found.status();
  const HloInstruction* dot = *found;
  const HloInstruction* root = callee.root();
  LibraryCallPlan plan;
  plan.library = GpuLibrary::kCublasLt;
  GemmConfig& g = plan.gemm;
  // Epilogue: [bias] then [relu | gelu_tanh].
  bool bias = false;
  std::string activation;
  for (const std::string& step : attrs.steps) {
    if (step == "bias" && !bias && activation.empty()) {
      bias = true;
    } else if ((step == "relu" || step == "gelu_tanh") && activation.empty()) {
      activation = step;
    } else if (step == "gelu_erf") {
      return Refuse(
          "cuBLASLt's GELU epilogue is the tanh approximation; this call computes the "
          "erf form");
    } else {
      return Refuse(absl::StrCat("cuBLASLt has no '", step, "' epilogue step here"));
    }
  }
  using E = cuda::GemmEpilogue;
  g.epilogue = activation.empty()     ? (bias ? E::kBias : E::kNone)
               : activation == "relu" ? (bias ? E::kBiasRelu : E::kRelu)
                                      : (bias ? E::kBiasGeluTanh : E::kGeluTanh);
  g.alpha = attrs.alpha;
  g.beta = attrs.beta;
  if (g.beta != 0.0) return Refuse("beta != 0 (the call has no accumulator operand)");
  if (!root->shape().IsArray()) return Refuse("the call returns a tuple (extra outputs)");
  if (root->shape().dimensions() != dot->shape().dimensions() ||
      root->shape().element_type() != dot->shape().element_type()) {
    return Refuse("the epilogue changes the dot's shape or type");
  }
  if (g.epilogue == E::kNone && g.alpha == 1.0 && root != dot) {
    return Refuse(absl::StrCat("the callee computes more than its dot (root %", root->name(), ")"));
  }
  const HloInstruction* lhs = dot->operand(0);
  const HloInstruction* rhs = dot->operand(1);
  std::optional<GpuDataType> in = DataType(lhs->shape().element_type());
  std::optional<GpuDataType> out = DataType(dot->shape().element_type());
  if (!in || !out || rhs->shape().element_type() != lhs->shape().element_type()) {
    return Refuse(absl::StrCat("element types ", PrimitiveTypeName(lhs->shape().element_type()),
                               " x ", PrimitiveTypeName(rhs->shape().element_type()), " -> ",
                               PrimitiveTypeName(dot->shape().element_type()),
                               " (cuBLASLt path takes f32, f16, bf16)"));
  }
  g.input_type = *in;
  g.output_type = *out;
  if (g.output_type != g.input_type && g.output_type != GpuDataType::kF32) {
    return Refuse("the result type is neither the input type nor f32");
  }
  g.allow_tf32 =
      options.allow_tf32 && g.input_type == GpuDataType::kF32 && AllDefaultPrecision(*dot);
  const xla::DotDimensionNumbers& dn = dot->attrs().dot_dimension_numbers;
  const int64_t batch = dn.lhs_batch_dimensions_size();
  if (dn.rhs_batch_dimensions_size() != batch || dn.lhs_contracting_dimensions_size() != 1 ||
      dn.rhs_contracting_dimensions_size() != 1) {
    return Refuse("the dot does not contract exactly one dimension");
  }
  for (int64_t b = 0; b < batch; ++b) {
    if (dn.lhs_batch_dimensions(b) != b || dn.rhs_batch_dimensions(b) != b) {
      return Refuse("batch dimensions are not the leading ones");
    }
  }
  if (batched != (batch > 0)) {
    return Refuse(batched ? "hloc.batched_gemm without batch dimensions"
                          : "hloc.gemm with batch dimensions");
  }
  const std::vector<int64_t>& ld = lhs->shape().dimensions();
  const std::vector<int64_t>& rd = rhs->shape().dimensions();
  const int64_t lr = static_cast<int64_t>(ld.size()), rr = static_cast<int64_t>(rd.size());
  const int64_t lc = dn.lhs_contracting_dimensions(0), rc = dn.rhs_contracting_dimensions(0);
  if (rr != batch + 2 || lr < batch + 2) return Refuse("operand ranks do not make a gemm");
  for (int64_t b = 0; b < batch; ++b) {
    if (ld[b] != rd[b]) return Refuse("batch sizes differ");
  }
  if (lc == lr - 1) {
    g.lhs_transposed = false;
    g.m = Product(ld, batch, lr - 1);
    g.k = ld[lc];
  } else if (lr == batch + 2 && lc == batch) {
    g.lhs_transposed = true;
    g.m = ld[batch + 1];
    g.k = ld[batch];
  } else {
    return Refuse("the left operand's contracting dimension is neither of its last two");
  }
  if (rc == batch) {
    g.rhs_transposed = false;
    g.n = rd[batch + 1];
  } else if (rc == batch + 1) {
    g.rhs_transposed = true;
    g.n = rd[batch];
  } else {
    return Refuse("the right operand's contracting dimension is not one of its last two");
  }
  if (rd[rc] != g.k) return Refuse("contracting sizes differ");
  g.batch = Product(ld, 0, batch);
  if (g.m == 0 || g.n == 0 || g.k == 0 || g.batch == 0) return Refuse("an empty matrix");
  absl::Status valid = g.Validate();
  if (!valid.ok()) return Refuse(valid.message());
  absl::StatusOr<CalleeValue> lhs_value = ValueOf(lhs, "the left operand");
  if (!lhs_value.ok()) return lhs_value.status();
  absl::StatusOr<CalleeValue> rhs_value = ValueOf(rhs, "the right operand");
  if (!rhs_value.ok()) return rhs_value.status();
  plan.operands = {*lhs_value, *rhs_value};
  const std::vector<VectorStep> vectors = EpilogueVectors(dot, root);
  if (vectors.size() != (bias ? 1u : 0u) || (bias && vectors[0].op != HloOpcode::kAdd)) {
    return Refuse(absl::StrCat("the callee's epilogue does not match '",
                               absl::StrJoin(attrs.steps, "_"), "'"));
  }
  if (bias) {
    const HloInstruction* v = vectors[0].vector;
    if (v->shape().dimensions(0) != g.n ||
        v->shape().element_type() != dot->shape().element_type()) {
      return Refuse("the bias is not a vector of the result type along the last dimension");
    }
    absl::StatusOr<CalleeValue> bias_value = ValueOf(v, "the bias");
    if (!bias_value.ok()) return bias_value.status();
    plan.operands.push_back(*bias_value);
  }
  return plan;
}

// Positions of a conv operand's batch/feature/spatial dimensions in layout
// order: channels-first is b, f, s0, s1..; channels-last b, s0, s1.., f.
std::optional<cuda::ConvLayout> LayoutOf(int64_t batch, int64_t feature,
                                         const std::vector<int64_t>& spatial) {
  const int64_t r = static_cast<int64_t>(spatial.size());
  if (batch != 0) return std::nullopt;
  bool first = feature == 1, last = feature == r + 1;
  for (int64_t i = 0; i < r; ++i) {
    first = first && spatial[i] == 2 + i;
    last = last && spatial[i] == 1 + i;
  }
  if (first) return cuda::ConvLayout::kChannelsFirst;
  if (last) return cuda::ConvLayout::kChannelsLast;
  return std::nullopt;
}

absl::StatusOr<LibraryCallPlan> PlanConv(const HloInstruction& call, const CallAttributes& attrs,
                                         const LibraryCallOptions& options) {
  const HloComputation& callee = *call.to_apply();
  absl::StatusOr<const HloInstruction*> found = FindOnly(callee, HloOpcode::kConvolution);
  if (!found.ok()) return found.status();
  const HloInstruction* conv = *found;
  const HloInstruction* root = callee.root();
  LibraryCallPlan plan;
  plan.library = GpuLibrary::kCudnn;
  ConvConfig& c = plan.conv;
  // Steps sub, scale, bias, relu in that order, each at most once.
  static const char* const kOrder[] = {"sub", "scale", "bias", "relu"};
  std::vector<std::string> vector_steps;
  size_t next = 0;
  bool relu = false;
  for (const std::string& step : attrs.steps) {
    while (next < 4 && step != kOrder[next]) ++next;
    if (next == 4) {
      return Refuse(absl::StrCat("cuDNN path has no '", step, "' epilogue step in this position"));
    }
    ++next;
    if (step == "relu") {
      relu = true;
    } else {
      vector_steps.push_back(step);
    }
  }
  c.alpha = attrs.alpha;
  if (attrs.beta != 0.0) return Refuse("beta != 0");
  if (!root->shape().IsArray()) return Refuse("the call returns a tuple (extra outputs)");
  if (root->shape().dimensions() != conv->shape().dimensions() ||
      root->shape().element_type() != conv->shape().element_type()) {
    return Refuse("the epilogue changes the convolution's shape or type");
  }
  if (attrs.steps.empty() && c.alpha == 1.0 && root != conv) {
    return Refuse(
        absl::StrCat("the callee computes more than its convolution (root %", root->name(), ")"));
  }
  const HloInstruction* input = conv->operand(0);
  const HloInstruction* filter = conv->operand(1);
  std::optional<GpuDataType> type = DataType(conv->shape().element_type());
  if (!type || input->shape().element_type() != conv->shape().element_type() ||
      filter->shape().element_type() != conv->shape().element_type()) {
    return Refuse("element types are not one of f32, f16, bf16 throughout");
  }
  c.type = *type;
  c.allow_tf32 = options.allow_tf32 && c.type == GpuDataType::kF32 && AllDefaultPrecision(*conv);
  const HloAttributes& a = conv->attrs();
  const xla::ConvolutionDimensionNumbers& dn = a.convolution_dimension_numbers;
  if (a.batch_group_count != 1) return Refuse("batch_group_count != 1");
  const std::vector<int64_t> in_spatial(dn.input_spatial_dimensions().begin(),
                                        dn.input_spatial_dimensions().end());
  const std::vector<int64_t> out_spatial(dn.output_spatial_dimensions().begin(),
                                         dn.output_spatial_dimensions().end());
  const std::vector<int64_t> k_spatial(dn.kernel_spatial_dimensions().begin(),
                                       dn.kernel_spatial_dimensions().end());
  const int64_t r = static_cast<int64_t>(in_spatial.size());
  if (r < 1 || r > 3 || a.window->dimensions_size() != r) {
    return Refuse(absl::StrCat(r, " spatial dimensions (cuDNN path takes 1 to 3)"));
  }
  std::optional<cuda::ConvLayout> in_layout =
      LayoutOf(dn.input_batch_dimension(), dn.input_feature_dimension(), in_spatial);
  std::optional<cuda::ConvLayout> out_layout =
      LayoutOf(dn.output_batch_dimension(), dn.output_feature_dimension(), out_spatial);
  if (!in_layout)
    return Refuse("the input's dimension order is neither NC<spatial> nor N<spatial>C");
  if (!out_layout || *out_layout != *in_layout) {
    return Refuse("the output's dimension order differs from the input's");
  }
  c.layout = *in_layout;
  c.filter_layout = c.layout == cuda::ConvLayout::kChannelsFirst
                        ? cuda::FilterLayout::kOutputInputSpatial
                        : cuda::FilterLayout::kOutputSpatialInput;
  // The filter order cuDNN reads, as HLO dimension numbers of the filter.
  std::vector<int64_t> wanted = {dn.kernel_output_feature_dimension()};
  if (c.layout == cuda::ConvLayout::kChannelsFirst)
    wanted.push_back(dn.kernel_input_feature_dimension());
  wanted.insert(wanted.end(), k_spatial.begin(), k_spatial.end());
  if (c.layout == cuda::ConvLayout::kChannelsLast)
    wanted.push_back(dn.kernel_input_feature_dimension());
  bool identity = true;
  for (size_t i = 0; i < wanted.size(); ++i)
    identity = identity && wanted[i] == static_cast<int64_t>(i);
  if (!identity) plan.filter_permutation = wanted;
  const std::vector<int64_t>& id = input->shape().dimensions();
  const std::vector<int64_t>& kd = filter->shape().dimensions();
  const std::vector<int64_t>& od = conv->shape().dimensions();
  c.batch = id[dn.input_batch_dimension()];
  c.input_features = id[dn.input_feature_dimension()];
  c.output_features = kd[dn.kernel_output_feature_dimension()];
  c.groups = a.feature_group_count;
  if (od[dn.output_feature_dimension()] != c.output_features ||
      od[dn.output_batch_dimension()] != c.batch) {
    return Refuse("output batch or feature size does not match");
  }
  if (c.groups < 1 || kd[dn.kernel_input_feature_dimension()] * c.groups != c.input_features) {
    return Refuse("filter input features times groups differ from the input features");
  }
  bool asymmetric = false;
  for (int64_t i = 0; i < r; ++i) {
    const xla::WindowDimension& w = a.window->dimensions(i);
    if (w.base_dilation() > 1) return Refuse("input (lhs) dilation: a transposed convolution");
    if (w.window_reversal()) return Refuse("window reversal");
    if (w.padding_low() < 0 || w.padding_high() < 0) return Refuse("negative padding");
    asymmetric = asymmetric || w.padding_low() != w.padding_high();
  }
  for (int64_t i = 0; i < r; ++i) {
    const xla::WindowDimension& w = a.window->dimensions(i);
    // Asymmetric padding: the input is padded explicitly, cuDNN pads nothing.
    const int64_t extra = asymmetric ? w.padding_low() + w.padding_high() : 0;
    if (asymmetric) {
      plan.input_pad_low.push_back(w.padding_low());
      plan.input_pad_high.push_back(w.padding_high());
    }
    c.input_spatial.push_back(id[in_spatial[i]] + extra);
    c.filter_spatial.push_back(kd[k_spatial[i]]);
    c.output_spatial.push_back(od[out_spatial[i]]);
    if (w.size() != kd[k_spatial[i]]) return Refuse("window size differs from the filter size");
    c.strides.push_back(w.stride() == 0 ? 1 : w.stride());
    c.padding.push_back(asymmetric ? 0 : w.padding_low());
    c.dilation.push_back(w.window_dilation() == 0 ? 1 : w.window_dilation());
  }
  absl::Status valid = c.Validate();
  if (!valid.ok()) return Refuse(valid.message());
  absl::StatusOr<CalleeValue> input_value = ValueOf(input, "the input");
  if (!input_value.ok()) return input_value.status();
  absl::StatusOr<CalleeValue> filter_value = ValueOf(filter, "the filter");
  if (!filter_value.ok()) return filter_value.status();
  plan.operands = {*input_value, *filter_value};
  // The vectors, matched to the steps in order.
  const std::vector<VectorStep> vectors = EpilogueVectors(conv, root);
  if (vectors.size() != vector_steps.size()) {
    return Refuse(absl::StrCat("the callee's epilogue does not match '",
                               absl::StrJoin(attrs.steps, "_"), "'"));
  }
  for (size_t i = 0; i < vectors.size(); ++i) {
    const std::string& step = vector_steps[i];
    const HloOpcode expected = step == "sub"     ? HloOpcode::kSubtract
                               : step == "scale" ? HloOpcode::kMultiply
                                                 : HloOpcode::kAdd;
    const HloInstruction* v = vectors[i].vector;
    if (vectors[i].op != expected || v->shape().dimensions(0) != c.output_features ||
        v->shape().element_type() != conv->shape().element_type()) {
      return Refuse(absl::StrCat("the '", step, "' vector is not a ", HloOpcodeName(expected),
                                 " of a vector along the output features"));
    }
    absl::StatusOr<CalleeValue> value = ValueOf(v, absl::StrCat("the ", step, " vector"));
    if (!value.ok()) return value.status();
    (step == "sub" ? plan.sub : step == "scale" ? plan.scale : plan.bias) = *value;
  }
  const bool any_bias = plan.sub.has_value() || plan.bias.has_value();
  c.epilogue = relu       ? cuda::ConvEpilogue::kBiasRelu
               : any_bias ? cuda::ConvEpilogue::kBias
                          : cuda::ConvEpilogue::kNone;
  return plan;
}

}  // namespace

absl::Status GpuLibraryAvailable(LibraryUse use, GpuLibrary library) {
  if (use == LibraryUse::kAvailable) return absl::OkStatus();
  if (use == LibraryUse::kUnavailable) {
    return absl::FailedPreconditionError(
        absl::StrCat(GpuLibraryName(library), " disabled by the compile options"));
  }
  if (library == GpuLibrary::kCublasLt) return cuda::CublasLtLibrary::Get().status();
  return cuda::CudnnLibrary::Get().status();
}

absl::string_view GpuLibraryName(GpuLibrary library) {
  return library == GpuLibrary::kCublasLt ? "cuBLASLt" : "cuDNN";
}

std::string LibraryCallPlan::ToString() const {
  std::string out = library == GpuLibrary::kCublasLt ? gemm.ToString() : conv.ToString();
  std::vector<std::string> names;
  for (const CalleeValue& v : operands) {
    names.push_back(v.parameter >= 0 ? absl::StrCat("p", v.parameter)
                                     : absl::StrCat("%", v.constant->name()));
  }
  absl::StrAppend(&out, " operands=(", absl::StrJoin(names, ", "), ")");
  auto name = [](const CalleeValue& v) {
    return v.parameter >= 0 ? absl::StrCat("p", v.parameter)
                            : absl::StrCat("%", v.constant->name());
  };
  if (!input_pad_low.empty()) {
    absl::StrAppend(&out, " input_pad=", absl::StrJoin(input_pad_low, "x"), "/",
                    absl::StrJoin(input_pad_high, "x"));
  }
  if (!filter_permutation.empty()) {
    absl::StrAppend(&out, " filter_transpose={", absl::StrJoin(filter_permutation, ","), "}");
  }
  if (sub) absl::StrAppend(&out, " sub=", name(*sub));
  if (scale) absl::StrAppend(&out, " scale=", name(*scale));
  if (bias && library == GpuLibrary::kCudnn) absl::StrAppend(&out, " bias=", name(*bias));
  return out;
}

double LibraryCallFlops(const LibraryCallPlan& plan) {
  if (plan.library == GpuLibrary::kCublasLt) {
    const cuda::GemmConfig& g = plan.gemm;
    return 2.0 * static_cast<double>(g.batch) * static_cast<double>(g.m) *
           static_cast<double>(g.n) * static_cast<double>(g.k);
  }
  const cuda::ConvConfig& c = plan.conv;
  double flops = 2.0 * static_cast<double>(c.batch) * static_cast<double>(c.output_features) *
                 static_cast<double>(c.input_features) /
                 static_cast<double>(std::max<int64_t>(c.groups, 1));
  for (int64_t d : c.output_spatial) flops *= static_cast<double>(d);
  for (int64_t d : c.filter_spatial) flops *= static_cast<double>(d);
  return flops;
}

std::optional<std::string> GpuLibraryFamily(const HloInstruction& call) {
  if (call.opcode() != HloOpcode::kCall || call.to_apply() == nullptr) return std::nullopt;
  const std::string* name = call.FindFrontendAttribute(kCompositeName);
  if (name == nullptr) return std::nullopt;
  const LibraryEpilogueFamily* family = FindEpilogueFamily(*name);
  if (family == nullptr) return std::nullopt;
  return family->base;
}

absl::StatusOr<LibraryCallPlan> PlanLibraryCall(const HloInstruction& call,
                                                const LibraryCallOptions& options) {
  std::optional<std::string> family = GpuLibraryFamily(call);
  if (!family) {
    return absl::InvalidArgumentError(
        absl::StrCat("%", call.name(), " is not a gemm or convolution library call"));
  }
  absl::StatusOr<CallAttributes> attrs = ReadAttributes(call);
  if (!attrs.ok()) return attrs.status();
  if (*family == "hloc.conv") return PlanConv(call, *attrs, options);
  return PlanGemm(call, *attrs, *family == "hloc.batched_gemm", options);
}

}  // namespace gpu
}  // namespace hloc
