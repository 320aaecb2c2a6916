// The CUDA backend's compiler in plan mode (no GPU needed): small modules
// through the outline pipeline and CompileForGpu, checking the library
// thunks' parameters (shapes, transposes, batch, epilogue, conv layouts and
// filter relayout), the inlining of calls the libraries cannot take (with
// the reason), control flow, and the errors for ops with no GPU path.
#include "backend/gpu/gpu_compiler.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_library_calls.h"
#include "backend/gpu/gpu_test_modules.h"
#include "backend/gpu/gpu_test_util.h"
#include "backend/common/interpreter_ops.h"
#include "backend/common/op_lowering.h"
#include "gtest/gtest.h"
#include "hlo/custom_call_targets.h"
#include "hlo/text_parser.h"
#include "passes/standard_pipelines.h"

namespace hloc {
namespace gpu {
namespace {

namespace mods = test_modules;

// Parses `text` and runs `pipeline` ("outline" or "default").
std::unique_ptr<HloModule> Prepare(absl::string_view text, const std::string& pipeline,
                                   FusionLedger* ledger = nullptr) {
  return ParseAndRunPipeline(text, pipeline, ledger);
}

std::unique_ptr<GpuProgram> Plan(const HloModule& module,
                                 const GpuProgramOptions& options = PlanOptions()) {
  absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(module, options);
  EXPECT_TRUE(program.ok()) << program.status();
  return program.ok() ? *std::move(program) : nullptr;
}

TEST(GpuCompilerTest, GemmBiasReluMapsToCublasLt) {
  auto module = Prepare(mods::GemmBiasReluModule("m", 8, 32, 64), "outline");
  ASSERT_NE(module, nullptr);
  auto program = Plan(*module);
  ASSERT_NE(program, nullptr);
  const GpuCompileReport& report = program->report();
  ASSERT_EQ(report.gemms.size(), 1u) << program->PlanToString();
  const cuda::GemmConfig& g = report.gemms[0].second;
  EXPECT_EQ(g.ToString(),
            "gemm batch=1 m=8 n=64 k=32 lhs=N rhs=N f32->f32 compute=32F alpha=1 beta=0 "
            "epilogue=bias_relu");
  EXPECT_EQ(report.kernels, 0);
  // lhs, rhs and bias are the entry parameters' buffers 0, 1, 2.
  EXPECT_TRUE(absl::StrContains(program->executable().ThunksToString(), "buffers=(0, 1, 2, 3, 4)"))
      << program->PlanToString();
}

TEST(GpuCompilerTest, GemmTransposesBatchesAndFoldedRows) {
  struct Case {
    std::string dot;
    std::string expected;
  };
  const Case cases[] = {
      {"x = f32[8,32] parameter(0)\n w = f32[64,32] parameter(1)\n"
       " ROOT d = f32[8,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
       "gemm batch=1 m=8 n=64 k=32 lhs=N rhs=T"},
      {"x = f32[32,8] parameter(0)\n w = f32[32,64] parameter(1)\n"
       " ROOT d = f32[8,64] dot(x, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
       "gemm batch=1 m=8 n=64 k=32 lhs=T rhs=N"},
      {"x = f32[4,8,32] parameter(0)\n w = f32[4,32,16] parameter(1)\n"
       " ROOT d = f32[4,8,16] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0},"
       " lhs_contracting_dims={2}, rhs_contracting_dims={1}",
       "gemm batch=4 m=8 n=16 k=32 lhs=N rhs=N"},
      {"x = f32[2,8,32] parameter(0)\n w = f32[32,16] parameter(1)\n"
       " ROOT d = f32[2,8,16] dot(x, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}",
       "gemm batch=1 m=16 n=16 k=32 lhs=N rhs=N"},
      {"x = bf16[8,32] parameter(0)\n w = bf16[32,16] parameter(1)\n"
       " ROOT d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
       "gemm batch=1 m=8 n=16 k=32 lhs=N rhs=N bf16->f32 compute=32F"},
  };
  for (const Case& c : cases) {
    auto module = Prepare(absl::StrCat("HloModule m\nENTRY main {\n ", c.dot, "\n}\n"), "outline");
    ASSERT_NE(module, nullptr);
    auto program = Plan(*module);
    ASSERT_NE(program, nullptr);
    ASSERT_EQ(program->report().gemms.size(), 1u) << c.dot << "\n" << program->PlanToString();
    EXPECT_TRUE(absl::StartsWith(program->report().gemms[0].second.ToString(), c.expected))
        << program->report().gemms[0].second.ToString();
  }
}

TEST(GpuCompilerTest, Tf32OnlyWhenAllowedAndPrecisionIsDefault) {
  const std::string text = R"(
HloModule m
ENTRY main {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  ROOT d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={PRECISION, PRECISION}
})";
  for (bool highest : {false, true}) {
    std::string t = text;
    t.replace(t.find("PRECISION, PRECISION"), 20,
              highest ? "highest, highest" : "default, default");
    auto module = Prepare(t, "outline");
    ASSERT_NE(module, nullptr);
    GpuProgramOptions options = PlanOptions();
    options.library.allow_tf32 = true;
    auto program = Plan(*module, options);
    ASSERT_NE(program, nullptr);
    ASSERT_EQ(program->report().gemms.size(), 1u);
    EXPECT_EQ(program->report().gemms[0].second.allow_tf32, !highest);
  }
}

TEST(GpuCompilerTest, ConvNhwcWithHwioFilterIsRelaidForCudnn) {
  auto module = Prepare(mods::ConvNhwcBiasReluModule("m", 2, 8, 3, 16), "outline");
  ASSERT_NE(module, nullptr);
  auto program = Plan(*module);
  ASSERT_NE(program, nullptr);
  const GpuCompileReport& report = program->report();
  ASSERT_EQ(report.convs.size(), 1u) << program->PlanToString();
  EXPECT_EQ(report.convs[0].second.ToString(),
            "conv2d f32 NHWC filter=OHWI batch=2 in=3 out=16 groups=1 input=8x8 filter=3x3 "
            "output=8x8 stride=1x1 pad=1x1 dilation=1x1 epilogue=bias_relu");
  // One kernel: the HWIO -> OHWI filter transpose, before the cuDNN call.
  EXPECT_EQ(report.kernels, 1);
  const std::string thunks = program->executable().ThunksToString();
  EXPECT_LT(thunks.find("kernel "), thunks.find("cudnn ")) << thunks;
  EXPECT_TRUE(absl::StrContains(report.library[0], "filter_transpose={3,0,1,2}"))
      << report.library[0];
}

TEST(GpuCompilerTest, ConvNchwStridedDilatedGroups) {
  auto module = Prepare(R"(
HloModule m
ENTRY main {
  x = f32[1,8,17,17] parameter(0)
  k = f32[8,2,3,3] parameter(1)
  ROOT conv = f32[1,8,8,7] convolution(x, k), window={size=3x3 stride=2x2 pad=0_0x1_1 rhs_dilate=1x3}, dim_labels=bf01_oi01->bf01, feature_group_count=4
})",
                        "outline");
  ASSERT_NE(module, nullptr);
  auto program = Plan(*module);
  ASSERT_NE(program, nullptr);
  ASSERT_EQ(program->report().convs.size(), 1u) << program->PlanToString();
  EXPECT_EQ(program->report().convs[0].second.ToString(),
            "conv2d f32 NCHW filter=OIHW batch=1 in=8 out=8 groups=4 input=17x17 filter=3x3 "
            "output=8x7 stride=2x2 pad=0x1 dilation=1x3 epilogue=none");
  EXPECT_EQ(program->report().kernels, 0);  // No relayout needed.
}

TEST(GpuCompilerTest, AsymmetricPaddingPadsTheInputFirst) {
  // JAX's SAME padding of an even window: low 0, high 1.
  auto module = Prepare(R"(
HloModule m
ENTRY main {
  x = f32[1,8,8,4] parameter(0)
  k = f32[2,2,4,4] parameter(1)
  ROOT conv = f32[1,8,8,4] convolution(x, k), window={size=2x2 pad=0_1x0_1}, dim_labels=b01f_01io->b01f
})",
                        "outline");
  ASSERT_NE(module, nullptr);
  auto program = Plan(*module);
  ASSERT_NE(program, nullptr);
  const GpuCompileReport& report = program->report();
  ASSERT_EQ(report.convs.size(), 1u) << program->PlanToString();
  EXPECT_EQ(report.convs[0].second.ToString(),
            "conv2d f32 NHWC filter=OHWI batch=1 in=4 out=4 groups=1 input=9x9 filter=2x2 "
            "output=8x8 stride=1x1 pad=0x0 dilation=1x1 epilogue=none");
  EXPECT_TRUE(absl::StrContains(report.library[0], "input_pad=0x0/1x1")) << report.library[0];
  EXPECT_EQ(report.kernels, 2);  // The pad and the filter transpose.
}

