// Data movement, reductions, contractions, fusions and control flow on the
// host against the interpreter. Index-only ops must match bit for bit;
// anything that sums floats matches within the default tolerance (the
// interpreter sums in double or in blocks, kernels sum in order).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "backend/host/host_test_util.h"
#include "gtest/gtest.h"
#include "backend/host/host_compiler.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

using host_testing::ExpectClose;
using host_testing::ExpectExact;
using host_testing::ParseLiteralText;
using host_testing::RandomArgs;
using host_testing::RunBoth;
using host_testing::TestOptions;

void Exact(absl::string_view hlo) { ExpectExact(hlo, RandomArgs(hlo)); }
void Close(absl::string_view hlo) { ExpectClose(hlo, RandomArgs(hlo)); }

// `hlo` compiled for the host as written (no pipeline), or null after a
// test failure.
std::unique_ptr<host::HostProgram> CompileAsIs(absl::string_view hlo) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return nullptr;
  host::HostCompileOptions options;
  options.compiler = host_testing::SharedCompiler();
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(**module, options);
  EXPECT_TRUE(program.ok()) << program.status();
  return program.ok() ? *std::move(program) : nullptr;
}

TEST(HostDataMovementTest, BroadcastReshapeTransposeSlice) {
  Exact(R"(
HloModule m
ENTRY e {
  p = f32[3,5] parameter(0)
  b = f32[2,3,4,5] broadcast(p), dimensions={1,3}
  r = f32[6,20] reshape(b)
  t = f32[20,6] transpose(r), dimensions={1,0}
  s = f32[7,3] slice(t), slice={[1:20:3], [0:6:2]}
  q = f32[3] parameter(1)
  bq = f32[3,5] broadcast(q), dimensions={0}
  ROOT out = (f32[7,3], f32[20,6], f32[3,5]) tuple(s, t, bq)
})");
  Exact(R"(
HloModule m
ENTRY e {
  p = s32[2,3,4] parameter(0)
  t = s32[4,2,3] transpose(p), dimensions={2,0,1}
  ROOT r = s32[8,3] reshape(t)
})");
}

TEST(HostDataMovementTest, BitcastChangingElementType) {
  // Fused (elemental) and unfused (aliasing) bitcasts that reinterpret bits.
  Exact(R"(
HloModule m
bits {
  x = f32[4,6] parameter(0)
  b = s32[24] bitcast(x)
  c1 = s32[] constant(1)
  one = s32[24] broadcast(c1), dimensions={}
  ROOT a = s32[24] add(b, one)
}
ENTRY e {
  x = f32[4,6] parameter(0)
  f = s32[24] fusion(x), kind=kLoop, calls=bits
  u = u32[6,4] bitcast(x)
  ROOT t = (s32[24], u32[6,4]) tuple(f, u)
})");
}

TEST(HostDataMovementTest, PadConcatenateReverseIota) {
  Exact(R"(
HloModule m
ENTRY e {
  p = f32[4,5] parameter(0)
  v = f32[] constant(-7)
  a = f32[10,6] pad(p, v), padding=2_1_1x-1_2
  b = f32[4,2] parameter(1)
  c = f32[4,3] parameter(2)
  cat = f32[4,10] concatenate(p, b, c), dimensions={1}
  rev = f32[4,10] reverse(cat), dimensions={0,1}
  i = s32[4,10] iota(), iota_dimension=1
  f = bf16[4,10] iota(), iota_dimension=0
  ROOT out = (f32[10,6], f32[4,10], s32[4,10], bf16[4,10]) tuple(a, rev, i, f)
})");
}

// Start indices of one op share one type (the verifier's rule, as XLA's):
// signed starts for the slice, unsigned ones for the update.
TEST(HostDataMovementTest, DynamicSliceClampsStarts) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  x = f32[8,6] parameter(0)
  i = s32[] parameter(1)
  j = u32[] parameter(2)
  u = f32[3,4] parameter(3)
  s = f32[3,4] dynamic-slice(x, i, i), dynamic_slice_sizes={3,4}
  d = f32[8,6] dynamic-update-slice(x, u, j, j)
  ROOT out = (f32[3,4], f32[8,6]) tuple(s, d)
})";
  for (const char* starts : {"0 0", "-3 2", "7 1", "2 4000000000", "100 3"}) {
    SCOPED_TRACE(starts);
    std::vector<Literal> args = RandomArgs(hlo);
    int i, j;
    std::sscanf(starts, "%d", &i);
    unsigned long long jj = std::strtoull(std::strchr(starts, ' ') + 1, nullptr, 10);
    j = static_cast<int>(jj);
    args[1] = Literal::Scalar(xla::S32, i);
    args[2] = Literal(Shape::Scalar(xla::U32));
    args[2].SetFromUint64(0, jj);
    (void)j;
    ExpectExact(hlo, args);
  }
}

TEST(HostDataMovementTest, Gather) {
  // Embedding lookup (rows of a table) with out-of-range ids clamped.
  const char* hlo = R"(
HloModule m
ENTRY e {
  table = f32[10,4] parameter(0)
  ids = s32[6] parameter(1)
  ROOT g = f32[6,4] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
})";
  std::vector<Literal> args = RandomArgs(hlo);
  args[1] = ParseLiteralText("s32[6] {0, 9, 3, -2, 12, 5}");
  ExpectExact(hlo, args);
  Exact(R"(
HloModule m
ENTRY e {
  x = f32[5,6,7] parameter(0)
  idx = s32[2,3,2] parameter(1)
  ROOT g = f32[2,3,2,7] gather(x, idx), offset_dims={2,3}, collapsed_slice_dims={1},
      start_index_map={0,1}, index_vector_dim=2, slice_sizes={2,1,7}
})");
}

TEST(HostReductionTest, RowColumnAndFullReductions) {
  Close(R"(
HloModule m
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
ENTRY e {
  x = f32[16,130] parameter(0)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  row = f32[16] reduce(x, zero), dimensions={1}, to_apply=add
  col = f32[130] reduce(x, zero), dimensions={0}, to_apply=add
  all = f32[] reduce(x, ninf), dimensions={0,1}, to_apply=max
  y = f32[4,6,10] parameter(1)
  mid = f32[6] reduce(y, zero), dimensions={0,2}, to_apply=add
  ROOT out = (f32[16], f32[130], f32[], f32[6]) tuple(row, col, all, mid)
})");
  Exact(R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[7,9,11] parameter(0)
  zero = s32[] constant(0)
  ROOT r = s32[9] reduce(x, zero), dimensions={0,2}, to_apply=add
})");
}

TEST(HostReductionTest, FloatSumsMatchTheInterpreterExactly) {
  // Sums accumulate in double and round once, like the interpreter, in
  // elemental, row and column kernels. Column and elemental sums keep the
  // row-major order of the reduced indices; row kernels reorder the sum
  // (vector rows, reduction_kernel_emitter.cc), which only a double result can show
  // (narrower results round the double sum, which here is exact in any order
  // for bf16/f16 and differs from the sequential one far below f32's ulp).
  for (const char* type : {"f32", "bf16", "f16", "f64"}) {
    SCOPED_TRACE(type);
    const std::string text = absl::StrReplaceAll(R"(
HloModule m
add {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT s = $T[] add(a, b)
}
rows {
  x = $T[9,300] parameter(0)
  zero = $T[] constant(0)
  ROOT s = $T[9] reduce(x, zero), dimensions={1}, to_apply=add
}
elemental {
  x = $T[9,300] parameter(0)
  zero = $T[] constant(0.5)
  s = $T[9] reduce(x, zero), dimensions={1}, to_apply=add
  ROOT b = $T[9,4] broadcast(s), dimensions={0}
}
ENTRY e {
  x = $T[9,300] parameter(0)
  zero = $T[] constant(0)
  r = $T[9] fusion(x), kind=kInput, calls=rows
  c = $T[300] reduce(x, zero), dimensions={0}, to_apply=add
  b = $T[9,4] fusion(x), kind=kLoop, calls=elemental
  ROOT t = ($T[9], $T[300], $T[9,4]) tuple(r, c, b)
})", {{"$T", type}});
    if (std::string(type) == "f64") {
      ExpectClose(text, RandomArgs(text), Tolerance{1e-14, 1e-14});
    } else {
      ExpectExact(text, RandomArgs(text));
    }
  }
}

