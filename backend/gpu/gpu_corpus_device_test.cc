// Every runnable module of XLA's test corpus ($HLOC_CORPUS_DIR) on the GPU:
// the GPU pipeline, NVPTX kernels and library calls, loaded and run twice
// (the second run replays the CUDA graph), compared with the reference
// interpreter on the same random arguments. The skip rules are the host
// corpus test's (hlo/testing/corpus_cases.h), so both count the same
// modules. A module the GPU compiler refuses (an op with no GPU path) is a
// failure naming the op. One test per corpus file, so Bazel and
// GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS shard them; each process prints its
// tally at the end. With no usable GPU every test is SKIPPED with the reason.
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_device_test_util.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/testing/corpus_cases.h"
#include "hlo/text_parser.h"

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
  for (bool graph : {true}) {
    CorpusTally::Mode& counts = tally->modes[graph ? "gpu (graphs)" : "gpu"];
    ++counts.ran;
    std::string plan;
    absl::StatusOr<Literal> actual = RunOnTestDevice(module, test_case.arguments, graph, &plan);
    if (!actual.ok()) {
      if (absl::IsUnimplemented(actual.status())) ++counts.notes["refused: no GPU path"];
      counts.failures.push_back(absl::StrCat(id, ": ", actual.status().ToString()));
      continue;
    }
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
      continue;
    }
    ++counts.matched;
  }
}

class GpuCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuCorpusTest, MatchesInterpreter) {
  HLOC_SKIP_WITHOUT_GPU();
  ASSERT_NE(TestDevice(), nullptr);
  const std::string path = absl::StrCat(std::getenv("HLOC_CORPUS_DIR"), "/", GetParam());
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::ostringstream text;
  text << in.rdbuf();
  ParseOptions options;
  options.filename = GetParam();
  std::vector<absl::StatusOr<std::unique_ptr<HloModule>>> modules =
      ParseEachHloModule(text.str(), options);
  CorpusTally& tally = GlobalTally();
  std::map<std::string, size_t> failures_before;
  for (const auto& [mode, counts] : tally.modes) failures_before[mode] = counts.failures.size();
  for (size_t i = 0; i < modules.size(); ++i) {
    if (!modules[i].ok()) {
      ++tally.modules;
      ++tally.skipped["does not parse"];
      continue;
    }
    CheckModule(absl::StrCat(GetParam(), "#", i), **modules[i], &tally);
  }
  for (const auto& [mode, counts] : tally.modes) {
    for (size_t f = failures_before[mode]; f < counts.failures.size(); ++f) {
      ADD_FAILURE() << counts.failures[f];
    }
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char c : info.param) name.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, GpuCorpusTest, ::testing::ValuesIn(testdata::CorpusFileIds()),
                         TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuCorpusTest);

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