TEST(GpuCompilerTest, BatchNormEpilogueFoldsIntoFilterAndBias) {
  auto module = Prepare(R"(
HloModule m
ENTRY main {
  x = f32[1,6,6,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  mean = f32[8] parameter(2)
  scale = f32[8] parameter(3)
  offset = f32[8] parameter(4)
  conv = f32[1,6,6,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  mb = f32[1,6,6,8] broadcast(mean), dimensions={3}
  sub = f32[1,6,6,8] subtract(conv, mb)
  sb = f32[1,6,6,8] broadcast(scale), dimensions={3}
  mul = f32[1,6,6,8] multiply(sub, sb)
  ob = f32[1,6,6,8] broadcast(offset), dimensions={3}
  add = f32[1,6,6,8] add(mul, ob)
  zero = f32[] constant(0)
  zb = f32[1,6,6,8] broadcast(zero), dimensions={}
  ROOT relu = f32[1,6,6,8] maximum(add, zb)
})",
                        "default");
  ASSERT_NE(module, nullptr);
  auto program = Plan(*module);
  ASSERT_NE(program, nullptr);
  const GpuCompileReport& report = program->report();
  // The outliner absorbs batch-norm epilogues into the conv call: one call
  // or this test fails (an outliner regression, not a skip).
  ASSERT_EQ(report.convs.size(), 1u) << "no conv call with a sub/scale epilogue was outlined:\n"
                                     << program->PlanToString();
  EXPECT_EQ(report.convs[0].second.epilogue, cuda::ConvEpilogue::kBiasRelu);
  EXPECT_TRUE(absl::StrContains(report.library[0], "sub=p2 scale=p3 bias=p4")) << report.library[0];
  // Filter transpose+scale, then bias - mean * scale, then cuDNN.
  EXPECT_EQ(report.kernels, 2) << program->PlanToString();
  const std::string thunks = program->executable().ThunksToString();
  EXPECT_LT(thunks.find(".filter"), thunks.find("cudnn ")) << thunks;
}

TEST(GpuCompilerTest, CallsTheLibrariesCannotTakeAreInlinedWithTheReason) {
  // GELU in the erf form: cuBLASLt only has the tanh approximation.
  auto module = Prepare(R"(
HloModule m
ENTRY main {
  x = f32[8,32] parameter(0)
  w = f32[32,64] parameter(1)
  b = f32[64] parameter(2)
  dot = f32[8,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,64] broadcast(b), dimensions={1}
  add = f32[8,64] add(dot, bb)
  half = f32[] constant(0.5)
  hb = f32[8,64] broadcast(half), dimensions={}
  hx = f32[8,64] multiply(add, hb)
  rs = f32[] constant(0.70710678)
  rb = f32[8,64] broadcast(rs), dimensions={}
  xs = f32[8,64] multiply(add, rb)
  e = f32[8,64] erf(xs)
  one = f32[] constant(1)
  ob = f32[8,64] broadcast(one), dimensions={}
  ope = f32[8,64] add(ob, e)
  ROOT g = f32[8,64] multiply(hx, ope)
})",
                        "outline");
  ASSERT_NE(module, nullptr);
  FusionLedger ledger;
  GpuProgramOptions options = PlanOptions();
  options.ledger = &ledger;
  auto program = Plan(*module, options);
  ASSERT_NE(program, nullptr);
  const GpuCompileReport& report = program->report();
  EXPECT_TRUE(report.gemms.empty());
  ASSERT_EQ(report.inlined.size(), 1u) << program->PlanToString();
  EXPECT_TRUE(absl::StrContains(report.inlined[0], "erf form")) << report.inlined[0];
  EXPECT_GE(report.kernels, 1);  // The callee as generated code.
  ASSERT_EQ(ledger.Find("gpu-compiler", "no-gpu-library").size(), 1u) << ledger.ToText();

  // A library that is not available: the gemm runs as generated code.
  auto gemm = Prepare(R"(
HloModule m
ENTRY main {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  ROOT d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                      "outline");
  ASSERT_NE(gemm, nullptr);
  options = PlanOptions();
  options.cublaslt = LibraryUse::kUnavailable;
  program = Plan(*gemm, options);
  ASSERT_NE(program, nullptr);
  EXPECT_TRUE(program->report().gemms.empty());
  ASSERT_EQ(program->report().inlined.size(), 1u);
  EXPECT_TRUE(absl::StrContains(program->report().inlined[0], "cuBLASLt disabled"))
      << program->report().inlined[0];
  EXPECT_GE(program->report().kernels, 1);
}

TEST(GpuCompilerTest, WhileAndConditionalBecomeHostDrivenThunks) {
  // 50 trips: more than WhileLoopUnroller copies, so the loop stays one.
  auto module = Prepare(R"(
HloModule m
cond {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(50)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[16] add(v, v)
  ROOT t = (s32[], f32[16]) tuple(i2, v2)
}
ENTRY main {
  v = f32[16] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[16]) tuple(zero, v)
  w = (s32[], f32[16]) while(t), condition=cond, body=body
  ROOT r = f32[16] get-tuple-element(w), index=1
})",
                        "default");
  ASSERT_NE(module, nullptr);
  auto program = Plan(*module);
  ASSERT_NE(program, nullptr);
  const std::string thunks = program->executable().ThunksToString();
  EXPECT_TRUE(absl::StrContains(thunks, "while %w predicate=")) << thunks;
  EXPECT_FALSE(program->executable().graph_capturable());
}

