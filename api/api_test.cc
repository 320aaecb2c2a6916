// The C++ embedding API: compile and run on every backend, errors for bad
// modules and arguments, the compile cache, donation, the disk kernel cache,
// many threads on one executable, and the JAX zoo against XLA's results.
#include "api/hloc.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/loader.h"

namespace hloc {
namespace api {
namespace {

using xla::BF16;
using xla::F32;
using xla::S32;
using xla::TUPLE;

constexpr char kAdd[] = R"(
HloModule add

ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  sum = f32[8] add(x, y)
  ROOT out = (f32[8]) tuple(sum)
}
)";

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

TEST(ApiTest, AddsOnEveryBackendWithoutCopyingArguments) {
  auto client = NewClient();
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    absl::StatusOr<std::shared_ptr<Executable>> exe =
        client->Compile(ModuleSource::Text(kAdd), On(backend));
    ASSERT_TRUE(exe.ok()) << exe.status();
    ASSERT_EQ((*exe)->parameters().size(), 2u);
    ASSERT_EQ((*exe)->results().size(), 1u);
    EXPECT_EQ((*exe)->results()[0].ToString(), "f32[8]");
    alignas(64) float x[8], y[8];
    for (int i = 0; i < 8; ++i) x[i] = i, y[i] = 10 * i;
    std::vector<Buffer> args = {*Buffer::WrapHost(F32, {8}, x), *Buffer::WrapHost(F32, {8}, y)};
    EXPECT_EQ(args[0].data(), x);
    absl::StatusOr<std::vector<Buffer>> out = (*exe)->Execute(args);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    const float* sum = static_cast<const float*>((*out)[0].data());
    for (int i = 0; i < 8; ++i) EXPECT_EQ(sum[i], 11 * i);
    EXPECT_EQ((*exe)->stats().interpreter_ops, 0);
    EXPECT_FALSE((*exe)->OptimizedHloText().empty());
  }
}

