// The outliner's hard cases: cheap operands duplicated into the call, values
// used outside a match (extra outputs or refusal), cycles, deterministic
// overlap resolution, composite attributes through text and proto round
// trips and renaming, the ledger, and inlining what a backend lacks.
#include "passes/outlining/outline_library_calls.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/outline.h"
#include "hlo/proto_io.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/library_capabilities.h"
#include "passes/outlining/outlining_report.h"
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
using pattern::Any;
using pattern::Op;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

LibraryPattern TestPattern(std::string name, int priority, pattern::Pattern p) {
  LibraryPattern library;
  library.name = std::move(name);
  library.priority = priority;
  library.pattern = std::move(p);
  library.check = [](const pattern::Match&, const LibraryCheckOptions&) { return Refusal(); };
  library.attributes = [](const pattern::Match&) { return std::string("{}"); };
  return library;
}

TEST(OutlineLibraryCalls, CheapOperandIsDuplicatedAndStaysForOtherUsers) {
  // c = constant; a = add(c, p); s = sub(a, c) with add(c, p) matched.
  auto module = ParseOrDie(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(c, p)
  ROOT s = f32[4] subtract(a, c)
})");
  std::vector<LibraryPattern> table = {
      TestPattern("test.add_constant", 1,
                  Op(HloOpcode::kAdd).WithOperands(pattern::Constant(), Any()).Commutative())};
  FusionLedger ledger;
  Outline(*module, &ledger, table);
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("test.add_constant"));
  HloInstruction* call = LibraryCalls(*module)[0];
  ASSERT_EQ(call->operand_count(), 1);
  EXPECT_EQ(call->operand(0)->name(), "p");
  HloInstruction* s = module->entry()->root();
  EXPECT_EQ(s->operand(0), call);
  EXPECT_EQ(s->operand(1)->name(), "c");  // the original constant, still there
  EXPECT_EQ(s->operand(1)->opcode(), HloOpcode::kConstant);
  // The callee has its own copy.
  int constants = 0;
  call->to_apply()->ForEachInstruction(
      [&](HloInstruction* i) { constants += i->opcode() == HloOpcode::kConstant; });
  EXPECT_EQ(constants, 1);
  EXPECT_EQ(call->to_apply()->root()->opcode(), HloOpcode::kAdd);
}

TEST(OutlineLibraryCalls, OutlinePrimitiveDuplicatesOnlyWhatItMay) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(2)
  b = f32[4] broadcast(c), dimensions={}
  m = f32[4] multiply(p, b)
  ROOT r = f32[4] add(m, b)
})";
  auto module = ParseOrDie(kText);
  HloComputation* entry = module->entry();
  std::vector<HloInstruction*> set = {FindInstruction(*module, "c"), FindInstruction(*module, "b"),
                                      FindInstruction(*module, "m")};
  OutlineOptions options;
  options.duplicable = {set[0], set[1]};
  absl::StatusOr<OutlineResult> result = OutlineInstructions(entry, set, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(VerifyModule(*module).ok()) << PrintModule(*module);
  EXPECT_EQ(result->outputs.size(), 1u);  // only m: b stays for r
  EXPECT_EQ(result->caller->operand_count(), 1);
  EXPECT_EQ(entry->root()->operand(0), result->caller);
  EXPECT_EQ(entry->root()->operand(1)->name(), "b");
  EXPECT_EQ(entry->instruction_count(), 5);  // p, c, b, call, r
  // A kept member must not read a member that goes away.
  module = ParseOrDie(kText);
  set = {FindInstruction(*module, "c"), FindInstruction(*module, "b"),
         FindInstruction(*module, "m")};
  options.duplicable = {set[1]};
  result = OutlineInstructions(module->entry(), set, options);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("cannot duplicate b: its operand c is outlined and not duplicable"));
  EXPECT_EQ(module->entry()->instruction_count(), 5);  // unchanged
}

TEST(OutlineLibraryCalls, IntermediateUsedOutsideIsRefusedByPolicy) {
  // The bias add is also returned: gemm_bias_relu would need it as a second
  // output and its policy refuses; gemm_bias (rooted at the add) takes over.
  auto module = ParseOrDie(R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,64] parameter(1)
  b = f32[64] parameter(2)
  dot = f32[8,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,64] broadcast(b), dimensions={1}
  add = f32[8,64] add(dot, bb)
  zero = f32[] constant(0)
  zeros = f32[8,64] broadcast(zero), dimensions={}
  relu = f32[8,64] maximum(add, zeros)
  ROOT t = (f32[8,64], f32[8,64]) tuple(relu, add)
})");
  FusionLedger ledger;
  Outline(*module, &ledger);
  EXPECT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm_bias"));
  ASSERT_EQ(Entries(ledger, "outside-use", "hloc.gemm_bias_relu").size(), 1u);
  EXPECT_THAT(Entries(ledger, "outside-use", "hloc.gemm_bias_relu")[0]->reason,
              HasSubstr("intermediate add is used outside the match"));
  EXPECT_EQ(FindInstruction(*module, "relu")->operand(0), LibraryCalls(*module)[0]);
}

