// The standard pipelines must not change what a module computes. For every
// corpus module the interpreter can run ($HLOC_CORPUS_DIR/xla and /xla2023),
// this test evaluates the module on seeded random arguments, runs each of the
// pipelines "default", "simplify", "outline" and "fallback" on a copy (the
// verifier runs after every pass that changes the module), evaluates the copy
// and compares: bit for bit first, then within the element type's default
// tolerance (the simplifier may reassociate float arithmetic). Each shard
// prints how many modules ran, matched exactly or within tolerance, and why
// the others were skipped. The JAX zoo goes through these pipelines in
// backend/ and tests/; each fusion pass alone is checked in
// passes/fusion/fusion_semantics_test.cc.
#include <chrono>
#include <iostream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/test_arguments.h"
#include "hlo/testing/corpus.h"
#include "passes/standard_pipelines.h"

namespace hloc {
namespace {

constexpr int kShards = 8;
// Modules whose reference run takes longer are skipped (the interpreter is
// slow in unoptimized builds; fusion_semantics_test still fuses them).
constexpr double kMaxReferenceSeconds = 1.0;

const char* const kPipelines[] = {"default", "simplify", "outline", "fallback"};

struct PipelineTally {
  int ran = 0, changed = 0, exact = 0, within_tolerance = 0;
};

struct Tally {
  int modules = 0, checked = 0;
  std::map<std::string, int> skipped;  // reason -> modules
  std::map<std::string, PipelineTally> pipelines;
  std::map<std::string, std::string> failures;  // "module [pipeline]" -> what
};

// The interpreter's error without the instruction it names, to group the
// skipped modules by cause.
// "instruction %x (send): not supported ..." -> "send: not supported ...".
std::string ShortReason(absl::string_view message) {
  if (absl::StartsWith(message, "instruction %")) {
    const size_t open = message.find(" (");
    const size_t close = message.find("): ");
    if (open != absl::string_view::npos && close != absl::string_view::npos && open < close) {
      return absl::StrCat(message.substr(open + 2, close - open - 2), ": ",
                          message.substr(close + 3, 40));
    }
  }
  return std::string(message.substr(0, 60));
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void CheckModule(const std::string& id, const HloModule& module, Tally* tally) {
  ++tally->modules;
  struct SlowReport {
    const std::string& id;
    std::string phases;  // "default 1.2+0.3 s" per pipeline: passes + evaluation
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~SlowReport() {
      const double seconds = SecondsSince(start);
      if (seconds > 5) std::cout << "  slow: " << id << " " << seconds << " s" << phases << "\n";
    }
  } slow_report{id};
  std::vector<Literal> arguments;
  const std::string skip = RandomArgumentsForTest(module, 11, &arguments);
  if (!skip.empty()) {
    ++tally->skipped[skip];
    return;
  }
  const EvaluatorOptions evaluator_options = TestEvaluatorOptions();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Literal> expected = Evaluate(module, arguments, evaluator_options);
  if (!expected.ok()) {
    ++tally->skipped[absl::StrCat("the interpreter cannot run it (",
                                  ShortReason(expected.status().message()), ")")];
    return;
  }
  if (SecondsSince(start) > kMaxReferenceSeconds) {
    ++tally->skipped["slow to interpret"];
    return;
  }
  ++tally->checked;
  for (const char* name : kPipelines) {
    const std::string where = absl::StrCat(id, " [", name, "]");
    PipelineTally& counts = tally->pipelines[name];
    std::unique_ptr<HloModule> copy = module.Clone();
    PipelineOptions options;
    options.verify_between_passes = true;
    absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline =
        MakeStandardPipeline(name, options, nullptr);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    const auto pipeline_start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> changed = (*pipeline)->Run(*copy);
    const double pipeline_seconds = SecondsSince(pipeline_start);
    if (!changed.ok()) {
      tally->failures[where] = std::string(changed.status().message());
      continue;
    }
    ++counts.ran;
    if (*changed) ++counts.changed;
    const auto evaluation_start = std::chrono::steady_clock::now();
    absl::StatusOr<Literal> actual = Evaluate(*copy, arguments, evaluator_options);
    absl::StrAppend(&slow_report.phases, ", ", name, " ", pipeline_seconds, "+",
                    SecondsSince(evaluation_start), " s");
    if (!actual.ok()) {
      tally->failures[where] =
          absl::StrCat("the optimized module fails to run: ", actual.status().message());
      continue;
    }
    if (*actual == *expected) {
      ++counts.exact;
      continue;
    }
    ComparisonReport report = CompareLiterals(*expected, *actual);
    if (report.ok) {
      ++counts.within_tolerance;
    } else {
      tally->failures[where] = report.ToString();
    }
  }
}

void Report(int shard, const Tally& tally) {
  std::cout << "shard " << shard << ": " << tally.modules << " modules, " << tally.checked
            << " run through the pipelines\n";
  for (const auto& [reason, count] : tally.skipped) {
    std::cout << "  skipped " << count << ": " << reason << "\n";
  }
  for (const auto& [name, counts] : tally.pipelines) {
    std::cout << "  " << name << ": ran " << counts.ran << " (changed " << counts.changed
              << "), bit-exact " << counts.exact << ", within tolerance "
              << counts.within_tolerance << "\n";
  }
  std::cout << "  failures: " << tally.failures.size() << "\n";
  for (const auto& [where, message] : tally.failures) ADD_FAILURE() << where << ": " << message;
}

class StandardPipelinesOnCorpus : public ::testing::TestWithParam<int> {};

TEST_P(StandardPipelinesOnCorpus, ResultsUnchanged) {
  const int shard = GetParam();
  const std::string root = testdata::CorpusDir();
  if (root.empty()) GTEST_SKIP() << "HLOC_CORPUS_DIR is not set and the workspace is unknown";
  Tally tally;
  int index = 0;  // Over every module of the corpus; this shard takes every kShards-th.
  std::vector<testdata::CorpusModule> modules;
  for (const testdata::CorpusFile& file : testdata::ListCorpusFiles(root)) {
    if (!testdata::ParseCorpusFile(file, &modules)) continue;
    for (const testdata::CorpusModule& piece : modules) {
      if (index++ % kShards != shard) continue;
      if (!piece.module.ok()) {
        ++tally.modules;
        ++tally.skipped["does not parse"];
        continue;
      }
      CheckModule(piece.id, **piece.module, &tally);
    }
  }
  if (tally.modules == 0) GTEST_SKIP() << "no corpus modules under " << root;
  Report(shard, tally);
}

INSTANTIATE_TEST_SUITE_P(Shards, StandardPipelinesOnCorpus, ::testing::Range(0, kShards));

}  // namespace
}  // namespace hloc
