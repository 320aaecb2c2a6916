// Every runnable module of XLA's test corpus ($HLOC_CORPUS_DIR) on the GPU:
// the GPU pipeline, NVPTX kernels and library calls, loaded and run twice
// (the second run replays the CUDA graph), compared with the reference
// interpreter on the same random arguments. The skip rules are the host
// corpus test's (hlo/testing/corpus_cases.h), so both count the same
// modules. A module the GPU compiler refuses (an op with no GPU path) is a
// failure naming the op. One test per corpus file, so Bazel and
// GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS shard them; each process prints its
// tally at the end. A missing corpus fails FindsTheCorpus. With no usable GPU
// every test is SKIPPED with the reason.
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backend/gpu/gpu_device_test_util.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/testing/corpus_cases.h"

namespace hloc {
namespace gpu {
namespace {

using testdata::CorpusTally;

CorpusTally& GlobalTally() {
  static CorpusTally* tally = new CorpusTally();
  return *tally;
}

void CheckModule(const std::string& id, const HloModule& module, CorpusTally* tally) {
  ++tally->modules;
  testdata::CorpusCase test_case = testdata::PrepareCorpusCase(module);
  if (!test_case.skip_reason.empty()) {
    ++tally->skipped[test_case.skip_reason];
    return;
  }
  ++tally->runnable;
  CorpusTally::Mode& counts = tally->modes["gpu (graphs)"];
  ++counts.ran;
  std::string plan;
  absl::StatusOr<Literal> actual =
      RunOnTestDevice(module, test_case.arguments, /*use_graph=*/true, &plan);
  if (!actual.ok()) {
    if (absl::IsUnimplemented(actual.status())) ++counts.notes["refused: no GPU path"];
    counts.failures.push_back(absl::StrCat(id, ": ", actual.status().ToString()));
    return;
  }
  // Ops with no GPU kernel run in the interpreter (visible in the plan).
  std::set<std::string> interpreter_ops;
  for (absl::string_view line : absl::StrSplit(plan, '\n')) {
    const size_t at = line.find(") runs in the interpreter");
    const size_t open = line.rfind('(', at);
    if (at != absl::string_view::npos && open != absl::string_view::npos) {
      interpreter_ops.insert(std::string(line.substr(open + 1, at - open - 1)));
    }
  }
  for (const std::string& op : interpreter_ops) ++counts.notes["ran " + op + " in the interpreter"];
  // Libraries and GPU math differ from the interpreter: take the looser of
  // the contraction-aware tolerance and the GPU one.
  Tolerance tolerance = test_case.tolerance;
  const Tolerance gpu = GpuTolerance(testdata::LoosestFloatType(test_case.expected.shape()));
  if (gpu.rtol.has_value() && (!tolerance.rtol || *tolerance.rtol < *gpu.rtol)) {
    tolerance.rtol = gpu.rtol;
  }
  if (gpu.atol.has_value() && (!tolerance.atol || *tolerance.atol < *gpu.atol)) {
    tolerance.atol = gpu.atol;
  }
  ComparisonReport report = CompareLiterals(test_case.expected, *actual, tolerance);
  if (!report.ok) {
    counts.failures.push_back(absl::StrCat(id, ": ", report.ToString(), "\n", plan));
    return;
  }
  ++counts.matched;
}

class GpuCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuCorpusTest, MatchesInterpreter) {
  HLOC_SKIP_WITHOUT_GPU();
  ASSERT_NE(TestDevice(), nullptr);
  CorpusTally* tally = &GlobalTally();
  for (const std::string& failure : testdata::CheckCorpusFile(
           GetParam(), tally,
           [&](const std::string& id, const HloModule& module) { CheckModule(id, module, tally); })) {
    ADD_FAILURE() << failure;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, GpuCorpusTest, ::testing::ValuesIn(testdata::CorpusFileIds()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testdata::CorpusTestName(info.param);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuCorpusTest);

// A missing corpus is a failure, not a pass over zero cases (still SKIPPED
// where there is no GPU to run it on).
TEST(GpuCorpusListTest, FindsTheCorpus) {
  HLOC_SKIP_WITHOUT_GPU();
  const char* root = std::getenv("HLOC_CORPUS_DIR");
  ASSERT_TRUE(root != nullptr && *root != '\0') << "HLOC_CORPUS_DIR is not set";
  EXPECT_FALSE(testdata::CorpusFileIds().empty()) << "no corpus files under " << root;
}

class TallyPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    if (GlobalTally().modules > 0) GlobalTally().Print("gpu corpus", std::cout);
  }
};
const ::testing::Environment* const kTallyPrinter =
    ::testing::AddGlobalTestEnvironment(new TallyPrinter);

}  // namespace
}  // namespace gpu
}  // namespace hloc
