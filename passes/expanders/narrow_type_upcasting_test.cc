// UpcastNarrowTypeArithmetic: what it rewrites (no arithmetic on s4/u4/f8/f4
// is left, reducers included), what it declines, and that the interpreter
// gives the same bits before and after, on every code of each narrow type.
#include "passes/expanders/narrow_type_upcasting.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_printer.h"
#include "passes/test_util.h"

namespace hloc {
namespace {

// Arithmetic instructions (not converts or data movement) that read or
// produce a type UpcastTypeFor widens, in any computation.
std::vector<std::string> NarrowArithmetic(const HloModule& module) {
  std::vector<std::string> found;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      const HloOpcode op = instruction->opcode();
      const bool arithmetic = (IsElementwiseUnary(op) || IsElementwiseBinary(op) ||
                               op == HloOpcode::kDot || op == HloOpcode::kClamp) &&
                              op != HloOpcode::kConvert && op != HloOpcode::kCopy;
      if (!arithmetic) continue;
      bool narrow = UpcastTypeFor(instruction->shape().element_type()).has_value();
      for (const HloInstruction* operand : instruction->operands()) {
        narrow = narrow || UpcastTypeFor(operand->shape().element_type()).has_value();
      }
      if (narrow) found.push_back(instruction->name());
    }
  }
  return found;
}

// Arguments that cover every code: parameter i holds codes (k * (2i + 1) + i)
// mod 2^bits at position k, so two parameters meet in many pairs.
std::vector<Literal> EveryCode(const HloModule& module) {
  std::vector<Literal> arguments;
  const HloComputation& entry = *module.entry();
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    const Shape& shape = entry.parameter(i)->shape();
    absl::StatusOr<Literal> literal = Literal::Create(shape);
    EXPECT_TRUE(literal.ok()) << literal.status();
    const int64_t codes = int64_t{1} << BitWidth(shape.element_type());
    for (int64_t k = 0; k < literal->element_count(); ++k) {
      const int64_t code = (k * (2 * i + 1) + i) % codes;
      if (IsInteger(shape.element_type())) {
        literal->SetFromInt64(k, code);  // Wraps s4 to -8..7.
      } else {
        literal->mutable_raw()[k] = static_cast<uint8_t>(code);
      }
    }
    arguments.push_back(*std::move(literal));
  }
  return arguments;
}

// Runs the pass on `text`; expects a change, no narrow arithmetic left, and
// the interpreter's bits unchanged on every-code and random arguments.
void ExpectUpcastKeepsBits(const std::string& text) {
  std::unique_ptr<HloModule> module = testing::ParseAndVerifyOrFail(text);
  ASSERT_NE(module, nullptr);
  std::vector<std::vector<Literal>> argument_sets;
  argument_sets.push_back(EveryCode(*module));
  for (uint64_t seed : {1, 2}) {
    absl::StatusOr<std::vector<Literal>> random = MakeRandomArguments(*module, seed);
    ASSERT_TRUE(random.ok()) << random.status();
    argument_sets.push_back(*std::move(random));
  }
  std::vector<Literal> before;
  for (const std::vector<Literal>& arguments : argument_sets) {
    absl::StatusOr<Literal> result = Evaluate(*module, arguments);
    ASSERT_TRUE(result.ok()) << result.status() << "\n" << text;
    before.push_back(*std::move(result));
  }
  UpcastNarrowTypeArithmetic pass;
  absl::StatusOr<bool> changed = testing::RunAndVerify(pass, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed) << text;
  EXPECT_EQ(NarrowArithmetic(*module), std::vector<std::string>()) << PrintModule(*module);
  for (size_t i = 0; i < argument_sets.size(); ++i) {
    absl::StatusOr<Literal> after = Evaluate(*module, argument_sets[i]);
    ASSERT_TRUE(after.ok()) << after.status();
    const ComparisonReport report = CompareLiterals(before[i], *after, Tolerance{0.0, 0.0});
    EXPECT_TRUE(report.ok) << report.ToString() << "\n" << PrintModule(*module);
  }
}

std::string Elementwise(const std::string& type, const std::string& result_type,
                        const std::string& op) {
  return absl::StrReplaceAll(R"(
HloModule m
ENTRY e {
  a = $T[256] parameter(0)
  b = $T[256] parameter(1)
  ROOT r = $R[256] $OP
})",
                             {{"$T", type}, {"$R", result_type}, {"$OP", op}});
}

const std::vector<std::string> kNarrowFloats = {
    "f8e4m3fn", "f8e5m2",        "f8e4m3",   "f8e3m4",   "f8e4m3fnuz",
    "f8e5m2fnuz", "f8e4m3b11fnuz", "f4e2m1fn", "f8e8m0fnu"};