// Row reductions over at least 16 elements with sums, maxima and minima
// (vector rows, reduction_kernel_emitter.cc): sums within tolerance
// (reordered), integer sums and float max/min exact, including the sign of a
// zero maximum (the sequential order keeps the first zero seen: here -0 at
// index 1 before a +0 at index 8) and NaN rows; rows whose length is not a
// multiple of 8, several reduced dimensions, f16 and a softmax-like fusion
// with a side output. VectorRowMaxMin below goes through the cases one by one.
TEST(HostReductionTest, MixedRowReductions) {
  const std::string hlo = R"(
HloModule m
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
min {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] minimum(a, b)
}
ENTRY e {
  x = f32[6,19] parameter(0)
  ninf = f32[] constant(-inf)
  inf = f32[] constant(inf)
  one = f32[] constant(1)
  mx = f32[6] reduce(x, ninf), dimensions={1}, to_apply=max
  mn = f32[6] reduce(x, inf), dimensions={1}, to_apply=min
  sm = f32[6] reduce(x, one), dimensions={1}, to_apply=add
  ROOT t = (f32[6], f32[6], f32[6]) tuple(mx, mn, sm)
})";
  // Row 0: max is a zero, -0 first (index 1, lane 1), +0 later (index 8,
  // lane 0): -0. Row 1: min is a zero, +0 first (lane 1), -0 later (lane 0):
  // +0. Row 2: a NaN in the tail. Row 3: all -inf. Row 4: a NaN in lane 3.
  // Row 5: ordinary values, the max in the tail.
  const Literal x = ParseLiteralText(
      "f32[6,19] {"
      "{-1, -0, -2, -3, -4, -5, -6, -7, 0, -1, -2, -3, -4, -5, -6, -7, -8, -9, -1},"
      "{1, 0, 2, 3, 4, 5, 6, 7, -0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1},"
      "{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, nan, 18, 19},"
      "{-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf},"
      "{1, 2, 3, nan, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19},"
      "{0.5, -2, 3.25, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 99, 19}}");
  ExpectExact(hlo, {x});
  Close(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[5,7,203] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[5] reduce(x, zero), dimensions={1,2}, to_apply=add
})");
  Exact(R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
max {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT m = f16[] maximum(a, b)
}
ENTRY e {
  x = s32[9,1001] parameter(0)
  zero = s32[] constant(7)
  r = s32[9] reduce(x, zero), dimensions={1}, to_apply=add
  y = f16[9,77] parameter(1)
  ninf = f16[] constant(-inf)
  m = f16[9] reduce(y, ninf), dimensions={1}, to_apply=max
  ROOT t = (s32[9], f16[9]) tuple(r, m)
})");
  // Softmax: max and exp-sum in one fusion each, the exp stored as a side
  // output of the sum's loop.
  Close(R"(
HloModule m
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
row_max {
  x = f32[33,250] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT m = f32[33] reduce(x, ninf), dimensions={1}, to_apply=max
}
exp_sum {
  x = f32[33,250] parameter(0)
  m = f32[33] parameter(1)
  b = f32[33,250] broadcast(m), dimensions={0}
  d = f32[33,250] subtract(x, b)
  e = f32[33,250] exponential(d)
  zero = f32[] constant(0)
  s = f32[33] reduce(e, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[33], f32[33,250]) tuple(s, e)
}
ENTRY e {
  x = f32[33,250] parameter(0)
  m = f32[33] fusion(x), kind=kInput, calls=row_max
  se = (f32[33], f32[33,250]) fusion(x, m), kind=kInput, calls=exp_sum
  s = f32[33] get-tuple-element(se), index=0
  e = f32[33,250] get-tuple-element(se), index=1
  b = f32[33,250] broadcast(s), dimensions={0}
  ROOT p = f32[33,250] divide(e, b)
})");
}

// Rows of sums only (vector rows, reduction_kernel_emitter.cc): one
// reassociable accumulator per row that LLVM vectorizes 8 doubles wide with 4
// vectors in flight, so 45-element rows have a vector step and a tail.
// Special values must survive the reordering: a row of -0 under a -0 init
// stays -0, a NaN in the tail or +inf with -inf gives NaN, a lone +inf stays
// +inf; dyadic values sum exactly in any order, so the rest is exact too.
// Integer sums wrap identically in any order; a sum-only fusion with a side
// output and several reduced dimensions are within tolerance.
TEST(HostReductionTest, SumRowReductions) {
  const std::string hlo = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[5,45] parameter(0)
  nzero = f32[] constant(-0)
  one = f32[] constant(1)
  s0 = f32[5] reduce(x, nzero), dimensions={1}, to_apply=add
  s1 = f32[5] reduce(x, one), dimensions={1}, to_apply=add
  ROOT t = (f32[5], f32[5]) tuple(s0, s1)
})";
  std::string rows = "f32[5,45] {";
  auto row = [](const std::function<std::string(int)>& at) {
    std::string r = "{";
    for (int i = 0; i < 45; ++i) absl::StrAppend(&r, i ? ", " : "", at(i));
    return r + "}";
  };
  rows += row([](int) { return std::string("-0"); }) + ",";
  rows += row([](int i) { return i == 40 ? std::string("nan") : absl::StrCat(i); }) + ",";
  rows += row([](int i) { return i == 3 ? std::string("inf") : i == 20 ? std::string("-inf") : "0.5"; }) + ",";
  rows += row([](int i) { return i == 7 ? std::string("inf") : absl::StrCat(-i); }) + ",";
  rows += row([](int i) { return absl::StrCat(i % 3 == 0 ? -0.25 * i : 1.5 * i); }) + "}";
  const Literal x = ParseLiteralText(rows);
  ExpectExact(hlo, {x});
  Exact(R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[9,1001] parameter(0)
  seven = s32[] constant(7)
  ROOT r = s32[9] reduce(x, seven), dimensions={1}, to_apply=add
})");
  Close(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
squares {
  x = f16[33,250] parameter(0)
  c = f32[33,250] convert(x)
  q = f32[33,250] multiply(c, c)
  zero = f32[] constant(0)
  s = f32[33] reduce(q, zero), dimensions={1}, to_apply=add
  t = f32[33] reduce(c, zero), dimensions={1}, to_apply=add
  ROOT r = (f32[33], f32[33], f32[33,250]) tuple(s, t, q)
}
ENTRY e {
  x = f16[33,250] parameter(0)
  y = f32[3,5,77] parameter(1)
  r = (f32[33], f32[33], f32[33,250]) fusion(x), kind=kInput, calls=squares
  zero = f32[] constant(0)
  w = f32[3] reduce(y, zero), dimensions={1,2}, to_apply=add
  ROOT t = ((f32[33], f32[33], f32[33,250]), f32[3]) tuple(r, w)
})");
}

