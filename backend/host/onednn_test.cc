// oneDNN library calls on the host against the interpreter: plain dots and
// convolutions, and composite calls made by the outlining pass (gemm
// variants with bias/relu/GELU epilogues, batched and transposed operands,
// bf16; convolutions in NCHW and NHWC with padding, strides, dilation, groups
// and bias+relu). Each case also checks the compile report: which
// instructions oneDNN runs and which it refused (and why).
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_join.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_test_util.h"
#include "backend/host/onednn_context.h"
#include "backend/host/onednn_library.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "passes/outlining/library_operand_slices.h"
#include "passes/outlining/outline_library_calls.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace {

struct HostRun {
  host::HostCompileReport report;
  std::string module_text;  // After outlining, for failure messages.
};

// Parses `hlo`, optionally outlines library calls, runs it in the
// interpreter and on the host (with `threads` threads; 0: no pool) and
// expects results within `tolerance`.
HostRun CheckAgainstInterpreter(absl::string_view hlo, bool outline,
                                const Tolerance& tolerance = Tolerance{1e-4, 1e-4},
                                int threads = 2) {
  HostRun run;
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return run;
  if (outline) {
    OutlineLibraryCalls pass;
    absl::StatusOr<bool> changed = pass.Run(**module);
    EXPECT_TRUE(changed.ok()) << changed.status();
  }
  run.module_text = PrintModule(**module);
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(**module, 7);
  EXPECT_TRUE(args.ok()) << args.status();
  if (!args.ok()) return run;
  absl::StatusOr<Literal> expected = Evaluate(**module, *args);
  EXPECT_TRUE(expected.ok()) << expected.status();
  host::HostCompileOptions options;
  options.compiler = host_testing::SharedCompiler();
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(**module, options);
  EXPECT_TRUE(program.ok()) << program.status() << "\n" << run.module_text;
  if (!program.ok() || !expected.ok()) return run;
  run.report = (*program)->report();
  std::cout << run.report.ToString();
  std::unique_ptr<runtime::ThreadPool> pool;
  if (threads > 0) pool = std::make_unique<runtime::ThreadPool>(threads);
  for (int repeat = 0; repeat < 2; ++repeat) {  // The second run reuses the primitives.
    absl::StatusOr<Literal> actual = (*program)->Execute(*args, pool.get());
    EXPECT_TRUE(actual.ok()) << actual.status();
    if (!actual.ok()) return run;
    ComparisonReport comparison = CompareLiterals(*expected, *actual, tolerance);
    EXPECT_TRUE(comparison.ok) << comparison.ToString() << "\n"
                               << run.report.ToString() << run.module_text;
  }
  return run;
}

int CountContaining(const std::vector<std::string>& lines, absl::string_view text) {
  int n = 0;
  for (const std::string& line : lines) n += absl::StrContains(line, text);
  return n;
}

// Expects oneDNN to run exactly `n` instructions, each line containing
// `what`, and nothing refused.
// oneDNN has bf16 kernels only on CPUs with AVX-512 BF16/AMX; elsewhere it
// refuses them (the results are still checked against the interpreter).
bool NoBf16Here(const HostRun& run) {
  for (const std::string& refusal : run.report.library_refusals) {
    if (absl::StrContains(refusal, "oneDNN has no") && absl::StrContains(refusal, "bf16")) {
      return true;
    }
  }
  return false;
}

void ExpectOneDnn(const HostRun& run, int n, absl::string_view what) {
  if (NoBf16Here(run)) {
    GTEST_SKIP() << "this CPU's oneDNN has no bf16 kernels: " << run.report.ToString();
  }
  EXPECT_EQ(static_cast<int>(run.report.onednn_calls.size()), n)
      << run.report.ToString() << run.module_text;
  EXPECT_EQ(CountContaining(run.report.onednn_calls, what), n) << run.report.ToString();
  EXPECT_TRUE(run.report.library_refusals.empty()) << run.report.ToString();
}

TEST(OneDnnDotTest, PlainDotsAllOrientations) {
  for (const char* dims : {"lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                           "lhs_contracting_dims={0}, rhs_contracting_dims={0}",
                           "lhs_contracting_dims={1}, rhs_contracting_dims={1}",
                           "lhs_contracting_dims={0}, rhs_contracting_dims={1}"}) {
    SCOPED_TRACE(dims);
    const bool at = absl::StrContains(dims, "lhs_contracting_dims={0}");
    const bool bt = absl::StrContains(dims, "rhs_contracting_dims={1}");
    const std::string hlo = absl::StrCat(R"(
HloModule m
ENTRY e {
  a = f32)", at ? "[48,37]" : "[37,48]", R"( parameter(0)
  b = f32)", bt ? "[29,48]" : "[48,29]", R"( parameter(1)
  ROOT d = f32[37,29] dot(a, b), )", dims, R"(
})");
    HostRun run = CheckAgainstInterpreter(hlo, /*outline=*/false);
    ExpectOneDnn(run, 1, "matmul");
    EXPECT_EQ(CountContaining(run.report.onednn_calls, "A^T"), at ? 1 : 0) << run.report.ToString();
    EXPECT_EQ(CountContaining(run.report.onednn_calls, "B^T"), bt ? 1 : 0) << run.report.ToString();
  }
}

