// Modules with bounded dynamic shapes shared by the DynamicPadder's tests
// and the host and CUDA backends' (the same module checked at each layer).
#ifndef HLOC_PASSES_DYNAMIC_TEST_MODULES_H_
#define HLOC_PASSES_DYNAMIC_TEST_MODULES_H_

#include <string>

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
inline constexpr char kReduceExpP[] = "f32[8] {0.5, 1, -2, 3, 0.25, 1.5, -1, 2}";

// p, q: f32[6], n: s32[] -> (max over a dynamic dim of a broadcast tanh/multiply
// chain, the chain as f32[3,<=6]).
inline constexpr char kElementwiseChain[] = R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  p = f32[6] parameter(0)
  q = f32[6] parameter(1)
  n = s32[] parameter(2)
  d = f32[<=6] set-dimension-size(p, n), dimensions={0}
  t = f32[<=6] tanh(d)
  m = f32[<=6] multiply(t, q)
  b = f32[3,<=6] broadcast(m), dimensions={1}
  one = f32[] constant(1)
  ones = f32[3,<=6] broadcast(one), dimensions={}
  s = f32[3,<=6] add(b, ones)
  lo = f32[] constant(-inf)
  r = f32[3] reduce(s, lo), dimensions={1}, to_apply=max
  ROOT out = (f32[3], f32[3,<=6]) tuple(r, s)
}
)";
inline constexpr char kElementwiseChainP[] = "f32[6] {0.5, -1, 2, 0.25, -3, 1}";
inline constexpr char kElementwiseChainQ[] = "f32[6] {1, 2, 3, 4, 5, 6}";

// p: u32[4,2], n: s32[] -> the first n rows of p widened to u64 and
// doubled, and the same narrowed back to u32[<=4,2]: a bitcast-convert
// between widths keeps the runtime size of the dimensions it shares.
inline constexpr char kBitcastConvertWidths[] = R"(
HloModule m
ENTRY e {
  p = u32[4,2] parameter(0)
  n = s32[] parameter(1)
  d = u32[<=4,2] set-dimension-size(p, n), dimensions={0}
  w = u64[<=4] bitcast-convert(d)
  x = u64[<=4] add(w, w)
  back = u32[<=4,2] bitcast-convert(x)
  ROOT t = (u64[<=4], u32[<=4,2]) tuple(x, back)
}
)";
inline constexpr char kBitcastConvertWidthsP[] =
    "u32[4,2] {{1, 2}, {3, 4}, {5, 4294967295}, {7, 8}}";

// a: f32[3,5], b: f32[5,4], n: s32[] -> dot contracting the first n columns
// of a with the first n rows of b (the padding may hold inf and nan).
inline constexpr char kDynamicContractionDot[] = R"(
HloModule m
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[5,4] parameter(1)
  n = s32[] parameter(2)
  da = f32[3,<=5] set-dimension-size(a, n), dimensions={1}
  db = f32[<=5,4] set-dimension-size(b, n), dimensions={0}
  ROOT d = f32[3,4] dot(da, db), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
inline constexpr char kDynamicContractionDotA[] =
    "f32[3,5] {{1, 2, 3, inf, 5}, {0.5, -1, 2, 4, nan}, {1, 1, 1, 1, 1}}";
inline constexpr char kDynamicContractionDotB[] =
    "f32[5,4] {{1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}, {2, 2, 2, 2}, {inf, 3, 3, 3}}";

// p: f32[4,4], n: s32[] -> p's first n columns as f32[4,<=4] (the shape of
// the corpus's emit_stablehlo set-dimension-size modules).
inline constexpr char kSetSizeRoot[] = R"(
HloModule set_size_root
ENTRY main {
  p = f32[4,4] parameter(0)
  n = s32[] parameter(1)
  ROOT d = f32[4,<=4] set-dimension-size(p, n), dimensions={1}
}
)";

