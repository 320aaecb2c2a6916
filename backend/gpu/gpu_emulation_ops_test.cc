// Emitted kernels of the less regular GPU ops run in the host emulator
// (gpu_emulator.h) and compared with the interpreter on random arguments:
// reductions split across blocks, sort, topk and scatter, and row
// normalizations (softmax, layer norm, RMS norm), each also checked for the
// strategy its emitter must choose.
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_emulator.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/gpu_test_modules.h"
#include "backend/gpu/gpu_test_util.h"
#include "backend/gpu/kernel_codegen.h"
#include "backend/gpu/kernel_sites.h"
#include "backend/gpu/row_normalization_fusion.h"
#include "gtest/gtest.h"

namespace hloc {
namespace gpu {
namespace {

namespace mods = test_modules;

std::string SplitReductions() {
  return mods::Library({
      mods::Binary("add", "add", "f32"),
      mods::Binary("add_s32", "add", "s32"),
      mods::Binary("add_bf16", "add", "bf16"),
      mods::Binary("max", "maximum", "f32"),
      mods::ArgmaxReducer("argmax_reducer"),
      mods::Reduce("full_sum", "f32[70000]", "f32[]", "0", "1", "add"),
      mods::Reduce("full_max", "f32[2,35000]", "f32[]", "0,1", "-inf", "max"),
      mods::Reduce("full_s32", "s32[70000]", "s32[]", "0", "7", "add_s32"),
      mods::ArgmaxRows("full_argmax", {70000}, "argmax_reducer"),
      mods::Reduce("few_long_rows", "f32[4,70000]", "f32[4]", "1", "0", "add"),
      mods::Reduce("strided_rows", "f32[40,4,2000]", "f32[4]", "0,2", "0", "add"),
      mods::Reduce("columns", "f32[4096,20]", "f32[20]", "0", "0", "add"),
      mods::Reduce("middle_columns", "f32[3,2048,40]", "f32[3,40]", "1", "-inf", "max"),
      R"(epilogue {
  x = f32[3,70000] parameter(0)
  y = f32[3] parameter(1)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  s = f32[3] reduce(x, zero), dimensions={1}, to_apply=add
  m = f32[3] reduce(x, ninf), dimensions={1}, to_apply=max
  d = f32[3] divide(s, m)
  e = f32[3] multiply(s, y)
  ROOT t = (f32[3], f32[3], f32[3], f32[3]) tuple(s, m, d, e)
}
bf16_to_f32 {
  x = bf16[3,70000] parameter(0)
  c = f32[3,70000] convert(x)
  zero = f32[] constant(0)
  ROOT s = f32[3] reduce(c, zero), dimensions={1}, to_apply=add
}
)",
      mods::Reduce("bf16_sum", "bf16[70000]", "bf16[]", "0", "0", "add_bf16"),
      mods::Reduce("not_split", "f32[128,4096]", "f32[128]", "1", "0", "add"),
  });
}

// Reductions split across blocks (a partials kernel, then a combine
// kernel) against the interpreter; `strategy` is what each must choose on
// a device with `sms` SMs (fewer SMs: fewer chunks, quicker to emulate).
TEST(GpuEmulation, SplitReductionsMatchTheInterpreter) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(SplitReductions());
  ASSERT_NE(module, nullptr);
  struct Case {
    const char* name;
    const char* strategy;
    int sms;
  };
  for (const Case& c : {Case{"full_sum", "row-reduction-split", 132},
                        Case{"full_max", "row-reduction-split", 132},
                        Case{"full_s32", "row-reduction-split", 132},
                        Case{"full_argmax", "row-reduction-split", 132},
                        Case{"few_long_rows", "row-reduction-split", 132},
                        Case{"strided_rows", "row-reduction-split", 8},
                        Case{"columns", "column-reduction-split", 132},
                        Case{"middle_columns", "column-reduction-split", 8},
                        Case{"epilogue", "row-reduction-split", 108},
                        Case{"bf16_to_f32", "row-reduction-split", 132},
                        Case{"bf16_sum", "row-reduction-split", 132},
                        Case{"not_split", "row-reduction", 132}}) {
    const HloComputation* computation = module->FindComputation(c.name);
    ASSERT_NE(computation, nullptr) << c.name;
    GpuTarget target;
    target.sm_count = c.sms;
    absl::StatusOr<GpuKernel> kernel = CompileUnassembled(*computation, target);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    EXPECT_EQ(kernel->strategy, c.strategy) << c.name;
    EXPECT_EQ(kernel->second_name.empty(), std::string(c.strategy) == "row-reduction") << c.name;
    std::cout << c.name << ": " << kernel->strategy << " grid " << kernel->launch.grid[0]
              << " block " << kernel->launch.block[0] << "x" << kernel->launch.block[1]
              << ", combine grid " << kernel->second_launch.grid[0] << " block "
              << kernel->second_launch.block[0] << ", scratch " << kernel->scratch_bytes
              << " bytes\n";
    if (kernel->second_name.empty()) continue;  // Unsplit kernels: gpu_emulation_test.
    bool ran = false;
    EXPECT_EQ(CheckKernel(emulator, *computation, 5, &ran, target), "") << c.name;
    EXPECT_TRUE(ran) << c.name;
  }
}

