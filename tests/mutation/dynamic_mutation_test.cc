// Mutated modules with bounded dynamic shapes: the modules of
// passes/dynamic_test_modules.h (dynamic and tuple entry parameters, sorts,
// loops and branches with sizes and size checks) made wrong in deterministic
// ways (mutators.h), each one that verifies taken through the host pipeline
// (DynamicPadder) and run with arguments whose dynamic dimensions have
// random runtime sizes, one past the bound included: on the interpreter and
// the host backend directly, and through the API's interpreter and host
// executables. The properties:
//   - nothing crashes (a crash ends the test; the seed being run is on
//     stderr);
//   - every rejection says why (a non-empty message);
//   - where the interpreter refuses the arguments or a runtime size (an
//     InvalidArgument error), the backends refuse them too;
//   - where the interpreter and a backend both run, they agree, unless the
//     mutation changed a reducer or comparator: a reducer that is no
//     longer associative, or a comparator no longer a strict order, makes
//     the answer depend on the order of evaluation, which HLO leaves open.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/hloc.h"
#include "backend/common/literal_leaves.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/kernel_compiler.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "passes/dynamic_test_modules.h"
#include "tests/mutation/mutators.h"

namespace hloc::mutation {
namespace {

namespace mods = dynamic_test_modules;

constexpr int kMutantsPerModule = 1000;
constexpr int64_t kMaxInstructions = 200;
constexpr int64_t kMaxShapeBytes = int64_t{1} << 16;
constexpr int64_t kMaxWhileIterations = 200;

const char* const kSources[] = {mods::kReduceExp,          mods::kSortReverse,
                                mods::kDynamicParameters,  mods::kTupleParameter,
                                mods::kSortWithValues,     mods::kLoopAndBranches,
                                mods::kChecksInLoopAndBranch, mods::kDynamicCalls,
                                mods::kCheckInLoopCondition, mods::kPadToStaticSliceToDynamic,
                                mods::kSlicingRuntimeSized, mods::kScatterRuntimeSized,
                                mods::kWindowsRuntimeSized};

bool SmallEnough(const HloModule& module) {
  if (module.instruction_count() > kMaxInstructions) return false;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      std::optional<int64_t> bytes = instruction->shape().CheckedByteSize();
      if (!bytes || *bytes > kMaxShapeBytes) return false;
    }
  }
  return true;
}

// `shape` with each bounded dynamic dimension at a size drawn from
// [0, bound + 1] (bound + 1: past it), made static.
void DrawSizes(Shape* shape, uint64_t* state) {
  if (shape->IsTuple()) {
    for (Shape& element : *shape->mutable_tuple_shapes()) DrawSizes(&element, state);
    return;
  }
  if (!shape->IsArray()) return;
  for (int64_t d = 0; d < shape->rank(); ++d) {
    if (!shape->is_dynamic_dimension(d) || shape->dimensions(d) == Shape::kUnboundedSize) continue;
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t bound = shape->dimensions(d);
    // Mostly within the bound; one draw in eight past it.
    const int64_t size = (*state >> 61) == 0 ? bound + 1 : static_cast<int64_t>((*state >> 33) % (bound + 1));
    shape->set_dimension(d, size);
    shape->set_dynamic_dimension(d, false);
  }
}

// Random arguments for `module`'s entry with its dynamic dimensions at
// random runtime sizes.
absl::StatusOr<std::vector<Literal>> RuntimeSizedArguments(const HloModule& module,
                                                           uint64_t seed) {
  std::unique_ptr<HloModule> sized = module.Clone();
  uint64_t state = seed;
  for (HloInstruction* parameter : sized->entry()->parameters()) {
    DrawSizes(parameter->mutable_shape(), &state);
  }
  return MakeRandomArguments(*sized, seed);
}

