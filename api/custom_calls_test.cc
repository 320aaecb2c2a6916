// Custom-call targets registered through the C++ API (Client::
// RegisterCustomCall): called on the host (a library-call thunk, left alone
// by fusion) and by the interpreter, tuple results, errors from the
// function, unknown targets, concurrent runs and registrations, and the
// compile caches (in memory and on disk) keeping registrations apart;
// side effects nothing reads still run; executable-scoped targets
// (CompileOptions::custom_calls).
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/hloc.h"
#include "gtest/gtest.h"

namespace hloc {
namespace api {
namespace {

using xla::F32;
using xla::S32;

// The call sits between elementwise ops that fuse on the host: it must
// stay a call of its own, reading the fused producer's result.
constexpr char kScaleAndSum[] = R"(
HloModule scale_and_sum

ENTRY main {
  x = f32[8] parameter(0)
  n = s32[4] parameter(1)
  e = f32[8] exponential(x)
  l = f32[8] log(e)
  c = (f32[8], s32[]) custom-call(l, n), custom_call_target="scale_and_sum", backend_config="3"
  scaled = f32[8] get-tuple-element(c), index=0
  sum = s32[] get-tuple-element(c), index=1
  one = f32[] constant(1)
  ones = f32[8] broadcast(one), dimensions={}
  plus = f32[8] add(scaled, ones)
  ROOT out = (f32[8], s32[]) tuple(plus, sum)
}
)";

// results[0] = operands[0] * backend_config, results[1] = sum(operands[1]).
absl::Status ScaleAndSum(const CustomCallFrame& call) {
  if (call.operands.size() != 2 || call.results.size() != 2) {
    return absl::InvalidArgumentError("want 2 operands and 2 results");
  }
  float scale = 0;
  if (!absl::SimpleAtof(call.backend_config, &scale)) {
    return absl::InvalidArgumentError(absl::StrCat("bad scale '", call.backend_config, "'"));
  }
  const CustomCallArray& x = call.operands[0];
  const CustomCallArray& n = call.operands[1];
  if (x.type != F32 || n.type != S32 || call.results[0].type != F32 ||
      call.results[1].type != S32 || !call.results[1].dims.empty()) {
    return absl::InvalidArgumentError("unexpected types");
  }
  const float* in = static_cast<const float*>(x.data);
  float* out = static_cast<float*>(call.results[0].data);
  for (int64_t i = 0; i < x.element_count(); ++i) out[i] = in[i] * scale;
  int32_t total = 0;
  for (int64_t i = 0; i < n.element_count(); ++i) total += static_cast<const int32_t*>(n.data)[i];
  *static_cast<int32_t*>(call.results[1].data) = total;
  return absl::OkStatus();
}

std::shared_ptr<Client> NewClient(ClientOptions options = {}) {
  absl::StatusOr<std::shared_ptr<Client>> client = Client::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *client;
}

CompileOptions On(Backend backend) {
  CompileOptions options;
  options.backend = backend;
  return options;
}

// Runs kScaleAndSum's executable on x = 0..7, n = 1..4.
absl::StatusOr<std::vector<Buffer>> RunScaleAndSum(const Executable& exe) {
  alignas(64) float x[8];
  alignas(64) int32_t n[4] = {1, 2, 3, 4};
  for (int i = 0; i < 8; ++i) x[i] = i;
  return exe.Execute({*Buffer::CopyFromHost(F32, {8}, x), *Buffer::CopyFromHost(S32, {4}, n)});
}

void ExpectScaledBy(const std::vector<Buffer>& out, float scale) {
  ASSERT_EQ(out.size(), 2u);
  const float* plus = static_cast<const float*>(out[0].data());
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(plus[i], i * scale + 1, 1e-4) << i;
  EXPECT_EQ(*static_cast<const int32_t*>(out[1].data()), 10);
}

TEST(CustomCallsTest, RegisteredTargetRunsOnHostAndInterpreter) {
  auto client = NewClient();
  ASSERT_TRUE(client->RegisterCustomCall("scale_and_sum", ScaleAndSum).ok());
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    absl::StatusOr<std::shared_ptr<Executable>> exe =
        client->Compile(ModuleSource::Text(kScaleAndSum), On(backend));
    ASSERT_TRUE(exe.ok()) << exe.status();
    absl::StatusOr<std::vector<Buffer>> out = RunScaleAndSum(**exe);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectScaledBy(*out, 3);
    EXPECT_EQ((*exe)->stats().interpreter_ops, 0) << (*exe)->Report();
  }
}

// On two devices (arguments and results stacked) each device calls it.
TEST(CustomCallsTest, EveryDeviceCallsTheFunction) {
  auto client = NewClient();
  std::atomic<int> calls{0};
  ASSERT_TRUE(client
                  ->RegisterCustomCall("scale_and_sum",
                                       [&calls](const CustomCallFrame& call) {
                                         ++calls;
                                         return ScaleAndSum(call);
                                       })
                  .ok());
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    CompileOptions options = On(backend);
    options.devices = 2;
    absl::StatusOr<std::shared_ptr<Executable>> exe =
        client->Compile(ModuleSource::Text(kScaleAndSum), options);
    ASSERT_TRUE(exe.ok()) << exe.status();
    float x[16];
    int32_t n[8] = {1, 2, 3, 4, 10, 20, 30, 40};
    for (int i = 0; i < 16; ++i) x[i] = i % 8;
    calls = 0;
    absl::StatusOr<std::vector<Buffer>> out = (*exe)->Execute(
        {*Buffer::CopyFromHost(F32, {2, 8}, x), *Buffer::CopyFromHost(S32, {2, 4}, n)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(calls.load(), 2);
    ASSERT_EQ(out->size(), 2u);
    EXPECT_NEAR(static_cast<const float*>((*out)[0].data())[15], 7 * 3 + 1, 1e-4);
    EXPECT_EQ(static_cast<const int32_t*>((*out)[1].data())[0], 10);
    EXPECT_EQ(static_cast<const int32_t*>((*out)[1].data())[1], 100);
  }
}

TEST(CustomCallsTest, HostCallIsALibraryThunkOutsideEveryFusion) {
  auto client = NewClient();
  ASSERT_TRUE(client->RegisterCustomCall("scale_and_sum", ScaleAndSum).ok());
  auto exe = *client->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost));
  EXPECT_GE(exe->stats().library_calls, 1);
  EXPECT_TRUE(absl::StrContains(exe->Report(), "custom-call:scale_and_sum %c")) << exe->Report();
  // Fusion ran (exp/log fuse) but left the call in the entry computation.
  const std::string hlo = exe->OptimizedHloText();
  EXPECT_GE(exe->stats().fused_kernels, 1) << exe->Report();
  const size_t entry = hlo.find("ENTRY");
  ASSERT_NE(entry, std::string::npos);
  EXPECT_EQ(hlo.find("custom_call_target=\"scale_and_sum\""),
            hlo.find("custom_call_target=\"scale_and_sum\"", entry))
      << hlo;
}