std::string SortsAndScatters() {
  return mods::Library({
      mods::Compare("lt", "f32", "LT"),
      mods::Compare("lt_f16", "f16", "LT"),
      mods::Compare("lt_total", "f32", "LT", ", type=TOTALORDER"),
      mods::Binary("add", "add", "f32"),
      mods::Binary("add_f16", "add", "f16"),
      mods::Binary("max_s64", "maximum", "s64"),
      // Comparators of (key, value) pairs, and scatter combiners.
      R"(gt_pair {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT
}
lt_u8_pair {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  i = f32[] parameter(2)
  j = f32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=LT
}
set {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
add_max {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = s32[] maximum(a1, b1)
  ROOT t = (f32[], s32[]) tuple(s0, s1)
}
)",
      mods::Sort("sort_rows", "f32[6,100]", 1, "lt"),
      mods::Sort("sort_dim0", "f32[37,5]", 0, "lt_total"),
      mods::Sort("sort_middle", "f16[3,19,4]", 1, "lt_f16"),
      mods::Sort("sort_1d", "f32[1000]", 0, "lt"),
      mods::Sort("sort_uncached", "f32[2,5000]", 1, "lt"),
      mods::Sort("sort_long", "f32[2,9000]", 1, "lt"),
      R"(sort_pairs {
  x = f32[3,50] parameter(0)
  i = s32[3,50] parameter(1)
  ROOT s = (f32[3,50], s32[3,50]) sort(x, i), dimensions={1}, is_stable=true, to_apply=gt_pair
}
sort_ties {
  k = u8[2,300] parameter(0)
  v = f32[2,300] parameter(1)
  ROOT s = (u8[2,300], f32[2,300]) sort(k, v), dimensions={1}, to_apply=lt_u8_pair
}
)",
      R"(topk_op {
  x = f32[4,40] parameter(0)
  ROOT t = (f32[4,5], s32[4,5]) topk(x), k=5, largest=true
}
topk_smallest {
  x = s32[3,64] parameter(0)
  ROOT t = (s32[3,7], s32[3,7]) topk(x), k=7, largest=false
}
topk_call {
  x = f32[3,20] parameter(0)
  ROOT t = (f32[3,4], s32[3,4]) custom-call(x), custom_call_target="TopK"
}
)",
      mods::ScatterRows("scatter_add", "f32", 16, 8, 10, "add"),
      mods::ScatterRows("scatter_set", "f32", 16, 8, 10, "set"),
      mods::ScatterRows("scatter_f16", "f16", 9, 5, 7, "add_f16"),
      mods::ScatterRows("scatter_unique", "f32", 6, 8, 1, "add", ", unique_indices=true"),
      R"(scatter_s64 {
  t = s64[6] parameter(0)
  i = s32[20] parameter(1)
  u = s64[20] parameter(2)
  ROOT s = s64[6] scatter(t, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=max_s64
}
scatter_windows {
  t = f32[5,5] parameter(0)
  i = s32[6,2] parameter(1)
  u = f32[6,3,3] parameter(2)
  ROOT s = f32[5,5] scatter(t, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=set
}
scatter_variadic {
  t0 = f32[8,4] parameter(0)
  t1 = s32[8,4] parameter(1)
  i = s32[6,1] parameter(2)
  u0 = f32[6,4] parameter(3)
  u1 = s32[6,4] parameter(4)
  ROOT s = (f32[8,4], s32[8,4]) scatter(t0, t1, i, u0, u1), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_max
}
)",
  });
}

