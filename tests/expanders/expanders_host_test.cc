// The expanders end to end on the host backend, with no interpreter to fall
// back on. For every hand-written case of passes/expanders/
// expander_test_cases.cc and every module of XLA's corpus that uses an op
// the expanders rewrite:
//
//   interpreter(original)  ==  interpreter(expanded)      (within tolerance)
//                          ==  host(OptimizeForHost(original))
//
// and the host program reports no interpreter call (hand-written cases,
// the linear-algebra custom calls "Qr", "ProductOfElementaryHouseholder-
// Reflectors" and "Eigh" among them:
// compiled with no fallback at all; corpus modules, which may use other ops
// without a host kernel: none of the expanded ops falls back). fft is not
// expanded on the host but kept for its FFT routine (backend/host/
// fft_library.h): its cases check that routine against the interpreter.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/host/fft_library.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/linalg_custom_calls.h"
#include "hlo/testing/corpus_cases.h"
#include "hlo/text_parser.h"
#include "passes/expanders/expander_test_cases.h"
#include "passes/expanders/expanders.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace {

using expanders::CountEverywhere;
using expanders::ExpanderCase;

constexpr HloOpcode kExpandedOps[] = {
    HloOpcode::kBatchNormTraining, HloOpcode::kBatchNormInference, HloOpcode::kBatchNormGrad,
    HloOpcode::kSelectAndScatter, HloOpcode::kCholesky, HloOpcode::kTriangularSolve,
    HloOpcode::kRngBitGenerator, HloOpcode::kScan,
};

// An op of kExpandedOps, or a linear-algebra custom call ("Qr", "Eigh", ...).
bool UsesExpandedOp(const HloModule& module) {
  for (HloOpcode op : kExpandedOps) {
    if (CountEverywhere(module, op) > 0) return true;
  }
  bool linalg = false;
  for (const HloComputation* computation : module.computations()) {
    computation->ForEachInstruction(
        [&](const HloInstruction* i) { linalg |= LinalgCustomCallOf(*i).has_value(); });
  }
  return linalg;
}

// Compiles `module` (already through the host pipeline) and runs it.
absl::StatusOr<Literal> RunCompiled(const HloModule& module, const std::vector<Literal>& arguments,
                                    bool allow_fallback, host::HostCompileReport* report) {
  host::HostCompileOptions options;
  if (allow_fallback) options.fallback = InterpreterFallback();
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program = host::CompileForHost(module, options);
  if (!program.ok()) return program.status();
  *report = (*program)->report();
  runtime::ThreadPool pool(2);
  runtime::ExecuteOptions execute;
  execute.min_parallel_cost = 64;  // Split small kernels too.
  return (*program)->Execute(arguments, &pool, execute);
}

class HandWrittenCaseTest : public ::testing::TestWithParam<ExpanderCase> {};