TEST(CustomCallsTest, FunctionErrorsNameTheInstructionAndTarget) {
  auto client = NewClient();
  ASSERT_TRUE(client
                  ->RegisterCustomCall("scale_and_sum",
                                       [](const CustomCallFrame&) {
                                         return absl::ResourceExhaustedError("out of widgets");
                                       })
                  .ok());
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    auto exe = *client->Compile(ModuleSource::Text(kScaleAndSum), On(backend));
    absl::StatusOr<std::vector<Buffer>> out = RunScaleAndSum(*exe);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_TRUE(absl::StrContains(out.status().message(),
                                  "custom-call %c (target \"scale_and_sum\"): out of widgets"))
        << out.status();
  }
}

TEST(CustomCallsTest, UnknownTargetsAreCompileErrors) {
  auto client = NewClient();
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    absl::StatusOr<std::shared_ptr<Executable>> exe =
        client->Compile(ModuleSource::Text(kScaleAndSum), On(backend));
    ASSERT_FALSE(exe.ok());
    EXPECT_EQ(exe.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_TRUE(absl::StrContains(exe.status().message(), "%c")) << exe.status();
    EXPECT_TRUE(absl::StrContains(exe.status().message(), "\"scale_and_sum\"")) << exe.status();
  }
  // A function under another name does not cover it.
  ASSERT_TRUE(client->RegisterCustomCall("scale_and_sun", ScaleAndSum).ok());
  EXPECT_FALSE(client->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost)).ok());
}

