// Sixteen threads compile and run through one api::Client at once: the same
// modules requested from many threads (shared in-memory cache entries, a
// cache small enough to evict while others use it, a shared disk cache of
// kernels) and each result compared byte for byte with the one the same
// module gave on a single thread before. Meant to run under ThreadSanitizer
// too (--config=tsan).
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/hloc.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_printer.h"
#include "tests/random/random_module.h"

namespace hloc::random_hlo {
namespace {

constexpr int kThreads = 16;
constexpr int kModules = 12;
constexpr int kRoundsPerThread = 2;

struct Case {
  std::string text;
  std::vector<Literal> arguments;
  std::vector<std::string> expected;  // bytes of each result leaf
};

absl::StatusOr<std::vector<api::Buffer>> CompileAndRun(api::Client& client, const Case& c) {
  api::CompileOptions options;
  options.backend = api::Backend::kHost;
  absl::StatusOr<std::shared_ptr<api::Executable>> executable =
      client.Compile(api::ModuleSource::Text(c.text), options);
  if (!executable.ok()) return executable.status();
  std::vector<api::Buffer> arguments;
  for (const Literal& literal : c.arguments) {
    absl::StatusOr<api::Buffer> buffer = api::Buffer::CopyFromHost(
        literal.shape().element_type(), literal.shape().dimensions(), literal.raw());
    if (!buffer.ok()) return buffer.status();
    arguments.push_back(*std::move(buffer));
  }
  return (*executable)->Execute(arguments);
}

std::vector<std::string> Leaves(const std::vector<api::Buffer>& buffers) {
  std::vector<std::string> out;
  for (const api::Buffer& buffer : buffers) {
    out.emplace_back(static_cast<const char*>(buffer.data()), static_cast<size_t>(buffer.byte_size()));
  }
  return out;
}

TEST(ConcurrencyTest, SixteenThreadsCompileAndRunThroughOneClient) {
  api::ClientOptions client_options;
  client_options.num_threads = 2;
  client_options.compile_cache_capacity = 4;  // evicts while other threads run
  const char* tmp = std::getenv("TEST_TMPDIR");
  client_options.disk_cache_dir = absl::StrCat(tmp ? tmp : "/tmp", "/hloc-kernel-cache");
  absl::StatusOr<std::shared_ptr<api::Client>> client = api::Client::Create(client_options);
  ASSERT_TRUE(client.ok()) << client.status();

  // The expected results: each module once, on this thread.
  std::vector<Case> cases;
  for (uint64_t seed = 1; cases.size() < kModules; ++seed) {
    std::unique_ptr<HloModule> module = GenerateRandomModule(seed);
    Case c;
    c.text = PrintModule(*module);
    absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(*module, seed);
    ASSERT_TRUE(arguments.ok()) << arguments.status();
    c.arguments = *std::move(arguments);
    absl::StatusOr<std::vector<api::Buffer>> result = CompileAndRun(**client, c);
    ASSERT_TRUE(result.ok()) << result.status() << "\n" << c.text;
    c.expected = Leaves(*result);
    cases.push_back(std::move(c));
  }

  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRoundsPerThread; ++round) {
        for (int i = 0; i < kModules; ++i) {
          const Case& c = cases[(i + t) % kModules];
          absl::StatusOr<std::vector<api::Buffer>> result = CompileAndRun(**client, c);
          if (!result.ok()) {
            failures[t] = result.status().ToString();
            return;
          }
          if (Leaves(*result) != c.expected) {
            failures[t] = absl::StrCat("module ", (i + t) % kModules, " gave other bytes");
            return;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
  std::printf("concurrency: %d threads x %d runs, %lld compile cache hits\n", kThreads,
              kRoundsPerThread * kModules, static_cast<long long>((*client)->cache_hits()));
  EXPECT_GT((*client)->cache_hits(), 0);
}

}  // namespace
}  // namespace hloc::random_hlo
