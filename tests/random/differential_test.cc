// Random differential testing: random valid modules (random_module.h), each
// run on the reference interpreter and compared with
//   - the interpreter on the module the host pipeline optimized (the passes),
//   - the host backend on that module (fusion on),
//   - the host backend with the pipeline's fusion off (each op its own kernel).
// Floats compare with per-type tolerances; integers and pred exactly.
//
// Budget and failure reports as differential_driver.h says (default: 1000
// modules or 150 s, whichever comes first);
// HLOC_RANDOM_OPT_LEVEL forces the host kernels' LLVM level (see Checker).
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/kernel_compiler.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "tests/random/differential_driver.h"
#include "tests/random/random_module.h"

namespace hloc::random_hlo {
namespace {

// What the host backend ran, summed over the run: the comparison means
// something only if most ops ran as compiled kernels or library calls.
struct HostCounts {
  int64_t kernels = 0;
  int64_t library_calls = 0;
  int64_t interpreter_calls = 0;
  std::map<std::string, int> interpreter_opcodes;  // which ops had no host kernel
  double compile_seconds = 0;  // in CompileForHost (LLVM), both modes
};

// Host kernels compile at LLVM -O0 except for every fourth module's fusion-on
// run, at -O1: -O1 costs 2.5x the time of a module (LLVM dominates) but
// exercises the optimizer on the emitted IR (poison, undefined shifts); -O0
// everywhere else buys the module count. HLOC_RANDOM_OPT_LEVEL forces one level.
struct Checker {
  std::shared_ptr<host::KernelCompiler> quick;      // -O0
  std::shared_ptr<host::KernelCompiler> optimized;  // -O1
  const std::shared_ptr<host::KernelCompiler>& CompilerFor(uint64_t seed, bool fusion) const {
    return fusion && seed % 4 == 0 ? optimized : quick;
  }

