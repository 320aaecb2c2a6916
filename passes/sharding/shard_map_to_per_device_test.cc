#include "passes/sharding/shard_map_to_per_device.h"

#include <string>

#include "gtest/gtest.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"

namespace hloc {
namespace {

// A 2x2 mesh; x split over "a" in dim 0 and "b" in dim 1, y replicated.
constexpr char kModule[] = R"(HloModule m, num_partitions=4, frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[\"a\"=2, \"b\"=2]>}"}

body {
  x = f32[2,3] parameter(0)
  y = f32[3] parameter(1)
  b = f32[2,3] broadcast(y), dimensions={1}
  ROOT s = f32[2,3] add(x, b)
}

ENTRY main {
  x = f32[4,6] parameter(0)
  y = f32[3] parameter(1)
  l = (f32[2,3], f32[3]) custom-call(x, y), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>, <@mesh, [{}]>]>"}
  lx = f32[2,3] get-tuple-element(l), index=0
  ly = f32[3] get-tuple-element(l), index=1
  c = f32[2,3] call(lx, ly), to_apply=body
  ROOT g = f32[4,6] custom-call(c), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>]>"}
}
)";

TEST(ShardMapToPerDeviceTest, RewritesToLocalShapesAndDescribesTheSplit) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status();
  ShardMapSignature signature;
  absl::StatusOr<bool> changed = ShardMapToPerDevice(&signature).Run(**module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);
  const HloComputation& entry = *(*module)->entry();
  EXPECT_EQ(entry.parameter(0)->shape().ToString(false), "f32[2,3]");
  EXPECT_EQ(entry.parameter(1)->shape().ToString(false), "f32[3]");
  EXPECT_EQ(entry.root()->shape().ToString(false), "f32[2,3]");
  for (const HloInstruction* hlo : entry.instructions()) {
    EXPECT_NE(hlo->opcode(), HloOpcode::kCustomCall) << hlo->name();
  }
  ASSERT_EQ(signature.axis_sizes, (std::vector<int64_t>{2, 2}));
  ASSERT_EQ(signature.inputs.size(), 2u);
  EXPECT_EQ(signature.inputs[0].dimension_axes, (std::vector<std::vector<int64_t>>{{0}, {1}}));

  // Device 3 = (a=1, b=1): rows 2..3, columns 3..5.
  Literal x(signature.inputs[0].global_shape);
  for (int i = 0; i < 24; ++i) x.SetFromInt64(i, i);
  absl::StatusOr<Literal> piece = ShardOf(signature, signature.inputs[0], x, 3);
  ASSERT_TRUE(piece.ok()) << piece.status();
  EXPECT_EQ(piece->ToString(), "f32[2,3] {{15, 16, 17}, {21, 22, 23}}");
  std::vector<Literal> pieces;
  for (int d = 0; d < 4; ++d) pieces.push_back(*ShardOf(signature, signature.outputs[0], x, d));
  absl::StatusOr<Literal> back = Unshard(signature, signature.outputs[0], pieces);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToString(), x.ToString());
}

TEST(ShardMapToPerDeviceTest, GlobalComputationIsAnErrorNamingTheInstruction) {
  std::string text = kModule;
  // The result is used by a global add after the shard_map.
  const std::string root = "  ROOT g = f32[4,6]";
  text.replace(text.find(root), root.size(), "  g = f32[4,6]");
  text.replace(text.rfind("}"), 1, "  ROOT n = f32[4,6] negate(g)\n}");
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status status = ShardMapToPerDevice().Run(**module).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
  EXPECT_NE(status.message().find("%n"), std::string::npos) << status;
}

TEST(ShardMapToPerDeviceTest, ModuleWithoutShardMapIsUnchanged) {
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseHloModule("HloModule m\nENTRY e { ROOT p = f32[2] parameter(0) }\n");
  ASSERT_TRUE(module.ok());
  absl::StatusOr<bool> changed = ShardMapToPerDevice().Run(**module);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

// jax.jit(f).lower(...) names no device count: the module takes the mesh's.
TEST(ShardMapToPerDeviceTest, ModuleNamingOneDeviceTakesTheMeshsCount) {
  std::string text = kModule;
  text.replace(text.find(", num_partitions=4"), 18, "");
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(HasShardMap(**module));
  absl::StatusOr<bool> changed = ShardMapToPerDevice().Run(**module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ((*module)->config().num_partitions, 4);
  EXPECT_FALSE(HasShardMap(**module));
}

// JAX adds an axis-less mesh for replicated arguments when the inputs carry
// NamedShardings; it splits nothing. A second mesh with axes is an error.
TEST(ShardMapToPerDeviceTest, AxislessMeshesAreSkipped) {
  std::string text = kModule;
  const std::string mesh = R"({mesh = #sdy.mesh<[\"a\"=2, \"b\"=2]>})";
  ASSERT_NE(text.find(mesh), std::string::npos);
  text.replace(text.find(mesh), mesh.size(),
               R"({empty_mesh = #sdy.mesh<[]>, mesh = #sdy.mesh<[\"a\"=2, \"b\"=2]>})");
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  ShardMapSignature signature;
  absl::StatusOr<bool> changed = ShardMapToPerDevice(&signature).Run(**module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(signature.axis_sizes, (std::vector<int64_t>{2, 2}));

  text.replace(text.find("empty_mesh = #sdy.mesh<[]>"), 26, R"(other = #sdy.mesh<[\"c\"=4]>)");
  module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status two = ShardMapToPerDevice().Run(**module).status();
  EXPECT_EQ(two.code(), absl::StatusCode::kUnimplemented) << two;
  EXPECT_NE(two.message().find("more than one mesh"), std::string::npos) << two;
}

}  // namespace
}  // namespace hloc
