// Sorting by keys: which comparators ClassifySortComparator takes, and sorts
// through the host backend against the interpreter bit for bit (NaNs of both
// signs, signed zeros, infinities and ties among the keys).
#include "backend/host/key_sort.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/host/host_test_util.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/module.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace host {
namespace {

// JAX's comparator on f32 keys (NaN -> one NaN, -0 -> +0, total order),
// with payload parameters ia, ib where `payload`; `nan` is the NaN
// constant's text.
std::string JaxLess(const std::string& name, const std::string& nan = "nan",
                    bool payload = true) {
  const char* payload_parameters = payload ? R"(  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
)" : "";
  return absl::StrCat(name, R"( {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
)", payload_parameters, "  nan = f32[] constant(", nan, R"()
  zero = f32[] constant(0)
  na = pred[] compare(a, a), direction=NE
  za = pred[] compare(a, zero), direction=EQ
  sa = f32[] select(za, zero, a)
  ca = f32[] select(na, nan, sa)
  nb = pred[] compare(b, b), direction=NE
  zb = pred[] compare(b, zero), direction=EQ
  sb = f32[] select(zb, zero, b)
  cb = f32[] select(nb, nan, sb)
  ROOT lt = pred[] compare(ca, cb), direction=LT, type=TOTALORDER
}
)");
}

const char kComparators[] = R"(
greater_total {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT gt = pred[] compare(a, b), direction=GT, type=TOTALORDER
}
payload_swapped {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  ROOT lt = pred[] compare(ib, ia), direction=LT
}
less_u8 {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
less_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
less_s64 {
  a = s64[] parameter(0)
  b = s64[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
float_partial {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
tie_break {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT, type=TOTALORDER
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ia, ib), direction=LT
  tie = pred[] and(eq, lt)
  ROOT r = pred[] or(gt, tie)
}
mixed_sides {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  fa = f32[] convert(ia)
  ROOT lt = pred[] compare(a, fa), direction=LT, type=TOTALORDER
}
)";

const HloComputation* Find(const HloModule& module, const std::string& name) {
  for (const HloComputation* c : module.computations()) {
    if (c->name() == name) return c;
  }
  return nullptr;
}

TEST(KeySortTest, ClassifiesComparatorsThatOrderByOneOperand) {
  const std::string text = absl::StrCat("HloModule m\n", JaxLess("jax_less"),
                                        JaxLess("negative_nan", "-nan"),
                                        JaxLess("jax_less_alone", "nan", false), kComparators, R"(
ENTRY e {
  ROOT p = f32[] parameter(0)
})");
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  struct Case {
    const char* comparator;
    int64_t operands;
    std::optional<KeyOrder> expected;
  };
  auto order = [](int64_t operand, PrimitiveType type, bool descending, bool canonical) {
    KeyOrder o;
    o.operand = operand;
    o.type = type;
    o.descending = descending;
    o.canonical = canonical;
    return std::optional<KeyOrder>(o);
  };
  const Case cases[] = {
      {"jax_less", 2, order(0, xla::F32, false, true)},
      {"jax_less_alone", 1, order(0, xla::F32, false, true)},
      {"greater_total", 1, order(0, xla::F64, true, false)},
      {"payload_swapped", 2, order(1, xla::S32, true, false)},
      {"less_u8", 1, order(0, xla::U8, false, false)},
      {"less_bf16", 1, order(0, xla::BF16, false, false)},
      {"less_s64", 1, order(0, xla::S64, false, false)},
      // A float compare that is not a total order, a tie-break on a second
      // operand, sides from different operands, a negative canonical NaN,
      // and a parameter count that is not the sort's.
      {"float_partial", 1, std::nullopt},
      {"tie_break", 2, std::nullopt},
      {"mixed_sides", 2, std::nullopt},
      {"negative_nan", 2, std::nullopt},
      {"jax_less", 1, std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.comparator, " over ", c.operands));
    const HloComputation* comparator = Find(**module, c.comparator);
    ASSERT_NE(comparator, nullptr);
    std::optional<KeyOrder> got = ClassifySortComparator(*comparator, c.operands);
    ASSERT_EQ(got.has_value(), c.expected.has_value());
    if (!got) continue;
    EXPECT_EQ(got->operand, c.expected->operand);
    EXPECT_EQ(got->type, c.expected->type);
    EXPECT_EQ(got->descending, c.expected->descending);
    EXPECT_EQ(got->canonical, c.expected->canonical);
  }
}

// Special values and ties in a float array: NaNs of both signs, signed
// zeros, infinities, and every fifth element equal to the first.
void AddSpecials(Literal& literal) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t n = literal.element_count();
  std::vector<float> data(n);
  std::memcpy(data.data(), literal.raw(), n * sizeof(float));
  for (int64_t i = 0; i < n; ++i) {
    if (i % 7 == 3) data[i] = nan;
    if (i % 23 == 5) data[i] = -nan;
    if (i % 11 == 2) data[i] = -0.0f;
    if (i % 13 == 4) data[i] = 0.0f;
    if (i % 17 == 6) data[i] = -inf;
    if (i % 19 == 8) data[i] = inf;
    if (i % 5 == 0) data[i] = data[0];
  }
  std::memcpy(literal.mutable_raw(), data.data(), n * sizeof(float));
}

TEST(KeySortTest, SortsMatchTheInterpreterBitForBit) {
  const std::string text = absl::StrCat("HloModule m\n", JaxLess("jax_less"),
                                        JaxLess("jax_less_alone", "nan", false), kComparators, R"(
ENTRY e {
  k = f32[4,300] parameter(0)
  v = s32[4,300] parameter(1)
  rows = (f32[4,300], s32[4,300]) sort(k, v), dimensions={1}, to_apply=jax_less
  cols = (f32[4,300], s32[4,300]) sort(k, v), dimensions={0}, to_apply=jax_less
  swapped = (f32[4,300], s32[4,300]) sort(k, v), dimensions={1}, to_apply=payload_swapped
  d = f64[300,3] parameter(2)
  down = f64[300,3] sort(d), dimensions={0}, to_apply=greater_total
  u = u8[2,500] parameter(3)
  bytes = u8[2,500] sort(u), dimensions={1}, to_apply=less_u8
  h = bf16[700] parameter(4)
  halves = bf16[700] sort(h), dimensions={0}, to_apply=less_bf16
  l = s64[257] parameter(5)
  longs = s64[257] sort(l), dimensions={0}, to_apply=less_s64
  alone = f32[4,300] sort(k), dimensions={1}, to_apply=jax_less_alone
  ROOT out = ((f32[4,300], s32[4,300]), (f32[4,300], s32[4,300]), (f32[4,300], s32[4,300]),
      f64[300,3], u8[2,500], bf16[700], s64[257], f32[4,300])
      tuple(rows, cols, swapped, down, bytes, halves, longs, alone)
})");
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(**module, 7);
  ASSERT_TRUE(args.ok()) << args.status();
  AddSpecials((*args)[0]);
  host_testing::ExpectExact(text, *args);
}

}  // namespace
}  // namespace host
}  // namespace hloc
