// Determinism: the same module gives the same optimized HLO, the same kernel
// LLVM IR (from two separate kernel compilers) and bit-identical host results
// across runs and thread counts (1, 2 and 4 threads; every kernel split across
// threads, however small).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend/host/host_compiler.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/kernel_compiler.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_printer.h"
#include "runtime/thread_pool.h"
#include "tests/random/random_module.h"

namespace hloc::random_hlo {
namespace {

// Every byte of a literal, tuples flattened.
std::string Bytes(const Literal& literal) {
  if (literal.shape().IsTuple()) {
    std::string out;
    for (const Literal& element : literal.tuple_elements()) out += Bytes(element) + "|";
    return out;
  }
  return std::string(reinterpret_cast<const char*>(literal.raw()),
                     static_cast<size_t>(literal.size_bytes()));
}

std::unique_ptr<HloModule> Optimized(const HloModule& module) {
  std::unique_ptr<HloModule> optimized = module.Clone();
  absl::StatusOr<bool> changed = host::OptimizeForHost(*optimized);
  EXPECT_TRUE(changed.ok()) << changed.status();
  return optimized;
}

// The optimized LLVM IR of every fused computation, in module order.
std::string KernelIr(const HloModule& module) {
  host::KernelCompilerOptions options;
  options.cache = false;
  absl::StatusOr<std::shared_ptr<host::KernelCompiler>> compiler =
      host::KernelCompiler::Create(options);
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  if (!compiler.ok()) return "";
  std::string out;
  for (const HloComputation* computation : module.computations()) {
    if (computation->fusion_instruction() == nullptr) continue;
    absl::StatusOr<std::string> ir = (*compiler)->EmitIr(*computation, /*optimized=*/true);
    out += computation->name() + ":\n" + (ir.ok() ? *ir : ir.status().ToString()) + "\n";
  }
  return out;
}

TEST(DeterminismTest, SameModuleSameHloIrAndResults) {
  int64_t modules = 0, kernels_compared = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RandomModuleOptions generator;
    generator.max_instructions = 24;
    generator.max_dimension = 9;
    std::unique_ptr<HloModule> module = GenerateRandomModule(seed, generator);
    SCOPED_TRACE(PrintModule(*module));
    std::unique_ptr<HloModule> first = Optimized(*module);
    std::unique_ptr<HloModule> second = Optimized(*module);
    ASSERT_EQ(PrintModule(*first), PrintModule(*second)) << "seed " << seed;
    const std::string ir = KernelIr(*first);
    ASSERT_EQ(ir, KernelIr(*second)) << "seed " << seed;
    for (const HloComputation* c : first->computations()) kernels_compared += c->fusion_instruction() != nullptr;

    absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(*module, seed);
    ASSERT_TRUE(arguments.ok()) << arguments.status();
    host::HostCompileOptions compile_options;
    compile_options.interpreter = HostInterpreter();
    absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
        host::CompileForHost(*first, compile_options);
    ASSERT_TRUE(program.ok()) << program.status();
    runtime::ExecuteOptions execute;
    execute.min_parallel_cost = 1;  // split every kernel, however small
    std::string reference;
    for (int threads : {1, 2, 4, 1}) {
      runtime::ThreadPool pool(threads);
      absl::StatusOr<Literal> result =
          (*program)->Execute(*arguments, threads == 1 ? nullptr : &pool, execute);
      ASSERT_TRUE(result.ok()) << result.status();
      if (reference.empty()) {
        reference = Bytes(*result);
      } else {
        EXPECT_EQ(Bytes(*result), reference) << "seed " << seed << ", " << threads << " threads";
      }
    }
    ++modules;
  }
  std::printf("determinism: %lld modules, %lld fused kernels compared\n",
              static_cast<long long>(modules), static_cast<long long>(kernels_compared));
  EXPECT_GT(kernels_compared, 0);
}

}  // namespace
}  // namespace hloc::random_hlo