TEST(OutlineLibraryCalls, IntermediateUsedOutsideBecomesAnExtraOutput) {
  // softmax's exp is also returned: softmax's policy adds a tuple output.
  auto module = ParseOrDie(R"(
HloModule m
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,128] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[8] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  mb = f32[8,128] broadcast(mx), dimensions={0}
  sub = f32[8,128] subtract(x, mb)
  ex = f32[8,128] exponential(sub)
  zero = f32[] constant(0)
  sum = f32[8] reduce(ex, zero), dimensions={1}, to_apply=add_f32
  sb = f32[8,128] broadcast(sum), dimensions={0}
  div = f32[8,128] divide(ex, sb)
  ROOT t = (f32[8,128], f32[8,128]) tuple(div, ex)
})");
  FusionLedger ledger;
  Outline(*module, &ledger);
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("hloc.softmax"));
  HloInstruction* call = LibraryCalls(*module)[0];
  EXPECT_TRUE(call->shape().IsTuple());
  EXPECT_EQ(call->shape().tuple_shapes_size(), 2);
  HloInstruction* root = module->entry()->root();
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(root->operand(k)->opcode(), HloOpcode::kGetTupleElement);
    EXPECT_EQ(root->operand(k)->operand(0), call);
  }
  EXPECT_THAT(Entries(ledger, "outlined", "hloc.softmax")[0]->result, HasSubstr("2 outputs"));
}

TEST(OutlineLibraryCalls, MatchThatWouldMakeACycleIsRefused) {
  // The bias is computed from the dot itself: outlining add+dot+broadcast
  // would need the reduce both after and before the call.
  auto module = ParseOrDie(R"(
HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,64] parameter(1)
  dot = f32[8,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  colsum = f32[64] reduce(dot, zero), dimensions={0}, to_apply=add_f32
  bb = f32[8,64] broadcast(colsum), dimensions={1}
  ROOT add = f32[8,64] add(dot, bb)
})");
  std::string text = PrintModule(*module);
  // gemm_bias refuses first: the dot is an intermediate read by the reduce.
  FusionLedger ledger;
  Outline(*module, &ledger);
  ASSERT_EQ(Entries(ledger, "outside-use", "hloc.gemm_bias").size(), 1u);
  EXPECT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm"));
  // A pattern that returns such values as extra outputs hits the cycle.
  LibraryPattern extra = TestPattern("test.add_of_dot", 1,
                                     Op(HloOpcode::kAdd).WithOperands(Op(HloOpcode::kDot), Any()));
  extra.outside_uses = OutsideUsePolicy::kExtraOutputs;
  module = ParseOrDie(text);
  FusionLedger cycle_ledger;
  Outline(*module, &cycle_ledger, {extra});
  ASSERT_EQ(Entries(cycle_ledger, "cycle", "test.add_of_dot").size(), 1u);
  EXPECT_THAT(Entries(cycle_ledger, "cycle")[0]->reason, HasSubstr("cycle"));
  EXPECT_THAT(LibraryCalls(*module), IsEmpty());
}

// m = multiply(p0, p1); a = add(m, p2); n = negate(a)
constexpr char kChain[] = R"(
HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  p2 = f32[4] parameter(2)
  m = f32[4] multiply(p0, p1)
  a = f32[4] add(m, p2)
  ROOT n = f32[4] negate(a)
})";

std::vector<std::string> Winners(std::vector<LibraryPattern> table) {
  auto module = ParseOrDie(kChain);
  Outline(*module, nullptr, std::move(table));
  return LibraryCallNames(*module);
}

TEST(OutlineLibraryCalls, OverlapsResolveByPriorityThenSizeThenTableOrder) {
  auto add_of_mul = [](int priority) {
    return TestPattern("test.add_of_mul", priority,
                       Op(HloOpcode::kAdd).WithOperands(Op(HloOpcode::kMultiply), Any()));
  };
  auto neg_of_add = [](int priority) {
    return TestPattern("test.neg_of_add", priority,
                       Op(HloOpcode::kNegate).WithOperands(Op(HloOpcode::kAdd)));
  };
  auto all_three = [](int priority) {
    return TestPattern(
        "test.all_three", priority,
        Op(HloOpcode::kNegate)
            .WithOperands(Op(HloOpcode::kAdd).WithOperands(Op(HloOpcode::kMultiply), Any())));
  };
  // Equal priority and size: table order.
  EXPECT_THAT(Winners({add_of_mul(1), neg_of_add(1)}), ElementsAre("test.add_of_mul"));
  EXPECT_THAT(Winners({neg_of_add(1), add_of_mul(1)}), ElementsAre("test.neg_of_add"));
  // Priority first.
  EXPECT_THAT(Winners({add_of_mul(1), neg_of_add(2)}), ElementsAre("test.neg_of_add"));
  // Then the larger match.
  EXPECT_THAT(Winners({add_of_mul(1), neg_of_add(1), all_three(1)}), ElementsAre("test.all_three"));
  EXPECT_THAT(Winners({add_of_mul(2), all_three(1)}), ElementsAre("test.add_of_mul"));
}

