// Every runnable module of XLA's test corpus ($HLOC_CORPUS_DIR/xla and
// /xla2023) on the host backend, in each pipeline mode (fusion on, fusion
// off, fallback fusion; see host_pipeline_modes.h), compared with the
// reference interpreter on the same random arguments.
//
// A module is skipped, with the reason counted, when it does not verify,
// uses collectives, async ops, infeed/outfeed or other side effects the
// host cannot run, draws random numbers (rng: nondeterministic), has
// arguments or results too large for a test, or when the interpreter itself
// cannot run it or takes too long (the interpreter defines the right
// answer). Ops with no host kernel run through the interpreter fallback; the
// test counts the modules that needed it, per opcode. One test per corpus
// file, so Bazel shards them;
// each shard prints its tally per mode at the end.
#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_pipeline_modes.h"
#include "backend/host/host_test_util.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace {

using host_testing::PipelineMode;

constexpr int64_t kMaxArgumentBytes = int64_t{64} << 20;
constexpr int64_t kMaxResultBytes = int64_t{64} << 20;
constexpr double kMaxInterpreterSeconds = 2.0;
constexpr int64_t kMaxWhileIterations = 100000;

std::string CorpusDir() {
  const char* dir = std::getenv("HLOC_CORPUS_DIR");
  return dir == nullptr ? "" : dir;
}

// "xla/FILE.hlo" for every corpus file, sorted.
std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  const std::string root = CorpusDir();
  if (root.empty()) return files;
  for (const char* sub : {"xla", "xla2023"}) {
    DIR* dir = opendir((root + "/" + sub).c_str());
    if (dir == nullptr) continue;
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (absl::EndsWith(name, ".hlo")) files.push_back(absl::StrCat(sub, "/", name));
    }
    closedir(dir);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Counts per mode, over all files this shard ran.
struct ModeTally {
  int ran = 0, matched = 0, used_fallback = 0;
  std::map<std::string, int> fallback_ops;  // opcode -> modules
  std::vector<std::string> failures;
};
struct Tally {
  int modules = 0, runnable = 0;
  std::map<std::string, int> skipped;  // reason -> modules
  std::map<PipelineMode, ModeTally> modes;
};
Tally& GlobalTally() {
  static Tally* tally = new Tally();
  return *tally;
}

// Why the host cannot be asked to run `module` at all, or "".
std::string UnsupportedReason(const HloModule& module) {
  std::string reason;
  for (const HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](HloInstruction* i) {
      if (!reason.empty()) return;
      const HloOpcode op = i->opcode();
      if (op == HloOpcode::kRng || op == HloOpcode::kRngGetAndUpdateState) {
        reason = "random numbers (rng)";
      } else if (IsAsyncOrCommunication(op) || op == HloOpcode::kAllReduce ||
                 op == HloOpcode::kAllGather || op == HloOpcode::kAllToAll ||
                 op == HloOpcode::kReduceScatter || op == HloOpcode::kCollectivePermute ||
                 op == HloOpcode::kPartitionId || op == HloOpcode::kReplicaId) {
        reason = absl::StrCat("collective, async or feed op (", HloOpcodeName(op), ")");
      }
    });
  }
  return reason;
}

// The longest sum of products in `module` (dot contraction, convolution
// window times input features); 1 when there is none.
int64_t LongestContraction(const HloModule& module) {
  int64_t longest = 1;
  for (const HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](HloInstruction* i) {
      if (i->opcode() == HloOpcode::kDot && i->operand_count() >= 1) {
        int64_t k = 1;
        const Shape& lhs = i->operand(0)->shape();
        for (int64_t d : i->attrs().dot_dimension_numbers->lhs_contracting_dimensions()) {
          if (d >= 0 && d < lhs.rank()) k *= lhs.dimensions(d);
        }
        longest = std::max(longest, k);
      } else if (i->opcode() == HloOpcode::kConvolution && i->operand_count() >= 2) {
        const Shape& rhs = i->operand(1)->shape();
        const int64_t out_feature =
            i->attrs().convolution_dimension_numbers->kernel_output_feature_dimension();
        if (rhs.IsArray() && out_feature >= 0 && out_feature < rhs.rank() &&
            rhs.dimensions(out_feature) > 0) {
          longest = std::max(longest, rhs.element_count() / rhs.dimensions(out_feature));
        }
      }
    });
  }
  return longest;
}

