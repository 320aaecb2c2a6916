// Dynamic-update-slices in place and loop state reuse on the host
// (HostCompileOptions::update_in_place, buffer_sharing.h): which updates
// share their operand's buffer, how much memory that saves, and that the
// results still match the interpreter, including where sharing must not
// happen (the old value is read later, the operand is an entry parameter).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "backend/common/in_place_test_modules.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_pipeline_modes.h"
#include "backend/host/host_test_util.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/loader.h"
#include "hlo/text_parser.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace {

namespace modules = in_place_testing;

struct Compiled {
  std::unique_ptr<host::HostProgram> program;
  Literal result;
};

// These modules' loops run a handful of trips, few enough for
// WhileLoopUnroller to turn into straight-line code; the tests are about
// the buffers of loop state, so the loops stay loops.
PipelineOptions KeepLoops() {
  PipelineOptions options;
  options.disabled_passes.insert("while-loop-unroller");
  return options;
}

// Compiles `module` (with or without updates in place), runs it on
// `arguments` and checks the result against the interpreter bit for bit
// (libm's transcendental functions, as the interpreter's).
Compiled CompileAndCheck(const HloModule& module, const std::vector<Literal>& arguments,
                         bool in_place) {
  host::HostCompileOptions options;
  options.compiler = host_testing::WithExactMath(host_testing::TestOptions()).compile.compiler;
  options.fallback = InterpreterFallback();
  options.update_in_place = in_place;
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(module, options);
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  runtime::ThreadPool pool(2);
  runtime::ExecuteOptions execute;
  execute.min_parallel_cost = 64;  // Split the small kernels over threads too.
  Compiled out;
  for (int run = 0; run < 2; ++run) {  // The second run reuses the cached arena.
    absl::StatusOr<Literal> actual = (*program)->Execute(arguments, &pool, execute);
    EXPECT_TRUE(actual.ok()) << actual.status();
    if (!actual.ok()) return {};
    out.result = *std::move(actual);
  }
  absl::StatusOr<Literal> expected = Evaluate(module, arguments);
  EXPECT_TRUE(expected.ok()) << expected.status();
  if (expected.ok()) {
    EXPECT_TRUE(host_testing::SameBits(*expected, out.result));
  }
  out.program = *std::move(program);
  return out;
}