TEST(GpuCompilerTest, SortTopkAndScatterBecomeKernels) {
  auto module = Prepare(absl::StrCat("HloModule m\n", mods::Compare("less", "f32", "LT"),
                                     mods::Binary("add", "add", "f32"), R"(ENTRY main {
  x = f32[4,16] parameter(0)
  long = f32[10000] parameter(1)
  i = s32[3,1] parameter(2)
  u = f32[3,16] parameter(3)
  s = f32[4,16] sort(x), dimensions={1}, to_apply=less
  sl = f32[10000] sort(long), dimensions={0}, to_apply=less
  t = (f32[4,2], s32[4,2]) topk(x), k=2, largest=true
  tv = f32[4,2] get-tuple-element(t), index=0
  c = (f32[4,3], s32[4,3]) custom-call(x), custom_call_target="TopK"
  cv = f32[4,3] get-tuple-element(c), index=0
  sc = f32[4,16] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT r = (f32[4,16], f32[10000], f32[4,2], f32[4,3], f32[4,16]) tuple(s, sl, tv, cv, sc)
})"),
                        "default");
  ASSERT_NE(module, nullptr);
  auto program = Plan(*module);
  ASSERT_NE(program, nullptr);
  const std::string plan = program->PlanToString();
  EXPECT_EQ(program->report().interpreter_calls, 0) << plan;
  EXPECT_TRUE(absl::StrContains(plan, ": sort-shared")) << plan;
  EXPECT_TRUE(absl::StrContains(plan, "%sl: sort-global")) << plan;
  EXPECT_TRUE(absl::StrContains(plan, "%sl.scratch")) << plan;
  EXPECT_TRUE(absl::StrContains(plan, "%t: topk-shared")) << plan;
  EXPECT_TRUE(absl::StrContains(plan, "%c: topk-shared")) << plan;
  EXPECT_TRUE(absl::StrContains(plan, "%sc: scatter-atomic")) << plan;
  // The scatter's result starts as a copy of its operand.
  const std::string thunks = program->executable().ThunksToString();
  const size_t scatter = thunks.find("kernel %sc ");
  ASSERT_NE(scatter, std::string::npos) << thunks;
  EXPECT_NE(thunks.rfind("copy ", scatter), std::string::npos) << thunks;
  EXPECT_TRUE(program->executable().graph_capturable());
}