TEST(OneDnnDotTest, BatchedFoldedAndVectorDots) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[3,4,5] parameter(0)
  y = f32[3,6,5] parameter(1)
  bmm = f32[3,4,6] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  p = f32[2,3,7,16] parameter(2)
  q = f32[2,3,16,9] parameter(3)
  bmm2 = f32[2,3,7,9] dot(p, q), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_contracting_dims={2}
  r = f32[2,3,8] parameter(4)
  s = f32[8,5] parameter(5)
  folded = f32[2,3,5] dot(r, s), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  v = f32[32] parameter(6)
  vv = f32[] dot(v, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT out = (f32[3,4,6], f32[2,3,7,9], f32[2,3,5], f32[]) tuple(bmm, bmm2, folded, vv)
})",
                                        /*outline=*/false);
  ExpectOneDnn(run, 4, "matmul");
  EXPECT_EQ(CountContaining(run.report.onednn_calls, "f32->f32 6x7x9x16"), 1)
      << run.report.ToString();
}

TEST(OneDnnDotTest, Bf16DotsAccumulateInF32) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  a = bf16[16,64] parameter(0)
  b = bf16[64,24] parameter(1)
  wide = f32[16,24] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  narrow = bf16[16,24] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (f32[16,24], bf16[16,24]) tuple(wide, narrow)
})",
                                        /*outline=*/false, Tolerance{2e-2, 2e-2});
  ExpectOneDnn(run, 2, "bf16->");
}

TEST(OneDnnDotTest, UnsupportedDotsKeepThePreviousPath) {
  // f64 and integers: oneDNN has neither; non-leading batch dimensions are
  // not one strided matrix per batch.
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  a = f64[8,32] parameter(0)
  b = f64[32,16] parameter(1)
  d64 = f64[8,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f32[4,3,5] parameter(2)
  y = f32[3,5,6] parameter(3)
  mid = f32[3,4,6] dot(x, y), lhs_batch_dims={1}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT out = (f64[8,16], f32[3,4,6]) tuple(d64, mid)
})",
                                        /*outline=*/false);
  EXPECT_TRUE(run.report.onednn_calls.empty()) << run.report.ToString();
  EXPECT_EQ(CountContaining(run.report.library_refusals, "element type f64"), 1)
      << run.report.ToString();
  EXPECT_EQ(CountContaining(run.report.library_refusals, "batch dimensions are not the leading"), 1)
      << run.report.ToString();
}

// f16 needs AVX512-FP16 in oneDNN 2.6: depending on the CPU the dot runs on
// oneDNN or keeps the previous path with oneDNN's refusal in the report.
TEST(OneDnnDotTest, F16DotRunsOrIsRefusedWithAReason) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  a = f16[16,32] parameter(0)
  b = f16[32,8] parameter(1)
  ROOT d = f32[16,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                        /*outline=*/false, Tolerance{1e-2, 1e-2});
  EXPECT_EQ(run.report.onednn_calls.size() + run.report.library_refusals.size(), 1u)
      << run.report.ToString();
  EXPECT_EQ(CountContaining(run.report.library_refusals, "oneDNN has no matmul f16"),
            static_cast<int>(run.report.library_refusals.size()))
      << run.report.ToString();
}

TEST(OneDnnDotTest, RunsWithOtherThreadCountsThanCompiledFor) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  a = f32[64,96] parameter(0)
  b = f32[96,80] parameter(1)
  ROOT d = f32[64,80] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  for (int threads : {0, 1, 3}) {
    SCOPED_TRACE(threads);
    ExpectOneDnn(CheckAgainstInterpreter(hlo, false, Tolerance{1e-4, 1e-4}, threads), 1, "matmul");
  }
}

