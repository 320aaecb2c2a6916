// Runs the verifier over real modules: every module of the XLA test corpus
// ($HLOC_CORPUS_DIR/xla and /xla2023) that parses, and the JAX model zoo
// dumps (tests/jax/zoo/*.before.txt and *.after.txt, the latter with XLA:CPU
// fusions and custom calls). Modules that fail must be exactly the known
// genuinely invalid ones listed below, each with the reason it fails.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/testing/corpus.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"

namespace hloc {
namespace {

// A module the verifier must reject: "<file>#<module index>" and a piece of
// the expected message.
struct ExpectedFailure {
  const char* module;
  const char* message;
};

// XLA test inputs that are invalid on purpose (negative tests of XLA's own
// verifier or parser round trips), with the rule that rejects them.
const std::vector<ExpectedFailure> kExpectedCorpusFailures = {
    // Calls pass f32[4] constants to f32[] parameters.
    {"xla/xla_hlo_tools_tests_generate_hlo_test_checks_test_input.hlo#4",
     "parameter 0 of the called computation is f32[] but operand 0 is f32[4]"},
    {"xla/xla_hlo_tools_tests_generate_hlo_test_checks_test_output.hlo#4",
     "parameter 0 of the called computation is f32[] but operand 0 is f32[4]"},
    // Dot of two vectors without contracting dimensions is an outer product.
    {"xla/xla_hlo_transforms_tests_operand_upcaster.hlo#0",
     "declared shape s32[8] but dot of its operands gives s32[8,8]"},
    // Negative padding leaves a spatial dimension smaller than the window.
    {"xla/xla_hlo_transforms_tests_rewrite_bf16_conv_to_onednn.hlo#1",
     "declared shape bf16[4,4,5,5,32] but convolution of its operands gives bf16[8,0,5,5,32]"},
    // rng with a third (shape) operand.
    {"xla/xla_hlo_transforms_tests_rng_expander.hlo#0", "rng %result: takes 2 operands, got 3"},
    {"xla/xla_hlo_transforms_tests_rng_expander.hlo#1", "rng %result: takes 2 operands, got 3"},
    {"xla/xla_hlo_transforms_tests_rng_expander.hlo#2", "rng %result: takes 2 operands, got 3"},
    {"xla/xla_hlo_transforms_tests_rng_expander.hlo#3", "rng %result: takes 2 operands, got 3"},
    {"xla/xla_hlo_transforms_tests_rng_expander.hlo#4", "rng %result: takes 2 operands, got 3"},
    {"xla/xla_hlo_transforms_tests_rng_expander.hlo#5", "rng %result: takes 2 operands, got 3"},
    // A 3x3 window over a 2x2 kernel.
    {"xla/xla_hlo_translate_hlo_to_mhlo_tests_import.hlo#0",
     "window dimension 0 has size 3 but kernel spatial dimension 0 has size 2"},
    // recv-done claims data of another shape than its recv.
    {"xla/xla_hlo_translate_hlo_to_mhlo_tests_import_async.hlo#14",
     "declared shape (f32[128,21], token[]) but recv-done of its operands gives "
     "(f32[128,32], token[])"},
    // HLO broadcast does not expand size-1 dimensions (MHLO's does).
    {"xla/xla_hlo_translate_hlo_to_mhlo_tests_while.hlo#0",
     "operand dimension 0 has size 1 but maps to result dimension 0 of size 3"},
    // Fusion operand s32[1024] passed to an s32[] parameter.
    {"xla/xla_tools_print_indexing_test.hlo#0",
     "parameter 1 of the called computation is s32[] but operand 1 is s32[1024]"},
    // The verifier's own negative test.
    {"xla/xla_tools_tests_invalid_concat.hlo#0",
     "operand 1 f32[3,1] differs from operand 0 f32[2,1] in dimension 0, which is not the "
     "concatenate dimension 1"},
};

struct CorpusResult {
  int files = 0, modules = 0, unparsed_files = 0;
  std::map<std::string, std::string> failures;  // module id -> message
};

CorpusResult VerifyFiles(const std::string& dir, const std::vector<std::string>& files,
                         const VerifierOptions& verifier_options = {}) {
  CorpusResult result;
  for (const std::string& file : files) {
    std::string text;
    if (!testdata::ReadFile(dir + "/" + file, &text)) continue;
    ++result.files;
    ParseOptions options;
    options.filename = file;
    auto modules = ParseHloModules(text, options);
    if (!modules.ok()) {
      ++result.unparsed_files;
      std::cout << "  not parsed: " << modules.status().message() << "\n";
      continue;
    }
    for (size_t i = 0; i < modules->size(); ++i) {
      ++result.modules;
      absl::Status status = VerifyModule(*(*modules)[i], verifier_options);
      if (!status.ok()) {
        result.failures[absl::StrCat(file, "#", i)] = std::string(status.message());
      }
    }
  }
  return result;
}

TEST(VerifierCorpusTest, XlaCorpus) {
  const std::string root = testdata::CorpusDir();
  if (root.empty()) GTEST_SKIP() << "HLOC_CORPUS_DIR is not set and the workspace is unknown";
  std::map<std::string, std::string> failures;
  int files = 0, modules = 0, unparsed = 0;
  for (const char* sub : {"xla", "xla2023"}) {
    const std::string dir = root + "/" + sub;
    CorpusResult result = VerifyFiles(dir, testdata::ListFiles(dir, ".hlo"));
    files += result.files;
    modules += result.modules;
    unparsed += result.unparsed_files;
    for (auto& [id, message] : result.failures) failures[absl::StrCat(sub, "/", id)] = message;
  }
  if (files == 0) GTEST_SKIP() << "no corpus files under " << root;
  std::cout << "verified " << modules << " modules from " << files << " files (" << unparsed
            << " files did not parse); " << failures.size() << " modules rejected:\n";
  for (const auto& [id, message] : failures) std::cout << "  " << id << ": " << message << "\n";

  std::map<std::string, std::string> expected;
  for (const ExpectedFailure& e : kExpectedCorpusFailures) expected[e.module] = e.message;
  for (const auto& [id, message] : failures) {
    auto it = expected.find(id);
    if (it == expected.end()) {
      ADD_FAILURE() << "unexpected verifier failure in " << id << ": " << message;
    } else {
      EXPECT_THAT(message, ::testing::HasSubstr(it->second)) << id;
    }
  }
  for (const auto& [id, message] : expected) {
    EXPECT_TRUE(failures.count(id)) << id << " was expected to fail with: " << message;
  }
}

TEST(VerifierCorpusTest, JaxZoo) {
  const std::string dir = testdata::ZooDir();
  std::vector<std::string> files = testdata::ListFiles(dir, ".before.txt");
  for (const std::string& f : testdata::ListFiles(dir, ".after.txt")) files.push_back(f);
  if (files.empty()) GTEST_SKIP() << "tests/jax/zoo not found";
  CorpusResult result = VerifyFiles(dir, files);
  EXPECT_EQ(result.unparsed_files, 0);
  EXPECT_EQ(result.modules, static_cast<int>(files.size()));
  for (const auto& [id, message] : result.failures) {
    ADD_FAILURE() << "zoo module " << id << " rejected: " << message;
  }
  std::cout << "verified " << result.modules << " zoo modules\n";

  // After XLA:CPU's layout assignment, layouts are complete and consistent.
  VerifierOptions layouts;
  layouts.layout_sensitive = true;
  CorpusResult after = VerifyFiles(dir, testdata::ListFiles(dir, ".after.txt"), layouts);
  EXPECT_GT(after.modules, 0);
  for (const auto& [id, message] : after.failures) {
    ADD_FAILURE() << "zoo module " << id << " rejected with layout checks: " << message;
  }
}

}  // namespace
}  // namespace hloc
