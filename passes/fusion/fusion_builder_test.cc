// Tests of the fusion builder on hand-made groups: members move into the
// fused computation as they are (same objects, names and ids), copies are made
// only for members that other kernels still read, the root may be a member,
// and merging a fusion moves its instructions out of the old fused
// computation, which the caller then drops.
#include "passes/fusion/fusion_builder.h"

#include "gtest/gtest.h"
#include "passes/fusion/fusion_test_util.h"

namespace hloc {
namespace {

using fusion_test::BodyOpcodes;
using fusion_test::EntryFusions;
using fusion_test::EntryOpcodes;
using fusion_test::Parse;

HloInstruction* Find(const HloModule& module, absl::string_view name) {
  HloInstruction* found = nullptr;
  for (HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](HloInstruction* i) {
      if (i->name() == name) found = i;
    });
  }
  return found;
}

FusionGroup Group(const HloModule& module, std::vector<absl::string_view> names,
                  std::vector<bool> duplicated = {}) {
  FusionGroup group;
  for (absl::string_view name : names) group.members.push_back(Find(module, name));
  group.duplicated = std::move(duplicated);
  return group;
}

TEST(FusionBuilder, MembersMoveWithTheirNamesAndIds) {
  auto module = Parse(R"(
HloModule moves
ENTRY main {
  x = f32[8] parameter(0)
  e = f32[8] exponential(x)
  n = f32[8] negate(e)
  ROOT a = f32[8] add(n, x)
})");
  HloInstruction* e = Find(*module, "e");
  HloInstruction* a = Find(*module, "a");
  const int64_t e_id = e->unique_id();
  absl::StatusOr<BuildResult> built =
      BuildFusions(*module->entry(), {Group(*module, {"e", "n", "a"})});
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_TRUE(VerifyModule(*module).ok());
  ASSERT_EQ(built->fusions.size(), 1u);
  const HloInstruction* fusion = built->fusions[0];
  EXPECT_EQ(module->entry()->root(), fusion);  // the root was a member
  EXPECT_EQ(e->parent(), fusion->fused_computation());
  EXPECT_EQ(e->name(), "e");
  EXPECT_EQ(e->unique_id(), e_id);
  EXPECT_EQ(fusion->fused_computation()->root(), a);
  EXPECT_EQ(fusion->operand_count(), 1);  // x, read twice inside
  EXPECT_EQ(EntryOpcodes(*module), "fusion");
}

TEST(FusionBuilder, CopiesOnlyWhatOtherKernelsStillRead) {
  auto module = Parse(R"(
HloModule copies
ENTRY main {
  x = f32[8] parameter(0)
  c = f32[] constant(2)
  b = f32[8] broadcast(c), dimensions={}
  m = f32[8] multiply(x, b)
  s = f32[8] subtract(x, b)
  ROOT t = (f32[8], f32[8]) tuple(m, s)
})");
  HloInstruction* b = Find(*module, "b");
  // Both kernels take copies of the constant and the broadcast: the first
  // group copies them (the second still reads the originals), the second
  // group is their last reader, so the originals themselves move there.
  absl::StatusOr<BuildResult> built = BuildFusions(
      *module->entry(), {Group(*module, {"c", "b", "m"}, {true, true, false}),
                         Group(*module, {"c", "b", "s"}, {true, true, false})});
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
  ASSERT_EQ(built->fusions.size(), 2u);
  EXPECT_EQ(BodyOpcodes(*built->fusions[0]), "broadcast,constant,multiply");
  EXPECT_EQ(BodyOpcodes(*built->fusions[1]), "broadcast,constant,subtract");
  const HloInstruction* copy = Find(*module, "b.1");  // a copy gets a new name
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->opcode(), HloOpcode::kBroadcast);
  EXPECT_EQ(copy->parent(), built->fusions[0]->fused_computation());
  EXPECT_EQ(b->parent(), built->fusions[1]->fused_computation());
  EXPECT_EQ(EntryOpcodes(*module), "fusion,fusion,tuple");
}

TEST(FusionBuilder, MergingAFusionMovesItsInstructions) {
  auto module = Parse(R"(
HloModule merge
fused {
  p = f32[8] parameter(0)
  e = f32[8] exponential(p)
  ROOT n = f32[8] negate(e)
}
ENTRY main {
  x = f32[8] parameter(0)
  f = f32[8] fusion(x), kind=kLoop, calls=fused
  ROOT a = f32[8] add(f, x)
})");
  HloComputation* old_body = module->FindComputation("fused");
  HloInstruction* e = Find(*module, "e");
  absl::StatusOr<BuildResult> built =
      BuildFusions(*module->entry(), {Group(*module, {"f", "a"})});
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_EQ(built->dead_computations, std::vector<HloComputation*>{old_body});
  ASSERT_TRUE(module->RemoveComputations(built->dead_computations).ok());
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
  const HloInstruction* fusion = EntryFusions(*module).at(0);
  EXPECT_EQ(e->parent(), fusion->fused_computation());
  EXPECT_EQ(e->name(), "e");
  EXPECT_EQ(BodyOpcodes(*fusion), "add,exponential,negate");
  EXPECT_EQ(fusion->operand_count(), 1);
  EXPECT_EQ(module->FindComputation("fused"), nullptr);
}

// A variadic reduce (argmax's (value, index)) is one tuple value; beside
// another output it cannot be expressed, so the check refuses the group before
// BuildFusions could fail half-way, and accepts the reduce on its own.
TEST(FusionBuilder, TupleValuedMemberAmongSeveralOutputsIsRefusedBeforeBuilding) {
  auto module = Parse(R"(
HloModule argmax
step {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY main {
  x = f32[4,8] parameter(0)
  iota = s32[4,8] iota(), iota_dimension=1
  lo = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[4], s32[4]) reduce(x, iota, lo, zero), dimensions={1}, to_apply=step
  index = s32[4] get-tuple-element(r), index=1
  doubled = f32[4,8] add(x, x)
  unread = f32[4,8] multiply(x, x)
  ROOT out = (s32[4], f32[4,8]) tuple(index, doubled)
})");
  FusionDecision both = CheckGroupBuildable(*module->entry(), Group(*module, {"r", "doubled"}));
  EXPECT_FALSE(both.ok());
  EXPECT_EQ(both.rule(), fusion_rule::kTupleValue);
  EXPECT_NE(both.reason().find("tuple-valued r"), std::string::npos) << both.reason();
  EXPECT_TRUE(CheckGroupBuildable(*module->entry(), Group(*module, {"r"})).ok());
  EXPECT_TRUE(CheckGroupBuildable(*module->entry(), Group(*module, {"r", "index"})).ok());
  // Dead code a pass left before fusion: declined, not a failed build.
  FusionDecision dead = CheckGroupBuildable(*module->entry(), Group(*module, {"unread"}));
  EXPECT_FALSE(dead.ok());
  EXPECT_EQ(dead.rule(), fusion_rule::kUnused);
}

}  // namespace
}  // namespace hloc
