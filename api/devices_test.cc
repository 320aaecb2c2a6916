// CompileOptions::devices: pmap-style stacking for replica_count modules and
// for one-device modules run on N devices, shardings on parameters and the
// root, and the errors (device counts that do not fit, shardings the API
// does not split, GPU). The sharded JAX zoo through this API is
// tests/jax_sharded:sharded_zoo_api_test.
#include <cmath>
#include <mutex>
#include <set>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "api/hloc.h"
#include "gtest/gtest.h"

namespace hloc {
namespace api {
namespace {

std::shared_ptr<Client> TheClient() {
  static std::shared_ptr<Client> client = *Client::Create();
  return client;
}

absl::StatusOr<std::shared_ptr<Executable>> CompileOn(const std::string& text, int devices,
                                                     Backend backend = Backend::kHost) {
  CompileOptions options;
  options.backend = backend;
  options.devices = devices;
  return TheClient()->Compile(ModuleSource::Text(text), options);
}

std::vector<float> Floats(const Buffer& buffer) {
  const float* p = static_cast<const float*>(buffer.data());
  return std::vector<float>(p, p + buffer.byte_size() / sizeof(float));
}

// Sum over replicas, plus the replica id.
constexpr char kReplicaSum[] = R"(HloModule m, replica_count=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[2] parameter(0)
  s = f32[2] all-reduce(p), replica_groups={}, to_apply=add
  id = u32[] replica-id()
  f = f32[] convert(id)
  b = f32[2] broadcast(f), dimensions={}
  ROOT r = f32[2] add(s, b)
}
)";

TEST(DevicesTest, ReplicaCountModuleStacksArgumentsAndResults) {
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    absl::StatusOr<std::shared_ptr<Executable>> exe = CompileOn(kReplicaSum, 4, backend);
    ASSERT_TRUE(exe.ok()) << exe.status();
    ASSERT_EQ((*exe)->parameters()[0].ToString(), "f32[4,2]");
    ASSERT_EQ((*exe)->results()[0].ToString(), "f32[4,2]");
    EXPECT_EQ((*exe)->stats().devices, 4);
    EXPECT_EQ((*exe)->mesh_shardings(), nullptr);  // Not a shard_map.
    std::vector<float> x = {0, 1, 10, 11, 20, 21, 30, 31};
    std::vector<Buffer> args = {*Buffer::WrapHost(xla::F32, {4, 2}, x.data())};
    absl::StatusOr<std::vector<Buffer>> out = (*exe)->Execute(args);
    ASSERT_TRUE(out.ok()) << out.status();
    // Sums 60, 64 on every replica, plus its id.
    EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{60, 64, 61, 65, 62, 66, 63, 67}));
    // Same executable from two threads at once (runs are serialized).
    std::vector<std::vector<float>> seen(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        absl::StatusOr<std::vector<Buffer>> r = (*exe)->Execute(args);
        if (r.ok()) seen[t] = Floats((*r)[0]);
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(seen[0], Floats((*out)[0]));
    EXPECT_EQ(seen[1], Floats((*out)[0]));
  }
}

TEST(DevicesTest, OneDeviceModuleOnFourDevicesRunsAsReplicas) {
  absl::StatusOr<std::shared_ptr<Executable>> exe = CompileOn(R"(HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  ROOT n = f32[3] negate(p)
}
)", 4);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->parameters()[0].ToString(), "f32[4,3]");
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i);
  absl::StatusOr<std::vector<Buffer>> out =
      (*exe)->Execute({*Buffer::WrapHost(xla::F32, {4, 3}, x.data())});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0])[11], -11.0f);
}

