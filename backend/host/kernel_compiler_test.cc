// Tests of the kernel compiler itself: which strategy each kind of
// computation gets, that the O3 pipeline vectorizes the inner loops
// (FileCheck on the optimized IR), and the kernel cache.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "backend/host/build_identity.h"
#include "backend/host/host_compiler.h"
#include "backend/host/kernel_compiler.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

std::unique_ptr<HloModule> Parse(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

std::shared_ptr<host::KernelCompiler> NewCompiler() {
  absl::StatusOr<std::shared_ptr<host::KernelCompiler>> compiler = host::KernelCompiler::Create();
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  return compiler.ok() ? *compiler : nullptr;
}

// Runs LLVM's FileCheck with `checks` over `input`.
::testing::AssertionResult FileCheck(const std::string& input, const std::string& checks) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  if (srcdir == nullptr || tmpdir == nullptr) {
    return ::testing::AssertionFailure() << "TEST_SRCDIR/TEST_TMPDIR unset";
  }
  const std::string input_path = absl::StrCat(tmpdir, "/input.ll");
  const std::string check_path = absl::StrCat(tmpdir, "/checks.txt");
  std::ofstream(input_path) << input;
  std::ofstream(check_path) << checks;
  const std::string command = absl::StrCat(srcdir, "/llvm/bin/FileCheck ", check_path,
                                           " --input-file ", input_path, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return ::testing::AssertionFailure() << "cannot run " << command;
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) return ::testing::AssertionFailure() << output << "\n" << input;
  return ::testing::AssertionSuccess();
}

// Disk-cached kernels are keyed by the build that emitted them: the linker's
// build-id of the object holding the emitter (this test binary).
TEST(BuildIdentity, IsTheLinkersBuildId) {
  const std::string& identity = host::EmitterBuildIdentity();
  ASSERT_EQ(identity.rfind("build-id:", 0), 0u) << identity;
  const std::string hex = identity.substr(9);
  EXPECT_GE(hex.size(), 16u) << identity;
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos) << identity;
  EXPECT_EQ(&identity, &host::EmitterBuildIdentity());
}

constexpr char kKernels[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
elementwise {
  x = f32[64,256] parameter(0)
  y = f32[256] parameter(1)
  b = f32[64,256] broadcast(y), dimensions={1}
  m = f32[64,256] multiply(x, b)
  ROOT r = f32[64,256] add(m, x)
}
elementwise_renamed {
  p = f32[64,256] parameter(0)
  q = f32[256] parameter(1)
  bb = f32[64,256] broadcast(q), dimensions={1}
  mm = f32[64,256] multiply(p, bb)
  ROOT rr = f32[64,256] add(mm, p)
}
rows {
  x = f32[64,256] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
}
columns {
  x = f32[64,256] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[256] reduce(x, zero), dimensions={0}, to_apply=add
}
ENTRY e {
  x = f32[64,256] parameter(0)
  y = f32[256] parameter(1)
  f1 = f32[64,256] fusion(x, y), kind=kLoop, calls=elementwise
  f2 = f32[64,256] fusion(f1, y), kind=kLoop, calls=elementwise_renamed
  row_sums = f32[64] fusion(f2), kind=kInput, calls=rows
  column_sums = f32[256] fusion(f2), kind=kInput, calls=columns
  ROOT t = (f32[64], f32[256]) tuple(row_sums, column_sums)
})";

TEST(KernelCompilerTest, StrategiesAndCache) {
  std::unique_ptr<HloModule> module = Parse(kKernels);
  ASSERT_NE(module, nullptr);
  host::HostCompileOptions options;
  options.compiler = NewCompiler();
  ASSERT_NE(options.compiler, nullptr);
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program = host::CompileForHost(*module, options);
  ASSERT_TRUE(program.ok()) << program.status();
  const host::HostCompileReport& report = (*program)->report();
  EXPECT_EQ(report.fused_kernels, 4);
  EXPECT_EQ(report.library_calls, 0);
  ASSERT_EQ(report.strategies.size(), 4u);
  EXPECT_EQ(report.strategies[0], "%f1: loop");
  EXPECT_EQ(report.strategies[2], "%row_sums: row-reduction");
  EXPECT_EQ(report.strategies[3], "%column_sums: column-reduction");
  // f1 and f2 differ only in names: one kernel serves both.
  host::KernelCompilerStats stats = options.compiler->stats();
  EXPECT_EQ(stats.kernels_compiled, 3);
  EXPECT_EQ(stats.cache_hits, 1);
  // Compiling the module again compiles nothing new.
  ASSERT_TRUE(host::CompileForHost(*module, options).ok());
  EXPECT_EQ(options.compiler->stats().kernels_compiled, 3);
  EXPECT_EQ(options.compiler->stats().cache_hits, 5);
  // The memory report names every temporary.
  EXPECT_NE((*program)->executable().MemoryReport().find("%f1"), std::string::npos);
}