std::unique_ptr<HloModule> Parse(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

std::vector<Literal> Arguments(const HloModule& module, uint64_t seed = 7) {
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(module, seed);
  EXPECT_TRUE(args.ok()) << args.status();
  return args.ok() ? *std::move(args) : std::vector<Literal>{};
}

TEST(HostInPlaceTest, ScanUpdatesLoopStateInPlace) {
  std::unique_ptr<HloModule> module = Parse(modules::kScanRows);
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> args = Arguments(*module);
  for (bool fused : {false, true}) {
    std::unique_ptr<HloModule> prepared = module->Clone();
    if (fused) {
      absl::StatusOr<std::unique_ptr<HloModule>> p =
          host_testing::PrepareForMode(*module, host_testing::PipelineMode::kFusion,
                                       KeepLoops());
      ASSERT_TRUE(p.ok()) << p.status();
      prepared = *std::move(p);
    }
    Compiled before = CompileAndCheck(*prepared, args, false);
    Compiled after = CompileAndCheck(*prepared, args, true);
    ASSERT_NE(before.program, nullptr);
    ASSERT_NE(after.program, nullptr);
    const host::HostCompileReport& report = after.program->report();
    SCOPED_TRACE(absl::StrCat(fused ? "fused: " : "unfused: ", report.ToString(),
                              after.program->executable().ThunksToString(),
                              after.program->executable().MemoryReport()));
    EXPECT_EQ(before.program->report().update_kernels, 0);
    EXPECT_EQ(report.update_kernels, 1);
    EXPECT_EQ(report.updates_in_place, 1);
    // The broadcast of zeros is the loop's initial array: the loop takes it over.
    EXPECT_GE(report.loop_states_reused, 1);
    EXPECT_GE(after.program->executable().shared_bytes(), 2 * 64 * 128 * 4);
    // Before: the update's result and the initial array (32 KiB each, at one
    // offset since their lives do not overlap) live in the arena; after,
    // both live in the output.
    const int64_t before_arena = before.program->executable().arena().arena_size;
    const int64_t after_arena = after.program->executable().arena().arena_size;
    std::cout << (fused ? "fused" : "unfused") << " scan before: "
              << before.program->executable().MemoryReport() << "after: "
              << after.program->executable().MemoryReport()
              << after.program->executable().ThunksToString();
    EXPECT_GE(before_arena, 64 * 128 * 4);
    EXPECT_LT(after_arena, 4096);
    EXPECT_NE(after.program->executable().MemoryReport().find("buffers in another's bytes"),
              std::string::npos);
  }
}

TEST(HostInPlaceTest, OldValueStillReadIsNotOverwritten) {
  std::unique_ptr<HloModule> module = Parse(modules::kScanKeepsOld);
  ASSERT_NE(module, nullptr);
  for (host_testing::PipelineMode mode : host_testing::AllPipelineModes()) {
    absl::StatusOr<std::unique_ptr<HloModule>> prepared =
        host_testing::PrepareForMode(*module, mode, KeepLoops());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    Compiled after = CompileAndCheck(**prepared, Arguments(**prepared), true);
    ASSERT_NE(after.program, nullptr);
    // The loop's array is read after the update (passed on as the old value);
    // a parameter is never a donor, so no update happens in place.
    EXPECT_EQ(after.program->report().updates_in_place, 0)
        << host_testing::PipelineModeName(mode) << "\n"
        << after.program->executable().ThunksToString();
  }
}

// Three stacked arrays updated from one row each step: through the host
// pipeline each update stays its own kernel and runs in place (merged into
// one multi-output kernel, every step would rewrite all three arrays).
TEST(HostInPlaceTest, ScanStoringThreeArraysUpdatesEachInPlace) {
  std::unique_ptr<HloModule> module = Parse(modules::kScanStacksThree);
  ASSERT_NE(module, nullptr);
  for (host_testing::PipelineMode mode : host_testing::AllPipelineModes()) {
    absl::StatusOr<std::unique_ptr<HloModule>> prepared =
        host_testing::PrepareForMode(*module, mode, KeepLoops());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    Compiled after = CompileAndCheck(**prepared, Arguments(**prepared), true);
    ASSERT_NE(after.program, nullptr);
    const host::HostCompileReport& report = after.program->report();
    SCOPED_TRACE(absl::StrCat(host_testing::PipelineModeName(mode), "\n", report.ToString(),
                              after.program->executable().ThunksToString()));
    if (mode == host_testing::PipelineMode::kFallbackFusion) continue;
    EXPECT_EQ(report.update_kernels, 3);
    EXPECT_EQ(report.updates_in_place, 3);
  }
}

// Body result leaves the body computes without reading the old state leaf
// live in the state leaf's buffer, and so do those whose kernel reads the
// old value only where it writes the new one, when nothing reads the old
// value later; the others do not.
TEST(HostInPlaceTest, LoopResultNotReadingItsStateLivesInIt) {
  std::unique_ptr<HloModule> module = Parse(modules::kLoopResultNotReadingState);
  ASSERT_NE(module, nullptr);
  for (host_testing::PipelineMode mode : host_testing::AllPipelineModes()) {
    absl::StatusOr<std::unique_ptr<HloModule>> prepared =
        host_testing::PrepareForMode(*module, mode, KeepLoops());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    Compiled before = CompileAndCheck(**prepared, Arguments(**prepared), false);
    Compiled after = CompileAndCheck(**prepared, Arguments(**prepared), true);
    ASSERT_NE(before.program, nullptr);
    ASSERT_NE(after.program, nullptr);
    SCOPED_TRACE(absl::StrCat(host_testing::PipelineModeName(mode), "\n",
                              after.program->report().ToString(),
                              after.program->executable().ThunksToString(),
                              after.program->executable().MemoryReport()));
    EXPECT_EQ(before.program->report().loop_results_in_place, 0);
    // y (leaf 2), and the counter (its kernel reads i only where it writes
    // the new i). x only where its kernel runs after new_y's, the last other
    // reader of x (the fallback-fusion schedule); elsewhere new_y reads the
    // old x after x + 1 is written.
    const bool x_last = mode == host_testing::PipelineMode::kFallbackFusion;
    EXPECT_EQ(after.program->report().loop_results_in_place, x_last ? 3 : 2);
    EXPECT_GE(after.program->executable().shared_bytes(), 1024 * 4);
  }
}

// Loop state leaves a multi-output fusion accumulates into (the gradient
// accumulators of a scan's backward loop): the fusion reads each one only
// where it writes its new value, so it writes each in place and the
// copies back into the loop state do nothing. Changing the fusion so that
// one accumulator is also read for another output, or at other indices,
// keeps that one apart.
TEST(HostInPlaceTest, MultiOutputFusionAccumulatesInPlace) {
  struct Case {
    const char* what;
    std::vector<std::pair<std::string, std::string>> edit;
    int64_t fewer;  // Loop results in place fewer than unedited.
  };
  const std::vector<Case> cases = {
      {"unedited", {}, 0},
      {"acc_a read for output 1 too",
       {{"b = f32[64,32] add(p1, m)", "b = f32[64,32] add(p1, p0)"}},
       1},
      {"acc_a read at other indices",
       {{"a = f32[64,32] add(p0, p2)",
         "r = f32[64,32] reverse(p0), dimensions={0,1}\n  a = f32[64,32] add(r, p2)"}},
       1},
  };
  int64_t unedited = -1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::unique_ptr<HloModule> module =
        Parse(absl::StrReplaceAll(modules::kAccumulatorsInOneFusion, c.edit));
    ASSERT_NE(module, nullptr);
    const std::vector<Literal> args = Arguments(*module);
    Compiled before = CompileAndCheck(*module, args, false);
    Compiled after = CompileAndCheck(*module, args, true);
    ASSERT_NE(before.program, nullptr);
    ASSERT_NE(after.program, nullptr);
    const host::HostCompileReport& report = after.program->report();
    SCOPED_TRACE(absl::StrCat(report.ToString(), after.program->executable().ThunksToString()));
    EXPECT_EQ(before.program->report().loop_results_in_place, 0);
    if (unedited < 0) {
      // The three accumulators (and maybe the counter).
      EXPECT_GE(report.loop_results_in_place, 3);
      unedited = report.loop_results_in_place;
    }
    EXPECT_EQ(report.loop_results_in_place, unedited - c.fewer);
  }
}