TEST(ApiTest, CudaIsAClearErrorOrRuns) {
  auto client = NewClient();
  absl::StatusOr<std::shared_ptr<Executable>> exe =
      client->Compile(ModuleSource::Text(kAdd), On(Backend::kCuda));
  if (!BackendUnavailableReason(Backend::kCuda).empty()) {
    ASSERT_FALSE(exe.ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(exe.status())) << exe.status();
    EXPECT_TRUE(absl::StrContains(exe.status().message(), "cuda")) << exe.status();
    GTEST_SKIP() << "no GPU: " << BackendUnavailableReason(Backend::kCuda);
  }
  ASSERT_TRUE(exe.ok()) << exe.status();
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  auto out = (*exe)->Execute({*Buffer::WrapHost(F32, {8}, x), *Buffer::WrapHost(F32, {8}, y)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(static_cast<const float*>((*out)[0].data())[7], 9.0f);
}

TEST(ApiTest, BadModulesAreCompileErrorsWithLocations) {
  auto client = NewClient();
  // Does not parse: the message names line and column.
  auto parse = client->Compile(ModuleSource::Text("HloModule m\nENTRY e {\n  x = f32[ parameter(0)\n}"));
  ASSERT_FALSE(parse.ok());
  EXPECT_TRUE(absl::StrContains(parse.status().message(), ":3:")) << parse.status();
  // Parses, fails verification: the verifier's located message.
  auto verify = client->Compile(ModuleSource::Text(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT y = f32[5] negate(x)
})"));
  ASSERT_FALSE(verify.ok());
  EXPECT_TRUE(absl::StrContains(verify.status().message(), "module fails verification"))
      << verify.status();
  EXPECT_TRUE(absl::StrContains(verify.status().message(), "%y")) << verify.status();
  // Recursion through calls is rejected before any pass runs.
  auto recursive = client->Compile(ModuleSource::Text(R"(
HloModule m
f {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=f
}
ENTRY e {
  x = f32[] parameter(0)
  ROOT y = f32[] call(x), to_apply=f
})"));
  EXPECT_FALSE(recursive.ok());
  // Not a module at all.
  EXPECT_FALSE(client->Compile(ModuleSource::Bytes(std::string("\x08\x96\x01\xff\xff", 5))).ok());
  EXPECT_FALSE(client->Compile(ModuleSource::Bytes("")).ok());
  EXPECT_FALSE(client->Compile(ModuleSource::File("/nonexistent/module.hlo")).ok());
  // Bad options.
  CompileOptions pipeline;
  pipeline.pipeline = "fastest";
  EXPECT_TRUE(absl::IsInvalidArgument(client->Compile(ModuleSource::Text(kAdd), pipeline).status()));
  EXPECT_FALSE(ParseBackend("tpu").ok());
}

// A result of bounded dynamic shape comes back at its runtime sizes
// (results() give the bounds); a size check that fails is the error naming
// the instruction; ExecuteInto, which takes results of fixed shape, refuses
// it. CUDA where there is a GPU.
TEST(ApiTest, DynamicResultComesBackAtItsRuntimeSizes) {
  auto client = NewClient();
  constexpr char kDynamicRoot[] = R"(
HloModule dynamic_root
ENTRY e {
  p = f32[4,4] parameter(0)
  n = s32[] parameter(1)
  ROOT d = f32[4,<=4] set-dimension-size(p, n), dimensions={1}
})";
  for (Backend backend : {Backend::kHost, Backend::kCuda, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    auto exe = client->Compile(ModuleSource::Text(kDynamicRoot), On(backend));
    if (backend == Backend::kCuda && !BackendUnavailableReason(backend).empty()) {
      ASSERT_FALSE(exe.ok());
      EXPECT_TRUE(absl::IsFailedPrecondition(exe.status())) << exe.status();
      continue;
    }
    ASSERT_TRUE(exe.ok()) << exe.status();
    ASSERT_EQ((*exe)->results().size(), 1u);
    EXPECT_EQ((*exe)->results()[0].ToString(), "f32[4,4]");
    EXPECT_EQ((*exe)->result_shape().ToString(false), "f32[4,<=4]");
    alignas(64) float p[16];
    for (int i = 0; i < 16; ++i) p[i] = i;
    auto pb = *Buffer::WrapHost(F32, {4, 4}, p);
    for (int32_t n : {0, 2, 4}) {
      SCOPED_TRACE(n);
      alignas(64) int32_t size = n;
      auto out = (*exe)->Execute({pb, *Buffer::WrapHost(S32, {}, &size)});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->size(), 1u);
      EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{4, n}));
      const float* d = static_cast<const float*>((*out)[0].data());
      for (int r = 0; r < 4 && n > 0; ++r) EXPECT_EQ(d[r * n + n - 1], 4 * r + n - 1);
    }
    alignas(64) int32_t five = 5;
    auto past = (*exe)->Execute({pb, *Buffer::WrapHost(S32, {}, &five)});
    ASSERT_FALSE(past.ok());
    EXPECT_TRUE(absl::StrContains(past.status().message(), "instruction %d (set-dimension-size)"))
        << past.status();
    alignas(64) float into[16];
    absl::Status refused = (*exe)->ExecuteInto({pb, *Buffer::WrapHost(S32, {}, &five)},
                                               {*Buffer::WrapHost(F32, {4, 4}, into)});
    EXPECT_TRUE(absl::StrContains(refused.message(), "ExecuteInto takes results of fixed shape"))
        << refused;
  }
  auto static_sizes = client->Compile(ModuleSource::Text(R"(
HloModule static_sizes
ENTRY e {
  p = f32[4] parameter(0)
  g = s32[] get-dimension-size(p), dimensions={0}
  ROOT c = f32[4] convert(p)
})"), On(Backend::kHost));
  EXPECT_TRUE(static_sizes.ok()) << static_sizes.status();
}

// Bounded dynamic entry parameters with a static result: an argument of
// any size up to the bound along the dynamic dimension, padded to it by the
// code HostProgram and GpuProgram share; past the bound, a clear error.
// CUDA where there is a GPU.
TEST(ApiTest, DynamicParameterTakesAnySizeUpToItsBound) {
  constexpr char kScaledSum[] = R"(
HloModule dynamic_sum
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[<=8] parameter(0)
  w = f32[3] parameter(1)
  z = f32[] constant(0)
  s = f32[] reduce(p, z), dimensions={0}, to_apply=add
  g = s32[] get-dimension-size(p), dimensions={0}
  c = f32[] convert(g)
  b = f32[3] broadcast(s), dimensions={}
  m = f32[3] multiply(b, w)
  cb = f32[3] broadcast(c), dimensions={}
  ROOT out = (f32[3], f32[3]) tuple(m, cb)
})";
  auto client = NewClient();
  for (Backend backend : {Backend::kHost, Backend::kCuda, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    auto exe = client->Compile(ModuleSource::Text(kScaledSum), On(backend));
    if (backend == Backend::kCuda && !BackendUnavailableReason(backend).empty()) {
      ASSERT_FALSE(exe.ok());
      EXPECT_TRUE(absl::IsFailedPrecondition(exe.status())) << exe.status();
      continue;
    }
    ASSERT_TRUE(exe.ok()) << exe.status();
    ASSERT_EQ((*exe)->parameters().size(), 2u);
    EXPECT_EQ((*exe)->parameters()[0].ToString(), "f32[8]");
    ASSERT_EQ((*exe)->results().size(), 2u);
    alignas(64) float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    alignas(64) float w[4] = {1, 10, 100, 0};
    auto wb = *Buffer::WrapHost(F32, {3}, w);
    for (int n : {0, 1, 5, 8}) {
      SCOPED_TRACE(n);
      const float sum = n * (n + 1) / 2.0f;
      auto out = (*exe)->Execute({*Buffer::WrapHost(F32, {n}, x), wb});
      ASSERT_TRUE(out.ok()) << out.status();
      const float* m = static_cast<const float*>((*out)[0].data());
      const float* size = static_cast<const float*>((*out)[1].data());
      EXPECT_EQ(m[0], sum);
      EXPECT_EQ(m[2], 100 * sum);
      EXPECT_EQ(size[1], n);
      alignas(64) float into_m[3] = {}, into_size[3] = {};
      ASSERT_TRUE((*exe)
                      ->ExecuteInto({*Buffer::WrapHost(F32, {n}, x), wb},
                                    {*Buffer::WrapHost(F32, {3}, into_m),
                                     *Buffer::WrapHost(F32, {3}, into_size)})
                      .ok());
      EXPECT_EQ(into_m[1], 10 * sum);
      EXPECT_EQ(into_size[2], n);
    }
    auto past = (*exe)->Execute({*Buffer::WrapHost(F32, {9}, x), wb});
    ASSERT_FALSE(past.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(past.status()));
    EXPECT_TRUE(absl::StrContains(past.status().message(),
                                  "argument 0 (parameter %p) dimension 0 has size 9, above "
                                  "its bound 8"))
        << past.status();
    auto static_dim = (*exe)->Execute({*Buffer::WrapHost(F32, {2}, x),
                                       *Buffer::WrapHost(F32, {4}, w)});
    EXPECT_TRUE(absl::StrContains(static_dim.status().message(), "argument 1 has shape f32[4]"))
        << static_dim.status();
    auto rank = (*exe)->Execute({*Buffer::WrapHost(F32, {2, 1}, x), wb});
    EXPECT_TRUE(absl::StrContains(rank.status().message(), "argument 0 has shape f32[2,1]"))
        << rank.status();
  }
  // A dynamic parameter through to a dynamic result: the argument's size.
  auto through = client->Compile(ModuleSource::Text(R"(
HloModule dynamic_through
ENTRY e {
  p = f32[<=8] parameter(0)
  ROOT n = f32[<=8] negate(p)
})"), On(Backend::kHost));
  ASSERT_TRUE(through.ok()) << through.status();
  alignas(64) float three[3] = {1, -2, 3};
  auto negated = (*through)->Execute({*Buffer::WrapHost(F32, {3}, three)});
  ASSERT_TRUE(negated.ok()) << negated.status();
  EXPECT_EQ((*negated)[0].dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(static_cast<const float*>((*negated)[0].data())[1], 2.0f);
}

// The "fallback" pipeline (fusions recorded, not emitted as one kernel)
// pads bounded dynamic shapes too: every pipeline takes a module the
// verifier accepts.
TEST(ApiTest, DynamicShapesRunUnderEveryPipeline) {
  constexpr char kDoubled[] = R"(
HloModule doubled
ENTRY e {
  p = f32[<=8] parameter(0)
  two = f32[] constant(2)
  b = f32[<=8] broadcast(two), dimensions={}
  ROOT y = f32[<=8] multiply(p, b)
})";
  auto client = NewClient();
  for (const char* pipeline : {"default", "no-fusion", "fallback", "none"}) {
    for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
      SCOPED_TRACE(absl::StrCat(pipeline, " on ", BackendName(backend)));
      CompileOptions options = On(backend);
      options.pipeline = pipeline;
      auto exe = client->Compile(ModuleSource::Text(kDoubled), options);
      if (backend == Backend::kHost && std::string(pipeline) == "none") {
        // No pipeline at all: the host compiler meets the dynamic shape and
        // says so, by name.
        if (!exe.ok()) {
          EXPECT_TRUE(absl::StrContains(exe.status().message(), "dynamic")) << exe.status();
          continue;
        }
      }
      ASSERT_TRUE(exe.ok()) << exe.status();
      alignas(64) float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
      for (int n : {0, 3, 8}) {
        auto out = (*exe)->Execute({*Buffer::WrapHost(F32, {n}, x)});
        ASSERT_TRUE(out.ok()) << out.status();
        ASSERT_EQ((*out)[0].dims(), std::vector<int64_t>{n});
        for (int i = 0; i < n; ++i) {
          EXPECT_EQ(static_cast<const float*>((*out)[0].data())[i], 2 * x[i]);
        }
      }
    }
  }
}

