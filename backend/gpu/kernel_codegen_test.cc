// Tests of NVPTX code generation: the strategy each kind of computation
// gets, FileCheck on the optimized LLVM IR and the PTX of the loop,
// reduction and transpose emitters, ptxas assembling the PTX for sm_80 and
// sm_90, Unimplemented for what no emitter covers, and the kernel cache.
#include "backend/gpu/kernel_codegen.h"

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_test_modules.h"
#include "backend/gpu/gpu_test_util.h"
#include "gtest/gtest.h"

namespace hloc {
namespace gpu {
namespace {

namespace mods = test_modules;

std::string Kernels() {
  return mods::Library({
      mods::Binary("add", "add", "f32"),
      mods::Binary("max", "maximum", "f32"),
      mods::Binary("add_f32", "add", "f32"),
      mods::Binary("add_bf16", "add", "bf16"),
      mods::Compare("less", "f32", "LT"),
      mods::ArgmaxReducer("argmax_reducer"),
      R"(elementwise {
  x = f32[1024,256] parameter(0)
  y = f32[1024,256] parameter(1)
  e = f32[1024,256] exponential(x)
  ROOT r = f32[1024,256] add(e, y)
}
elementwise_renamed {
  p = f32[1024,256] parameter(0)
  q = f32[1024,256] parameter(1)
  ee = f32[1024,256] exponential(p)
  ROOT rr = f32[1024,256] add(ee, q)
}
half_elementwise {
  x = f16[64,512] parameter(0)
  y = f16[64,512] parameter(1)
  ROOT m = f16[64,512] multiply(x, y)
}
odd_elementwise {
  x = f32[7,3] parameter(0)
  ROOT n = f32[7,3] negate(x)
}
transpose {
  x = f32[256,512] parameter(0)
  t = f32[512,256] transpose(x), dimensions={1,0}
  c = f32[] constant(2)
  b = f32[512,256] broadcast(c), dimensions={}
  ROOT m = f32[512,256] multiply(t, b)
}
huge {
  x = f32[65536,65536] parameter(0)
  ROOT n = f32[65536,65536] negate(x)
}
half_transpose {
  x = f16[8,64,128] parameter(0)
  ROOT t = f16[8,128,64] transpose(x), dimensions={0,2,1}
}
no_kernel {
  x = f32[4,4] parameter(0)
  ROOT c = f32[4,4] cholesky(x), lower=true
}
)",
      mods::Reduce("long_rows", "f32[128,4096]", "f32[128]", "1", "0", "add"),
      mods::Reduce("short_rows", "f32[4096,100]", "f32[4096]", "1", "-inf", "max"),
      mods::Reduce("columns", "f32[1000,256]", "f32[256]", "0", "0", "add"),
      mods::MultiOutputRows("multi_output", 512, 300),
      mods::Reduce("split_full_sum", "f32[4194304]", "f32[]", "0", "0", "add"),
      mods::Reduce("split_few_rows", "f32[4,4194304]", "f32[4]", "1", "-inf", "max"),
      mods::Reduce("split_columns", "f32[65536,32]", "f32[32]", "0", "0", "add"),
      mods::TwoShapes("two_shapes", 64, 100),
      mods::ArgmaxRows("argmax", {256, 1000}, "argmax_reducer"),
      mods::Reduce("bf16_rows", "bf16[128,768]", "bf16[128]", "1", "0", "add_bf16"),
      mods::Sort("sorting", "f32[64]", 0, "less"),
      mods::ScatterRows("scatter_add", "f32", 100, 32, 50, "add_f32"),
      mods::Softmax("softmax_long_rows", "f32", 1024, 1000, "max", "add"),
      mods::Softmax("softmax_short_rows", "f32", 4096, 128, "max", "add"),
  });
}

class KernelCodegenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    module_ = ParseForTest(Kernels());
    ASSERT_NE(module_, nullptr);
    options_.assemble = false;
  }
  const HloComputation& Computation(const char* name) {
    const HloComputation* c = module_->FindComputation(name);
    EXPECT_NE(c, nullptr) << name;
    return *c;
  }
  GpuKernel Compile(const char* name, const GpuCompileOptions& options) {
    absl::StatusOr<GpuKernel> kernel = CompileGpuKernel(Computation(name), options);
    EXPECT_TRUE(kernel.ok()) << name << ": " << kernel.status();
    return kernel.ok() ? *std::move(kernel) : GpuKernel();
  }
  GpuKernel Compile(const char* name) { return Compile(name, options_); }

  std::unique_ptr<HloModule> module_;
  GpuCompileOptions options_;
};