// Literals and checks for the row max/min tests below.
namespace rowmax {

// NaN bits of every float type by name: "qnan" (quiet, payload 1), "nnan"
// (negative quiet, payload 2), "snan" (signalling, payload 1).
uint64_t NanBits(PrimitiveType type, absl::string_view name) {
  struct Bits { uint64_t quiet, sign, signalling; };
  const Bits bits = type == xla::F16    ? Bits{0x7e00, 0x8000, 0x7c01}
                    : type == xla::BF16 ? Bits{0x7fc0, 0x8000, 0x7f81}
                    : type == xla::F32  ? Bits{0x7fc00000, 0x80000000, 0x7f800001}
                                        : Bits{0x7ff8000000000000, uint64_t{1} << 63, 0x7ff0000000000001};
  if (name == "qnan") return bits.quiet | 1;
  if (name == "nnan") return bits.sign | bits.quiet | 2;
  return bits.signalling;
}

// A float literal of `type` and `dims` (rank 1 or more) whose element at
// linear index i is spec(i): a number, "-0", "inf", "-inf" or a NaN name.
Literal FloatLiteral(PrimitiveType type, const std::vector<int64_t>& dims,
                     const std::function<std::string(int64_t)>& spec) {
  Literal literal(Shape(type, dims));
  const int width = ByteWidth(type);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    const std::string v = spec(i);
    if (absl::StrContains(v, "nan")) {
      const uint64_t bits = NanBits(type, v);
      std::memcpy(literal.mutable_raw() + i * width, &bits, width);  // Little-endian.
    } else {
      literal.SetFromDouble(i, v == "-0" ? -0.0 : v == "inf" ? INFINITY : v == "-inf" ? -INFINITY : std::stod(v));
    }
  }
  return literal;
}

// Host and interpreter agree in every bit, NaN payloads included.
void ExpectSameBitsWithNans(absl::string_view hlo, const std::vector<Literal>& args) {
  host_testing::Outcome outcome = RunBoth(hlo, args);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status << "\n" << hlo;
  std::vector<const Literal*> expected, actual;
  std::function<void(const Literal&, std::vector<const Literal*>*)> leaves =
      [&](const Literal& l, std::vector<const Literal*>* out) {
        if (!l.shape().IsTuple()) return out->push_back(&l);
        for (const Literal& e : l.tuple_elements()) leaves(e, out);
      };
  leaves(outcome.expected, &expected);
  leaves(outcome.actual, &actual);
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t leaf = 0; leaf < expected.size(); ++leaf) {
    ASSERT_TRUE(expected[leaf]->shape().Compatible(actual[leaf]->shape()));
    const int width = ByteWidth(expected[leaf]->shape().element_type());
    for (int64_t i = 0; i < expected[leaf]->element_count(); ++i) {
      uint64_t e = 0, a = 0;
      std::memcpy(&e, expected[leaf]->raw() + i * width, width);
      std::memcpy(&a, actual[leaf]->raw() + i * width, width);
      EXPECT_EQ(e, a) << "leaf " << leaf << " element " << i << ": expected 0x" << std::hex << e
                      << ", got 0x" << a << std::dec << "\n" << hlo;
    }
  }
}

}  // namespace rowmax

// The head of the max/min row tests' modules: max and min reducers of
// element type $T.
const std::string kTypedMaxMinModuleHead = R"(
HloModule m
max {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT m = $T[] maximum(a, b)
}
min {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT m = $T[] minimum(a, b)
}
)";

// Float row max/min (vector rows, reduction_kernel_emitter.cc): LLVM
// vectorizes the row loop 8 wide, 4 vectors in flight (32 elements a step),
// and rows whose result is a zero or that hold a NaN are reduced again in the
// interpreter's order. Each case must match the interpreter bit for bit, NaN
// payloads included: f32/f64 return the first NaN of the row as it is, f16
// the quiet NaN with its sign, bf16 its bits quieted. Rows of 45 elements
// (one vector step, a tail of 13), 16 (tail only), 100, and 7 (too short for
// vector rows: the ordered loop, the same NaN bits); every type; four
// max/min heroes in one kernel with inits -inf, +inf, 0.5 and a parameter
// (a NaN with a payload, then 2).
TEST(HostReductionTest, VectorRowMaxMin) {
  // Row r of the cases, element i of n (the vector step covers i < 32).
  auto row_case = [](int64_t r, int64_t i, int64_t n) -> std::string {
    const std::string plain = absl::StrCat((i * 37 % 23) - 11);  // In [-11, 11], not zero-free.
    switch (r) {
      case 0: return i == n - 3 ? "20" : i == 2 ? "-20" : absl::StrCat(i % 5 + 1);  // Extremes apart.
      case 1: return i == 1 ? "-0" : i == 9 ? "0" : absl::StrCat(-1 - i);  // max: -0 first.
      case 2: return i == 2 ? "0" : i == 12 ? "-0" : absl::StrCat(1 + i);   // min: +0 first.
      case 3: return i == n - 2 ? "-0" : i == n - 4 ? "0" : "-3";           // Zeros in the tail.
      case 4: return i == 5 ? "nnan" : i == 20 ? "qnan" : plain;            // The first NaN wins.
      case 5: return i == n - 1 ? "snan" : plain;                            // A NaN in the tail.
      case 6: return "-inf";
      case 7: return i == 3 ? "inf" : i == 11 ? "-inf" : plain;
      case 8: return "0";
      case 9: return i % 2 ? "-0" : "0.25";
      default: return "-7";  // Below the 0.5 init: max is the init.
    }
  };
  constexpr int64_t kRows = 11;
  for (const char* type_name : {"f32", "f16", "bf16", "f64"}) {
    const PrimitiveType type = type_name == std::string("f32")   ? xla::F32
                               : type_name == std::string("f16") ? xla::F16
                               : type_name == std::string("bf16") ? xla::BF16
                                                                  : xla::F64;
    for (int64_t n : {45, 16, 100, 7}) {
      SCOPED_TRACE(absl::StrCat(type_name, " rows of ", n));
      const std::string hlo = absl::StrReplaceAll(kTypedMaxMinModuleHead + R"(
ENTRY e {
  x = $T[$R,$N] parameter(0)
  init = $T[] parameter(1)
  ninf = $T[] constant(-inf)
  inf = $T[] constant(inf)
  half = $T[] constant(0.5)
  mx = $T[$R] reduce(x, ninf), dimensions={1}, to_apply=max
  mn = $T[$R] reduce(x, inf), dimensions={1}, to_apply=min
  mh = $T[$R] reduce(x, half), dimensions={1}, to_apply=max
  mp = $T[$R] reduce(x, init), dimensions={1}, to_apply=min
  ROOT t = ($T[$R], $T[$R], $T[$R], $T[$R]) tuple(mx, mn, mh, mp)
})", {{"$T", type_name}, {"$R", absl::StrCat(kRows)}, {"$N", absl::StrCat(n)}});
      const Literal x = rowmax::FloatLiteral(type, {kRows, n}, [&](int64_t k) { return row_case(k / n, k % n, n); });
      for (const char* init : {"qnan", "2"}) {
        SCOPED_TRACE(absl::StrCat("init ", init));
        rowmax::ExpectSameBitsWithNans(hlo, {x, rowmax::FloatLiteral(type, {}, [&](int64_t) { return init; })});
      }
    }
  }
}