TEST(ApiTest, BadArgumentsNameTheArgument) {
  auto client = NewClient();
  auto exe = *client->Compile(ModuleSource::Text(kAdd), On(Backend::kHost));
  alignas(64) float x[9] = {};
  alignas(64) int32_t n[8] = {};
  auto f8 = *Buffer::WrapHost(F32, {8}, x);
  auto count = exe->Execute({f8});
  EXPECT_TRUE(absl::IsInvalidArgument(count.status()));
  EXPECT_TRUE(absl::StrContains(count.status().message(), "takes 2 arguments, got 1"));
  auto type = exe->Execute({f8, *Buffer::WrapHost(S32, {8}, n)});
  EXPECT_TRUE(absl::StrContains(type.status().message(), "argument 1 has element type s32"))
      << type.status();
  auto shape = exe->Execute({*Buffer::WrapHost(F32, {9}, x), f8});
  EXPECT_TRUE(absl::StrContains(shape.status().message(), "argument 0 has shape f32[9]"))
      << shape.status();
  EXPECT_FALSE(exe->Execute({f8, Buffer()}).ok());
  // Misaligned, negative, absurd and typeless buffers never get made.
  EXPECT_FALSE(Buffer::WrapHost(F32, {2}, reinterpret_cast<char*>(x) + 1).ok());
  EXPECT_FALSE(Buffer::WrapHost(F32, {-1}, x).ok());
  EXPECT_FALSE(Buffer::AllocateHost(F32, {int64_t{1} << 40, int64_t{1} << 40}).ok());
  EXPECT_FALSE(Buffer::AllocateHost(TUPLE, {2}).ok());
  EXPECT_FALSE(Buffer::WrapHost(F32, {8}, nullptr).ok());
  ExecuteOptions donate;
  donate.donated_arguments = {5};
  EXPECT_FALSE(exe->Execute({f8, f8}, donate).ok());
  // Donating memory another argument reads is refused.
  donate.donated_arguments = {0};
  EXPECT_FALSE(exe->Execute({f8, f8}, donate).ok());
}

