// LibraryEpilogueFusion: each epilogue step and alpha absorbed (same
// attributes as the outliner records for the same subgraph, same interpreter
// results), each refusal with its reason in the ledger, the fusion-rules
// switch and overrides, a second run changing nothing, text and proto round
// trips; batch norm after a convolution (the conv_bn_relu zoo model); the
// operand order of the schema; strided layouts recorded instead of refused.
#include "passes/outlining/library_epilogue_fusion.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/proto_io.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/library_capabilities.h"
#include "passes/outlining/library_epilogues.h"
#include "passes/outlining/outlining_report.h"
#include "passes/outlining/outlining_test_helpers.h"

namespace hloc {
namespace {

using outlining_testing::CompositeAttribute;
using outlining_testing::LibraryCallNames;
using outlining_testing::LibraryCalls;
using outlining_testing::Outline;
using outlining_testing::ParseOrDie;
using outlining_testing::ReadWorkspaceFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Outlines with `disabled` patterns left out, then runs epilogue fusion.
struct Grown {
  std::unique_ptr<HloModule> module;
  FusionLedger ledger;
  LibraryEpilogueStats stats;
  bool changed = false;
};

std::unique_ptr<Grown> OutlineAndGrow(absl::string_view text,
                                      absl::flat_hash_set<std::string> disabled = {},
                                      FusionRules rules = FusionRules(),
                                      LibraryCheckOptions check = {}) {
  auto grown = std::make_unique<Grown>();
  grown->module = ParseOrDie(text);
  if (grown->module == nullptr) return grown;
  LibraryOutliningOptions options;
  options.disabled_patterns = std::move(disabled);
  options.check = check;
  Outline(*grown->module, &grown->ledger, DefaultLibraryPatterns(), options);
  LibraryEpilogueFusion pass(std::move(rules), check, &grown->ledger);
  absl::StatusOr<bool> changed = pass.Run(*grown->module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  grown->changed = changed.value_or(false);
  grown->stats = pass.stats();
  absl::Status valid = VerifyModule(*grown->module);
  EXPECT_TRUE(valid.ok()) << valid << "\n" << PrintModule(*grown->module);
  return grown;
}

// The interpreter gives the same bits before and after.
void ExpectSameResults(absl::string_view original_text, const HloModule& changed) {
  std::unique_ptr<HloModule> original = ParseOrDie(original_text);
  ASSERT_NE(original, nullptr);
  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(*original, 11);
  ASSERT_TRUE(arguments.ok()) << arguments.status();
  absl::StatusOr<Literal> before = Evaluate(*original, *arguments);
  ASSERT_TRUE(before.ok()) << before.status();
  absl::StatusOr<Literal> after = Evaluate(changed, *arguments);
  ASSERT_TRUE(after.ok()) << after.status();
  Tolerance exact;
  exact.rtol = 0;
  exact.atol = 0;
  ComparisonReport report = CompareLiterals(*before, *after, exact);
  EXPECT_TRUE(report.ok) << report.ToString();
}

std::vector<const LedgerEntry*> EpilogueEntries(const FusionLedger& ledger,
                                                absl::string_view event) {
  std::vector<const LedgerEntry*> found;
  for (const LedgerEntry& e : ledger.entries()) {
    if (e.pass == LibraryEpilogueFusion::kPassName && e.event == event) found.push_back(&e);
  }
  return found;
}

std::string Refusals(const FusionLedger& ledger) {
  std::string out;
  for (const LedgerEntry* e : EpilogueEntries(ledger, "refused")) {
    absl::StrAppend(&out, e->rule, ": ", e->reason, "\n");
  }
  return out;
}

constexpr char kGemmBiasRelu[] = R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  b = f32[16] parameter(2)
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,16] broadcast(b), dimensions={1}
  a = f32[8,16] add(d, bb)
  z = f32[] constant(0)
  zb = f32[8,16] broadcast(z), dimensions={}
  ROOT r = f32[8,16] maximum(a, zb)
})";