// Whether a computation applied elementwise in an unspecified order (a
// reducer, comparator, scatter combiner) differs from the source's of that
// name.
bool OrderSensitiveCalleeChanged(const HloModule& mutant, const HloModule& source) {
  for (const HloComputation* c : mutant.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      switch (i->opcode()) {
        case HloOpcode::kReduce:
        case HloOpcode::kReduceWindow:
        case HloOpcode::kSort:
        case HloOpcode::kScatter:
        case HloOpcode::kSelectAndScatter:
        case HloOpcode::kMap:
          break;
        default:
          continue;
      }
      for (const HloComputation* callee : i->called_computations()) {
        const HloComputation* original = source.FindComputation(callee->name());
        if (original == nullptr || PrintComputation(*original) != PrintComputation(*callee)) {
          return true;
        }
      }
    }
  }
  return false;
}

struct Tally {
  int mutants = 0, verified = 0, interpreted = 0, host_ran = 0, api_ran = 0, compared = 0;
  std::vector<std::string> failures;
};

class Runner {
 public:
  Runner() {
    host::KernelCompilerOptions kernel_options;
    kernel_options.optimization_level = 0;
    kernel_options.cache = false;
    absl::StatusOr<std::shared_ptr<host::KernelCompiler>> compiler =
        host::KernelCompiler::Create(kernel_options);
    EXPECT_TRUE(compiler.ok()) << compiler.status();
    if (compiler.ok()) compiler_ = *compiler;
    api::ClientOptions client_options;
    client_options.num_threads = 1;
    absl::StatusOr<std::shared_ptr<api::Client>> client = api::Client::Create(client_options);
    EXPECT_TRUE(client.ok()) << client.status();
    if (client.ok()) client_ = *client;
  }