// Problems large enough to be split over the pool (row blocks of M, a
// shorter last block; batch slices of a convolution, a shorter last slice),
// run with several pool sizes.
TEST(OneDnnSplitTest, SplitMatmulsAndConvolutions) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  a = f32[200,96] parameter(0)
  b = f32[96,72] parameter(1)
  plain = f32[200,72] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  at = f32[96,200] parameter(2)
  transposed = f32[200,72] dot(at, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  x = f32[3,100,64] parameter(3)
  y = f32[3,64,80] parameter(4)
  batched = f32[3,100,80] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  i = f32[11,4,20,20] parameter(5)
  k = f32[8,4,3,3] parameter(6)
  nchw = f32[11,8,20,20] convolution(i, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  j = f32[11,20,20,4] parameter(7)
  l = f32[3,3,4,8] parameter(8)
  nhwc = f32[11,20,20,8] convolution(j, l), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT out = (f32[200,72], f32[200,72], f32[3,100,80], f32[11,8,20,20], f32[11,20,20,8]) tuple(plain, transposed, batched, nchw, nhwc)
})";
  for (int threads : {2, 0, 1, 3}) {
    SCOPED_TRACE(threads);
    HostRun run = CheckAgainstInterpreter(hlo, false, Tolerance{1e-4, 1e-4}, threads);
    EXPECT_EQ(static_cast<int>(run.report.onednn_calls.size()), 5) << run.report.ToString();
    if (host::OneDnnContext::DefaultThreads() > 1) {
      EXPECT_EQ(CountContaining(run.report.onednn_calls, "blocks of"), 3) << run.report.ToString();
      EXPECT_EQ(CountContaining(run.report.onednn_calls, "slices of"), 2) << run.report.ToString();
    }
  }
  // The same through composite calls with epilogues.
  HostRun calls = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[200,96] parameter(0)
  w = f32[96,72] parameter(1)
  b = f32[72] parameter(2)
  d = f32[200,72] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[200,72] broadcast(b), dimensions={1}
  s = f32[200,72] add(d, bb)
  z = f32[] constant(0)
  zb = f32[200,72] broadcast(z), dimensions={}
  g = f32[200,72] maximum(s, zb)
  i = f32[11,20,20,4] parameter(3)
  k = f32[3,3,4,8] parameter(4)
  c = f32[11,20,20,8] convolution(i, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  cb = f32[8] parameter(5)
  cbb = f32[11,20,20,8] broadcast(cb), dimensions={3}
  cs = f32[11,20,20,8] add(c, cbb)
  czb = f32[11,20,20,8] broadcast(z), dimensions={}
  cr = f32[11,20,20,8] maximum(cs, czb)
  ROOT out = (f32[200,72], f32[11,20,20,8]) tuple(g, cr)
})",
                                          /*outline=*/true);
  ExpectOneDnn(calls, 2, "bias relu");
}

// ---- Composite calls made by the outlining pass.

TEST(OneDnnGemmCallTest, GemmBiasRelu) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,24] parameter(1)
  b = f32[24] parameter(2)
  d = f32[8,24] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,24] broadcast(b), dimensions={1}
  s = f32[8,24] add(d, bb)
  z = f32[] constant(0)
  zb = f32[8,24] broadcast(z), dimensions={}
  ROOT r = f32[8,24] maximum(s, zb)
})",
                                        /*outline=*/true);
  ExpectOneDnn(run, 1, "(hloc.gemm_bias_relu): matmul");
  EXPECT_EQ(CountContaining(run.report.onednn_calls, "bias relu"), 1) << run.report.ToString();
}

TEST(OneDnnGemmCallTest, GemmBiasAndPlainGemmTransposed) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[16,40] parameter(0)
  w = f32[24,40] parameter(1)
  b = f32[24] parameter(2)
  d = f32[16,24] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  bb = f32[16,24] broadcast(b), dimensions={1}
  biased = f32[16,24] add(bb, d)
  v = f32[24,8] parameter(3)
  ROOT g = f32[16,8] dot(biased, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                        /*outline=*/true);
  ExpectOneDnn(run, 2, "matmul");
  EXPECT_EQ(CountContaining(run.report.onednn_calls, "(hloc.gemm_bias)"), 1) << run.report.ToString();
  EXPECT_EQ(CountContaining(run.report.onednn_calls, "(hloc.gemm)"), 1) << run.report.ToString();
  EXPECT_EQ(CountContaining(run.report.onednn_calls, "B^T bias"), 1) << run.report.ToString();
}

