// The SPMD partitioner on JAX's own lowerings of jax.jit over NamedSharding
// arguments (the spmd_* models of the sharded zoo, make_sharded_zoo.py):
// each NAME.sdy.hlo is partitioned for 4 devices, run on the interpreter's 4
// devices and on the host backend's, gathered by the result shardings and
// compared with the module on one device and with JAX's outputs. The
// collectives the partitioner made are counted per model (a partitioner
// that gathers everything, or misses an all-reduce, fails), and must be as
// many of each kind as XLA's SPMD partitioner made (NAME.partitioned.hlo).
//
// XLA's own partitioned modules (NAME.partitioned.hlo, and the same as
// XLA's proto dump NAME.partitioned.pb) write their collectives' groups in
// the mesh form replica_groups=mesh['axis_0'=4,'axis_1'=1] {'axis_0'}: they
// are read, verified and run on the interpreter's and the host backend's 4
// devices against JAX's per-device outputs.
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "backend/host/run_on_host_devices.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/proto_io.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "passes/sharding/spmd_check.h"
#include "tests/jax_sharded/sharded_zoo.h"

namespace hloc {
namespace {

struct Expected {
  int64_t all_gathers, all_reduces, dynamic_slices, all_to_alls = 0;
};

Expected ExpectedFor(const std::string& model) {
  if (model == "spmd_mlp_dp") return {0, 0, 0};            // Batch rows stay local.
  if (model == "spmd_tp_matmul") return {0, 1, 0};         // One all-reduce after w2.
  if (model == "spmd_reduce") return {0, 2, 0};            // sum and max over rows.
  if (model == "spmd_reshard_chain") return {0, 0, 0, 2};  // y to rows, z to columns.
  // Gradients of the replicated weights and the loss: four sums over the batch.
  if (model == "spmd_dp_train_step") return {0, 4, 0};
  // Rows by "a" times columns by "b" locally; the second dot sums over "b".
  if (model == "spmd_mesh2x2_mlp") return {0, 1, 0};
  // Heads by "model" from q/k/v to wo: one all-reduce after wo.
  if (model == "spmd_attention_2d") return {0, 1, 0};
  // Its training step: six sums (gradients over the batch and heads, loss).
  if (model == "spmd_attention_2d_train") return {0, 6, 0};
  if (model == "spmd_embedding") return {0, 0, 0};  // Each device looks up its own ids.
  // 6 rows in 4 tiles: kept whole (x gathered once, then every device
  // computes the whole h; XLA pads instead: 2 all-gathers, 1 all-reduce).
  if (model == "spmd_uneven") return {1, 0, 0};
  return {0, 2, 0};                                 // spmd_mesh2x2: dot over "b", sum over "a".
}

enum class Runner { kInterpreter, kHost };

class SpmdZooTest : public ::testing::TestWithParam<std::tuple<std::string, Runner>> {};

TEST_P(SpmdZooTest, PartitionedModuleMatchesJax) {
  const auto& [name, runner] = GetParam();
  absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel(name);
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(model->sdy_text);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(NeedsSpmdPartitioning(**module));
  host::HostCompileReport host_report;
  DeviceRunner run = RunOnInterpreterDevices;
  if (runner == Runner::kHost) {
    run = [&](const HloModule& m, absl::Span<const std::vector<Literal>> args) {
      RunOnHostDevicesOptions options;
      options.report = &host_report;
      return RunOnHostDevices(m, args, options);
    };
  }
  absl::StatusOr<SpmdCheck> check = CheckSpmdPartition(**module, 4, run, model->global_inputs);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->mismatches, "") << name;
  ASSERT_EQ(check->actual.size(), model->global_outputs.size());
  for (size_t i = 0; i < check->actual.size(); ++i) {
    ComparisonReport cmp = CompareLiterals(model->global_outputs[i], check->actual[i]);
    EXPECT_TRUE(cmp.ok) << name << " output " << i << " vs JAX: " << cmp.ToString();
  }
  EXPECT_TRUE(check->report.replicated_ops.empty()) << check->report.ToString();
  const Expected want = ExpectedFor(name);
  EXPECT_EQ(CountOps(*check->partitioned, HloOpcode::kAllGather), want.all_gathers)
      << check->report.ToString();
  EXPECT_EQ(CountOps(*check->partitioned, HloOpcode::kAllReduce), want.all_reduces)
      << check->report.ToString();
  EXPECT_EQ(check->report.dynamic_slices, want.dynamic_slices) << check->report.ToString();
  EXPECT_EQ(CountOps(*check->partitioned, HloOpcode::kAllToAll), want.all_to_alls)
      << check->report.ToString();
  // The same collectives as XLA's own SPMD partitioner made for JAX (the
  // zoo's NAME.partitioned.hlo); not for an uneven split, which XLA pads
  // and hloc keeps whole.
  absl::StatusOr<std::unique_ptr<HloModule>> xla_module = ParseHloModule(model->partitioned_text);
  ASSERT_TRUE(xla_module.ok()) << xla_module.status();
  EXPECT_EQ(check->report.uneven_kept_whole.empty(), name != "spmd_uneven")
      << check->report.ToString();
  for (HloOpcode op : {HloOpcode::kAllGather, HloOpcode::kAllReduce, HloOpcode::kAllToAll,
                       HloOpcode::kCollectivePermute, HloOpcode::kReduceScatter}) {
    if (name == "spmd_uneven") break;
    const int64_t xla = CountOps(**xla_module, op);
    EXPECT_EQ(CountOps(*check->partitioned, op), xla)
        << name << ": " << HloOpcodeName(op) << " count differs from XLA's partitioner:\n"
        << PrintModule(*check->partitioned);
  }
  if (runner == Runner::kHost) {
    EXPECT_EQ(host_report.interpreter_calls, 0) << host_report.ToString();
  }
}

// How many collectives use the mesh form of replica groups.
int64_t MeshGroupCollectives(const HloModule& module) {
  int64_t n = 0;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) n += i->attrs().mesh_replica_groups ? 1 : 0;
  }
  return n;
}