TEST(ApiTest, CompileCacheSharesExecutables) {
  auto client = NewClient();
  auto a = *client->Compile(ModuleSource::Text(kAdd), On(Backend::kHost));
  auto b = *client->Compile(ModuleSource::Text(kAdd), On(Backend::kHost));
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(client->cache_hits(), 1);
  auto c = *client->Compile(ModuleSource::Text(kAdd), On(Backend::kInterpreter));
  EXPECT_NE(a.get(), c.get());
  ClientOptions no_cache;
  no_cache.compile_cache_capacity = 0;
  auto uncached = NewClient(no_cache);
  auto d = *uncached->Compile(ModuleSource::Text(kAdd), On(Backend::kHost));
  auto e = *uncached->Compile(ModuleSource::Text(kAdd), On(Backend::kHost));
  EXPECT_NE(d.get(), e.get());
}

// The dot reads w before anything writes the result, so the result may live
// in w's memory.
constexpr char kAliased[] = R"(
HloModule step, input_output_alias={ {0}: (0, {}, may-alias) }

ENTRY main {
  w = f32[32,32] parameter(0)
  g = f32[32,32] parameter(1)
  d = f32[32,32] dot(w, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  next = f32[32,32] add(d, g)
  ROOT out = (f32[32,32]) tuple(next)
}
)";

