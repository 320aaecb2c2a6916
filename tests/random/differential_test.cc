// Random differential testing: random valid modules (random_module.h), each
// run on the reference interpreter and compared with
//   - the interpreter on the module the host pipeline optimized (the passes),
//   - the host backend on that module (fusion on),
//   - the host backend with the pipeline's fusion off (each op its own kernel).
// Floats compare with per-type tolerances; integers and pred exactly.
//
// Budget: seeds HLOC_RANDOM_SEED, +1, ... (default 1) until
// HLOC_RANDOM_SECONDS (default 75) pass or HLOC_RANDOM_COUNT modules are
// done; HLOC_RANDOM_MAX_INSTRUCTIONS (default 14) bounds each module and
// HLOC_RANDOM_OPT_LEVEL forces the host kernels' LLVM level (see Checker). A
// failure prints the seed, the one command that reproduces it, the
// module and a shrunk module: the smallest prefix of the entry (the module
// with an earlier instruction as root, dead code removed) that still fails.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
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
#include "passes/dead_code_elimination.h"
#include "tests/random/random_module.h"

namespace hloc::random_hlo {
namespace {

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  int64_t parsed;
  return value != nullptr && absl::SimpleAtoi(value, &parsed) ? parsed : fallback;
}

// Looser than DefaultTolerance: a random chain of transcendental ops and
// reductions in another order differs by more than one rounding.
Tolerance ToleranceFor(PrimitiveType type) {
  switch (type) {
    case xla::F64: return {1e-9, 1e-9};
    case xla::F32: case xla::C64: return {1e-4, 1e-5};
    case xla::F16: return {1e-2, 1e-3};
    case xla::BF16: return {4e-2, 1e-2};
    default: return {};  // integers and pred: exact
  }
}

// Empty when equal within tolerance, else what differs.
std::string Difference(const Literal& expected, const Literal& actual) {
  if (expected.shape().IsTuple() && actual.shape().IsTuple() &&
      expected.tuple_elements().size() == actual.tuple_elements().size()) {
    for (size_t i = 0; i < expected.tuple_elements().size(); ++i) {
      std::string d = Difference(expected.tuple_elements()[i], actual.tuple_elements()[i]);
      if (!d.empty()) return absl::StrCat("tuple element ", i, ": ", d);
    }
    return "";
  }
  ComparisonReport report =
      CompareLiterals(expected, actual, ToleranceFor(expected.shape().element_type()));
  return report.ok ? "" : report.ToString();
}

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

// The module with `root_name` as its entry root, dead code removed.
std::unique_ptr<HloModule> WithRoot(const HloModule& module, const std::string& root_name) {
  std::unique_ptr<HloModule> copy = module.Clone();
  HloComputation* entry = copy->entry();
  for (HloInstruction* instruction : entry->instructions()) {
    if (instruction->name() == root_name) entry->set_root(instruction);
  }
  DeadCodeElimination dce;
  (void)dce.Run(*copy);
  return copy;
}

// The earliest instruction of the entry whose prefix module still fails.
std::unique_ptr<HloModule> Shrink(const Checker& checker, const HloModule& module, uint64_t seed) {
  for (const HloInstruction* instruction :
       module.entry()->MakeInstructionPostOrder()) {
    if (instruction->opcode() == HloOpcode::kParameter) continue;
    std::unique_ptr<HloModule> prefix = WithRoot(module, instruction->name());
    HostCounts ignored;
    if (!checker.Check(*prefix, seed, &ignored).empty()) return prefix;
  }
  return module.Clone();
}

TEST(DifferentialTest, InterpreterVsPassesVsHostBackend) {
  const int64_t first_seed = EnvInt("HLOC_RANDOM_SEED", 1);
  const int64_t seconds = EnvInt("HLOC_RANDOM_SECONDS", 75);
  const int64_t max_count = EnvInt("HLOC_RANDOM_COUNT", 1000000);
  RandomModuleOptions options;
  options.max_instructions = static_cast<int>(EnvInt("HLOC_RANDOM_MAX_INSTRUCTIONS", 14));
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

  const auto start = std::chrono::steady_clock::now();
  int64_t count = 0, instructions = 0, failures = 0;
  HostCounts counts;
  std::map<std::string, int> opcodes;
  for (int64_t seed = first_seed; count < max_count; ++seed) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(seconds)) break;
    std::unique_ptr<HloModule> module = GenerateRandomModule(static_cast<uint64_t>(seed), options);
    ++count;
    for (const HloComputation* computation : module->computations()) {
      for (const HloInstruction* instruction : computation->instructions()) {
        ++opcodes[std::string(HloOpcodeName(instruction->opcode()))];
        ++instructions;
      }
    }
    const std::string failure = checker.Check(*module, static_cast<uint64_t>(seed), &counts);
    if (failure.empty()) continue;
    ++failures;
    std::unique_ptr<HloModule> shrunk = Shrink(checker, *module, static_cast<uint64_t>(seed));
    ADD_FAILURE() << "seed " << seed << ": " << failure << "\nreproduce: bazel test "
                  << "//tests/random:differential_test --test_env=HLOC_RANDOM_SEED=" << seed
                  << " --test_env=HLOC_RANDOM_COUNT=1 --test_env=HLOC_RANDOM_MAX_INSTRUCTIONS="
                  << options.max_instructions << "\nshrunk module ("
                  << checker.Check(*shrunk, static_cast<uint64_t>(seed), &counts) << "):\n"
                  << PrintModule(*shrunk) << "\nwhole module:\n"
                  << PrintModule(*module);
    if (failures >= 5) break;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string mix, interpreted;
  for (const auto& [name, n] : opcodes) absl::StrAppend(&mix, " ", name, ":", n);
  for (const auto& [name, n] : counts.interpreter_opcodes) {
    absl::StrAppend(&interpreted, " ", name, ":", n);
  }
  std::printf("differential: seeds %lld..%lld, %lld modules (%lld instructions) in %.1fs, "
              "%lld failing\nhost backend: %lld kernels, %lld library calls, %lld interpreter "
              "ops (%s ), %.1fs in CompileForHost\nopcodes:%s\n",
              static_cast<long long>(first_seed), static_cast<long long>(first_seed + count - 1),
              static_cast<long long>(count), static_cast<long long>(instructions), elapsed,
              static_cast<long long>(failures), static_cast<long long>(counts.kernels),
              static_cast<long long>(counts.library_calls),
              static_cast<long long>(counts.interpreter_calls), interpreted.c_str(),
              counts.compile_seconds, mix.c_str());
  // The budget must buy a real run, not a handful of modules, and the host
  // backend must have run compiled kernels, not only the interpreter.
  EXPECT_GE(count, std::min<int64_t>(max_count, 50));
  EXPECT_GT(counts.kernels, counts.interpreter_calls);
}

// The generator's modules verify (cheap; many seeds).
TEST(RandomModuleTest, ModulesVerify) {
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    std::unique_ptr<HloModule> module = GenerateRandomModule(seed);
    absl::Status verified = VerifyModule(*module);
    ASSERT_TRUE(verified.ok()) << "seed " << seed << ": " << verified << "\n" << PrintModule(*module);
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
}

}  // namespace
}  // namespace hloc::random_hlo
