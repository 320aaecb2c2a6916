// The mutation run: corpus modules made wrong in thousands of deterministic
// ways (mutators.h), each taken as far as it goes through the whole front and
// back end: load (text parser; for protos both the fast reader and the
// generated messages) -> verifier -> if it verifies and is small, the host
// pipeline, the interpreter and the host backend. The properties:
//   - nothing crashes: no signal, no hang before execution;
//   - every rejection is a Status with a non-empty message.
//
// The risky part runs in forked children that take the mutants one after
// another and tell the parent over a pipe which mutant and stage they are at;
// a child that dies by a signal (or stops talking) names the mutant that
// killed it. The parent writes it to $TEST_UNDECLARED_OUTPUTS_DIR
// (crash-<kind>-<seed>.hlo/.pb with a .txt saying how it was made and where it
// died), reports the seed and starts a new child at the next mutant.
//
// Budget: at least kMinMutants per kind, more while the kind's time budget
// lasts (about a minute in all on a two-core machine).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/proto_io.h"
#include "hlo/testing/corpus.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "tests/mutation/mutators.h"

namespace hloc::mutation {
namespace {

constexpr int kMinMutants = 1000;
constexpr int kMaxMutants = 6000;
constexpr double kSecondsPerKind = 25;
// No word from a child for this long: it hangs.
constexpr int kHangMilliseconds = 30000;
// Execution guards: mutants above these are only loaded and verified.
constexpr int64_t kMaxInstructions = 300;
constexpr int64_t kMaxShapeBytes = int64_t{1} << 20;
constexpr int64_t kMaxWhileIterations = 1000;

enum class Kind { kText, kProto };
const char* KindName(Kind kind) { return kind == Kind::kText ? "text" : "proto"; }

// A module that verifies, as canonical text and as a proto.
struct Source {
  std::string id;
  std::string text;
  xla::HloModuleProto proto;
};

const std::vector<Source>& Sources() {
  static const auto* sources = [] {
    auto* out = new std::vector<Source>;
    const std::string root = testdata::CorpusDir();
    if (root.empty()) return out;
    for (const testdata::CorpusFile& file : testdata::ListCorpusFiles(root)) {
      std::vector<testdata::CorpusModule> pieces;
      if (!testdata::ParseCorpusFile(file, &pieces)) continue;
      for (testdata::CorpusModule& piece : pieces) {
        if (!piece.module.ok() || !VerifyModule(**piece.module).ok()) continue;
        if ((*piece.module)->instruction_count() > 120) continue;  // keep mutants quick
        absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(**piece.module);
        if (!proto.ok()) continue;
        out->push_back({piece.id, PrintModule(**piece.module), *std::move(proto)});
      }
    }
    return out;
  }();
  return *sources;
}

// Mutant `seed` of `kind`: source seed % sources, mutation from the seed.
Mutant MakeMutant(Kind kind, uint64_t seed) {
  const Source& source = Sources()[seed % Sources().size()];
  Mutant m = kind == Kind::kText ? MutateText(source.text, seed) : MutateProto(source.proto, seed);
  m.how = absl::StrCat(source.id, ": ", m.how);
  return m;
}

// ---- the child

class Reporter {
 public:
  explicit Reporter(int fd) : fd_(fd) {}
  void Line(const std::string& line) {
    std::string text = line + "\n";
    const char* p = text.data();
    size_t left = text.size();
    while (left > 0) {
      ssize_t n = write(fd_, p, left);
      if (n <= 0) _exit(3);
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  void Stage(uint64_t seed, const char* stage) { Line(absl::StrCat("S ", seed, " ", stage)); }
  void Result(uint64_t seed, const std::string& result) { Line(absl::StrCat("R ", seed, " ", result)); }

 private:
  int fd_;
};

bool SmallEnough(const HloModule& module) {
  if (module.instruction_count() > kMaxInstructions) return false;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      std::optional<int64_t> bytes = instruction->shape().CheckedByteSize();
      if (!bytes || *bytes > kMaxShapeBytes) return false;
    }
  }
  return true;
}

// One mutant through everything; the result word for the parent.
std::string RunMutant(Kind kind, uint64_t seed, Reporter& reporter,
                      const std::shared_ptr<host::KernelCompiler>& compiler) {
  const Mutant mutant = MakeMutant(kind, seed);
  auto rejected = [](const char* stage, const absl::Status& status) {
    return status.message().empty() ? absl::StrCat("empty-message:", stage)
                                    : absl::StrCat("rejected:", stage);
  };
  std::unique_ptr<HloModule> module;
  reporter.Stage(seed, "load");
  if (kind == Kind::kText) {
    absl::StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(mutant.bytes);
    if (!parsed.ok()) return rejected("load", parsed.status());
    module = *std::move(parsed);
  } else {
    // The generated-message path first (its result is not used further),
    // then the fast reader, as the loader reads files.
    xla::HloModuleProto proto;
    if (ParseProtoQuietly(mutant.bytes, &proto)) {
      reporter.Stage(seed, "load-generated");
      absl::StatusOr<std::unique_ptr<HloModule>> generated = ModuleFromProto(proto);
      if (!generated.ok() && generated.status().message().empty()) {
        return "empty-message:load-generated";
      }
      reporter.Stage(seed, "load");
    }
    absl::StatusOr<std::unique_ptr<HloModule>> read = ModuleFromProtoBytes(mutant.bytes);
    if (!read.ok()) return rejected("load", read.status());
    module = *std::move(read);
  }
  reporter.Stage(seed, "verify");
  absl::Status verified = VerifyModule(*module);
  if (!verified.ok()) return rejected("verify", verified);
  reporter.Stage(seed, "print");
  absl::StatusOr<std::unique_ptr<HloModule>> reparsed = ParseHloModule(PrintModule(*module));
  if (!reparsed.ok()) return "verified-but-print-does-not-parse";
  if (!SmallEnough(*module)) return "verified:too-large-to-run";

  reporter.Stage(seed, "arguments");
  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(*module, seed);
  if (!arguments.ok()) return rejected("arguments", arguments.status());
  reporter.Stage(seed, "optimize");
  std::unique_ptr<HloModule> optimized = module->Clone();
  absl::StatusOr<bool> changed = host::OptimizeForHost(*optimized);
  if (!changed.ok()) return rejected("optimize", changed.status());
  reporter.Stage(seed, "interpret");
  EvaluatorOptions evaluator_options;
  evaluator_options.num_threads = 1;
  evaluator_options.max_while_iterations = kMaxWhileIterations;
  absl::StatusOr<Literal> expected = Evaluate(*module, *arguments, evaluator_options);
  if (!expected.ok()) return rejected("interpret", expected.status());
  reporter.Stage(seed, "host");
  RunOnHostOptions host_options;
  host_options.compile.compiler = compiler;
  host_options.num_threads = 1;
  host_options.execute.max_while_iterations = kMaxWhileIterations;
  absl::StatusOr<Literal> actual = RunOnHost(*optimized, *arguments, host_options);
  if (!actual.ok()) return rejected("host", actual.status());
  return "ran";
}

[[noreturn]] void ChildMain(Kind kind, uint64_t begin, uint64_t end, int64_t crash_seed, int fd) {
  Reporter reporter(fd);
  host::KernelCompilerOptions kernel_options;
  kernel_options.optimization_level = 0;  // Compile time, not kernel speed, matters here.
  absl::StatusOr<std::shared_ptr<host::KernelCompiler>> compiler =
      host::KernelCompiler::Create(kernel_options);
  if (!compiler.ok()) _exit(4);
  for (uint64_t seed = begin; seed < end; ++seed) {
    if (static_cast<int64_t>(seed) == crash_seed) {
      reporter.Stage(seed, "injected");
      raise(SIGSEGV);
    }
    reporter.Result(seed, RunMutant(kind, seed, reporter, *compiler));
  }
  close(fd);
  _exit(0);
}

// ---- the parent

struct Tally {
  int tried = 0;
  std::map<std::string, int> results;  // "rejected:verify" -> count
  std::vector<std::string> failures;   // crashes, hangs, empty messages
};

// Writes the mutant and what happened to it to the undeclared outputs dir.
std::string SaveMutant(Kind kind, uint64_t seed, const std::string& what) {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const Mutant mutant = MakeMutant(kind, seed);
  std::string base = absl::StrCat(dir ? dir : ".", "/", what, "-", KindName(kind), "-", seed);
  std::ofstream(base + (kind == Kind::kText ? ".hlo" : ".pb"), std::ios::binary) << mutant.bytes;
  std::ofstream(base + ".txt") << what << " (" << KindName(kind) << " seed " << seed << "): "
                               << mutant.how << "\n";
  return base;
}

struct RunLimits {
  int min_mutants = kMinMutants;
  int max_mutants = kMaxMutants;
  double seconds = kSecondsPerKind;
  // The harness's own test: the child raises SIGSEGV at this seed.
  int64_t crash_seed = -1;
};

// Runs mutants [0, ...) of `kind` in children until the budget is spent.
Tally RunKind(Kind kind, const RunLimits& limits = {}) {
  Tally tally;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  uint64_t next = 0;
  const uint64_t max_mutants = static_cast<uint64_t>(limits.max_mutants);
  while (next < max_mutants &&
         (next < static_cast<uint64_t>(limits.min_mutants) || elapsed() < limits.seconds)) {
    // A batch per child; the budget is checked between batches.
    const uint64_t end = std::min<uint64_t>(next + 250, max_mutants);
    int fds[2];
    if (pipe(fds) != 0) {
      ADD_FAILURE() << "pipe failed";
      break;
    }
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      ChildMain(kind, next, end, limits.crash_seed, fds[1]);
    }
    close(fds[1]);
    std::string buffer;
    uint64_t current = next;
    std::string stage = "start";
    bool hung = false;
    for (;;) {
      pollfd p{fds[0], POLLIN, 0};
      const int ready = poll(&p, 1, kHangMilliseconds);
      if (ready == 0) {
        hung = true;
        kill(pid, SIGKILL);
        break;
      }
      char chunk[4096];
      const ssize_t n = read(fds[0], chunk, sizeof(chunk));
      if (n <= 0) break;
      buffer.append(chunk, static_cast<size_t>(n));
      size_t newline;
      while ((newline = buffer.find('\n')) != std::string::npos) {
        std::vector<std::string> words = absl::StrSplit(buffer.substr(0, newline), ' ');
        buffer.erase(0, newline + 1);
        if (words.size() != 3) continue;
        uint64_t seed = 0;
        if (!absl::SimpleAtoi(words[1], &seed)) continue;
        if (words[0] == "S") {
          current = seed;
          stage = words[2];
        } else {
          ++tally.tried;
          ++tally.results[words[2]];
          if (absl::StartsWith(words[2], "empty-message")) {
            tally.failures.push_back(absl::StrCat(words[2], " at seed ", seed, ": ",
                                                  SaveMutant(kind, seed, "empty-message")));
          }
          current = seed + 1;
          stage = "start";
        }
      }
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    const bool died = hung || WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
    if (!died) {
      next = end;
      continue;
    }
    ++tally.tried;
    const std::string what = hung ? "hang" : "crash";
    const bool executing = stage == "interpret" || stage == "host";
    const std::string line = absl::StrCat(
        what, " (", hung                   ? std::string("no progress")
        : WIFSIGNALED(status) ? absl::StrCat("signal ", WTERMSIG(status))
                              : absl::StrCat("exit ", WEXITSTATUS(status)), ") in stage ", stage,
        " at ", KindName(kind), " seed ", current, ": ", SaveMutant(kind, current, what));
    ++tally.results[absl::StrCat(what, ":", stage)];
    if (hung && executing) {
      std::printf("note: %s (a verified program may run long)\n", line.c_str());
    } else {
      tally.failures.push_back(line);
    }
    next = current + 1;
  }
  return tally;
}

void Report(Kind kind, const Tally& tally) {
  std::printf("%s mutants: %d tried\n", KindName(kind), tally.tried);
  for (const auto& [result, count] : tally.results) std::printf("  %-40s %d\n", result.c_str(), count);
  std::fflush(stdout);
}

class MutationRun : public ::testing::TestWithParam<Kind> {};

TEST_P(MutationRun, NoCrashAndEveryRejectionSaysWhy) {
  if (Sources().empty()) GTEST_SKIP() << "no corpus: set HLOC_CORPUS_DIR";
  std::printf("%zu source modules\n", Sources().size());
  const Tally tally = RunKind(GetParam());
  Report(GetParam(), tally);
  EXPECT_GE(tally.tried, kMinMutants);
  for (const std::string& failure : tally.failures) ADD_FAILURE() << failure;
}

// The harness itself: a child that dies by a signal is reported with its
// seed and stage, its mutant is saved, and the run goes on after it.
TEST(MutationHarness, ReportsACrashWithItsSeedAndGoesOn) {
  if (Sources().empty()) GTEST_SKIP() << "no corpus: set HLOC_CORPUS_DIR";
  RunLimits limits;
  limits.min_mutants = limits.max_mutants = 12;
  limits.crash_seed = 7;
  const Tally tally = RunKind(Kind::kText, limits);
  EXPECT_EQ(tally.tried, 12);
  ASSERT_EQ(tally.failures.size(), 1u);
  EXPECT_NE(tally.failures[0].find("crash (signal 11) in stage injected at text seed 7"),
            std::string::npos)
      << tally.failures[0];
  const std::string saved = tally.failures[0].substr(tally.failures[0].rfind(' ') + 1);
  EXPECT_TRUE(std::ifstream(saved + ".hlo").good()) << saved;
}

INSTANTIATE_TEST_SUITE_P(Kinds, MutationRun, ::testing::Values(Kind::kText, Kind::kProto),
                         [](const auto& info) { return std::string(KindName(info.param)); });

}  // namespace
}  // namespace hloc::mutation