TEST(LibraryEpilogueFusion, GemmAbsorbsBiasThenReluAsTheOutlinerWouldRecord) {
  auto grown = OutlineAndGrow(kGemmBiasRelu, {"hloc.gemm_bias", "hloc.gemm_bias_relu"});
  ASSERT_NE(grown->module, nullptr);
  EXPECT_TRUE(grown->changed);
  ASSERT_THAT(LibraryCallNames(*grown->module), ElementsAre("hloc.gemm_bias_relu"));
  HloInstruction* call = LibraryCalls(*grown->module)[0];
  EXPECT_EQ(grown->module->entry()->root(), call);
  ASSERT_EQ(call->operand_count(), 3);
  EXPECT_EQ(call->operand(0)->name(), "x");
  EXPECT_EQ(call->operand(1)->name(), "w");
  EXPECT_EQ(call->operand(2)->name(), "b");
  EXPECT_EQ(grown->stats.absorbed.at("bias"), 1);
  EXPECT_EQ(grown->stats.absorbed.at("relu"), 1);
  EXPECT_EQ(EpilogueEntries(grown->ledger, "absorbed").size(), 2u);

  // The outliner, matching the whole subgraph at once, records the same.
  FusionLedger ledger;
  std::unique_ptr<HloModule> direct = ParseOrDie(kGemmBiasRelu);
  Outline(*direct, &ledger);
  ASSERT_THAT(LibraryCallNames(*direct), ElementsAre("hloc.gemm_bias_relu"));
  EXPECT_EQ(CompositeAttribute(*call, kCompositeAttributes),
            CompositeAttribute(*LibraryCalls(*direct)[0], kCompositeAttributes));
  ExpectSameResults(kGemmBiasRelu, *grown->module);
}

