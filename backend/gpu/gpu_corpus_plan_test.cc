// Every corpus module ($HLOC_CORPUS_DIR/xla and /xla2023) that verifies
// goes the way `hloc run --backend=cuda` takes it, with no GPU: the CUDA
// pipeline (gpu_pipeline.h, expanders included), then the GPU compiler in
// plan mode with the GPU libraries assumed present, every kernel assembled
// by ptxas for sm_90. A module fails, named with its problem, when it has
// an op left to the interpreter, a kernel ptxas rejects or any other
// compile error, unless testdata/gpu_corpus_known_gaps.txt lists it with the
// reason the GPU cannot run it yet; a known gap that now compiles cleanly fails too, so the list
// cannot go stale. One test per corpus file (Bazel shards them); each
// process prints its tally. `hloc compile --target=cuda FILE` prints the
// same facts as one summary line per module.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/gpu_test_util.h"
#include "gtest/gtest.h"
#include "hlo/testing/corpus.h"
#include "hlo/testing/corpus_cases.h"
#include "hlo/verifier.h"

namespace hloc {
namespace gpu {
namespace {

using testdata::CorpusTally;

// Corpus modules the GPU cannot compile without the interpreter yet:
// testdata/gpu_corpus_known_gaps.txt, one "xla/NAME.hlo#INDEX<TAB>reason"
// a line ('#' starts a comment line). Kept in step with the notes of
// issue 16.
const std::map<std::string, std::string>& KnownGaps() {
  static const auto* gaps = [] {
    auto* gaps = new std::map<std::string, std::string>();
    const std::string path =
        testdata::RunfilesDir() + "/backend/gpu/testdata/gpu_corpus_known_gaps.txt";
    std::string text;
    if (!testdata::ReadFile(path, &text)) {
      ADD_FAILURE() << "cannot read " << path;
      return gaps;
    }
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (line.empty() || line[0] == '#') continue;
      const size_t tab = line.find('\t');
      if (tab == absl::string_view::npos) {
        ADD_FAILURE() << path << ": no tab in \"" << line << "\"";
        continue;
      }
      (*gaps)[std::string(line.substr(0, tab))] = std::string(line.substr(tab + 1));
    }
    return gaps;
  }();
  return *gaps;
}

CorpusTally& GlobalTally() {
  static CorpusTally* tally = new CorpusTally();
  return *tally;
}

// The module's problem on the GPU, or "" when it compiles with no
// interpreter op and every kernel assembled.
std::string PlanProblem(const HloModule& verified, CorpusTally::Mode* counts) {
  std::unique_ptr<HloModule> module = verified.Clone();
  absl::StatusOr<bool> optimized = OptimizeForGpu(*module, PipelineWithLibraries());
  if (!optimized.ok()) return absl::StrCat("CUDA pipeline: ", optimized.status().ToString());
  static const GpuProgramOptions* options = [] {
    auto* options = new GpuProgramOptions(AssembledSm90Options());
    options->kernel_cache = std::make_shared<GpuKernelCache>(options->codegen);
    return options;
  }();
  absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*module, *options);
  if (!program.ok()) return absl::StrCat("GPU compiler: ", program.status().ToString());
  if (absl::StrContains((*program)->executable().ThunksToString(), "cubin=0B")) {
    return "a kernel has no cubin";
  }
  const GpuCompileReport& report = (*program)->report();
  if (report.interpreter_calls == 0) return "";
  for (const auto& [opcode, name] : report.interpreter_opcodes) {
    ++counts->notes[absl::StrCat("interpreter op ", opcode)];
  }
  // "%fft.2 (fft) runs in the interpreter: no GPU kernel for fft", ...
  return absl::StrCat("interpreter ops: ", report.interpreter_calls, " [",
                      absl::StrJoin(report.interpreter_ops, "; "), "]");
}

void CheckModule(const std::string& id, const HloModule& module, CorpusTally* tally) {
  ++tally->modules;
  // Modules that do not verify are the verifier's tests: no backend sees them.
  if (!VerifyModule(module).ok()) {
    ++tally->skipped["does not verify"];
    return;
  }
  ++tally->runnable;
  CorpusTally::Mode& counts = tally->modes["gpu plan (sm_90, ptxas)"];
  ++counts.ran;
  const std::string problem = PlanProblem(module, &counts);
  auto gap = KnownGaps().find(id);
  if (gap != KnownGaps().end()) {
    ++counts.notes["known gap"];
    std::cout << "known gap " << id << ": " << gap->second << "\n  now: " << problem << "\n";
    if (problem.empty()) {
      counts.failures.push_back(
          absl::StrCat(id, ": listed as a known gap but compiles cleanly: drop it from gpu_corpus_known_gaps.txt"));
    }
    return;
  }
  if (!problem.empty()) {
    counts.failures.push_back(absl::StrCat(id, ": ", problem));
    return;
  }
  ++counts.matched;
}

class GpuCorpusPlanTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuCorpusPlanTest, NoInterpreterOpsAndPtxasAcceptsEveryKernel) {
  ASSERT_FALSE(RunfilesPtxas().empty()) << "ptxas is not in the runfiles";
  CorpusTally* tally = &GlobalTally();
  for (const std::string& failure : testdata::CheckCorpusFile(
           GetParam(), tally,
           [&](const std::string& id, const HloModule& module) { CheckModule(id, module, tally); })) {
    ADD_FAILURE() << failure;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, GpuCorpusPlanTest,
                         ::testing::ValuesIn(testdata::CorpusFileIds()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testdata::CorpusTestName(info.param);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuCorpusPlanTest);

// A missing corpus is a failure, not a pass over zero files.
TEST(GpuCorpusPlanListTest, FindsTheCorpus) {
  const char* root = std::getenv("HLOC_CORPUS_DIR");
  ASSERT_TRUE(root != nullptr && *root != '\0') << "HLOC_CORPUS_DIR is not set";
  EXPECT_GT(testdata::CorpusFileIds().size(), 100u) << "corpus files under " << root;
}

// Every known gap names a corpus file that exists.
TEST(GpuCorpusPlanListTest, KnownGapsNameCorpusFiles) {
  const std::vector<std::string> files = testdata::CorpusFileIds();
  for (const auto& [id, reason] : KnownGaps()) {
    const std::string file = id.substr(0, id.find('#'));
    EXPECT_NE(std::find(files.begin(), files.end(), file), files.end()) << id;
  }
}

class TallyPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    if (GlobalTally().modules > 0) GlobalTally().Print("gpu corpus plan", std::cout);
  }
};
const ::testing::Environment* const kTallyPrinter =
    ::testing::AddGlobalTestEnvironment(new TallyPrinter);

}  // namespace
}  // namespace gpu
}  // namespace hloc