TEST(HostInPlaceTest, EntryParameterIsCopiedNotOverwritten) {
  std::unique_ptr<HloModule> module = Parse(modules::kDusParameter);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> args = Arguments(*module);
  // Start indices past either end are clamped, as the interpreter clamps them.
  for (int32_t start : {0, 5, 13, 14, 100, -3}) {
    args[2] = Literal::Scalar(xla::S32, start);
    const Literal original = args[0];
    Compiled after = CompileAndCheck(*module, args, true);
    ASSERT_NE(after.program, nullptr);
    EXPECT_EQ(after.program->report().update_kernels, 1);
    EXPECT_EQ(after.program->report().updates_in_place, 0);
    EXPECT_TRUE(host_testing::SameBits(original, args[0])) << "the parameter was written";
  }
}

TEST(HostInPlaceTest, DeadTemporaryIsUpdatedInPlace) {
  // t is read only by the update: the update writes t's buffer. In the
  // second module t is also returned, so it must keep its old value.
  for (bool live : {false, true}) {
    std::unique_ptr<HloModule> module =
        Parse(live ? modules::kDusLiveTemp : modules::kDusDeadTemp);
    ASSERT_NE(module, nullptr);
    std::vector<Literal> args = Arguments(*module);
    args[2] = Literal::Scalar(xla::S32, 9);
    Compiled after = CompileAndCheck(*module, args, true);
    ASSERT_NE(after.program, nullptr);
    EXPECT_EQ(after.program->report().update_kernels, 1);
    EXPECT_EQ(after.program->report().updates_in_place, live ? 0 : 1)
        << after.program->executable().ThunksToString();
  }
}

