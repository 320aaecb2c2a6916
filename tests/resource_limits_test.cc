// Absurd sizes and endless loops through the C++ API (api::Client), on the
// host backend and the interpreter: each is an error Status that says what
// was too big or ran too long, returned before any huge allocation — never
// an OOM kill, std::bad_alloc or a run that never ends. (The command line's
// side is in tools/hloc_cli_test.sh, the text parser's in
// bad_text_input_test.cc.)
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "api/hloc.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/literal.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
})";

// A temporary of `rows` x 2^20 floats (a sorted broadcast of a small
// parameter), reduced to a scalar: small arguments and result, huge inside.
std::string HugeTemporary(int64_t rows, bool from_constant) {
  const std::string source = from_constant
                                 ? "  c = f32[] constant(1)\n  b = f32[%R,1048576] broadcast(c), dimensions={}\n"
                                 : "  p = f32[1048576] parameter(0)\n  b = f32[%R,1048576] broadcast(p), dimensions={1}\n";
  std::string text = absl::StrCat("HloModule huge_temporary\n", kAdd, "\nENTRY main {\n", source,
                                  "  s = f32[%R,1048576] sort(b), dimensions={1}, to_apply=lt\n"
                                  "  z = f32[] constant(0)\n"
                                  "  ROOT r = f32[] reduce(s, z), dimensions={0,1}, to_apply=add\n}\n");
  return absl::StrReplaceAll(text, {{"%R", absl::StrCat(rows)}});
}

constexpr char kEndlessWhile[] = R"(HloModule endless
cond {
  p = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT a = s32[] add(p, one)
}
ENTRY main {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
)";

class ResourceLimitsTest : public ::testing::TestWithParam<api::Backend> {
 protected:
  void SetUp() override {
    api::ClientOptions options;
    options.num_threads = 1;
    options.compile_cache_capacity = 0;
    absl::StatusOr<std::shared_ptr<api::Client>> client = api::Client::Create(options);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }
  absl::StatusOr<std::shared_ptr<api::Executable>> Compile(const std::string& text) {
    api::CompileOptions options;
    options.backend = GetParam();
    return client_->Compile(api::ModuleSource::Text(text), options);
  }
  std::shared_ptr<api::Client> client_;
};

// 2^40 floats (4 TiB) as a temporary: refused when the run starts (the
// interpreter's literal limit, the host's arena against physical memory),
// whether the temporary comes from a parameter or a constant the pipeline
// could fold at compile time.
TEST_P(ResourceLimitsTest, HugeTemporaryIsAnError) {
  for (bool from_constant : {false, true}) {
    SCOPED_TRACE(from_constant ? "from a constant" : "from a parameter");
    absl::StatusOr<std::shared_ptr<api::Executable>> executable =
        Compile(HugeTemporary(1048576, from_constant));
    if (!executable.ok()) {  // refusing at compile time is as good
      EXPECT_TRUE(absl::IsResourceExhausted(executable.status())) << executable.status();
      continue;
    }
    std::vector<api::Buffer> arguments;
    if (!from_constant) {
      absl::StatusOr<api::Buffer> p = api::Buffer::AllocateHost(xla::F32, {1048576});
      ASSERT_TRUE(p.ok()) << p.status();
      std::memset(p->data(), 0, p->byte_size());
      arguments.push_back(*p);
    }
    absl::StatusOr<std::vector<api::Buffer>> result = (*executable)->Execute(arguments);
    ASSERT_FALSE(result.ok());
    EXPECT_TRUE(absl::IsResourceExhausted(result.status())) << result.status();
    EXPECT_TRUE(absl::StrContains(result.status().message(), "-byte arena, more than") ||
                absl::StrContains(result.status().message(), "f32[1048576,1048576]"))
        << result.status();
  }
}

// A parameter of 2^40 floats compiles (its module is fine); its argument
// cannot be made.
TEST_P(ResourceLimitsTest, HugeArgumentIsAnError) {
  absl::StatusOr<std::shared_ptr<api::Executable>> executable =
      Compile("HloModule m\nENTRY e {\n  ROOT p = f32[1099511627776] parameter(0)\n}\n");
  ASSERT_TRUE(executable.ok()) << executable.status();
  absl::StatusOr<api::Buffer> argument = api::Buffer::AllocateHost(xla::F32, {int64_t{1} << 40});
  ASSERT_FALSE(argument.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(argument.status())) << argument.status();
}

// A constant claiming 4 TiB in a few bytes of text.
TEST_P(ResourceLimitsTest, HugeConstantIsAnError) {
  absl::StatusOr<std::shared_ptr<api::Executable>> executable =
      Compile("HloModule m\nENTRY e {\n  ROOT c = f32[1099511627776] constant({...})\n}\n");
  ASSERT_FALSE(executable.ok());
  EXPECT_TRUE(absl::StrContains(executable.status().message(), "f32[1099511627776]"))
      << executable.status();
}

// A loop that never ends stops at ExecuteOptions::max_while_iterations.
TEST_P(ResourceLimitsTest, EndlessWhileStopsAtTheIterationLimit) {
  absl::StatusOr<std::shared_ptr<api::Executable>> executable = Compile(kEndlessWhile);
  ASSERT_TRUE(executable.ok()) << executable.status();
  api::ExecuteOptions options;
  options.max_while_iterations = 1000;
  absl::StatusOr<std::vector<api::Buffer>> result = (*executable)->Execute({}, options);
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::StrContains(result.status().message(), "more than 1000 iterations"))
      << result.status();
}

INSTANTIATE_TEST_SUITE_P(Backends, ResourceLimitsTest,
                         ::testing::Values(api::Backend::kHost, api::Backend::kInterpreter),
                         [](const auto& info) { return std::string(api::BackendName(info.param)); });

// Below the literal limit the memory may still not be there (a container's
// limit; here RLIMIT_AS): a Status, not std::bad_alloc ending the process.
// Each case runs in a child process whose address space is capped at 2 GiB.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HLOC_SKIP_ADDRESS_LIMIT 1  // sanitizers reserve terabytes of shadow
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HLOC_SKIP_ADDRESS_LIMIT 1
#endif
#endif

void LimitAddressSpace() {
  rlimit limit{int64_t{2} << 30, int64_t{2} << 30};
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(3);
}

TEST(OutOfMemoryTest, LiteralBelowTheLimitIsAStatus) {
#ifdef HLOC_SKIP_ADDRESS_LIMIT
  GTEST_SKIP() << "under a sanitizer";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        LimitAddressSpace();
        absl::StatusOr<Literal> literal = Literal::Create(Shape(xla::F32, {30000, 30000}));
        std::fprintf(stderr, "%s\n", literal.status().ToString().c_str());
        std::_Exit(!literal.ok() && absl::IsResourceExhausted(literal.status()) &&
                           absl::StrContains(literal.status().message(), "out of memory")
                       ? 0
                       : 1);
      },
      ::testing::ExitedWithCode(0), "out of memory");
}

TEST(OutOfMemoryTest, InterpreterScratchIsAStatus) {
#ifdef HLOC_SKIP_ADDRESS_LIMIT
  GTEST_SKIP() << "under a sanitizer";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 30000 x 30000 floats (3.6 GB, below Literal::kMaxBytes) twice.
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(HugeTemporary(900, true));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EXIT(
      {
        LimitAddressSpace();
        absl::StatusOr<Literal> result = Evaluate(**module, {});
        std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
        std::_Exit(!result.ok() && absl::IsResourceExhausted(result.status()) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "out of memory");
}

}  // namespace
}  // namespace hloc