// The rest of vector row max/min: integers (exact in any order; wrap-free
// extremes of each width), several reduced dimensions (an outer loop around
// the vector loop, and the sequential pass over all of them), and a
// multi-output fusion of a max, a min and a sum of one input with a side
// output (the max and min bit for bit, the sum exact on these dyadic values);
// and f16/bf16 column maxima with NaNs.
TEST(HostReductionTest, VectorRowMaxMinIntegersDimensionsAndFusions) {
  for (const char* type : {"s32", "u8", "s64", "u16", "s8"}) {
    SCOPED_TRACE(type);
    Exact(absl::StrReplaceAll(kTypedMaxMinModuleHead + R"(
ENTRY e {
  x = $T[9,1001] parameter(0)
  y = $T[7,45] parameter(1)
  i = $T[] parameter(2)
  mx = $T[9] reduce(x, i), dimensions={1}, to_apply=max
  mn = $T[9] reduce(x, i), dimensions={1}, to_apply=min
  my = $T[7] reduce(y, i), dimensions={1}, to_apply=max
  ROOT t = ($T[9], $T[9], $T[7]) tuple(mx, mn, my)
})", {{"$T", type}}));
  }
  // Reduced dimensions {1,2} and {0,2}; in the first, a -0 before a +0 in
  // different rows of one output, and NaNs in the second's outputs 1 and 2.
  const std::string dims = R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
min {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] minimum(a, b)
}
ENTRY e {
  x = f32[3,5,40] parameter(0)
  y = f32[4,3,40] parameter(1)
  ninf = f32[] constant(-inf)
  inf = f32[] constant(inf)
  a = f32[3] reduce(x, ninf), dimensions={1,2}, to_apply=max
  b = f32[3] reduce(x, inf), dimensions={1,2}, to_apply=min
  c = f32[3] reduce(y, ninf), dimensions={0,2}, to_apply=max
  ROOT t = (f32[3], f32[3], f32[3]) tuple(a, b, c)
})";
  const Literal x = rowmax::FloatLiteral(xla::F32, {3, 5, 40}, [](int64_t k) -> std::string {
    const int64_t o = k / 200, j = k % 200;
    if (o == 0) return j == 45 ? "-0" : j == 130 ? "0" : "-1";  // max: -0 (row 1) before +0 (row 3).
    if (o == 1) return j == 77 ? "0" : j == 150 ? "-0" : "1";   // min: +0 first.
    return j == 199 ? "9" : absl::StrCat(j % 7);
  });
  const Literal y = rowmax::FloatLiteral(xla::F32, {4, 3, 40}, [](int64_t k) -> std::string {
    const int64_t o = (k / 40) % 3, j = k / 120 * 40 + k % 40;
    if (o == 1 && j == 90) return "snan";
    if (o == 2 && j == 30) return "nnan";
    if (o == 2 && j == 100) return "qnan";
    return absl::StrCat((k * 13) % 17 - 8);
  });
  rowmax::ExpectSameBitsWithNans(dims, {x, y});
  // Softmax statistics in one fusion: max, min and sum of x, x * 2 stored.
  const std::string fused = R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
min {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] minimum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
stats {
  x = f32[6,70] parameter(0)
  ninf = f32[] constant(-inf)
  inf = f32[] constant(inf)
  zero = f32[] constant(0)
  two = f32[] constant(2)
  m = f32[6] reduce(x, ninf), dimensions={1}, to_apply=max
  n = f32[6] reduce(x, inf), dimensions={1}, to_apply=min
  s = f32[6] reduce(x, zero), dimensions={1}, to_apply=add
  b = f32[6,70] broadcast(two), dimensions={}
  d = f32[6,70] multiply(x, b)
  ROOT t = (f32[6], f32[6], f32[6], f32[6,70]) tuple(m, n, s, d)
}
ENTRY e {
  x = f32[6,70] parameter(0)
  ROOT f = (f32[6], f32[6], f32[6], f32[6,70]) fusion(x), kind=kInput, calls=stats
})";
  const Literal z = rowmax::FloatLiteral(xla::F32, {6, 70}, [](int64_t k) -> std::string {
    const int64_t r = k / 70, i = k % 70;
    if (r == 0 && i == 3) return "-0";
    if (r == 0) return absl::StrCat(-0.25 * (i + 1));        // max -0.
    if (r == 1 && i == 66) return "qnan";                    // A NaN in the tail.
    if (r == 2) return i == 10 ? "inf" : i == 50 ? "-inf" : "1.5";
    return absl::StrCat((i * 29 % 31) * 0.5 - 7);
  });
  rowmax::ExpectSameBitsWithNans(fused, {z});
  // Column kernels return f16/bf16 NaNs as the interpreter does too.
  for (const char* type_name : {"f16", "bf16"}) {
    SCOPED_TRACE(type_name);
    const PrimitiveType type = type_name == std::string("f16") ? xla::F16 : xla::BF16;
    const std::string columns = absl::StrReplaceAll(R"(
HloModule m
max {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT m = $T[] maximum(a, b)
}
ENTRY e {
  x = $T[40,24] parameter(0)
  ninf = $T[] constant(-inf)
  ROOT c = $T[24] reduce(x, ninf), dimensions={0}, to_apply=max
})", {{"$T", type_name}});
    rowmax::ExpectSameBitsWithNans(columns, {rowmax::FloatLiteral(type, {40, 24}, [](int64_t k) -> std::string {
      return k == 5 * 24 + 3 ? "snan" : k == 9 * 24 + 7 ? "nnan" : absl::StrCat(k % 9 - 4);
    })});
  }
}

TEST(HostReductionTest, VariadicArgmax) {
  Exact(R"(
HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[6,33] parameter(0)
  iota = s32[6,33] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[6], s32[6]) reduce(x, iota, ninf, zero), dimensions={1}, to_apply=argmax
  ROOT i = s32[6] get-tuple-element(r), index=1
})");
}

TEST(HostReductionTest, FusedMultiOutputReductionsWithEpilogues) {
  Close(R"(
HloModule m
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
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
moments {
  x = f32[6,70] parameter(0)
  zero = f32[] constant(0)
  s = f32[6] reduce(x, zero), dimensions={1}, to_apply=add
  sq = f32[6,70] multiply(x, x)
  ss = f32[6] reduce(sq, zero), dimensions={1}, to_apply=add
  c70 = f32[] constant(70)
  n = f32[6] broadcast(c70), dimensions={}
  mean = f32[6] divide(s, n)
  ex2 = f32[6] divide(ss, n)
  mean2 = f32[6] multiply(mean, mean)
  var = f32[6] subtract(ex2, mean2)
  ROOT t = (f32[6], f32[6]) tuple(mean, var)
}
columns {
  x = f32[3,50,37] parameter(0)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  s = f32[3,37] reduce(x, zero), dimensions={1}, to_apply=add
  m = f32[3,37] reduce(x, ninf), dimensions={1}, to_apply=max
  c2 = f32[] constant(2)
  two = f32[3,37] broadcast(c2), dimensions={}
  s2 = f32[3,37] multiply(s, two)
  e = f32[3,37] subtract(s2, m)
  ROOT t = (f32[3,37], f32[3,37]) tuple(s, e)
}
column_argmax {
  x = f32[40,45] parameter(0)
  i = s32[40,45] iota(), iota_dimension=0
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[45], s32[45]) reduce(x, i, ninf, zero), dimensions={0}, to_apply=argmax
  ROOT idx = s32[45] get-tuple-element(r), index=1
}
blocks {
  x = f32[4,9,5,6] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[9,5,6] reduce(x, zero), dimensions={0}, to_apply=add
}
ENTRY e {
  a = f32[6,70] parameter(0)
  b = f32[3,50,37] parameter(1)
  c = f32[40,45] parameter(2)
  d = f32[4,9,5,6] parameter(3)
  row = (f32[6], f32[6]) fusion(a), kind=kInput, calls=moments
  col = (f32[3,37], f32[3,37]) fusion(b), kind=kInput, calls=columns
  arg = s32[45] fusion(c), kind=kInput, calls=column_argmax
  blk = f32[9,5,6] fusion(d), kind=kInput, calls=blocks
  ROOT out = ((f32[6], f32[6]), (f32[3,37], f32[3,37]), s32[45], f32[9,5,6]) tuple(row, col, arg, blk)
})");
}