TEST(ApiTest, DonatedArgumentHoldsTheAliasedResult) {
  auto client = NewClient();
  auto exe = *client->Compile(ModuleSource::Text(kAliased), On(Backend::kHost));
  // w = 3, g = 2: every element of w.g is 32 * 6, plus 2.
  std::vector<float> w(1024, 3.0f), g(1024, 2.0f);
  auto wb = *Buffer::WrapHost(F32, {32, 32}, w.data());
  auto gb = *Buffer::WrapHost(F32, {32, 32}, g.data());
  auto kept = *exe->Execute({wb, gb});
  EXPECT_NE(kept[0].data(), w.data());
  EXPECT_EQ(w[0], 3.0f);
  ExecuteOptions donate;
  donate.donated_arguments = {0};
  auto donated = *exe->Execute({wb, gb}, donate);
  EXPECT_EQ(donated[0].data(), w.data()) << exe->Report();
  EXPECT_EQ(w[5], 194.0f);
  EXPECT_EQ(static_cast<const float*>(kept[0].data())[5], 194.0f);
}

TEST(ApiTest, ExecuteIntoWritesTheCallersResultMemory) {
  auto client = NewClient();
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    auto exe = *client->Compile(ModuleSource::Text(kAliased), On(backend));
    // The host program computes the result in w's memory when w is donated;
    // the interpreter always writes fresh results.
    const bool aliases = backend == Backend::kHost;
    EXPECT_EQ(exe->AliasedArgument(0), aliases ? 0 : -1);
    EXPECT_EQ(exe->AliasedArgument(1), -1);
    std::vector<float> w(1024, 3.0f), g(1024, 2.0f), out(1024, -1.0f);
    auto wb = *Buffer::WrapHost(F32, {32, 32}, w.data());
    auto gb = *Buffer::WrapHost(F32, {32, 32}, g.data());
    auto ob = *Buffer::WrapHost(F32, {32, 32}, out.data());
    ASSERT_TRUE(exe->ExecuteInto({wb, gb}, {ob}).ok());
    EXPECT_EQ(out[0], 194.0f);
    EXPECT_EQ(out[1023], 194.0f);
    EXPECT_EQ(w[0], 3.0f);

    // Wrong count, shape or type of result buffers; results overlapping an
    // argument that is not donated, or each other.
    auto small = *Buffer::WrapHost(F32, {32, 16}, out.data());
    auto ints = *Buffer::WrapHost(S32, {32, 32}, out.data());
    EXPECT_TRUE(absl::StrContains(exe->ExecuteInto({wb, gb}, {}).message(), "1 results, got 0"));
    EXPECT_TRUE(absl::StrContains(exe->ExecuteInto({wb, gb}, {small}).message(), "result buffer 0 is f32[32,16]"));
    EXPECT_TRUE(absl::StrContains(exe->ExecuteInto({wb, gb}, {ints}).message(), "result buffer 0 is s32[32,32]"));
    absl::Status into_w = exe->ExecuteInto({wb, gb}, {wb});
    EXPECT_TRUE(absl::StrContains(into_w.message(), "shares memory with argument 0")) << into_w;
    absl::Status into_g = exe->ExecuteInto({wb, gb}, {gb});
    EXPECT_TRUE(absl::StrContains(into_g.message(), "shares memory with argument 1")) << into_g;

    // The donated, aliased argument may hold its result.
    ExecuteOptions donate;
    donate.donated_arguments = {0};
    absl::Status donated = exe->ExecuteInto({wb, gb}, {wb}, donate);
    if (!aliases) {
      EXPECT_TRUE(absl::StrContains(donated.message(), "shares memory with argument 0"));
      continue;
    }
    ASSERT_TRUE(donated.ok()) << donated;
    EXPECT_EQ(w[0], 194.0f);
    EXPECT_EQ(w[1023], 194.0f);
  }
}

