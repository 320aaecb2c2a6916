// Every library pattern on a small module written the way JAX emits it: what
// is outlined, what the call's operands and composite attributes are, and
// what each check refuses (with the smaller pattern taking over).
#include "passes/outlining/library_patterns.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/text_printer.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/library_epilogues.h"
#include "passes/outlining/outlining_test_helpers.h"

namespace hloc {
namespace {

using outlining_testing::CompositeAttribute;
using outlining_testing::Entries;
using outlining_testing::FindInstruction;
using outlining_testing::LibraryCallNames;
using outlining_testing::LibraryCalls;
using outlining_testing::Outline;
using outlining_testing::ParseOrDie;
using outlining_testing::ReadWorkspaceFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// x @ w + b with JAX's reshape/broadcast chain for the bias, then relu.
constexpr char kGemmBiasRelu[] = R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,64] parameter(1)
  b = f32[64] parameter(2)
  dot = f32[8,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r1 = f32[1,64] reshape(b)
  b1 = f32[1,64] broadcast(r1), dimensions={0,1}
  r2 = f32[64] reshape(b1)
  bb = f32[8,64] broadcast(r2), dimensions={1}
  add = f32[8,64] add(dot, bb)
  zero = f32[] constant(0)
  zeros = f32[8,64] broadcast(zero), dimensions={}
  ROOT relu = f32[8,64] maximum(add, zeros)
})";

TEST(LibraryPatterns, TableHasTheRequiredNamesEachOnce) {
  std::vector<std::string> names;
  for (const LibraryPattern& p : DefaultLibraryPatterns()) {
    EXPECT_TRUE(p.check != nullptr && p.attributes != nullptr) << p.name;
    EXPECT_FALSE(p.recorded_attributes.empty()) << p.name;
    EXPECT_FALSE(p.numerics.ToString().empty()) << p.name;
    names.push_back(p.name);
  }
  for (const char* required :
       {"hloc.gemm", "hloc.gemm_bias", "hloc.gemm_bias_relu", "hloc.gemm_bias_gelu",
        "hloc.batched_gemm", "hloc.conv", "hloc.conv_bias_relu", "hloc.softmax", "hloc.layer_norm",
        "hloc.attention"}) {
    EXPECT_EQ(std::count(names.begin(), names.end(), required), 1) << required;
  }
}

TEST(LibraryPatterns, GemmBiasReluTakesTheWholeEpilogue) {
  auto module = ParseOrDie(kGemmBiasRelu);
  FusionLedger ledger;
  LibraryOutliningStats stats = Outline(*module, &ledger);
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm_bias_relu"));
  HloInstruction* call = LibraryCalls(*module)[0];
  EXPECT_EQ(module->entry()->root(), call);
  EXPECT_TRUE(call->is_composite());
  EXPECT_EQ(CompositeAttribute(*call, kCompositeVersion), "1");
  EXPECT_EQ(CompositeAttribute(*call, kCompositeAttributes),
            "{alpha = 1.0 : f64, beta = 0.0 : f64, epilogue = \"bias_relu\", "
            "lhs_batch_dims = array<i64>, lhs_contracting_dims = array<i64: 1>, "
            "rhs_batch_dims = array<i64>, rhs_contracting_dims = array<i64: 0>}");
  // Operands: x, w and the bias vector; the callee holds the rest.
  ASSERT_EQ(call->operand_count(), 3);
  EXPECT_EQ(call->operand(0)->name(), "x");
  EXPECT_EQ(call->operand(1)->name(), "w");
  EXPECT_EQ(call->operand(2)->name(), "b");
  // 3 parameters, dot, the bias chain (4), add, zero, zeros, relu.
  EXPECT_EQ(call->to_apply()->instruction_count(), 12);
  EXPECT_EQ(module->entry()->instruction_count(), 4);
  EXPECT_EQ(stats.dots, 1);
  EXPECT_EQ(stats.dots_outlined, 1);
  // The smaller matches at add and dot lost to it.
  EXPECT_EQ(Entries(ledger, "outlined").size(), 1u);
  ASSERT_EQ(Entries(ledger, "overlap", "hloc.gemm_bias").size(), 1u);
  EXPECT_THAT(Entries(ledger, "overlap", "hloc.gemm_bias")[0]->reason,
              HasSubstr("overlaps gemm_bias_relu"));
  EXPECT_EQ(Entries(ledger, "overlap", "hloc.gemm").size(), 1u);
}

