// Fusion must not change what a module computes. For every JAX zoo module
// (tests/jax/zoo/*.before.txt, and XLA's own fused *.after.txt, which
// exercises fusing fused modules) and every corpus module the interpreter can
// run ($HLOC_CORPUS_DIR/xla and /xla2023), this test evaluates the module on
// random arguments, runs each fusion pipeline on a copy (verifying after
// every pass), evaluates again and compares. It also checks that a second run
// of the pipeline changes nothing.
#include <chrono>
#include <climits>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "passes/fusion/fusion_pipeline.h"

namespace hloc {
namespace {

std::vector<std::string> ListFiles(const std::string& dir, absl::string_view suffix) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* entry = readdir(d)) {
    std::string name = entry->d_name;
    if (absl::EndsWith(name, suffix)) files.push_back(name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

bool ReadFile(const std::string& path, std::string* text) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream contents;
  contents << in.rdbuf();
  *text = contents.str();
  return true;
}

std::string WorkspaceRoot() {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return "";
  const std::string suffix = "/passes/fusion/fusion_semantics_test.cc";
  const std::string link = absl::StrCat(srcdir, "/", workspace, suffix);
  char resolved[PATH_MAX];
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  std::string path = resolved;
  if (!absl::EndsWith(path, suffix)) return "";
  return path.substr(0, path.size() - suffix.size());
}

std::string CorpusDir() {
  const char* dir = getenv("HLOC_CORPUS_DIR");
  if (dir != nullptr && *dir != '\0') return dir;
  const std::string root = WorkspaceRoot();
  return root.empty() ? "" : root + "/../shared/corpus";
}

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

bool HasNondeterministicOps(const HloModule& module) {
  bool found = false;
  for (const HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](HloInstruction* i) {
      found = found || i->opcode() == HloOpcode::kRng;
    });
  }
  return found;
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
  if (!VerifyModule(*module).ok() || HasNondeterministicOps(*module)) return;
  // Sized before they are made: drawing gigabytes of random numbers is slow.
  constexpr int64_t kMaxArgumentBytes = int64_t{64} << 20;
  int64_t bytes = 0;
  for (const HloInstruction* parameter : module->entry()->parameters()) {
    std::optional<int64_t> size =
        parameter == nullptr ? std::nullopt : parameter->shape().CheckedByteSize();
    bytes = size && bytes <= kMaxArgumentBytes ? bytes + *size : kMaxArgumentBytes + 1;
  }
  if (bytes > kMaxArgumentBytes) return;
  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(*module, 7);
  if (!arguments.ok()) return;
  EvaluatorOptions evaluator_options;
  evaluator_options.max_while_iterations = 100000;
  const auto evaluation_start = std::chrono::steady_clock::now();
  absl::StatusOr<Literal> expected = Evaluate(*module, *arguments, evaluator_options);
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
      absl::StatusOr<Literal> actual = Evaluate(*copy, *arguments, evaluator_options);
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
  const std::string root = WorkspaceRoot();
  const std::string dir = root + "/tests/jax/zoo";
  std::vector<std::string> files = ListFiles(dir, ".before.txt");
  for (const std::string& f : ListFiles(dir, ".after.txt")) files.push_back(f);
  if (root.empty() || files.empty()) GTEST_SKIP() << "tests/jax/zoo not found";
  Tally tally;
  for (const std::string& file : files) {
    std::string text;
    ASSERT_TRUE(ReadFile(dir + "/" + file, &text)) << file;
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
  const std::string root = CorpusDir();
  if (root.empty()) GTEST_SKIP() << "HLOC_CORPUS_DIR is not set and the workspace is unknown";
  Tally tally;
  for (const char* sub : {"xla", "xla2023"}) {
    const std::string dir = root + "/" + sub;
    for (const std::string& file : ListFiles(dir, ".hlo")) {
      std::string text;
      if (!ReadFile(dir + "/" + file, &text)) continue;
      ParseOptions options;
      options.filename = file;
      std::vector<absl::StatusOr<std::unique_ptr<HloModule>>> modules =
          ParseEachHloModule(text, options);
      for (size_t i = 0; i < modules.size(); ++i) {
        if (!modules[i].ok()) continue;
        CheckModule(absl::StrCat(sub, "/", file, "#", i), std::move(*modules[i]), &tally);
      }
    }
  }
  if (tally.modules == 0) GTEST_SKIP() << "no corpus modules under " << root;
  Report("corpus", tally);
}

}  // namespace
}  // namespace hloc