// A multi-output fusion that both stores a value and reduces it (softmax's
// exp and its row sum; a scaled input and its column sum): the reduction
// kernel stores the value inside its loop (a "side output") instead of
// falling back to a loop kernel that computes it twice.
TEST(HostReductionTest, SideOutputsStoredInTheReductionLoop) {
  const char* hlo = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
softmax_parts {
  x = f32[8,70] parameter(0)
  m = f32[8] parameter(1)
  mb = f32[8,70] broadcast(m), dimensions={0}
  d = f32[8,70] subtract(x, mb)
  e = f32[8,70] exponential(d)
  zero = f32[] constant(0)
  s = f32[8] reduce(e, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[8,70], f32[8]) tuple(e, s)
}
scaled_columns {
  x = f32[3,50,37] parameter(0)
  c = f32[] constant(1.5)
  cb = f32[3,50,37] broadcast(c), dimensions={}
  y = f32[3,50,37] multiply(x, cb)
  zero = f32[] constant(0)
  s = f32[3,37] reduce(y, zero), dimensions={1}, to_apply=add
  n = f32[3,37] negate(s)
  ROOT t = (f32[3,37], f32[3,50,37]) tuple(n, y)
}
ENTRY e {
  a = f32[8,70] parameter(0)
  m = f32[8] parameter(1)
  b = f32[3,50,37] parameter(2)
  row = (f32[8,70], f32[8]) fusion(a, m), kind=kInput, calls=softmax_parts
  col = (f32[3,37], f32[3,50,37]) fusion(b), kind=kInput, calls=scaled_columns
  ROOT out = ((f32[8,70], f32[8]), (f32[3,37], f32[3,50,37])) tuple(row, col)
})";
  Close(hlo);
  std::unique_ptr<host::HostProgram> program = CompileAsIs(hlo);
  ASSERT_NE(program, nullptr);
  const std::vector<std::string>& strategies = program->report().strategies;
  EXPECT_NE(std::find(strategies.begin(), strategies.end(), "%row: row-reduction"),
            strategies.end());
  EXPECT_NE(std::find(strategies.begin(), strategies.end(), "%col: column-reduction"),
            strategies.end());
}

// A reduce stored through a reshape that only adds or drops size-1
// dimensions (JAX's keepdims: f32[512] -> f32[1,512]) next to a side output
// still takes the reduction kernels; it used to fall back to one strided
// pass per output element (88 ms of a data-parallel step's 310).
TEST(HostReductionTest, KeepDimsReshapeOfAReduce) {
  const char* const hlo = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
column_keepdims {
  x = f32[96,70] parameter(0)
  y = f32[96,70] parameter(1)
  p = f32[96,70] multiply(x, y)
  zero = f32[] constant(0)
  r = f32[70] reduce(p, zero), dimensions={0}, to_apply=add
  k = f32[1,70] reshape(r)
  ROOT t = (f32[96,70], f32[1,70]) tuple(p, k)
}
row_keepdims {
  x = f32[12,300] parameter(0)
  zero = f32[] constant(0)
  r = f32[12] reduce(x, zero), dimensions={1}, to_apply=add
  ROOT k = f32[12,1] reshape(r)
}
ENTRY e {
  x = f32[96,70] parameter(0)
  y = f32[96,70] parameter(1)
  z = f32[12,300] parameter(2)
  col = (f32[96,70], f32[1,70]) fusion(x, y), kind=kInput, calls=column_keepdims
  row = f32[12,1] fusion(z), kind=kInput, calls=row_keepdims
  ROOT out = ((f32[96,70], f32[1,70]), f32[12,1]) tuple(col, row)
})";
  Close(hlo);
  std::unique_ptr<host::HostProgram> program = CompileAsIs(hlo);
  ASSERT_NE(program, nullptr);
  const std::vector<std::string>& strategies = program->report().strategies;
  EXPECT_NE(std::find(strategies.begin(), strategies.end(), "%col: column-reduction"),
            strategies.end());
  EXPECT_NE(std::find(strategies.begin(), strategies.end(), "%row: row-reduction"),
            strategies.end());
}

