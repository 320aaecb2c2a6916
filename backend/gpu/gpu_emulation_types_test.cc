// GPU kernels on the element types that need more than one scalar register
// or less than a byte: c64/c128 (a {re, im} pair, elemental_complex_ops.cc)
// through the loop, reduction (warp shuffles of a pair), transpose and
// scatter emitters; s4 and f8/f4 kernels; stochastic-convert. Each kernel
// runs in the host emulator against the interpreter on random arguments
// where the interpreter computes the op, and ptxas must assemble it for sm_90.
#include <cstdint>
#include <initializer_list>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_emulator.h"
#include "backend/gpu/gpu_test_modules.h"
#include "backend/gpu/gpu_test_util.h"
#include "backend/gpu/kernel_codegen.h"
#include "gtest/gtest.h"
#include "passes/expanders/narrow_type_upcasting.h"

namespace hloc {
namespace gpu {
namespace {

namespace mods = test_modules;

std::string ComplexKernels() {
  return mods::Library({
      mods::Binary("add_c64", "add", "c64"),
      mods::Binary("mul_c128", "multiply", "c128"),
      R"(set_c64 {
  a = c64[] parameter(0)
  ROOT b = c64[] parameter(1)
}
elementwise_c64 {
  x = c64[32,40] parameter(0)
  y = c64[32,40] parameter(1)
  r = f32[40] parameter(2)
  m = c64[32,40] multiply(x, y)
  d = c64[32,40] divide(m, y)
  e = c64[32,40] exponential(d)
  l = c64[32,40] log(y)
  s = c64[32,40] sqrt(x)
  t = c64[32,40] tanh(s)
  p = c64[32,40] power(x, y)
  c = c64[40] complex(r, r)
  cb = c64[32,40] broadcast(c), dimensions={1}
  k = c64[] constant((0.5, -2))
  kb = c64[32,40] broadcast(k), dimensions={}
  sum = c64[32,40] add(e, l)
  sum2 = c64[32,40] add(sum, t)
  sum3 = c64[32,40] subtract(sum2, p)
  sum4 = c64[32,40] multiply(sum3, cb)
  eq = pred[32,40] compare(x, y), direction=NE
  sel = c64[32,40] select(eq, sum4, kb)
  a = f32[32,40] abs(sel)
  ROOT out = (c64[32,40], f32[32,40]) tuple(sel, a)
}
elementwise_c128 {
  x = c128[17,9] parameter(0)
  y = c128[17,9] parameter(1)
  q = c128[17,9] divide(x, y)
  s = c128[17,9] sine(q)
  c = c128[17,9] cosine(x)
  g = c128[17,9] sign(y)
  rs = c128[17,9] rsqrt(y)
  t = c128[17,9] tan(x)
  a = c128[17,9] add(s, c)
  b = c128[17,9] multiply(a, g)
  b2 = c128[17,9] add(b, rs)
  at = c128[17,9] atan2(x, y)
  b3 = c128[17,9] subtract(b2, at)
  re = f64[17,9] real(b3)
  im = f64[17,9] imag(b3)
  n = c64[17,9] convert(b3)
  ROOT out = (f64[17,9], f64[17,9], c64[17,9]) tuple(re, im, n)
}
transpose_c64 {
  x = c64[40,70] parameter(0)
  t = c64[70,40] transpose(x), dimensions={1,0}
  ROOT n = c64[70,40] negate(t)
}
)",
      mods::Reduce("rows_c64", "c64[12,500]", "c64[12]", "1", "(0, 0)", "add_c64"),
      mods::Reduce("columns_c64", "c64[300,20]", "c64[20]", "0", "(0, 0)", "add_c64"),
      mods::Reduce("rows_c128", "c128[5,64]", "c128[5]", "1", "(1, 0)", "mul_c128"),
      mods::ScatterRows("scatter_c64", "c64", 16, 8, 10, "add_c64"),
      mods::ScatterRows("scatter_set_c64", "c64", 16, 8, 10, "set_c64"),
  });
}

// Each named computation as one kernel: in the emulator against the
// interpreter for every seed, then through ptxas for sm_90 when the runfiles
// have it.
void ExpectKernelsMatchAndAssemble(Emulator& emulator, const HloModule& module,
                                   std::initializer_list<const char*> names,
                                   std::initializer_list<uint64_t> seeds) {
  const std::string ptxas = RunfilesPtxas();
  for (const char* name : names) {
    const HloComputation* computation = module.FindComputation(name);
    ASSERT_NE(computation, nullptr) << name;
    for (uint64_t seed : seeds) {
      bool ran = false;
      EXPECT_EQ(CheckKernel(emulator, *computation, seed, &ran), "") << name << " seed " << seed;
      EXPECT_TRUE(ran) << name;
    }
    if (ptxas.empty()) continue;
    GpuCompileOptions options;
    options.target = GpuTarget::ForComputeCapability(90);
    options.ptxas_path = ptxas;
    absl::StatusOr<GpuKernel> kernel = CompileGpuKernel(*computation, options);
    ASSERT_TRUE(kernel.ok()) << name << ": " << kernel.status();
    EXPECT_GE(kernel->cubin.size(), 4u) << name << ": " << kernel->note;
    std::cout << name << ": " << kernel->strategy << "\n";
  }
}

TEST(GpuEmulationTypes, ComplexKernelsMatchTheInterpreterAndAssemble) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(ComplexKernels());
  ASSERT_NE(module, nullptr);
  ExpectKernelsMatchAndAssemble(emulator, *module,
                                {"elementwise_c64", "elementwise_c128", "transpose_c64",
                                 "rows_c64", "columns_c64", "rows_c128", "scatter_c64",
                                 "scatter_set_c64"},
                                {3, 17});
}