TEST(ApiTest, ExecuteOnPointersRunsInTheCallersMemory) {
  auto client = NewClient();
  for (Backend backend : {Backend::kHost, Backend::kInterpreter}) {
    SCOPED_TRACE(BackendName(backend));
    auto exe = *client->Compile(ModuleSource::Text(kAliased), On(backend));
    ASSERT_TRUE(exe->RunsOnPointers());
    std::vector<float> w(1024, 3.0f), g(1024, 2.0f), out(1024, -1.0f);
    ASSERT_TRUE(exe->ExecuteOnPointers({w.data(), g.data()}, {out.data()}).ok());
    EXPECT_EQ(out[0], 194.0f);
    EXPECT_EQ(out[1023], 194.0f);
    EXPECT_EQ(w[0], 3.0f);
    absl::Status counts = exe->ExecuteOnPointers({w.data()}, {out.data()});
    EXPECT_TRUE(absl::StrContains(counts.message(), "takes 2 arguments and 1 results, got 1 and 1"))
        << counts;
    // The aliased argument's memory holds the result where the program
    // computes it there.
    if (exe->AliasedArgument(0) == 0) {
      ASSERT_TRUE(exe->ExecuteOnPointers({w.data(), g.data()}, {w.data()}).ok());
      EXPECT_EQ(w[7], 194.0f);
    }
  }
  // Executables that pad arguments to their bounds refuse, naming ExecuteInto.
  constexpr char kDynamicParameter[] = R"(
HloModule dynamic_parameter
ENTRY e {
  p = f32[<=8] parameter(0)
  ROOT n = f32[<=8] negate(p)
})";
  auto dynamic = *client->Compile(ModuleSource::Text(kDynamicParameter), On(Backend::kHost));
  EXPECT_FALSE(dynamic->RunsOnPointers());
  float p[8] = {}, r[8] = {};
  absl::Status refused = dynamic->ExecuteOnPointers({p}, {r});
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "use ExecuteInto")) << refused;
}

// The legacy rng op compiles to kernels (RngExpander), not interpreter
// calls; its draws stay in [a, b).
TEST(ApiTest, RngRunsWithoutTheInterpreter) {
  constexpr char kRng[] = R"(
HloModule r
ENTRY main {
  a = f32[] constant(-1)
  b = f32[] constant(1)
  ROOT u = f32[1000] rng(a, b), distribution=rng_uniform
})";
  auto client = NewClient();
  auto exe = *client->Compile(ModuleSource::Text(kRng), On(Backend::kHost));
  EXPECT_EQ(exe->stats().interpreter_ops, 0) << exe->Report();
  auto out = exe->Execute({});
  ASSERT_TRUE(out.ok()) << out.status();
  const float* u = static_cast<const float*>((*out)[0].data());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_GE(u[i], -1.0f);
    ASSERT_LT(u[i], 1.0f);
  }
}

TEST(ApiTest, WrappedMemoryIsReleasedOnce) {
  int releases = 0;
  float x[4] = {1, 2, 3, 4};
  {
    auto buffer = *Buffer::WrapHost(F32, {4}, x, [&] { ++releases; });
    Buffer copy = buffer;
    EXPECT_EQ(releases, 0);
  }
  EXPECT_EQ(releases, 1);
}