TEST_F(KernelCodegenTest, LoopKernelVectorizesAndLinksLibdevice) {
  GpuKernel kernel = Compile("elementwise");
  EXPECT_EQ(kernel.strategy, "loop-vectorized");
  EXPECT_EQ(kernel.vector_width, 4);
  EXPECT_EQ(kernel.num_buffers, 3);
  EXPECT_EQ(kernel.num_inputs, 2);
  EXPECT_EQ(kernel.launch.block[0], 256);
  EXPECT_EQ(kernel.launch.grid[0], 1024 * 256 / 4 / 256);
  EXPECT_TRUE(FileCheck(kernel.llvm_ir, R"(
CHECK: target triple = "nvptx64-nvidia-cuda"
CHECK: define void @[[NAME:hloc_[0-9a-f]+]](ptr addrspace(1) noalias nocapture noundef readonly align 16 dereferenceable(1048576) %in0, ptr addrspace(1) {{.*}}readonly align 16 {{.*}}%in1, ptr addrspace(1) {{.*}}writeonly align 16 {{.*}}%out0)
CHECK: call {{.*}}i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
CHECK: call {{.*}}i32 @llvm.nvvm.read.ptx.sreg.tid.x()
CHECK-NOT: declare float @__nv_expf
CHECK: !nvvm.annotations = !{![[K:[0-9]+]], ![[X:[0-9]+]],
CHECK: ![[K]] = !{ptr @[[NAME]], !"kernel", i32 1}
CHECK: ![[X]] = !{ptr @[[NAME]], !"maxntidx", i32 256}
)"));
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK: .version 8.0
CHECK: .target sm_90
CHECK: .address_size 64
CHECK: .visible .entry hloc_
CHECK: .maxntid 256, 1, 1
CHECK: mov.u32 {{.*}}%ctaid.x
CHECK: mov.u32 {{.*}}%tid.x
CHECK-DAG: ld.global.nc.v4.f32
CHECK-DAG: ld.global.nc.v4.f32
CHECK: st.global.v4.f32
CHECK-NOT: call
CHECK: ret;
)"));
}

TEST_F(KernelCodegenTest, HalfLoopStoresSixteenBytes) {
  GpuKernel kernel = Compile("half_elementwise");
  EXPECT_EQ(kernel.strategy, "loop-vectorized");
  EXPECT_EQ(kernel.vector_width, 8);
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK: ld.global.nc.v4.{{[bu]}}32
CHECK: ld.global.nc.v4.{{[bu]}}32
CHECK: {{mul.rn.f16|cvt.f32.f16}}
CHECK: st.global.v4.{{[bu]}}32
)"));
}

TEST_F(KernelCodegenTest, OddShapesUseScalarAccesses) {
  GpuKernel kernel = Compile("odd_elementwise");
  EXPECT_EQ(kernel.strategy, "loop");
  EXPECT_EQ(kernel.vector_width, 1);
  EXPECT_EQ(kernel.launch.grid[0], 1);
  EXPECT_EQ(kernel.launch.block[0], 32);
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK: setp.{{[a-z]+}}.{{[su]}}32 {{.*}}20
CHECK-NOT: .v4
CHECK: st.global.f32
)"));
}