// Sort, topk and scatter kernels against the interpreter; `strategy` is
// what each must choose.
TEST(GpuEmulation, SortTopkScatterKernelsMatchTheInterpreter) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(SortsAndScatters());
  ASSERT_NE(module, nullptr);
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"sort_rows", "sort-shared-cached"},     {"sort_dim0", "sort-shared-cached"},
      {"sort_middle", "sort-shared-cached"},   {"sort_pairs", "sort-shared-cached"},
      {"sort_ties", "sort-shared-cached"},     {"sort_1d", "sort-shared-cached"},
      {"sort_uncached", "sort-shared"},        {"sort_long", "sort-global"},
      {"topk_op", "topk-shared-cached"},       {"topk_smallest", "topk-shared-cached"},
      {"topk_call", "topk-shared-cached"},
      {"scatter_add", "scatter-atomic"}, {"scatter_set", "scatter-ordered"},
      {"scatter_f16", "scatter-atomic"}, {"scatter_s64", "scatter-atomic"},
      {"scatter_windows", "scatter-serial"}, {"scatter_unique", "scatter"},
      {"scatter_variadic", "scatter-ordered"}};
  int sorts = 0, scatters = 0;
  for (const auto& [name, strategy] : cases) {
    const HloComputation* computation = module->FindComputation(name);
    ASSERT_NE(computation, nullptr) << name;
    absl::StatusOr<GpuKernel> kernel = CompileUnassembled(*computation);
    ASSERT_TRUE(kernel.ok()) << name << ": " << kernel.status();
    EXPECT_EQ(kernel->strategy, strategy) << name;
    for (uint64_t seed : {3, 17}) {
      bool ran = false;
      EXPECT_EQ(CheckKernel(emulator, *computation, seed, &ran), "") << name << " seed " << seed;
      EXPECT_TRUE(ran) << name;
    }
    ++(absl::StartsWith(name, "scatter") ? scatters : sorts);
  }
  std::cout << "sort/topk cases emulated: " << sorts << ", scatter cases: " << scatters << "\n";
}