  // Empty when every path agrees with the interpreter; else "path: what".
  std::string Check(const HloModule& module, uint64_t seed, HostCounts* counts) const {
    absl::Status verified = VerifyModule(module);
    if (!verified.ok()) return absl::StrCat("generator: module fails verification: ", verified.ToString());
    absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(module, seed);
    if (!arguments.ok()) return absl::StrCat("arguments: ", arguments.status().ToString());
    EvaluatorOptions evaluator_options;
    evaluator_options.num_threads = 1;
    absl::StatusOr<Literal> expected = Evaluate(module, *arguments, evaluator_options);
    if (!expected.ok()) return absl::StrCat("interpreter: ", expected.status().ToString());

    for (bool fusion : {true, false}) {
      const std::string mode = fusion ? "fusion on" : "fusion off";
      std::unique_ptr<HloModule> optimized = module.Clone();
      host::HostPipelineOptions pipeline_options;
      pipeline_options.fusion = fusion;
      absl::StatusOr<bool> changed = host::OptimizeForHost(*optimized, pipeline_options);
      if (!changed.ok()) return absl::StrCat("host pipeline (", mode, "): ", changed.status().ToString());
      if (fusion) {
        absl::StatusOr<Literal> passes = Evaluate(*optimized, *arguments, evaluator_options);
        if (!passes.ok()) return absl::StrCat("interpreter on the optimized module: ", passes.status().ToString());
        std::string d = Difference(*expected, *passes);
        if (!d.empty()) return absl::StrCat("interpreter on the optimized module differs: ", d);
      }
      host::HostCompileOptions compile_options;
      compile_options.compiler = CompilerFor(seed, fusion);
      compile_options.interpreter = HostInterpreter();
      const auto compile_start = std::chrono::steady_clock::now();
      absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
          host::CompileForHost(*optimized, compile_options);
      counts->compile_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
      if (!program.ok()) {
        return absl::StrCat("host compiler (", mode, "): ", program.status().ToString());
      }
      counts->kernels += (*program)->report().kernels;
      counts->library_calls += (*program)->report().library_calls;
      counts->interpreter_calls += (*program)->report().interpreter_calls;
      for (const auto& [opcode, name] : (*program)->report().interpreter_opcodes) {
        ++counts->interpreter_opcodes[opcode];
      }
      absl::StatusOr<Literal> host = (*program)->Execute(*arguments, /*pool=*/nullptr);
      if (!host.ok()) return absl::StrCat("host backend (", mode, "): ", host.status().ToString());
      std::string d = Difference(*expected, *host);
      if (!d.empty()) return absl::StrCat("host backend (", mode, ") differs: ", d);
    }
    return "";
  }
};

TEST(DifferentialTest, InterpreterVsPassesVsHostBackend) {
  const int64_t forced_level = EnvInt("HLOC_RANDOM_OPT_LEVEL", -1);
  std::shared_ptr<host::KernelCompiler> compilers[2];
  for (int level : {0, 1}) {
    host::KernelCompilerOptions kernel_options;
    kernel_options.optimization_level = forced_level >= 0 ? static_cast<int>(forced_level) : level;
    absl::StatusOr<std::shared_ptr<host::KernelCompiler>> compiler =
        host::KernelCompiler::Create(kernel_options);
    ASSERT_TRUE(compiler.ok()) << compiler.status();
    compilers[level] = *std::move(compiler);
  }
  Checker checker{compilers[0], compilers[1]};
  HostCounts counts;
  DifferentialRun run;
  run.target = "//tests/random:differential_test";
  run.default_seconds = 150;
  run.default_count = 1000;
  run.check = [&](const HloModule& module, uint64_t seed) {
    return checker.Check(module, seed, &counts);
  };
  const DifferentialSummary summary = RunDifferential(run);
  const std::string mix = CountsText(summary.opcodes);
  const std::string interpreted = CountsText(counts.interpreter_opcodes);
  std::printf("differential: %s\nhost backend: %lld kernels, %lld library calls, %lld interpreter "
              "ops (%s ), %.1fs in CompileForHost\nopcodes:%s\n",
              summary.ToString().c_str(), static_cast<long long>(counts.kernels),
              static_cast<long long>(counts.library_calls),
              static_cast<long long>(counts.interpreter_calls), interpreted.c_str(),
              counts.compile_seconds, mix.c_str());
  // The budget must buy a real run, not a handful of modules, and the host
  // backend must have run compiled kernels, not only the interpreter.
  EXPECT_GE(summary.count, std::min<int64_t>(summary.max_count, 50));
  EXPECT_GT(counts.kernels, counts.interpreter_calls);
}

// The generator's modules verify (cheap; many seeds), with and without the
// narrow types.
TEST(RandomModuleTest, ModulesVerify) {
  for (bool narrow : {false, true}) {
    RandomModuleOptions options;
    options.narrow_types = narrow;
    for (uint64_t seed = 0; seed < 2000; ++seed) {
      std::unique_ptr<HloModule> module = GenerateRandomModule(seed, options);
      absl::Status verified = VerifyModule(*module);
      ASSERT_TRUE(verified.ok()) << "seed " << seed << ": " << verified << "\n"
                                 << PrintModule(*module);
    }
  }
}

// The comparison can fail: a float off by more than its tolerance, an
// integer off by one, a tuple element that differs.
TEST(DifferentialCompareTest, DifferencesAreFound) {
  EXPECT_EQ(Difference(Literal::Scalar(xla::F32, 1.0), Literal::Scalar(xla::F32, 1.00001)), "");
  EXPECT_NE(Difference(Literal::Scalar(xla::F32, 1.0), Literal::Scalar(xla::F32, 1.01)), "");
  EXPECT_NE(Difference(Literal::Scalar(xla::S32, 7), Literal::Scalar(xla::S32, 8)), "");
  EXPECT_NE(Difference(Literal::Tuple({Literal::Scalar(xla::PRED, 1)}),
                       Literal::Tuple({Literal::Scalar(xla::PRED, 0)})),
            "");
}

// Same seed, same module.
TEST(RandomModuleTest, SeedDeterminesModule) {
  for (uint64_t seed : {3u, 77u, 1234u}) {
    EXPECT_EQ(PrintModule(*GenerateRandomModule(seed)), PrintModule(*GenerateRandomModule(seed)));
  }
  EXPECT_NE(PrintModule(*GenerateRandomModule(1)), PrintModule(*GenerateRandomModule(2)));
  RandomModuleOptions narrow;
  narrow.narrow_types = true;
  for (uint64_t seed : {3u, 77u, 1234u}) {
    EXPECT_EQ(PrintModule(*GenerateRandomModule(seed, narrow)),
              PrintModule(*GenerateRandomModule(seed, narrow)));
  }
}

// narrow_types draws s4, u4 and f8/f4 values, and they reach arithmetic.
TEST(RandomModuleTest, NarrowTypesAppear) {
  RandomModuleOptions options;
  options.narrow_types = true;
  int narrow_arithmetic = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::unique_ptr<HloModule> module = GenerateRandomModule(seed, options);
    for (const HloComputation* computation : module->computations()) {
      for (const HloInstruction* instruction : computation->instructions()) {
        const PrimitiveType type = instruction->shape().IsArray()
                                       ? instruction->shape().element_type()
                                       : xla::PRIMITIVE_TYPE_INVALID;
        const bool narrow = type == xla::S4 || type == xla::U4 || IsNarrowFloat(type);
        if (narrow && (IsElementwiseBinary(instruction->opcode()) ||
                       instruction->opcode() == HloOpcode::kReduce)) {
          ++narrow_arithmetic;
        }
      }
    }
  }
  EXPECT_GE(narrow_arithmetic, 20);
}

}  // namespace
}  // namespace hloc::random_hlo