// GELU in the tanh form (JAX's default) as the outliner recognizes it, on a
// [m,k] x [k,n] dot plus bias.
std::string GemmBiasGeluTanh(int m, int k, int n) {
  return absl::StrReplaceAll(R"(
HloModule m
ENTRY e {
  x = f32[$M,$K] parameter(0)
  w = f32[$K,$N] parameter(1)
  b = f32[$N] parameter(2)
  d = f32[$M,$N] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[$M,$N] broadcast(b), dimensions={1}
  h = f32[$M,$N] add(d, bb)
  h3 = f32[$M,$N] multiply(h, h)
  h3b = f32[$M,$N] multiply(h3, h)
  c = f32[] constant(0.044715)
  cb = f32[$M,$N] broadcast(c), dimensions={}
  t0 = f32[$M,$N] multiply(h3b, cb)
  t1 = f32[$M,$N] add(h, t0)
  k = f32[] constant(0.7978845608)
  kb = f32[$M,$N] broadcast(k), dimensions={}
  t2 = f32[$M,$N] multiply(t1, kb)
  t3 = f32[$M,$N] tanh(t2)
  one = f32[] constant(1)
  oneb = f32[$M,$N] broadcast(one), dimensions={}
  t4 = f32[$M,$N] add(t3, oneb)
  half = f32[] constant(0.5)
  halfb = f32[$M,$N] broadcast(half), dimensions={}
  t5 = f32[$M,$N] multiply(t4, halfb)
  ROOT g = f32[$M,$N] multiply(h, t5)
})",
                             {{"$M", absl::StrCat(m)}, {"$K", absl::StrCat(k)}, {"$N", absl::StrCat(n)}});
}

// GELU in the tanh form and with erf, as the outliner recognizes them. The
// tanh form's GELU runs after the oneDNN primitive (gelu_epilogue.h), not as
// its post-op.
TEST(OneDnnGemmCallTest, GemmBiasGeluBothForms) {
  HostRun tanh_run = CheckAgainstInterpreter(GemmBiasGeluTanh(8, 32, 16), /*outline=*/true);
  ExpectOneDnn(tanh_run, 1, "(hloc.gemm_bias_gelu): matmul");
  EXPECT_EQ(CountContaining(tanh_run.report.onednn_calls, "bias gelu_tanh"), 1)
      << tanh_run.report.ToString() << tanh_run.module_text;
  EXPECT_EQ(CountContaining(tanh_run.report.onednn_calls, "GELU after it"), 1)
      << tanh_run.report.ToString();

  const char* erf_form = R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  b = f32[16] parameter(2)
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,16] broadcast(b), dimensions={1}
  h = f32[8,16] add(d, bb)
  r = f32[] constant(0.7071067812)
  rb = f32[8,16] broadcast(r), dimensions={}
  t0 = f32[8,16] multiply(h, rb)
  t1 = f32[8,16] erf(t0)
  one = f32[] constant(1)
  oneb = f32[8,16] broadcast(one), dimensions={}
  t2 = f32[8,16] add(t1, oneb)
  half = f32[] constant(0.5)
  halfb = f32[8,16] broadcast(half), dimensions={}
  t3 = f32[8,16] multiply(t2, halfb)
  ROOT g = f32[8,16] multiply(h, t3)
})";
  HostRun erf_run = CheckAgainstInterpreter(erf_form, /*outline=*/true);
  if (erf_run.report.onednn_calls.empty()) {
    // The outliner's erf recognition is its business; the host must still
    // compute the right thing.
    GTEST_SKIP() << "the outliner did not take the erf form:\n" << erf_run.module_text;
  }
  ExpectOneDnn(erf_run, 1, "(hloc.gemm_bias_gelu): matmul");
  EXPECT_EQ(CountContaining(erf_run.report.onednn_calls, "bias gelu_erf"), 1)
      << erf_run.report.ToString();
}

// Large enough to split into row blocks on two threads, the last block
// shorter, and n odd so that each block's GELU ends on its scalar tail.
TEST(OneDnnGemmCallTest, GemmBiasGeluTanhInRowBlocks) {
  HostRun run = CheckAgainstInterpreter(GemmBiasGeluTanh(300, 256, 203), /*outline=*/true,
                                        Tolerance{1e-4, 1e-4}, /*threads=*/2);
  ExpectOneDnn(run, 1, "(hloc.gemm_bias_gelu): matmul");
  EXPECT_EQ(CountContaining(run.report.onednn_calls, "rows with several threads"), 1)
      << run.report.ToString();
  EXPECT_EQ(CountContaining(run.report.onednn_calls, "GELU after it"), 1)
      << run.report.ToString();
  HostRun one_thread = CheckAgainstInterpreter(GemmBiasGeluTanh(300, 256, 203), /*outline=*/true,
                                               Tolerance{1e-4, 1e-4}, /*threads=*/1);
  ExpectOneDnn(one_thread, 1, "(hloc.gemm_bias_gelu): matmul");
}

TEST(OneDnnGemmCallTest, BatchedGemmAndBf16GemmBias) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  q = f32[2,4,16,8] parameter(0)
  k = f32[2,4,12,8] parameter(1)
  s = f32[2,4,16,12] dot(q, k), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_contracting_dims={3}
  x = bf16[8,64] parameter(2)
  w = bf16[64,32] parameter(3)
  b = bf16[32] parameter(4)
  d = bf16[8,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = bf16[8,32] broadcast(b), dimensions={1}
  y = bf16[8,32] add(d, bb)
  ROOT out = (f32[2,4,16,12], bf16[8,32]) tuple(s, y)
})",
                                        /*outline=*/true, Tolerance{2e-2, 2e-2});
  ExpectOneDnn(run, 2, "matmul");
  EXPECT_EQ(CountContaining(run.report.onednn_calls, "(hloc.batched_gemm): matmul"), 1)
      << run.report.ToString();
  if (!NoBf16Here(run)) {
    EXPECT_EQ(CountContaining(run.report.onednn_calls, "bf16->bf16 1x8x32x64 bias"), 1)
        << run.report.ToString();
  }
}

