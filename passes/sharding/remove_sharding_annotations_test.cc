#include "passes/sharding/remove_sharding_annotations.h"

#include <string>

#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"

namespace hloc {
namespace {

// JAX 0.10.2, jax.jit(f, in_shardings=(s, None), out_shardings=(s, None)) on
// a one-device mesh, f = (tanh(a) @ b with_sharding_constraint(s)) * 2 and
// its sum: lowered with .compiler_ir("hlo").
constexpr char kJaxOneDevice[] = R"(HloModule jit_f, entry_computation_layout={(f32[8,4]{1,0}, f32[4,6]{1,0})->(f32[8,6]{1,0}, f32[])}, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=1]>}}

region_0.1 {
  reduce_sum.3 = f32[] parameter(0)
  reduce_sum.4 = f32[] parameter(1)
  ROOT reduce_sum.5 = f32[] add(reduce_sum.3, reduce_sum.4)
}

ENTRY main.2 {
  a.1 = f32[8,4]{1,0} parameter(0), sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"x\"}, {}]>"}
  tanh.1 = f32[8,4]{1,0} tanh(a.1)
  b.1 = f32[4,6]{1,0} parameter(1)
  dot_general.1 = f32[8,6]{1,0} dot(tanh.1, b.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  sharding_constraint.1 = f32[8,6]{1,0} custom-call(dot_general.1), custom_call_target="Sharding", sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>"}
  constant.2 = f32[] constant(2)
  mul.3 = f32[8,6]{1,0} broadcast(constant.2), dimensions={}
  mul.4 = f32[8,6]{1,0} multiply(sharding_constraint.1, mul.3)
  mul.5 = f32[8,6]{1,0} custom-call(mul.4), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>"}
  reshape.2 = f32[8,6]{1,0} reshape(mul.5), sharding={replicated}
  constant.3 = f32[] constant(0)
  reduce_sum.7 = f32[] reduce(sharding_constraint.1, constant.3), dimensions={0,1}, to_apply=region_0.1
  reshape.3 = f32[] reshape(reduce_sum.7)
  ROOT tuple.1 = (f32[8,6]{1,0}, f32[]) tuple(mul.5, reduce_sum.7), sharding={{replicated}, {replicated}}
}
)";

// The same function written without annotations.
constexpr char kPlain[] = R"(HloModule plain
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[8,4] parameter(0)
  t = f32[8,4] tanh(a)
  b = f32[4,6] parameter(1)
  d = f32[8,6] dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  two = f32[] constant(2)
  twos = f32[8,6] broadcast(two), dimensions={}
  m = f32[8,6] multiply(d, twos)
  z = f32[] constant(0)
  r = f32[] reduce(d, z), dimensions={0,1}, to_apply=add
  ROOT out = (f32[8,6], f32[]) tuple(m, r)
})";

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

int64_t CustomCalls(const HloModule& module) {
  int64_t n = 0;
  for (const HloInstruction* hlo : module.entry()->instructions()) {
    n += hlo->opcode() == HloOpcode::kCustomCall ? 1 : 0;
  }
  return n;
}

TEST(RemoveShardingAnnotationsTest, JaxOneDeviceModuleRunsOnEveryBackend) {
  auto module = Parse(kJaxOneDevice);
  auto plain = Parse(kPlain);
  ASSERT_NE(module, nullptr);
  ASSERT_NE(plain, nullptr);
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(*plain, 5);
  ASSERT_TRUE(args.ok());
  absl::StatusOr<Literal> expected = Evaluate(*plain, *args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  // Before: the interpreter knows no "Sharding" target.
  absl::StatusOr<Literal> before = Evaluate(*module, *args);
  ASSERT_FALSE(before.ok());
  EXPECT_NE(before.status().message().find("Sharding"), std::string::npos) << before.status();

  absl::StatusOr<bool> changed = RemoveShardingAnnotations().Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CustomCalls(*module), 0);
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
  absl::StatusOr<Literal> interpreted = Evaluate(*module, *args);
  ASSERT_TRUE(interpreted.ok()) << interpreted.status();
  ComparisonReport cmp = CompareLiterals(*expected, *interpreted);
  EXPECT_TRUE(cmp.ok) << cmp.ToString();
  absl::StatusOr<Literal> host = RunOnHost(*module, *args);
  ASSERT_TRUE(host.ok()) << host.status();
  cmp = CompareLiterals(*expected, *host);
  EXPECT_TRUE(cmp.ok) << cmp.ToString();
  // A fixed point.
  EXPECT_FALSE(*RemoveShardingAnnotations().Run(*module));
}