TEST(KernelCompilerTest, InnerLoopsVectorize) {
  std::unique_ptr<HloModule> module = Parse(kKernels);
  ASSERT_NE(module, nullptr);
  std::shared_ptr<host::KernelCompiler> compiler = NewCompiler();
  ASSERT_NE(compiler, nullptr);
  const HloComputation* elementwise = module->FindComputation("elementwise");
  const HloComputation* columns = module->FindComputation("columns");
  ASSERT_NE(elementwise, nullptr);
  ASSERT_NE(columns, nullptr);

  absl::StatusOr<std::string> raw = compiler->EmitIr(*elementwise, /*optimized=*/false);
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_TRUE(FileCheck(*raw, R"(
CHECK: define void @kernel(ptr %0, i64 %1, i64 %2)
CHECK: define internal void @kernel.body(ptr noalias nocapture readonly %0, ptr noalias nocapture readonly %1, ptr noalias nocapture writeonly %2, i64 %3, i64 %4)
CHECK: row.header:
CHECK: col.body:
CHECK: fmul float
CHECK: fadd float
CHECK: store float
)"));
  absl::StatusOr<std::string> optimized = compiler->EmitIr(*elementwise, /*optimized=*/true);
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  EXPECT_TRUE(FileCheck(*optimized, R"(
CHECK: define void @kernel(
CHECK: fmul <{{[0-9]+}} x float>
CHECK: fadd <{{[0-9]+}} x float>
CHECK: store <{{[0-9]+}} x float>
)"));
  absl::StatusOr<std::string> column_ir = compiler->EmitIr(*columns, /*optimized=*/true);
  ASSERT_TRUE(column_ir.ok()) << column_ir.status();
  // Float sums accumulate in double, lanes of a tile side by side.
  EXPECT_TRUE(FileCheck(*column_ir, R"(
CHECK: define void @kernel(
CHECK: fpext <{{[0-9]+}} x float> {{.*}} to <{{[0-9]+}} x double>
CHECK: fadd <{{[0-9]+}} x double>
)"));
  // Row sums too (vector rows): one reassociable accumulator per row that LLVM
  // vectorizes 8 doubles wide, 4 vectors in flight.
  const HloComputation* rows = module->FindComputation("rows");
  ASSERT_NE(rows, nullptr);
  absl::StatusOr<std::string> row_ir = compiler->EmitIr(*rows, /*optimized=*/true);
  ASSERT_TRUE(row_ir.ok()) << row_ir.status();
  EXPECT_TRUE(FileCheck(*row_ir, R"(
CHECK: define void @kernel(
CHECK: fadd reassoc <8 x double> %vec.phi
CHECK: fadd reassoc <8 x double> %vec.phi
CHECK: fadd reassoc <8 x double> %vec.phi
CHECK: fadd reassoc <8 x double> %vec.phi
CHECK: llvm.vector.reduce.fadd.v8f64
)"));
}

// Row max/min (vector rows, reduction_kernel_emitter.cc): float max/min run
// as integer max/min of the floats' ordered keys, plus an integer max of the
// magnitudes that shows a NaN; LLVM vectorizes both 8 wide, 4 vectors in
// flight, f16 on its 16-bit bits as they are (no conversion), and the
// sequential pass for zero or NaN results stays scalar behind a branch.
// Integer max/min vectorize the same way, and a max beside a sum in one
// fusion keeps both vectorized.
TEST(KernelCompilerTest, RowMaxMinLoopsVectorize) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
min_f16 {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT m = f16[] minimum(a, b)
}
max_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
row_max {
  x = f32[64,256] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT m = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max_f32
}
row_min_f16 {
  x = f16[64,256] parameter(0)
  inf = f16[] constant(inf)
  ROOT m = f16[64] reduce(x, inf), dimensions={1}, to_apply=min_f16
}
row_max_s32 {
  x = s32[64,256] parameter(0)
  low = s32[] constant(-2147483648)
  ROOT m = s32[64] reduce(x, low), dimensions={1}, to_apply=max_s32
}
row_max_and_sum {
  x = f32[64,256] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  s = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[64], f32[64]) tuple(m, s)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  ROOT f = f32[64] fusion(x), kind=kInput, calls=row_max
})");
  ASSERT_NE(module, nullptr);
  std::shared_ptr<host::KernelCompiler> compiler = NewCompiler();
  ASSERT_NE(compiler, nullptr);
  auto ir_of = [&](const char* name) -> std::string {
    const HloComputation* computation = module->FindComputation(name);
    EXPECT_NE(computation, nullptr) << name;
    if (computation == nullptr) return "";
    absl::StatusOr<std::string> ir = compiler->EmitIr(*computation, /*optimized=*/true);
    EXPECT_TRUE(ir.ok()) << ir.status();
    return ir.ok() ? *ir : "";
  };
  EXPECT_TRUE(FileCheck(ir_of("row_max"), R"(
CHECK: define void @kernel(
CHECK: vector.body:
CHECK: load <8 x i32>
CHECK-NOT: fcmp
CHECK-COUNT-4: call <8 x i32> @llvm.smax.v8i32(<8 x i32> %vec.phi
CHECK-COUNT-4: call <8 x i32> @llvm.umax.v8i32(<8 x i32> %vec.phi
CHECK: middle.block:
CHECK-DAG: llvm.vector.reduce.smax.v8i32
CHECK-DAG: llvm.vector.reduce.umax.v8i32
CHECK: sequential0.body
)"));
  EXPECT_TRUE(FileCheck(ir_of("row_min_f16"), R"(
CHECK: define void @kernel(
CHECK: vector.body:
CHECK-NOT: half
CHECK-COUNT-4: call <8 x i16> @llvm.smin.v8i16(<8 x i16> %vec.phi
CHECK: middle.block:
CHECK: llvm.vector.reduce.smin.v8i16
)"));
  EXPECT_TRUE(FileCheck(ir_of("row_max_s32"), R"(
CHECK: define void @kernel(
CHECK: vector.body:
CHECK-COUNT-4: call <8 x i32> @llvm.smax.v8i32(<8 x i32> %vec.phi
CHECK: llvm.vector.reduce.smax.v8i32
)"));
  EXPECT_TRUE(FileCheck(ir_of("row_max_and_sum"), R"(
CHECK: define void @kernel(
CHECK: vector.body:
CHECK-DAG: fadd reassoc <8 x double> %vec.phi
CHECK-DAG: call <8 x i32> @llvm.smax.v8i32(<8 x i32> %vec.phi
CHECK: middle.block:
CHECK-DAG: llvm.vector.reduce.fadd.v8f64
CHECK-DAG: llvm.vector.reduce.smax.v8i32
)"));
}

// exp, tanh, logistic, expm1 and log in f32 and bf16 are inline polynomials
// (backend/llvm/polynomial_math.h), so their loops vectorize and call no
// libm; with exact_math they call libm (and stay scalar).
TEST(KernelCompilerTest, TranscendentalLoopsVectorize) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
math {
  x = f32[64,256] parameter(0)
  e = f32[64,256] exponential(x)
  t = f32[64,256] tanh(e)
  l = f32[64,256] logistic(t)
  m = f32[64,256] exponential-minus-one(l)
  ROOT g = f32[64,256] log(m)
}
silu_bf16 {
  x = bf16[64,256] parameter(0)
  s = bf16[64,256] logistic(x)
  ROOT r = bf16[64,256] multiply(x, s)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  ROOT f = f32[64,256] fusion(x), kind=kLoop, calls=math
})");
  ASSERT_NE(module, nullptr);
  for (const char* name : {"math", "silu_bf16"}) {
    SCOPED_TRACE(name);
    const HloComputation* computation = module->FindComputation(name);
    ASSERT_NE(computation, nullptr);
    std::shared_ptr<host::KernelCompiler> compiler = NewCompiler();
    ASSERT_NE(compiler, nullptr);
    absl::StatusOr<std::string> ir = compiler->EmitIr(*computation, /*optimized=*/true);
    ASSERT_TRUE(ir.ok()) << ir.status();
    EXPECT_TRUE(FileCheck(*ir, R"(
CHECK: define void @kernel(
CHECK-NOT: call {{.*}}@{{(exp|expm1|tanh|log)f}}(
CHECK: fmul <{{[0-9]+}} x float>
CHECK-NOT: call {{.*}}@{{(exp|expm1|tanh|log)f}}(
)"));
    host::KernelCompilerOptions exact;
    exact.exact_math = true;
    absl::StatusOr<std::shared_ptr<host::KernelCompiler>> libm = host::KernelCompiler::Create(exact);
    ASSERT_TRUE(libm.ok()) << libm.status();
    absl::StatusOr<std::string> libm_ir = (*libm)->EmitIr(*computation, /*optimized=*/true);
    ASSERT_TRUE(libm_ir.ok()) << libm_ir.status();
    EXPECT_TRUE(FileCheck(*libm_ir, R"(
CHECK: call {{.*}}@expf(
)"));
  }
}

TEST(KernelCompilerTest, FusionsWithNonElementalOpsAreSplit) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
sorted {
  x = f32[16] parameter(0)
  ROOT s = f32[16] sort(x), dimensions={0}, to_apply=less
}
ENTRY e {
  x = f32[16] parameter(0)
  ROOT f = f32[16] fusion(x), kind=kLoop, calls=sorted
})");
  ASSERT_NE(module, nullptr);
  std::shared_ptr<host::KernelCompiler> compiler = NewCompiler();
  ASSERT_NE(compiler, nullptr);
  absl::StatusOr<host::CompiledKernel> kernel = compiler->Compile(*module->FindComputation("sorted"));
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented) << kernel.status();
  // The host compiler then splits the fusion and sorts with a library call.
  host::HostCompileOptions options;
  options.compiler = compiler;
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program = host::CompileForHost(*module, options);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->report().unfused_fusions, 1);
  EXPECT_EQ((*program)->report().library_calls, 1);
  EXPECT_EQ((*program)->report().interpreter_calls, 0);
}

}  // namespace
}  // namespace hloc