// Gemm operands that are contiguous slices of a larger array (JAX's w[e]
// per expert; LibraryOperandSlices moves them into the calls) run as oneDNN
// matmuls reading the array at an offset: no copy kernel, all calls in
// oneDNN, results equal to the interpreter's, with one thread and with row
// blocks on two; a slice of the activations too, and batched gemms.
TEST(OneDnnGemmCallTest, SlicedOperandsReadTheirArrayAtAnOffset) {
  constexpr char kExperts[] = R"(
HloModule m
ENTRY e {
  x = f32[96,64] parameter(0)
  w = f32[3,64,48] parameter(1)
  s0 = f32[1,64,48] slice(w), slice={[0:1], [0:64], [0:48]}
  w0 = f32[64,48] reshape(s0)
  s2 = f32[1,64,48] slice(w), slice={[2:3], [0:64], [0:48]}
  w2 = f32[64,48] reshape(s2)
  xs = f32[40,64] slice(x), slice={[50:90], [0:64]}
  d0 = f32[96,48] dot(x, w0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[40,48] dot(xs, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  q = f32[4,2,16,8] parameter(2)
  k = f32[2,16,8] parameter(3)
  q1 = f32[1,2,16,8] slice(q), slice={[3:4], [0:2], [0:16], [0:8]}
  qr = f32[2,16,8] reshape(q1)
  b = f32[2,16,16] dot(qr, k), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  ROOT t = (f32[96,48], f32[40,48], f32[2,16,16]) tuple(d0, d2, b)
})";
  // Outlined, then the slices moved into the calls (as OptimizeForHost does
  // before fusion; library_operand_slices_test checks the interpreter's bits
  // are unchanged by the move).
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kExperts);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(OutlineLibraryCalls().Run(**module).ok());
  LibraryOperandSlices slices;
  ASSERT_TRUE(slices.Run(**module).ok());
  EXPECT_EQ(slices.operands_moved(), 4);
  const std::string moved = PrintModule(**module);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    HostRun run = CheckAgainstInterpreter(moved, /*outline=*/false, Tolerance{1e-4, 1e-4},
                                          threads);
    ExpectOneDnn(run, 3, "matmul");
    EXPECT_EQ(run.report.kernels, 0) << run.report.ToString();
    // Byte offsets: expert 2 of [3,64,48] f32, rows 50.. of x, batch 3 of q.
    EXPECT_EQ(CountContaining(run.report.onednn_calls, "B at +24576 B"), 1) << run.report.ToString();
    EXPECT_EQ(CountContaining(run.report.onednn_calls, "A at +12800 B"), 1) << run.report.ToString();
    EXPECT_EQ(CountContaining(run.report.onednn_calls, "A at +3072 B"), 1) << run.report.ToString();
  }
}

// A composite whose recorded attributes contradict its body is refused
// (inlined), and a name the host does not implement runs its body.
TEST(OneDnnGemmCallTest, RefusedCompositesRunTheirBodies) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
gemm_body {
  a = f32[8,16] parameter(0)
  b = f32[16,4] parameter(1)
  ROOT d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
other_body {
  a = f32[8,4] parameter(0)
  ROOT n = f32[8,4] negate(a)
}
ENTRY e {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  g = f32[8,4] call(x, w), to_apply=gemm_body, is_composite=true, frontend_attributes={composite.name="hloc.gemm",composite.attributes={alpha = 1.0 : f64, beta = 0.0 : f64, epilogue = "none", lhs_batch_dims = array<i64>, lhs_contracting_dims = array<i64: 0>, rhs_batch_dims = array<i64>, rhs_contracting_dims = array<i64: 0>},composite.version="1"}
  ROOT o = f32[8,4] call(g), to_apply=other_body, is_composite=true, frontend_attributes={composite.name="hloc.something_else",composite.attributes={},composite.version="1"}
})",
                                        /*outline=*/false);
  // The gemm's body dot itself still goes to oneDNN as a plain dot.
  EXPECT_EQ(CountContaining(run.report.library_refusals,
                            "(hloc.gemm): recorded lhs_contracting_dims differ"),
            1)
      << run.report.ToString();
  EXPECT_EQ(CountContaining(run.report.library_refusals, "(hloc.something_else): not a host"), 1)
      << run.report.ToString();
  EXPECT_EQ(CountContaining(run.report.onednn_calls, "(dot): matmul"), 1) << run.report.ToString();
}

