// Every JAX zoo model (tests/jax/zoo/*.snapshot.pb) on the host, as loaded
// and in each pipeline mode (fusion on, off, fallback fusion): the result
// must match XLA:CPU's recorded result and the interpreter's. Every model
// compiles without the interpreter: an op with no host kernel or library
// routine is a compile error here, not a silent interpreter op. Each
// model's report (kernels, library calls, arena size) goes to the test log.

#include <algorithm>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_pipeline_modes.h"
#include "backend/host/host_test_util.h"
#include "gtest/gtest.h"
#include "hlo/testing/corpus.h"
#include "hlo/shape_util.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/loader.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace {

using testdata::ZooDir;
using testdata::ZooModels;

// XLA's results differ from ours by summation order and by its fast
// approximations of transcendental functions.
Tolerance XlaTolerance(PrimitiveType type) {
  if (type == xla::BF16) return Tolerance{2e-2, 2e-2};
  return Tolerance{1e-4, 1e-5};
}

class HostZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HostZooTest, MatchesXlaAndInterpreter) {
  const std::string path = absl::StrCat(ZooDir(), "/", GetParam(), ".snapshot.pb");
  absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ASSERT_TRUE(snapshot->result.has_value()) << "no recorded result in " << path;

  host::HostCompileOptions options;
  options.compiler = host_testing::SharedCompiler();
  // No interpreter: every op must get a kernel or a library call.
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(*snapshot->module, options);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->report().interpreter_calls, 0) << (*program)->report().ToString();
  runtime::ThreadPool pool(2);
  absl::StatusOr<Literal> actual = (*program)->Execute(snapshot->arguments, &pool);
  ASSERT_TRUE(actual.ok()) << actual.status();
  std::cout << GetParam() << ": " << (*program)->report().ToString()
            << (*program)->executable().MemoryReport().substr(
                   0, (*program)->executable().MemoryReport().find('\n') + 1);

  const Tolerance xla = XlaTolerance(FirstArrayType(snapshot->result->shape()));
  ComparisonReport vs_xla = CompareLiterals(*snapshot->result, *actual, xla);
  EXPECT_TRUE(vs_xla.ok) << "vs XLA: " << vs_xla.ToString();

  absl::StatusOr<Literal> interpreted = Evaluate(*snapshot->module, snapshot->arguments);
  ASSERT_TRUE(interpreted.ok()) << interpreted.status();
  ComparisonReport vs_interpreter = CompareLiterals(*interpreted, *actual, xla);
  EXPECT_TRUE(vs_interpreter.ok) << "vs interpreter: " << vs_interpreter.ToString();
}

// XLA:CPU's optimized module (its fusion decisions) compiled by the host
// backend: fusion kernels on real fusions, checked against XLA's result.
TEST_P(HostZooTest, OptimizedModuleMatchesXla) {
  const std::string path = absl::StrCat(ZooDir(), "/", GetParam(), ".snapshot.pb");
  absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  absl::StatusOr<std::unique_ptr<HloModule>> optimized =
      LoadModuleFromFile(absl::StrCat(ZooDir(), "/", GetParam(), ".after.txt"));
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  host::HostCompileOptions options;
  options.compiler = host_testing::SharedCompiler();
  // No interpreter: every op must get a kernel or a library call.
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(**optimized, options);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->report().interpreter_calls, 0) << (*program)->report().ToString();
  runtime::ThreadPool pool(2);
  absl::StatusOr<Literal> actual = (*program)->Execute(snapshot->arguments, &pool);
  ASSERT_TRUE(actual.ok()) << actual.status();
  std::cout << GetParam() << " (optimized): " << (*program)->report().ToString();
  const Tolerance xla = XlaTolerance(FirstArrayType(snapshot->result->shape()));
  ComparisonReport vs_xla = CompareLiterals(*snapshot->result, *actual, xla);
  EXPECT_TRUE(vs_xla.ok) << "vs XLA: " << vs_xla.ToString();
}

// Each model through each pipeline mode of the acceptance criteria (fusion
// on, fusion off, fallback fusion), compiled for the host without the
// interpreter, against XLA's recorded result and the interpreter's.
class HostZooModeTest
    : public ::testing::TestWithParam<std::tuple<std::string, host_testing::PipelineMode>> {};

TEST_P(HostZooModeTest, MatchesXlaAndInterpreter) {
  const auto& [model, mode] = GetParam();
  const std::string path = absl::StrCat(ZooDir(), "/", model, ".snapshot.pb");
  absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ASSERT_TRUE(snapshot->result.has_value()) << "no recorded result in " << path;
  absl::StatusOr<std::unique_ptr<HloModule>> prepared =
      host_testing::PrepareForMode(*snapshot->module, mode);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  host::HostCompileOptions options;
  options.compiler = host_testing::SharedCompiler();
  // No interpreter: every op must get a kernel or a library call.
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(**prepared, options);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->report().interpreter_calls, 0) << (*program)->report().ToString();
  std::cout << model << " [" << host_testing::PipelineModeName(mode)
            << "]: " << (*program)->report().ToString();
  runtime::ThreadPool pool(2);
  runtime::ExecuteOptions execute;
  execute.min_parallel_cost = 64;  // Split small kernels too: exercises the pool.
  absl::StatusOr<Literal> actual = (*program)->Execute(snapshot->arguments, &pool, execute);
  ASSERT_TRUE(actual.ok()) << actual.status();
  const Tolerance tolerance = XlaTolerance(FirstArrayType(snapshot->result->shape()));
  ComparisonReport vs_xla = CompareLiterals(*snapshot->result, *actual, tolerance);
  EXPECT_TRUE(vs_xla.ok) << "vs XLA: " << vs_xla.ToString();
  absl::StatusOr<Literal> interpreted = Evaluate(*snapshot->module, snapshot->arguments);
  ASSERT_TRUE(interpreted.ok()) << interpreted.status();
  ComparisonReport vs_interpreter = CompareLiterals(*interpreted, *actual, tolerance);
  EXPECT_TRUE(vs_interpreter.ok) << "vs interpreter: " << vs_interpreter.ToString();
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, HostZooModeTest,
    ::testing::Combine(::testing::ValuesIn(ZooModels()),
                       ::testing::ValuesIn(host_testing::AllPipelineModes())),
    [](const ::testing::TestParamInfo<std::tuple<std::string, host_testing::PipelineMode>>& info) {
      std::string name = absl::StrCat(std::get<0>(info.param), "_",
                                      host_testing::PipelineModeName(std::get<1>(info.param)));
      for (char& c : name) {
        if (c == '-') c = '_';
      }
      return name;
    });

INSTANTIATE_TEST_SUITE_P(Zoo, HostZooTest, ::testing::ValuesIn(ZooModels()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(HostZooListTest, FindsModels) { EXPECT_GE(ZooModels().size(), 16u) << ZooDir(); }

}  // namespace
}  // namespace hloc
