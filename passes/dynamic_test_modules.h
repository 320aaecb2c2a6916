// Modules with bounded dynamic shapes shared by the DynamicPadder's tests
// and the host backend's (the same module checked at both layers).
#ifndef HLOC_PASSES_DYNAMIC_TEST_MODULES_H_
#define HLOC_PASSES_DYNAMIC_TEST_MODULES_H_

namespace hloc {
namespace dynamic_test_modules {

// p: f32[8], n: s32[] -> (sum of exp over the first n elements, n,
// exp of the first n elements as f32[<=8]).
inline constexpr char kReduceExp[] = R"(
HloModule dyn
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(p, n), dimensions={0}
  e = f32[<=8] exponential(d)
  z = f32[] constant(0)
  r = f32[] reduce(e, z), dimensions={0}, to_apply=add
  g = s32[] get-dimension-size(d), dimensions={0}
  ROOT t = (f32[], s32[], f32[<=8]) tuple(r, g, e)
}
)";

}  // namespace dynamic_test_modules
}  // namespace hloc

#endif  // HLOC_PASSES_DYNAMIC_TEST_MODULES_H_