TEST(RemoveShardingAnnotationsTest, RootAnnotationAndShapeChangesAndGroups) {
  auto module = Parse(R"(HloModule m
ENTRY main {
  p = f32[8] parameter(0)
  g = () custom-call(p), custom_call_target="xla.sdy.ShardingGroup"
  full = f32[8] custom-call(p), custom_call_target="SPMDShardToFullShape"
  shard = f32[2] custom-call(full), custom_call_target="SPMDFullToShardShape"
  other = f32[2] custom-call(shard), custom_call_target="my_target"
  ROOT r = f32[2] custom-call(other), custom_call_target="xla.sdy.FuncResultSharding"
})");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(*RemoveShardingAnnotations().Run(*module));
  // The root annotation and the identities go; a shape change and other
  // targets stay (they are not identities).
  EXPECT_EQ(module->entry()->root()->attrs().custom_call_target, "my_target");
  EXPECT_EQ(CustomCalls(*module), 2);
  EXPECT_EQ(module->entry()->root()->operand(0)->attrs().custom_call_target,
            "SPMDFullToShardShape");
  EXPECT_EQ(module->entry()->root()->operand(0)->operand(0)->opcode(), HloOpcode::kParameter);
}

// JAX's transposes have layout {0,1}; the constraint after one has {1,0}:
// the annotation becomes a copy to its layout (the zoo's spmd_uneven).
TEST(RemoveShardingAnnotationsTest, AnotherLayoutBecomesACopy) {
  auto module = Parse(R"(HloModule m
ENTRY main {
  p = f32[8,6]{1,0} parameter(0)
  t = f32[6,8]{0,1} transpose(p), dimensions={1,0}
  ROOT c = f32[6,8]{1,0} custom-call(t), custom_call_target="Sharding", sharding={devices=[4,1]<=[4]}
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(*module, 2);
  ASSERT_TRUE(args.ok());
  ASSERT_TRUE(*RemoveShardingAnnotations().Run(*module));
  ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
  const HloInstruction* root = module->entry()->root();
  EXPECT_EQ(root->opcode(), HloOpcode::kCopy);
  EXPECT_EQ(root->shape().ToString(), "f32[6,8]{1,0}");
  absl::StatusOr<Literal> interpreted = Evaluate(*module, *args);
  ASSERT_TRUE(interpreted.ok()) << interpreted.status();
  absl::StatusOr<Literal> host = RunOnHost(*module, *args);
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_TRUE(CompareLiterals(*interpreted, *host).ok);
  // The transpose, read back: element [i][j] is p[j][i].
  EXPECT_EQ(interpreted->GetAsDouble(1 * 8 + 2), (*args)[0].GetAsDouble(2 * 6 + 1));
}

TEST(RemoveShardingAnnotationsTest, ModulesForSeveralDevicesAreLeftAlone) {
  auto module = Parse(R"(HloModule m, num_partitions=4
ENTRY main {
  p = f32[8] parameter(0), sharding={devices=[4]<=[4]}
  ROOT c = f32[8] custom-call(p), custom_call_target="Sharding", sharding={replicated}
})");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(*RemoveShardingAnnotations().Run(*module));
  EXPECT_EQ(CustomCalls(*module), 1);
}

}  // namespace
}  // namespace hloc
