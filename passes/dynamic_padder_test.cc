// DynamicPadder: the rewritten module is static, verifies, and (run in the
// interpreter, its result cut by ShrinkDynamicResult) gives the original
// module's answer; what it cannot rewrite is refused by name.
#include "passes/dynamic_padder.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/testing/literal_text.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"
#include "passes/dynamic_test_modules.h"

namespace hloc {
namespace {

Literal Lit(absl::string_view shape, absl::string_view value) {
  absl::StatusOr<Shape> s = ParseShape(shape);
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<Literal> l = ParseLiteral(value, *s);
  EXPECT_TRUE(l.ok()) << l.status();
  return *std::move(l);
}

Literal Text(const std::string& text) { return testdata::ParseLiteralText(text); }

Literal TupleArgument(int n, int m) {
  return Literal::Tuple({Text(dynamic_test_modules::TupleParameterX(n)), Lit("s32[]", "7"),
                         Text(dynamic_test_modules::TupleParameterY(m))});
}

// The padded module in the interpreter, its result cut by
// ShrinkDynamicResult.
absl::StatusOr<Literal> RunPadded(absl::string_view text, const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  DynamicPadder padder;
  absl::StatusOr<bool> changed = padder.Run(**module);
  if (!changed.ok()) return changed.status();
  EXPECT_TRUE(*changed);
  for (const HloComputation* c : (*module)->computations()) {
    for (const HloInstruction* i : c->instructions()) {
      EXPECT_TRUE(i->shape().is_static()) << i->ToString();
      EXPECT_NE(i->opcode(), HloOpcode::kSetDimensionSize) << i->ToString();
      EXPECT_NE(i->opcode(), HloOpcode::kGetDimensionSize) << i->ToString();
    }
  }
  absl::Status verified = VerifyModule(**module);
  if (!verified.ok()) return verified;
  absl::StatusOr<std::optional<DynamicResultContract>> contract =
      FindDynamicResultContract(**module);
  if (!contract.ok()) return contract.status();
  EXPECT_TRUE(contract->has_value());
  std::vector<Literal> program_args = args;
  if (!(*contract)->parameters.empty()) {
    absl::StatusOr<std::vector<Literal>> padded_args = PadDynamicArguments(args, **contract);
    if (!padded_args.ok()) return padded_args.status();
    program_args = *std::move(padded_args);
  }
  absl::StatusOr<Literal> padded = Evaluate(**module, program_args);
  if (!padded.ok()) return padded.status();
  return ShrinkDynamicResult(*padded, **contract);
}

// The original in the interpreter vs the padded module in the interpreter.
absl::StatusOr<std::pair<Literal, Literal>> RunBothWays(absl::string_view text,
                                                        const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  absl::StatusOr<Literal> expected = Evaluate(**module, args);
  if (!expected.ok()) return expected.status();
  absl::StatusOr<Literal> actual = RunPadded(text, args);
  if (!actual.ok()) return actual.status();
  return std::make_pair(*std::move(expected), *std::move(actual));
}

void ExpectSameAnswer(absl::string_view text, const std::vector<Literal>& args) {
  absl::StatusOr<std::pair<Literal, Literal>> r = RunBothWays(text, args);
  ASSERT_TRUE(r.ok()) << r.status();
  ComparisonReport report = CompareLiterals(r->first, r->second);
  EXPECT_TRUE(report.ok) << report.ToString() << "\nexpected " << r->first.ToString()
                         << "\nactual   " << r->second.ToString();
}

using dynamic_test_modules::kReduceExp;

TEST(DynamicPadderTest, MaskedReduceAndDynamicOutput) {
  Literal p = Lit("f32[8]", "{1, 2, 3, 4, 5, 6, 7, 8}");
  for (const char* n : {"0", "3", "8"}) {
    SCOPED_TRACE(n);
    ExpectSameAnswer(kReduceExp, {p, Lit("s32[]", n)});
  }
}

TEST(DynamicPadderTest, SizeBeyondTheBoundIsAnErrorNamingTheInstruction) {
  absl::StatusOr<std::pair<Literal, Literal>> r =
      RunBothWays(kReduceExp, {Lit("f32[8]", "{1, 2, 3, 4, 5, 6, 7, 8}"), Lit("s32[]", "3")});
  ASSERT_TRUE(r.ok()) << r.status();
  // Past the interpreter (which refuses first): run the padded module directly.
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kReduceExp);
  ASSERT_TRUE(module.ok());
  DynamicPadder padder;
  ASSERT_TRUE(padder.Run(**module).ok());
  auto contract = FindDynamicResultContract(**module);
  ASSERT_TRUE(contract.ok() && contract->has_value());
  absl::StatusOr<Literal> padded =
      Evaluate(**module, {Lit("f32[8]", "{1, 2, 3, 4, 5, 6, 7, 8}"), Lit("s32[]", "9")});
  ASSERT_TRUE(padded.ok()) << padded.status();
  absl::StatusOr<Literal> shrunk = ShrinkDynamicResult(*padded, **contract);
  ASSERT_FALSE(shrunk.ok());
  EXPECT_NE(shrunk.status().message().find("instruction %d (set-dimension-size)"),
            std::string::npos)
      << shrunk.status();
}

TEST(DynamicPadderTest, DotWithARuntimeSizedContraction) {
  // inf and nan past the runtime size: masked with zeros on both operands.
  for (const char* n : {"0", "1", "3"}) {
    SCOPED_TRACE(n);
    ExpectSameAnswer(dynamic_test_modules::kDynamicContractionDot,
                     {testdata::ParseLiteralText(dynamic_test_modules::kDynamicContractionDotA),
                      testdata::ParseLiteralText(dynamic_test_modules::kDynamicContractionDotB),
                      Lit("s32[]", n)});
  }
}

TEST(DynamicPadderTest, BitcastConvertBetweenWidths) {
  Literal p = testdata::ParseLiteralText(dynamic_test_modules::kBitcastConvertWidthsP);
  for (const char* n : {"0", "2", "4"}) {
    SCOPED_TRACE(n);
    ExpectSameAnswer(dynamic_test_modules::kBitcastConvertWidths, {p, Lit("s32[]", n)});
  }
}

TEST(DynamicPadderTest, BroadcastReshapeSliceConcatenatePad) {
  constexpr char kMoves[] = R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=4] set-dimension-size(p, n), dimensions={0}
  b = f32[<=4,2] broadcast(d), dimensions={0}
  r = f32[<=8] reshape(b)
  s = f32[<=7] slice(r), slice={[1:8]}
  c = f32[<=8] concatenate(p, d), dimensions={0}
  z = f32[] constant(0)
  q = f32[<=6] pad(d, z), padding=2_0
  w = f32[<=4] multiply(d, p)
  m = f32[2] reduce(b, z), dimensions={0}, to_apply=add
  ROOT out = (f32[<=8], f32[<=7], f32[<=8], f32[<=6], f32[<=4], f32[2]) tuple(r, s, c, q, w, m)
}
)";
  for (const char* n : {"0", "1", "3", "4"}) {
    SCOPED_TRACE(n);
    ExpectSameAnswer(kMoves, {Lit("f32[4]", "{1, 2, 3, 4}"), Lit("s32[]", n)});
  }
}