// XlaBuilder's "xla_builder.*" calls with their decomposition attached run
// it, on the host (inlined by the expanders) as in the interpreter; the same
// target without a decomposition is unknown.
TEST(CustomCallsTest, BuilderCallsRunTheirDecomposition) {
  constexpr char kAcos[] = R"(
HloModule builder_acos
acos_impl {
  x = f32[4] parameter(0)
  one = f32[] constant(1)
  ones = f32[4] broadcast(one), dimensions={}
  l = f32[4] subtract(ones, x)
  r = f32[4] add(ones, x)
  p = f32[4] multiply(l, r)
  s = f32[4] sqrt(p)
  ROOT a = f32[4] atan2(s, x)
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT a = f32[4] custom-call(x), custom_call_target="xla_builder.math.Acos", called_computations={acos_impl}
})";
  auto client = NewClient();
  alignas(64) float x[4] = {-1.0f, -0.5f, 0.25f, 1.0f};
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    absl::StatusOr<std::shared_ptr<Executable>> exe =
        client->Compile(ModuleSource::Text(kAcos), On(backend));
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_EQ((*exe)->stats().interpreter_ops, 0);
    auto out = (*exe)->Execute({*Buffer::WrapHost(F32, {4}, x)});
    ASSERT_TRUE(out.ok()) << out.status();
    const float* a = static_cast<const float*>((*out)[0].data());
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(a[i], std::acos(x[i]), 1e-6) << i;
  }
  constexpr char kBare[] = R"(
HloModule bare_acos
ENTRY main {
  x = f32[4] parameter(0)
  ROOT a = f32[4] custom-call(x), custom_call_target="xla_builder.math.Acos"
})";
  absl::StatusOr<std::shared_ptr<Executable>> bare =
      client->Compile(ModuleSource::Text(kBare), On(Backend::kHost));
  ASSERT_FALSE(bare.ok());
  EXPECT_TRUE(absl::StrContains(bare.status().message(), "\"xla_builder.math.Acos\""))
      << bare.status();
}

// Only what the root needs runs (and side effects): a dead call to an
// unknown target without one is no error.
TEST(CustomCallsTest, DeadUnknownTargetsCompile) {
  constexpr char kDead[] = R"(
HloModule dead

ENTRY main {
  x = f32[4] parameter(0)
  unused = f32[4] custom-call(x), custom_call_target="nobody_registered_this"
  ROOT n = f32[4] negate(x)
}
)";
  auto client = NewClient();
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    absl::StatusOr<std::shared_ptr<Executable>> exe =
        client->Compile(ModuleSource::Text(kDead), On(backend));
    ASSERT_TRUE(exe.ok()) << exe.status();
    float x[4] = {1, 2, 3, 4};
    auto out = (*exe)->Execute({*Buffer::CopyFromHost(F32, {4}, x)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(static_cast<const float*>((*out)[0].data())[3], -4.0f);
  }
}

// A custom call with a side effect runs although nothing reads its result
// (jax.debug.print lowers to one), once per run, and after its operand is
// computed; an unknown side-effecting target is a compile error, not skipped.
TEST(CustomCallsTest, SideEffectsNothingReadsStillRun) {
  constexpr char kPrint[] = R"(
HloModule print

ENTRY main {
  x = f32[4] parameter(0)
  e = f32[4] exponential(x)
  printed = () custom-call(e), custom_call_target="print_it", custom_call_has_side_effect=true
  ROOT n = f32[4] negate(x)
}
)";
  auto client = NewClient();
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    absl::StatusOr<std::shared_ptr<Executable>> unknown =
        client->Compile(ModuleSource::Text(kPrint), On(backend));
    ASSERT_FALSE(unknown.ok());
    EXPECT_TRUE(absl::StrContains(unknown.status().message(), "print_it")) << unknown.status();
  }
  std::atomic<int> calls{0};
  std::atomic<float> last{0};
  ASSERT_TRUE(client
                  ->RegisterCustomCall("print_it",
                                       [&](const CustomCallFrame& call) {
                                         ++calls;
                                         last = static_cast<const float*>(
                                             call.operands[0].data)[1];
                                         return absl::OkStatus();
                                       })
                  .ok());
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    calls = 0;
    absl::StatusOr<std::shared_ptr<Executable>> exe =
        client->Compile(ModuleSource::Text(kPrint), On(backend));
    ASSERT_TRUE(exe.ok()) << exe.status();
    alignas(64) float x[4] = {0, 1, 2, 3};
    for (int run = 0; run < 3; ++run) {
      auto out = (*exe)->Execute({*Buffer::CopyFromHost(F32, {4}, x)});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(static_cast<const float*>((*out)[0].data())[3], -3.0f);
    }
    EXPECT_EQ(calls.load(), 3);
    EXPECT_NEAR(last.load(), std::exp(1.0f), 1e-5);
  }
}