// Parameters split by their shardings; the root's sharding gathers.
TEST(DevicesTest, PartitionedModuleUsesParameterAndRootShardings) {
  absl::StatusOr<std::shared_ptr<Executable>> exe = CompileOn(R"(HloModule m, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,2] parameter(0), sharding={devices=[2,1]<=[2]}
  y = f32[2] parameter(1), sharding={replicated}
  z = f32[1,2] parameter(2), sharding={devices=[2,1]1,0}
  f0 = f32[] constant(0)
  r = f32[2] reduce(x, f0), dimensions={0}, to_apply=add
  s = f32[2] all-reduce(r), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  t = f32[2] add(s, y)
  zr = f32[2] reshape(z)
  ROOT out = (f32[2], f32[2]) tuple(t, zr), sharding={{replicated}, {devices=[2]1,0}}
}
)", 2);
  ASSERT_TRUE(exe.ok()) << exe.status();
  ASSERT_EQ((*exe)->parameters().size(), 3u);
  EXPECT_EQ((*exe)->parameters()[0].ToString(), "f32[4,2]");
  EXPECT_EQ((*exe)->parameters()[1].ToString(), "f32[2]");
  EXPECT_EQ((*exe)->parameters()[2].ToString(), "f32[2,2]");
  EXPECT_EQ((*exe)->results()[0].ToString(), "f32[2]");
  EXPECT_EQ((*exe)->results()[1].ToString(), "f32[4]");
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8}, y = {100, 200}, z = {1, 2, 3, 4};
  absl::StatusOr<std::vector<Buffer>> out = (*exe)->Execute(
      {*Buffer::WrapHost(xla::F32, {4, 2}, x.data()), *Buffer::WrapHost(xla::F32, {2}, y.data()),
       *Buffer::WrapHost(xla::F32, {2, 2}, z.data())});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{116, 220}));
  // z's row 0 lives on device 1, row 1 on device 0; the result's first half
  // comes from device 1: rows go back where they came from.
  EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{1, 2, 3, 4}));
}

TEST(DevicesTest, ErrorsAreStatusesNamingTheProblem) {
  // A device count the module does not fit: the caller's, not a compile error.
  absl::StatusOr<std::shared_ptr<Executable>> two = CompileOn(kReplicaSum, 2);
  EXPECT_EQ(two.status().code(), absl::StatusCode::kInvalidArgument) << two.status();
  EXPECT_TRUE(absl::StrContains(two.status().message(), "devices=2")) << two.status();
  EXPECT_TRUE(absl::StrContains(two.status().message(), "replica_count=4")) << two.status();
  EXPECT_EQ(CompileOn(kReplicaSum, -1).status().code(), absl::StatusCode::kInvalidArgument);
  // 0: as the module says.
  absl::StatusOr<std::shared_ptr<Executable>> zero = CompileOn(kReplicaSum, 0);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ((*zero)->stats().devices, 4);
  // A sharding the API does not split.
  absl::StatusOr<std::shared_ptr<Executable>> manual = CompileOn(R"(HloModule m, num_partitions=2
ENTRY e {
  ROOT p = f32[2] parameter(0), sharding={manual}
}
)", 2);
  EXPECT_EQ(manual.status().code(), absl::StatusCode::kUnimplemented) << manual.status();
  EXPECT_TRUE(absl::StrContains(manual.status().message(), "%p")) << manual.status();
  absl::StatusOr<std::shared_ptr<Executable>> both =
      CompileOn("HloModule m, replica_count=2, num_partitions=2\nENTRY e { ROOT p = f32[2] "
                "parameter(0) }\n", 4);
  EXPECT_EQ(both.status().code(), absl::StatusCode::kUnimplemented) << both.status();
  // Bounded dynamic shapes run on one device only.
  absl::StatusOr<std::shared_ptr<Executable>> dynamic = CompileOn(R"(HloModule m
ENTRY e {
  p = f32[<=8] parameter(0)
  ROOT n = f32[<=8] negate(p)
}
)", 2);
  EXPECT_EQ(dynamic.status().code(), absl::StatusCode::kUnimplemented) << dynamic.status();
  EXPECT_TRUE(absl::StrContains(dynamic.status().message(), "bounded dynamic shapes"))
      << dynamic.status();
  // Shardings on a module that is not partitioned go through the SPMD
  // partitioner (no silent replicas): global arrays in and out.
  absl::StatusOr<std::shared_ptr<Executable>> global = CompileOn(R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0), sharding={devices=[4]<=[4]}
  ROOT n = f32[8] negate(x)
}
)", 4);
  ASSERT_TRUE(global.ok()) << global.status();
  EXPECT_TRUE(absl::StrContains((*global)->Report(), "spmd-partition on 4 devices"))
      << (*global)->Report();
  std::vector<float> g = {1, 2, 3, 4, 5, 6, 7, 8};
  absl::StatusOr<std::vector<Buffer>> negated =
      (*global)->Execute({*Buffer::WrapHost(xla::F32, {8}, g.data())});
  ASSERT_TRUE(negated.ok()) << negated.status();
  ASSERT_EQ(negated->size(), 1u);
  ASSERT_EQ((*negated)[0].dims(), std::vector<int64_t>{8});
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(static_cast<const float*>((*negated)[0].data())[i], -g[i]) << i;
  }
  // What it cannot split evenly it refuses, naming the value.
  absl::StatusOr<std::shared_ptr<Executable>> uneven = CompileOn(R"(HloModule m
ENTRY e {
  x = f32[6] parameter(0), sharding={devices=[4]<=[4]}
  ROOT n = f32[6] negate(x)
}
)", 4);
  EXPECT_EQ(uneven.status().code(), absl::StatusCode::kUnimplemented) << uneven.status();
  EXPECT_TRUE(absl::StrContains(uneven.status().message(), "uneven")) << uneven.status();
  // Global arguments of the wrong shape are argument errors.
  absl::StatusOr<std::shared_ptr<Executable>> exe = CompileOn(kReplicaSum, 4);
  ASSERT_TRUE(exe.ok());
  std::vector<float> x(2);
  absl::StatusOr<std::vector<Buffer>> out =
      (*exe)->Execute({*Buffer::WrapHost(xla::F32, {2}, x.data())});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "f32[4,2]")) << out.status();
}