// Sort and reverse along a runtime-sized dimension: the padding must not
// move into the first n elements (it holds whatever the producer left,
// here values that would sort first).
TEST(DynamicPadderTest, SortAndReverseAlongARuntimeSizedDimension) {
  const Literal p = Text(dynamic_test_modules::kSortReverseP);
  const Literal q = Text(dynamic_test_modules::kSortReverseQ);
  for (const char* n : {"0", "1", "4", "6"}) {
    for (const char* m : {"0", "3", "5"}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      ExpectSameAnswer(dynamic_test_modules::kSortReverse,
                       {p, q, Lit("s32[]", n), Lit("s32[]", m)});
    }
  }
}

absl::Status PadOnly(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  DynamicPadder padder;
  return padder.Run(**module).status();
}

TEST(DynamicPadderTest, RefusesWhatItCannotRewriteByName) {
  // A runtime-sized value returned in a dimension declared static.
  absl::Status static_result = PadOnly(R"(
HloModule m
ENTRY e {
  p = f32[<=8] parameter(0)
  n = f32[<=8] negate(p)
  ROOT t = (f32[8]) tuple(n)
}
)");
  EXPECT_NE(static_result.message().find("the entry result's element 0 dimension 0 is declared "
                                         "static (f32[8]) but holds a runtime-sized value"),
            std::string::npos)
      << static_result;
  absl::Status unbounded = PadOnly(R"(
HloModule m
ENTRY e {
  p = f32[?,3] parameter(0)
  ROOT n = f32[?,3] negate(p)
}
)");
  EXPECT_NE(unbounded.message().find("instruction %p (parameter): an entry parameter of unbounded"),
            std::string::npos)
      << unbounded;
}

