// Profiles through the C++ API (ExecuteOptions::profile): categories, names,
// counts, costs, shares, interpreter ops reported as such, the JSON form, and
// the backends that have no profile.
#include "api/profile.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/hloc.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace api {
namespace {

// A loop of 5 steps whose body runs a dot (a library call) and an
// elementwise kernel, an fft (the host's FFT routine, a library call) and a
// fused elementwise tail.
constexpr char kLoopDotFft[] = R"(
HloModule profiled

body {
  p = (s32[], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  m = f32[16,16] get-tuple-element(p), index=1
  d = f32[16,16] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[16,16] multiply(d, d)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[16,16]) tuple(j, s)
}

cond {
  p = (s32[], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  five = s32[] constant(5)
  ROOT lt = pred[] compare(i, five), direction=LT
}

ENTRY main {
  x = f32[16,16] parameter(0)
  c = c64[8] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[16,16]) tuple(zero, x)
  w = (s32[], f32[16,16]) while(init), condition=cond, body=body
  y = f32[16,16] get-tuple-element(w), index=1
  e = f32[16,16] exponential(y)
  f = c64[8] fft(c), fft_type=FFT, fft_length={8}
  ROOT out = (f32[16,16], c64[8]) tuple(e, f)
}
)";

class ProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Fixed peak: no calibration in tests, and checkable rates.
    setenv("HLOC_MACHINE_PEAK", "10,100", 1);
  }
};

const ProfileEntry* Find(const Profile& profile, const std::string& name) {
  for (const ProfileEntry& e : profile.entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

TEST_F(ProfileTest, HostProfileNamesCountsCostsAndShares) {
  auto client = Client::Create().value();
  CompileOptions compile;
  compile.backend = Backend::kHost;
  // Five trips would be unrolled; the test is about a loop's rows.
  compile.disabled_passes = {"while-loop-unroller"};
  absl::StatusOr<std::shared_ptr<Executable>> exe =
      client->Compile(ModuleSource::Text(kLoopDotFft), compile);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<float> x(256, 0.01f);
  std::vector<float> c(16, 0.5f);
  std::vector<Buffer> args = {Buffer::WrapHost(xla::F32, {16, 16}, x.data()).value(),
                              Buffer::WrapHost(xla::C64, {8}, c.data()).value()};
  ASSERT_TRUE((*exe)->Execute(args).ok());  // Warm-up, not recorded.
  Profile profile;
  ExecuteOptions options;
  options.profile = &profile;
  for (int run = 0; run < 3; ++run) {
    absl::StatusOr<std::vector<Buffer>> out = (*exe)->Execute(args, options);
    ASSERT_TRUE(out.ok()) << out.status();
  }
  SCOPED_TRACE(profile.ToString(100));
  EXPECT_EQ(profile.runs, 3);
  EXPECT_EQ(profile.backend, "host");
  EXPECT_GT(profile.mean_seconds, 0);
  EXPECT_LE(profile.min_seconds, profile.median_seconds);
  EXPECT_EQ(profile.peak.bandwidth_gbps, 10);
  EXPECT_EQ(profile.peak.how, "HLOC_MACHINE_PEAK");

  // The loop, with its condition and body under it, run 5 times per run.
  const ProfileEntry* loop = Find(profile, "%w");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->category, "loop");
  EXPECT_EQ(loop->calls, 1);
  EXPECT_GE(loop->seconds, loop->self_seconds);
  int body = 0, condition = 0;
  for (const ProfileEntry& e : profile.entries) {
    if (e.parent == "%w body") {
      ++body;
      EXPECT_EQ(e.calls, 5) << e.name;
      EXPECT_EQ(e.depth, 1);
    }
    if (e.parent == "%w condition") {
      ++condition;
      EXPECT_EQ(e.calls, 6) << e.name;
    }
  }
  EXPECT_GE(body, 1);
  EXPECT_GE(condition, 1);

  // The dot (outlined as an hloc.gemm call): a library call in the body with
  // its operands' and result's bytes and 2*M*N*K FLOPs.
  const ProfileEntry* dot = nullptr;
  for (const ProfileEntry& e : profile.entries) {
    if (e.category == "library" && e.parent == "%w body") dot = &e;
  }
  ASSERT_NE(dot, nullptr) << "no library call in the loop body";
  EXPECT_TRUE(dot->op == "dot" || dot->op == "call hloc.gemm") << dot->op;
  EXPECT_TRUE(absl::StrContains(dot->thunk, "onednn:")) << dot->thunk;
  EXPECT_EQ(dot->bytes, 3 * 16 * 16 * 4);
  EXPECT_EQ(dot->flops, 2.0 * 16 * 16 * 16);
  EXPECT_GT(dot->gflops, 0);
  EXPECT_NEAR(dot->gbps, dot->bytes * dot->calls / dot->seconds / 1e9, dot->gbps * 1e-9);
  // Roofline against the fixed peak (10 GB/s, 100 GFLOP/s): memory-bound here.
  EXPECT_EQ(dot->bound, "memory");
  EXPECT_NEAR(dot->of_peak, dot->gbps / 10, 1e-9);

  // The fft is the host's FFT routine, a library call; nothing runs on the
  // interpreter.
  const ProfileEntry* fft = Find(profile, "%f");
  ASSERT_NE(fft, nullptr);
  EXPECT_EQ(fft->category, "library");
  EXPECT_EQ(fft->op, "fft");
  EXPECT_EQ(fft->calls, 1);
  int interpreter_entries = 0;
  for (const ProfileEntry& e : profile.entries) interpreter_entries += e.category == "interpreter";
  EXPECT_EQ(interpreter_entries, 0);
  EXPECT_EQ((*exe)->stats().interpreter_ops, 0);

  // Own times plus the runtime's make the run; shares make 100%.
  double self = 0, share = 0;
  for (const ProfileEntry& e : profile.entries) {
    self += e.self_seconds;
    share += e.share;
  }
  EXPECT_NEAR(self + profile.runtime_seconds, profile.mean_seconds, profile.mean_seconds * 1e-6);
  double category_share = 0;
  bool has_kernel = false, has_runtime = false;
  for (const ProfileCategory& category : profile.categories) {
    category_share += category.share;
    has_kernel |= category.category == "kernel";
    has_runtime |= category.category == "runtime";
  }
  EXPECT_NEAR(share + profile.runtime_seconds / profile.mean_seconds, 1.0, 1e-6);
  EXPECT_NEAR(category_share, 1.0, 1e-6);
  EXPECT_TRUE(has_kernel);
  EXPECT_TRUE(has_runtime);
  // Sorted by own time.
  for (size_t i = 1; i < profile.entries.size(); ++i) {
    EXPECT_GE(profile.entries[i - 1].self_seconds, profile.entries[i].self_seconds);
  }

  const std::string text = profile.ToString();
  EXPECT_TRUE(absl::StrContains(text, absl::StrCat(dot->name, " (", dot->op, ")"))) << text;
  EXPECT_TRUE(absl::StrContains(text, "[%w body]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "by category:")) << text;
  const std::string json = profile.ToJson();
  EXPECT_TRUE(absl::StrContains(json, absl::StrCat("\"name\": \"", dot->name, "\""))) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"parent\": \"%w body\"")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"runs\": 3")) << json;

  // A later run without the option adds nothing.
  ASSERT_TRUE((*exe)->Execute(args).ok());
  EXPECT_EQ(profile.runs, 3);

  // The same record passed to another executable starts over.
  constexpr char kExp[] = R"(
HloModule other

ENTRY main {
  x = f32[16,16] parameter(0)
  ROOT e = f32[16,16] exponential(x)
}
)";
  auto other = client->Compile(ModuleSource::Text(kExp), compile);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE((*other)->Execute({args[0]}, options).ok());
  EXPECT_EQ(profile.runs, 1);
  EXPECT_EQ(Find(profile, "%w"), nullptr);
  EXPECT_NE(Find(profile, "%e"), nullptr);
}

