// Bounded dynamic shapes on the CUDA backend, checked with no GPU.
// OptimizeForGpu runs DynamicPadder, so the module the GPU compiler builds
// returns (result at its bound, sizes, checks), all computed by its
// kernels; GpuProgram::Execute copies that back and cuts it with the
// program's DeclaredResult (backend/common/declared_result.h), the host's
// code. Here, for each module and runtime size:
//   - the plan compiles with every op in a kernel (no interpreter op);
//   - every kernel of the plan matches the interpreter in the emulator
//     (gpu_emulator.h) on random arguments;
//   - the plan's module, run in the interpreter and cut by the program's
//     own DeclaredResult, gives the interpreter's answer on the original
//     module, result shapes (the runtime sizes) included, and a size
//     outside the bound is the error naming the set-dimension-size.
// GpuDynamicDeviceTest runs the same cases on a GPU where there is one
// (SKIPPED elsewhere): compiled, loaded, run with and without the CUDA
// graph, against the interpreter.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_device_test_util.h"
#include "backend/gpu/gpu_emulator.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/gpu_test_util.h"
#include "backend/gpu/kernel_sites.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/testing/literal_text.h"
#include "passes/dynamic_test_modules.h"

namespace hloc {
namespace gpu {
namespace {

namespace mods = dynamic_test_modules;

Literal Arg(absl::string_view text) { return testdata::ParseLiteralText(text); }

Literal Size(int n) { return Arg(absl::StrCat("s32[] ", n)); }

// Literal is move-only: no initializer lists.
template <typename... L>
std::vector<Literal> Literals(L... literals) {
  std::vector<Literal> out;
  (out.push_back(std::move(literals)), ...);
  return out;
}

// The module compiled for the GPU (plan only), its kernels checked in the
// emulator.
std::unique_ptr<GpuProgram> CompileChecked(absl::string_view text) {
  std::unique_ptr<HloModule> module = ParseForTest(text);
  if (module == nullptr) return nullptr;
  absl::StatusOr<bool> optimized = OptimizeForGpu(*module, PipelineWithLibraries());
  EXPECT_TRUE(optimized.ok()) << optimized.status();
  if (!optimized.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*module, PlanOptions());
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return nullptr;
  EXPECT_TRUE((*program)->declared_result().dynamic());
  EXPECT_EQ((*program)->report().interpreter_calls, 0) << (*program)->PlanToString();
  static Emulator* emulator = new Emulator();
  EXPECT_TRUE(emulator->error().empty()) << emulator->error();
  int emulated = 0;
  const KernelSites sites = CollectKernelSites((*program)->module());
  for (const KernelSite& site : sites.kernels) {
    bool ran = false;
    EXPECT_EQ(CheckKernel(*emulator, *site.computation, 11, &ran), "")
        << "%" << site.instruction->name();
    if (ran) ++emulated;
  }
  EXPECT_EQ(emulated, static_cast<int>(sites.kernels.size())) << (*program)->PlanToString();
  return *std::move(program);
}

// What GpuProgram::Execute returns for `arguments`, with the interpreter
// running the plan's module in place of the kernels.
absl::StatusOr<Literal> RunPlanModule(const GpuProgram& program,
                                      const std::vector<Literal>& arguments) {
  std::vector<Literal> program_arguments = arguments;
  if (program.declared_result().dynamic_parameters()) {
    absl::StatusOr<std::vector<Literal>> padded = program.declared_result().PadArguments(arguments);
    if (!padded.ok()) return padded.status();
    program_arguments = *std::move(padded);
  }
  absl::StatusOr<Literal> padded = Evaluate(program.module(), program_arguments);
  if (!padded.ok()) return padded.status();
  return program.declared_result().FromRun(*std::move(padded));
}

void ExpectSameAsInterpreter(absl::string_view text, const GpuProgram& program,
                             const std::vector<Literal>& arguments) {
  std::unique_ptr<HloModule> original = ParseForTest(text);
  ASSERT_NE(original, nullptr);
  absl::StatusOr<Literal> expected = Evaluate(*original, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<Literal> actual = RunPlanModule(program, arguments);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(expected->shape().ToString(false), actual->shape().ToString(false));
  ComparisonReport report = CompareLiterals(*expected, *actual);
  EXPECT_TRUE(report.ok) << report.ToString() << "\nexpected " << expected->ToString()
                         << "\nactual   " << actual->ToString();
}

// A module and its arguments for each runtime size tried.
struct DynamicCase {
  const char* name;
  const char* text;
  std::vector<int> sizes;
  std::vector<Literal> (*arguments)(int n);
  // What the error for size 9, past every bound, says.
  const char* past_bound_error = "(set-dimension-size)";
};

const std::vector<DynamicCase>& Cases() {
  static const auto* cases = new std::vector<DynamicCase>{
      {"reduce_exp", mods::kReduceExp, {0, 1, 5, 8},
       [](int n) { return Literals(Arg(mods::kReduceExpP), Size(n)); }},
      {"elementwise_chain", mods::kElementwiseChain, {0, 2, 6},
       [](int n) {
         return Literals(Arg(mods::kElementwiseChainP), Arg(mods::kElementwiseChainQ), Size(n));
       }},
      {"contraction_dot", mods::kDynamicContractionDot, {0, 1, 3},
       [](int n) {
         return Literals(Arg(mods::kDynamicContractionDotA), Arg(mods::kDynamicContractionDotB),
                         Size(n));
       }},
      // The corpus's emit_stablehlo set-dimension-size modules: the whole
      // result is dynamic, and the plan has no kernel (its outputs are the
      // parameters and a constant bound).
      {"set_size_root", mods::kSetSizeRoot, {0, 2, 4},
       [](int n) {
         return Literals(
             Arg("f32[4,4] {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}, {13, 14, 15, 16}}"),
             Size(n));
       }},
      // Sort and reverse along a runtime-sized dimension.
      {"sort_reverse", mods::kSortReverse, {0, 1, 4, 6},
       [](int n) {
         return Literals(Arg(mods::kSortReverseP), Arg(mods::kSortReverseQ), Size(n),
                         Size(n > 5 ? 5 : n));
       }},
      // Dynamic entry parameters: arguments of the runtime size, padded to
      // the bound by the program's DeclaredResult.
      {"dynamic_parameters", mods::kDynamicParameters, {0, 1, 5, 8},
       [](int n) {
         return Literals(Arg(mods::DynamicParametersP(n)),
                         Arg(mods::DynamicParametersQ(n > 4 ? 4 : n)));
       },
       "argument 0 (parameter %p) dimension 0 has size 9, above its bound 8"},
      // A tuple entry parameter with dynamic leaves.
      {"tuple_parameter", mods::kTupleParameter, {0, 1, 5, 8},
       [](int n) {
         return Literals(Literal::Tuple(Literals(Arg(mods::TupleParameterX(n)), Arg("s32[] 7"),
                                                 Arg(mods::TupleParameterY(n > 3 ? 3 : n)))));
       },
       "argument 0 (parameter %p) tuple element 0 dimension 0 has size 9, above its bound 8"},
      // Sort-by-key and argsort along a runtime-sized dimension.
      {"sort_with_values", mods::kSortWithValues, {0, 1, 4, 6},
       [](int n) {
         return Literals(Arg(mods::kSortWithValuesP), Size(n), Arg(mods::SortWithValuesQ(n)));
       },
       "argument 2 (parameter %q) dimension 0 has size 9, above its bound 8"},
      // Sizes carried into a while loop and conditional branches.
      {"loop_and_branches", mods::kLoopAndBranches, {0, 1, 5, 8},
       [](int n) { return Literals(Arg(mods::DynamicParametersP(n)), Size(n % 3)); },
       "argument 0 (parameter %p) dimension 0 has size 9, above its bound 8"},
      // Size checks inside a loop body and a branch (sizes where they pass).
      {"checks_in_loop_and_branch", mods::kChecksInLoopAndBranch, {0, 1, 3, 4},
       [](int n) { return Literals(Arg(mods::DynamicParametersP(n)), Size(n == 0 ? 0 : 2)); },
       "argument 0 (parameter %p) dimension 0 has size 9, above its bound 4"},
      // A size check in a loop condition (an even size, where it passes).
      {"check_in_loop_condition", mods::kCheckInLoopCondition, {0, 1, 3, 4},
       [](int n) { return Literals(Arg(mods::DynamicParametersP(n)), Size(n - n % 2)); },
       "argument 0 (parameter %p) dimension 0 has size 9, above its bound 4"},
      // XLA's PadToStatic and SliceToDynamic custom calls.
      {"pad_to_static_slice_to_dynamic", mods::kPadToStaticSliceToDynamic, {0, 3, 8},
       [](int n) { return Literals(Arg(mods::DynamicParametersP(n)), Size(5)); },
       "argument 0 (parameter %p) dimension 0 has size 9, above its bound 8"},
      // Gather and dynamic slices of a runtime-sized operand.
      {"slicing_runtime_sized", mods::kSlicingRuntimeSized, {3, 8},
       [](int n) { return Literals(Arg(mods::DynamicParametersP(n)), Size(7), Size(6)); },
       "argument 0 (parameter %p) dimension 0 has size 9, above its bound 8"},
      // Scatter with runtime-sized indices and updates.
      {"scatter_runtime_sized", mods::kScatterRuntimeSized, {3, 8},
       [](int n) { return Literals(Arg(mods::DynamicParametersP(n)), Size(3), Size(2)); },
       "argument 0 (parameter %p) dimension 0 has size 9, above its bound 8"},
      // Reduce-windows and convolutions over runtime-sized dimensions.
      {"windows_runtime_sized", mods::kWindowsRuntimeSized, {0, 3, 8},
       [](int n) { return Literals(Arg(mods::DynamicParametersP(n))); },
       "argument 0 (parameter %p) dimension 0 has size 9, above its bound 8"},
      // Calls whose callees have dynamic shapes (inlined).
      {"dynamic_calls", mods::kDynamicCalls, {0, 1, 5, 8},
       [](int n) { return Literals(Arg(mods::DynamicParametersP(n))); },
       "argument 0 (parameter %p) dimension 0 has size 9, above its bound 8"},
  };
  return *cases;
}

class GpuDynamicTest : public ::testing::TestWithParam<int> {};

TEST_P(GpuDynamicTest, PlanKernelsAndCutResultMatchTheInterpreter) {
  const DynamicCase& c = Cases()[GetParam()];
  std::unique_ptr<GpuProgram> program = CompileChecked(c.text);
  ASSERT_NE(program, nullptr);
  for (int n : c.sizes) {
    SCOPED_TRACE(n);
    ExpectSameAsInterpreter(c.text, *program, c.arguments(n));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuDynamicTest,
                         ::testing::Range(0, static_cast<int>(Cases().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(Cases()[info.param].name);
                         });

TEST(GpuDynamicResultTest, OutputOfDynamicShapeComesBackAtItsSize) {
  std::unique_ptr<GpuProgram> program = CompileChecked(mods::kReduceExp);
  ASSERT_NE(program, nullptr);
  absl::StatusOr<Literal> three =
      RunPlanModule(*program, Literals(Arg(mods::kReduceExpP), Size(3)));
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(three->tuple_elements()[2].shape().ToString(false), "f32[3]");
  program = CompileChecked(mods::kSetSizeRoot);
  ASSERT_NE(program, nullptr);
  absl::StatusOr<Literal> two = RunPlanModule(*program, Cases()[3].arguments(2));
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_TRUE(CompareLiterals(Arg("f32[4,2] {{1, 2}, {5, 6}, {9, 10}, {13, 14}}"), *two).ok)
      << two->ToString();
}

TEST(GpuDynamicResultTest, SizeOutsideTheBoundIsAnErrorNamingTheInstruction) {
  std::unique_ptr<GpuProgram> program = CompileChecked(mods::kReduceExp);
  ASSERT_NE(program, nullptr);
  for (int n : {9, -1}) {
    absl::StatusOr<Literal> r = RunPlanModule(*program, Literals(Arg(mods::kReduceExpP), Size(n)));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_NE(r.status().message().find("instruction %d (set-dimension-size)"), std::string::npos)
        << r.status();
  }
}

// An argument past its parameter's bound is refused by name, as on the host.
TEST(GpuDynamicResultTest, ArgumentPastItsBoundIsAnErrorNamingTheParameter) {
  std::unique_ptr<GpuProgram> program = CompileChecked(mods::kDynamicParameters);
  ASSERT_NE(program, nullptr);
  EXPECT_TRUE(program->declared_result().dynamic_parameters());
  absl::StatusOr<Literal> r = RunPlanModule(
      *program, Literals(Arg(mods::DynamicParametersP(2)), Arg(mods::DynamicParametersQ(5))));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "argument 1 (parameter %q) dimension 0 has size 5, above its bound 4"),
            std::string::npos)
      << r.status();
}

// On a GPU: the program computes sizes and checks in its kernels, Execute
// copies them back with the result and cuts it.
class GpuDynamicDeviceTest : public ::testing::TestWithParam<int> {};

TEST_P(GpuDynamicDeviceTest, MatchesTheInterpreter) {
  HLOC_SKIP_WITHOUT_GPU();
  ASSERT_NE(TestDevice(), nullptr);
  const DynamicCase& c = Cases()[GetParam()];
  std::unique_ptr<HloModule> module = ParseForTest(c.text);
  ASSERT_NE(module, nullptr);
  for (int n : c.sizes) {
    SCOPED_TRACE(n);
    const std::vector<Literal> arguments = c.arguments(n);
    absl::StatusOr<Literal> expected = Evaluate(*module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (bool graph : {false, true}) {
      std::string plan;
      absl::StatusOr<Literal> actual = RunOnTestDevice(*module, arguments, graph, &plan);
      ASSERT_TRUE(actual.ok()) << actual.status() << "\n" << plan;
      EXPECT_EQ(expected->shape().ToString(false), actual->shape().ToString(false));
      ComparisonReport report = CompareLiterals(*expected, *actual, GpuTolerance(xla::F32));
      EXPECT_TRUE(report.ok) << report.ToString() << "\n" << plan;
    }
  }
  // A size past the bound: the check the kernels computed fails the run,
  // or, for an argument, PadArguments refuses it.
  absl::StatusOr<Literal> past = RunOnTestDevice(*module, c.arguments(9), /*use_graph=*/false);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find(c.past_bound_error), std::string::npos)
      << past.status();
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuDynamicDeviceTest,
                         ::testing::Range(0, static_cast<int>(Cases().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(Cases()[info.param].name);
                         });

}  // namespace
}  // namespace gpu
}  // namespace hloc
