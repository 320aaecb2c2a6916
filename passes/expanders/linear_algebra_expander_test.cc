// CholeskyExpander and TriangularSolveExpander: the interpreter gives the
// same results before and after expansion on every cholesky and
// triangular-solve case of expander_test_cases.cc (batches, both
// triangles, both sides, transposes, unit diagonals, f16 to f64), and the
// expansion is one while loop.
#include "gtest/gtest.h"
#include "passes/expanders/cholesky_expander.h"
#include "passes/expanders/expander_test_cases.h"
#include "passes/expanders/triangular_solve_expander.h"
#include "passes/test_util.h"

namespace hloc {
namespace {

using expanders::CountEverywhere;
using expanders::ExpanderCase;

class LinearAlgebraCaseTest : public ::testing::TestWithParam<ExpanderCase> {};

TEST_P(LinearAlgebraCaseTest, InterpreterAgreesBeforeAndAfter) {
  for (uint64_t seed : {1, 2}) {
    absl::StatusOr<std::unique_ptr<HloModule>> expanded = expanders::ExpandAndCompare(GetParam(), seed);
    ASSERT_TRUE(expanded.ok()) << expanded.status();
    EXPECT_EQ(CountEverywhere(**expanded, HloOpcode::kWhile), 1);
  }
}

std::vector<ExpanderCase> LinearAlgebraCases() {
  std::vector<ExpanderCase> cases = expanders::ExpanderCasesFor(HloOpcode::kCholesky);
  for (const ExpanderCase& c : expanders::ExpanderCasesFor(HloOpcode::kTriangularSolve)) {
    cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, LinearAlgebraCaseTest, ::testing::ValuesIn(LinearAlgebraCases()),
                         [](const ::testing::TestParamInfo<ExpanderCase>& info) {
                           return info.param.name;
                         });

TEST(CholeskyExpanderTest, LeavesComplexMatricesAlone) {
  auto module = testing::ParseAndVerifyOrFail(R"(
HloModule m
ENTRY e {
  a = c64[3,3] parameter(0)
  ROOT c = c64[3,3] cholesky(a), lower=true
})");
  ASSERT_NE(module, nullptr);
  CholeskyExpander expander;
  absl::StatusOr<bool> changed = testing::RunAndVerify(expander, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace hloc