TEST(LibraryPatterns, GemmAndBatchedGemm) {
  auto module = ParseOrDie(R"(
HloModule m
ENTRY e {
  a = f32[2,16,64] parameter(0)
  w = f32[64,32] parameter(1)
  q = f32[4,8,16] parameter(2)
  k = f32[4,16,8] parameter(3)
  proj = f32[2,16,32] dot(a, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  bmm = f32[4,8,8] dot(q, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = (f32[2,16,32], f32[4,8,8]) tuple(proj, bmm)
})");
  FusionLedger ledger;
  LibraryOutliningStats stats = Outline(*module, &ledger);
  EXPECT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm", "hloc.batched_gemm"));
  EXPECT_THAT(CompositeAttribute(*LibraryCalls(*module)[1], kCompositeAttributes),
              HasSubstr("lhs_batch_dims = array<i64: 0>"));
  EXPECT_EQ(stats.dots_outlined, 2);
}

TEST(LibraryPatterns, GemmChecksRefuseWithReasons) {
  auto module = ParseOrDie(R"(
HloModule m
ENTRY e {
  a = s32[8,16] parameter(0)
  b = s32[16,4] parameter(1)
  c = f32[8,4,2] parameter(2)
  d = f32[4,2,5] parameter(3)
  e = f32[8,16] parameter(4)
  f = f32[16,4] parameter(5)
  ints = s32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  two = f32[8,5] dot(c, d), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}
  cm = f32[8,4]{0,1} dot(e, f), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[8,4], f32[8,5], f32[8,4]{0,1}) tuple(ints, two, cm)
})");
  FusionLedger ledger;
  LibraryOutliningOptions strict;
  strict.check.require_row_major_layouts = true;
  LibraryOutliningStats stats = Outline(*module, &ledger, DefaultLibraryPatterns(), strict);
  EXPECT_TRUE(LibraryCalls(*module).empty());
  ASSERT_EQ(stats.not_outlined.size(), 3u);
  EXPECT_THAT(stats.not_outlined[0].second, HasSubstr("has type s32"));
  EXPECT_THAT(stats.not_outlined[1].second, HasSubstr("contracts 2 dimensions"));
  EXPECT_THAT(stats.not_outlined[2].second, HasSubstr("not row-major"));
  // By default the column-major result is fine: strides express it, and the
  // layout is recorded.
  module = ParseOrDie(R"(
HloModule m
ENTRY e {
  e = f32[8,16] parameter(0)
  f = f32[16,4] parameter(1)
  ROOT cm = f32[8,4]{0,1} dot(e, f), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  Outline(*module, nullptr);
  EXPECT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm"));
  EXPECT_THAT(CompositeAttribute(*LibraryCalls(*module)[0], kCompositeAttributes),
              HasSubstr("result_layout = array<i64: 0, 1>"));
}

TEST(LibraryPatterns, BiasMustBeAVectorAlongTheOutputFeatures) {
  auto module = ParseOrDie(R"(
HloModule m
ENTRY e {
  x = f32[64,32] parameter(0)
  w = f32[32,64] parameter(1)
  v = f32[64] parameter(2)
  dot = f32[64,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  rows = f32[64,64] broadcast(v), dimensions={0}
  ROOT add = f32[64,64] add(dot, rows)
})");
  FusionLedger ledger;
  Outline(*module, &ledger);
  EXPECT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm"));
  EXPECT_EQ(module->entry()->root()->opcode(), HloOpcode::kAdd);
  ASSERT_EQ(Entries(ledger, "check", "hloc.gemm_bias").size(), 1u);
  EXPECT_THAT(Entries(ledger, "check", "hloc.gemm_bias")[0]->reason,
              HasSubstr("broadcast along {0}, not along dimension 1"));
}

TEST(LibraryPatterns, GeluTanhFormFromTheZoo) {
  std::string text = ReadWorkspaceFile("tests/jax/zoo/mlp_gelu.before.txt");
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  FusionLedger ledger;
  LibraryOutliningStats stats = Outline(*module, &ledger);
  EXPECT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm_bias_gelu", "hloc.gemm_bias"));
  EXPECT_THAT(CompositeAttribute(*LibraryCalls(*module)[0], kCompositeAttributes),
              HasSubstr("epilogue = \"bias_gelu_tanh\""));
  // The callee holds the whole activation: one tanh, no multiply left outside.
  EXPECT_EQ(LibraryCalls(*module)[0]->to_apply()->root()->opcode(), HloOpcode::kMultiply);
  EXPECT_EQ(stats.dots_outlined, 2);
  module->entry()->ForEachInstruction([](HloInstruction* i) {
    EXPECT_NE(i->opcode(), HloOpcode::kTanh) << "tanh left outside the call";
  });
}

TEST(LibraryPatterns, GeluErfFormAsJaxExpandsIt) {
  std::string text = ReadWorkspaceFile("passes/outlining/testdata/gelu_erf_mlp.hlo");
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  int64_t before = module->entry()->instruction_count();
  Outline(*module, nullptr);
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm_bias_gelu"));
  EXPECT_THAT(CompositeAttribute(*LibraryCalls(*module)[0], kCompositeAttributes),
              HasSubstr("epilogue = \"bias_gelu_erf\""));
  // Over 100 instructions of erfc expansion went into the call.
  EXPECT_GT(before, 100);
  EXPECT_LT(module->entry()->instruction_count(), 12);
}

TEST(LibraryPatterns, OtherActivationsAreNotGelu) {
  auto module = ParseOrDie(R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,64] parameter(1)
  b = f32[64] parameter(2)
  dot = f32[8,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,64] broadcast(b), dimensions={1}
  add = f32[8,64] add(dot, bb)
  t = f32[8,64] tanh(add)
  ROOT y = f32[8,64] multiply(add, t)
})");
  FusionLedger ledger;
  Outline(*module, &ledger);
  EXPECT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm_bias"));
  ASSERT_EQ(Entries(ledger, "check", "hloc.gemm_bias_gelu").size(), 1u);
  EXPECT_THAT(Entries(ledger, "check", "hloc.gemm_bias_gelu")[0]->reason,
              HasSubstr("activation is not GELU"));
}

constexpr char kConvBiasRelu[] = R"(
HloModule m
ENTRY e {
  x = f32[2,16,16,8] parameter(0)
  w = f32[3,3,8,16] parameter(1)
  b = f32[16] parameter(2)
  conv = f32[2,16,16,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  r = f32[1,1,1,16] reshape(b)
  r2 = f32[16] reshape(r)
  bb = f32[2,16,16,16] broadcast(r2), dimensions={3}
  add = f32[2,16,16,16] add(bb, conv)
  zero = f32[] constant(0)
  zeros = f32[2,16,16,16] broadcast(zero), dimensions={}
  ROOT relu = f32[2,16,16,16] maximum(zeros, add)
})";

TEST(LibraryPatterns, ConvBiasRelu) {
  auto module = ParseOrDie(kConvBiasRelu);
  LibraryOutliningStats stats = Outline(*module, nullptr);
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("hloc.conv_bias_relu"));
  std::string attributes = CompositeAttribute(*LibraryCalls(*module)[0], kCompositeAttributes);
  EXPECT_THAT(attributes, HasSubstr("epilogue = \"bias_relu\""));
  EXPECT_THAT(attributes, HasSubstr("output_feature_dim = 3 : i64"));
  EXPECT_THAT(attributes, HasSubstr("padding_low = array<i64: 1, 1>"));
  EXPECT_EQ(stats.convolutions_outlined, 1);
}

