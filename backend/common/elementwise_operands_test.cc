// ReadOnlyAtOutputIndex on single- and multi-output computations: which
// parameters are read only where one output is written, and the cases
// that must be refused (read for two outputs, at other indices, through a
// broadcast or a change of element size or layout, nested tuples).
#include "backend/common/elementwise_operands.h"

#include <memory>

#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace backend {
namespace {

constexpr char kModule[] = R"(
HloModule elementwise_operands

two_outputs {
  p0 = f32[64] parameter(0)
  p1 = f32[64] parameter(1)
  p2 = f32[64] parameter(2)
  a = f32[64] add(p0, p1)
  m = f32[64] multiply(p1, p2)
  e = f32[64] exponential(m)
  ROOT t = (f32[64], f32[64]) tuple(a, e)
}

horizontal {
  p0 = f32[16,8] parameter(0)
  p1 = f32[16,8] parameter(1)
  p2 = f32[32] parameter(2)
  p3 = f32[32] parameter(3)
  a = f32[16,8] add(p0, p1)
  s = f32[32] subtract(p2, p3)
  ROOT t = (f32[16,8], f32[32], f32[32]) tuple(a, s, p3)
}

same_value_twice {
  p0 = f32[64] parameter(0)
  n = f32[64] negate(p0)
  ROOT t = (f32[64], f32[64]) tuple(n, n)
}

reads_elsewhere {
  p0 = f32[64] parameter(0)
  p1 = f32[64] parameter(1)
  r = f32[64] reverse(p0), dimensions={0}
  a = f32[64] add(p0, r)
  ROOT t = (f32[64], f32[64]) tuple(a, p1)
}

broadcast_and_convert {
  p0 = f32[] parameter(0)
  p1 = f32[64] parameter(1)
  p2 = f32[64] parameter(2)
  b = f32[64] broadcast(p0), dimensions={}
  a = f32[64] add(b, p1)
  c = f16[64] convert(p2)
  ROOT t = (f32[64], f16[64]) tuple(a, c)
}

layouts {
  p0 = f32[16,8]{0,1} parameter(0)
  p1 = f32[16,8]{1,0} parameter(1)
  a = f32[16,8]{1,0} add(p0, p1)
  ROOT t = (f32[16,8]{1,0}) tuple(a)
}

nested {
  p0 = f32[64] parameter(0)
  n = f32[64] negate(p0)
  inner = (f32[64]) tuple(n)
  ROOT t = ((f32[64]), f32[64]) tuple(inner, p0)
}

single {
  p0 = f32[64] parameter(0)
  p1 = f32[64] parameter(1)
  ROOT a = f32[64] add(p0, p1)
}

ENTRY main {
  x = f32[64] parameter(0)
  ROOT n = f32[64] negate(x)
}
)";

class ElementwiseOperandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kModule);
    ASSERT_TRUE(module.ok()) << module.status();
    module_ = *std::move(module);
  }
  bool ReadOnlyAt(const char* computation, int64_t parameter, int64_t output) {
    const HloComputation* c = module_->FindComputation(computation);
    EXPECT_NE(c, nullptr) << computation;
    return c != nullptr && ReadOnlyAtOutputIndex(*c, parameter, output);
  }
  std::unique_ptr<HloModule> module_;
};

TEST_F(ElementwiseOperandsTest, EachOutputIsProvedOnItsOwn) {
  EXPECT_TRUE(ReadOnlyAt("two_outputs", 0, 0));
  EXPECT_FALSE(ReadOnlyAt("two_outputs", 0, 1));  // p0 does not reach output 1.
  EXPECT_FALSE(ReadOnlyAt("two_outputs", 1, 0));  // p1 reaches both outputs.
  EXPECT_FALSE(ReadOnlyAt("two_outputs", 1, 1));
  EXPECT_TRUE(ReadOnlyAt("two_outputs", 2, 1));
  EXPECT_FALSE(ReadOnlyAt("two_outputs", 2, 2));  // No output 2.
}

TEST_F(ElementwiseOperandsTest, HorizontalOutputsOfOtherShapes) {
  EXPECT_TRUE(ReadOnlyAt("horizontal", 0, 0));
  EXPECT_TRUE(ReadOnlyAt("horizontal", 1, 0));
  EXPECT_TRUE(ReadOnlyAt("horizontal", 2, 1));
  EXPECT_FALSE(ReadOnlyAt("horizontal", 2, 0));  // Other dimensions.
  // p3 is output 2 itself, and read for output 1 too.
  EXPECT_FALSE(ReadOnlyAt("horizontal", 3, 1));
  EXPECT_FALSE(ReadOnlyAt("horizontal", 3, 2));
}

TEST_F(ElementwiseOperandsTest, ValueStoredAsTwoOutputsHoldsNeither) {
  EXPECT_FALSE(ReadOnlyAt("same_value_twice", 0, 0));
  EXPECT_FALSE(ReadOnlyAt("same_value_twice", 0, 1));
}

TEST_F(ElementwiseOperandsTest, ReadAtOtherIndicesIsRefused) {
  EXPECT_FALSE(ReadOnlyAt("reads_elsewhere", 0, 0));
  EXPECT_TRUE(ReadOnlyAt("reads_elsewhere", 1, 1));  // Passed through.
}

TEST_F(ElementwiseOperandsTest, BroadcastOrOtherElementSizeIsRefused) {
  EXPECT_FALSE(ReadOnlyAt("broadcast_and_convert", 0, 0));
  EXPECT_TRUE(ReadOnlyAt("broadcast_and_convert", 1, 0));
  EXPECT_FALSE(ReadOnlyAt("broadcast_and_convert", 2, 1));
}

TEST_F(ElementwiseOperandsTest, OtherLayoutIsRefused) {
  EXPECT_FALSE(ReadOnlyAt("layouts", 0, 0));
  EXPECT_TRUE(ReadOnlyAt("layouts", 1, 0));
}

TEST_F(ElementwiseOperandsTest, NestedTupleIsRefused) {
  EXPECT_FALSE(ReadOnlyAt("nested", 0, 0));
  EXPECT_FALSE(ReadOnlyAt("nested", 0, 1));
}

TEST_F(ElementwiseOperandsTest, SingleOutput) {
  EXPECT_TRUE(ReadOnlyAt("single", 0, 0));
  EXPECT_TRUE(ReadOnlyAt("single", 1, 0));
  EXPECT_FALSE(ReadOnlyAt("single", 0, 1));
}

}  // namespace
}  // namespace backend
}  // namespace hloc