// JAX's host callbacks outside hloc.jax.jit: the error says where they run.
TEST(CustomCallsTest, JaxCallbackTargetsPointToHlocJaxJit) {
  constexpr char kJaxPrint[] = R"(
HloModule jax_print

ENTRY main {
  x = f32[3] parameter(0)
  p = () custom-call(x), custom_call_target="xla_ffi_python_cpu_callback", custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI, backend_config={index = 0 : ui64}
  ROOT n = f32[3] negate(x)
}
)";
  auto client = NewClient();
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    absl::StatusOr<std::shared_ptr<Executable>> exe =
        client->Compile(ModuleSource::Text(kJaxPrint), On(backend));
    ASSERT_FALSE(exe.ok());
    EXPECT_TRUE(absl::StrContains(exe.status().message(), "hloc.jax.jit")) << exe.status();
  }
}

// CompileOptions::custom_calls: functions of one executable, over the
// client's registration of the same target, never shared through the
// cache, and kept by the executable whatever is registered later.
TEST(CustomCallsTest, ExecutableScopedTargets) {
  auto client = NewClient();
  ASSERT_TRUE(client->RegisterCustomCall("scale_and_sum", ScaleAndSum).ok());
  auto tripled = [](const CustomCallFrame& call) {
    absl::Status ok = ScaleAndSum(call);
    float* out = static_cast<float*>(call.results[0].data);
    for (int64_t i = 0; i < call.results[0].element_count(); ++i) out[i] *= 3;
    return ok;
  };
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    CompileOptions scoped = On(backend);
    scoped.custom_calls.emplace_back("scale_and_sum", tripled);
    auto own = *client->Compile(ModuleSource::Text(kScaleAndSum), scoped);
    auto own_again = *client->Compile(ModuleSource::Text(kScaleAndSum), scoped);
    auto registered = *client->Compile(ModuleSource::Text(kScaleAndSum), On(backend));
    EXPECT_NE(own.get(), own_again.get());
    EXPECT_NE(own.get(), registered.get());
    ASSERT_TRUE(client->RegisterCustomCall("scale_and_sum", tripled).ok());
    ASSERT_TRUE(client->RegisterCustomCall("scale_and_sum", ScaleAndSum).ok());
    ExpectScaledBy(*RunScaleAndSum(*own), 9);
    ExpectScaledBy(*RunScaleAndSum(*own_again), 9);
    ExpectScaledBy(*RunScaleAndSum(*registered), 3);
  }
  EXPECT_EQ(client->cache_hits(), 0);
  // A target only the executable knows; bad ones are refused by name.
  auto other = NewClient();
  CompileOptions scoped = On(Backend::kHost);
  scoped.custom_calls.emplace_back("scale_and_sum", ScaleAndSum);
  ExpectScaledBy(*RunScaleAndSum(**other->Compile(ModuleSource::Text(kScaleAndSum), scoped)), 3);
  EXPECT_FALSE(other->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost)).ok());
  scoped.custom_calls.emplace_back("TopK", ScaleAndSum);
  absl::StatusOr<std::shared_ptr<Executable>> top_k =
      other->Compile(ModuleSource::Text(kScaleAndSum), scoped);
  ASSERT_FALSE(top_k.ok());
  EXPECT_EQ(top_k.status().code(), absl::StatusCode::kInvalidArgument) << top_k.status();
  EXPECT_TRUE(absl::StrContains(top_k.status().message(), "TopK")) << top_k.status();
}

TEST(CustomCallsTest, BadRegistrationsAreRefused) {
  auto client = NewClient();
  EXPECT_EQ(client->RegisterCustomCall("", ScaleAndSum).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client->RegisterCustomCall("f", nullptr).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client->RegisterCustomCall("TopK", ScaleAndSum).code(),
            absl::StatusCode::kInvalidArgument);
}