// A reduction to few outputs over a long extent is split: the partials
// kernel and its combine kernel launch back to back over the same buffers
// (input, output, scratch).
TEST(GpuCompilerTest, SplitReductionLaunchesTwoKernelsOverOneScratch) {
  auto module =
      Prepare(absl::StrCat("HloModule m\n", mods::Binary("add", "add", "f32"), R"(ENTRY main {
  x = f32[4194304] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[] reduce(x, zero), dimensions={0}, to_apply=add
})"),
              "default");
  ASSERT_NE(module, nullptr);
  auto program = Plan(*module);
  ASSERT_NE(program, nullptr);
  const std::string plan = program->PlanToString();
  EXPECT_EQ(program->report().kernels, 2) << plan;
  EXPECT_TRUE(absl::StrContains(plan, ": row-reduction-split")) << plan;
  EXPECT_TRUE(absl::StrContains(plan, ".combine: reduction-combine")) << plan;
  EXPECT_TRUE(absl::StrContains(plan, ".scratch")) << plan;
  const std::string thunks = program->executable().ThunksToString();
  const size_t first = thunks.find("row-reduction-split");
  const size_t second = thunks.find("reduction-combine");
  ASSERT_NE(first, std::string::npos) << thunks;
  ASSERT_NE(second, std::string::npos) << thunks;
  EXPECT_LT(first, second) << thunks;
  auto buffers = [&](size_t at) {
    const size_t begin = thunks.find("buffers=(", at);
    return thunks.substr(begin, thunks.find(')', begin) - begin);
  };
  EXPECT_EQ(buffers(first), buffers(second)) << thunks;
  EXPECT_TRUE(program->executable().graph_capturable());
}

