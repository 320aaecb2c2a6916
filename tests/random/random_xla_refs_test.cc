// Random modules against XLA:CPU: every snapshot in tests/random/xla_refs
// (a module of the random generator, seeded arguments and XLA:CPU's result,
// made by make_xla_refs.sh through jaxlib) runs on the interpreter and on
// the host backend, and both must agree with XLA within the random tests'
// tolerances. The modules are read from the snapshots, so a change of the
// generator does not change what is compared; regenerate to follow it.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/loader.h"
#include "hlo/verifier.h"
#include "tests/random/differential_driver.h"

namespace hloc::random_hlo {
namespace {

std::string RefsDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir && workspace) {
    return absl::StrCat(srcdir, "/", workspace, "/tests/random/xla_refs");
  }
  return "tests/random/xla_refs";
}

TEST(RandomXlaReferences, InterpreterAndHostMatchXlaCpu) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(RefsDir())) {
    const std::string path = entry.path().string();
    if (absl::EndsWith(path, ".snapshot.pb")) files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 100u) << "reference snapshots missing from " << RefsDir();
  int interpreter_mismatches = 0, host_mismatches = 0;
  for (const std::string& path : files) {
    const std::string name = std::filesystem::path(path).filename().string();
    absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
    ASSERT_TRUE(snapshot.ok()) << name << ": " << snapshot.status();
    ASSERT_TRUE(snapshot->result.has_value()) << name << " has no recorded result";
    ASSERT_TRUE(VerifyModule(*snapshot->module).ok()) << name;
    absl::StatusOr<Literal> interpreted = Evaluate(*snapshot->module, snapshot->arguments);
    ASSERT_TRUE(interpreted.ok()) << name << ": " << interpreted.status();
    const std::string d = Difference(*snapshot->result, *interpreted);
    if (!d.empty()) {
      ++interpreter_mismatches;
      ADD_FAILURE() << name << ": the interpreter differs from XLA:CPU: " << d;
    }
    absl::StatusOr<Literal> host = RunOnHost(*snapshot->module, snapshot->arguments);
    ASSERT_TRUE(host.ok()) << name << ": " << host.status();
    const std::string h = Difference(*snapshot->result, *host);
    if (!h.empty()) {
      ++host_mismatches;
      ADD_FAILURE() << name << ": the host backend differs from XLA:CPU: " << h;
    }
  }
  std::printf("random modules vs XLA:CPU: %zu compared; interpreter %d, host backend %d "
              "mismatched\n",
              files.size(), interpreter_mismatches, host_mismatches);
}

}  // namespace
}  // namespace hloc::random_hlo