TEST_F(KernelCodegenTest, LongRowReductionUsesShufflesAndSharedMemory) {
  GpuKernel kernel = Compile("long_rows");
  EXPECT_EQ(kernel.strategy, "row-reduction");
  EXPECT_EQ(kernel.launch.grid[0], 128);
  EXPECT_EQ(kernel.launch.block[0], 1024);
  EXPECT_EQ(kernel.vector_width, 4);
  EXPECT_TRUE(FileCheck(kernel.llvm_ir, R"(
CHECK: @partials.{{.*}} = internal unnamed_addr addrspace(3) global [32 x double] undef, align 16
CHECK: call {{.*}}i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 {{.*}}, i32 16, i32 31)
CHECK: call void @llvm.nvvm.barrier0()
)"));
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK: .shared .align 16 .b8 {{.*}}partials{{.*}}[256]
CHECK: ld.global.nc.v4.f32
CHECK: shfl.sync.down.b32 {{.*}}, 16, 31, -1;
CHECK: shfl.sync.down.b32 {{.*}}, 1, 31, -1;
CHECK: st.shared.f64
CHECK: bar.sync 0;
CHECK: ld.shared.f64
CHECK: shfl.sync.down.b32
CHECK: add.rn.f64
CHECK: cvt.rn.f32.f64
CHECK: st.global.f32
)"));
}

TEST_F(KernelCodegenTest, SoftmaxIsOneRowNormalizationKernel) {
  GpuKernel kernel = Compile("softmax_long_rows");
  EXPECT_EQ(kernel.strategy, "row-normalization");
  EXPECT_EQ(kernel.launch.grid[0], 1024);  // A block per row of 1000.
  EXPECT_EQ(kernel.launch.block[0], 128);
  // The row is read once (8 elements a thread, into registers); max: fold,
  // shuffles, warps' totals through shared memory, the row's result
  // published to every thread; then exp and the sum (in double) the same
  // way; the outputs (exp kept from the sum's pass) are the only global
  // stores, after both reductions.
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK: .shared .align 16 .b8 warp_partials{{.*}}[16];
CHECK: .shared .align 16 .f32 row_results
CHECK: .shared .align 16 .b8 warp_partials{{.*}}[32];
CHECK-NOT: st.global
CHECK-COUNT-8: ld.global.nc.f32
CHECK-NOT: ld.global
CHECK: setp.nan.f32
CHECK: shfl.sync.down.b32 {{.*}}, 16, 31, -1;
CHECK: st.shared.f32
CHECK: bar.sync 0;
CHECK: ld.shared.f32
CHECK: st.shared.f32 [row_results
CHECK: bar.sync 0;
CHECK: ld.shared.f32 {{.*}}[row_results
CHECK-NOT: ld.global
CHECK-NOT: st.global
CHECK: ex2.approx
CHECK: add.rn.f64
CHECK: st.shared.f64
CHECK: bar.sync 0;
CHECK: cvt.rn.f32.f64
CHECK: st.shared.f32 [row_results
CHECK: bar.sync 0;
CHECK-NOT: ld.global
CHECK-NOT: ex2.approx
CHECK-COUNT-8: st.global.f32
CHECK-NOT: st.global
CHECK: ret;
)"));
}

TEST_F(KernelCodegenTest, ShortRowSoftmaxIsWarpPerRow) {
  GpuKernel kernel = Compile("softmax_short_rows");
  EXPECT_EQ(kernel.strategy, "row-normalization");
  EXPECT_EQ(kernel.launch.grid[0], 4096 / 8);  // 8 warps, a row each.
  EXPECT_EQ(kernel.launch.block[0], 256);
  // No warp partials in shared memory: a row's warp shuffles to lane 0,
  // which publishes the result to its lanes (a slot per row of the block).
  // Four elements a lane, read once.
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK-NOT: warp_partials
CHECK: .shared .align 16 .b8 row_results{{.*}}[32];
CHECK-COUNT-4: ld.global.nc.f32
CHECK-NOT: ld.global
CHECK: shfl.sync.down.b32 {{.*}}, 16, 31, -1;
CHECK: shfl.sync.down.b32 {{.*}}, 1, 31, -1;
CHECK-NOT: st.global
CHECK: st.shared.f32
CHECK: bar.sync 0;
CHECK: ex2.approx
CHECK: add.rn.f64
CHECK: cvt.rn.f32.f64
CHECK: st.shared.f32
CHECK: bar.sync 0;
CHECK-NOT: ld.global
CHECK-COUNT-4: st.global.f32
CHECK-NOT: st.global
)"));
}

TEST_F(KernelCodegenTest, ShortRowReductionIsWarpPerRow) {
  GpuKernel kernel = Compile("short_rows");
  EXPECT_EQ(kernel.strategy, "row-reduction");
  EXPECT_EQ(kernel.launch.block[0], 256);
  EXPECT_EQ(kernel.launch.grid[0], 4096 / 8);
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK-NOT: bar.sync
CHECK: shfl.sync.down.b32 {{.*}}, 16, 31, -1;
CHECK: setp.nan.f32
CHECK: shfl.sync.down.b32 {{.*}}, 1, 31, -1;
CHECK-NOT: bar.sync
CHECK: st.global.f32
)"));
}