// f8/f4 converts (a decode table and a search loop over it, see
// elemental_narrow_floats.cc), s4 data movement and dot, and arithmetic on
// s4/u4/f8/f4 as the pipeline's UpcastNarrowTypeArithmetic leaves it
// (converts around f32/s8/u8 ops, reducers included): in the emulator against
// the interpreter, and through ptxas.
std::string NarrowKernels() {
  return mods::Library({R"(f8_chain {
  x = f32[64] parameter(0)
  a = f8e5m2[64] convert(x)
  b = f8e4m3fn[64] convert(a)
  c = f8e4m3fnuz[64] convert(b)
  d = f8e5m2fnuz[64] convert(c)
  e = f8e4m3[64] convert(d)
  f = f8e3m4[64] convert(e)
  g = f4e2m1fn[64] convert(f)
  h = f8e8m0fnu[64] convert(g)
  ROOT r = f32[64] convert(h)
}
s4_dot {
  x = s4[8,16] parameter(0)
  y = s4[16] parameter(1)
  ROOT d = s8[8] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
s4_broadcast {
  x = s4[3] constant({-2, -3, -4})
  ROOT b = s4[3,31] broadcast(x), dimensions={0}
}
f8_arithmetic {
  x = f8e4m3fn[96] parameter(0)
  y = f8e4m3fn[96] parameter(1)
  a = f8e4m3fn[96] add(x, y)
  m = f8e4m3fn[96] multiply(a, y)
  d = f8e4m3fn[96] divide(m, x)
  q = f8e4m3fn[96] sqrt(y)
  z = f8e4m3fn[96] maximum(d, q)
  c = pred[96] compare(x, y), direction=LT
  s = f8e4m3fn[96] select(c, z, x)
  f = f4e2m1fn[96] convert(s)
  g = f4e2m1fn[96] negate(f)
  h = f4e2m1fn[96] add(f, g)
  ROOT r = (f8e4m3fn[96], f4e2m1fn[96]) tuple(s, h)
}
s4_arithmetic {
  x = s4[96] parameter(0)
  y = u4[96] parameter(1)
  a = s4[96] multiply(x, x)
  b = s4[96] divide(a, x)
  n = s4[96] negate(b)
  c = s4[96] shift-left(n, x)
  u = u4[96] add(y, y)
  v = u4[96] shift-right-logical(u, y)
  ROOT r = (s4[96], u4[96]) tuple(c, v)
}
max_f8e5m2 {
  a = f8e5m2[] parameter(0)
  b = f8e5m2[] parameter(1)
  ROOT m = f8e5m2[] maximum(a, b)
}
rows_f8e5m2 {
  x = f8e5m2[12,200] parameter(0)
  z = f8e5m2[] constant(0)
  ROOT r = f8e5m2[12] reduce(x, z), dimensions={1}, to_apply=max_f8e5m2
}
)"});
}

TEST(GpuEmulationTypes, NarrowTypeKernelsMatchTheInterpreterAndAssemble) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(NarrowKernels());
  ASSERT_NE(module, nullptr);
  UpcastNarrowTypeArithmetic upcast;
  absl::StatusOr<bool> upcasted = upcast.Run(*module);
  ASSERT_TRUE(upcasted.ok()) << upcasted.status();
  EXPECT_TRUE(*upcasted);
  ExpectKernelsMatchAndAssemble(
      emulator, *module,
      {"f8_chain", "s4_dot", "s4_broadcast", "f8_arithmetic", "s4_arithmetic", "rows_f8e5m2"},
      {3, 17});
}

