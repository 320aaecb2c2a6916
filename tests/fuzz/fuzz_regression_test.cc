// Every input saved under tests/fuzz/regressions/<target>/ (crashes the
// fuzzers found, now fixed, and a few hand-written ones) through its fuzz
// target, built with the default toolchain: a crash fails the test. Runs in
// `bazel test //...`, so a fixed crash stays fixed without clang.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/testing/corpus.h"
#include "tests/fuzz/fuzz_targets.h"

namespace hloc::fuzz {
namespace {

using Target = int (*)(const uint8_t*, size_t);

int RunSaved(const std::string& dir_name, Target target) {
  const std::string dir =
      absl::StrCat(testdata::RunfilesDir(), "/tests/fuzz/regressions/", dir_name);
  int count = 0;
  for (const std::string& name : testdata::ListFiles(dir, "")) {
    if (name[0] == '.') continue;
    std::string bytes;
    if (!testdata::ReadFile(dir + "/" + name, &bytes)) continue;
    SCOPED_TRACE(name);
    target(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++count;
  }
  return count;
}

TEST(FuzzRegressionTest, TextInputs) { EXPECT_GT(RunSaved("text", FuzzHloText), 0); }
TEST(FuzzRegressionTest, ProtoInputs) { EXPECT_GT(RunSaved("proto", FuzzHloProto), 0); }
TEST(FuzzRegressionTest, PipelineInputs) { EXPECT_GT(RunSaved("pipeline", FuzzPipeline), 0); }

// The pipeline inputs also go through the text target (they are HLO text).
TEST(FuzzRegressionTest, PipelineInputsAsText) {
  EXPECT_GT(RunSaved("pipeline", FuzzHloText), 0);
}

// The harness can fail: a broken property aborts (libFuzzer reports it as a
// crash with its input).
TEST(FuzzRegressionDeathTest, BrokenPropertyAborts) {
  EXPECT_DEATH(RequireMessage(absl::InvalidArgumentError(""), "parser"),
               "parser rejected the input with an empty message");
}

}  // namespace
}  // namespace hloc::fuzz
