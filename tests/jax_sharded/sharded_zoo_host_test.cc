// Every model of the sharded JAX zoo on the host backend with 4 virtual
// devices (RunOnHostDevices: compiled kernels, collectives through the
// interpreter's rendezvous) matches JAX's per-device outputs.
#include <string>

#include "gtest/gtest.h"
#include "backend/host/run_on_host_devices.h"
#include "hlo/evaluator/compare.h"
#include "hlo/text_parser.h"
#include "tests/jax_sharded/sharded_zoo.h"

namespace hloc {
namespace {

class ShardedZooHostTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ShardedZooHostTest, HostDevicesMatchJax) {
  absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel(GetParam());
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(model->partitioned_text);
  ASSERT_TRUE(module.ok()) << module.status();
  host::HostCompileReport report;
  RunOnHostDevicesOptions options;
  options.report = &report;
  absl::StatusOr<std::vector<Literal>> results =
      RunOnHostDevices(**module, model->device_inputs, options);
  ASSERT_TRUE(results.ok()) << results.status();
  // Only the collectives and the device ids leave the compiled kernels.
  int collectives = 0;
  for (const std::string& line : report.interpreter_ops) {
    bool communication = false;
    for (const char* op : {"(all-reduce)", "(all-gather)", "(reduce-scatter)", "(all-to-all)",
                           "(collective-permute)", "(partition-id)", "(replica-id)"}) {
      communication |= line.find(op) != std::string::npos;
    }
    EXPECT_TRUE(communication) << GetParam() << ": " << line;
    ++collectives;
  }
  EXPECT_GT(collectives, 0) << GetParam();
  ASSERT_EQ(results->size(), 4u);
  for (int d = 0; d < 4; ++d) {
    const Literal& result = (*results)[d];
    const std::vector<Literal>& expected = model->device_outputs[d];
    const bool tuple = result.shape().IsTuple();
    ASSERT_EQ(tuple ? result.tuple_elements().size() : 1u, expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      const Literal& actual = tuple ? result.tuple_elements()[i] : result;
      ComparisonReport report = CompareLiterals(expected[i], actual);
      EXPECT_TRUE(report.ok) << GetParam() << " device " << d << " output " << i << ": "
                             << report.ToString();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ShardedZooHostTest, ::testing::ValuesIn(ShardedZooModels()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hloc