TEST(LibraryEpilogueFusion, SecondRunChangesNothing) {
  auto grown = OutlineAndGrow(kGemmBiasRelu, {"hloc.gemm_bias", "hloc.gemm_bias_relu"});
  ASSERT_NE(grown->module, nullptr);
  std::string first = PrintModule(*grown->module);
  LibraryEpilogueFusion again(FusionRules(), {}, &grown->ledger);
  absl::StatusOr<bool> changed = again.Run(*grown->module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(PrintModule(*grown->module), first);
}

TEST(LibraryEpilogueFusion, TextAndProtoRoundTripsKeepTheGrownCall) {
  auto grown = OutlineAndGrow(kGemmBiasRelu, {"hloc.gemm_bias", "hloc.gemm_bias_relu"});
  ASSERT_NE(grown->module, nullptr);
  const HloInstruction* call = LibraryCalls(*grown->module)[0];
  absl::StatusOr<std::unique_ptr<HloModule>> text = ParseHloModule(PrintModule(*grown->module));
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(*grown->module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  absl::StatusOr<std::unique_ptr<HloModule>> from_proto = ModuleFromProto(*proto);
  ASSERT_TRUE(from_proto.ok()) << from_proto.status();
  for (const HloModule* copy : {text->get(), from_proto->get()}) {
    ASSERT_TRUE(VerifyModule(*copy).ok());
    ASSERT_EQ(LibraryCalls(*copy).size(), 1u);
    const HloInstruction* copied = LibraryCalls(*copy)[0];
    EXPECT_TRUE(copied->is_composite());
    for (const char* key : {kCompositeName, kCompositeAttributes, kCompositeVersion}) {
      EXPECT_EQ(CompositeAttribute(*copied, key), CompositeAttribute(*call, key)) << key;
    }
    ExpectSameResults(kGemmBiasRelu, *copy);
    // A second run on the copy changes nothing either.
    std::unique_ptr<HloModule> again = copy->Clone();
    LibraryEpilogueFusion pass;
    absl::StatusOr<bool> changed = pass.Run(*again);
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(*changed);
  }
}

TEST(LibraryEpilogueFusion, ScalesBecomeAlpha) {
  // Consumer multiply and divide by constants, and a scaled lhs.
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  two = f32[] constant(2)
  twos = f32[8,32] broadcast(two), dimensions={}
  xs = f32[8,32] multiply(twos, x)
  d = f32[8,16] dot(xs, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  h = f32[8,16] constant({...})
  s = f32[8,16] multiply(d, h)
  four = f32[] constant(4)
  fours = f32[8,16] broadcast(four), dimensions={}
  ROOT q = f32[8,16] divide(s, fours)
})";
  std::string text = kText;
  // A splat constant written out in full.
  std::string row = "{" + std::string("0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, ") +
                    "0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}";
  std::string splat = "{";
  for (int i = 0; i < 8; ++i) absl::StrAppend(&splat, i ? ", " : "", row);
  splat += "}";
  text.replace(text.find("{...}"), 5, splat);
  auto grown = OutlineAndGrow(text);
  ASSERT_NE(grown->module, nullptr);
  ASSERT_THAT(LibraryCallNames(*grown->module), ElementsAre("hloc.gemm"));
  HloInstruction* call = LibraryCalls(*grown->module)[0];
  EXPECT_EQ(call->operand(0)->name(), "x");  // the scale moved into the body
  EXPECT_EQ(grown->module->entry()->root(), call);
  absl::StatusOr<CompositeAttributes> attributes =
      CompositeAttributes::Parse(CompositeAttribute(*call, kCompositeAttributes));
  ASSERT_TRUE(attributes.ok());
  EXPECT_EQ(attributes->GetFloat("alpha"), 2 * 0.5 / 4);
  EXPECT_EQ(attributes->GetString("epilogue"), "none");
  EXPECT_EQ(grown->stats.absorbed.at("operand alpha"), 1);
  EXPECT_EQ(grown->stats.absorbed.at("alpha"), 2);
  ExpectSameResults(text, *grown->module);
}

TEST(LibraryEpilogueFusion, RefusalsSayWhy) {
  struct Case {
    const char* name;
    const char* text;
    const char* reason;
    int64_t grown = 0;  // calls that absorbed something before the refusal
  };
  const Case cases[] = {
      {"bias along the wrong dimension", R"(
HloModule m
ENTRY e {
  x = f32[16,32] parameter(0)
  w = f32[32,16] parameter(1)
  b = f32[16] parameter(2)
  d = f32[16,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[16,16] broadcast(b), dimensions={0}
  ROOT a = f32[16,16] add(d, bb)
})",
       "not along dimension 1"},
      {"scale after the bias", R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  b = f32[16] parameter(2)
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,16] broadcast(b), dimensions={1}
  a = f32[8,16] add(d, bb)
  c = f32[] constant(3)
  cb = f32[8,16] broadcast(c), dimensions={}
  ROOT s = f32[8,16] multiply(a, cb)
})",
       "a scale after the 'bias' epilogue"},
      {"result used twice", R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  zb = f32[8,16] broadcast(z), dimensions={}
  r = f32[8,16] maximum(d, zb)
  ROOT t = (f32[8,16], f32[8,16]) tuple(r, d)
})",
       "its result has 2 users"},
      {"per-column scale of a gemm", R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  v = f32[16] parameter(2)
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  vb = f32[8,16] broadcast(v), dimensions={1}
  ROOT s = f32[8,16] multiply(d, vb)
})",
       "hloc.gemm fuses no 'scale' epilogue step"},
      {"bias after relu", R"(
HloModule m
ENTRY e {
  x = f32[1,8,8,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  b = f32[8] parameter(2)
  c = f32[1,8,8,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  zb = f32[1,8,8,8] broadcast(z), dimensions={}
  r = f32[1,8,8,8] maximum(c, zb)
  bb = f32[1,8,8,8] broadcast(b), dimensions={3}
  ROOT a = f32[1,8,8,8] add(r, bb)
})",
       "hloc.conv cannot apply 'bias' after 'relu'", 1},
      {"an elementwise user that is no step", R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[8,16] tanh(d)
})",
       "its only user t (tanh) is no epilogue step the library fuses"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto grown = OutlineAndGrow(c.text);
    ASSERT_NE(grown->module, nullptr);
    EXPECT_EQ(grown->stats.calls_grown, c.grown) << PrintModule(*grown->module);
    EXPECT_THAT(Refusals(grown->ledger), HasSubstr(c.reason));
    // `hloc explain`'s outlining report shows it too.
    EXPECT_THAT(RenderLibraryOutliningReport(grown->ledger), HasSubstr(c.reason));
    ExpectSameResults(c.text, *grown->module);
  }
}