using dynamic_test_modules::DynamicParametersP;
using dynamic_test_modules::DynamicParametersQ;
using dynamic_test_modules::kDynamicParameters;

TEST(DynamicPadderTest, DynamicEntryParameterTakesItsBoundAndTrailingSizes) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kDynamicParameters);
  ASSERT_TRUE(module.ok()) << module.status();
  DynamicPadder padder;
  ASSERT_TRUE(padder.Run(**module).ok());
  const HloComputation& entry = *(*module)->entry();
  ASSERT_EQ(entry.num_parameters(), 4);
  EXPECT_EQ(entry.parameter(0)->shape().ToString(false), "f32[8]");
  EXPECT_EQ(entry.parameter(1)->shape().ToString(false), "f32[4,3]");
  EXPECT_EQ(entry.parameter(2)->name(), "p.size0");
  EXPECT_EQ(entry.parameter(2)->shape().ToString(false), "s32[]");
  EXPECT_EQ(entry.parameter(3)->name(), "q.size0");
  auto contract = FindDynamicResultContract(**module);
  ASSERT_TRUE(contract.ok() && contract->has_value()) << contract.status();
  ASSERT_EQ((*contract)->parameters.size(), 2u);
  EXPECT_EQ((*contract)->parameters[0].ToString(false), "f32[<=8]");
  EXPECT_EQ((*contract)->parameters[1].ToString(false), "f32[<=4,3]");
  EXPECT_EQ((*contract)->parameter_names, (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ((*contract)->declared.ToString(false), "(f32[], f32[3], s32[], f32[<=8], f32[1,<=8])");
}

TEST(DynamicPadderTest, DynamicEntryParametersGiveTheInterpretersAnswer) {
  for (int n : {0, 1, 5, 8}) {
    for (int m : {0, 2, 4}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      ExpectSameAnswer(kDynamicParameters,
                       {Text(DynamicParametersP(n)), Text(DynamicParametersQ(m))});
    }
  }
}

TEST(DynamicPadderTest, ArgumentsArePaddedAndCheckedAgainstTheBound) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kDynamicParameters);
  ASSERT_TRUE(module.ok()) << module.status();
  DynamicPadder padder;
  ASSERT_TRUE(padder.Run(**module).ok());
  auto contract = FindDynamicResultContract(**module);
  ASSERT_TRUE(contract.ok() && contract->has_value());
  absl::StatusOr<std::vector<Literal>> padded = PadDynamicArguments(
      {Lit("f32[2]", "{1, 2}"), Text(DynamicParametersQ(1))}, **contract);
  ASSERT_TRUE(padded.ok()) << padded.status();
  ASSERT_EQ(padded->size(), 4u);
  EXPECT_EQ((*padded)[0].ToString(), "f32[8] {1, 2, 0, 0, 0, 0, 0, 0}");
  EXPECT_EQ((*padded)[1].shape().ToString(false), "f32[4,3]");
  EXPECT_EQ((*padded)[2].ToString(), "s32[] 2");
  EXPECT_EQ((*padded)[3].ToString(), "s32[] 1");
  struct Bad {
    std::vector<Literal> args;
    std::string message;
  };
  std::vector<Bad> bad;
  bad.push_back({{Text(DynamicParametersP(9)), Text(DynamicParametersQ(1))},
                 "argument 0 (parameter %p) dimension 0 has size 9, above its bound 8 (f32[<=8])"});
  bad.push_back({{Text(DynamicParametersP(2)), Text(DynamicParametersQ(5))},
                 "argument 1 (parameter %q) dimension 0 has size 5, above its bound 4"});
  bad.push_back({{Text(DynamicParametersP(2)), Lit("f32[2,2]", "{{1, 2}, {3, 4}}")},
                 "argument 1 (parameter %q) dimension 1 has size 2, the parameter's is 3"});
  bad.push_back({{Lit("s32[2]", "{1, 2}"), Text(DynamicParametersQ(1))},
                 "argument 0 (parameter %p) has shape s32[2], the parameter is f32[<=8]"});
  bad.push_back({{Text(DynamicParametersP(2))}, "the entry computation takes 2 arguments, got 1"});
  for (const Bad& b : bad) {
    absl::StatusOr<std::vector<Literal>> r = PadDynamicArguments(b.args, **contract);
    ASSERT_FALSE(r.ok()) << b.message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(b.message), std::string::npos) << r.status();
  }
}

