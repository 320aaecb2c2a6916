// GPU test helpers (see gpu_test_util.h).
#include "backend/gpu/gpu_test_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/text_parser.h"
#include "passes/standard_pipelines.h"

extern char** environ;

namespace hloc {
namespace gpu {

std::unique_ptr<HloModule> ParseForTest(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

bool RunPipelineForTest(HloModule& module, const std::string& pipeline, FusionLedger* ledger) {
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> passes =
      MakeStandardPipeline(pipeline, PipelineOptions{}, ledger);
  EXPECT_TRUE(passes.ok()) << passes.status();
  if (!passes.ok()) return false;
  absl::Status run = (*passes)->Run(module).status();
  EXPECT_TRUE(run.ok()) << module.name() << ": " << run;
  return run.ok();
}

std::unique_ptr<HloModule> ParseAndRunPipeline(absl::string_view text,
                                               const std::string& pipeline,
                                               FusionLedger* ledger) {
  std::unique_ptr<HloModule> module = ParseForTest(text);
  if (module == nullptr || !RunPipelineForTest(*module, pipeline, ledger)) return nullptr;
  return module;
}

std::string ZooModelText(absl::string_view model) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return "";
  std::ifstream in(absl::StrCat(srcdir, "/", workspace, "/tests/jax/zoo/", model, ".before.txt"));
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

GpuProgramOptions PlanOptions() {
  GpuProgramOptions options;
  options.cublaslt = LibraryUse::kAvailable;
  options.cudnn = LibraryUse::kAvailable;
  options.codegen.assemble = false;
  return options;
}

GpuProgramOptions AssembledSm90Options() {
  GpuProgramOptions options = PlanOptions();
  options.codegen.target = GpuTarget::ForComputeCapability(90);
  options.codegen.assemble = true;
  const std::string runfiles_ptxas = RunfilesPtxas();
  if (!runfiles_ptxas.empty() && access(runfiles_ptxas.c_str(), X_OK) == 0) {
    options.codegen.ptxas_path = runfiles_ptxas;
  }
  return options;
}

GpuPipelineOptions PipelineWithLibraries() {
  GpuPipelineOptions options;
  options.cublaslt = LibraryUse::kAvailable;
  options.cudnn = LibraryUse::kAvailable;
  return options;
}

absl::StatusOr<GpuKernel> CompileUnassembled(const HloComputation& computation,
                                             const GpuTarget& target) {
  GpuCompileOptions options;
  options.target = target;
  options.assemble = false;
  return CompileGpuKernel(computation, options);
}

std::string RunfilesPtxas() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return "";
  return absl::StrCat(srcdir, "/cuda/bin/ptxas");
}

::testing::AssertionResult FileCheck(const std::string& input, const std::string& checks) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  if (srcdir == nullptr || tmpdir == nullptr) {
    return ::testing::AssertionFailure() << "TEST_SRCDIR/TEST_TMPDIR unset";
  }
  static int counter = 0;
  const std::string base = absl::StrCat(tmpdir, "/filecheck", counter++);
  const std::string input_path = base + ".input";
  const std::string check_path = base + ".checks";
  const std::string log_path = base + ".log";
  std::ofstream(input_path) << input;
  std::ofstream(check_path) << checks;
  std::vector<std::string> args = {absl::StrCat(srcdir, "/llvm/bin/FileCheck"), check_path,
                                   "--input-file", input_path};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return ::testing::AssertionFailure() << "cannot run " << args[0];
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ::testing::AssertionSuccess();
  std::ifstream log(log_path);
  std::ostringstream messages;
  messages << log.rdbuf();
  return ::testing::AssertionFailure() << messages.str() << "\n---- input:\n" << input;
}

}  // namespace gpu
}  // namespace hloc
