// UpcastDotsForHostGemm: which dots become f32 dots between converts, and
// that the rewritten module, compiled for the host, runs those dots on
// oneDNN's f32 matmul and matches the interpreter on the original module
// (bit for bit for s8 dots, which are exact in f32 up to K = 1024).
#include "backend/host/dot_upcasting.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/host_test_util.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/gemm_kernel.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace {

std::unique_ptr<HloModule> Parse(absl::string_view hlo) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

int CountOpcode(const HloModule& module, HloOpcode opcode, PrimitiveType type) {
  int n = 0;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      n += i->opcode() == opcode && i->shape().IsArray() && i->shape().element_type() == type;
    }
  }
  return n;
}

TEST(UpcastDotsTest, RewritesHalfAndShortS8DotsOnly) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
ENTRY e {
  a = bf16[4,8] parameter(0)
  b = bf16[8,3] parameter(1)
  h = f16[4,8] parameter(2)
  g = f16[8,3] parameter(3)
  x = s8[4,1024] parameter(4)
  y = s8[1024,3] parameter(5)
  u = s8[4,1025] parameter(6)
  v = s8[1025,3] parameter(7)
  d0 = bf16[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[4,3] dot(h, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = s32[4,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = s32[4,3] dot(u, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (bf16[4,3], f32[4,3], s32[4,3], s32[4,3]) tuple(d0, d1, d2, d3)
})");
  ASSERT_NE(module, nullptr);
  host::UpcastDotsForHostGemm pass;
  absl::StatusOr<bool> changed = pass.Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const std::string text = PrintModule(*module);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kDot, xla::F32), 3) << text;
  // K = 1025 could round in f32: that dot keeps its integer form.
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kDot, xla::S32), 1) << text;
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kDot, xla::BF16), 0) << text;
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kConvert, xla::F32), 6) << text;
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kConvert, xla::BF16), 1) << text;
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kConvert, xla::S32), 1) << text;
  // Running again finds nothing to do.
  absl::StatusOr<bool> again = pass.Run(*module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST(UpcastDotsTest, TypesTheLibraryHasStay) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
ENTRY e {
  a = bf16[4,8] parameter(0)
  b = bf16[8,3] parameter(1)
  ROOT d = bf16[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(module, nullptr);
  host::UpcastOptions options;
  options.upcast_bf16 = false;
  host::UpcastDotsForHostGemm pass(options);
  absl::StatusOr<bool> changed = pass.Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

// `hlo` on the interpreter with random arguments (from `seed`), then through
// the whole host pipeline and compiled; no interpreter op may remain.
struct PipelineRun {
  std::unique_ptr<HloModule> module;
  std::vector<Literal> args;
  Literal expected;
  std::unique_ptr<host::HostProgram> program;
};
void CompileThroughHostPipeline(absl::string_view hlo, uint64_t seed, PipelineRun* run) {
  run->module = Parse(hlo);
  ASSERT_NE(run->module, nullptr);
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(*run->module, seed);
  ASSERT_TRUE(args.ok()) << args.status();
  run->args = *std::move(args);
  absl::StatusOr<Literal> expected = Evaluate(*run->module, run->args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  run->expected = *std::move(expected);
  ASSERT_TRUE(host::OptimizeForHost(*run->module, host::HostPipelineOptions{}).ok());
  host::HostCompileOptions options;
  options.compiler = host_testing::SharedCompiler();
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(*run->module, options);
  ASSERT_TRUE(program.ok()) << program.status();
  run->program = *std::move(program);
  EXPECT_TRUE(run->program->report().interpreter_ops.empty()) << run->program->report().ToString();
}

// As XLA:CPU leaves a bf16 model on a CPU without bf16 matmuls: f32 dots of
// bf16 values converted (also with the rows regrouped after the convert).
// Where bf16 is native they become bf16 dots with an f32 result (the same
// value); a dot with one f32 operand, or f16 ones, stays. With bf16 upcast
// nothing narrows.
constexpr char kUpcastByAnotherCompiler[] = R"(
HloModule m
ENTRY e {
  a = bf16[2,16,64] parameter(0)
  b = bf16[64,24] parameter(1)
  ca = f32[2,16,64] convert(a)
  cb = f32[64,24] convert(b)
  d0 = f32[2,16,24] dot(ca, cb), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  f = f32[64,24] parameter(2)
  d1 = f32[2,16,24] dot(ca, f), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  h = f16[16,64] parameter(3)
  ch = f32[16,64] convert(h)
  d2 = f32[16,16] dot(ch, ch), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  rows = f32[32,64] reshape(ca)
  d3 = f32[32,24] dot(rows, cb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (f32[2,16,24], f32[2,16,24], f32[16,16], f32[32,24]) tuple(d0, d1, d2, d3)
})";

TEST(UpcastDotsTest, Bf16DotsUpcastByAnotherCompilerNarrowWhereNative) {
  std::unique_ptr<HloModule> module = Parse(kUpcastByAnotherCompiler);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(*module, 3);
  ASSERT_TRUE(args.ok()) << args.status();
  absl::StatusOr<Literal> expected = Evaluate(*module, *args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  host::UpcastOptions native;
  native.upcast_bf16 = false;
  native.upcast_f16 = false;
  host::UpcastDotsForHostGemm pass(native);
  absl::StatusOr<bool> changed = pass.Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const HloInstruction* d0 = module->entry()->root()->operand(0);
  ASSERT_EQ(d0->opcode(), HloOpcode::kDot) << PrintModule(*module);
  EXPECT_EQ(d0->operand(0)->shape().element_type(), xla::BF16);
  EXPECT_EQ(d0->operand(1)->shape().element_type(), xla::BF16);
  EXPECT_EQ(d0->shape().element_type(), xla::F32);
  EXPECT_EQ(module->entry()->root()->operand(1)->operand(1)->shape().element_type(), xla::F32);
  EXPECT_EQ(module->entry()->root()->operand(2)->operand(0)->opcode(), HloOpcode::kConvert);
  const HloInstruction* d3 = module->entry()->root()->operand(3);
  EXPECT_EQ(d3->operand(0)->opcode(), HloOpcode::kReshape);
  EXPECT_EQ(d3->operand(0)->shape().element_type(), xla::BF16);
  // The interpreter gives the narrowed module the same result, bit for bit.
  absl::StatusOr<Literal> narrowed = Evaluate(*module, *args);
  ASSERT_TRUE(narrowed.ok()) << narrowed.status();
  ComparisonReport same = CompareLiterals(*expected, *narrowed, Tolerance{0, 0});
  EXPECT_TRUE(same.ok) << same.ToString();
  absl::StatusOr<bool> again = pass.Run(*module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);

  std::unique_ptr<HloModule> upcasting = Parse(kUpcastByAnotherCompiler);
  host::UpcastDotsForHostGemm upcast;
  absl::StatusOr<bool> untouched = upcast.Run(*upcasting);
  ASSERT_TRUE(untouched.ok());
  EXPECT_FALSE(*untouched);
}

// Through the host pipeline on this CPU: a native bf16 matmul runs the
// narrowed dot (else the f32 one runs as it came); either way the result is
// the interpreter's.
TEST(UpcastDotsTest, Bf16DotsUpcastByAnotherCompilerOnThisCpu) {
  PipelineRun run;
  ASSERT_NO_FATAL_FAILURE(CompileThroughHostPipeline(kUpcastByAnotherCompiler, 4, &run));
  const host::HostCompileReport& report = run.program->report();
  int bf16_calls = 0;
  for (const std::string& call : report.onednn_calls) {
    bf16_calls += absl::StrContains(call, "bf16->f32");
  }
  EXPECT_EQ(bf16_calls, host::HostUpcastOptions().upcast_bf16 ? 0 : 2) << report.ToString();
  runtime::ThreadPool pool(2);
  absl::StatusOr<Literal> actual = run.program->Execute(run.args, &pool);
  ASSERT_TRUE(actual.ok()) << actual.status();
  ComparisonReport comparison = CompareLiterals(run.expected, *actual, Tolerance{1e-5, 1e-5});
  EXPECT_TRUE(comparison.ok) << comparison.ToString();
}

// Runs `hlo` in the interpreter, then upcasts, compiles for the host and
// runs it there; expects `onednn_f32` oneDNN f32 matmuls and results within
// `tolerance` of the interpreter's.
void ExpectUpcastMatches(absl::string_view hlo, int onednn_f32, const Tolerance& tolerance) {
  std::unique_ptr<HloModule> module = Parse(hlo);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(*module, 11);
  ASSERT_TRUE(args.ok()) << args.status();
  absl::StatusOr<Literal> expected = Evaluate(*module, *args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  host::UpcastDotsForHostGemm pass;
  ASSERT_TRUE(pass.Run(*module).ok());
  host::HostCompileOptions options;
  options.compiler = host_testing::SharedCompiler();
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program = host::CompileForHost(*module, options);
  ASSERT_TRUE(program.ok()) << program.status();
  const host::HostCompileReport& report = (*program)->report();
  int f32_calls = 0;
  for (const std::string& call : report.onednn_calls) {
    f32_calls += absl::StrContains(call, "f32->f32");
  }
  EXPECT_EQ(f32_calls, onednn_f32) << report.ToString() << PrintModule(*module);
  EXPECT_TRUE(report.interpreter_ops.empty()) << report.ToString();
  runtime::ThreadPool pool(2);
  absl::StatusOr<Literal> actual = (*program)->Execute(*args, &pool);
  ASSERT_TRUE(actual.ok()) << actual.status();
  ComparisonReport comparison = CompareLiterals(*expected, *actual, tolerance);
  EXPECT_TRUE(comparison.ok) << comparison.ToString();
}

TEST(UpcastDotsTest, S8DotIsExactThroughF32Matmul) {
  ExpectUpcastMatches(R"(
HloModule m
ENTRY e {
  x = s8[33,1024] parameter(0)
  y = s8[1024,40] parameter(1)
  ROOT d = s32[33,40] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                      1, Tolerance{0, 0});
}

TEST(UpcastDotsTest, Bf16AndF16DotsThroughF32Matmul) {
  ExpectUpcastMatches(R"(
HloModule m
ENTRY e {
  a = bf16[2,16,64] parameter(0)
  b = bf16[64,24] parameter(1)
  q = bf16[2,4,16,8] parameter(2)
  k = bf16[2,4,16,8] parameter(3)
  h = f16[16,32] parameter(4)
  g = f16[32,8] parameter(5)
  d0 = bf16[2,16,24] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  d1 = bf16[2,4,16,16] dot(q, k), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}
  d2 = f16[16,8] dot(h, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (bf16[2,16,24], bf16[2,4,16,16], f16[16,8]) tuple(d0, d1, d2)
})",
                      3, Tolerance{1e-2, 1e-2});
}

// Through the whole host pipeline: where the integer GEMM is vectorized, s8
// dots are not upcast (any K, also past f32's exact 1024) and stay out of
// fusions, so each runs as a library call; results are bit for bit the
// interpreter's, including sums that wrap past the s32 range.
TEST(UpcastDotsTest, S8DotsOnTheIntegerGemm) {
  const char* const kModule = R"(
HloModule m
ENTRY e {
  x = s8[37,1024] parameter(0)
  y = s8[1024,45] parameter(1)
  d = s32[37,45] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  two = s32[] constant(2)
  twos = s32[37,45] broadcast(two), dimensions={}
  scaled = s32[37,45] multiply(d, twos)
  u = s8[9,2049] parameter(2)
  v = s8[5,2049] parameter(3)
  long = s32[9,5] dot(u, v), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  p = s8[3,70,20] parameter(4)
  q = s8[3,33,70] parameter(5)
  batched = s32[3,20,33] dot(p, q), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  w = s8[70,300] parameter(6)
  z = s8[530,300] parameter(7)
  wide = s32[70,530] dot(w, z), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  zt = s8[300,530] parameter(8)
  wide_rows = s32[70,530] dot(w, zt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (s32[37,45], s32[9,5], s32[3,20,33], s32[70,530], s32[70,530]) tuple(scaled, long, batched, wide, wide_rows)
})";
  PipelineRun run;
  ASSERT_NO_FATAL_FAILURE(CompileThroughHostPipeline(kModule, 5, &run));
  const HloModule* module = run.module.get();
  const host::HostCompileReport& report = run.program->report();
  if (eval::GemmS8IsVectorized()) {
    EXPECT_EQ(CountOpcode(*module, HloOpcode::kConvert, xla::F32), 0) << PrintModule(*module);
    int entry_dots = 0;
    for (const HloInstruction* i : module->entry()->instructions()) {
      entry_dots += i->opcode() == HloOpcode::kDot;
    }
    EXPECT_EQ(entry_dots, 5) << PrintModule(*module);
    EXPECT_GE(report.library_calls, 5) << report.ToString();
  }
  // 2 and 3 threads split the [70,530] products into column blocks (the last
  // one shorter), over a transposed and a row-major B.
  for (int threads : {1, 2, 3}) {
    runtime::ThreadPool pool(threads);
    absl::StatusOr<Literal> actual = run.program->Execute(run.args, &pool);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_TRUE(host_testing::SameBits(run.expected, *actual));
  }
}

}  // namespace
}  // namespace hloc