  void Run(const std::string& source, uint64_t seed, Tally& tally) {
    const Mutant mutant = MutateText(source, seed);
    const std::string where = absl::StrCat("seed ", seed, " (", mutant.how, ")");
    std::fprintf(stderr, "mutant %s\n", where.c_str());
    ++tally.mutants;
    auto says_why = [&](const absl::Status& status, const char* stage) {
      if (!status.ok() && status.message().empty()) {
        tally.failures.push_back(absl::StrCat(where, ": empty message at ", stage));
      }
    };
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(mutant.bytes);
    if (!module.ok()) return says_why(module.status(), "parse");
    if (absl::Status verified = VerifyModule(**module); !verified.ok()) {
      return says_why(verified, "verify");
    }
    ++tally.verified;
    if (!SmallEnough(**module)) return;
    absl::StatusOr<std::vector<Literal>> arguments = RuntimeSizedArguments(**module, seed);
    if (!arguments.ok()) return says_why(arguments.status(), "arguments");
    EvaluatorOptions evaluator;
    evaluator.num_threads = 1;
    evaluator.max_while_iterations = kMaxWhileIterations;
    absl::StatusOr<Literal> expected = Evaluate(**module, *arguments, evaluator);
    says_why(expected.status(), "interpreter");
    if (expected.ok()) ++tally.interpreted;
    absl::StatusOr<std::unique_ptr<HloModule>> original = ParseHloModule(source);
    const bool comparable =
        original.ok() && !OrderSensitiveCalleeChanged(**module, **original);
    // The interpreter refused an argument or a runtime size: so must the
    // backends; it ran: they agree where they run.
    auto check = [&](const absl::StatusOr<Literal>& actual, const char* backend) {
      says_why(actual.status(), backend);
      if (!expected.ok()) {
        if (absl::IsInvalidArgument(expected.status()) && actual.ok()) {
          tally.failures.push_back(absl::StrCat(where, ": the interpreter refused (",
                                                expected.status().message(), ") but ", backend,
                                                " ran"));
        }
        return;
      }
      if (!actual.ok() || !comparable) return;
      ++tally.compared;
      ComparisonReport report = CompareLiterals(*expected, *actual);
      if (!report.ok || expected->shape().ToString(false) != actual->shape().ToString(false)) {
        tally.failures.push_back(absl::StrCat(where, ": ", backend, " differs: ",
                                              report.ToString(), "\nexpected ",
                                              expected->ToString(), "\nactual   ",
                                              actual->ToString()));
      }
    };

    std::unique_ptr<HloModule> optimized = (*module)->Clone();
    absl::StatusOr<bool> changed = host::OptimizeForHost(*optimized);
    says_why(changed.status(), "host pipeline");
    if (changed.ok()) {
      RunOnHostOptions options;
      options.compile.compiler = compiler_;
      options.num_threads = 1;
      options.execute.max_while_iterations = kMaxWhileIterations;
      absl::StatusOr<Literal> actual = RunOnHost(*optimized, *arguments, options);
      if (actual.ok()) ++tally.host_ran;
      check(actual, "host");
    }
    if (client_ == nullptr || seed % 4 != 0) return;  // The API path on a quarter.
    for (api::Backend backend : {api::Backend::kInterpreter, api::Backend::kHost}) {
      api::CompileOptions options;
      options.backend = backend;
      absl::StatusOr<std::shared_ptr<api::Executable>> exe =
          client_->Compile(api::ModuleSource::Text(mutant.bytes), options);
      says_why(exe.status(), "api compile");
      if (!exe.ok()) continue;
      std::vector<const Literal*> leaves;
      for (const Literal& argument : *arguments) backend::CollectLiteralLeaves(argument, &leaves);
      std::vector<api::Buffer> buffers;
      for (const Literal* leaf : leaves) {
        absl::StatusOr<api::Buffer> buffer = api::Buffer::CopyFromHost(
            leaf->shape().element_type(), leaf->shape().dimensions(), leaf->raw());
        if (!buffer.ok()) return says_why(buffer.status(), "api buffer");
        buffers.push_back(*std::move(buffer));
      }
      api::ExecuteOptions execute;
      execute.max_while_iterations = kMaxWhileIterations;
      absl::StatusOr<std::vector<api::Buffer>> out = (*exe)->Execute(buffers, execute);
      // The results as one literal of the interpreter's shape, to compare.
      absl::StatusOr<Literal> actual =
          out.ok() ? absl::StatusOr<Literal>(Literal()) : absl::StatusOr<Literal>(out.status());
      if (out.ok() && !expected.ok()) {
        // Only whether it ran matters (check() above).
      } else if (out.ok()) {
        std::vector<Literal*> expected_leaves;
        Literal copy = *expected;
        backend::CollectMutableLeaves(&copy, &expected_leaves);
        bool same_shapes = expected_leaves.size() == out->size();
        for (size_t j = 0; same_shapes && j < out->size(); ++j) {
          const api::Buffer& buffer = (*out)[j];
          same_shapes = buffer.type() == expected_leaves[j]->shape().element_type() &&
                        buffer.dims() == expected_leaves[j]->shape().dimensions();
          if (same_shapes && buffer.byte_size() > 0) {
            std::memcpy(expected_leaves[j]->mutable_raw(), buffer.data(), buffer.byte_size());
          }
        }
        actual = std::move(copy);
        if (!same_shapes) {
          tally.failures.push_back(absl::StrCat(where, ": api ", api::BackendName(backend),
                                                " result shapes differ"));
        }
      }
      if (out.ok()) ++tally.api_ran;
      check(actual, backend == api::Backend::kHost ? "api host" : "api interpreter");
    }
  }

 private:
  std::shared_ptr<host::KernelCompiler> compiler_;
  std::shared_ptr<api::Client> client_;
};

TEST(DynamicMutationTest, NoCrashEveryRejectionSaysWhyBackendsAgree) {
  Runner runner;
  Tally tally;
  for (size_t s = 0; s < sizeof(kSources) / sizeof(kSources[0]); ++s) {
    for (int k = 0; k < kMutantsPerModule; ++k) {
      runner.Run(kSources[s], s * 100000 + k, tally);
    }
  }
  std::printf(
      "dynamic mutants: %d, verified %d, interpreter ran %d, host ran %d, api ran %d, "
      "results compared %d\n",
      tally.mutants, tally.verified, tally.interpreted, tally.host_ran, tally.api_ran,
      tally.compared);
  // The run means something: mutants verify and run on every path.
  EXPECT_GT(tally.interpreted, 300);
  EXPECT_GT(tally.host_ran, 250);
  EXPECT_GT(tally.api_ran, 100);
  EXPECT_GT(tally.compared, 400);
  for (const std::string& failure : tally.failures) ADD_FAILURE() << failure;
}

}  // namespace
}  // namespace hloc::mutation
