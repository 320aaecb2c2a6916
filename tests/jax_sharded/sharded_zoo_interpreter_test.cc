// Every model of the sharded JAX zoo, run on 4 devices by the multi-device
// interpreter from XLA's per-device module after SPMD partitioning, matches
// JAX's per-device outputs (default f32 tolerances).
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/text_parser.h"
#include "tests/jax_sharded/sharded_zoo.h"

namespace hloc {
namespace {

class ShardedZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ShardedZooTest, InterpreterMatchesJax) {
  absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel(GetParam());
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(model->partitioned_text);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->config().num_partitions, 4);
  ASSERT_EQ(model->device_inputs.size(), 4u);
  absl::StatusOr<std::vector<Literal>> results =
      EvaluateOnDevices(**module, model->device_inputs);
  ASSERT_TRUE(results.ok()) << results.status();
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(DeviceOutputMismatches(*model, d, (*results)[d]), "")
        << GetParam() << " device " << d;
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ShardedZooTest, ::testing::ValuesIn(ShardedZooModels()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hloc