// p: f32[2,6], q: s32[5], n, m: s32[] -> the first n columns of p sorted
// descending and reversed (both dimensions), the first m of q sorted and
// then reversed. The padding holds values that would sort first.
inline constexpr char kSortReverse[] = R"(
HloModule m
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[2,6] parameter(0)
  q = s32[5] parameter(1)
  n = s32[] parameter(2)
  m = s32[] parameter(3)
  d = f32[2,<=6] set-dimension-size(p, n), dimensions={1}
  s = f32[2,<=6] sort(d), dimensions={1}, to_apply=gt
  r = f32[2,<=6] reverse(d), dimensions={0,1}
  e = s32[<=5] set-dimension-size(q, m), dimensions={0}
  t = s32[<=5] sort(e), dimensions={0}, to_apply=lt, is_stable=true
  u = s32[<=5] reverse(t), dimensions={0}
  ROOT out = (f32[2,<=6], f32[2,<=6], s32[<=5], s32[<=5]) tuple(s, r, t, u)
}
)";
inline constexpr char kSortReverseP[] =
    "f32[2,6] {{3, -1, 7, 0.5, 99, 100}, {-4, 2, 2, 8, 50, 60}}";
inline constexpr char kSortReverseQ[] = "s32[5] {4, -3, 9, 0, -100}";

// Dynamic entry parameters. p: f32[<=8], q: f32[<=4,3] (arguments of any
// size up to the bounds) -> (sum of exp over p, column sums of q, p's size,
// exp of p as f32[<=8], p reshaped to f32[1,<=8]).
inline constexpr char kDynamicParameters[] = R"(
HloModule dynamic_parameters
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[<=8] parameter(0)
  q = f32[<=4,3] parameter(1)
  e = f32[<=8] exponential(p)
  z = f32[] constant(0)
  s = f32[] reduce(e, z), dimensions={0}, to_apply=add
  t = f32[3] reduce(q, z), dimensions={0}, to_apply=add
  g = s32[] get-dimension-size(p), dimensions={0}
  r = f32[1,<=8] reshape(p)
  ROOT out = (f32[], f32[3], s32[], f32[<=8], f32[1,<=8]) tuple(s, t, g, e, r)
}
)";
// Arguments of kDynamicParameters: p of size n (n <= 8 for the module; 9
// for a test of the bound), q of m rows.
inline std::string DynamicParametersP(int n) {
  std::string text = "f32[" + std::to_string(n) + "] {";
  for (int k = 0; k < n; ++k) text += (k ? ", " : "") + std::to_string(0.5 * k - 1);
  return text + "}";
}
inline std::string DynamicParametersQ(int m) {
  std::string text = "f32[" + std::to_string(m) + ",3] {";
  for (int k = 0; k < m; ++k) {
    text += (k ? ", {" : "{") + std::to_string(k + 1) + ", " + std::to_string(-2 * k) + ", 0.25}";
  }
  return text + "}";
}

// A tuple entry parameter with dynamic leaves. p: (f32[<=8], s32[],
// f32[2,<=3]) -> (sum of exp of p.0 plus p.1, exp of p.0, row sums of p.2,
// p.2 itself).
inline constexpr char kTupleParameter[] = R"(
HloModule tuple_parameter
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = (f32[<=8], s32[], f32[2,<=3]) parameter(0)
  x = f32[<=8] get-tuple-element(p), index=0
  k = s32[] get-tuple-element(p), index=1
  y = f32[2,<=3] get-tuple-element(p), index=2
  e = f32[<=8] exponential(x)
  z = f32[] constant(0)
  s = f32[] reduce(e, z), dimensions={0}, to_apply=add
  kf = f32[] convert(k)
  t = f32[] add(s, kf)
  ys = f32[2] reduce(y, z), dimensions={1}, to_apply=add
  ROOT out = (f32[], f32[<=8], f32[2], f32[2,<=3]) tuple(t, e, ys, y)
}
)";
// The argument of kTupleParameter, element by element: p.0 of size n,
// p.1 = 7, p.2 of m columns.
inline std::string TupleParameterX(int n) {
  std::string x = "f32[" + std::to_string(n) + "] {";
  for (int k = 0; k < n; ++k) x += (k ? ", " : "") + std::to_string(0.25 * k - 1);
  return x + "}";
}
inline std::string TupleParameterY(int m) {
  std::string y = "f32[2," + std::to_string(m) + "] {";
  for (int r = 0; r < 2; ++r) {
    y += r ? ", {" : "{";
    for (int k = 0; k < m; ++k) y += (k ? ", " : "") + std::to_string(r * 10 + k + 1);
    y += "}";
  }
  return y + "}";
}