TEST(DynamicPadderTest, EntryLayoutFollowsTheParameters) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule main, entry_computation_layout={(f32[<=5]{0})->f32[1,<=5]{1,0}}
ENTRY main {
  p = f32[<=5] parameter(0)
  ROOT r = f32[1,<=5] reshape(p)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  DynamicPadder padder;
  ASSERT_TRUE(padder.Run(**module).ok());
  ASSERT_TRUE((*module)->config().entry_computation_layout.has_value());
  const ProgramShape& layout = *(*module)->config().entry_computation_layout;
  ASSERT_EQ(layout.parameters.size(), 2u);
  EXPECT_EQ(layout.parameters[0].ToString(false), "f32[5]");
  EXPECT_EQ(layout.parameters[1].ToString(false), "s32[]");
  EXPECT_TRUE(VerifyModule(**module).ok());
  for (int n : {0, 2, 5}) {
    SCOPED_TRACE(n);
    ExpectSameAnswer(R"(
HloModule main, entry_computation_layout={(f32[<=5]{0})->f32[1,<=5]{1,0}}
ENTRY main {
  p = f32[<=5] parameter(0)
  ROOT r = f32[1,<=5] reshape(p)
}
)", {Text(DynamicParametersP(n))});
  }
}

TEST(DynamicPadderTest, TupleParameterWithDynamicLeaves) {
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseHloModule(dynamic_test_modules::kTupleParameter);
  ASSERT_TRUE(module.ok()) << module.status();
  DynamicPadder padder;
  ASSERT_TRUE(padder.Run(**module).ok());
  const HloComputation& entry = *(*module)->entry();
  ASSERT_EQ(entry.num_parameters(), 3);
  EXPECT_EQ(entry.parameter(0)->shape().ToString(false), "(f32[8], s32[], f32[2,3])");
  EXPECT_EQ(entry.parameter(1)->name(), "p.0.size0");
  EXPECT_EQ(entry.parameter(2)->name(), "p.2.size1");
  auto contract = FindDynamicResultContract(**module);
  ASSERT_TRUE(contract.ok() && contract->has_value()) << contract.status();
  ASSERT_EQ((*contract)->parameters.size(), 1u);
  EXPECT_EQ((*contract)->parameters[0].ToString(false), "(f32[<=8], s32[], f32[2,<=3])");

  absl::StatusOr<std::vector<Literal>> padded = PadDynamicArguments(
      {TupleArgument(2, 1)}, **contract);
  ASSERT_TRUE(padded.ok()) << padded.status();
  ASSERT_EQ(padded->size(), 3u);
  EXPECT_EQ((*padded)[0].shape().ToString(false), "(f32[8], s32[], f32[2,3])");
  EXPECT_EQ((*padded)[1].ToString(), "s32[] 2");
  EXPECT_EQ((*padded)[2].ToString(), "s32[] 1");
  absl::StatusOr<std::vector<Literal>> past = PadDynamicArguments(
      {TupleArgument(2, 4)}, **contract);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find(
                "argument 0 (parameter %p) tuple element 2 dimension 1 has size 4, above its "
                "bound 3"),
            std::string::npos)
      << past.status();
  absl::StatusOr<std::vector<Literal>> flat =
      PadDynamicArguments({Lit("f32[2]", "{1, 2}")}, **contract);
  ASSERT_FALSE(flat.ok());
  EXPECT_NE(flat.status().message().find("argument 0 (parameter %p) has shape f32[2], the "
                                         "parameter is (f32[<=8], s32[], f32[2,<=3])"),
            std::string::npos)
      << flat.status();

  for (int n : {0, 1, 5, 8}) {
    for (int m : {0, 2, 3}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      ExpectSameAnswer(dynamic_test_modules::kTupleParameter,
                       {TupleArgument(n, m)});
    }
  }
}