class XlaPartitionedZooTest : public ::testing::TestWithParam<std::tuple<std::string, Runner>> {};

// XLA's partitioned module, read from its text and from its proto, runs on
// 4 devices and gives JAX's per-device outputs.
TEST_P(XlaPartitionedZooTest, RunsAndMatchesJax) {
  const auto& [name, runner] = GetParam();
  absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel(name);
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(model->partitioned_text);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);
  EXPECT_EQ((*module)->config().num_partitions, 4);
  // The proto dump holds the same module (field 93 for the mesh groups).
  ASSERT_FALSE(model->partitioned_proto.empty()) << name << ": no NAME.partitioned.pb";
  absl::StatusOr<std::unique_ptr<HloModule>> from_proto =
      ModuleFromHloProtoBytes(model->partitioned_proto);
  ASSERT_TRUE(from_proto.ok()) << from_proto.status();
  EXPECT_EQ(MeshGroupCollectives(**from_proto), MeshGroupCollectives(**module)) << name;
  PrintOptions no_metadata;
  no_metadata.print_metadata = false;
  EXPECT_EQ(PrintComputation(*(*from_proto)->entry(), no_metadata),
            PrintComputation(*(*module)->entry(), no_metadata))
      << name;

  host::HostCompileReport host_report;
  absl::StatusOr<std::vector<Literal>> results;
  if (runner == Runner::kHost) {
    RunOnHostDevicesOptions options;
    options.report = &host_report;
    results = RunOnHostDevices(**module, model->device_inputs, options);
  } else {
    results = EvaluateOnDevices(**module, model->device_inputs);
  }
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 4u);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(DeviceOutputMismatches(*model, d, (*results)[d]), "") << name << " device " << d;
  }
  if (runner == Runner::kHost) {
    EXPECT_EQ(host_report.interpreter_calls, 0) << host_report.ToString();
  }
}

// The zoo holds the mesh form of every kind JAX 0.10.2 wrote: 1-, 2-, 3-
// and 4-axis meshes with size-1 axes; all-reduce, all-gather, all-to-all.
TEST(XlaPartitionedZoo, UsesTheMeshForm) {
  int64_t mesh = 0;
  for (const std::string& name : SpmdZooModels()) {
    absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel(name);
    ASSERT_TRUE(model.ok()) << model.status();
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(model->partitioned_text);
    ASSERT_TRUE(module.ok()) << module.status();
    mesh += MeshGroupCollectives(**module);
  }
  EXPECT_EQ(mesh, 14);
}