TEST(OneDnnGemmCallTest, AlphaIsHonored) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
gemm_body {
  a = f32[8,16] parameter(0)
  b = f32[16,4] parameter(1)
  d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  h = f32[] constant(0.5)
  hb = f32[8,4] broadcast(h), dimensions={}
  ROOT s = f32[8,4] multiply(d, hb)
}
ENTRY e {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  ROOT g = f32[8,4] call(x, w), to_apply=gemm_body, is_composite=true, frontend_attributes={composite.name="hloc.gemm",composite.attributes={alpha = 0.5 : f64, beta = 0.0 : f64, epilogue = "none", lhs_batch_dims = array<i64>, lhs_contracting_dims = array<i64: 1>, rhs_batch_dims = array<i64>, rhs_contracting_dims = array<i64: 0>},composite.version="1"}
})",
                                        /*outline=*/false);
  ExpectOneDnn(run, 1, "alpha=0.5");
}

// ---- Convolutions.

TEST(OneDnnConvolutionTest, PlainConvolutionsInManyForms) {
  const char* cases[] = {
      // NCHW / OIHW, same padding.
      "x = f32[2,8,12,12] parameter(0)\n w = f32[16,8,3,3] parameter(1)\n"
      " ROOT c = f32[2,16,12,12] convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
      "dim_labels=bf01_oi01->bf01",
      // NHWC / HWIO, stride 2, asymmetric padding.
      "x = f32[2,13,11,6] parameter(0)\n w = f32[3,3,6,10] parameter(1)\n"
      " ROOT c = f32[2,7,6,10] convolution(x, w), window={size=3x3 stride=2x2 pad=1_2x1_1}, "
      "dim_labels=b01f_01io->b01f",
      // Kernel dilation.
      "x = f32[1,4,16,16] parameter(0)\n w = f32[8,4,3,3] parameter(1)\n"
      " ROOT c = f32[1,8,12,12] convolution(x, w), window={size=3x3 rhs_dilate=2x2}, "
      "dim_labels=bf01_oi01->bf01",
      // Feature groups (4 groups) and depthwise (NHWC).
      "x = f32[2,8,9,9] parameter(0)\n w = f32[12,2,3,3] parameter(1)\n"
      " ROOT c = f32[2,12,9,9] convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
      "dim_labels=bf01_oi01->bf01, feature_group_count=4",
      "x = f32[2,10,10,8] parameter(0)\n w = f32[3,3,1,8] parameter(1)\n"
      " ROOT c = f32[2,10,10,8] convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
      "dim_labels=b01f_01io->b01f, feature_group_count=8",
      // 1-D and 3-D, and an unusual dimension order.
      "x = f32[3,20,5] parameter(0)\n w = f32[4,5,7] parameter(1)\n"
      " ROOT c = f32[3,17,7] convolution(x, w), window={size=4}, dim_labels=b0f_0io->b0f",
      "x = f32[1,3,6,6,6] parameter(0)\n w = f32[4,3,2,2,2] parameter(1)\n"
      " ROOT c = f32[1,4,5,5,5] convolution(x, w), window={size=2x2x2}, "
      "dim_labels=bf012_oi012->bf012",
      "x = f32[7,2,9,4] parameter(0)\n w = f32[3,9,5,2] parameter(1)\n"
      " ROOT c = f32[5,5,3,2] convolution(x, w), window={size=3x2}, dim_labels=0bf1_0io1->f01b",
  };
  for (const char* body : cases) {
    SCOPED_TRACE(body);
    HostRun run = CheckAgainstInterpreter(absl::StrCat("HloModule m\nENTRY e {\n ", body, "\n}\n"),
                                          /*outline=*/false);
    ExpectOneDnn(run, 1, "convolution");
  }
}

// mobilenet_v2's weight-gradient convolutions (a 7x7 window over a 7x7
// input, batch and features swapped: fb01_io01->01bf) have user layouts
// that only oneDNN's reference code takes directly; that took seconds per
// call. The plain-layout variant with reorders (gemm-based or better) must
// win over it.
TEST(OneDnnConvolutionTest, ReferenceImplementationsLoseToReorderedOnes) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[16,8,7,7] parameter(0)
  g = f32[16,64,7,7] parameter(1)
  ROOT c = f32[1,1,8,64] convolution(x, g), window={size=7x7}, dim_labels=fb01_io01->01bf
})",
                                        /*outline=*/false);
  ExpectOneDnn(run, 1, "convolution");
  EXPECT_EQ(CountContaining(run.report.onednn_calls, "ref"), 0) << run.report.ToString();
}