// Column reductions take the whole kept minor block as one tile when its
// accumulators fit (rows then stream contiguously), else the widest multiple
// of 32 outputs that fits; tail tiles are shorter. Results against the
// interpreter, tile counts from the thunk listing.
TEST(HostReductionTest, ColumnTilesSpanWholeRowsWhenAccumulatorsFit) {
  const char* hlo = R"(
HloModule m
add16 {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT s = f16[] add(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
layer_norm_grads {
  x = f16[96,1024] parameter(0)
  dy = f16[96,1024] parameter(1)
  p = f16[96,1024] multiply(x, dy)
  zero = f16[] constant(0)
  dgamma = f16[1024] reduce(p, zero), dimensions={0}, to_apply=add16
  dbeta = f16[1024] reduce(dy, zero), dimensions={0}, to_apply=add16
  ROOT t = (f16[1024], f16[1024], f16[96,1024]) tuple(dgamma, dbeta, p)
}
wide {
  x = f32[3,40,5000] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[3,5000] reduce(x, zero), dimensions={1}, to_apply=add
}
narrow {
  x = f32[5,64,70] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[5,70] reduce(x, zero), dimensions={1}, to_apply=add
}
ENTRY e {
  x = f16[96,1024] parameter(0)
  dy = f16[96,1024] parameter(1)
  w = f32[3,40,5000] parameter(2)
  n = f32[5,64,70] parameter(3)
  grads = (f16[1024], f16[1024], f16[96,1024]) fusion(x, dy), kind=kInput, calls=layer_norm_grads
  wide_sums = f32[3,5000] fusion(w), kind=kInput, calls=wide
  narrow_sums = f32[5,70] fusion(n), kind=kInput, calls=narrow
  ROOT out = ((f16[1024], f16[1024], f16[96,1024]), f32[3,5000], f32[5,70]) tuple(grads, wide_sums, narrow_sums)
})";
  Close(hlo);
  std::unique_ptr<host::HostProgram> program = CompileAsIs(hlo);
  ASSERT_NE(program, nullptr);
  const std::vector<std::string>& strategies = program->report().strategies;
  for (const char* name : {"%grads", "%wide_sums", "%narrow_sums"}) {
    EXPECT_NE(std::find(strategies.begin(), strategies.end(),
                        absl::StrCat(name, ": column-reduction")),
              strategies.end())
        << name;
  }
  const std::string thunks = program->executable().ThunksToString();
  // The work item count of kernel %name in the listing ("kernel %name(...) items=N ").
  auto items = [&](absl::string_view name) -> std::string {
    const size_t at = thunks.find(absl::StrCat("kernel ", name, "("));
    if (at == std::string::npos) return "no kernel";
    const size_t from = thunks.find(") items=", at);
    if (from == std::string::npos) return "no items";
    const size_t begin = from + 8;
    return thunks.substr(begin, thunks.find(' ', begin) - begin);
  };
  // Two f16 sums in double: 2 x 8 x 1024 bytes fit, one tile of 1024.
  EXPECT_EQ(items("%grads"), "1") << thunks;
  // One sum in double: 4096 of 5000 columns fit, two tiles per block of 3.
  EXPECT_EQ(items("%wide_sums"), "6") << thunks;
  EXPECT_EQ(items("%narrow_sums"), "5") << thunks;
}

TEST(HostReductionTest, ReduceWindow) {
  Close(R"(
HloModule m
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
ENTRY e {
  x = f32[12,8] parameter(0)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  cumsum = f32[12,8] reduce-window(x, zero), window={size=12x1 pad=11_0x0_0}, to_apply=add
  pool = f32[6,4] reduce-window(x, ninf), window={size=3x3 stride=2x2 pad=1_1x1_1}, to_apply=max
  dil = f32[12,8] reduce-window(x, zero), window={size=2x2 pad=1_1x1_0 lhs_dilate=1x1 rhs_dilate=2x1}, to_apply=add
  ROOT out = (f32[12,8], f32[6,4], f32[12,8]) tuple(cumsum, pool, dil)
})");
}

TEST(HostContractionTest, Dots) {
  Close(R"(
HloModule m
ENTRY e {
  a = f32[8,32] parameter(0)
  b = f32[32,16] parameter(1)
  mm = f32[8,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f32[3,4,5] parameter(2)
  y = f32[3,6,5] parameter(3)
  bmm = f32[3,4,6] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  v = f32[32] parameter(4)
  vv = f32[] dot(v, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT out = (f32[8,16], f32[3,4,6], f32[]) tuple(mm, bmm, vv)
})");
  Exact(R"(
HloModule m
ENTRY e {
  a = s32[4,7] parameter(0)
  b = s32[7,3] parameter(1)
  ROOT d = s32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ExpectClose(R"(
HloModule m
ENTRY e {
  a = bf16[8,32] parameter(0)
  b = bf16[32,16] parameter(1)
  ROOT d = f32[8,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", RandomArgs(R"(
HloModule m
ENTRY e {
  a = bf16[8,32] parameter(0)
  b = bf16[32,16] parameter(1)
  ROOT d = f32[8,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})"), Tolerance{1e-3, 1e-3});
}

TEST(HostContractionTest, Convolutions) {
  Close(R"(
HloModule m
ENTRY e {
  x = f32[2,9,9,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  ROOT c = f32[2,5,5,4] convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  Close(R"(
HloModule m
ENTRY e {
  x = f32[1,6,10,10] parameter(0)
  w = f32[6,1,3,3] parameter(1)
  ROOT c = f32[1,6,10,10] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=6
})");
  Close(R"(
HloModule m
ENTRY e {
  x = f32[2,7,3] parameter(0)
  w = f32[2,3,5] parameter(1)
  ROOT c = f32[2,15,5] convolution(x, w), window={size=2 pad=1_2 lhs_dilate=2 rhs_dilate=1}, dim_labels=b0f_0io->b0f
})");
}

TEST(HostFusionTest, LoopAndInputFusions) {
  Close(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
softmax_exp {
  x = f32[8,128] parameter(0)
  m = f32[8] parameter(1)
  b = f32[8,128] broadcast(m), dimensions={0}
  d = f32[8,128] subtract(x, b)
  ROOT e = f32[8,128] exponential(d)
}
row_sum {
  x = f32[8,128] parameter(0)
  zero = f32[] constant(0)
  s = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
  n = f32[] constant(128)
  nb = f32[8] broadcast(n), dimensions={}
  ROOT mean = f32[8] divide(s, nb)
}
multi {
  x = f32[8,128] parameter(0)
  zero = f32[] constant(0)
  s = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
  sq = f32[8,128] multiply(x, x)
  ss = f32[8] reduce(sq, zero), dimensions={1}, to_apply=add
  neg = f32[8,128] negate(x)
  ROOT t = (f32[8], f32[8], f32[8,128]) tuple(s, ss, neg)
}
ENTRY e {
  x = f32[8,128] parameter(0)
  m = f32[8] parameter(1)
  e = f32[8,128] fusion(x, m), kind=kLoop, calls=softmax_exp
  mean = f32[8] fusion(e), kind=kInput, calls=row_sum
  t = (f32[8], f32[8], f32[8,128]) fusion(e), kind=kInput, calls=multi
  ROOT out = (f32[8,128], f32[8], (f32[8], f32[8], f32[8,128])) tuple(e, mean, t)
})");
}

TEST(HostControlFlowTest, WhileConditionalCall) {
  // A loop whose body swaps two state elements (the state copies must not
  // clobber each other) and counts iterations.
  Exact(R"(
HloModule m
cond {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[4] get-tuple-element(s), index=1
  b = f32[4] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ab = f32[4] add(a, b)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i2, b, ab)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, a, b)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
})");
  const char* conditional = R"(
HloModule m
double {
  x = f32[5] parameter(0)
  ROOT d = f32[5] add(x, x)
}
negate {
  x = f32[5] parameter(0)
  ROOT n = f32[5] negate(x)
}
identity {
  x = f32[5] parameter(0)
  ROOT c = f32[5] copy(x)
}
callee {
  x = f32[5] parameter(0)
  y = f32[5] parameter(1)
  ROOT m = f32[5] multiply(x, y)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[5] parameter(1)
  c = f32[5] conditional(i, x, x, x), branch_computations={double, negate, identity}
  p = pred[] parameter(2)
  d = f32[5] conditional(p, x, c), true_computation=negate, false_computation=double
  ROOT r = f32[5] call(c, d), to_apply=callee
})";
  for (int branch : {0, 1, 2, 5, -1}) {
    for (bool pred : {false, true}) {
      std::vector<Literal> args = RandomArgs(conditional);
      args[0] = Literal::Scalar(xla::S32, branch);
      args[2] = Literal::Scalar(xla::PRED, pred ? 1 : 0);
      SCOPED_TRACE(absl::StrCat("branch ", branch, " pred ", pred));
      ExpectExact(conditional, args);
    }
  }
}

TEST(HostLibraryCallTest, SortAndTopK) {
  // Two operands sorted together by a comparator on both (descending key,
  // then ascending payload), NaNs included; and top-k of the same rows.
  const char* hlo = R"(
HloModule m
cmp {
  ka = f32[] parameter(0)
  kb = f32[] parameter(1)
  va = s32[] parameter(2)
  vb = s32[] parameter(3)
  gt = pred[] compare(ka, kb), direction=GT, type=TOTALORDER
  eq = pred[] compare(ka, kb), direction=EQ
  lt = pred[] compare(va, vb), direction=LT
  tie = pred[] and(eq, lt)
  ROOT r = pred[] or(gt, tie)
}
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[3,12] parameter(0)
  v = s32[3,12] parameter(1)
  s = (f32[3,12], s32[3,12]) sort(k, v), dimensions={1}, to_apply=cmp
  c = f32[3,12] sort(k), dimensions={0}, is_stable=true, to_apply=less
  t = (f32[3,4], s32[3,4]) topk(k), k=4, largest=true
  u = (f32[3,4], s32[3,4]) topk(k), k=4, largest=false
  ROOT out = ((f32[3,12], s32[3,12]), f32[3,12], (f32[3,4], s32[3,4]), (f32[3,4], s32[3,4])) tuple(s, c, t, u)
})";
  std::vector<Literal> args = RandomArgs(hlo);
  args[0] = ParseLiteralText(
      "f32[3,12] {{1, 2, 2, nan, -0, 0, -1, 5, 5, 5, -inf, inf}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8},"
      " {0, 0, 0, 0, -nan, 1, 1, 1, 2, 2, 2, -2}}");
  ExpectExact(hlo, args);
  std::unique_ptr<host::HostProgram> program = CompileAsIs(hlo);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->report().library_calls, 4);
  EXPECT_EQ(program->report().interpreter_calls, 0);
}

// Top-k keeps a heap of the k best per row, rows split over the pool: many
// rows, heavy ties (values from a handful), k = n, k = 1 and s32 keys; the
// result must be the stable sort's first k (ties by lower index).
TEST(HostLibraryCallTest, TopKManyRowsAndTies) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  x = f32[64,300] parameter(0)
  f = f32[64,300] floor(x)
  t = (f32[64,37], s32[64,37]) topk(f), k=37, largest=true
  s = (f32[64,37], s32[64,37]) topk(f), k=37, largest=false
  all = (f32[64,300], s32[64,300]) topk(f), k=300, largest=true
  i = s32[9,50] parameter(1)
  one = (s32[9,1], s32[9,1]) topk(i), k=1, largest=true
  ROOT out = ((f32[64,37], s32[64,37]), (f32[64,37], s32[64,37]), (f32[64,300], s32[64,300]),
              (s32[9,1], s32[9,1])) tuple(t, s, all, one)
})";
  ExpectExact(hlo, RandomArgs(hlo));
  std::unique_ptr<host::HostProgram> program = CompileAsIs(hlo);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->report().library_calls, 4);
}

// Running reductions as JAX lowers cumsum, cumprod, cummax and cummin
// (reduce-windows spanning a dimension with n - 1 padding on one side) are
// one pass per line (running_reduction.h): along the last, a middle and the
// first dimension, prefix and suffix, over f32, f64, f16, bf16, s32, u8 and
// pred. Prefix folds and exact ops match the interpreter bit for bit; the
// other reduce-windows stay kernels (an add whose init is not 0, a window
// one short of the dimension).
TEST(HostLibraryCallTest, RunningReductionsAreOnePassPerLine) {
  const char* hlo = R"(
HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
mul_f64 {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT r = f64[] multiply(b, a)
}
max_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] maximum(a, b)
}
min_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT r = bf16[] minimum(a, b)
}
add_f16 {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT r = f16[] add(a, b)
}
add_u8 {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  ROOT r = u8[] add(a, b)
}
or_pred {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] or(a, b)
}
ENTRY e {
  x = f32[5,37] parameter(0)
  zero = f32[] constant(0)
  one = f32[] constant(1)
  cumsum = f32[5,37] reduce-window(x, zero), window={size=1x37 pad=0_0x36_0}, to_apply=add_f32
  d = f64[7,3] parameter(1)
  one_d = f64[] constant(1)
  cumprod = f64[7,3] reduce-window(d, one_d), window={size=7x1 pad=6_0x0_0}, to_apply=mul_f64
  i = s32[4,6,9] parameter(2)
  low = s32[] parameter(3)
  cummax_rev = s32[4,6,9] reduce-window(i, low), window={size=1x6x1 pad=0_0x0_5x0_0}, to_apply=max_s32
  b = bf16[70] parameter(4)
  inf = bf16[] constant(inf)
  cummin = bf16[70] reduce-window(b, inf), window={size=70 pad=69_0}, to_apply=min_bf16
  h = f16[2,200] parameter(5)
  zero_h = f16[] constant(0)
  cumsum_h = f16[2,200] reduce-window(h, zero_h), window={size=1x200 pad=0_0x199_0}, to_apply=add_f16
  u = u8[9,20] parameter(6)
  zero_u = u8[] constant(0)
  cumsum_u_rev = u8[9,20] reduce-window(u, zero_u), window={size=9x1 pad=0_8x0_0}, to_apply=add_u8
  p = pred[3,10] parameter(7)
  no = pred[] constant(false)
  any = pred[3,10] reduce-window(p, no), window={size=1x10 pad=0_0x9_0}, to_apply=or_pred
  kernel_init = f32[5,37] reduce-window(x, one), window={size=1x37 pad=0_0x36_0}, to_apply=add_f32
  kernel_short = f32[5,37] reduce-window(x, zero), window={size=1x36 pad=0_0x35_0}, to_apply=add_f32
  ROOT out = (f32[5,37], f64[7,3], s32[4,6,9], bf16[70], f16[2,200], u8[9,20], pred[3,10],
              f32[5,37], f32[5,37]) tuple(cumsum, cumprod, cummax_rev, cummin, cumsum_h,
              cumsum_u_rev, any, kernel_init, kernel_short)
})";
  ExpectExact(hlo, RandomArgs(hlo));
  std::unique_ptr<host::HostProgram> program = CompileAsIs(hlo);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->report().library_calls, 7) << program->report().ToString();
  EXPECT_EQ(program->report().interpreter_calls, 0);
  // A float suffix sum folds from the far end: close (to the sums' scale,
  // about 17 here), not bit for bit.
  const char* suffix = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  x = f32[300,33] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[300,33] reduce-window(x, zero), window={size=300x1 pad=0_299x0_0}, to_apply=add
})";
  ExpectClose(suffix, RandomArgs(suffix), Tolerance{1e-4, 1e-4});
  program = CompileAsIs(suffix);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->report().library_calls, 1);
}