// Sorts of several operands along a runtime-sized dimension, as argsort
// and sort-by-key lower. p: f32[2,6], n: s32[], q: f32[<=8] -> (the first
// n columns of p sorted ascending with their column indices (stable), q's
// argsort descending and q's negation permuted alike). The padding of p
// holds values that would sort first.
inline constexpr char kSortWithValues[] = R"(
HloModule sort_with_values
by_key {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
by_key_descending {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  e = f32[] parameter(4)
  f = f32[] parameter(5)
  ROOT r = pred[] compare(a, b), direction=GT
}
ENTRY main {
  p = f32[2,6] parameter(0)
  n = s32[] parameter(1)
  q = f32[<=8] parameter(2)
  d = f32[2,<=6] set-dimension-size(p, n), dimensions={1}
  i = s32[2,6] iota(), iota_dimension=1
  j = s32[2,<=6] set-dimension-size(i, n), dimensions={1}
  s = (f32[2,<=6], s32[2,<=6]) sort(d, j), dimensions={1}, to_apply=by_key, is_stable=true
  keys = f32[2,<=6] get-tuple-element(s), index=0
  index = s32[2,<=6] get-tuple-element(s), index=1
  m = s32[] get-dimension-size(q), dimensions={0}
  qi = s32[8] iota(), iota_dimension=0
  qj = s32[<=8] set-dimension-size(qi, m), dimensions={0}
  qn = f32[<=8] negate(q)
  t = (f32[<=8], s32[<=8], f32[<=8]) sort(q, qj, qn), dimensions={0},
    to_apply=by_key_descending, is_stable=true
  tq = f32[<=8] get-tuple-element(t), index=0
  ti = s32[<=8] get-tuple-element(t), index=1
  tn = f32[<=8] get-tuple-element(t), index=2
  ROOT out = (f32[2,<=6], s32[2,<=6], f32[<=8], s32[<=8], f32[<=8]) tuple(keys, index, tq, ti, tn)
}
)";
inline constexpr char kSortWithValuesP[] =
    "f32[2,6] {{3, -1, 7, 3, -99, -100}, {-4, 2, 2, 8, -50, -60}}";
// q of kSortWithValues, size n (with ties).
inline std::string SortWithValuesQ(int n) {
  std::string text = "f32[" + std::to_string(n) + "] {";
  for (int k = 0; k < n; ++k) {
    text += (k ? ", " : "") + std::to_string((k * 5) % 7 - 3 + (k % 3 == 0));
  }
  return text + "}";
}

// Runtime sizes into a while loop and conditional branches. w: a loop run
// size(p) times whose carried f32[<=8] grows by its (masked) sum each
// time; c: branch k of (negate p, p times (sum of p + 2)), k out of range
// taking the last branch.
inline constexpr char kLoopAndBranches[] = R"(
HloModule loop_and_branches
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  c = (f32[<=8], s32[]) parameter(0)
  i = s32[] get-tuple-element(c), index=1
  x = f32[<=8] get-tuple-element(c), index=0
  n = s32[] get-dimension-size(x), dimensions={0}
  ROOT r = pred[] compare(i, n), direction=LT
}
body {
  b = (f32[<=8], s32[]) parameter(0)
  x = f32[<=8] get-tuple-element(b), index=0
  i = s32[] get-tuple-element(b), index=1
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0}, to_apply=add
  eighth = f32[] constant(0.125)
  t = f32[] multiply(s, eighth)
  sb = f32[<=8] broadcast(t), dimensions={}
  y = f32[<=8] add(x, sb)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT r = (f32[<=8], s32[]) tuple(y, j)
}
negate_branch {
  a = f32[<=8] parameter(0)
  ROOT n = f32[<=8] negate(a)
}
scale_branch {
  a = (f32[<=8], f32[]) parameter(0)
  x = f32[<=8] get-tuple-element(a), index=0
  c = f32[] get-tuple-element(a), index=1
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0}, to_apply=add
  t = f32[] add(s, c)
  tb = f32[<=8] broadcast(t), dimensions={}
  ROOT m = f32[<=8] multiply(x, tb)
}
ENTRY main {
  p = f32[<=8] parameter(0)
  k = s32[] parameter(1)
  zero = s32[] constant(0)
  t = (f32[<=8], s32[]) tuple(p, zero)
  w = (f32[<=8], s32[]) while(t), condition=cond, body=body
  wx = f32[<=8] get-tuple-element(w), index=0
  wi = s32[] get-tuple-element(w), index=1
  two = f32[] constant(2)
  pc = (f32[<=8], f32[]) tuple(p, two)
  c = f32[<=8] conditional(k, p, pc), branch_computations={negate_branch, scale_branch}
  ROOT out = (f32[<=8], s32[], f32[<=8]) tuple(wx, wi, c)
}
)";