TEST_P(HandWrittenCaseTest, HostMatchesInterpreterWithoutFallback) {
  const ExpanderCase& c = GetParam();
  // Interpreter before and after expansion.
  absl::StatusOr<std::unique_ptr<HloModule>> expanded = expanders::ExpandAndCompare(c);
  ASSERT_TRUE(expanded.ok()) << expanded.status();

  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(**module, 1);
  ASSERT_TRUE(arguments.ok()) << arguments.status();
  absl::StatusOr<Literal> expected = Evaluate(**module, *arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();

  // The host pipeline expands; with and without fusion.
  for (bool fusion : {true, false}) {
    SCOPED_TRACE(fusion ? "fusion" : "no fusion");
    std::unique_ptr<HloModule> optimized = (*module)->Clone();
    host::HostPipelineOptions pipeline;
    pipeline.fusion = fusion;
    absl::StatusOr<bool> changed = host::OptimizeForHost(*optimized, pipeline);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(UsesExpandedOp(*optimized));
    host::HostCompileReport report;
    absl::StatusOr<Literal> actual = RunCompiled(*optimized, *arguments, false, &report);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_EQ(report.interpreter_calls, 0);
    ComparisonReport comparison = CompareLiterals(*expected, *actual, c.tolerance);
    EXPECT_TRUE(comparison.ok) << comparison.ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, HandWrittenCaseTest,
                         ::testing::ValuesIn(expanders::ExpanderCases()),
                         [](const ::testing::TestParamInfo<ExpanderCase>& info) {
                           return info.param.name;
                         });

// The host FFT routine's vector code, one kind per x86 vector width, picked
// by what the CPU has: every kind this CPU has gives the widest kind's
// results, bit for bit, on every fft case (the arithmetic per lane is the
// same in each). Kinds the CPU lacks are reported and skipped.
TEST(HostFftRoutine, EveryVectorWidthGivesTheSameBits) {
  std::vector<std::string> kinds;
  for (const char* kind : {"avx512", "avx2", "baseline"}) {
    if (host::SetFftVectorCodeForTesting(kind)) {
      kinds.push_back(kind);
    } else {
      std::cout << "fft vector code " << kind << ": SKIPPED (this CPU lacks it)\n";
    }
  }
  ASSERT_FALSE(kinds.empty());
  int compared = 0;
  for (const ExpanderCase& c : expanders::ExpanderCases()) {
    if (c.opcode != HloOpcode::kFft) continue;
    SCOPED_TRACE(c.name);
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(c.hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(**module, 2);
    ASSERT_TRUE(arguments.ok()) << arguments.status();
    ASSERT_TRUE(host::OptimizeForHost(**module).ok());
    std::optional<Literal> widest;
    for (const std::string& kind : kinds) {
      SCOPED_TRACE(kind);
      ASSERT_TRUE(host::SetFftVectorCodeForTesting(kind));
      host::HostCompileReport report;
      absl::StatusOr<Literal> result = RunCompiled(**module, *arguments, false, &report);
      ASSERT_TRUE(result.ok()) << result.status();
      if (!widest.has_value()) {
        widest = std::move(*result);
        continue;
      }
      ComparisonReport comparison = CompareLiterals(*widest, *result, Tolerance{0.0, 0.0});
      EXPECT_TRUE(comparison.ok) << comparison.ToString();
      ++compared;
    }
  }
  host::SetFftVectorCodeForTesting(kinds.front());
  std::cout << compared << " fft results compared across " << kinds.size() << " vector kinds\n";
}

// Corpus files with at least one module that uses an expanded op.
std::vector<std::string> CorpusFilesWithExpandedOps() {
  std::vector<std::string> files;
  for (const std::string& id : testdata::CorpusFileIds()) {
    const std::string path = absl::StrCat(std::getenv("HLOC_CORPUS_DIR"), "/", id);
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) continue;
    std::string text;
    char buffer[1 << 16];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) text.append(buffer, n);
    std::fclose(f);
    for (const char* op : {"batch-norm-training(", "batch-norm-inference(", "batch-norm-grad(",
                           "select-and-scatter(", "cholesky(", "triangular-solve(",
                           "rng-bit-generator(", "fft(", "custom_call_target=\"Qr\"",
                           "custom_call_target=\"Eigh\"",
                           "custom_call_target=\"ProductOfElementaryHouseholderReflectors\""}) {
      if (absl::StrContains(text, op)) {
        files.push_back(id);
        break;
      }
    }
  }
  return files;
}

class CorpusExpansionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusExpansionTest, HostMatchesInterpreter) {
  testdata::CorpusTally tally;
  int checked = 0;
  std::vector<std::string> failures = testdata::CheckCorpusFile(
      GetParam(), &tally, [&](const std::string& id, const HloModule& module) {
        if (!UsesExpandedOp(module)) return;
        testdata::CorpusCase test_case = testdata::PrepareCorpusCase(module);
        if (!test_case.skip_reason.empty()) {
          std::cout << id << ": skipped (" << test_case.skip_reason << ")\n";
          return;
        }
        std::vector<std::string>& fail = tally.modes["expanded"].failures;
        ++checked;
        // Interpreter after expansion alone.
        std::unique_ptr<HloModule> expanded = module.Clone();
        absl::StatusOr<bool> changed = RunExpanders(*expanded);
        if (!changed.ok()) {
          fail.push_back(absl::StrCat(id, ": expanders: ", changed.status().ToString()));
          return;
        }
        absl::StatusOr<Literal> interpreted = Evaluate(*expanded, test_case.arguments);
        if (!interpreted.ok()) {
          fail.push_back(absl::StrCat(id, ": interpreter: ", interpreted.status().ToString()));
          return;
        }
        ComparisonReport report = CompareLiterals(test_case.expected, *interpreted, test_case.tolerance);
        if (!report.ok) fail.push_back(absl::StrCat(id, ": interpreter after expansion: ", report.ToString()));
        // The host through its pipeline.
        std::unique_ptr<HloModule> optimized = module.Clone();
        absl::StatusOr<bool> optimized_ok = host::OptimizeForHost(*optimized);
        if (!optimized_ok.ok()) {
          fail.push_back(absl::StrCat(id, ": host pipeline: ", optimized_ok.status().ToString()));
          return;
        }
        host::HostCompileReport compile_report;
        absl::StatusOr<Literal> actual =
            RunCompiled(*optimized, test_case.arguments, true, &compile_report);
        if (!actual.ok()) {
          fail.push_back(absl::StrCat(id, ": host: ", actual.status().ToString()));
          return;
        }
        for (const std::string& op : compile_report.fallback_ops) {
          for (HloOpcode expanded_op : kExpandedOps) {
            if (absl::StartsWith(op, absl::StrCat(HloOpcodeName(expanded_op), " "))) {
              fail.push_back(absl::StrCat(id, ": still runs through the interpreter: ", op));
            }
          }
        }
        std::cout << id << ": " << compile_report.interpreter_calls << " interpreter calls left ("
                  << absl::StrJoin(compile_report.fallback_ops, ", ") << ")\n";
        report = CompareLiterals(test_case.expected, *actual, test_case.tolerance);
        if (!report.ok) fail.push_back(absl::StrCat(id, ": host: ", report.ToString()));
      });
  for (const std::string& failure : failures) ADD_FAILURE() << failure;
  std::cout << GetParam() << ": " << checked << " modules with expanded ops checked\n";
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusExpansionTest,
                         ::testing::ValuesIn(CorpusFilesWithExpandedOps()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testdata::CorpusTestName(info.param);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusExpansionTest);

}  // namespace
}  // namespace hloc