TEST(HostInPlaceTest, FusionReadingTheTargetElsewhereWritesEverything) {
  // The update is a slice of the target itself: the fusion reads the target
  // at other indices, so its kernel must not leave it unread.
  std::unique_ptr<HloModule> module = Parse(modules::kDusReadsTarget);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(host::UpdateInPlaceParameter(*module->FindComputation("fused")), -1);
  std::vector<Literal> args = Arguments(*module);
  args[1] = Literal::Scalar(xla::S32, 5);
  Compiled after = CompileAndCheck(*module, args, true);
  ASSERT_NE(after.program, nullptr);
  EXPECT_EQ(after.program->report().update_kernels, 0);
}

TEST(HostInPlaceTest, FusedUpdateWritesOnlyTheUpdate) {
  // A fusion computing its update from other parameters: the kernel's work
  // items are the update's elements, and the dead operand is reused.
  std::unique_ptr<HloModule> module = Parse(modules::kDusFused);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(host::UpdateInPlaceParameter(*module->FindComputation("fused")), 0);
  std::vector<Literal> args = Arguments(*module);
  args[2] = Literal::Scalar(xla::S32, 200);
  Compiled after = CompileAndCheck(*module, args, true);
  ASSERT_NE(after.program, nullptr);
  EXPECT_EQ(after.program->report().updates_in_place, 1);
  const std::string thunks = after.program->executable().ThunksToString();
  EXPECT_NE(thunks.find("kernel %f(b3, b1, b2, b4) items=128"), std::string::npos) << thunks;
  EXPECT_NE(thunks.find("b4 shares b3's bytes"), std::string::npos) << thunks;
}

TEST(HostInPlaceTest, AccumulationIntoAWindowUpdatesInPlace) {
  // Each fusion reads the array only in the window it writes: three update
  // kernels, the first in the negated temporary's bytes and each next in
  // the previous result's. Starts past the ends clamp alike for the read and
  // the write.
  std::unique_ptr<HloModule> module = Parse(modules::kDusAccumulatesWindow);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(host::UpdateInPlaceParameter(*module->FindComputation("fused")), 0);
  std::vector<Literal> args = Arguments(*module);
  for (int32_t start : {0, 3, 20, 60, -5}) {
    SCOPED_TRACE(start);
    args[2] = Literal::Scalar(xla::S32, start);
    Compiled after = CompileAndCheck(*module, args, true);
    ASSERT_NE(after.program, nullptr);
    EXPECT_EQ(after.program->report().update_kernels, 3);
    EXPECT_EQ(after.program->report().updates_in_place, 3)
        << after.program->executable().ThunksToString();
  }
}