// Size checks inside a loop body and a branch. p: f32[<=4], m: s32[] ->
// (the loop's carried value after m iterations, each shrinking it by the
// iteration number with set-dimension-size, and the sum of what each saw;
// negate p (m = 0) or p less its last element (m >= 1)). A size that goes
// negative (m = 4 for p of 4, or p of 0 with m >= 1) is the error naming
// the set-dimension-size.
inline constexpr char kChecksInLoopAndBranch[] = R"(
HloModule checks_in_loop_and_branch
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  c = (f32[<=4], s32[], s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(c), index=1
  m = s32[] get-tuple-element(c), index=2
  ROOT r = pred[] compare(i, m), direction=LT
}
body {
  b = (f32[<=4], s32[], s32[], f32[]) parameter(0)
  x = f32[<=4] get-tuple-element(b), index=0
  i = s32[] get-tuple-element(b), index=1
  m = s32[] get-tuple-element(b), index=2
  acc = f32[] get-tuple-element(b), index=3
  n = s32[] get-dimension-size(x), dimensions={0}
  k = s32[] subtract(n, i)
  y = f32[<=4] set-dimension-size(x, k), dimensions={0}
  z = f32[] constant(0)
  s = f32[] reduce(y, z), dimensions={0}, to_apply=add
  a = f32[] add(acc, s)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (f32[<=4], s32[], s32[], f32[]) tuple(y, j, m, a)
}
keep {
  a = f32[<=4] parameter(0)
  ROOT n = f32[<=4] negate(a)
}
shrink {
  a = f32[<=4] parameter(0)
  n = s32[] get-dimension-size(a), dimensions={0}
  one = s32[] constant(1)
  k = s32[] subtract(n, one)
  ROOT y = f32[<=4] set-dimension-size(a, k), dimensions={0}
}
ENTRY main {
  p = f32[<=4] parameter(0)
  m = s32[] parameter(1)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  t = (f32[<=4], s32[], s32[], f32[]) tuple(p, zero, m, z)
  w = (f32[<=4], s32[], s32[], f32[]) while(t), condition=cond, body=body
  wx = f32[<=4] get-tuple-element(w), index=0
  wa = f32[] get-tuple-element(w), index=3
  c = f32[<=4] conditional(m, p, p), branch_computations={keep, shrink}
  ROOT out = (f32[<=4], f32[], f32[<=4]) tuple(wx, wa, c)
}
)";

// A size check in a loop condition: the condition sets x's size to
// m - 2i (checked against x's runtime size n) and loops while that is
// positive; the body sums x. m > n fails at once, an odd m <= n fails
// mid-loop (the size goes negative), an even one ends the loop.
inline constexpr char kCheckInLoopCondition[] = R"(
HloModule check_in_loop_condition
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  c = (f32[<=4], s32[], s32[], f32[]) parameter(0)
  x = f32[<=4] get-tuple-element(c), index=0
  i = s32[] get-tuple-element(c), index=1
  m = s32[] get-tuple-element(c), index=2
  two = s32[] constant(2)
  i2 = s32[] multiply(i, two)
  k = s32[] subtract(m, i2)
  y = f32[<=4] set-dimension-size(x, k), dimensions={0}
  s = s32[] get-dimension-size(y), dimensions={0}
  zero = s32[] constant(0)
  ROOT r = pred[] compare(s, zero), direction=GT
}
body {
  b = (f32[<=4], s32[], s32[], f32[]) parameter(0)
  x = f32[<=4] get-tuple-element(b), index=0
  i = s32[] get-tuple-element(b), index=1
  m = s32[] get-tuple-element(b), index=2
  acc = f32[] get-tuple-element(b), index=3
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0}, to_apply=add
  a = f32[] add(acc, s)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (f32[<=4], s32[], s32[], f32[]) tuple(x, j, m, a)
}
ENTRY main {
  p = f32[<=4] parameter(0)
  m = s32[] parameter(1)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  t = (f32[<=4], s32[], s32[], f32[]) tuple(p, zero, m, z)
  w = (f32[<=4], s32[], s32[], f32[]) while(t), condition=cond, body=body
  wi = s32[] get-tuple-element(w), index=1
  wa = f32[] get-tuple-element(w), index=3
  ROOT out = (s32[], f32[]) tuple(wi, wa)
}
)";

