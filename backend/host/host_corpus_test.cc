// Every runnable module of XLA's test corpus ($HLOC_CORPUS_DIR/xla and
// /xla2023) on the host backend, in each pipeline mode (fusion on, fusion
// off, fallback fusion; see host_pipeline_modes.h), compared with the
// reference interpreter on the same random arguments.
//
// A module is skipped, with the reason counted, when it does not verify,
// uses collectives, async ops, infeed/outfeed or other side effects the
// host cannot run, draws random numbers (rng: nondeterministic), has
// arguments or results too large for a test, or when the interpreter itself
// cannot run it or takes too long (the interpreter defines the right
// answer). Ops with no host kernel run in the interpreter (interpreter ops); the
// test counts the modules that needed it, per opcode. One test per corpus
// file, so Bazel shards them;
// each shard prints its tally per mode at the end.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_pipeline_modes.h"
#include "backend/host/host_test_util.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/testing/corpus_cases.h"
#include "hlo/verifier.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace {

using host_testing::PipelineMode;

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
  static runtime::ThreadPool* pool = new runtime::ThreadPool(2);
  for (PipelineMode mode : host_testing::AllPipelineModes()) {
    CorpusTally::Mode& counts = tally->modes[host_testing::PipelineModeName(mode)];
    ++counts.ran;
    const std::string where = absl::StrCat(id, " [", host_testing::PipelineModeName(mode), "]");
    absl::StatusOr<std::unique_ptr<HloModule>> prepared = host_testing::PrepareForMode(module, mode);
    if (!prepared.ok()) {
      counts.failures.push_back(absl::StrCat(where, ": pipeline: ", prepared.status().ToString()));
      continue;
    }
    host::HostCompileOptions options;
    options.compiler = host_testing::SharedCompiler();
    options.interpreter = HostInterpreter();
    absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
        host::CompileForHost(**prepared, options);
    if (!program.ok()) {
      counts.failures.push_back(absl::StrCat(where, ": compile: ", program.status().ToString()));
      continue;
    }
    std::set<std::string> opcodes;
    for (const auto& [opcode, name] : (*program)->report().interpreter_opcodes) {
      opcodes.insert(opcode);
    }
    for (const std::string& op : opcodes) {
      ++counts.notes[absl::StrCat("ran ", op, " in the interpreter")];
    }
    runtime::ExecuteOptions execute;
    execute.max_while_iterations = testdata::CorpusCaseLimits().max_while_iterations;
    execute.min_parallel_cost = 64;  // Split small kernels too: exercises the pool.
    absl::StatusOr<Literal> actual = (*program)->Execute(test_case.arguments, pool, execute);
    if (!actual.ok()) {
      counts.failures.push_back(absl::StrCat(where, ": run: ", actual.status().ToString()));
      continue;
    }
    ComparisonReport report = CompareLiterals(test_case.expected, *actual, test_case.tolerance);
    if (!report.ok) {
      counts.failures.push_back(absl::StrCat(where, ": ", report.ToString()));
      continue;
    }
    ++counts.matched;
  }
}

class HostCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HostCorpusTest, MatchesInterpreter) {
  CorpusTally* tally = &GlobalTally();
  for (const std::string& failure : testdata::CheckCorpusFile(
           GetParam(), tally,
           [&](const std::string& id, const HloModule& module) { CheckModule(id, module, tally); })) {
    ADD_FAILURE() << failure;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, HostCorpusTest, ::testing::ValuesIn(testdata::CorpusFileIds()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testdata::CorpusTestName(info.param);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HostCorpusTest);

TEST(HostCorpusListTest, FindsCorpus) {
  if (std::getenv("HLOC_CORPUS_DIR") == nullptr) GTEST_SKIP() << "HLOC_CORPUS_DIR is not set";
  EXPECT_GE(testdata::CorpusFileIds().size(), 100u) << std::getenv("HLOC_CORPUS_DIR");
}

// Prints this shard's tally once all tests ran.
class TallyPrinter : public ::testing::Environment {
 public:
  void TearDown() override { GlobalTally().Print("host corpus", std::cout); }
};
const ::testing::Environment* const kTallyPrinter =
    ::testing::AddGlobalTestEnvironment(new TallyPrinter);

}  // namespace
}  // namespace hloc