TEST(HostLibraryCallTest, Scatter) {
  // Repeated and out-of-range row ids (skipped), and a two-operand scatter
  // whose combiner keeps the larger value with its index.
  const char* hlo = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
keep_max {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  v = f32[] select(gt, bv, av)
  i = s32[] select(gt, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  t = f32[8,3] parameter(0)
  i = s32[5] parameter(1)
  u = f32[5,3] parameter(2)
  e = f32[5,3] exponential(u)
  s = f32[8,3] scatter(t, i, e), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ti = s32[8,3] parameter(3)
  ui = s32[5,3] parameter(4)
  m = (f32[8,3], s32[8,3]) scatter(t, ti, i, u, ui), update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
      to_apply=keep_max
  ROOT out = (f32[8,3], (f32[8,3], s32[8,3])) tuple(s, m)
})";
  std::vector<Literal> args = RandomArgs(hlo);
  args[1] = ParseLiteralText("s32[5] {2, 7, 2, -1, 8}");
  // libm's exp, so that the sums can be compared bit for bit.
  ExpectExact(hlo, args, host_testing::WithExactMath(TestOptions()));
}

// Scatters of single elements addressed by whole index vectors: XLA's own
// expansion of select-and-scatter (s32[N,4] indices, f32[N,1,1,1,1]
// updates) and JAX's `x.at[i, j].add(u)` (updates without window dims),
// with the index vector first or last, repeated targets combined in update
// order, and indices out of bounds in one coordinate (skipped).
TEST(HostLibraryCallTest, PointScattersByIndexVectors) {
  const char* hlo = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  x = f32[2,3,4,2] parameter(0)
  i = s32[9,4] parameter(1)
  u = f32[9,1,1,1,1] parameter(2)
  pool = f32[2,3,4,2] scatter(x, i, u), update_window_dims={1,2,3,4}, inserted_window_dims={},
      scatter_dims_to_operand_dims={0,1,2,3}, index_vector_dim=1, to_apply=add
  y = s32[5,6] parameter(3)
  j = s32[2,3,3] parameter(4)
  v = s32[3,3] parameter(5)
  at = s32[5,6] scatter(y, j, v), update_window_dims={}, inserted_window_dims={0,1},
      scatter_dims_to_operand_dims={1,0}, index_vector_dim=0, to_apply=max
  ROOT out = (f32[2,3,4,2], s32[5,6]) tuple(pool, at)
})";
  std::vector<Literal> args = RandomArgs(hlo);
  args[1] = ParseLiteralText(
      "s32[9,4] {{0,0,0,0}, {1,2,3,1}, {0,0,0,0}, {1,3,0,0}, {0,-1,2,1}, {1,2,3,1}, {0,1,2,1},"
      " {1,0,4,0}, {0,2,1,0}}");
  args[4] = ParseLiteralText(
      "s32[2,3,3] {{{0, 5, 5}, {2, 6, 1}, {5, 0, 3}}, {{4, 3, 3}, {1, 0, -2}, {0, 4, 4}}}");
  ExpectExact(hlo, args, TestOptions());
  std::unique_ptr<host::HostProgram> program = CompileAsIs(hlo);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->report().library_calls, 2) << program->report().ToString();
  EXPECT_EQ(program->report().interpreter_calls, 0);
}

