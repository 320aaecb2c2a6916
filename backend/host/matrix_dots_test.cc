// VectorDotsAsMatrixDots: which dots it reshapes, and that the host runs the
// module through OptimizeForHost (where outlining then makes the reshaped
// dots gemm library calls) as the interpreter runs the original.
#include "backend/host/matrix_dots.h"

#include <memory>
#include <string>

#include "backend/host/host_compiler.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/host_test_util.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace {

// A vector times a matrix (an RNN step), a matrix times a vector, a batched
// matrix times vector, a matrix times a vector under the size threshold and a
// vector . vector product.
constexpr char kDots[] = R"(
HloModule m
ENTRY e {
  h = f32[256] parameter(0)
  w = f32[256,128] parameter(1)
  x = f32[128] parameter(2)
  hw = f32[128] dot(h, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  t = f32[128] tanh(hw)
  wx = f32[256] dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bm = f64[6,40,70] parameter(3)
  bv = f64[6,70] parameter(4)
  bmv = f64[6,40] dot(bm, bv), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  s = f32[8,8] parameter(5)
  v = f32[8] parameter(6)
  small = f32[8] dot(s, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  inner = f32[] dot(h, h), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT out = (f32[128], f32[256], f64[6,40], f32[8], f32[]) tuple(t, wx, bmv, small, inner)
})";

int CountDots(const HloModule& module, int rank) {
  int n = 0;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      n += i->opcode() == HloOpcode::kDot && i->operand(0)->shape().rank() == rank;
    }
  }
  return n;
}

TEST(VectorDotsAsMatrixDotsTest, ReshapesVectorOperandsAboveTheThreshold) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kDots);
  ASSERT_TRUE(module.ok()) << module.status();
  host::VectorDotsAsMatrixDots pass;
  absl::StatusOr<bool> changed = pass.Run(**module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(VerifyModule(**module).ok());
  // h . w: lhs [1,256]; w . x: lhs unchanged (rank 2) with rhs [128,1]; the
  // batched one: lhs rank 3 unchanged, rhs [6,70,1]; small and h . h stay.
  int reshaped = 0;
  for (const HloInstruction* i : (*module)->entry()->instructions()) {
    if (i->opcode() != HloOpcode::kDot) continue;
    const std::string name = i->name();
    if (name.find(".matrix") == std::string::npos) continue;
    ++reshaped;
    EXPECT_EQ(i->operand(0)->shape().rank(), i->operand(1)->shape().rank()) << i->ToString();
  }
  EXPECT_EQ(reshaped, 3);
  EXPECT_EQ(CountDots(**module, 1), 1);  // h . h
}

TEST(VectorDotsAsMatrixDotsTest, HostPipelineMatchesInterpreter) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kDots);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(**module, 3);
  ASSERT_TRUE(args.ok()) << args.status();
  absl::StatusOr<Literal> expected = Evaluate(**module, *args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::unique_ptr<HloModule> optimized = (*module)->Clone();
  absl::StatusOr<bool> changed = host::OptimizeForHost(*optimized);
  ASSERT_TRUE(changed.ok()) << changed.status();
  host::HostCompileOptions options;
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(*optimized, options);
  ASSERT_TRUE(program.ok()) << program.status();
  // The three reshaped dots are gemm library calls.
  EXPECT_GE((*program)->report().library_calls, 3) << (*program)->report().ToString();
  EXPECT_EQ((*program)->report().interpreter_calls, 0);
  runtime::ThreadPool pool(2);
  absl::StatusOr<Literal> actual = (*program)->Execute(*args, &pool, runtime::ExecuteOptions());
  ASSERT_TRUE(actual.ok()) << actual.status();
  ComparisonReport report = CompareLiterals(*expected, *actual, Tolerance{1e-5, 1e-5});
  EXPECT_TRUE(report.ok) << report.ToString();
}

}  // namespace
}  // namespace hloc
