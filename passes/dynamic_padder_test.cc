// DynamicPadder: the rewritten module is static, verifies, and (run in the
// interpreter, its result cut by ShrinkDynamicResult) gives the original
// module's answer; what it cannot rewrite is refused by name.
#include "passes/dynamic_padder.h"

#include <string>
#include <vector>

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

// The original in the interpreter vs the padded module in the interpreter.
absl::StatusOr<std::pair<Literal, Literal>> RunBothWays(absl::string_view text,
                                                        const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  absl::StatusOr<Literal> expected = Evaluate(**module, args);
  if (!expected.ok()) return expected.status();
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
  absl::StatusOr<Literal> padded = Evaluate(**module, args);
  if (!padded.ok()) return padded.status();
  absl::StatusOr<Literal> actual = ShrinkDynamicResult(*padded, **contract);
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

absl::Status PadOnly(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  DynamicPadder padder;
  return padder.Run(**module).status();
}

TEST(DynamicPadderTest, RefusesWhatItCannotRewriteByName) {
  absl::Status sort = PadOnly(R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[4] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=4] set-dimension-size(p, n), dimensions={0}
  ROOT s = f32[<=4] sort(d), dimensions={0}, to_apply=lt
}
)");
  EXPECT_EQ(sort.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(sort.message().find("instruction %s (sort)"), std::string::npos) << sort;
  absl::Status param = PadOnly(R"(
HloModule m
ENTRY e {
  ROOT p = f32[<=4] parameter(0)
}
)");
  EXPECT_NE(param.message().find("instruction %p (parameter)"), std::string::npos) << param;
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