TEST(OutlineLibraryCalls, SamePatternOverlappingItselfTakesProgramOrder) {
  // Two candidate negate(negate) matches share the middle negate.
  auto module = ParseOrDie(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n1 = f32[4] negate(p)
  n2 = f32[4] negate(n1)
  ROOT n3 = f32[4] negate(n2)
})");
  FusionLedger ledger;
  Outline(*module, &ledger,
          {TestPattern("test.double_negate", 1,
                       Op(HloOpcode::kNegate).WithOperands(Op(HloOpcode::kNegate)))});
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("test.double_negate"));
  EXPECT_EQ(LibraryCalls(*module)[0]->operand(0)->name(), "p");  // took n1, n2
  ASSERT_EQ(Entries(ledger, "overlap").size(), 1u);
  EXPECT_EQ(Entries(ledger, "overlap")[0]->subjects[0], "n3");
}

TEST(OutlineLibraryCalls, DeterministicOutputAndLedger) {
  std::string text = ReadWorkspaceFile("tests/jax/zoo/transformer_block.before.txt");
  std::string printed[2], ledgers[2];
  for (int run = 0; run < 2; ++run) {
    auto module = ParseOrDie(text);
    ASSERT_NE(module, nullptr);
    FusionLedger ledger;
    Outline(*module, &ledger);
    printed[run] = PrintModule(*module);
    ledgers[run] = ledger.ToText();
  }
  EXPECT_EQ(printed[0], printed[1]);
  EXPECT_EQ(ledgers[0], ledgers[1]);
}