// A tuple parameter returned as it is, and one nested in another.
TEST(DynamicPadderTest, TupleParameterAsTheResultAndNested) {
  for (int n : {0, 3, 4}) {
    SCOPED_TRACE(n);
    const Literal x = Text(DynamicParametersP(n));
    ExpectSameAnswer(R"(
HloModule m
ENTRY e {
  ROOT p = (f32[<=4], s32[]) parameter(0)
}
)", {Literal::Tuple({x, Lit("s32[]", "5")})});
    ExpectSameAnswer(R"(
HloModule m
ENTRY e {
  p = ((f32[<=4], s32[]), f32[2]) parameter(0)
  a = (f32[<=4], s32[]) get-tuple-element(p), index=0
  x = f32[<=4] get-tuple-element(a), index=0
  y = f32[<=4] negate(x)
  b = f32[2] get-tuple-element(p), index=1
  ROOT t = (f32[<=4], f32[2]) tuple(y, b)
}
)", {Literal::Tuple({Literal::Tuple({x, Lit("s32[]", "5")}), Lit("f32[2]", "{1, 2}")})});
  }
}

// Several operands sorted along a runtime-sized dimension: the padding
// (values that would sort first) stays out of every operand's result.
TEST(DynamicPadderTest, MultiOperandSortAlongARuntimeSizedDimension) {
  const Literal p = Text(dynamic_test_modules::kSortWithValuesP);
  for (const char* n : {"0", "1", "4", "6"}) {
    for (int m : {0, 1, 5, 8}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      ExpectSameAnswer(dynamic_test_modules::kSortWithValues,
                       {p, Lit("s32[]", n), Text(dynamic_test_modules::SortWithValuesQ(m))});
    }
  }
}

// Sizes carried into a while loop (its condition reads the size, its body
// reduces over it) and into conditional branches (an array operand and a
// tuple one).
TEST(DynamicPadderTest, SizesFlowIntoLoopsAndBranches) {
  for (int n : {0, 1, 5, 8}) {
    for (const char* k : {"0", "1", "7"}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " k=", k));
      ExpectSameAnswer(dynamic_test_modules::kLoopAndBranches,
                       {Text(DynamicParametersP(n)), Lit("s32[]", k)});
    }
  }
}