// Kernel gradients of grouped convolutions (batch_group_count > 1) as
// oneDNN's backward-weights primitive: mobilenet_v2's NCHW depthwise ones
// (stride 1, and stride 2 as rhs dilation with pad 1_0), JAX's NHWC
// depthwise one, and a grouped one with 4 input and 3 output channels per
// group.
TEST(OneDnnConvolutionTest, GroupedWeightGradientsRunOnOneDnn) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[4,8,9,9] parameter(0)
  dy = f32[4,8,9,9] parameter(1)
  dw = f32[3,3,1,8] convolution(x, dy), window={size=9x9 pad=1_1x1_1}, dim_labels=fb01_io01->01bf, batch_group_count=8
  x2 = f32[4,8,10,10] parameter(2)
  dy2 = f32[4,8,5,5] parameter(3)
  dw2 = f32[3,3,1,8] convolution(x2, dy2), window={size=5x5 pad=1_0x1_0 rhs_dilate=2x2}, dim_labels=fb01_io01->01bf, batch_group_count=8
  x3 = f32[2,9,9,8] parameter(4)
  dy3 = f32[2,5,5,8] parameter(5)
  dw3 = f32[3,3,1,8] convolution(x3, dy3), window={size=5x5 pad=1_1x1_1 rhs_dilate=2x2}, dim_labels=f01b_i01o->01bf, batch_group_count=8
  x4 = f32[4,8,6,6] parameter(6)
  dy4 = f32[4,6,6,6] parameter(7)
  dw4 = f32[3,3,4,6] convolution(x4, dy4), window={size=6x6 pad=1_1x1_1}, dim_labels=fb01_io01->01bf, batch_group_count=2
  ROOT out = (f32[3,3,1,8], f32[3,3,1,8], f32[3,3,1,8], f32[3,3,4,6]) tuple(dw, dw2, dw3, dw4)
})",
                                        /*outline=*/false);
  ExpectOneDnn(run, 4, "weight gradient");
  EXPECT_EQ(CountContaining(run.report.onednn_calls, "ref"), 0) << run.report.ToString();
}

// A batch-grouped convolution whose forward convolution would need negative
// padding (its window stride of 2, the forward dilation, leaves the last
// input row unread) stays a generated kernel, with the reason recorded.
TEST(OneDnnConvolutionTest, OtherBatchGroupedConvolutionsAreRefused) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[4,8,10,10] parameter(0)
  dy = f32[4,8,3,3] parameter(1)
  ROOT c = f32[4,4,1,8] convolution(x, dy), window={size=3x3 stride=2x2}, dim_labels=fb01_io01->01bf, batch_group_count=8
})",
                                        /*outline=*/false);
  EXPECT_TRUE(run.report.onednn_calls.empty()) << run.report.ToString();
  EXPECT_EQ(CountContaining(run.report.library_refusals, "skips input"), 1)
      << run.report.ToString();
}

TEST(OneDnnConvolutionTest, Bf16Convolution) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  x = bf16[2,10,10,16] parameter(0)
  w = bf16[3,3,16,16] parameter(1)
  ROOT c = bf16[2,10,10,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})",
                                        /*outline=*/false, Tolerance{3e-2, 3e-2});
  ExpectOneDnn(run, 1, "convolution");
}

TEST(OneDnnConvolutionTest, InputDilationIsRefused) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[2,7,3] parameter(0)
  w = f32[2,3,5] parameter(1)
  ROOT c = f32[2,15,5] convolution(x, w), window={size=2 pad=1_2 lhs_dilate=2}, dim_labels=b0f_0io->b0f
})",
                                        /*outline=*/false);
  EXPECT_TRUE(run.report.onednn_calls.empty()) << run.report.ToString();
  EXPECT_EQ(CountContaining(run.report.library_refusals, "input (lhs) dilation"), 1)
      << run.report.ToString();
}

// Input dilation (JAX's conv_transpose) as oneDNN deconvolutions with the
// kernel reversed: NHWC with the U-Net's 2x2 up-convolution, NCHW with
// unequal dilations and padding, 1-D with kernel dilation.
TEST(OneDnnConvolutionTest, TransposedConvolutionsRunAsDeconvolutions) {
  HostRun run = CheckAgainstInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[2,8,8,16] parameter(0)
  w = f32[2,2,16,8] parameter(1)
  up = f32[2,16,16,8] convolution(x, w), window={size=2x2 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f
  y = f32[2,4,6,5] parameter(2)
  k = f32[3,4,3,3] parameter(3)
  nchw = f32[2,3,12,14] convolution(y, k), window={size=3x3 pad=2_1x1_2 lhs_dilate=2x3}, dim_labels=bf01_oi01->bf01
  z = f32[1,5,3] parameter(4)
  v = f32[3,3,2] parameter(5)
  wide = f32[1,9,2] convolution(z, v), window={size=3 pad=3_1 lhs_dilate=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f
  ROOT out = (f32[2,16,16,8], f32[2,3,12,14], f32[1,9,2]) tuple(up, nchw, wide)
})",
                                        /*outline=*/false);
  ExpectOneDnn(run, 3, "deconvolution");
}

