// Tiled transpose kernels on the host (transpose_kernel_emitter.cc) against
// the interpreter, bit for bit: 2-D, batched 3-D and 4-D NHWC <-> NCHW
// transposes in f32, bf16 and s8 (and f64) at sizes that are not multiples
// of the tile, with elementwise producers and consumers fused around them, split
// across threads; and the transposes that must stay loop kernels. Also
// bitcasts whose layouts make them transposes (as in XLA's optimized
// modules), with and without the host pipeline.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_test_util.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

using host_testing::ExpectClose;
using host_testing::ExpectExact;
using host_testing::ExpectExactAfterPipeline;
using host_testing::RandomArgs;
using host_testing::TestOptions;

// The strategy the host compiler picks for instruction `name` of `hlo`.
std::string StrategyOf(absl::string_view hlo, absl::string_view name) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  host::HostCompileOptions options;
  options.compiler = host_testing::SharedCompiler();
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(**module, options);
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return "";
  const std::string prefix = absl::StrCat("%", name, ": ");
  for (const std::string& line : (*program)->report().strategies) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return "(no kernel)";
}

// A module with one transpose `in` -> `out` of `dims`.
std::string TransposeModule(const std::string& in, const std::string& out,
                            const std::string& dims) {
  return absl::StrCat("HloModule m\nENTRY e {\n  p = ", in, " parameter(0)\n  ROOT t = ", out,
                      " transpose(p), dimensions={", dims, "}\n}\n");
}

void ExpectTiled(const std::string& hlo, absl::string_view name = "t") {
  SCOPED_TRACE(hlo);
  EXPECT_EQ(StrategyOf(hlo, name), "transpose");
  ExpectExact(hlo, RandomArgs(hlo));
}

TEST(HostTransposeTest, TwoDimensional) {
  // Output rows longer than the loop kernel handles well (kMaxLoopRow), in
  // tiles cut by the edges both ways.
  for (const char* type : {"f32", "bf16", "s8"}) {
    ExpectTiled(TransposeModule(absl::StrCat(type, "[270,67]"), absl::StrCat(type, "[67,270]"),
                                "1,0"));
    ExpectTiled(TransposeModule(absl::StrCat(type, "[300,257]"), absl::StrCat(type, "[257,300]"),
                                "1,0"));
  }
  // Whole tiles only (64 x 64 for 4-byte types), one past a tile, the
  // smallest tiled width, and 32 x 32 tiles of an 8-byte type.
  ExpectTiled(TransposeModule("f32[320,64]", "f32[64,320]", "1,0"));
  ExpectTiled(TransposeModule("f32[257,65]", "f32[65,257]", "1,0"));
  ExpectTiled(TransposeModule("s32[260,16]", "s32[16,260]", "1,0"));
  ExpectTiled(TransposeModule("f64[270,40]", "f64[40,270]", "1,0"));
  // Predicates in the tile buffer (host kernels have no complex types).
  ExpectTiled(TransposeModule("pred[270,40]", "pred[40,270]", "1,0"));
}

TEST(HostTransposeTest, Batched) {
  for (const char* type : {"f32", "bf16", "s8"}) {
    ExpectTiled(TransposeModule(absl::StrCat(type, "[3,270,50]"),
                                absl::StrCat(type, "[3,50,270]"), "0,2,1"));
  }
  // The input's minor dimension moves to the front; the batch dimension
  // lies between the tiled ones.
  ExpectTiled(TransposeModule("f32[20,3,41]", "f32[41,3,20]", "2,1,0"));
  ExpectTiled(TransposeModule("s32[20,30,40]", "s32[40,20,30]", "2,0,1"));
  // Dimensions of size 1 are skipped when choosing the tiled pair.
  ExpectTiled(TransposeModule("f32[300,1,70,1]", "f32[1,70,1,300]", "3,2,1,0"));
}

TEST(HostTransposeTest, NhwcAndNchw) {
  for (const char* type : {"f32", "bf16", "s8"}) {
    // NHWC -> NCHW: tiles of C x W.
    ExpectTiled(TransposeModule(absl::StrCat(type, "[2,7,20,40]"),
                                absl::StrCat(type, "[2,40,7,20]"), "0,3,1,2"));
    // NCHW -> NHWC with more channels than kMaxLoopRow: tiles of W x C.
    ExpectTiled(TransposeModule(absl::StrCat(type, "[1,300,3,20]"),
                                absl::StrCat(type, "[1,3,20,300]"), "0,2,3,1"));
  }
}