TEST(SpmdZooMeshTest, ResultsAreDescribedOnJaxsMesh) {
  absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel("spmd_mesh2x2");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(model->sdy_text);
  ASSERT_TRUE(module.ok()) << module.status();
  SpmdMeshShardings mesh;
  SpmdPartitionOptions options;
  options.mesh_shardings = &mesh;
  ASSERT_TRUE(SpmdPartition(options).Run(**module).ok());
  EXPECT_EQ(mesh.axis_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(mesh.axis_sizes, (std::vector<int64_t>{2, 2}));
  // x is P("a", "b"), w P("b", None); the column sums are replicated.
  using Axes = std::vector<std::vector<int64_t>>;
  ASSERT_EQ(mesh.parameters.size(), 2u);
  EXPECT_EQ(mesh.parameters[0], (Axes{{0}, {1}}));
  EXPECT_EQ(mesh.parameters[1], (Axes{{1}, {}}));
  ASSERT_EQ(mesh.results.size(), 1u);
  EXPECT_EQ(mesh.results[0], (Axes{{}}));
}

// Resharding the zoo does not need (partition-id offsets, gathers of one
// dimension of a 2-D split, all-to-all inside a 4-D array, reduce-scatter, a
// bf16 dot summed in f32) on the host
// backend's 4 devices, compiled (no interpreter op).
TEST(SpmdHostTest, ReshardingRunsCompiledOnHostDevices) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule reshard_host
ENTRY main {
  x = f32[8,4] parameter(0), sharding={replicated}
  w = f32[4,6] parameter(1), sharding={replicated}
  d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}
  y = f32[8,6] parameter(2), sharding={devices=[2,2]<=[4]}
  c = f32[8,6] custom-call(y), custom_call_target="Sharding", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  s = f32[8,6] add(d, c)
  z = f32[2,8,12,3] parameter(3), sharding={devices=[1,1,4,1]<=[4]}
  t = f32[2,8,12,3] custom-call(z), custom_call_target="Sharding", sharding={devices=[1,4,1,1]<=[4]}
  a = f32[8,16] parameter(4), sharding={devices=[1,4]<=[4]}
  v = f32[16,6] parameter(5), sharding={devices=[4,1]<=[4]}
  rs = f32[8,6] dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}
  hb = bf16[8,16] parameter(6), sharding={devices=[1,4]<=[4]}
  wb = bf16[16,6] parameter(7), sharding={devices=[4,1]<=[4]}
  db = bf16[8,6] dot(hb, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[8,6], f32[2,8,12,3], f32[8,6], bf16[8,6]) tuple(s, t, rs, db)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  host::HostCompileReport host_report;
  DeviceRunner run = [&](const HloModule& m, absl::Span<const std::vector<Literal>> args) {
    RunOnHostDevicesOptions options;
    options.report = &host_report;
    return RunOnHostDevices(m, args, options);
  };
  absl::StatusOr<SpmdCheck> check = CheckSpmdPartition(**module, 4, run);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->mismatches, "");
  EXPECT_GT(check->report.dynamic_slices, 0) << check->report.ToString();
  EXPECT_GT(check->report.all_gathers, 0) << check->report.ToString();
  EXPECT_EQ(check->report.all_to_alls, 1) << check->report.ToString();
  EXPECT_EQ(check->report.reduce_scatters, 1) << check->report.ToString();
  EXPECT_EQ(host_report.interpreter_calls, 0) << host_report.ToString();
}

INSTANTIATE_TEST_SUITE_P(Zoo, XlaPartitionedZooTest,
                         ::testing::Combine(::testing::ValuesIn(SpmdZooModels()),
                                            ::testing::Values(Runner::kInterpreter, Runner::kHost)),
                         [](const auto& info) {
                           return std::get<0>(info.param) +
                                  (std::get<1>(info.param) == Runner::kHost ? "_host"
                                                                            : "_interpreter");
                         });

INSTANTIATE_TEST_SUITE_P(Zoo, SpmdZooTest,
                         ::testing::Combine(::testing::ValuesIn(SpmdZooModels()),
                                            ::testing::Values(Runner::kInterpreter, Runner::kHost)),
                         [](const auto& info) {
                           return std::get<0>(info.param) +
                                  (std::get<1>(info.param) == Runner::kHost ? "_host"
                                                                            : "_interpreter");
                         });

}  // namespace
}  // namespace hloc