// Input/output aliasing in a module with dynamic shapes (TensorFlow's
// updated variable next to a boolean mask): w (aliased with result 0) gets
// the sum of its first n elements, negated, added; result 1 is that prefix.
inline constexpr char kAliasedWithDynamicResult[] = R"(
HloModule aliased_with_dynamic_result, input_output_alias={ {0}: (0, {}, may-alias) }
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  w = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(w, n), dimensions={0}
  nd = f32[<=8] negate(d)
  zero = f32[] constant(0)
  s = f32[] reduce(nd, zero), dimensions={0}, to_apply=add
  sb = f32[8] broadcast(s), dimensions={}
  w2 = f32[8] add(w, sb)
  ROOT t = (f32[8], f32[<=8]) tuple(w2, nd)
}
)";

// XLA's PadToStatic and SliceToDynamic custom calls: exp of p (runtime
// size n) padded to static with zeros, doubled, then cut to m (<= 8, else
// an error naming SliceToDynamic) and negated.
inline constexpr char kPadToStaticSliceToDynamic[] = R"(
HloModule pad_to_static_slice_to_dynamic
ENTRY main {
  p = f32[<=8] parameter(0)
  m = s32[] parameter(1)
  e = f32[<=8] exponential(p)
  pts = (f32[8], s32[]) custom-call(e), custom_call_target="PadToStatic"
  v = f32[8] get-tuple-element(pts), index=0
  size = s32[] get-tuple-element(pts), index=1
  w = f32[8] add(v, v)
  std = f32[<=8] custom-call(w, m), custom_call_target="SliceToDynamic"
  neg = f32[<=8] negate(std)
  ROOT out = (f32[8], s32[], f32[<=8]) tuple(w, size, neg)
}
)";

// An XlaBuilder call whose decomposition has dynamic shapes: cosh of p
// (runtime size n), summed.
inline constexpr char kDynamicBuilderCall[] = R"(
HloModule dynamic_builder_call
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cosh_impl {
  x = f32[<=8] parameter(0)
  e = f32[<=8] exponential(x)
  n = f32[<=8] negate(x)
  f = f32[<=8] exponential(n)
  t = f32[<=8] add(e, f)
  half = f32[] constant(0.5)
  h = f32[<=8] broadcast(half), dimensions={}
  ROOT c = f32[<=8] multiply(t, h)
}
ENTRY main {
  p = f32[<=8] parameter(0)
  c = f32[<=8] custom-call(p), custom_call_target="xla_builder.math.Cosh", called_computations={cosh_impl}
  z = f32[] constant(0)
  s = f32[] reduce(c, z), dimensions={0}, to_apply=add
  ROOT out = (f32[<=8], f32[]) tuple(c, s)
}
)";

// Gathers and dynamic slices from a runtime-sized operand: start indices
// clamp to its runtime size, as in the interpreter. p has n elements, i
// and j are start indices (clamped, so 7 reads the last window).
inline constexpr char kSlicingRuntimeSized[] = R"(
HloModule slicing_runtime_sized
ENTRY main {
  p = f32[<=8] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ds = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}
  u = f32[1] constant({100})
  dus = f32[<=8] dynamic-update-slice(p, u, j)
  idx = s32[3,1] constant({{0}, {5}, {-2}})
  ij = s32[1,1] reshape(i)
  all = s32[4,1] concatenate(idx, ij), dimensions={0}
  g = f32[4,1] gather(p, all), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  ROOT out = (f32[2], f32[<=8], f32[4,1]) tuple(ds, dus, g)
}
)";