// `text` on (p of size n, s32[] m) for n in {0, 1, 3, 4} and m in 0..4: the
// interpreter's answer where it has one, else an error from the padded
// module containing `message`. Returns how many failed.
int ExpectSizeChecks(const char* text, const std::string& message) {
  int failures = 0;
  for (int n : {0, 1, 3, 4}) {
    for (const char* m : {"0", "1", "2", "3", "4"}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      std::vector<Literal> args = {Text(DynamicParametersP(n)), Lit("s32[]", m)};
      absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
      EXPECT_TRUE(module.ok());
      if (!module.ok()) continue;
      if (Evaluate(**module, args).ok()) {
        ExpectSameAnswer(text, args);
        continue;
      }
      ++failures;
      absl::StatusOr<Literal> r = RunPadded(text, args);
      EXPECT_FALSE(r.ok()) << r->ToString();
      if (r.ok()) continue;
      EXPECT_NE(r.status().message().find(message), std::string::npos) << r.status();
    }
  }
  return failures;
}

// Size checks inside a loop body and a branch are carried out and checked
// in the entry; both the loop's and the branch's fail somewhere.
TEST(DynamicPadderTest, SizeChecksInLoopsAndBranches) {
  EXPECT_GT(ExpectSizeChecks(dynamic_test_modules::kChecksInLoopAndBranch, "(set-dimension-size)"),
            2);
}

// A size check in a loop condition: a failing one ends the loop and is
// reported after it, naming the set-dimension-size and the loop; m > n
// fails at once (8 pairs), an odd m <= n when the size turns -1 (5).
TEST(DynamicPadderTest, SizeChecksInLoopConditions) {
  EXPECT_EQ(ExpectSizeChecks(dynamic_test_modules::kCheckInLoopCondition,
                             "y (set-dimension-size): size is outside"),
            13);
  std::vector<Literal> args = {Text(DynamicParametersP(1)), Lit("s32[]", "3")};
  absl::StatusOr<Literal> r = RunPadded(dynamic_test_modules::kCheckInLoopCondition, args);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("in the condition of %w"), std::string::npos) << r.status();
}