TEST(LibraryPatterns, ConvBiasAndConvChecks) {
  // Bias along the spatial dimension 1 (16 wide as well): not a conv bias.
  auto module = ParseOrDie(R"(
HloModule m
ENTRY e {
  x = f32[2,16,16,8] parameter(0)
  w = f32[3,3,8,16] parameter(1)
  b = f32[16] parameter(2)
  conv = f32[2,16,16,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,16,16,16] broadcast(b), dimensions={1}
  add = f32[2,16,16,16] add(conv, bb)
  y = f32[2,8,8,8] parameter(3)
  k = f32[3,3,8,8] parameter(4)
  up = f32[2,15,15,8] convolution(y, k), window={size=3x3 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[2,16,16,16], f32[2,15,15,8]) tuple(add, up)
})");
  FusionLedger ledger;
  LibraryOutliningStats stats = Outline(*module, &ledger);
  EXPECT_THAT(LibraryCallNames(*module), ElementsAre("hloc.conv"));
  EXPECT_THAT(Entries(ledger, "check", "hloc.conv_bias")[0]->reason,
              HasSubstr("not along dimension 3"));
  ASSERT_EQ(stats.not_outlined.size(), 1u);
  EXPECT_EQ(stats.not_outlined[0].first, "up");
  EXPECT_THAT(stats.not_outlined[0].second, HasSubstr("transposed convolution"));
  // A conv_bias proper.
  module = ParseOrDie(R"(
HloModule m
ENTRY e {
  x = f32[1,4,12,12] parameter(0)
  w = f32[8,4,5,5] parameter(1)
  b = f32[8] parameter(2)
  conv = f32[1,8,6,6] convolution(x, w), window={size=5x5 stride=2x2 pad=1_2x1_2}, dim_labels=bf01_oi01->bf01
  bb = f32[1,8,6,6] broadcast(b), dimensions={1}
  ROOT add = f32[1,8,6,6] add(conv, bb)
})");
  Outline(*module, nullptr);
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("hloc.conv_bias"));
  EXPECT_THAT(CompositeAttribute(*LibraryCalls(*module)[0], kCompositeAttributes),
              HasSubstr("window_strides = array<i64: 2, 2>"));
}

