// ExpansionBuilder and BuildCountedLoop: inferred shapes, layouts kept when
// the replaced instruction has them, sticky errors, inlining, and a counted
// loop the interpreter runs.
#include "passes/expanders/expansion_builder.h"

#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/verifier.h"
#include "passes/expanders/counted_loop.h"
#include "passes/test_util.h"

namespace hloc {
namespace expanders {
namespace {

constexpr char kModule[] = R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
ENTRY e {
  x = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(x)
})";

TEST(ExpansionBuilderTest, InfersShapesAndKeepsRowMajorLayouts) {
  auto module = testing::ParseAndVerifyOrFail(kModule);
  ASSERT_NE(module, nullptr);
  HloInstruction* n = module->entry()->root();
  ExpansionBuilder b(module->entry(), n);
  HloInstruction* sum = b.Reduce(n->operand(0), b.Scalar(xla::F32, 0), {1},
                                 b.ScalarBinaryComputation(HloOpcode::kAdd, xla::F32));
  ASSERT_TRUE(b.status().ok()) << b.status();
  EXPECT_EQ(sum->shape().ToString(), "f32[2]{0}");
  EXPECT_EQ(sum->name().rfind("n.reduce", 0), 0u) << sum->name();
  HloInstruction* wide = b.Broadcast(sum, {2, 3}, {0});
  EXPECT_EQ(wide->shape().ToString(), "f32[2,3]{1,0}");
  ASSERT_TRUE(ReplaceInstruction(n, b.Binary(HloOpcode::kAdd, wide, wide)).ok());
  // The replacement takes the replaced instruction's layout.
  EXPECT_EQ(module->entry()->root()->shape().ToString(), "f32[2,3]{0,1}");
  EXPECT_TRUE(VerifyModule(*module).ok());
}

TEST(ExpansionBuilderTest, ErrorsAreSticky) {
  auto module = testing::ParseAndVerifyOrFail(kModule);
  ASSERT_NE(module, nullptr);
  ExpansionBuilder b(module->entry(), module->entry()->root());
  HloInstruction* x = module->entry()->parameter(0);
  EXPECT_EQ(b.Binary(HloOpcode::kAdd, x, b.Scalar(xla::F32, 1)), nullptr);  // f32[2,3] + f32[]
  EXPECT_FALSE(b.status().ok());
  EXPECT_EQ(b.Unary(HloOpcode::kNegate, x), nullptr);
  EXPECT_EQ(b.Reshape(nullptr, {6}), nullptr);
}

TEST(ExpansionBuilderTest, InlineCopiesTheCallee) {
  auto module = testing::ParseAndVerifyOrFail(kModule);
  ASSERT_NE(module, nullptr);
  ExpansionBuilder b(module->entry(), module->entry()->root());
  HloInstruction* c = b.Inline(*module->FindComputation("ge"),
                               {b.Scalar(xla::F32, 2), b.Scalar(xla::F32, 1)});
  ASSERT_NE(c, nullptr) << b.status();
  EXPECT_EQ(c->opcode(), HloOpcode::kCompare);
  EXPECT_EQ(c->parent(), module->entry());
  EXPECT_EQ(b.Inline(*module->FindComputation("ge"), {c}), nullptr);  // One argument of two.
}

TEST(CountedLoopTest, SumsTheCounter) {
  auto module = testing::ParseAndVerifyOrFail(R"(
HloModule m
ENTRY e {
  ROOT z = s32[] constant(0)
})");
  ASSERT_NE(module, nullptr);
  HloInstruction* z = module->entry()->root();
  ExpansionBuilder b(module->entry(), z);
  std::vector<HloInstruction*> out = BuildCountedLoop(
      b, 5, {b.IndexScalar(xla::S32, 100)},
      [](ExpansionBuilder& body, HloInstruction* i, const std::vector<HloInstruction*>& state) {
        return std::vector<HloInstruction*>{body.Binary(HloOpcode::kAdd, state[0], i)};
      });
  ASSERT_EQ(out.size(), 1u) << b.status();
  module->entry()->set_root(out[0]);
  ASSERT_TRUE(VerifyModule(*module).ok());
  absl::StatusOr<Literal> result = Evaluate(*module, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetAsInt64(0), 100 + 0 + 1 + 2 + 3 + 4);
}

}  // namespace
}  // namespace expanders
}  // namespace hloc