// Compiles `text`, checks the input_output_alias pairs the report accepts,
// and runs it with donated arguments: the result must match the interpreter
// and, where aliased, live in the donated argument's memory.
void CheckDonation(absl::string_view text, int64_t expected_aliases, int32_t start) {
  std::unique_ptr<HloModule> module = Parse(text);
  ASSERT_NE(module, nullptr);
  host::HostCompileOptions options;
  options.compiler = host_testing::SharedCompiler();
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(*module, options);
  ASSERT_TRUE(program.ok()) << program.status();
  const host::HostCompileReport& report = (*program)->report();
  EXPECT_EQ(static_cast<int64_t>(report.aliased_outputs.size()), expected_aliases)
      << report.ToString();
  EXPECT_EQ(report.alias_refusals.size() + report.aliased_outputs.size(), 1u) << report.ToString();
  std::vector<Literal> args = Arguments(*module);
  args.back() = Literal::Scalar(xla::S32, start);  // Every test module ends with the index.
  absl::StatusOr<Literal> expected = Evaluate(*module, args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  runtime::ThreadPool pool(2);
  // Not donated: the arguments stay as they were.
  const std::vector<Literal> kept = args;
  absl::StatusOr<Literal> plain = (*program)->Execute(args, &pool);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(host_testing::SameBits(*expected, *plain));
  for (size_t i = 0; i < args.size(); ++i) EXPECT_TRUE(host_testing::SameBits(kept[i], args[i]));
  const uint8_t* donated_bytes = args[0].raw();
  absl::StatusOr<Literal> donated = (*program)->ExecuteDonating(std::move(args), &pool);
  ASSERT_TRUE(donated.ok()) << donated.status();
  EXPECT_TRUE(host_testing::SameBits(*expected, *donated));
  EXPECT_EQ(donated->raw() == donated_bytes, expected_aliases == 1);
}

// In a ThunksToString listing: the buffer whose bytes kernel `name`'s
// output (its last buffer) lives in, "b<N>".
std::string StorageOf(const std::string& thunks, const std::string& name) {
  const size_t line = thunks.find("kernel " + name + "(");
  if (line == std::string::npos) return "";
  const size_t close = thunks.find(')', line);
  const size_t last = thunks.rfind('b', close);
  const std::string buffer = thunks.substr(last, close - last);
  const size_t shares = thunks.find(buffer + " shares ");
  if (shares == std::string::npos) return buffer;
  const size_t root = shares + buffer.size() + 8;
  return thunks.substr(root, thunks.find('\'', root) - root);
}

TEST(HostInPlaceTest, ElementwiseKernelWritesInTheTemporaryItReads) {
  // Softmax as JAX lowers it, compiled as is (one kernel per op): each
  // elementwise kernel may write in the bytes of a temporary it reads only
  // where it writes, once nothing reads that temporary later (mb -> d -> e
  // -> q). When the exp is an output too, the quotient must not overwrite
  // it: CompileAndCheck compares every output bit for bit.
  const std::string softmax = R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[64,256] broadcast(m), dimensions={0}
  d = f32[64,256] subtract(x, mb)
  e = f32[64,256] exponential(d)
  zero = f32[] constant(0)
  s = f32[64] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[64,256] broadcast(s), dimensions={0}
  q = f32[64,256] divide(e, sb)
  ROOT r = ROOT_SHAPE
})";
  for (bool exp_is_output : {false, true}) {
    SCOPED_TRACE(exp_is_output);
    std::string text = softmax;
    const std::string root = exp_is_output ? "(f32[64,256], f32[64,256]) tuple(q, e)"
                                           : "f32[64,256] copy(q)";
    text.replace(text.find("ROOT_SHAPE"), 10, root);
    std::unique_ptr<HloModule> module = Parse(text);
    ASSERT_NE(module, nullptr);
    Compiled out = CompileAndCheck(*module, Arguments(*module), true);
    ASSERT_NE(out.program, nullptr);
    const host::HostCompileReport& report = out.program->report();
    const std::string thunks = out.program->executable().ThunksToString();
    EXPECT_EQ(report.elementwise_in_place, 3) << thunks;
    // The exp's bytes hold the quotient only while the exp is no output.
    EXPECT_EQ(StorageOf(thunks, "%q") == StorageOf(thunks, "%e"), !exp_is_output) << thunks;
  }
}

TEST(HostInPlaceTest, DonatedParameterHoldsTheUpdatedOutput) {
  CheckDonation(modules::kDonatedUpdate,
                1, 17);
}

TEST(HostInPlaceTest, DonatedLoopStateIsScannedInPlace) {
  // The scan's array starts as the donated parameter: the loop state, the
  // in-place update and the output all use its memory.
  CheckDonation(modules::kDonatedScan,
                1, 3);
}