TEST(UpcastNarrowTypeArithmeticTest, NarrowFloatElementwiseKeepsBits) {
  for (const std::string& type : kNarrowFloats) {
    SCOPED_TRACE(type);
    for (const char* op : {"add(a, b)", "subtract(a, b)", "multiply(a, b)", "divide(a, b)",
                           "maximum(a, b)", "minimum(a, b)", "power(a, b)", "sqrt(a)",
                           "negate(a)", "abs(a)", "floor(a)", "sign(a)", "exponential(a)",
                           "clamp(b, a, b)"}) {
      ExpectUpcastKeepsBits(Elementwise(type, type, op));
    }
    ExpectUpcastKeepsBits(Elementwise(type, "pred", "compare(a, b), direction=LT"));
    ExpectUpcastKeepsBits(Elementwise(type, "pred", "compare(a, b), direction=NE"));
    ExpectUpcastKeepsBits(Elementwise(type, "pred", "is-finite(a)"));
  }
}

TEST(UpcastNarrowTypeArithmeticTest, SubByteIntegersWrapLikeTheInterpreter) {
  for (const std::string type : {"s4", "u4"}) {
    SCOPED_TRACE(type);
    for (const char* op :
         {"add(a, b)", "subtract(a, b)", "multiply(a, b)", "divide(a, b)", "remainder(a, b)",
          "maximum(a, b)", "minimum(a, b)", "power(a, b)", "and(a, b)", "or(a, b)",
          "xor(a, b)", "shift-left(a, b)", "shift-right-arithmetic(a, b)", "negate(a)",
          "not(a)", "clamp(b, a, b)"}) {
      ExpectUpcastKeepsBits(Elementwise(type, type, op));
    }
    ExpectUpcastKeepsBits(Elementwise(type, "pred", "compare(a, b), direction=GE"));
  }
  // Zero-extended through u4, not sign-extended to s8.
  ExpectUpcastKeepsBits(Elementwise("s4", "s4", "shift-right-logical(a, b)"));
  ExpectUpcastKeepsBits(Elementwise("s4", "s4", "popcnt(a)"));
  ExpectUpcastKeepsBits(Elementwise("s4", "s4", "abs(a)"));
  ExpectUpcastKeepsBits(Elementwise("s4", "s4", "sign(a)"));
  // Zero-extended u4 still has the right bits for these.
  ExpectUpcastKeepsBits(Elementwise("u4", "u4", "shift-right-logical(a, b)"));
  ExpectUpcastKeepsBits(Elementwise("u4", "u4", "popcnt(a)"));
  // clz of the 4 bits: 4 fewer than of their zero extension to u8.
  ExpectUpcastKeepsBits(Elementwise("s4", "s4", "count-leading-zeros(a)"));
  ExpectUpcastKeepsBits(Elementwise("u4", "u4", "count-leading-zeros(a)"));
}

TEST(UpcastNarrowTypeArithmeticTest, SingleOpReductionsAccumulateWide) {
  for (const char* types : {"f8e5m2,add", "f8e4m3fn,multiply", "f4e2m1fn,maximum", "s4,add",
                            "u4,minimum"}) {
    SCOPED_TRACE(types);
    const std::vector<std::string> t = absl::StrSplit(types, ',');
    const std::string text = absl::StrReplaceAll(R"(
HloModule m
combine {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT s = $T[] $OP(x, y)
}
ENTRY e {
  a = $T[8,32] parameter(0)
  z = $T[] constant(1)
  r = $T[8] reduce(a, z), dimensions={1}, to_apply=combine
  w = $T[8,15] reduce-window(a, z), window={size=1x4 stride=1x2}, to_apply=combine
  ROOT t = ($T[8], $T[8,15]) tuple(r, w)
})",
                                                 {{"$T", t[0]}, {"$OP", t[1]}});
    ExpectUpcastKeepsBits(text);
    std::unique_ptr<HloModule> module = testing::ParseAndVerifyOrFail(text);
    ASSERT_NE(module, nullptr);
    UpcastNarrowTypeArithmetic pass;
    ASSERT_TRUE(testing::RunAndVerify(pass, *module).ok());
    // reduce<wide>(convert a, convert z) with a wide reducer, converted back;
    // the narrow reducer is gone.
    const HloInstruction* r = module->entry()->root()->operand(0);
    ASSERT_EQ(r->opcode(), HloOpcode::kConvert);
    EXPECT_EQ(r->operand(0)->opcode(), HloOpcode::kReduce);
    const PrimitiveType wide = *UpcastTypeFor(r->shape().element_type());
    EXPECT_EQ(r->operand(0)->shape().element_type(), wide);
    EXPECT_EQ(r->operand(0)->to_apply()->root()->shape().element_type(), wide);
    EXPECT_EQ(module->FindComputation("combine"), nullptr);
  }
}