// Executables compiled before a (re-)registration keep their function; the
// compile cache never answers a request with an executable compiled under
// other registrations.
TEST(CustomCallsTest, CompileCacheKeepsRegistrationsApart) {
  auto client = NewClient();
  // Compiled without the target: an error, and nothing cached.
  ASSERT_FALSE(client->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost)).ok());
  ASSERT_TRUE(client->RegisterCustomCall("scale_and_sum", ScaleAndSum).ok());
  auto first = *client->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost));
  EXPECT_EQ(client->cache_hits(), 0);
  auto again = *client->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost));
  EXPECT_EQ(again.get(), first.get());
  EXPECT_EQ(client->cache_hits(), 1);

  auto doubled = [](const CustomCallFrame& call) {
    absl::Status ok = ScaleAndSum(call);
    float* out = static_cast<float*>(call.results[0].data);
    for (int64_t i = 0; i < call.results[0].element_count(); ++i) out[i] *= 2;
    return ok;
  };
  ASSERT_TRUE(client->RegisterCustomCall("scale_and_sum", doubled).ok());
  auto second = *client->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost));
  EXPECT_NE(second.get(), first.get());
  EXPECT_NE(second->fingerprint(), first->fingerprint());
  EXPECT_EQ(client->cache_hits(), 1);
  ExpectScaledBy(*RunScaleAndSum(*first), 3);
  ExpectScaledBy(*RunScaleAndSum(*second), 6);

  // Registering an unrelated target changes the key too (the key covers
  // the whole table: the module's targets are not known before parsing).
  ASSERT_TRUE(client->RegisterCustomCall("unrelated", ScaleAndSum).ok());
  auto third = *client->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost));
  EXPECT_NE(third.get(), second.get());
  ExpectScaledBy(*RunScaleAndSum(*third), 6);

  // Two clients with the same registrations are still two sets of functions.
  auto other = NewClient();
  ASSERT_TRUE(other->RegisterCustomCall("scale_and_sum", ScaleAndSum).ok());
  auto theirs = *other->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost));
  EXPECT_NE(theirs->fingerprint(), first->fingerprint());
}

// The disk cache holds kernels, never the call: a second process (client)
// reusing the first's kernels calls its own function, and without one it
// fails to compile.
TEST(CustomCallsTest, DiskCacheServesKernelsNotFunctions) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/custom_call_kernels");
  std::filesystem::create_directories(dir);
  ClientOptions options;
  options.disk_cache_dir = dir;
  auto writer = NewClient(options);
  ASSERT_TRUE(writer->RegisterCustomCall("scale_and_sum", ScaleAndSum).ok());
  auto first = *writer->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost));
  EXPECT_GT(first->stats().kernels_to_disk_cache, 0) << first->stats().ToString();

  auto reader = NewClient(options);
  EXPECT_FALSE(reader->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost)).ok());
  std::atomic<int> calls{0};
  ASSERT_TRUE(reader
                  ->RegisterCustomCall("scale_and_sum",
                                       [&calls](const CustomCallFrame& call) {
                                         ++calls;
                                         return ScaleAndSum(call);
                                       })
                  .ok());
  auto second = *reader->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost));
  // Every kernel came from the disk (some during the failed compile, which
  // the client's kernel compiler then kept): none went through LLVM.
  EXPECT_GE(second->stats().kernels_from_disk_cache, 1) << second->stats().ToString();
  EXPECT_EQ(second->stats().kernels_to_disk_cache, 0) << second->stats().ToString();
  ExpectScaledBy(*RunScaleAndSum(*second), 3);
  EXPECT_EQ(calls.load(), 1);
}

// Runs on many threads while another thread registers and compiles.
TEST(CustomCallsTest, ConcurrentRunsAndRegistrations) {
  auto client = NewClient();
  std::atomic<int> calls{0};
  ASSERT_TRUE(client
                  ->RegisterCustomCall("scale_and_sum",
                                       [&calls](const CustomCallFrame& call) {
                                         ++calls;
                                         return ScaleAndSum(call);
                                       })
                  .ok());
  std::vector<std::shared_ptr<Executable>> exes = {
      *client->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kHost)),
      *client->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kInterpreter))};
  constexpr int kThreads = 6, kRuns = 20;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        absl::StatusOr<std::vector<Buffer>> out = RunScaleAndSum(*exes[t % 2]);
        if (!out.ok() || static_cast<const float*>((*out)[0].data())[7] != 22.0f) ++failures;
      }
    });
  }
  threads.emplace_back([&] {
    for (int r = 0; r < 10; ++r) {
      if (!client->RegisterCustomCall(absl::StrCat("other", r), ScaleAndSum).ok()) ++failures;
      if (!client->Compile(ModuleSource::Text(kScaleAndSum), On(Backend::kInterpreter)).ok()) {
        ++failures;
      }
    }
  });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(calls.load(), kThreads * kRuns);
}

}  // namespace
}  // namespace api
}  // namespace hloc