// One executable, eight threads, each running it many times on its own
// inputs, large enough that kernels split over the pool.
TEST(ApiTest, EightThreadsShareOneExecutable) {
  constexpr char kModule[] = R"(
HloModule mlp

ENTRY main {
  x = f32[64,256] parameter(0)
  w = f32[256,256] parameter(1)
  d = f32[64,256] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[64,256] tanh(d)
  z = f32[] constant(0)
  s = f32[64] reduce(t, z), dimensions={1}, to_apply=add
  ROOT out = (f32[64,256], f32[64]) tuple(t, s)
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
)";
  ClientOptions options;
  options.num_threads = 3;
  auto client = NewClient(options);
  auto exe = *client->Compile(ModuleSource::Text(kModule), On(Backend::kHost));
  auto reference = *client->Compile(ModuleSource::Text(kModule), On(Backend::kInterpreter));
  std::vector<std::thread> threads;
  std::vector<std::string> failures(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> x(64 * 256), w(256 * 256);
      for (size_t i = 0; i < x.size(); ++i) x[i] = 0.001f * ((i * (t + 3)) % 97);
      for (size_t i = 0; i < w.size(); ++i) w[i] = 0.001f * ((i * 7 + t) % 89) - 0.04f;
      std::vector<Buffer> args = {*Buffer::WrapHost(F32, {64, 256}, x.data()),
                                  *Buffer::WrapHost(F32, {256, 256}, w.data())};
      auto expected = reference->Execute(args);
      if (!expected.ok()) {
        failures[t] = std::string(expected.status().message());
        return;
      }
      for (int run = 0; run < 20; ++run) {
        auto out = exe->Execute(args);
        if (!out.ok()) {
          failures[t] = std::string(out.status().message());
          return;
        }
        const float* a = static_cast<const float*>((*out)[1].data());
        const float* e = static_cast<const float*>((*expected)[1].data());
        for (int i = 0; i < 64; ++i) {
          if (std::abs(a[i] - e[i]) > 1e-3f * (1 + std::abs(e[i]))) {
            failures[t] = absl::StrCat("run ", run, " row ", i, ": ", a[i], " vs ", e[i]);
            return;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST(ApiTest, DiskCacheLetsASecondClientSkipLlvm) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/kernels");
  std::filesystem::create_directories(dir);
  ClientOptions options;
  options.disk_cache_dir = dir;
  auto first = *NewClient(options)->Compile(ModuleSource::Text(kAdd), On(Backend::kHost));
  EXPECT_GT(first->stats().kernels_to_disk_cache, 0) << first->stats().ToString();
  EXPECT_EQ(first->stats().kernels_from_disk_cache, 0);
  auto second = *NewClient(options)->Compile(ModuleSource::Text(kAdd), On(Backend::kHost));
  EXPECT_EQ(second->stats().kernels_to_disk_cache, 0);
  EXPECT_EQ(second->stats().kernels_from_disk_cache, first->stats().kernels_to_disk_cache);
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  auto out = *second->Execute({*Buffer::WrapHost(F32, {8}, x), *Buffer::WrapHost(F32, {8}, x)});
  EXPECT_EQ(static_cast<const float*>(out[0].data())[7], 16.0f);
  // A corrupt entry is recompiled, not trusted.
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::filesystem::resize_file(entry.path(), 40);
  }
  auto third = *NewClient(options)->Compile(ModuleSource::Text(kAdd), On(Backend::kHost));
  EXPECT_EQ(third->stats().kernels_from_disk_cache, 0);
  out = *third->Execute({*Buffer::WrapHost(F32, {8}, x), *Buffer::WrapHost(F32, {8}, x)});
  EXPECT_EQ(static_cast<const float*>(out[0].data())[7], 16.0f);
}

// Leaves of a literal, depth-first (the API's result order).
void Leaves(const Literal& literal, std::vector<const Literal*>* out) {
  if (literal.shape().IsTuple()) {
    for (const Literal& element : literal.tuple_elements()) Leaves(element, out);
  } else if (literal.shape().IsArray()) {
    out->push_back(&literal);
  }
}

// Every JAX zoo model: its recorded arguments through the API on the host,
// compared with XLA:CPU's recorded result.
TEST(ApiTest, JaxZooMatchesXla) {
  auto client = NewClient();
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator("tests/jax/zoo")) {
    const std::string path = entry.path().string();
    if (!absl::EndsWith(path, ".snapshot.pb")) continue;
    SCOPED_TRACE(path);
    absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    ASSERT_TRUE(snapshot->result.has_value());
    auto exe = client->Compile(ModuleSource::Module(*snapshot->module), On(Backend::kHost));
    ASSERT_TRUE(exe.ok()) << exe.status();
    std::vector<const Literal*> argument_leaves;
    for (const Literal& argument : snapshot->arguments) Leaves(argument, &argument_leaves);
    std::vector<Buffer> args;
    for (const Literal* leaf : argument_leaves) {
      args.push_back(*Buffer::WrapHost(leaf->shape().element_type(), leaf->shape().dimensions(),
                                       const_cast<uint8_t*>(leaf->raw())));
    }
    auto out = (*exe)->Execute(args);
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<const Literal*> expected;
    Leaves(*snapshot->result, &expected);
    ASSERT_EQ(expected.size(), out->size());
    for (size_t j = 0; j < expected.size(); ++j) {
      Literal actual(expected[j]->shape());
      std::memcpy(actual.mutable_raw(), (*out)[j].data(), actual.size_bytes());
      Tolerance tolerance;
      if (expected[j]->shape().element_type() == BF16) tolerance = {2e-2, 2e-2};
      ComparisonReport report = CompareLiterals(*expected[j], actual, tolerance);
      EXPECT_TRUE(report.ok) << "result " << j << ": " << report.ToString();
    }
    ++models;
  }
  EXPECT_GE(models, 16);
}

}  // namespace
}  // namespace api
}  // namespace hloc
