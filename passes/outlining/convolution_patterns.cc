// The convolution family of library patterns (cuDNN-style forward
// convolution with its fused epilogues):
//
//   hloc.conv             convolution(input, kernel)
//   hloc.conv_bias        add(convolution, broadcast(bias))
//   hloc.conv_bias_relu   maximum(add(convolution, broadcast(bias)), 0)
//
// The bias is a vector along the output feature dimension, wherever
// dim_labels put it. The library takes any dimension order (recorded), 1 to 3
// spatial dimensions, strides, padding, kernel dilation and feature groups;
// not input (lhs) dilation, which is a transposed convolution, nor batch
// groups, which only weight gradients use.
#include "absl/strings/str_cat.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/library_checks.h"
#include "passes/outlining/library_patterns.h"

namespace hloc {
namespace {

using pattern::BroadcastChain;
using pattern::Capture;
using pattern::Match;
using pattern::Op;
using pattern::Pattern;

Pattern Conv() { return Capture("conv", Op(HloOpcode::kConvolution)); }

Pattern ConvBiasAdd() {
  return Capture(
      "bias_add",
      Op(HloOpcode::kAdd)
          .WithOperands(Conv(), Capture("bias_broadcast", BroadcastChain(Capture(
                                                              "bias", pattern::Any().WithRank(1)))))
          .Commutative());
}

Refusal CheckConv(const HloInstruction* conv, const LibraryCheckOptions& options) {
  const HloInstruction* input = conv->operand(0);
  const HloInstruction* kernel = conv->operand(1);
  HLOC_REFUSE_IF(CheckLibraryFloat(input));
  PrimitiveType type = input->shape().element_type();
  if (kernel->shape().element_type() != type || conv->shape().element_type() != type) {
    return absl::StrCat(conv->name(), " mixes element types");
  }
  HLOC_REFUSE_IF(CheckStatic(conv));
  const HloAttributes& a = conv->attrs();
  if (a.batch_group_count != 1) {
    return absl::StrCat(conv->name(), " has batch_group_count=", a.batch_group_count,
                        " (a weight-gradient convolution)");
  }
  int64_t spatial = a.convolution_dimension_numbers->input_spatial_dimensions_size();
  if (spatial < 1 || spatial > 3) {
    return absl::StrCat(conv->name(), " has ", spatial,
                        " spatial dimensions (the library takes 1 to 3)");
  }
  for (const xla::WindowDimension& w : a.window->dimensions()) {
    if (w.base_dilation() > 1) {
      return absl::StrCat(
          conv->name(),
          " dilates its input (a transposed convolution, lhs_dilation=", w.base_dilation(), ")");
    }
    if (w.window_reversal()) return absl::StrCat(conv->name(), " reverses its window");
  }
  HLOC_REFUSE_IF(CheckLayouts(conv, options));
  return std::nullopt;
}

Refusal CheckConvBias(const Match& m, const LibraryCheckOptions& options) {
  const HloInstruction* conv = m.Get("conv");
  HLOC_REFUSE_IF(CheckConv(conv, options));
  int64_t feature = conv->attrs().convolution_dimension_numbers->output_feature_dimension();
  const HloInstruction* add = m.Get("bias_add");
  HLOC_REFUSE_IF(
      CheckVectorAlong(m.Get("bias_broadcast"), m.Get("bias"), feature, add->shape(), "bias"));
  HLOC_REFUSE_IF(CheckLayouts(add, options));
  return std::nullopt;
}

std::string ConvAttributes(const Match& m, absl::string_view epilogue) {
  const HloInstruction* conv = m.Get("conv");
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
  CompositeAttributes attributes;
  attributes.Int("input_batch_dim", dn.input_batch_dimension())
      .Int("input_feature_dim", dn.input_feature_dimension())
      .Ints("input_spatial_dims", ToVector(dn.input_spatial_dimensions()))
      .Int("kernel_input_feature_dim", dn.kernel_input_feature_dimension())
      .Int("kernel_output_feature_dim", dn.kernel_output_feature_dimension())
      .Ints("kernel_spatial_dims", ToVector(dn.kernel_spatial_dimensions()))
      .Int("output_batch_dim", dn.output_batch_dimension())
      .Int("output_feature_dim", dn.output_feature_dimension())
      .Ints("output_spatial_dims", ToVector(dn.output_spatial_dimensions()))
      .Ints("window_size", size)
      .Ints("window_strides", stride)
      .Ints("padding_low", pad_low)
      .Ints("padding_high", pad_high)
      .Ints("rhs_dilation", rhs_dilation)
      .Int("feature_group_count", a.feature_group_count)
      .Float("alpha", 1.0)
      .String("epilogue", epilogue);
  RecordLayout(attributes, "input_layout", conv->operand(0));
  RecordLayout(attributes, "kernel_layout", conv->operand(1));
  RecordLayout(attributes, "result_layout", m.root());
  return attributes.ToString();
}

const std::vector<std::string>& ConvAttributeNames() {
  static const auto* names = new std::vector<std::string>{"input_batch_dim",
                                                          "input_feature_dim",
                                                          "input_spatial_dims",
                                                          "kernel_input_feature_dim",
                                                          "kernel_output_feature_dim",
                                                          "kernel_spatial_dims",
                                                          "output_batch_dim",
                                                          "output_feature_dim",
                                                          "output_spatial_dims",
                                                          "window_size",
                                                          "window_strides",
                                                          "padding_low",
                                                          "padding_high",
                                                          "rhs_dilation",
                                                          "feature_group_count",
                                                          "alpha",
                                                          "epilogue",
                                                          "input_layout",
                                                          "kernel_layout",
                                                          "result_layout"};
  return *names;
}

// input, kernel[, bias]: the order the library reads them.
std::vector<const HloInstruction*> ConvOperands(const Match& m) {
  const HloInstruction* conv = m.Get("conv");
  std::vector<const HloInstruction*> operands = {conv->operand(0), conv->operand(1)};
  if (const HloInstruction* bias = m.Get("bias")) operands.push_back(bias);
  return operands;
}

NumericsContract ConvNumerics() {
  return {NumericsContract::Kind::kReformulation, 0,
          "summation order is the library's (direct, implicit-gemm or Winograd algorithms); "
          "accumulation at least in the result type"};
}

}  // namespace

void AppendConvolutionPatterns(std::vector<LibraryPattern>* table) {
  {
    LibraryPattern p;
    p.name = "hloc.conv";
    p.priority = 10;
    p.pattern = Conv();
    p.check = [](const Match& m, const LibraryCheckOptions& o) {
      return CheckConv(m.Get("conv"), o);
    };
    p.attributes = [](const Match& m) { return ConvAttributes(m, "none"); };
    p.recorded_attributes = ConvAttributeNames();
    p.numerics = ConvNumerics();
    p.operands = ConvOperands;
    table->push_back(std::move(p));
  }
  {
    LibraryPattern p;
    p.name = "hloc.conv_bias";
    p.priority = 20;
    p.pattern = ConvBiasAdd();
    p.check = CheckConvBias;
    p.attributes = [](const Match& m) { return ConvAttributes(m, "bias"); };
    p.recorded_attributes = ConvAttributeNames();
    p.numerics = ConvNumerics();
    p.operands = ConvOperands;
    table->push_back(std::move(p));
  }
  {
    LibraryPattern p;
    p.name = "hloc.conv_bias_relu";
    p.priority = 30;
    p.pattern = Op(HloOpcode::kMaximum)
                    .WithOperands(ConvBiasAdd(), pattern::SplatConstant(0))
                    .Commutative();
    p.check = [](const Match& m, const LibraryCheckOptions& o) -> Refusal {
      HLOC_REFUSE_IF(CheckConvBias(m, o));
      return CheckLayouts(m.root(), o);
    };
    p.attributes = [](const Match& m) { return ConvAttributes(m, "bias_relu"); };
    p.recorded_attributes = ConvAttributeNames();
    p.numerics = ConvNumerics();
    p.operands = ConvOperands;
    table->push_back(std::move(p));
  }
}

}  // namespace hloc