// stochastic-convert (f32 with u32 random words -> s16, f16 -> s8): in the
// emulator against the interpreter, and through ptxas.
TEST(GpuEmulationTypes, StochasticConvertKernelsMatchTheInterpreterAndAssemble) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(mods::Library({R"(stochastic_f32 {
  x = f32[40,33] parameter(0)
  r = u32[40,33] parameter(1)
  s = f32[40,33] multiply(x, x)
  big = f32[] constant(300)
  b = f32[40,33] broadcast(big), dimensions={}
  y = f32[40,33] multiply(s, b)
  ROOT c = s16[40,33] stochastic-convert(y, r)
}
stochastic_f16 {
  x = f16[300] parameter(0)
  r = u16[300] parameter(1)
  ROOT c = s8[300] stochastic-convert(x, r)
}
)"}));
  ASSERT_NE(module, nullptr);
  ExpectKernelsMatchAndAssemble(emulator, *module, {"stochastic_f32", "stochastic_f16"}, {5});
}

// bitcast-convert between element widths (the narrow parts of a wide element
// along a new minor dimension) behind and ahead of index remaps, in integer
// and float types, as JAX's rng_bit_generator expansion emits it: in the
// emulator against the interpreter, and through ptxas.
TEST(GpuEmulationTypes, WidthChangingBitcastKernelsMatchTheInterpreterAndAssemble) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(mods::Library({R"(widen_u8 {
  p = u8[96] parameter(0)
  r = u8[4,6,4] reshape(p)
  w = s32[4,6] bitcast-convert(r)
  t = s32[6,4] transpose(w), dimensions={1,0}
  s = s32[6,4] add(t, t)
  b = u8[6,4,4] bitcast-convert(s)
  ROOT rev = u8[6,4,4] reverse(b), dimensions={2}
}
floats {
  f = f32[64] parameter(0)
  fr = f32[32,2] reshape(f)
  d = f64[32] bitcast-convert(fr)
  n = f64[32] negate(d)
  back = f32[32,2] bitcast-convert(n)
  h = bf16[16,2] parameter(1)
  hw = f32[16] bitcast-convert(h)
  m = f32[16] multiply(hw, hw)
  hn = bf16[16,2] bitcast-convert(m)
  ROOT out = (f32[32,2], bf16[16,2]) tuple(back, hn)
}
)"}));
  ASSERT_NE(module, nullptr);
  ExpectKernelsMatchAndAssemble(emulator, *module, {"widen_u8", "floats"}, {3, 17});
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