// Tolerances for host vs interpreter: summation order differs in dots and
// convolutions (the interpreter's blocked GEMM, the host's kernels or
// libraries), so the absolute tolerance grows with the contraction length
// (each f32 addition may round by 2^-24 of partial sums of order one);
// math functions are separate implementations.
Tolerance HostTolerance(PrimitiveType type, int64_t contraction) {
  const double n = static_cast<double>(contraction);
  switch (type) {
    case xla::F64: return Tolerance{1e-9, std::max(1e-10, 1e-15 * n)};
    case xla::F32:
    case xla::C64: return Tolerance{1e-4, std::max(1e-5, 2e-7 * n)};
    case xla::F16: return Tolerance{5e-3, 1e-3};
    case xla::BF16: return Tolerance{2e-2, 1e-2};
    default: return Tolerance{};
  }
}
PrimitiveType WidestFloat(const Shape& shape) {
  if (shape.IsTuple()) {
    PrimitiveType best = xla::PRIMITIVE_TYPE_INVALID;
    for (const Shape& e : shape.tuple_shapes()) {
      const PrimitiveType t = WidestFloat(e);
      // Looser types win: one tolerance covers the whole tuple.
      if (t == xla::BF16 || (t == xla::F16 && best != xla::BF16) ||
          (best == xla::PRIMITIVE_TYPE_INVALID)) {
        best = t;
      }
    }
    return best;
  }
  return shape.element_type();
}

void CheckModule(const std::string& id, const HloModule& module, Tally* tally) {
  ++tally->modules;
  auto skip = [&](const std::string& reason) { ++tally->skipped[reason]; };
  if (!VerifyModule(module).ok()) return skip("does not verify");
  const std::string unsupported = UnsupportedReason(module);
  if (!unsupported.empty()) return skip(unsupported);
  const HloComputation* entry = module.entry();
  if (entry == nullptr || entry->root() == nullptr) return skip("no entry");
  const std::optional<int64_t> result_bytes = entry->root()->shape().CheckedByteSize();
  if (!result_bytes.has_value() || *result_bytes > kMaxResultBytes) {
    return skip("result over 64 MiB");
  }
  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(module, 11);
  if (!arguments.ok()) return skip("no random arguments for its parameter types");
  int64_t bytes = 0;
  for (const Literal& a : *arguments) bytes += a.size_bytes();
  if (bytes > kMaxArgumentBytes) return skip("arguments over 64 MiB");

  EvaluatorOptions evaluator_options;
  evaluator_options.max_while_iterations = kMaxWhileIterations;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Literal> expected = Evaluate(module, *arguments, evaluator_options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!expected.ok()) {
    return skip(absl::IsUnimplemented(expected.status())
                    ? "interpreter: unimplemented (custom-call, ...)"
                    : absl::StrCat("interpreter fails (", absl::StatusCodeToString(
                                                               expected.status().code()),
                                   ")"));
  }
  if (seconds > kMaxInterpreterSeconds) return skip("interpreter takes over 2 s");
  ++tally->runnable;

  const Tolerance tolerance =
      HostTolerance(WidestFloat(expected->shape()), LongestContraction(module));
  static runtime::ThreadPool* pool = new runtime::ThreadPool(2);
  for (PipelineMode mode : host_testing::AllPipelineModes()) {
    ModeTally& counts = tally->modes[mode];
    ++counts.ran;
    const std::string where = absl::StrCat(id, " [", host_testing::PipelineModeName(mode), "]");
    absl::StatusOr<std::unique_ptr<HloModule>> prepared = host_testing::PrepareForMode(module, mode);
    if (!prepared.ok()) {
      counts.failures.push_back(absl::StrCat(where, ": pipeline: ", prepared.status().ToString()));
      continue;
    }
    host::HostCompileOptions options;
    options.compiler = host_testing::SharedCompiler();
    options.fallback = InterpreterFallback();
    absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
        host::CompileForHost(**prepared, options);
    if (!program.ok()) {
      counts.failures.push_back(absl::StrCat(where, ": compile: ", program.status().ToString()));
      continue;
    }
    if ((*program)->report().interpreter_calls > 0) ++counts.used_fallback;
    std::set<std::string> opcodes;
    for (const std::string& op : (*program)->report().fallback_ops) {
      opcodes.insert(op.substr(0, op.find(' ')));
    }
    for (const std::string& op : opcodes) ++counts.fallback_ops[op];
    runtime::ExecuteOptions execute;
    execute.max_while_iterations = kMaxWhileIterations;
    execute.min_parallel_cost = 64;  // Split small kernels too: exercises the pool.
    absl::StatusOr<Literal> actual = (*program)->Execute(*arguments, pool, execute);
    if (!actual.ok()) {
      counts.failures.push_back(absl::StrCat(where, ": run: ", actual.status().ToString()));
      continue;
    }
    ComparisonReport report = CompareLiterals(*expected, *actual, tolerance);
    if (!report.ok) {
      counts.failures.push_back(absl::StrCat(where, ": ", report.ToString()));
      continue;
    }
    ++counts.matched;
  }
}

class HostCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HostCorpusTest, MatchesInterpreter) {
  const std::string path = absl::StrCat(CorpusDir(), "/", GetParam());
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::ostringstream text;
  text << in.rdbuf();
  ParseOptions options;
  options.filename = GetParam();
  std::vector<absl::StatusOr<std::unique_ptr<HloModule>>> modules =
      ParseEachHloModule(text.str(), options);
  Tally& tally = GlobalTally();
  std::map<PipelineMode, size_t> failures_before;
  for (const auto& [mode, counts] : tally.modes) failures_before[mode] = counts.failures.size();
  for (size_t i = 0; i < modules.size(); ++i) {
    if (!modules[i].ok()) {
      ++tally.modules;
      ++tally.skipped["does not parse"];
      continue;
    }
    CheckModule(absl::StrCat(GetParam(), "#", i), **modules[i], &tally);
  }
  for (const auto& [mode, counts] : tally.modes) {
    for (size_t f = failures_before[mode]; f < counts.failures.size(); ++f) {
      ADD_FAILURE() << counts.failures[f];
    }
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char c : info.param) name.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, HostCorpusTest, ::testing::ValuesIn(CorpusFiles()), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HostCorpusTest);

TEST(HostCorpusListTest, FindsCorpus) {
  if (CorpusDir().empty()) GTEST_SKIP() << "HLOC_CORPUS_DIR is not set";
  EXPECT_GE(CorpusFiles().size(), 100u) << CorpusDir();
}

// Prints this shard's tally once all tests ran.
class TallyPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    const Tally& tally = GlobalTally();
    std::cout << "host corpus: " << tally.modules << " modules, " << tally.runnable
              << " runnable\n";
    for (const auto& [reason, count] : tally.skipped) {
      std::cout << "  skipped " << count << ": " << reason << "\n";
    }
    for (const auto& [mode, counts] : tally.modes) {
      std::cout << "  " << host_testing::PipelineModeName(mode) << ": ran " << counts.ran
                << ", matched " << counts.matched << ", failed " << counts.failures.size()
                << ", " << counts.used_fallback << " used the interpreter fallback (";
      const char* separator = "";
      for (const auto& [op, modules] : counts.fallback_ops) {
        std::cout << separator << op << " in " << modules;
        separator = ", ";
      }
      std::cout << ")\n";
    }
  }
};
const ::testing::Environment* const kTallyPrinter =
    ::testing::AddGlobalTestEnvironment(new TallyPrinter);

}  // namespace
}  // namespace hloc
