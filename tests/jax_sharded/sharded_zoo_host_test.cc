// Every model of the sharded JAX zoo on the host backend with 4 virtual
// devices (RunOnHostDevices: compiled kernels, collectives as communicator
// thunks on the shared-memory communicator, no interpreter op) matches JAX's
// per-device outputs.
#include <string>

#include "gtest/gtest.h"
#include "backend/host/run_on_host_devices.h"
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
  // Nothing runs in the interpreter: collectives and device ids are
  // communicator thunks, everything else compiled kernels and library calls.
  EXPECT_EQ(report.interpreter_calls, 0) << GetParam() << ":\n" << report.ToString();
  EXPECT_TRUE(report.interpreter_ops.empty()) << GetParam();
  EXPECT_GT(report.collectives, 0) << GetParam();
  ASSERT_EQ(results->size(), 4u);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(DeviceOutputMismatches(*model, d, (*results)[d]), "")
        << GetParam() << " device " << d;
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ShardedZooHostTest, ::testing::ValuesIn(ShardedZooModels()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hloc