TEST(UpcastNarrowTypeArithmeticTest, HalfProductsAndWindowSumsAccumulateInF32) {
  // f16/bf16 products and window sums become f32 reductions (rounded once,
  // as the interpreter computes them); a reduce's sum (summed in double by
  // every backend) and a maximum (exact) are left alone.
  for (const char* type : {"bf16", "f16"}) {
    SCOPED_TRACE(type);
    const std::string text = absl::StrReplaceAll(R"(
HloModule m
mul {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT s = $T[] multiply(x, y)
}
add {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT s = $T[] add(x, y)
}
max {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT s = $T[] maximum(x, y)
}
ENTRY e {
  a = $T[8,32] parameter(0)
  one = $T[] constant(1)
  zero = $T[] constant(0)
  p = $T[8] reduce(a, one), dimensions={1}, to_apply=mul
  w = $T[8,32] reduce-window(a, zero), window={size=1x32 pad=0_0x31_0}, to_apply=add
  s = $T[8] reduce(a, zero), dimensions={1}, to_apply=add
  m = $T[8,15] reduce-window(a, zero), window={size=1x4 stride=1x2}, to_apply=max
  ROOT t = ($T[8], $T[8,32], $T[8], $T[8,15]) tuple(p, w, s, m)
})",
                                                 {{"$T", type}});
    ExpectUpcastKeepsBits(text);
    std::unique_ptr<HloModule> module = testing::ParseAndVerifyOrFail(text);
    ASSERT_NE(module, nullptr);
    UpcastNarrowTypeArithmetic pass;
    ASSERT_TRUE(testing::RunAndVerify(pass, *module).ok());
    const HloInstruction* root = module->entry()->root();
    for (int64_t i : {0, 1}) {
      const HloInstruction* r = root->operand(i);
      SCOPED_TRACE(r->ToString());
      ASSERT_EQ(r->opcode(), HloOpcode::kConvert);
      EXPECT_EQ(r->operand(0)->shape().element_type(), xla::F32);
      EXPECT_EQ(r->operand(0)->to_apply()->root()->shape().element_type(), xla::F32);
    }
    for (int64_t i : {2, 3}) {
      const HloInstruction* r = root->operand(i);
      EXPECT_NE(r->opcode(), HloOpcode::kConvert) << r->ToString();
    }
  }
}

TEST(UpcastNarrowTypeArithmeticTest, OtherReducersRoundEveryStep) {
  // A reducer of two ops: the interpreter calls it per element, rounding to
  // f8e5m2 each time; the reduce keeps its f8e5m2 accumulator and only the
  // reducer's ops are upcast.
  const std::string text = R"(
HloModule m
add_twice {
  x = f8e5m2[] parameter(0)
  y = f8e5m2[] parameter(1)
  s = f8e5m2[] add(x, y)
  ROOT t = f8e5m2[] add(s, y)
}
ENTRY e {
  a = f8e5m2[8,32] parameter(0)
  z = f8e5m2[] constant(0)
  ROOT r = f8e5m2[8] reduce(a, z), dimensions={1}, to_apply=add_twice
})";
  ExpectUpcastKeepsBits(text);
  std::unique_ptr<HloModule> module = testing::ParseAndVerifyOrFail(text);
  ASSERT_NE(module, nullptr);
  UpcastNarrowTypeArithmetic pass;
  ASSERT_TRUE(testing::RunAndVerify(pass, *module).ok());
  EXPECT_EQ(module->entry()->root()->opcode(), HloOpcode::kReduce);
  EXPECT_EQ(module->entry()->root()->shape().element_type(), xla::F8E5M2);
  const HloInstruction* sum = module->entry()->root()->to_apply()->root();
  EXPECT_EQ(sum->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(sum->operand(0)->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(sum->operand(0)->shape().element_type(), xla::F32);
}

TEST(UpcastNarrowTypeArithmeticTest, DotsAccumulateWideAndRoundOnce) {
  for (const char* types : {"f8e4m3fn,f8e4m3fn", "f8e4m3fn,f32", "f8e5m2,bf16", "s4,s4",
                            "s4,s32", "u4,u4"}) {
    SCOPED_TRACE(types);
    const std::vector<std::string> t = absl::StrSplit(types, ',');
    ExpectUpcastKeepsBits(absl::StrReplaceAll(R"(
HloModule m
ENTRY e {
  a = $T[4,8] parameter(0)
  b = $T[8,3] parameter(1)
  ROOT c = $R[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                              {{"$T", t[0]}, {"$R", t[1]}}));
  }
  // Mixed narrow operand types meet in f32.
  ExpectUpcastKeepsBits(R"(
HloModule m
ENTRY e {
  a = f8e4m3fn[4,8] parameter(0)
  b = f8e5m2[8,3] parameter(1)
  ROOT c = f32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

TEST(UpcastNarrowTypeArithmeticTest, DeclinesWhatTheWideTypeWouldChange) {
  // s2 has no upcast; converts and data movement need none.
  for (const std::string& text :
       {Elementwise("s2", "s2", "add(a, b)"),
        Elementwise("f8e4m3fn", "f32", "convert(a)"),
        Elementwise("s4", "s4", "reverse(a), dimensions={0}"),
        Elementwise("f8e4m3fn", "f8e4m3fn", "copy(a)")}) {
    std::unique_ptr<HloModule> module = testing::ParseAndVerifyOrFail(text);
    if (module == nullptr) continue;
    UpcastNarrowTypeArithmetic pass;
    absl::StatusOr<bool> changed = testing::RunAndVerify(pass, *module);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
  }
}

}  // namespace
}  // namespace hloc