TEST(GpuCompilerTest, AnnotationCustomCallsAreTheirOperand) {
  // Sharding and placement annotations run as their operand on one device:
  // no interpreter op, no copy.
  auto module = ParseForTest(R"(HloModule m
ENTRY e {
  p = f32[64] parameter(0)
  s = f32[64] custom-call(p), custom_call_target="Sharding", sharding={replicated}
  n = f32[64] negate(s)
  h = f32[64] custom-call(n), custom_call_target="MoveToHost"
  ROOT a = f32[64] custom-call(h), custom_call_target="annotate_device_placement"
})");
  ASSERT_NE(module, nullptr);
  auto program = Plan(*module);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->report().interpreter_calls, 0) << program->PlanToString();
  EXPECT_EQ(program->report().kernels, 1) << program->PlanToString();
  EXPECT_FALSE(absl::StrContains(program->executable().ThunksToString(), "copy"))
      << program->PlanToString();
}

TEST(GpuCompilerTest, BitcastsWhoseLayoutsMoveElementsAreKernels) {
  // A bitcast is a buffer alias where it is a row-major reshape; where its
  // layouts make it a transpose (XLA's optimized modules), it needs a kernel
  // that reads through them, without a pipeline having written it out.
  auto module = ParseForTest(R"(HloModule m
ENTRY e {
  p = f32[2,3,3,4]{3,2,1,0} parameter(0)
  reshaped = f32[6,12]{1,0} bitcast(p)
  disguised = f32[3,3,2,4]{3,1,0,2} bitcast(p)
  ROOT t = (f32[6,12], f32[3,3,2,4]) tuple(reshaped, disguised)
})");
  ASSERT_NE(module, nullptr);
  auto program = Plan(*module);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->report().interpreter_calls, 0) << program->PlanToString();
  EXPECT_EQ(program->report().kernels, 1) << program->PlanToString();
}