TEST(HostLibraryCallTest, ScatterWithOneOpCombinersRunsTypedRows) {
  // Combiners that are one op of their parameters run as typed row loops
  // (backend/host/library_calls.cc): a large add split across threads by
  // result ranges (repeated and out-of-range ids), max with the update first
  // (NaN and signed zeros), wrapping s32 add, replace (`.at[].set`), a window
  // that is not contiguous (rows of one element), histograms (no window; s32
  // counts by [N,1] ids, f32 sums and maxima by s64 ids) and update rows
  // shorter than the operand's with [N,1] ids. Matrices indexed
  // by one id per update row take the plain row loop.
  const char* hlo = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(b, a)
}
max_update_first {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(b, a)
}
min {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] minimum(a, b)
}
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
replace {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
ENTRY e {
  t = f32[600,256] parameter(0)
  i = s32[1024] parameter(1)
  u = f32[1024,256] parameter(2)
  big = f32[600,256] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  z = f32[4,3] parameter(3)
  zi = s32[5] parameter(4)
  zu = f32[5,3] parameter(5)
  mx = f32[4,3] scatter(z, zi, zu), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=max_update_first
  mn = f32[4,3] scatter(z, zi, zu), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=min
  w = s32[4,3] parameter(6)
  wu = s32[5,3] parameter(7)
  wrap = s32[4,3] scatter(w, zi, wu), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_s32
  set = s32[4,3] scatter(w, zi, wu), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=replace
  c = f32[3,4] parameter(8)
  cu = f32[3,5] parameter(9)
  cols = f32[3,4] scatter(c, zi, cu), update_window_dims={0}, inserted_window_dims={1},
      scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=min
  h = s32[8] constant({0, 0, 0, 0, 0, 0, 0, 0})
  hi = s32[20,1] parameter(10)
  ones = s32[20] broadcast(s32[] constant(1)), dimensions={}
  hist = s32[8] scatter(h, hi, ones), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_s32
  n = f32[4,5] parameter(11)
  ni = s32[5,1] parameter(12)
  narrow = f32[4,5] scatter(n, ni, zu), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=min
  fh = f32[8] parameter(13)
  fhi = s64[12] parameter(14)
  fhu = f32[12] parameter(15)
  fmax = f32[8] scatter(fh, fhi, fhu), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=max_update_first
  fsum = f32[8] scatter(fh, fhi, fhu), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT out = (f32[600,256], f32[4,3], f32[4,3], s32[4,3], s32[4,3], f32[3,4], s32[8], f32[4,5],
      f32[8], f32[8]) tuple(big, mx, mn, wrap, set, cols, hist, narrow, fmax, fsum)
})";
  std::vector<Literal> args = RandomArgs(hlo);
  std::string ids = "s32[1024] {";
  for (int k = 0; k < 1024; ++k) {
    const int id = k % 97 == 5 ? -1 : k % 101 == 7 ? 600 : (k * 37) % 600;
    absl::StrAppend(&ids, k == 0 ? "" : ", ", id);
  }
  args[1] = ParseLiteralText(ids + "}");
  args[3] = ParseLiteralText("f32[4,3] {{nan, -0, 1}, {0, 2, -inf}, {5, nan, 0}, {1, 1, 1}}");
  args[4] = ParseLiteralText("s32[5] {2, 0, 2, 4, 1}");
  args[5] = ParseLiteralText("f32[5,3] {{0, -0, nan}, {1, 0, 2}, {-0, 7, 0}, {9, 9, 9}, {nan, -1, 3}}");
  args[6] = ParseLiteralText("s32[4,3] {{2147483647, -2147483648, 5}, {1, 2, 3}, {-1, 0, 1}, {7, 7, 7}}");
  args[7] = ParseLiteralText("s32[5,3] {{1, -1, 2}, {2147483647, 1, 1}, {5, 5, 5}, {0, 0, 0}, {3, 2, 1}}");
  args[10] = ParseLiteralText(
      "s32[20,1] {{0}, {1}, {1}, {7}, {8}, {-1}, {3}, {3}, {3}, {2}, {5}, {6}, {7}, {0}, {0}, {4},"
      " {100}, {2}, {2}, {1}}");
  // Rows of 3 into rows of 5, ids in an [N,1] array, two out of range.
  args[12] = ParseLiteralText("s32[5,1] {{3}, {-1}, {3}, {4}, {0}}");
  // Histograms of f32 weights by s64 ids: repeats in order (a sum's
  // rounding depends on it), NaN and signed zeros for max, two ids out of
  // range.
  args[13] = ParseLiteralText("f32[8] {0, -0, 1, nan, 2, 3, -1, 0.5}");
  args[14] = ParseLiteralText("s64[12] {1, 1, 0, 3, 9, 7, 7, 7, -4, 2, 5, 0}");
  args[15] = ParseLiteralText(
      "f32[12] {0, -0, -0, 4, 1, 1e8, -1e8, 1, 6, nan, 0.25, 0}");
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(absl::StrCat(threads, " threads"));
    RunOnHostOptions options = TestOptions();
    options.num_threads = threads;
    ExpectExact(hlo, args, options);
  }
  std::unique_ptr<host::HostProgram> program = CompileAsIs(hlo);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->report().interpreter_calls, 0);
}

TEST(HostFallbackTest, BatchNormRunsThroughTheInterpreterOnlyWhenAllowed) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  x = f32[4,3,2] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  e = f32[4,3,2] exponential(x)
  bn = (f32[4,3,2], f32[3], f32[3]) batch-norm-training(e, scale, offset), epsilon=0.001, feature_index=1
  y = f32[4,3,2] get-tuple-element(bn), index=0
  ROOT n = f32[4,3,2] negate(y)
})";
  host_testing::Outcome strict = RunBoth(hlo, RandomArgs(hlo), TestOptions(false));
  EXPECT_EQ(strict.status.code(), absl::StatusCode::kUnimplemented) << strict.status;
  // libm's exp: batch norm's cancellation would magnify the polynomial's ulp.
  ExpectExact(hlo, RandomArgs(hlo), host_testing::WithExactMath(TestOptions(true)));
}

TEST(HostErrorsTest, BadArguments) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
})");
  ASSERT_TRUE(module.ok());
  EXPECT_FALSE(RunOnHost(**module, {}, TestOptions()).ok());
  std::vector<Literal> wrong;
  wrong.push_back(ParseLiteralText("f32[3] {1, 2, 3}"));
  absl::StatusOr<Literal> result = RunOnHost(**module, wrong, TestOptions());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
}

}  // namespace
}  // namespace hloc