TEST(LibraryPatterns, SoftmaxFromTheZoo) {
  auto module = ParseOrDie(ReadWorkspaceFile("tests/jax/zoo/softmax.before.txt"));
  ASSERT_NE(module, nullptr);
  Outline(*module, nullptr);
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("hloc.softmax"));
  EXPECT_EQ(module->entry()->root(), LibraryCalls(*module)[0]);
  EXPECT_EQ(CompositeAttribute(*LibraryCalls(*module)[0], kCompositeAttributes),
            "{axis = 1 : i64}");
  // Only the parameter is left outside.
  EXPECT_EQ(module->entry()->instruction_count(), 2);
}

TEST(LibraryPatterns, LayerNormFromTheZoo) {
  auto module = ParseOrDie(ReadWorkspaceFile("tests/jax/zoo/layer_norm.before.txt"));
  ASSERT_NE(module, nullptr);
  FusionLedger ledger;
  Outline(*module, &ledger);
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("hloc.layer_norm"));
  HloInstruction* call = LibraryCalls(*module)[0];
  EXPECT_EQ(module->entry()->root(), call);
  EXPECT_EQ(CompositeAttribute(*call, kCompositeAttributes),
            "{axis = 1 : i64, epsilon = 1e-05 : f32, has_offset = true, has_scale = true}");
  // x, and the scale and offset vectors.
  EXPECT_EQ(call->operand_count(), 3);
  // The smaller forms (without offset, without scale) lost on size.
  EXPECT_EQ(Entries(ledger, "overlap", "hloc.layer_norm").size(), 2u);
}

