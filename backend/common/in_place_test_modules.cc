// The shared in-place test modules (see in_place_test_modules.h).
#include "backend/common/in_place_test_modules.h"

namespace hloc {
namespace in_place_testing {

const char kScanRows[] = R"(
HloModule scan_rows

body {
  p = (s32[], f32[64,128], f32[128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[64,128] get-tuple-element(p), index=1
  row = f32[128] get-tuple-element(p), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  two = f32[] constant(2)
  twos = f32[128] broadcast(two), dimensions={}
  new_row = f32[128] add(row, twos)
  update = f32[1,128] reshape(new_row)
  zero = s32[] constant(0)
  new_acc = f32[64,128] dynamic-update-slice(acc, update, i, zero)
  ROOT t = (s32[], f32[64,128], f32[128]) tuple(next, new_acc, new_row)
}

cond {
  p = (s32[], f32[64,128], f32[128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(64)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  x = f32[128] parameter(0)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  acc = f32[64,128] broadcast(z), dimensions={}
  init = (s32[], f32[64,128], f32[128]) tuple(zero, acc, x)
  w = (s32[], f32[64,128], f32[128]) while(init), condition=cond, body=body
  ROOT r = f32[64,128] get-tuple-element(w), index=1
}
)";

const char kScanStacksThree[] = R"(
HloModule scan_stacks_three

body {
  p = (s32[], f32[128], f32[64,128], f32[64,128], f32[64,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  row = f32[128] get-tuple-element(p), index=1
  a = f32[64,128] get-tuple-element(p), index=2
  b = f32[64,128] get-tuple-element(p), index=3
  c = f32[64,128] get-tuple-element(p), index=4
  one = s32[] constant(1)
  next = s32[] add(i, one)
  half = f32[] constant(0.5)
  halves = f32[128] broadcast(half), dimensions={}
  new_row = f32[128] multiply(row, halves)
  update = f32[1,128] reshape(new_row)
  doubled = f32[128] add(new_row, new_row)
  update2 = f32[1,128] reshape(doubled)
  zero = s32[] constant(0)
  new_a = f32[64,128] dynamic-update-slice(a, update, i, zero)
  new_b = f32[64,128] dynamic-update-slice(b, update2, i, zero)
  new_c = f32[64,128] dynamic-update-slice(c, update, i, zero)
  ROOT t = (s32[], f32[128], f32[64,128], f32[64,128], f32[64,128]) tuple(next, new_row, new_a, new_b, new_c)
}

cond {
  p = (s32[], f32[128], f32[64,128], f32[64,128], f32[64,128]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(64)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  x = f32[128] parameter(0)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  a = f32[64,128] broadcast(z), dimensions={}
  b = f32[64,128] broadcast(z), dimensions={}
  c = f32[64,128] broadcast(z), dimensions={}
  init = (s32[], f32[128], f32[64,128], f32[64,128], f32[64,128]) tuple(zero, x, a, b, c)
  w = (s32[], f32[128], f32[64,128], f32[64,128], f32[64,128]) while(init), condition=cond, body=body
  ga = f32[64,128] get-tuple-element(w), index=2
  gb = f32[64,128] get-tuple-element(w), index=3
  gc = f32[64,128] get-tuple-element(w), index=4
  ROOT r = (f32[64,128], f32[64,128], f32[64,128]) tuple(ga, gb, gc)
}
)";

const char kLoopResultNotReadingState[] = R"(
HloModule loop_result_not_reading_state

body {
  p = (s32[], f32[1024], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[1024] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  onef = f32[] constant(1)
  ones = f32[1024] broadcast(onef), dimensions={}
  new_x = f32[1024] add(x, ones)
  new_y = f32[1024] add(x, x)
  ROOT t = (s32[], f32[1024], f32[1024]) tuple(next, new_x, new_y)
}

cond {
  p = (s32[], f32[1024], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  x = f32[1024] parameter(0)
  y = f32[1024] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[1024], f32[1024]) tuple(zero, x, y)
  w = (s32[], f32[1024], f32[1024]) while(init), condition=cond, body=body
  wx = f32[1024] get-tuple-element(w), index=1
  wy = f32[1024] get-tuple-element(w), index=2
  ROOT r = (f32[1024], f32[1024]) tuple(wx, wy)
}
)";

const char kAccumulatorsInOneFusion[] = R"(
HloModule accumulators_in_one_fusion

accumulate {
  p0 = f32[64,32] parameter(0)
  p1 = f32[64,32] parameter(1)
  p2 = f32[64,32] parameter(2)
  p3 = f32[512] parameter(3)
  a = f32[64,32] add(p0, p2)
  m = f32[64,32] multiply(p2, p2)
  b = f32[64,32] add(p1, m)
  c = f32[512] negate(p3)
  ROOT t = (f32[64,32], f32[64,32], f32[512]) tuple(a, b, c)
}

body {
  p = (s32[], f32[64,32], f32[64,32], f32[64,32], f32[512]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc_a = f32[64,32] get-tuple-element(p), index=1
  acc_b = f32[64,32] get-tuple-element(p), index=2
  g = f32[64,32] get-tuple-element(p), index=3
  h = f32[512] get-tuple-element(p), index=4
  one = s32[] constant(1)
  next = s32[] add(i, one)
  f = (f32[64,32], f32[64,32], f32[512]) fusion(acc_a, acc_b, g, h), kind=kLoop, calls=accumulate
  new_a = f32[64,32] get-tuple-element(f), index=0
  new_b = f32[64,32] get-tuple-element(f), index=1
  new_h = f32[512] get-tuple-element(f), index=2
  ROOT t = (s32[], f32[64,32], f32[64,32], f32[64,32], f32[512]) tuple(next, new_a, new_b, g, new_h)
}

cond {
  p = (s32[], f32[64,32], f32[64,32], f32[64,32], f32[512]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  g = f32[64,32] parameter(0)
  h = f32[512] parameter(1)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  a = f32[64,32] broadcast(z), dimensions={}
  b = f32[64,32] broadcast(z), dimensions={}
  init = (s32[], f32[64,32], f32[64,32], f32[64,32], f32[512]) tuple(zero, a, b, g, h)
  w = (s32[], f32[64,32], f32[64,32], f32[64,32], f32[512]) while(init), condition=cond, body=body
  wa = f32[64,32] get-tuple-element(w), index=1
  wb = f32[64,32] get-tuple-element(w), index=2
  wh = f32[512] get-tuple-element(w), index=4
  ROOT r = (f32[64,32], f32[64,32], f32[512]) tuple(wa, wb, wh)
}
)";

const char kScanKeepsOld[] = R"(
HloModule scan_keeps_old

body {
  p = (s32[], f32[8,4], f32[4], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[8,4] get-tuple-element(p), index=1
  row = f32[4] get-tuple-element(p), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  new_row = f32[4] add(row, row)
  update = f32[1,4] reshape(new_row)
  zero = s32[] constant(0)
  new_acc = f32[8,4] dynamic-update-slice(acc, update, i, zero)
  ROOT t = (s32[], f32[8,4], f32[4], f32[8,4]) tuple(next, new_acc, new_row, acc)
}

cond {
  p = (s32[], f32[8,4], f32[4], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  x = f32[4] parameter(0)
  a = f32[8,4] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[8,4], f32[4], f32[8,4]) tuple(zero, a, x, a)
  ROOT w = (s32[], f32[8,4], f32[4], f32[8,4]) while(init), condition=cond, body=body
}
)";

const char kDusParameter[] = R"(
HloModule dus_parameter
ENTRY main {
  a = f32[16,8] parameter(0)
  u = f32[3,8] parameter(1)
  i = s32[] parameter(2)
  zero = s32[] constant(0)
  ROOT d = f32[16,8] dynamic-update-slice(a, u, i, zero)
}
)";

const char kDusDeadTemp[] = R"(
HloModule dus_temp
ENTRY main {
  a = f32[32,16] parameter(0)
  u = f32[4,16] parameter(1)
  i = s32[] parameter(2)
  t = f32[32,16] add(a, a)
  zero = s32[] constant(0)
  ROOT d = f32[32,16] dynamic-update-slice(t, u, i, zero)
}
)";

const char kDusLiveTemp[] = R"(
HloModule dus_temp_live
ENTRY main {
  a = f32[32,16] parameter(0)
  u = f32[4,16] parameter(1)
  i = s32[] parameter(2)
  t = f32[32,16] add(a, a)
  zero = s32[] constant(0)
  d = f32[32,16] dynamic-update-slice(t, u, i, zero)
  ROOT r = (f32[32,16], f32[32,16]) tuple(d, t)
}
)";

const char kDusReadsTarget[] = R"(
HloModule dus_self
fused {
  p0 = f32[16,8] parameter(0)
  p1 = s32[] parameter(1)
  s = f32[2,8] slice(p0), slice={[0:2], [0:8]}
  zero = s32[] constant(0)
  ROOT d = f32[16,8] dynamic-update-slice(p0, s, p1, zero)
}
ENTRY main {
  a = f32[16,8] parameter(0)
  i = s32[] parameter(1)
  t = f32[16,8] negate(a)
  ROOT f = f32[16,8] fusion(t, i), kind=kLoop, calls=fused
}
)";

const char kDusFused[] = R"(
HloModule dus_fused
fused {
  p0 = f32[256,64] parameter(0)
  p1 = f32[2,64] parameter(1)
  p2 = s32[] parameter(2)
  e = f32[2,64] exponential(p1)
  zero = s32[] constant(0)
  ROOT d = f32[256,64] dynamic-update-slice(p0, e, p2, zero)
}
ENTRY main {
  a = f32[256,64] parameter(0)
  u = f32[2,64] parameter(1)
  i = s32[] parameter(2)
  t = f32[256,64] negate(a)
  ROOT f = f32[256,64] fusion(t, u, i), kind=kLoop, calls=fused
}
)";

const char kDusAccumulatesWindow[] = R"(
HloModule dus_accumulate
fused {
  p0 = f32[64,32] parameter(0)
  p1 = f32[8,32] parameter(1)
  p2 = s32[] parameter(2)
  zero = s32[] constant(0)
  w = f32[8,32] dynamic-slice(p0, p2, zero), dynamic_slice_sizes={8,32}
  a = f32[8,32] add(w, p1)
  ROOT d = f32[64,32] dynamic-update-slice(p0, a, p2, zero)
}
fused2 {
  p0 = f32[64,32] parameter(0)
  p1 = f32[8,32] parameter(1)
  p2 = s32[] parameter(2)
  zero = s32[] constant(0)
  w = f32[8,32] dynamic-slice(p0, p2, zero), dynamic_slice_sizes={8,32}
  a = f32[8,32] add(w, p1)
  ROOT d = f32[64,32] dynamic-update-slice(p0, a, p2, zero)
}
fused3 {
  p0 = f32[64,32] parameter(0)
  p1 = f32[8,32] parameter(1)
  p2 = s32[] parameter(2)
  zero = s32[] constant(0)
  w = f32[8,32] dynamic-slice(p0, p2, zero), dynamic_slice_sizes={8,32}
  a = f32[8,32] add(w, p1)
  ROOT d = f32[64,32] dynamic-update-slice(p0, a, p2, zero)
}
ENTRY main {
  b = f32[64,32] parameter(0)
  u = f32[8,32] parameter(1)
  i = s32[] parameter(2)
  t = f32[64,32] negate(b)
  f1 = f32[64,32] fusion(t, u, i), kind=kLoop, calls=fused
  j = s32[] add(i, i)
  f2 = f32[64,32] fusion(f1, u, j), kind=kLoop, calls=fused2
  k = s32[] add(j, i)
  ROOT f3 = f32[64,32] fusion(f2, u, k), kind=kLoop, calls=fused3
}
)";

const char kDonatedUpdate[] = R"(
HloModule dus_donated, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY main {
  a = f32[64,32] parameter(0)
  u = f32[2,32] parameter(1)
  i = s32[] parameter(2)
  zero = s32[] constant(0)
  ROOT d = f32[64,32] dynamic-update-slice(a, u, i, zero)
}
)";

const char kDonatedScan[] = R"(
HloModule scan_donated, input_output_alias={ {}: (0, {}, must-alias) }

body {
  p = (s32[], f32[16,8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[16,8] get-tuple-element(p), index=1
  row = f32[8] get-tuple-element(p), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  new_row = f32[8] multiply(row, row)
  update = f32[1,8] reshape(new_row)
  zero = s32[] constant(0)
  new_acc = f32[16,8] dynamic-update-slice(acc, update, i, zero)
  ROOT t = (s32[], f32[16,8], f32[8]) tuple(next, new_acc, new_row)
}

cond {
  p = (s32[], f32[16,8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(12)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  a = f32[16,8] parameter(0)
  x = f32[8] parameter(1)
  start = s32[] parameter(2)
  init = (s32[], f32[16,8], f32[8]) tuple(start, a, x)
  w = (s32[], f32[16,8], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[16,8] get-tuple-element(w), index=1
}
)";

const char kDonatedReverse[] = R"(
HloModule reverse_donated, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY main {
  a = f32[64] parameter(0)
  i = s32[] parameter(1)
  ROOT r = f32[64] reverse(a), dimensions={0}
}
)";

const char kDonatedElementwise[] = R"(
HloModule elementwise_donated, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY main {
  a = f32[256] parameter(0)
  b = f32[256] parameter(1)
  i = s32[] parameter(2)
  m = f32[256] multiply(a, b)
  ROOT y = f32[256] add(m, a)
}
)";

const char kDonatedElementwiseFusion[] = R"(
HloModule elementwise_fusion_donated, input_output_alias={ {}: (0, {}, may-alias) }
fused {
  p0 = s32[32,8] parameter(0)
  p1 = f32[32,8] parameter(1)
  f = f32[32,8] convert(p0)
  lt = pred[32,8] compare(f, p1), direction=LT
  n = f32[32,8] negate(f)
  s = f32[32,8] select(lt, n, p1)
  ROOT c = s32[32,8] convert(s)
}
ENTRY main {
  a = s32[32,8] parameter(0)
  b = f32[32,8] parameter(1)
  i = s32[] parameter(2)
  ROOT y = s32[32,8] fusion(a, b), kind=kLoop, calls=fused
}
)";

const char kDonatedFusionReadsElsewhere[] = R"(
HloModule reads_elsewhere_donated, input_output_alias={ {}: (0, {}, may-alias) }
fused {
  p0 = f32[256] parameter(0)
  r = f32[256] reverse(p0), dimensions={0}
  ROOT s = f32[256] add(p0, r)
}
ENTRY main {
  a = f32[256] parameter(0)
  i = s32[] parameter(1)
  ROOT y = f32[256] fusion(a), kind=kLoop, calls=fused
}
)";

const char kBadAlias[] = R"(
HloModule bad_alias, input_output_alias={ {}: (3, {}, may-alias) }
ENTRY main {
  a = f32[64] parameter(0)
  ROOT r = f32[64] negate(a)
}
)";

}  // namespace in_place_testing
}  // namespace hloc