// Scatters with runtime-sized indices and updates (m of them, TensorFlow's
// scatter after tf.where), into a runtime-sized p (n elements) and into a
// static array, and a 2-wide window at j into p (skipped where it does not
// fit p's runtime size).
inline constexpr char kScatterRuntimeSized[] = R"(
HloModule scatter_runtime_sized
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[<=8] parameter(0)
  m = s32[] parameter(1)
  j = s32[] parameter(2)
  idx = s32[8,1] constant({{0}, {2}, {4}, {6}, {7}, {1}, {3}, {5}})
  ids = s32[<=8,1] set-dimension-size(idx, m), dimensions={0}
  upd = f32[8] constant({10, 20, 30, 40, 50, 60, 70, 80})
  ups = f32[<=8] set-dimension-size(upd, m), dimensions={0}
  s = f32[<=8] scatter(p, ids, ups), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  base = f32[8] constant({1, 1, 1, 1, 1, 1, 1, 1})
  t = f32[8] scatter(base, ids, ups), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  jj = s32[1,1] reshape(j)
  w = f32[1,2] constant({{100, 200}})
  sw = f32[<=8] scatter(p, jj, w), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT out = (f32[<=8], f32[8], f32[<=8]) tuple(s, t, sw)
}
)";

// Windows over runtime-sized dimensions: a cumulative sum (JAX's cumsum), a
// strided max pool, a base-dilated sum, a variadic (argmax) window, and
// convolutions over a runtime-sized spatial dimension, runtime-sized input
// features (kernel sized alike) and a runtime-sized batch.
inline constexpr char kWindowsRuntimeSized[] = R"(
HloModule windows_runtime_sized
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  ge = pred[] compare(a, b), direction=GE
  v = f32[] select(ge, a, b)
  i = s32[] select(ge, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY main {
  p = f32[<=8] parameter(0)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  cumsum = f32[<=8] reduce-window(p, zero), window={size=8 pad=7_0}, to_apply=add
  pool = f32[<=4] reduce-window(p, ninf), window={size=3 stride=2 pad=1_1}, to_apply=max
  dilated = f32[<=14] reduce-window(p, zero), window={size=2 lhs_dilate=2}, to_apply=add
  iota = s32[8] iota(), iota_dimension=0
  n = s32[] get-dimension-size(p), dimensions={0}
  ids = s32[<=8] set-dimension-size(iota, n), dimensions={0}
  none = s32[] constant(-1)
  am = (f32[<=7], s32[<=7]) reduce-window(p, ids, ninf, none), window={size=2}, to_apply=argmax
  amv = f32[<=7] get-tuple-element(am), index=0
  ami = s32[<=7] get-tuple-element(am), index=1
  x = f32[1,<=8,1] reshape(p)
  k = f32[3,1,2] constant({{{1, -1}}, {{2, 0.5}}, {{-1, 3}}})
  conv = f32[1,<=4,2] convolution(x, k), window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f
  xf = f32[1,1,<=8] reshape(p)
  kc = f32[1,8,2] constant({{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {-1, -2}, {-3, -4}, {-5, -6}, {-7, -8}}})
  kf = f32[1,<=8,2] set-dimension-size(kc, n), dimensions={1}
  convf = f32[1,1,2] convolution(xf, kf), window={size=1}, dim_labels=b0f_0io->b0f
  xb = f32[<=8,3,1] broadcast(p), dimensions={0}
  kb = f32[2,1,1] constant({{{1}}, {{-2}}})
  convb = f32[<=8,2,1] convolution(xb, kb), window={size=2}, dim_labels=b0f_0io->b0f
  ROOT out = (f32[<=8], f32[<=4], f32[<=14], f32[<=7], s32[<=7], f32[1,<=4,2], f32[1,1,2], f32[<=8,2,1]) tuple(cumsum, pool, dilated, amv, ami, conv, convf, convb)
}
)";

// Calls whose callees have dynamic shapes (one nested in the other): p of
// size n -> p times (sum of exp of p, plus 1).
inline constexpr char kDynamicCalls[] = R"(
HloModule calls
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
inner {
  x = f32[<=8] parameter(0)
  z = f32[] constant(0)
  ROOT s = f32[] reduce(x, z), dimensions={0}, to_apply=add
}
outer {
  x = f32[<=8] parameter(0)
  k = f32[] parameter(1)
  e = f32[<=8] exponential(x)
  s = f32[] call(e), to_apply=inner
  sk = f32[] add(s, k)
  b = f32[<=8] broadcast(sk), dimensions={}
  ROOT m = f32[<=8] multiply(x, b)
}
ENTRY e {
  p = f32[<=8] parameter(0)
  one = f32[] constant(1)
  ROOT c = f32[<=8] call(p, one), to_apply=outer
}
)";

}  // namespace dynamic_test_modules
}  // namespace hloc

#endif  // HLOC_PASSES_DYNAMIC_TEST_MODULES_H_