TEST_F(KernelCodegenTest, ColumnReductionGoesThroughSharedMemory) {
  GpuKernel kernel = Compile("columns");
  EXPECT_EQ(kernel.strategy, "column-reduction");
  EXPECT_EQ(kernel.launch.block[0], 32);
  EXPECT_EQ(kernel.launch.block[1], 32);  // Few tiles: 32 warps share the rows.
  EXPECT_EQ(kernel.launch.grid[0], 256 / 32);
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK: .maxntid 32, 32, 1
CHECK: .shared .align 16 .b8 {{.*}}partials{{.*}}[8192]
CHECK: mov.u32 {{.*}}%tid.y
CHECK: ld.global.nc.f32
CHECK: add.rn.f64
CHECK: st.shared.f64
CHECK: bar.sync 0;
CHECK: ld.shared.f64
CHECK: st.global.f32
)"));
}

// Few outputs with long reduced extents: blocks reduce chunks into scratch
// (one f64 partial per chunk), a second entry folds each output's chunks.
TEST_F(KernelCodegenTest, FullReductionSplitsAcrossBlocks) {
  GpuKernel kernel = Compile("split_full_sum");
  EXPECT_EQ(kernel.strategy, "row-reduction-split");
  EXPECT_EQ(kernel.launch.grid[0], 512);  // 132 SMs x 4 blocks of 512, rounded to chunks.
  EXPECT_EQ(kernel.launch.block[0], 512);
  EXPECT_EQ(kernel.vector_width, 4);
  EXPECT_EQ(kernel.scratch_bytes, 512 * 8);
  EXPECT_EQ(kernel.num_buffers, 3);  // x, result, scratch.
  EXPECT_EQ(kernel.second_name, kernel.name + "_combine");
  EXPECT_EQ(kernel.second_launch.grid[0], 1);
  EXPECT_EQ(kernel.second_launch.block[0], 32);
  EXPECT_TRUE(FileCheck(kernel.ptx, absl::StrCat(R"(
CHECK: .entry )", kernel.name, R"((
CHECK: ld.global.nc.v4.f32
CHECK: shfl.sync.down.b32 {{.*}}, 16, 31, -1;
CHECK: bar.sync 0;
CHECK: st.global.f64
CHECK-NOT: st.global.f32
CHECK: .entry )", kernel.second_name, R"((
CHECK: ld.global.{{(nc.)?}}f64
CHECK: shfl.sync.down.b32 {{.*}}, 16, 31, -1;
CHECK: cvt.rn.f32.f64
CHECK: st.global.f32
)")));
  GpuKernel rows = Compile("split_few_rows");
  EXPECT_EQ(rows.strategy, "row-reduction-split");
  EXPECT_EQ(rows.launch.grid[0], 4 * 128);
  EXPECT_EQ(rows.scratch_bytes, 4 * 128 * 4);  // f32 max partials.
  EXPECT_EQ(rows.second_launch.block[0], 128);
}

TEST_F(KernelCodegenTest, ColumnReductionWithFewColumnsSplitsTheRows) {
  GpuKernel kernel = Compile("split_columns");
  EXPECT_EQ(kernel.strategy, "column-reduction-split");
  EXPECT_EQ(kernel.launch.block[0], 32);
  EXPECT_EQ(kernel.launch.block[1], 32);
  EXPECT_EQ(kernel.launch.grid[0], 256);  // Chunks of 256 rows.
  EXPECT_EQ(kernel.scratch_bytes, 32 * 256 * 8);
  EXPECT_EQ(kernel.second_launch.grid[0], 4);  // A warp per column.
  EXPECT_EQ(kernel.second_launch.block[0], 256);
  EXPECT_TRUE(FileCheck(kernel.ptx, absl::StrCat(R"(
CHECK: .entry )", kernel.name, R"((
CHECK: .maxntid 32, 32, 1
CHECK: ld.global.nc.f32
CHECK: st.shared.f64
CHECK: bar.sync 0;
CHECK: ld.shared.f64
CHECK: st.global.f64
CHECK: .entry )", kernel.second_name, R"((
CHECK: ld.global.{{(nc.)?}}f64
CHECK: shfl.sync.down.b32
CHECK: st.global.f32
)")));
}

TEST_F(KernelCodegenTest, MultiOutputReductionSharesOnePass) {
  GpuKernel kernel = Compile("multi_output");
  EXPECT_EQ(kernel.strategy, "row-reduction");
  EXPECT_EQ(kernel.num_buffers, 4);
  EXPECT_EQ(kernel.num_inputs, 1);
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK: .param .u64 {{.*}}_param_0
CHECK: .param .u64 {{.*}}_param_3
CHECK: ld.global.nc.v4.f32
CHECK-DAG: add.rn.f64
CHECK-DAG: setp.nan.f32
CHECK: shfl.sync.down.b32
CHECK: st.global.f32
CHECK: st.global.f32
CHECK: div.rn.f32
CHECK: st.global.f32
)"));
}

TEST_F(KernelCodegenTest, TransposeUsesSharedTiles) {
  GpuKernel kernel = Compile("transpose");
  EXPECT_EQ(kernel.strategy, "transpose");
  EXPECT_EQ(kernel.launch.block[0], 32);
  EXPECT_EQ(kernel.launch.block[1], 8);
  EXPECT_EQ(kernel.launch.grid[0], (512 / 32) * (256 / 32));
  EXPECT_TRUE(FileCheck(kernel.llvm_ir, R"(
CHECK: @tile.{{.*}} = internal unnamed_addr addrspace(3) global [32 x [33 x float]] undef, align 16
CHECK: store float {{.*}}, ptr addrspace(3)
CHECK: call void @llvm.nvvm.barrier0()
CHECK: load float, ptr addrspace(3)
)"));
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK: .shared .align 16 .b8 {{.*}}tile{{.*}}[4224]
CHECK: ld.global.nc.f32
CHECK: st.shared.f32
CHECK: bar.sync 0;
CHECK: ld.shared.f32
CHECK: {{mul|add}}.rn.f32
CHECK: st.global.f32
)"));
}

TEST_F(KernelCodegenTest, HugeShapesUseGridStrideLoopsAndWideIndices) {
  GpuKernel kernel = Compile("huge");
  EXPECT_EQ(kernel.strategy, "loop-vectorized");
  EXPECT_EQ(kernel.launch.block[0], 256);
  // Capped at 32 waves of full SMs: 132 * (2048 / 256) * 32.
  EXPECT_EQ(kernel.launch.grid[0], 132 * 8 * 32);
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK: $L__BB0_[[LOOP:[0-9]+]]:
CHECK: ld.global.nc.v4.f32
CHECK: neg.f32
CHECK: st.global.v4.f32
CHECK: add.s64
CHECK: setp.{{[a-z]+}}.{{[us]}}64
CHECK: bra{{.*}} $L__BB0_[[LOOP]]
)"));
}

TEST_F(KernelCodegenTest, OutputsOfDifferentShapesShareOneKernel) {
  GpuKernel kernel = Compile("two_shapes");
  EXPECT_EQ(kernel.num_buffers, 4);
  EXPECT_EQ(kernel.vector_width, 4);
  EXPECT_EQ(kernel.launch.block[0] * kernel.launch.grid[0], 1024);  // 4096 / 4 threads
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK-DAG: setp.{{[a-z]+}}.{{[us]}}32 {{.*}}24
CHECK-DAG: neg.f32
CHECK-DAG: abs.s32
)"));
}

TEST_F(KernelCodegenTest, VariadicReductionShufflesEveryLeaf) {
  GpuKernel kernel = Compile("argmax");
  EXPECT_EQ(kernel.strategy, "row-reduction");
  EXPECT_EQ(kernel.num_buffers, 3);
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK: shfl.sync.down.b32 {{.*}}, 16, 31, -1;
CHECK: shfl.sync.down.b32 {{.*}}, 16, 31, -1;
CHECK: st.global.f32
CHECK: st.global.u32
)"));
}

TEST_F(KernelCodegenTest, HalfPrecisionKernels) {
  GpuKernel rows = Compile("bf16_rows");
  EXPECT_EQ(rows.strategy, "row-reduction");
  // bf16 sums carry doubles and round once, as the interpreter does.
  EXPECT_TRUE(FileCheck(rows.ptx, R"(
CHECK: cvt.f64.f32
CHECK: add.rn.f64
CHECK: shfl.sync.down.b32
CHECK: st.global.{{[bu]}}16
)"));
  GpuKernel transpose = Compile("half_transpose");
  EXPECT_EQ(transpose.strategy, "transpose");
  EXPECT_EQ(transpose.launch.grid[0], 8 * 4 * 2);
  EXPECT_TRUE(FileCheck(transpose.ptx, R"(
CHECK: .shared .align 16 .b8 {{.*}}[2112]
CHECK: st.shared.{{[bu]}}16
CHECK: bar.sync 0;
CHECK: ld.shared.{{[bu]}}16
CHECK: st.global.{{[bu]}}16
)"));
}

TEST_F(KernelCodegenTest, PtxasAssemblesForAmpereAndHopper) {
  const std::string ptxas = RunfilesPtxas();
  if (ptxas.empty()) GTEST_SKIP() << "no runfiles";
  for (int sm : {80, 90}) {
    GpuCompileOptions options;
    options.target = GpuTarget::ForComputeCapability(sm);
    options.ptxas_path = ptxas;
    for (const char* name : {"elementwise", "half_elementwise", "odd_elementwise", "long_rows",
                             "short_rows", "columns", "multi_output", "transpose", "huge",
                             "two_shapes", "argmax", "bf16_rows", "half_transpose"}) {
      GpuKernel kernel = Compile(name, options);
      EXPECT_NE(kernel.ptx.find(absl::StrCat(".target sm_", sm)), std::string::npos) << name;
      ASSERT_GE(kernel.cubin.size(), 4u) << name << " sm_" << sm << ": " << kernel.note;
      EXPECT_EQ(kernel.cubin.substr(0, 4),
                "\x7f"
                "ELF")
          << name;
      EXPECT_TRUE(kernel.note.empty()) << kernel.note;
    }
  }
}

TEST_F(KernelCodegenTest, BatchPutsKernelsInOneCubin) {
  const std::string ptxas = RunfilesPtxas();
  if (ptxas.empty()) GTEST_SKIP() << "no runfiles";
  std::vector<const HloComputation*> computations = {
      &Computation("elementwise"), &Computation("elementwise_renamed"), &Computation("no_kernel"),
      &Computation("columns"),     &Computation("transpose"),           &Computation("argmax"),
      &Computation("sorting")};
  for (int sm : {80, 90}) {
    GpuCompileOptions options;
    options.target = GpuTarget::ForComputeCapability(sm);
    options.ptxas_path = ptxas;
    absl::StatusOr<GpuKernelBatch> batch = CompileGpuKernels(computations, options);
    ASSERT_TRUE(batch.ok()) << batch.status();
    ASSERT_EQ(batch->kernels.size(), computations.size());
    ASSERT_TRUE(batch->kernels[0].ok());
    ASSERT_TRUE(batch->kernels[1].ok());
    EXPECT_EQ(batch->kernels[0]->name, batch->kernels[1]->name);  // Identical: one kernel.
    EXPECT_EQ(batch->kernels[0]->name, Compile("elementwise").name);
    ASSERT_FALSE(batch->kernels[2].ok());
    EXPECT_EQ(batch->kernels[2].status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_EQ(batch->kernels[3]->strategy, "column-reduction");
    EXPECT_EQ(batch->kernels[4]->strategy, "transpose");
    EXPECT_EQ(batch->kernels[5]->strategy, "row-reduction");
    EXPECT_EQ(batch->kernels[6]->strategy, "sort-shared-cached");
    EXPECT_TRUE(FileCheck(batch->ptx, absl::StrCat(R"(
CHECK: .target sm_)",
                                                   sm, R"(
CHECK: .visible .entry hloc_
CHECK: .visible .entry hloc_
CHECK: .visible .entry hloc_
CHECK: .visible .entry hloc_
CHECK: .visible .entry hloc_
CHECK-NOT: .entry
)")));
    ASSERT_GE(batch->cubin.size(), 4u) << batch->note;
    EXPECT_EQ(batch->cubin.substr(0, 4),
              "\x7f"
              "ELF");
  }
}

TEST_F(KernelCodegenTest, MissingPtxasMeansNoCubinAndANote) {
  GpuCompileOptions options;
  options.ptxas_path = "/nonexistent/ptxas";
  GpuKernel kernel = Compile("odd_elementwise", options);
  EXPECT_FALSE(kernel.ptx.empty());
  EXPECT_TRUE(kernel.cubin.empty());
  EXPECT_NE(kernel.note.find("ptxas not found"), std::string::npos) << kernel.note;
}

TEST_F(KernelCodegenTest, PtxasErrorsAreReported) {
  const std::string ptxas = RunfilesPtxas();
  if (ptxas.empty()) GTEST_SKIP() << "no runfiles";
  absl::StatusOr<std::string> cubin =
      AssemblePtx(".version 8.0\n.target sm_90\nbogus;\n", 90, ptxas);
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(cubin.status().message().find("rejected"), std::string::npos) << cubin.status();
}

TEST_F(KernelCodegenTest, CholeskyIsUnimplemented) {
  absl::StatusOr<GpuKernel> kernel = CompileGpuKernel(Computation("no_kernel"), options_);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented) << kernel.status();
}

// A block per row: the positions and the row's elements in shared memory,
// a barrier per bitonic stage, the comparator inlined.
TEST_F(KernelCodegenTest, SortKernelSortsPositionsInSharedMemory) {
  GpuKernel kernel = Compile("sorting");
  EXPECT_EQ(kernel.strategy, "sort-shared-cached");
  EXPECT_EQ(kernel.launch.grid[0], 1);
  EXPECT_EQ(kernel.launch.block[0], 32);
  EXPECT_EQ(kernel.scratch_bytes, 0);
  EXPECT_TRUE(kernel.copy_before.empty());
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK-DAG: .shared .align 16 .b8 {{.*}}_positions[256]
CHECK-DAG: .shared .align 16 .b8 {{.*}}_values0[256]
CHECK: bar.sync
CHECK: setp.lt.f32
CHECK: bar.sync
)"));
}

// Duplicate indices and an add combiner: one thread per update element and
// a compare-and-swap loop; the result starts as a copy of the operand.
TEST_F(KernelCodegenTest, ScatterAddUsesCompareAndSwap) {
  GpuKernel kernel = Compile("scatter_add");
  EXPECT_EQ(kernel.strategy, "scatter-atomic");
  EXPECT_EQ(kernel.launch.block[0], 256);
  EXPECT_EQ(kernel.launch.grid[0], 7);  // 50 * 32 updates.
  ASSERT_EQ(kernel.copy_before.size(), 1u);
  EXPECT_EQ(kernel.copy_before[0], std::make_pair(int64_t{0}, int64_t{3}));
  EXPECT_TRUE(FileCheck(kernel.ptx, R"(
CHECK: .visible .entry hloc_
CHECK: add{{.*}}.f32
CHECK: atom.global.cas.b32
)"));
}

TEST_F(KernelCodegenTest, KernelNamesAreStableAndCacheHitsOnRenamedCopies) {
  GpuKernel a = Compile("elementwise");
  GpuKernel b = Compile("elementwise_renamed");
  EXPECT_EQ(a.name, b.name);
  GpuKernelCache cache(options_);
  absl::StatusOr<std::shared_ptr<const GpuKernel>> first =
      cache.GetOrCompile(Computation("elementwise"));
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::shared_ptr<const GpuKernel>> second =
      cache.GetOrCompile(Computation("elementwise_renamed"));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(cache.misses(), 1);
  absl::StatusOr<std::shared_ptr<const GpuKernel>> other =
      cache.GetOrCompile(Computation("columns"));
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->get(), first->get());
  EXPECT_EQ(cache.misses(), 2);
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