// The interpreter's devices run on threads the executable keeps: a custom
// call sees, run after run, device 0 on the caller's thread and each other
// device on a thread of its own that does not change.
TEST(DevicesTest, InterpreterDevicesKeepTheirThreadsAcrossRuns) {
  absl::StatusOr<std::shared_ptr<Client>> client = Client::Create();
  ASSERT_TRUE(client.ok()) << client.status();
  std::mutex mu;
  std::vector<std::thread::id> ids(3);
  ASSERT_TRUE((*client)
                  ->RegisterCustomCall("record_thread",
                                       [&](const CustomCallFrame& frame) -> absl::Status {
                                         const uint32_t d =
                                             *static_cast<const uint32_t*>(frame.operands[0].data);
                                         std::lock_guard<std::mutex> lock(mu);
                                         ids[d] = std::this_thread::get_id();
                                         *static_cast<uint32_t*>(frame.results[0].data) = d;
                                         return absl::OkStatus();
                                       })
                  .ok());
  CompileOptions options;
  options.backend = Backend::kInterpreter;
  options.devices = 3;
  absl::StatusOr<std::shared_ptr<Executable>> exe = (*client)->Compile(ModuleSource::Text(R"(
HloModule m, replica_count=3
ENTRY e {
  p = f32[2] parameter(0)
  id = u32[] replica-id()
  ROOT r = u32[] custom-call(id), custom_call_target="record_thread"
}
)"),
                                                                      options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<float> x(6, 1.0f);
  std::vector<Buffer> args = {*Buffer::WrapHost(xla::F32, {3, 2}, x.data())};
  std::vector<std::thread::id> first;
  for (int run = 0; run < 3; ++run) {
    absl::StatusOr<std::vector<Buffer>> out = (*exe)->Execute(args);
    ASSERT_TRUE(out.ok()) << out.status();
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(ids[0], std::this_thread::get_id());
    EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), 3u);
    if (run == 0) first = ids;
    EXPECT_EQ(ids, first) << "run " << run;
  }
}

// The NCCL watchdog's timeout (cuda collectives): ClientOptions, else
// $HLOC_NCCL_TIMEOUT, which must be seconds.
TEST(DevicesTest, CollectiveTimeoutFromOptionsOrEnvironment) {
  setenv("HLOC_NCCL_TIMEOUT", "soon", 1);
  absl::StatusOr<std::shared_ptr<Client>> bad = Client::Create();
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "HLOC_NCCL_TIMEOUT=soon")) << bad.status();
  ClientOptions options;
  options.collective_timeout_seconds = 5;  // Set: the environment is not read.
  EXPECT_TRUE(Client::Create(options).ok());
  setenv("HLOC_NCCL_TIMEOUT", "2.5", 1);
  EXPECT_TRUE(Client::Create().ok());
  unsetenv("HLOC_NCCL_TIMEOUT");
  options.collective_timeout_seconds = std::nan("");
  bad = Client::Create(options);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "NaN")) << bad.status();
}

}  // namespace
}  // namespace api
}  // namespace hloc
