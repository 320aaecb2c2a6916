#include "passes/sharding/per_device_module.h"

#include <string>

#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

// jax.jit over sharded arguments: partitioned, global arrays split and
// gathered; the same result as one device.
TEST(PerDeviceModuleTest, ShardedJitModuleIsPartitioned) {
  auto module = Parse(R"(HloModule jit_f
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}
  w = f32[4,6] parameter(1), sharding={replicated}
  d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[8,6] tanh(d)
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::vector<Literal>> globals = MakeRandomArguments(*module, 3);
  ASSERT_TRUE(globals.ok());
  absl::StatusOr<Literal> expected = Evaluate(*module, *globals);
  ASSERT_TRUE(expected.ok());
  absl::StatusOr<PerDeviceModule> made = MakePerDeviceModule(*module, 4);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->kind, PerDeviceModule::Kind::kSpmd);
  EXPECT_TRUE(made->global());
  EXPECT_EQ(made->spmd_report.devices, 4);
  EXPECT_EQ(module->config().num_partitions, 4);
  std::vector<DevicePlacement> inputs, outputs;
  ASSERT_TRUE(PlaceGlobalArrays(*module, *made, &inputs, &outputs).ok());
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].block_dims, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(inputs[1].block_dims, (std::vector<int64_t>{4, 6}));
  absl::StatusOr<std::vector<std::vector<Literal>>> per_device =
      SplitGlobalArguments(*module, inputs, *globals);
  ASSERT_TRUE(per_device.ok()) << per_device.status();
  absl::StatusOr<std::vector<Literal>> results = EvaluateOnDevices(*module, *per_device);
  ASSERT_TRUE(results.ok()) << results.status();
  absl::StatusOr<std::vector<Literal>> gathered = GatherGlobalResults(*module, outputs, *results);
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  ASSERT_EQ(gathered->size(), 1u);
  ComparisonReport cmp = CompareLiterals(*expected, (*gathered)[0]);
  EXPECT_TRUE(cmp.ok) << cmp.ToString();
  // Arguments that do not fit the placements are errors, not copies.
  EXPECT_FALSE(SplitGlobalArguments(*module, inputs, {(*globals)[0]}).ok());
  std::vector<Literal> swapped = {(*globals)[1], (*globals)[0]};
  absl::StatusOr<std::vector<std::vector<Literal>>> bad =
      SplitGlobalArguments(*module, inputs, swapped);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("argument 0 is f32[4,6]"), std::string::npos)
      << bad.status();
}

TEST(PerDeviceModuleTest, OneDeviceModuleRunsAsReplicas) {
  auto module = Parse(R"(HloModule m
ENTRY main {
  x = f32[8] parameter(0)
  ROOT n = f32[8] negate(x)
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<PerDeviceModule> made = MakePerDeviceModule(*module, 4);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->kind, PerDeviceModule::Kind::kReplicas);
  EXPECT_FALSE(made->global());
  EXPECT_EQ(module->config().replica_count, 4);
  std::vector<DevicePlacement> inputs, outputs;
  ASSERT_TRUE(PlaceGlobalArrays(*module, *made, &inputs, &outputs).ok());
  EXPECT_EQ(inputs[0].global_dims, (std::vector<int64_t>{4, 8}));  // Stacked.
}

TEST(PerDeviceModuleTest, PartitionedModuleRunsAsWritten) {
  auto module = Parse(R"(HloModule m, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8] parameter(0), sharding={devices=[4]<=[4]}
  ROOT r = f32[8] all-reduce(x), channel_id=1, replica_groups=mesh['x'=4] {'x'}, use_global_device_ids=true, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<PerDeviceModule> made = MakePerDeviceModule(*module, 4);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->kind, PerDeviceModule::Kind::kAsWritten);
  EXPECT_EQ(module->config().num_partitions, 4);
  EXPECT_EQ(module->config().replica_count, 1);
}

// Shardings on one device that the partitioner does not take (a collective
// is already there): refused, not run as replicas.
TEST(PerDeviceModuleTest, ShardingsItCannotPartitionAreRefused) {
  auto module = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8] parameter(0), sharding={devices=[4]<=[4]}
  ROOT r = f32[8] all-reduce(x), replica_groups={}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<PerDeviceModule> made = MakePerDeviceModule(*module, 4);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(made.status().message().find("%x carries a sharding"), std::string::npos)
      << made.status();
}

}  // namespace
}  // namespace hloc