TEST(GpuCompilerTest, OpsWithoutAKernelAreInterpreterOpsVisibly) {
  auto module = Prepare(R"(
HloModule m
ENTRY main {
  x = f32[4,4] parameter(0)
  c = f32[4,4] cholesky(x), lower=true
  state = u64[2] parameter(1)
  r = (u64[2], u32[8]) rng-bit-generator(state), algorithm=rng_three_fry
  bits = u32[8] get-tuple-element(r), index=1
  n = f32[4,4] negate(c)
  ROOT t = (f32[4,4], u32[8]) tuple(n, bits)
})",
                        "default");
  ASSERT_NE(module, nullptr);
  auto program = Plan(*module);
  ASSERT_NE(program, nullptr);
  const std::string plan = program->PlanToString();
  EXPECT_EQ(program->report().interpreter_calls, 2) << plan;
  EXPECT_EQ(program->report().host_fallbacks, 2) << plan;  // The former name.
  EXPECT_TRUE(absl::StrContains(plan, "%c (cholesky) runs in the interpreter: no GPU kernel for "
                                      "cholesky"))
      << plan;
  // Every op the op table leaves to the interpreter is one, with the
  // table's reason.
  int table_ops = 0;
  for (const HloInstruction* hlo : module->entry()->instructions()) {
    const backend::OpLowering lowering = backend::LowerOp(*hlo, backend::Target::kCuda);
    if (lowering.kernel || !lowering.supported) continue;
    ++table_ops;
    EXPECT_TRUE(absl::StrContains(
        plan, absl::StrCat("%", hlo->name(), " (", HloOpcodeName(hlo->opcode()),
                           ") runs in the interpreter: ", lowering.reason)))
        << plan;
  }
  EXPECT_EQ(table_ops, 2);
  EXPECT_TRUE(absl::StrContains(program->executable().ThunksToString(), "interpreter %c inputs="))
      << plan;
  // Interpreter ops synchronize: no CUDA graph.
  EXPECT_FALSE(program->executable().graph_capturable());
}

// A custom call to a registered function is a host call of its own, between
// the kernels fused around it (fusion leaves it alone), never an
// interpreter op; the program is not captured into a CUDA graph.
TEST(GpuCompilerTest, RegisteredCustomCallsAreHostCallThunks) {
  const char* text = R"(
HloModule m
ENTRY main {
  x = f32[8] parameter(0)
  e = f32[8] exponential(x)
  l = f32[8] log(e)
  n = s32[] parameter(1)
  c = (f32[8], s32[]) custom-call(l, n), custom_call_target="scale_and_sum", backend_config="3"
  s = f32[8] get-tuple-element(c), index=0
  k = s32[] get-tuple-element(c), index=1
  m = f32[8] multiply(s, s)
  ROOT t = (f32[8], s32[]) tuple(m, k)
})";
  auto module = Prepare(text, "default");
  ASSERT_NE(module, nullptr);
  // Unregistered: a compile error naming the instruction and the target.
  absl::StatusOr<std::unique_ptr<GpuProgram>> refused = CompileForGpu(*module, PlanOptions());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "%c (custom-call)"))
      << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "\"scale_and_sum\""))
      << refused.status();

  CustomCallRegistry registry;
  ASSERT_TRUE(
      registry.Register("scale_and_sum", [](const CustomCallFrame&) { return absl::OkStatus(); })
          .ok());
  GpuProgramOptions options = PlanOptions();
  options.custom_calls = registry.Snapshot();
  auto program = Plan(*module, options);
  ASSERT_NE(program, nullptr);
  const std::string plan = program->PlanToString();
  const std::string thunks = program->executable().ThunksToString();
  EXPECT_EQ(program->report().interpreter_calls, 0) << plan;
  EXPECT_EQ(program->report().library_calls, 1) << plan;
  EXPECT_TRUE(absl::StrContains(plan, "%c custom-call \"scale_and_sum\" -> registered function"))
      << plan;
  // Operand leaves in (l, n), result leaves out (the tuple flattened).
  EXPECT_TRUE(absl::StrContains(thunks, "custom-call %c target=\"scale_and_sum\" inputs=("))
      << thunks;
  EXPECT_FALSE(absl::StrContains(thunks, "interpreter")) << thunks;
  // The kernels before and after it stay kernels of their own.
  EXPECT_GE(program->report().kernels, 2) << plan;
  const size_t call = thunks.find("custom-call %c");
  ASSERT_NE(call, std::string::npos);
  EXPECT_NE(thunks.rfind("kernel ", call), std::string::npos) << thunks;
  EXPECT_NE(thunks.find("kernel ", call), std::string::npos) << thunks;
  EXPECT_FALSE(program->executable().graph_capturable());
}