TEST(LibraryEpilogueFusion, FusionRulesSwitchAndOverrides) {
  FusionRules off;
  off.set_fuse_library_epilogues(false);
  auto grown = OutlineAndGrow(kGemmBiasRelu, {"hloc.gemm_bias", "hloc.gemm_bias_relu"}, off);
  ASSERT_NE(grown->module, nullptr);
  EXPECT_FALSE(grown->changed);
  EXPECT_THAT(LibraryCallNames(*grown->module), ElementsAre("hloc.gemm"));

  // The relu may not fuse by name: the bias goes in, the relu stays out.
  FusionRules no_relu;
  no_relu.NeverFuseInstruction("r");
  grown = OutlineAndGrow(kGemmBiasRelu, {"hloc.gemm_bias", "hloc.gemm_bias_relu"}, no_relu);
  ASSERT_NE(grown->module, nullptr);
  EXPECT_THAT(LibraryCallNames(*grown->module), ElementsAre("hloc.gemm_bias"));
  EXPECT_THAT(Refusals(grown->ledger), HasSubstr("the fusion rules keep r out"));
}

TEST(LibraryEpilogueFusion, GeluOfAGemmBias) {
  std::string text = ReadWorkspaceFile("tests/jax/zoo/mlp_gelu.before.txt");
  ASSERT_FALSE(text.empty());
  auto grown = OutlineAndGrow(text, {"hloc.gemm_bias_gelu"});
  ASSERT_NE(grown->module, nullptr);
  EXPECT_THAT(LibraryCallNames(*grown->module),
              ElementsAre("hloc.gemm_bias_gelu", "hloc.gemm_bias"));
  EXPECT_EQ(grown->stats.absorbed.at("gelu_tanh"), 1);
  FusionLedger ledger;
  std::unique_ptr<HloModule> direct = ParseOrDie(text);
  Outline(*direct, &ledger);
  ASSERT_THAT(LibraryCallNames(*direct), ElementsAre("hloc.gemm_bias_gelu", "hloc.gemm_bias"));
  EXPECT_EQ(CompositeAttribute(*LibraryCalls(*grown->module)[0], kCompositeAttributes),
            CompositeAttribute(*LibraryCalls(*direct)[0], kCompositeAttributes));
  ExpectSameResults(text, *grown->module);
}

TEST(LibraryEpilogueFusion, InferenceBatchNormAfterConvolution) {
  // conv_bn_relu: (conv - mean) * (scale * rsqrt(var + eps)) + offset, relu.
  std::string text = ReadWorkspaceFile("tests/jax/zoo/conv_bn_relu.before.txt");
  ASSERT_FALSE(text.empty());
  auto grown = OutlineAndGrow(text);
  ASSERT_NE(grown->module, nullptr);
  ASSERT_THAT(LibraryCallNames(*grown->module), ElementsAre("hloc.conv_sub_scale_bias_relu"));
  HloInstruction* call = LibraryCalls(*grown->module)[0];
  EXPECT_EQ(grown->module->entry()->root(), call);
  ASSERT_EQ(call->operand_count(), 5);
  EXPECT_EQ(call->operand(0)->name(), "x.1");
  EXPECT_EQ(call->operand(1)->name(), "w.1");
  EXPECT_EQ(call->operand(2)->name(), "mean.1");
  EXPECT_EQ(call->operand(3)->opcode(), HloOpcode::kMultiply);  // scale * rsqrt(var + eps)
  EXPECT_EQ(call->operand(4)->name(), "offset.1");
  EXPECT_THAT(CompositeAttribute(*call, kCompositeAttributes),
              HasSubstr("epilogue = \"sub_scale_bias_relu\""));
  ExpectSameResults(text, *grown->module);
  EXPECT_TRUE(LibraryCapabilities::AllDefaultPatterns().Implements(
      "hloc.conv_sub_scale_bias_relu"));
}