TEST(HostTransposeTest, FusedElementwiseAround) {
  // Producers before the transpose (at the input index), consumers after it
  // (at the output index), another operand read at the output index, and a
  // convert to a narrower type.
  const std::string hlo = R"(
HloModule m
scale_transpose_add {
  x = f32[270,45] parameter(0)
  y = f32[45,270] parameter(1)
  c = f32[] constant(1.5)
  cb = f32[270,45] broadcast(c), dimensions={}
  m = f32[270,45] multiply(x, cb)
  n = f32[270,45] negate(m)
  t = f32[45,270] transpose(n), dimensions={1,0}
  s = f32[45,270] add(t, y)
  ROOT r = bf16[45,270] convert(s)
}
ENTRY e {
  a = f32[270,45] parameter(0)
  b = f32[45,270] parameter(1)
  ROOT f = bf16[45,270] fusion(a, b), kind=kLoop, calls=scale_transpose_add
})";
  ExpectTiled(hlo, "f");

  // A transcendental before and after (libm against the interpreter: close,
  // not bitwise), in a batched 3-D s8 -> f32 fusion.
  const std::string transcendental = R"(
HloModule m
exp_transpose_tanh {
  x = s8[4,300,33] parameter(0)
  v = f32[4,300,33] convert(x)
  k = f32[] constant(0.05)
  kb = f32[4,300,33] broadcast(k), dimensions={}
  w = f32[4,300,33] multiply(v, kb)
  e = f32[4,300,33] exponential(w)
  t = f32[4,33,300] transpose(e), dimensions={0,2,1}
  ROOT h = f32[4,33,300] tanh(t)
}
ENTRY e {
  a = s8[4,300,33] parameter(0)
  ROOT f = f32[4,33,300] fusion(a), kind=kLoop, calls=exp_transpose_tanh
})";
  EXPECT_EQ(StrategyOf(transcendental, "f"), "transpose");
  ExpectClose(transcendental, RandomArgs(transcendental));
}

TEST(HostTransposeTest, MultipleOutputs) {
  // Both outputs have the transposed dimensions; one is the transpose
  // itself, the other reads it and a broadcast.
  const std::string hlo = R"(
HloModule m
two_outputs {
  x = f32[2,7,20,40] parameter(0)
  q = f32[40] parameter(1)
  t = f32[2,40,7,20] transpose(x), dimensions={0,3,1,2}
  qb = f32[2,40,7,20] broadcast(q), dimensions={1}
  d = f32[2,40,7,20] subtract(t, qb)
  ROOT r = (f32[2,40,7,20], f32[2,40,7,20]) tuple(t, d)
}
ENTRY e {
  a = f32[2,7,20,40] parameter(0)
  b = f32[40] parameter(1)
  ROOT f = (f32[2,40,7,20], f32[2,40,7,20]) fusion(a, b), kind=kLoop, calls=two_outputs
})";
  ExpectTiled(hlo, "f");
}

TEST(HostTransposeTest, SplitAcrossThreads) {
  // Many tiles with two threads and a low split threshold (TestOptions):
  // every range boundary must fall between tiles without gaps or overlaps.
  ExpectTiled(TransposeModule("f32[300,257]", "f32[257,300]", "1,0"));
  ExpectTiled(TransposeModule("bf16[5,300,130]", "bf16[5,130,300]", "0,2,1"));
}

TEST(HostTransposeTest, LoopKernelsWhereTilingDoesNotApply) {
  // The minor dimension stays in place: rows are copied contiguously.
  const std::string keeps_minor = TransposeModule("f32[30,40,50]", "f32[40,30,50]", "1,0,2");
  EXPECT_EQ(StrategyOf(keeps_minor, "t"), "loop");
  ExpectExact(keeps_minor, RandomArgs(keeps_minor));
  // Output rows of at most kMaxLoopRow elements when q is the dimension
  // just before a: consecutive rows reuse the same input lines.
  const std::string short_rows = TransposeModule("f32[67,45]", "f32[45,67]", "1,0");
  EXPECT_EQ(StrategyOf(short_rows, "t"), "loop");
  ExpectExact(short_rows, RandomArgs(short_rows));
  const std::string to_nhwc = TransposeModule("f32[2,40,7,20]", "f32[2,7,20,40]", "0,2,3,1");
  EXPECT_EQ(StrategyOf(to_nhwc, "t"), "loop");
  ExpectExact(to_nhwc, RandomArgs(to_nhwc));
  // Too narrow to tile: NHWC -> NCHW with three channels.
  const std::string narrow = TransposeModule("f32[2,30,30,3]", "f32[2,3,30,30]", "0,3,1,2");
  EXPECT_EQ(StrategyOf(narrow, "t"), "loop");
  ExpectExact(narrow, RandomArgs(narrow));
  // The output reads the transpose at another index (a reversed copy).
  const std::string reversed = R"(
HloModule m
transpose_reverse {
  x = f32[40,50] parameter(0)
  t = f32[50,40] transpose(x), dimensions={1,0}
  ROOT r = f32[50,40] reverse(t), dimensions={0}
}
ENTRY e {
  a = f32[40,50] parameter(0)
  ROOT f = f32[50,40] fusion(a), kind=kLoop, calls=transpose_reverse
})";
  EXPECT_EQ(StrategyOf(reversed, "f"), "loop");
  ExpectExact(reversed, RandomArgs(reversed));
}