// Aliasing survives the rewrite: the result moves under {0} of (result,
// sizes, checks), and so does the alias's output index.
TEST(DynamicPadderTest, AliasingFollowsTheResultIntoItsTuple) {
  for (const char* n : {"0", "3", "8"}) {
    SCOPED_TRACE(n);
    ExpectSameAnswer(dynamic_test_modules::kAliasedWithDynamicResult,
                     {Lit("f32[8]", "{1, 2, 3, 4, 5, 6, 7, 8}"), Lit("s32[]", n)});
  }
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseHloModule(dynamic_test_modules::kAliasedWithDynamicResult);
  ASSERT_TRUE(module.ok());
  DynamicPadder padder;
  ASSERT_TRUE(padder.Run(**module).ok());
  const auto& entries = (*module)->config().input_output_alias.entries();
  ASSERT_EQ(entries.size(), 1);
  EXPECT_EQ(std::vector<int64_t>(entries[0].output_shape_index().begin(),
                                 entries[0].output_shape_index().end()),
            (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(entries[0].parameter_number(), 0);
  EXPECT_TRUE(VerifyModule(**module).ok());
}

// XLA's PadToStatic (zeros past the runtime size) and SliceToDynamic (its
// size checked against the bound): the interpreter's answer, or an error
// naming the SliceToDynamic call.
TEST(DynamicPadderTest, PadToStaticAndSliceToDynamic) {
  for (int n : {0, 3, 8}) {
    for (const char* m : {"0", "5", "8", "9", "-1"}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      std::vector<Literal> args = {Text(DynamicParametersP(n)), Lit("s32[]", m)};
      absl::StatusOr<std::unique_ptr<HloModule>> module =
          ParseHloModule(dynamic_test_modules::kPadToStaticSliceToDynamic);
      ASSERT_TRUE(module.ok());
      absl::StatusOr<Literal> expected = Evaluate(**module, args);
      if (expected.ok()) {
        ExpectSameAnswer(dynamic_test_modules::kPadToStaticSliceToDynamic, args);
        continue;
      }
      EXPECT_NE(expected.status().message().find("SliceToDynamic: the size of dimension 0"),
                std::string::npos)
          << expected.status();
      absl::StatusOr<Literal> r =
          RunPadded(dynamic_test_modules::kPadToStaticSliceToDynamic, args);
      ASSERT_FALSE(r.ok()) << r->ToString();
      EXPECT_NE(r.status().message().find(
                    "(custom-call SliceToDynamic): the size of dimension 0 is outside [0, 8]"),
                std::string::npos)
          << r.status();
    }
  }
  // Malformed calls fail verification, naming what is wrong.
  absl::StatusOr<std::unique_ptr<HloModule>> bad = ParseHloModule(R"(
HloModule bad
ENTRY main {
  p = f32[<=8] parameter(0)
  ROOT pts = (f32[8], s32[], s32[]) custom-call(p), custom_call_target="PadToStatic"
})");
  ASSERT_TRUE(bad.ok());
  absl::Status verified = VerifyModule(**bad);
  EXPECT_FALSE(verified.ok());
  bad = ParseHloModule(R"(
HloModule bad
ENTRY main {
  p = f32[8] parameter(0)
  ROOT s = f32[<=8] custom-call(p), custom_call_target="SliceToDynamic"
})");
  ASSERT_TRUE(bad.ok());
  verified = VerifyModule(**bad);
  EXPECT_NE(verified.message().find("SliceToDynamic takes the array and one size per dimension"),
            std::string::npos)
      << verified;
}

// Gather, dynamic-slice and dynamic-update-slice on a runtime-sized
// operand: the interpreter's answer (indices clamped to the runtime size),
// or, where the window is larger than the runtime size, an error in both.
TEST(DynamicPadderTest, SlicingARuntimeSizedOperand) {
  int failures = 0;
  for (int n : {0, 1, 3, 8}) {
    for (const char* i : {"0", "2", "7", "-3"}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " i=", i));
      std::vector<Literal> args = {Text(DynamicParametersP(n)), Lit("s32[]", i),
                                   Lit("s32[]", "6")};
      absl::StatusOr<std::unique_ptr<HloModule>> module =
          ParseHloModule(dynamic_test_modules::kSlicingRuntimeSized);
      ASSERT_TRUE(module.ok());
      absl::StatusOr<Literal> expected = Evaluate(**module, args);
      if (expected.ok()) {
        ExpectSameAnswer(dynamic_test_modules::kSlicingRuntimeSized, args);
        continue;
      }
      ++failures;
      absl::StatusOr<Literal> r = RunPadded(dynamic_test_modules::kSlicingRuntimeSized, args);
      ASSERT_FALSE(r.ok()) << r->ToString() << "\ninterpreter: " << expected.status();
      EXPECT_NE(r.status().message().find("is larger than the operand's runtime size"),
                std::string::npos)
          << r.status();
    }
  }
  EXPECT_EQ(failures, 8);  // n = 0 and n = 1: the 2-wide slice does not fit.
}

// Scatter with runtime-sized indices and updates, into a runtime-sized and
// a static operand: the interpreter's answer (padding rows and windows
// past the runtime size skipped).
TEST(DynamicPadderTest, ScatterWithRuntimeSizes) {
  for (int n : {0, 3, 8}) {
    for (const char* m : {"0", "3", "8"}) {
      for (const char* j : {"0", "2", "6", "-1"}) {
        SCOPED_TRACE(absl::StrCat("n=", n, " m=", m, " j=", j));
        ExpectSameAnswer(dynamic_test_modules::kScatterRuntimeSized,
                         {Text(DynamicParametersP(n)), Lit("s32[]", m), Lit("s32[]", j)});
      }
    }
  }
}

