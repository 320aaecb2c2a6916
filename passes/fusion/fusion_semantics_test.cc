// Fusion must not change what a module computes. For every JAX zoo module
// (tests/jax/zoo/*.before.txt, and XLA's own fused *.after.txt, which
// exercises fusing fused modules) and every corpus module the interpreter can
// run ($HLOC_CORPUS_DIR/xla and /xla2023), this test evaluates the module on
// random arguments, runs each fusion pipeline on a copy (verifying after
// every pass), evaluates again and compares. It also checks that a second run
// of the pipeline changes nothing.
#include <chrono>
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/test_arguments.h"
#include "hlo/testing/corpus.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "passes/fusion/fusion_pipeline.h"

namespace hloc {
namespace {

struct Variant {
  const char* name;
  FusionPipelineOptions options;
};

std::vector<Variant> Variants() {
  std::vector<Variant> variants(3);
  variants[0].name = "producer-consumer+multi-output+horizontal";
  variants[1].name = "post-dominator+multi-output+horizontal";
  variants[1].options.grouping = FusionGrouping::kPostDominator;
  variants[2].name = "fallback";
  variants[2].options.fallback = true;
  return variants;
}

struct Tally {
  int modules = 0, runnable = 0, compared = 0, fused = 0, too_slow = 0;
  std::map<std::string, std::string> failures;
};

// Everything about one module; failures go into `tally`.
void CheckModule(const std::string& id, std::unique_ptr<HloModule> module, Tally* tally) {
  ++tally->modules;
  const auto start = std::chrono::steady_clock::now();
  struct SlowReport {
    const std::string& id;
    std::chrono::steady_clock::time_point start;
    ~SlowReport() {
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (seconds > 2) std::cout << "  slow: " << id << " " << seconds << " s\n";
    }
  } slow_report{id, start};
  std::vector<Literal> arguments;
  if (!RandomArgumentsForTest(*module, 7, &arguments).empty()) return;
  const EvaluatorOptions evaluator_options = TestEvaluatorOptions();
  const auto evaluation_start = std::chrono::steady_clock::now();
  absl::StatusOr<Literal> expected = Evaluate(*module, arguments, evaluator_options);
  if (!expected.ok()) return;
  ++tally->runnable;
  // Modules that take the interpreter long are still fused, verified and
  // re-fused, but compared only when they are quick to run.
  const bool compare = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                     evaluation_start)
                           .count() < 1.0;
  if (!compare) ++tally->too_slow;
  for (const Variant& variant : Variants()) {
    std::unique_ptr<HloModule> copy = module->Clone();
    HloPassPipeline pipeline("fusion");
    AddFusionPasses(pipeline, variant.options);
    absl::StatusOr<bool> changed = pipeline.Run(*copy);
    const std::string where = absl::StrCat(id, " [", variant.name, "]");
    if (!changed.ok()) {
      tally->failures[where] = std::string(changed.status().message());
      continue;
    }
    if (*changed) ++tally->fused;
    if (compare) {
      absl::StatusOr<Literal> actual = Evaluate(*copy, arguments, evaluator_options);
      if (!actual.ok()) {
        tally->failures[where] = absl::StrCat("fused module fails to run: ",
                                              actual.status().message());
        continue;
      }
      ++tally->compared;
      ComparisonReport report = CompareLiterals(*expected, *actual);
      if (!report.ok) tally->failures[where] = report.ToString();
    }

    const std::string once = PrintModule(*copy);
    HloPassPipeline again("fusion-again");
    AddFusionPasses(again, variant.options);
    absl::StatusOr<bool> changed_again = again.Run(*copy);
    if (!changed_again.ok()) {
      tally->failures[where + " rerun"] = std::string(changed_again.status().message());
    } else if (*changed_again || PrintModule(*copy) != once) {
      tally->failures[where + " rerun"] = "a second run changed the module";
    }
  }
}

void Report(const char* what, const Tally& tally) {
  std::cout << what << ": " << tally.modules << " modules, " << tally.runnable
            << " runnable (" << tally.too_slow << " too slow to compare), " << tally.compared
            << " fused variants compared (" << tally.fused << " variants changed by fusion), "
            << tally.failures.size() << " failures\n";
  for (const auto& [id, message] : tally.failures) {
    ADD_FAILURE() << id << ": " << message;
  }
}

TEST(FusionSemantics, JaxZoo) {
  const std::string dir = testdata::ZooDir();
  std::vector<std::string> files = testdata::ListFiles(dir, ".before.txt");
  for (const std::string& f : testdata::ListFiles(dir, ".after.txt")) files.push_back(f);
  if (files.empty()) GTEST_SKIP() << "tests/jax/zoo not found";
  Tally tally;
  for (const std::string& file : files) {
    std::string text;
    ASSERT_TRUE(testdata::ReadFile(dir + "/" + file, &text)) << file;
    ParseOptions options;
    options.filename = file;
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, options);
    ASSERT_TRUE(module.ok()) << module.status();
    CheckModule(file, std::move(*module), &tally);
  }
  Report("zoo", tally);
  EXPECT_GE(tally.runnable, 10);
}

TEST(FusionSemantics, XlaCorpus) {
  const std::string root = testdata::CorpusDir();
  if (root.empty()) GTEST_SKIP() << "HLOC_CORPUS_DIR is not set and the workspace is unknown";
  Tally tally;
  std::vector<testdata::CorpusModule> modules;
  for (const testdata::CorpusFile& file : testdata::ListCorpusFiles(root)) {
    if (!testdata::ParseCorpusFile(file, &modules)) continue;
    for (testdata::CorpusModule& piece : modules) {
      if (piece.module.ok()) CheckModule(piece.id, *std::move(piece.module), &tally);
    }
  }
  if (tally.modules == 0) GTEST_SKIP() << "no corpus modules under " << root;
  Report("corpus", tally);
}

}  // namespace
}  // namespace hloc