constexpr char kMlp[] = R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,64] parameter(1)
  b = f32[64] parameter(2)
  w2 = f32[64,16] parameter(3)
  dot = f32[8,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,64] broadcast(b), dimensions={1}
  add = f32[8,64] add(dot, bb)
  zero = f32[] constant(0)
  zeros = f32[8,64] broadcast(zero), dimensions={}
  relu = f32[8,64] maximum(add, zeros)
  ROOT out = f32[8,16] dot(relu, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

void ExpectSameLibraryCalls(const HloModule& a, const HloModule& b) {
  std::vector<HloInstruction*> calls_a = LibraryCalls(a), calls_b = LibraryCalls(b);
  ASSERT_EQ(calls_a.size(), calls_b.size());
  for (size_t k = 0; k < calls_a.size(); ++k) {
    EXPECT_TRUE(calls_b[k]->is_composite());
    for (const char* key : {kCompositeName, kCompositeAttributes, kCompositeVersion}) {
      EXPECT_EQ(CompositeAttribute(*calls_a[k], key), CompositeAttribute(*calls_b[k], key));
    }
  }
}

TEST(OutlineLibraryCalls, CompositeAttributesSurviveTextRoundTrip) {
  auto module = ParseOrDie(kMlp);
  Outline(*module, nullptr);
  ASSERT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm_bias_relu", "hloc.gemm"));
  std::string text = PrintModule(*module);
  EXPECT_THAT(text, HasSubstr("is_composite=true"));
  EXPECT_THAT(text, HasSubstr("composite.name=\"hloc.gemm_bias_relu\""));
  auto reparsed = ParseHloModule(text);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << text;
  ASSERT_TRUE(VerifyModule(**reparsed).ok());
  ExpectSameLibraryCalls(*module, **reparsed);
  EXPECT_EQ(PrintModule(**reparsed), text);
}

TEST(OutlineLibraryCalls, CompositeAttributesSurviveProtoRoundTrip) {
  auto module = ParseOrDie(kMlp);
  Outline(*module, nullptr);
  absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(*module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  std::string bytes;
  ASSERT_TRUE(proto->SerializeToString(&bytes));
  xla::HloModuleProto read;
  ASSERT_TRUE(read.ParseFromString(bytes));
  auto back = ModuleFromProto(read);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(VerifyModule(**back).ok());
  ExpectSameLibraryCalls(*module, **back);
}

TEST(OutlineLibraryCalls, IdentitySurvivesRenamingAndBackendsInlineWhatTheyLack) {
  auto module = ParseOrDie(kMlp);
  Outline(*module, nullptr);
  // Rename every computation and call: the composite name still says what it is.
  for (HloComputation* c : module->computations()) {
    if (c != module->entry()) c->set_name(module->UniquifyComputationName("renamed"));
  }
  for (HloInstruction* call : LibraryCalls(*module)) call->set_name("whatever");
  LibraryCapabilities capabilities;
  capabilities.names = {"hloc.gemm"};
  FusionLedger ledger;
  InlineUnsupportedLibraryCalls inliner(capabilities, &ledger);
  absl::StatusOr<bool> changed = inliner.Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(VerifyModule(*module).ok()) << PrintModule(*module);
  EXPECT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm"));
  EXPECT_EQ(module->computation_count(), 2);  // entry and the gemm body
  ASSERT_EQ(ledger.entries().size(), 1u);
  EXPECT_EQ(ledger.entries()[0].rule, "hloc.gemm_bias_relu");
  // A backend without libraries gets plain HLO back.
  InlineUnsupportedLibraryCalls none(LibraryCapabilities{}, nullptr);
  ASSERT_TRUE(none.Run(*module).ok());
  EXPECT_THAT(LibraryCalls(*module), IsEmpty());
  EXPECT_EQ(module->computation_count(), 1);
  EXPECT_EQ(outlining_testing::LibraryCallNames(*module).size(), 0u);
  // All default names: nothing to do.
  auto again = ParseOrDie(kMlp);
  Outline(*again, nullptr);
  InlineUnsupportedLibraryCalls all(LibraryCapabilities::AllDefaultPatterns());
  EXPECT_FALSE(*all.Run(*again));
}

TEST(OutlineLibraryCalls, LedgerListsEveryMatchAndRefusal) {
  auto module = ParseOrDie(kMlp);
  FusionLedger ledger;
  Outline(*module, &ledger);
  std::string text = ledger.ToText();
  // outlined: gemm_bias_relu and the second gemm; overlaps: gemm_bias and gemm at the first.
  EXPECT_EQ(Entries(ledger, "outlined").size(), 2u);
  EXPECT_EQ(Entries(ledger, "overlap").size(), 2u);
  EXPECT_THAT(text, HasSubstr("outline-library-calls"));
  EXPECT_THAT(text, HasSubstr("hloc.gemm_bias_relu"));
  for (const LedgerEntry* e : Entries(ledger, "outlined")) {
    EXPECT_THAT(e->reason, HasSubstr("reformulation"));
    EXPECT_FALSE(e->result.empty());
  }
  EXPECT_THAT(Entries(ledger, "not-outlined"), IsEmpty());
  std::string report = RenderLibraryOutliningReport(ledger);
  EXPECT_THAT(report, HasSubstr("computation e\n"));
  EXPECT_THAT(report, HasSubstr("  outlined      gemm_bias_relu  hloc.gemm_bias_relu at relu ("));
  EXPECT_THAT(report, HasSubstr("attributes: {alpha = 1.0 : f64"));
  EXPECT_THAT(report, HasSubstr("  refused       hloc.gemm_bias at add [overlap]: overlaps "
                                "gemm_bias_relu, which took add"));
}

TEST(OutlineLibraryCalls, DisabledPatternsAndNothingToDo) {
  auto module = ParseOrDie(kMlp);
  LibraryOutliningOptions options;
  options.disabled_patterns = {"hloc.gemm_bias_relu"};
  Outline(*module, nullptr, DefaultLibraryPatterns(), options);
  EXPECT_THAT(LibraryCallNames(*module), ElementsAre("hloc.gemm_bias", "hloc.gemm"));
  // A second run finds nothing new (library bodies are not scanned).
  OutlineLibraryCalls pass;
  absl::StatusOr<bool> changed = pass.Run(*module);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

TEST(OutlineLibraryCalls, WhileBodiesAreScanned) {
  auto module = ParseOrDie(R"(
HloModule m
body {
  s = (f32[8,8], s32[]) parameter(0)
  x = f32[8,8] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
  y = f32[8,8] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT r = (f32[8,8], s32[]) tuple(y, j)
}
cond {
  s = (f32[8,8], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=1
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f32[8,8] parameter(0)
  zero = s32[] constant(0)
  init = (f32[8,8], s32[]) tuple(x, zero)
  ROOT w = (f32[8,8], s32[]) while(init), condition=cond, body=body
})");
  LibraryOutliningStats stats = Outline(*module, nullptr);
  EXPECT_EQ(stats.dots_outlined, 1);
  EXPECT_EQ(module->FindComputation("body")->root()->operand(0)->opcode(), HloOpcode::kCall);
}

}  // namespace
}  // namespace hloc