std::string RowNormalizations() {
  return mods::Library({
      mods::Binary("add", "add", "f32"),
      mods::Binary("max", "maximum", "f32"),
      mods::Binary("add_bf16", "add", "bf16"),
      mods::Binary("max_bf16", "maximum", "bf16"),
      mods::Softmax("softmax", "f32", 37, 100, "max", "add"),
      mods::Softmax("softmax_bf16", "bf16", 9, 256, "max_bf16", "add_bf16"),
      R"(log_softmax {
  x = f32[6,700] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[6] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[6,700] broadcast(m), dimensions={0}
  c = f32[6,700] subtract(x, mb)
  e = f32[6,700] exponential(c)
  zero = f32[] constant(0)
  s = f32[6] reduce(e, zero), dimensions={1}, to_apply=add
  l = f32[6] log(s)
  l1 = f32[6,1] reshape(l)
  l2 = f32[6] reshape(l1)
  lb = f32[6,700] broadcast(l2), dimensions={0}
  ROOT r = f32[6,700] subtract(c, lb)
}
layer_norm {
  x = f32[2,5,64] parameter(0)
  g = f32[64] parameter(1)
  b = f32[64] parameter(2)
  zero = f32[] constant(0)
  sixty_four = f32[] constant(64)
  n = f32[2,5] broadcast(sixty_four), dimensions={}
  sum = f32[2,5] reduce(x, zero), dimensions={2}, to_apply=add
  mean = f32[2,5] divide(sum, n)
  meanb = f32[2,5,64] broadcast(mean), dimensions={0,1}
  c = f32[2,5,64] subtract(x, meanb)
  sq = f32[2,5,64] multiply(c, c)
  sqsum = f32[2,5] reduce(sq, zero), dimensions={2}, to_apply=add
  var = f32[2,5] divide(sqsum, n)
  eps = f32[] constant(1e-5)
  epsb = f32[2,5] broadcast(eps), dimensions={}
  ve = f32[2,5] add(var, epsb)
  r = f32[2,5] rsqrt(ve)
  rb = f32[2,5,64] broadcast(r), dimensions={0,1}
  norm = f32[2,5,64] multiply(c, rb)
  gb = f32[2,5,64] broadcast(g), dimensions={2}
  scaled = f32[2,5,64] multiply(norm, gb)
  bb = f32[2,5,64] broadcast(b), dimensions={2}
  out = f32[2,5,64] add(scaled, bb)
  ROOT t = (f32[2,5,64], f32[2,5]) tuple(out, mean)
}
rms_norm {
  x = bf16[4,3000] parameter(0)
  w = bf16[3000] parameter(1)
  xf = f32[4,3000] convert(x)
  sq = f32[4,3000] multiply(xf, xf)
  zero = f32[] constant(0)
  sum = f32[4] reduce(sq, zero), dimensions={1}, to_apply=add
  len = f32[] constant(3000)
  lenb = f32[4] broadcast(len), dimensions={}
  ms = f32[4] divide(sum, lenb)
  eps = f32[] constant(1e-6)
  epsb = f32[4] broadcast(eps), dimensions={}
  mse = f32[4] add(ms, epsb)
  r = f32[4] rsqrt(mse)
  rb = f32[4,3000] broadcast(r), dimensions={0}
  y = f32[4,3000] multiply(xf, rb)
  yb = bf16[4,3000] convert(y)
  wb = bf16[4,3000] broadcast(w), dimensions={1}
  ROOT o = bf16[4,3000] multiply(yb, wb)
}
transposed_input {
  x = f32[64,64] parameter(0)
  xt = f32[64,64] transpose(x), dimensions={1,0}
  y = f32[64,64] add(x, xt)
  ninf = f32[] constant(-inf)
  m = f32[64] reduce(y, ninf), dimensions={1}, to_apply=max
  mb = f32[64,64] broadcast(m), dimensions={0}
  c = f32[64,64] subtract(y, mb)
  ROOT o = f32[64,64] multiply(c, xt)
}
)",
  });
}

// Row normalizations get one row-normalization kernel each, which agrees
// with the interpreter: hand-written ones, and those the CUDA pipeline
// makes of the zoo's softmax, layer norm, attention and transformer block.
TEST(GpuEmulation, RowNormalizationKernelsMatchTheInterpreter) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(RowNormalizations());
  ASSERT_NE(module, nullptr);
  auto check = [&](const HloComputation& computation, const std::string& what) {
    absl::StatusOr<GpuKernel> kernel = CompileUnassembled(computation);
    ASSERT_TRUE(kernel.ok()) << what << ": " << kernel.status();
    EXPECT_EQ(kernel->strategy, "row-normalization") << what;
    bool ran = false;
    EXPECT_EQ(CheckKernel(emulator, computation, 5, &ran), "") << what;
    EXPECT_TRUE(ran) << what;
  };
  for (const char* name :
       {"softmax", "log_softmax", "layer_norm", "rms_norm", "transposed_input", "softmax_bf16"}) {
    const HloComputation* computation = module->FindComputation(name);
    ASSERT_NE(computation, nullptr) << name;
    check(*computation, name);
  }
  if (std::getenv("TEST_SRCDIR") == nullptr) GTEST_SKIP() << "no runfiles";
  for (const char* model : {"softmax", "layer_norm", "attention", "transformer_block"}) {
    const std::string text = ZooModelText(model);
    ASSERT_FALSE(text.empty()) << model;
    std::unique_ptr<HloModule> zoo = ParseForTest(text);
    ASSERT_NE(zoo, nullptr) << model;
    ASSERT_TRUE(OptimizeForGpu(*zoo, PipelineWithLibraries()).ok()) << model;
    int row_normalizations = 0;
    for (const KernelSite& site : CollectKernelSites(*zoo).kernels) {
      if (!site.fused || !IsRowNormalizationFusion(*site.instruction)) continue;
      ++row_normalizations;
      check(*site.computation, absl::StrCat(model, " %", site.instruction->name()));
    }
    EXPECT_GT(row_normalizations, 0) << model;
  }
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
