// Evaluates every JAX zoo snapshot (tests/jax/zoo/*.snapshot.pb: module,
// arguments and XLA:CPU's result) and checks the evaluator agrees with XLA
// within the default per-type tolerances; then evaluates XLA:CPU's optimized
// module for the same model (NAME.after.txt: fusions, layouts, bitcasts,
// TopK calls) on the same arguments and checks it too. Prints a table of
// model, result types and worst errors.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/loader.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

std::string ZooDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir != nullptr) {
    return absl::StrCat(srcdir, "/", workspace ? workspace : "hloc", "/tests/jax/zoo");
  }
  return "tests/jax/zoo";
}

void CollectTypes(const Shape& shape, std::vector<std::string>* types) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) CollectTypes(s, types);
    return;
  }
  std::string name(PrimitiveTypeName(shape.element_type()));
  for (const std::string& t : *types) {
    if (t == name) return;
  }
  types->push_back(name);
}

TEST(ZooTest, EverySnapshotMatchesXlaCpu) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(ZooDir(), ec)) {
    const std::string path = entry.path().string();
    if (path.size() > 12 && path.substr(path.size() - 12) == ".snapshot.pb") files.push_back(path);
  }
  ASSERT_FALSE(ec) << "cannot list " << ZooDir() << ": " << ec.message();
  ASSERT_GE(files.size(), 16u);
  std::sort(files.begin(), files.end());
  std::printf("%-20s %-14s %12s %12s  %-8s %12s  %s\n", "model", "result dtype", "max rel err",
              "max abs err", "status", "after: rel", "status");
  int failures = 0;
  for (const std::string& path : files) {
    std::string model = std::filesystem::path(path).filename().string();
    model.resize(model.size() - 12);
    absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    ASSERT_TRUE(snapshot->result.has_value()) << path << " has no recorded result";
    absl::StatusOr<Literal> result = Evaluate(*snapshot->module, snapshot->arguments);
    if (!result.ok()) {
      ADD_FAILURE() << model << ": " << result.status();
      ++failures;
      continue;
    }
    ComparisonReport report = CompareLiterals(*snapshot->result, *result);
    EXPECT_TRUE(report.ok) << model << ": " << report.ToString();
    if (!report.ok) ++failures;
    // The same model after XLA:CPU's optimization passes.
    std::string after_status = "missing";
    double after_rel = 0;
    const std::string after_path = path.substr(0, path.size() - 12) + ".after.txt";
    std::ifstream after_file(after_path);
    if (after_file) {
      std::stringstream text;
      text << after_file.rdbuf();
      absl::StatusOr<std::unique_ptr<HloModule>> after = ParseHloModule(text.str());
      ASSERT_TRUE(after.ok()) << after.status();
      absl::StatusOr<Literal> after_result = Evaluate(**after, snapshot->arguments);
      ASSERT_TRUE(after_result.ok()) << model << " (after): " << after_result.status();
      ComparisonReport after_report = CompareLiterals(*snapshot->result, *after_result);
      EXPECT_TRUE(after_report.ok) << model << " (after): " << after_report.ToString();
      after_status = after_report.ok ? "ok" : "MISMATCH";
      after_rel = after_report.max_rel_error;
      if (!after_report.ok) ++failures;
    }
    std::vector<std::string> types;
    CollectTypes(snapshot->result->shape(), &types);
    std::printf("%-20s %-14s %12.3g %12.3g  %-8s %12.3g  %s\n", model.c_str(),
                absl::StrJoin(types, ",").c_str(), report.max_rel_error, report.max_abs_error,
                report.ok ? "ok" : "MISMATCH", after_rel, after_status.c_str());
  }
  std::printf("%zu snapshots, %d failing\n", files.size(), failures);
}

}  // namespace
}  // namespace hloc