// Reduce-windows and convolutions over runtime-sized dimensions.
TEST(DynamicPadderTest, WindowsOverRuntimeSizes) {
  for (int n : {0, 1, 2, 3, 5, 8}) {
    SCOPED_TRACE(absl::StrCat("n=", n));
    ExpectSameAnswer(dynamic_test_modules::kWindowsRuntimeSized, {Text(DynamicParametersP(n))});
  }
}

// A reduce over a runtime-sized dimension whose init value is not its
// reducer's identity (init 9 for add, 2 for multiply, 5 for max, and an
// s32 min from 3): the padding holds the identity, so the init counts once,
// as in the interpreter.
TEST(DynamicPadderTest, ReduceWithAnInitThatIsNotTheIdentity) {
  constexpr char kInits[] = R"(
HloModule inits
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] multiply(b, a)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
min {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] minimum(a, b)
}
ENTRY e {
  p = f32[<=8] parameter(0)
  nine = f32[] constant(9)
  two = f32[] constant(2)
  five = f32[] constant(5)
  s = f32[] reduce(p, nine), dimensions={0}, to_apply=add
  m = f32[] reduce(p, two), dimensions={0}, to_apply=mul
  x = f32[] reduce(p, five), dimensions={0}, to_apply=max
  q = s32[<=8] convert(p)
  three = s32[] constant(3)
  n = s32[] reduce(q, three), dimensions={0}, to_apply=min
  ROOT t = (f32[], f32[], f32[], s32[]) tuple(s, m, x, n)
}
)";
  for (int n : {0, 1, 5, 8}) {
    SCOPED_TRACE(n);
    ExpectSameAnswer(kInits, {Text(DynamicParametersP(n))});
  }
}

// Operands whose runtime sizes must agree (elementwise, sort, concatenate
// beside its axis) but do not: the interpreter refuses them, and so does
// the padded module, by instruction.
TEST(DynamicPadderTest, OperandsOfDifferentRuntimeSizesAreAnError) {
  constexpr char kMismatch[] = R"(
HloModule mismatch
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[<=8] parameter(0)
  q = f32[<=8] parameter(1)
  s = f32[<=8] add(p, q)
  t = (f32[<=8], f32[<=8]) sort(p, q), dimensions={0}, to_apply=lt
  u = f32[<=8] get-tuple-element(t), index=1
  ROOT r = (f32[<=8], f32[<=8]) tuple(s, u)
}
)";
  for (int n : {0, 3, 8}) {
    for (int m : {0, 3, 8}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
      const std::vector<Literal> args = {Text(DynamicParametersP(n)), Text(DynamicParametersP(m))};
      if (n == m) {
        ExpectSameAnswer(kMismatch, args);
        continue;
      }
      absl::StatusOr<Literal> r = RunPadded(kMismatch, args);
      ASSERT_FALSE(r.ok()) << r->ToString();
      EXPECT_NE(r.status().message().find("operands have different runtime sizes in dimension 0"),
                std::string::npos)
          << r.status();
    }
  }
}

// A call whose callee has dynamic shapes is inlined, nested calls too.
TEST(DynamicPadderTest, CallsWithDynamicShapesAreInlined) {
  for (int n : {0, 1, 5, 8}) {
    SCOPED_TRACE(n);
    ExpectSameAnswer(dynamic_test_modules::kDynamicCalls, {Text(DynamicParametersP(n))});
    ExpectSameAnswer(dynamic_test_modules::kDynamicBuilderCall, {Text(DynamicParametersP(n))});
  }
}

TEST(DynamicPadderTest, StaticModuleIsUnchanged) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)");
  ASSERT_TRUE(module.ok());
  DynamicPadder padder;
  absl::StatusOr<bool> changed = padder.Run(**module);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  auto contract = FindDynamicResultContract(**module);
  ASSERT_TRUE(contract.ok());
  EXPECT_FALSE(contract->has_value());
}

}  // namespace
}  // namespace hloc