TEST(LibraryEpilogueFusion, ConvolutionBiasAndReluAsTheOutlinerWouldRecord) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  x = f32[1,8,8,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  b = f32[8] parameter(2)
  c = f32[1,8,8,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[1,8,8,8] broadcast(b), dimensions={3}
  a = f32[1,8,8,8] add(c, bb)
  z = f32[] constant(0)
  zb = f32[1,8,8,8] broadcast(z), dimensions={}
  ROOT r = f32[1,8,8,8] maximum(a, zb)
})";
  auto grown = OutlineAndGrow(kText, {"hloc.conv_bias", "hloc.conv_bias_relu"});
  ASSERT_NE(grown->module, nullptr);
  ASSERT_THAT(LibraryCallNames(*grown->module), ElementsAre("hloc.conv_bias_relu"));
  FusionLedger ledger;
  std::unique_ptr<HloModule> direct = ParseOrDie(kText);
  Outline(*direct, &ledger);
  ASSERT_THAT(LibraryCallNames(*direct), ElementsAre("hloc.conv_bias_relu"));
  EXPECT_EQ(CompositeAttribute(*LibraryCalls(*grown->module)[0], kCompositeAttributes),
            CompositeAttribute(*LibraryCalls(*direct)[0], kCompositeAttributes));
  ExpectSameResults(kText, *grown->module);
  // relu straight after the convolution.
  auto relu_only = OutlineAndGrow(R"(
HloModule m
ENTRY e {
  x = f32[1,8,8,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  c = f32[1,8,8,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  zb = f32[1,8,8,8] broadcast(z), dimensions={}
  ROOT r = f32[1,8,8,8] maximum(zb, c)
})");
  ASSERT_NE(relu_only->module, nullptr);
  EXPECT_THAT(LibraryCallNames(*relu_only->module), ElementsAre("hloc.conv_relu"));
}

TEST(LibraryEpilogueRegistry, NamesStepsAndParsing) {
  std::vector<std::string> names = LibraryEpilogueNames();
  for (const char* name : {"hloc.gemm", "hloc.gemm_bias", "hloc.gemm_relu", "hloc.gemm_bias_gelu",
                           "hloc.batched_gemm_bias_relu", "hloc.conv_bias", "hloc.conv_relu",
                           "hloc.conv_sub_scale_bias_relu", "hloc.conv_scale_bias"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_EQ(std::find(names.begin(), names.end(), "hloc.gemm_scale"), names.end());
  absl::StatusOr<std::vector<EpilogueStep>> steps = ParseEpilogue("bias_gelu_erf");
  ASSERT_TRUE(steps.ok());
  EXPECT_THAT(*steps, ElementsAre(EpilogueStep::kBias, EpilogueStep::kGeluErf));
  EXPECT_EQ(EpilogueToString(*steps), "bias_gelu_erf");
  EXPECT_FALSE(ParseEpilogue("bias_swish").ok());
  EXPECT_EQ(FindEpilogueFamily("hloc.batched_gemm_bias")->base, "hloc.batched_gemm");
  EXPECT_EQ(FindEpilogueFamily("hloc.softmax"), nullptr);
}

TEST(CompositeAttributesParse, RoundTripsWhatItPrints) {
  CompositeAttributes a;
  a.Float("alpha", 0.125).String("epilogue", "bias \"q\"").Ints("dims", {1, 2}).Int("n", -3);
  absl::StatusOr<CompositeAttributes> parsed = CompositeAttributes::Parse(a.ToString());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->ToString(), a.ToString());
  EXPECT_EQ(parsed->GetFloat("alpha"), 0.125);
  EXPECT_EQ(parsed->GetString("epilogue"), "bias \"q\"");
  EXPECT_EQ(parsed->GetInt("n"), -3);
  EXPECT_FALSE(parsed->GetString("alpha").has_value());
  parsed->Erase("dims");
  EXPECT_FALSE(parsed->Has("dims"));
  EXPECT_FALSE(CompositeAttributes::Parse("alpha = 1").ok());
  EXPECT_FALSE(CompositeAttributes::Parse("{alpha}").ok());
}

// ---- Operand order and layouts (the outliner's side of the schema).

TEST(LibraryCallSchema, OperandsComeInTheLibrarysOrder) {
  // The bias broadcast comes first in program order; the call still passes
  // lhs, rhs, bias.
  auto module = ParseOrDie(R"(
HloModule m
ENTRY e {
  b = f32[16] parameter(0)
  w = f32[32,16] parameter(1)
  x = f32[8,32] parameter(2)
  bb = f32[8,16] broadcast(b), dimensions={1}
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT a = f32[8,16] add(bb, d)
})");
  ASSERT_NE(module, nullptr);
  FusionLedger ledger;
  Outline(*module, &ledger);
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm_bias"));
  HloInstruction* call = LibraryCalls(*module)[0];
  ASSERT_EQ(call->operand_count(), 3);
  EXPECT_EQ(call->operand(0)->name(), "x");
  EXPECT_EQ(call->operand(1)->name(), "w");
  EXPECT_EQ(call->operand(2)->name(), "b");
  // A value in two roles is passed twice, once per role.
  constexpr char kSquare[] = R"(
HloModule m
ENTRY e {
  x = f32[16,16] parameter(0)
  ROOT d = f32[16,16] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  module = ParseOrDie(kSquare);
  ASSERT_NE(module, nullptr);
  Outline(*module, nullptr);
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm"));
  call = LibraryCalls(*module)[0];
  ASSERT_EQ(call->operand_count(), 2);
  EXPECT_EQ(call->operand(0)->name(), "x");
  EXPECT_EQ(call->operand(1)->name(), "x");
  EXPECT_EQ(call->to_apply()->root()->operand(0), call->to_apply()->parameter(0));
  EXPECT_EQ(call->to_apply()->root()->operand(1), call->to_apply()->parameter(1));
  ExpectSameResults(kSquare, *module);
}

constexpr char kTransposedBatchedDot[] = R"(
HloModule m
ENTRY e {
  p = f32[2,16,4,8] parameter(0)
  q = f32[2,4,8,16] parameter(1)
  t = f32[2,4,16,8]{3,1,2,0} transpose(p), dimensions={0,2,1,3}
  d = f32[2,4,16,16] dot(t, q), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}
  c = f32[] constant(4)
  cb = f32[2,4,16,16] broadcast(c), dimensions={}
  ROOT s = f32[2,4,16,16] divide(d, cb)
})";

TEST(LibraryCallSchema, StridedLayoutsAreRecordedNotRefused) {
  auto grown = OutlineAndGrow(kTransposedBatchedDot);
  ASSERT_NE(grown->module, nullptr);
  ASSERT_THAT(LibraryCallNames(*grown->module), ElementsAre("hloc.batched_gemm"));
  std::string attributes = CompositeAttribute(*LibraryCalls(*grown->module)[0],
                                              kCompositeAttributes);
  EXPECT_THAT(attributes, HasSubstr("lhs_layout = array<i64: 3, 1, 2, 0>"));
  EXPECT_THAT(attributes, Not(HasSubstr("rhs_layout")));     // row-major: absent
  EXPECT_THAT(attributes, Not(HasSubstr("result_layout")));  // row-major: absent
  EXPECT_THAT(attributes, HasSubstr("alpha = 0.25 : f64"));  // the divide by 4
  ExpectSameResults(kTransposedBatchedDot, *grown->module);

  // With row-major layouts required, the same dot is refused.
  LibraryCheckOptions strict;
  strict.require_row_major_layouts = true;
  auto refused = OutlineAndGrow(kTransposedBatchedDot, {}, FusionRules(), strict);
  ASSERT_NE(refused->module, nullptr);
  EXPECT_TRUE(LibraryCalls(*refused->module).empty());

  // A tiled layout is refused either way.
  std::string tiled = kTransposedBatchedDot;
  tiled.replace(tiled.find("{3,1,2,0}"), 9, "{3,2,1,0:T(8,128)}");
  auto tiled_refused = OutlineAndGrow(tiled);
  ASSERT_NE(tiled_refused->module, nullptr);
  EXPECT_TRUE(LibraryCalls(*tiled_refused->module).empty());
}

}  // namespace
}  // namespace hloc