TEST(HostTransposeTest, SameResultsWithoutTiling) {
  // The compiler option that turns tiling off gives loop kernels and the
  // same bits.
  const std::string hlo = TransposeModule("f32[270,67]", "f32[67,270]", "1,0");
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> args = RandomArgs(hlo);
  Literal results[2];
  for (int tiled = 0; tiled < 2; ++tiled) {
    RunOnHostOptions options = TestOptions();
    options.compile.compiler = nullptr;
    options.compile.kernel.tiled_transposes = tiled != 0;
    absl::StatusOr<Literal> result = RunOnHost(**module, args, options);
    ASSERT_TRUE(result.ok()) << result.status();
    results[tiled] = *std::move(result);
  }
  EXPECT_TRUE(host_testing::SameBits(results[0], results[1]));
}

// A bitcast reinterprets memory as its layouts arrange it; hloc stores
// arrays row-major, so these are transposes (the weight gradient of a
// convolution as XLA:CPU optimizes it gave permuted values when they were
// read as reshapes). Bit for bit with the interpreter, compiled as given
// (the elemental emitter and the program builder) and after the host
// pipeline (LayoutBitcastExpander).
TEST(HostTransposeTest, BitcastsWhoseLayoutsMoveElements) {
  const std::string top_level = R"(
HloModule m
ENTRY e {
  x = f32[2,3,3,4]{3,2,1,0} parameter(0)
  disguised = f32[3,3,2,4]{3,1,0,2} bitcast(x)
  copied = f32[3,3,2,4]{3,2,1,0} copy(disguised)
  y = f32[60,70]{1,0} parameter(1)
  flipped = s32[70,60]{0,1} bitcast(y)
  z = bf16[9,9]{1,0} parameter(2)
  square = bf16[9,9]{0,1} bitcast(z)
  ROOT t = (f32[3,3,2,4], f32[3,3,2,4], s32[70,60], bf16[9,9]) tuple(disguised, copied, flipped, square)
})";
  // XLA:CPU's weight gradient of a 3x3 convolution, cut down.
  const std::string fused = R"(
HloModule m
%wrapped_copy_computation (param_0.11: f32[3,3,2,4]) -> f32[3,3,2,4] {
  %param_0.11 = f32[3,3,2,4]{3,1,0,2} parameter(0)
  ROOT %copy.7 = f32[3,3,2,4]{3,2,1,0} copy(%param_0.11)
}
%fused_computation (param_0.1: f32[1,6,6,4]) -> f32[6,6,1,4] {
  %param_0.1 = f32[1,6,6,4]{3,2,1,0} parameter(0)
  %bitcast.1 = f32[6,6,1,4]{3,1,0,2} bitcast(%param_0.1)
  ROOT %copy.4 = f32[6,6,1,4]{3,2,1,0} copy(%bitcast.1)
}
%inner (p: f32[2,3,3,4]) -> f32[3,3,2,4] {
  %p = f32[2,3,3,4]{3,2,1,0} parameter(0)
  %b = f32[3,3,2,4]{3,1,0,2} bitcast(%p)
  %e = f32[3,3,2,4]{3,1,0,2} negate(%b)
  ROOT %c = f32[3,3,2,4]{3,2,1,0} copy(%e)
}
ENTRY %main (g: f32[2,3,3,4], a: f32[1,6,6,4]) -> (f32[3,3,2,4], f32[6,6,1,4], f32[3,3,2,4]) {
  %g = f32[2,3,3,4]{3,2,1,0} parameter(0)
  %bitcast.2 = f32[3,3,2,4]{3,1,0,2} bitcast(%g)
  %wrapped_copy = f32[3,3,2,4]{3,2,1,0} fusion(%bitcast.2), kind=kLoop, calls=%wrapped_copy_computation
  %a = f32[1,6,6,4]{3,2,1,0} parameter(1)
  %bitcast_copy_fusion = f32[6,6,1,4]{3,2,1,0} fusion(%a), kind=kLoop, calls=%fused_computation
  %inside = f32[3,3,2,4]{3,2,1,0} fusion(%g), kind=kLoop, calls=%inner
  ROOT %tuple = (f32[3,3,2,4], f32[6,6,1,4], f32[3,3,2,4]) tuple(%wrapped_copy, %bitcast_copy_fusion, %inside)
})";
  for (const std::string* hlo : {&top_level, &fused}) {
    SCOPED_TRACE(*hlo);
    const std::vector<Literal> args = RandomArgs(*hlo);
    ExpectExact(*hlo, args);
    ExpectExactAfterPipeline(*hlo, args);
  }
}

}  // namespace
}  // namespace hloc
