// The spmd_* models of the sharded zoo (jax.jit over NamedSharding
// arguments, no shard_map) through the C++ API with CompileOptions::devices
// = 4, on the host and the interpreter: the module JAX lowered goes through
// hloc's SPMD partitioner, takes JAX's global inputs and returns global
// outputs equal to JAX's, describes its results on JAX's mesh, and its
// report says what the partitioner made. One executable runs twice.
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "api/hloc.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "tests/jax_sharded/sharded_zoo.h"

namespace hloc {
namespace {

using api::Backend;
using api::Buffer;

class SpmdZooApiTest : public ::testing::TestWithParam<std::tuple<std::string, Backend>> {};

TEST_P(SpmdZooApiTest, JitModuleTakesAndReturnsGlobalArrays) {
  const auto& [name, backend] = GetParam();
  absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel(name);
  ASSERT_TRUE(model.ok()) << model.status();
  static std::shared_ptr<api::Client> client = *api::Client::Create();
  api::CompileOptions options;
  options.backend = backend;
  options.devices = 4;
  absl::StatusOr<std::shared_ptr<api::Executable>> exe =
      client->Compile(api::ModuleSource::Text(model->sdy_text), options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().devices, 4);
  if (backend == Backend::kHost) EXPECT_EQ((*exe)->stats().interpreter_ops, 0);
  EXPECT_NE((*exe)->Report().find("spmd-partition on 4 devices"), std::string::npos)
      << (*exe)->Report();
  EXPECT_NE((*exe)->Report().find("0 replicated op(s)"), std::string::npos) << (*exe)->Report();
  ASSERT_NE((*exe)->mesh_shardings(), nullptr);
  EXPECT_EQ((*exe)->mesh_shardings()->results.size(), model->global_outputs.size());
  ASSERT_EQ((*exe)->parameters().size(), model->global_inputs.size());
  for (int run = 0; run < 2; ++run) {
    std::vector<Buffer> arguments;
    for (const Literal& input : model->global_inputs) {
      arguments.push_back(*Buffer::CopyFromHost(input.shape().element_type(),
                                                input.shape().dimensions(), input.raw()));
    }
    absl::StatusOr<std::vector<Buffer>> results = (*exe)->Execute(arguments);
    ASSERT_TRUE(results.ok()) << results.status();
    ASSERT_EQ(results->size(), model->global_outputs.size());
    for (size_t j = 0; j < results->size(); ++j) {
      const Literal& expected = model->global_outputs[j];
      Literal actual = *Literal::Create(expected.shape());
      ASSERT_EQ((*results)[j].byte_size(), actual.size_bytes());
      std::memcpy(actual.mutable_raw(), (*results)[j].data(), actual.size_bytes());
      ComparisonReport report = CompareLiterals(expected, actual);
      EXPECT_TRUE(report.ok) << name << " run " << run << " output " << j << ": "
                             << report.ToString();
    }
  }
}

// The same JAX modules compiled for ONE device (num_partitions dropped from
// the header): the sharding custom calls ("Sharding",
// "xla.sdy.FuncResultSharding") are identities there, removed before the
// backend; the global outputs equal JAX's.
TEST_P(SpmdZooApiTest, OneDeviceIgnoresShardingAnnotations) {
  const auto& [name, backend] = GetParam();
  absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel(name);
  ASSERT_TRUE(model.ok()) << model.status();
  std::string text = model->sdy_text;
  const size_t header = text.find(", num_partitions=4");
  ASSERT_NE(header, std::string::npos);
  text.erase(header, std::strlen(", num_partitions=4"));
  static std::shared_ptr<api::Client> client = *api::Client::Create();
  api::CompileOptions options;
  options.backend = backend;
  absl::StatusOr<std::shared_ptr<api::Executable>> exe =
      client->Compile(api::ModuleSource::Text(text), options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().devices, 1);
  std::vector<Buffer> arguments;
  for (const Literal& input : model->global_inputs) {
    arguments.push_back(*Buffer::CopyFromHost(input.shape().element_type(),
                                              input.shape().dimensions(), input.raw()));
  }
  absl::StatusOr<std::vector<Buffer>> results = (*exe)->Execute(arguments);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), model->global_outputs.size());
  for (size_t j = 0; j < results->size(); ++j) {
    const Literal& expected = model->global_outputs[j];
    Literal actual = *Literal::Create(expected.shape());
    ASSERT_EQ((*results)[j].byte_size(), actual.size_bytes());
    std::memcpy(actual.mutable_raw(), (*results)[j].data(), actual.size_bytes());
    ComparisonReport report = CompareLiterals(expected, actual);
    EXPECT_TRUE(report.ok) << name << " output " << j << ": " << report.ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, SpmdZooApiTest,
                         ::testing::Combine(::testing::ValuesIn(SpmdZooModels()),
                                            ::testing::Values(Backend::kHost,
                                                              Backend::kInterpreter)),
                         [](const auto& info) {
                           return std::get<0>(info.param) +
                                  (std::get<1>(info.param) == Backend::kHost ? "_host"
                                                                             : "_interpreter");
                         });

}  // namespace
}  // namespace hloc