// An interpreter op's function on host buffers (what InterpreterThunk
// calls between its copies).
TEST(InterpreterOpTest, RunsTheInstructionInTheInterpreter) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m
ENTRY main {
  x = f32[2,2] parameter(0)
  ROOT c = f32[2,2] cholesky(x), lower=true
})");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<runtime::HostFunction> function = backend::MakeInterpreterFunction(
      *(*module)->entry()->root(), backend::ReferenceInterpreter());
  ASSERT_TRUE(function.ok()) << function.status();
  const float x[4] = {4, 2, 2, 5};
  float l[4] = {-1, -1, -1, -1};
  const void* inputs[] = {x};
  void* outputs[] = {l};
  ASSERT_TRUE((*function)(inputs, outputs).ok());
  EXPECT_FLOAT_EQ(l[0], 2);
  EXPECT_FLOAT_EQ(l[2], 1);
  EXPECT_FLOAT_EQ(l[3], 2);

  module = ParseHloModule(R"(
HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="foo"
})");
  ASSERT_TRUE(module.ok()) << module.status();
  function = backend::MakeInterpreterFunction(*(*module)->entry()->root(),
                                              backend::ReferenceInterpreter());
  ASSERT_TRUE(function.ok()) << function.status();
  absl::Status status = (*function)(inputs, outputs);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "foo")) << status;
}

// All-reduce and all-gather-start compile to NCCL thunks
// (gpu_collective_plan_test has the rest of the collectives).
TEST(GpuCompilerTest, CollectivesAreNcclThunks) {
  auto module =
      Prepare(absl::StrCat("HloModule m\n", mods::Binary("add", "add", "f32"), R"(ENTRY main {
  x = f32[16] parameter(0)
  ROOT a = f32[16] all-reduce(x), to_apply=add
})"),
              "default");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*module, PlanOptions());
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->report().collectives, 1);
  const std::string thunks = (*program)->executable().ThunksToString();
  EXPECT_TRUE(absl::StrContains(thunks, "nccl all-reduce %a")) << thunks;
  EXPECT_TRUE(absl::StrContains(thunks, " sum f32 groups={{0}} buffers=")) << thunks;

  module = Prepare(R"(HloModule m, num_partitions=2
ENTRY main {
  x = f32[16] parameter(0)
  s = (f32[16], f32[32]) all-gather-start(x), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  ROOT d = f32[32] all-gather-done(s)
})",
                   "default");
  ASSERT_NE(module, nullptr);
  program = CompileForGpu(*module, PlanOptions());
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(absl::StrContains((*program)->executable().ThunksToString(),
                                "nccl all-gather %s groups={{0,1}}"))
      << (*program)->executable().ThunksToString();
}