TEST_F(ProfileTest, InterpreterBackendHasNoProfile) {
  auto client = Client::Create().value();
  CompileOptions compile;
  compile.backend = Backend::kInterpreter;
  auto exe = client->Compile(ModuleSource::Text(kLoopDotFft), compile);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<float> x(256, 0.01f);
  std::vector<float> c(16, 0.5f);
  std::vector<Buffer> args = {Buffer::WrapHost(xla::F32, {16, 16}, x.data()).value(),
                              Buffer::WrapHost(xla::C64, {8}, c.data()).value()};
  Profile profile;
  ExecuteOptions options;
  options.profile = &profile;
  absl::StatusOr<std::vector<Buffer>> out = (*exe)->Execute(args, options);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented) << out.status();
  EXPECT_EQ(profile.runs, 0);
}

TEST(InstructionCostTest, ConvolutionAndReduceFlops) {
  // Costs straight from instructions: 2 FLOPs per multiply-add of a
  // convolution (kernel 3x3, 4 in, 8 out features), 1 per reduced element.
  constexpr char kConv[] = R"(
HloModule conv

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[1,10,10,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  y = f32[1,8,8,8] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(y, z), dimensions={0,1,2}, to_apply=add
}
)";
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kConv);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation* entry = (*module)->entry();
  const HloInstruction* conv = nullptr;
  for (const HloInstruction* i : entry->instructions()) {
    if (i->name() == "y") conv = i;
  }
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(InstructionFlops(*conv), 2.0 * (8 * 8 * 8) * (3 * 3 * 4));
  EXPECT_EQ(InstructionBytes(*conv), 4 * (400 + 288 + 512));
  EXPECT_EQ(InstructionFlops(*entry->root()), 512);
}

}  // namespace
}  // namespace api
}  // namespace hloc