TEST(LibraryPatterns, AttentionFromTheZoo) {
  std::string text = ReadWorkspaceFile("tests/jax/zoo/attention.before.txt");
  // JAX's transposes of q, k and v carry layout {3,1,2,0}: a strided view,
  // recorded by default, refused when row-major layouts are required.
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  FusionLedger ledger;
  LibraryOutliningOptions strict;
  strict.check.require_row_major_layouts = true;
  Outline(*module, &ledger, DefaultLibraryPatterns(), strict);
  ASSERT_EQ(Entries(ledger, "check", "hloc.attention").size(), 1u);
  EXPECT_THAT(Entries(ledger, "check", "hloc.attention")[0]->reason, HasSubstr("not row-major"));
  EXPECT_THAT(LibraryCallNames(*module),
              ElementsAre("hloc.gemm", "hloc.gemm", "hloc.gemm", "hloc.softmax", "hloc.gemm"));
  // By default the whole attention is one call.
  module = ParseOrDie(text);
  Outline(*module, nullptr);
  EXPECT_THAT(LibraryCallNames(*module),
              ElementsAre("hloc.gemm", "hloc.gemm", "hloc.gemm", "hloc.attention", "hloc.gemm"));
  HloInstruction* attention = LibraryCalls(*module)[3];
  EXPECT_EQ(CompositeAttribute(*attention, kCompositeAttributes),
            "{has_mask = true, k_layout = array<i64: 3, 1, 2, 0>, mask_dims = array<i64: 2, 3>, "
            "mask_fill = -3.4028235e+38 : f32, q_layout = array<i64: 3, 1, 2, 0>, "
            "scale = 0.25 : f32, v_layout = array<i64: 3, 1, 2, 0>}");
  ASSERT_EQ(attention->operand_count(), 4);  // q, k, v, mask: the schema's order
  EXPECT_EQ(attention->operand(3)->shape().element_type(), xla::PRED);
}

// DecodeLibraryCall reads back what the patterns write: the descriptor
// every backend uses instead of the attribute text.
TEST(LibraryCallDescriptorTest, DecodesWhatTheOutlinerWrites) {
  std::unique_ptr<HloModule> module = ParseOrDie(kGemmBiasRelu);
  Outline(*module, nullptr);
  ASSERT_EQ(LibraryCalls(*module).size(), 1u);
  absl::StatusOr<LibraryCallDescriptor> d = DecodeLibraryCall(*LibraryCalls(*module)[0]);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->name, "hloc.gemm_bias_relu");
  EXPECT_EQ(d->family_name(), "hloc.gemm");
  EXPECT_THAT(d->epilogue, ElementsAre(EpilogueStep::kBias, EpilogueStep::kRelu));
  EXPECT_EQ(d->alpha, 1.0);
  EXPECT_EQ(d->beta, 0.0);
  EXPECT_EQ(d->Ints("lhs_contracting_dims"), std::vector<int64_t>{1});
  EXPECT_EQ(d->Ints("lhs_batch_dims"), std::vector<int64_t>{});
  EXPECT_FALSE(d->Ints("window_size").has_value());
}

TEST(LibraryCallDescriptorTest, RefusesEpiloguesThatDisagreeWithTheName) {
  std::unique_ptr<HloModule> module = ParseOrDie(kGemmBiasRelu);
  Outline(*module, nullptr);
  HloInstruction* call = LibraryCalls(*module)[0];
  auto with_attributes = [&](const std::string& text) {
    call->SetFrontendAttribute(kCompositeAttributes, text);
    return DecodeLibraryCall(*call);
  };
  absl::StatusOr<LibraryCallDescriptor> d =
      with_attributes("{alpha = 0x7FF8000000000000 : f64, n = -3 : i64, epilogue = \"bias_relu\"}");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(std::isnan(d->alpha));
  EXPECT_EQ(d->Int("n"), -3);
  for (const char* refused : {"{epilogue = \"relu_bias\"}", "{epilogue = \"bias\"}",
                              "{epilogue = \"bias_swish\"}", "{epilogue = \"sub_bias_relu\"}"}) {
    d = with_attributes(refused);
    EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition) << refused;
  }
  for (const char* malformed : {"{a}", "{alpha = \"x\", epilogue = \"bias_relu\"}"}) {
    d = with_attributes(malformed);
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << malformed;
  }
  EXPECT_EQ(DecodeLibraryCall(*call->operand(0)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hloc