// Library calls whose callee is one generated kernel carry that kernel as a
// second alternative of the same step (chosen at load).
TEST(GpuCompilerTest, LibraryCallsAlsoGetAGeneratedAlternative) {
  auto gemm = Prepare(mods::GemmBiasReluModule("m", 8, 32, 64), "outline");
  ASSERT_NE(gemm, nullptr);
  FusionLedger ledger;
  GpuProgramOptions options = PlanOptions();
  options.ledger = &ledger;
  auto program = Plan(*gemm, options);
  ASSERT_NE(program, nullptr);
  const GpuCompileReport& report = program->report();
  ASSERT_EQ(report.alternatives.size(), 1u) << program->PlanToString();
  EXPECT_TRUE(absl::StrContains(report.alternatives[0], "hloc.gemm_bias_relu: cuBLASLt or generated "))
      << report.alternatives[0];
  EXPECT_EQ(report.library_calls, 1);
  EXPECT_EQ(report.kernels, 0);  // The alternative's kernel is not a launch of its own.
  EXPECT_EQ(ledger.Find("gpu-compiler", "library-or-generated").size(), 1u) << ledger.ToText();
  const std::string thunks = program->executable().ThunksToString();
  // Both alternatives under one step: the cuBLASLt call (lhs, rhs, bias,
  // output, workspace) and the kernel (lhs, rhs, bias, the same output).
  const size_t step = thunks.find("alternatives %");
  const size_t library = thunks.find("  library:\n    cublaslt ");
  const size_t generated = thunks.find("  generated:\n    kernel ");
  ASSERT_NE(step, std::string::npos) << thunks;
  ASSERT_NE(library, std::string::npos) << thunks;
  ASSERT_NE(generated, std::string::npos) << thunks;
  EXPECT_LT(step, library);
  EXPECT_LT(library, generated);
  EXPECT_TRUE(absl::StrContains(thunks, "(chosen at load)")) << thunks;
  EXPECT_TRUE(absl::StrContains(thunks, "buffers=(0, 1, 2, 3, 4)")) << thunks;
  EXPECT_TRUE(absl::StrContains(thunks.substr(generated), "buffers=(0, 1, 2, 3)")) << thunks;
  EXPECT_TRUE(program->executable().graph_capturable());

  // Off, or the call is more work than the limit: the library alone.
  for (int variant = 0; variant < 2; ++variant) {
    GpuProgramOptions off = PlanOptions();
    if (variant == 0) off.library.try_generated = false;
    if (variant == 1) off.library.try_generated_max_flops = 1000;  // The gemm is 32768.
    auto alone = Plan(*gemm, off);
    ASSERT_NE(alone, nullptr);
    EXPECT_TRUE(alone->report().alternatives.empty()) << variant;
    EXPECT_EQ(alone->report().library_calls, 1);
    EXPECT_FALSE(absl::StrContains(alone->executable().ThunksToString(), "alternatives"));
  }
  // No library: generated code only, as before.
  GpuProgramOptions no_library = PlanOptions();
  no_library.cublaslt = LibraryUse::kUnavailable;
  auto inlined = Plan(*gemm, no_library);
  ASSERT_NE(inlined, nullptr);
  EXPECT_TRUE(inlined->report().alternatives.empty());
  EXPECT_EQ(inlined->report().inlined.size(), 1u);

  // A convolution: the library alternative keeps its filter relayout kernel
  // before cuDNN; the generated one is the whole callee.
  auto conv = Prepare(mods::ConvNhwcBiasReluModule("m", 2, 8, 3, 16), "outline");
  ASSERT_NE(conv, nullptr);
  program = Plan(*conv);
  ASSERT_NE(program, nullptr);
  ASSERT_EQ(program->report().alternatives.size(), 1u) << program->PlanToString();
  EXPECT_TRUE(absl::StrContains(program->report().alternatives[0], "cuDNN or generated "));
  const std::string conv_thunks = program->executable().ThunksToString();
  const size_t conv_library = conv_thunks.find("  library:\n    kernel ");
  const size_t cudnn = conv_thunks.find("    cudnn ");
  const size_t conv_generated = conv_thunks.find("  generated:\n    kernel ");
  EXPECT_NE(conv_library, std::string::npos) << conv_thunks;
  EXPECT_LT(conv_library, cudnn) << conv_thunks;
  EXPECT_LT(cudnn, conv_generated) << conv_thunks;
  EXPECT_TRUE(absl::StrContains(program->PlanToString(), "  alternatives %"))
      << program->PlanToString();
}

TEST(GpuLibraryCallsTest, CountsTheProductsFlops) {
  LibraryCallPlan gemm;
  gemm.gemm.batch = 2;
  gemm.gemm.m = 8;
  gemm.gemm.n = 16;
  gemm.gemm.k = 32;
  EXPECT_DOUBLE_EQ(LibraryCallFlops(gemm), 2.0 * 2 * 8 * 16 * 32);
  LibraryCallPlan conv;
  conv.library = GpuLibrary::kCudnn;
  conv.conv.batch = 2;
  conv.conv.input_features = 8;
  conv.conv.output_features = 16;
  conv.conv.groups = 2;
  conv.conv.output_spatial = {5, 6};
  conv.conv.filter_spatial = {3, 3};
  EXPECT_DOUBLE_EQ(LibraryCallFlops(conv), 2.0 * 2 * 16 * (8 / 2) * 5 * 6 * 3 * 3);
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