TEST(HostInPlaceTest, AliasRefusedWhenTheParameterIsReadLate) {
  // reverse reads the parameter while writing the output: they cannot share.
  CheckDonation(modules::kDonatedReverse,
                0, 0);
}

TEST(HostInPlaceTest, DonatedParameterHoldsAnElementwiseResult) {
  // The last kernel reading the parameter reads it only where it writes.
  CheckDonation(modules::kDonatedElementwise, 1, 0);
  CheckDonation(modules::kDonatedElementwiseFusion, 1, 0);
  // A fusion reading it elsewhere too (through a reverse) may not.
  CheckDonation(modules::kDonatedFusionReadsElsewhere, 0, 0);
}

TEST(HostInPlaceTest, BadAliasIsAnError) {
  std::unique_ptr<HloModule> module = Parse(modules::kBadAlias);
  ASSERT_NE(module, nullptr);
  host::HostCompileOptions options;
  options.compiler = host_testing::SharedCompiler();
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(*module, options);
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("input_output_alias"), absl::string_view::npos)
      << program.status();
}

// `path` relative to the workspace, under bazel test or from the checkout.
std::string DataPath(absl::string_view path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir != nullptr && workspace != nullptr) {
    return absl::StrCat(srcdir, "/", workspace, "/", path);
  }
  return std::string(path);
}

TEST(HostInPlaceTest, DusScanBenchmarkModule) {
  // The benchmark module: a 1 MiB array updated one 1 KiB row per step.
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      LoadModuleFromFile(DataPath("backend/host/testdata/dus_scan.hlo"));
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::unique_ptr<HloModule>> prepared =
      host_testing::PrepareForMode(**module, host_testing::PipelineMode::kFusion);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const std::vector<Literal> args = Arguments(**prepared);
  Compiled before = CompileAndCheck(**prepared, args, false);
  Compiled after = CompileAndCheck(**prepared, args, true);
  ASSERT_NE(before.program, nullptr);
  ASSERT_NE(after.program, nullptr);
  EXPECT_EQ(after.program->report().update_kernels, 1);
  EXPECT_EQ(after.program->report().updates_in_place, 1);
  std::cout << "dus_scan before: " << before.program->executable().MemoryReport()
            << "dus_scan after: " << after.program->executable().MemoryReport();
  EXPECT_GE(before.program->executable().arena().arena_size, 1024 * 256 * 4);
  EXPECT_LT(after.program->executable().arena().arena_size, 64 * 1024);
}

TEST(HostInPlaceTest, CumsumScanZooModel) {
  absl::StatusOr<LoadedSnapshot> snapshot =
      LoadSnapshotFromFile(DataPath("tests/jax/zoo/cumsum_scan.snapshot.pb"));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  absl::StatusOr<std::unique_ptr<HloModule>> prepared =
      host_testing::PrepareForMode(*snapshot->module, host_testing::PipelineMode::kFusion);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Compiled before = CompileAndCheck(**prepared, snapshot->arguments, false);
  Compiled after = CompileAndCheck(**prepared, snapshot->arguments, true);
  ASSERT_NE(before.program, nullptr);
  ASSERT_NE(after.program, nullptr);
  ASSERT_TRUE(snapshot->result.has_value());
  EXPECT_TRUE(CompareLiterals(*snapshot->result, after.result, Tolerance{1e-4, 1e-5}).ok);
  const runtime::Executable& b = before.program->executable();
  const runtime::Executable& a = after.program->executable();
  std::cout << "cumsum_scan before: " << b.MemoryReport() << b.ThunksToString()
            << "cumsum_scan after: " << a.MemoryReport() << a.ThunksToString();
  // The scanned f32[32,8] output is updated in place, one row per iteration,
  // and the loop takes over the zeros it starts from.
  EXPECT_EQ(after.program->report().updates_in_place, 1);
  EXPECT_GE(after.program->report().loop_states_reused, 1);
  EXPECT_LE(a.arena().arena_size + 32 * 8 * 4, b.arena().arena_size);
}

}  // namespace
}  // namespace hloc