TEST(OneDnnConvolutionTest, ConvBiasReluCallNchwAndNhwc) {
  for (const char* layout : {"nchw", "nhwc"}) {
    SCOPED_TRACE(layout);
    const bool nchw = std::string(layout) == "nchw";
    const std::string hlo = absl::StrCat(R"(
HloModule m
ENTRY e {
  x = f32)", nchw ? "[2,6,11,11]" : "[2,11,11,6]", R"( parameter(0)
  w = f32)", nchw ? "[8,6,3,3]" : "[3,3,6,8]", R"( parameter(1)
  b = f32[8] parameter(2)
  c = f32)", nchw ? "[2,8,6,6]" : "[2,6,6,8]", R"( convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=)",
                                         nchw ? "bf01_oi01->bf01" : "b01f_01io->b01f", R"(
  bb = f32)", nchw ? "[2,8,6,6]" : "[2,6,6,8]", R"( broadcast(b), dimensions={)", nchw ? "1" : "3", R"(}
  s = f32)", nchw ? "[2,8,6,6]" : "[2,6,6,8]", R"( add(c, bb)
  z = f32[] constant(0)
  zb = f32)", nchw ? "[2,8,6,6]" : "[2,6,6,8]", R"( broadcast(z), dimensions={}
  ROOT r = f32)", nchw ? "[2,8,6,6]" : "[2,6,6,8]", R"( maximum(s, zb)
})");
    HostRun run = CheckAgainstInterpreter(hlo, /*outline=*/true);
    ExpectOneDnn(run, 1, "(hloc.conv_bias_relu): convolution");
    EXPECT_EQ(CountContaining(run.report.onednn_calls, "bias relu"), 1) << run.report.ToString();
  }
}

// A primitive call's memory objects are kept per thread and only get a new
// data handle on the next call with the same owner, argument and desc; a
// different desc (an owner address reused by another operation), another
// argument or another thread gets its own object.
TEST(OneDnnThreadMemoryTest, KeepsOneObjectPerOwnerArgumentAndDesc) {
  using dnnl::memory;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const memory::desc rows({4, 8}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc columns({8, 4}, memory::data_type::f32, memory::format_tag::ab);
  std::vector<float> x(32), y(32);
  const int owner = 0;
  memory first = host::ThreadMemory(&owner, DNNL_ARG_SRC, rows, engine, x.data());
  memory again = host::ThreadMemory(&owner, DNNL_ARG_SRC, rows, engine, y.data());
  EXPECT_EQ(first.get(), again.get());
  EXPECT_EQ(again.get_data_handle(), y.data());
  memory other_desc = host::ThreadMemory(&owner, DNNL_ARG_SRC, columns, engine, x.data());
  EXPECT_NE(other_desc.get(), first.get());
  EXPECT_TRUE(other_desc.get_desc() == columns);
  EXPECT_EQ(other_desc.get_data_handle(), x.data());
  memory other_arg = host::ThreadMemory(&owner, DNNL_ARG_DST, columns, engine, y.data());
  EXPECT_NE(other_arg.get(), other_desc.get());
  EXPECT_EQ(other_desc.get_data_handle(), x.data());  // Untouched by the other argument.
  dnnl_memory_t elsewhere = nullptr;
  std::thread thread([&] {
    elsewhere = host::ThreadMemory(&owner, DNNL_ARG_DST, columns, engine, x.data()).get();
  });
  thread.join();
  EXPECT_NE(elsewhere, other_arg.get());
  EXPECT_EQ(other_arg.get_data_handle(), y.data());
}

TEST(HostLibraryCapabilitiesTest, NamesTheGemmAndConvolutionFamilies) {
  const LibraryCapabilities capabilities = host::HostLibraryCapabilities();
  for (const char* name : {"hloc.gemm", "hloc.gemm_bias", "hloc.gemm_bias_relu",
                           "hloc.gemm_bias_gelu", "hloc.batched_gemm", "hloc.conv",
                           "hloc.conv_bias", "hloc.conv_bias_relu", "hloc.conv_sub_scale_bias_relu"}) {
    EXPECT_TRUE(capabilities.Implements(name)) << name;
  }
  for (const char* name : {"hloc.softmax", "hloc.layer_norm", "hloc.attention", "hloc.conv_gelu"}) {
    EXPECT_FALSE(capabilities.Implements(name)) << name;
  }
}

}  // namespace
}  // namespace hloc
