// The sharded zoo through the C++ API with CompileOptions::devices = 4, on
// the host and the interpreter: the Shardy module takes JAX's global inputs
// and returns global outputs equal to JAX's; the SPMD-partitioned module
// takes the same global inputs (split by its parameters' shardings) and
// returns every device's outputs stacked (its root has no sharding), each
// equal to JAX's for that device. One executable runs twice.
#include <cstring>
#include <string>
#include <vector>

#include "api/hloc.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "tests/jax_sharded/sharded_zoo.h"

namespace hloc {
namespace {

using api::Backend;
using api::Buffer;

std::shared_ptr<api::Executable> Compile(const std::string& text, Backend backend) {
  static std::shared_ptr<api::Client> client = *api::Client::Create();
  api::CompileOptions options;
  options.backend = backend;
  options.devices = 4;
  absl::StatusOr<std::shared_ptr<api::Executable>> exe =
      client->Compile(api::ModuleSource::Text(text), options);
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? *exe : nullptr;
}

std::vector<Buffer> RunGlobal(const api::Executable& exe, const std::vector<Literal>& inputs) {
  std::vector<Buffer> arguments;
  for (const Literal& input : inputs) {
    arguments.push_back(*Buffer::CopyFromHost(input.shape().element_type(),
                                              input.shape().dimensions(), input.raw()));
  }
  absl::StatusOr<std::vector<Buffer>> results = exe.Execute(arguments);
  EXPECT_TRUE(results.ok()) << results.status();
  return results.ok() ? *results : std::vector<Buffer>{};
}

Literal ToLiteral(const Shape& shape, const void* data) {
  Literal literal = *Literal::Create(shape);
  if (literal.size_bytes() > 0) std::memcpy(literal.mutable_raw(), data, literal.size_bytes());
  return literal;
}

class ShardedZooApiTest : public ::testing::TestWithParam<std::tuple<std::string, Backend>> {};

TEST_P(ShardedZooApiTest, ShardMapModuleTakesAndReturnsGlobalArrays) {
  absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel(std::get<0>(GetParam()));
  ASSERT_TRUE(model.ok()) << model.status();
  std::shared_ptr<api::Executable> exe = Compile(model->sdy_text, std::get<1>(GetParam()));
  ASSERT_NE(exe, nullptr);
  EXPECT_EQ(exe->stats().devices, 4);
  ASSERT_NE(exe->mesh_shardings(), nullptr);
  EXPECT_EQ(exe->mesh_shardings()->axis_sizes, std::vector<int64_t>{4});
  EXPECT_EQ(exe->mesh_shardings()->parameters.size(), model->global_inputs.size());
  EXPECT_EQ(exe->mesh_shardings()->results.size(), model->global_outputs.size());
  if (std::get<1>(GetParam()) == Backend::kHost) {
    EXPECT_EQ(exe->stats().interpreter_ops, 0);
  }
  ASSERT_EQ(exe->results().size(), model->global_outputs.size());
  for (int run = 0; run < 2; ++run) {
    std::vector<Buffer> results = RunGlobal(*exe, model->global_inputs);
    ASSERT_EQ(results.size(), model->global_outputs.size());
    for (size_t j = 0; j < results.size(); ++j) {
      const Literal& expected = model->global_outputs[j];
      ComparisonReport report =
          CompareLiterals(expected, ToLiteral(expected.shape(), results[j].data()));
      EXPECT_TRUE(report.ok) << "run " << run << " output " << j << ": " << report.ToString();
    }
  }
}

TEST_P(ShardedZooApiTest, PartitionedModuleSplitsByParameterShardingsAndStacksResults) {
  absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel(std::get<0>(GetParam()));
  ASSERT_TRUE(model.ok()) << model.status();
  std::shared_ptr<api::Executable> exe =
      Compile(model->partitioned_text, std::get<1>(GetParam()));
  ASSERT_NE(exe, nullptr);
  std::vector<Buffer> results = RunGlobal(*exe, model->global_inputs);
  ASSERT_EQ(results.size(), model->device_outputs[0].size());
  for (int64_t d = 0; d < 4; ++d) {
    std::vector<Literal> outputs;
    for (size_t j = 0; j < results.size(); ++j) {
      const Shape& shape = model->device_outputs[d][j].shape();
      ASSERT_EQ(results[j].dims()[0], 4) << results[j].spec().ToString();
      const int64_t block = results[j].byte_size() / 4;
      outputs.push_back(ToLiteral(shape, static_cast<const char*>(results[j].data()) + d * block));
    }
    Literal result = outputs.size() == 1 ? std::move(outputs[0]) : Literal::Tuple(std::move(outputs));
    EXPECT_EQ(DeviceOutputMismatches(*model, d, result), "") << "device " << d;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, ShardedZooApiTest,
    ::testing::Combine(::testing::ValuesIn(ShardedZooModels()),
                       ::testing::Values(Backend::kHost, Backend::kInterpreter)),
    [](const auto& info) {
      return std::get<0>(info.param) + "_" + api::BackendName(std::get<1>(info.param));
    });

}  // namespace
}  // namespace hloc
