// Every model of the sharded JAX zoo from its Shardy module (global arrays,
// xla.sdy.* custom calls): ShardMapToPerDevice makes the per-device module,
// the global inputs are split by the shardings it found, the multi-device
// interpreter runs it, and the gathered global outputs match JAX's.
#include <string>

#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"
#include "passes/sharding/shard_map_to_per_device.h"
#include "tests/jax_sharded/sharded_zoo.h"

namespace hloc {
namespace {

class ShardyZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ShardyZooTest, GlobalArraysInGlobalArraysOut) {
  absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel(GetParam());
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(model->sdy_text);
  ASSERT_TRUE(module.ok()) << module.status();
  ShardMapSignature signature;
  absl::StatusOr<bool> changed = ShardMapToPerDevice(&signature).Run(**module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(*changed);
  ASSERT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);
  ASSERT_EQ(signature.device_count(), 4);
  ASSERT_EQ(signature.inputs.size(), model->global_inputs.size());
  std::vector<std::vector<Literal>> args(4);
  for (size_t i = 0; i < model->global_inputs.size(); ++i) {
    for (int d = 0; d < 4; ++d) {
      absl::StatusOr<Literal> piece =
          ShardOf(signature, signature.inputs[i], model->global_inputs[i], d);
      ASSERT_TRUE(piece.ok()) << piece.status();
      // The split agrees with how JAX placed the argument.
      EXPECT_EQ(piece->ToString(), model->device_inputs[d][i].ToString()) << i << " " << d;
      args[d].push_back(*std::move(piece));
    }
  }
  absl::StatusOr<std::vector<Literal>> results = EvaluateOnDevices(**module, args);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(signature.outputs.size(), model->global_outputs.size());
  for (size_t i = 0; i < signature.outputs.size(); ++i) {
    std::vector<Literal> pieces;
    for (int d = 0; d < 4; ++d) {
      const Literal& r = (*results)[d];
      pieces.push_back(signature.tuple_result ? r.tuple_elements()[i] : r);
    }
    absl::StatusOr<Literal> global = Unshard(signature, signature.outputs[i], pieces);
    ASSERT_TRUE(global.ok()) << global.status();
    ComparisonReport report = CompareLiterals(model->global_outputs[i], *global);
    EXPECT_TRUE(report.ok) << GetParam() << " output " << i << ": " << report.ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ShardyZooTest, ::testing::ValuesIn(ShardedZooModels()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hloc
